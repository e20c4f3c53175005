"""What the run's profile leaves out of the registry's full profile."""

from __future__ import annotations

from lipschitz_icl.gates import registry
from lipschitz_icl.report.profile import omissions, unrun_mentions


def test_the_default_profile_leaves_out_grid_points_and_replicates():
    found = {o.key: o for o in omissions("default")}
    law = found["thm34.window-law"]
    full = {spec.id_pattern.format(**p) for spec in [registry.find("thm34.window-law")] for p in spec.grids["full"]}
    default = {
        spec.id_pattern.format(**p) for spec in [registry.find("thm34.window-law")] for p in spec.grids["default"]
    }
    assert law.grid_points == len(full - default) > 0
    assert "d = " in law.text() and "grid point" in law.text()
    direction = found["thm44.direction"]
    assert direction.replicates == (1, 10) and "1 of 10 replicates" in direction.text()


def test_the_full_profile_and_unknown_claims_leave_nothing_out():
    assert omissions("full") == []
    assert omissions("default", run_keys={"no.such-claim"}) == []


def test_a_statement_naming_a_setting_the_run_did_not_reach_is_found():
    statement = registry.find("thm44.saddle").statement
    ran = {"thm44/saddle/lowrank-quadratic/d3k1", "thm44/saddle/lowrank-cosine/d4k2"}
    assert "d8k2" in unrun_mentions("thm44.saddle", statement, ran)
    assert "d3k1" not in unrun_mentions("thm44.saddle", statement, ran)
    assert unrun_mentions("no.such-claim", statement, ran) == []
    # another claim's run at d8k2 (the default profile's thm44.direction) does not reach the saddle's d8k2
    assert "d8k2" in unrun_mentions("thm44.saddle", statement, ran | {"thm44/direction/lowrank-linear/d8k2"})


def test_a_setting_that_is_a_grid_of_numbers_reads_as_a_set_not_as_code():
    """A referee found ``ngrid = [100, 1000]`` (a Python list) in the profile appendix; braces, tried first,
    lost their opening one in the typeset math."""
    from lipschitz_icl.report.mathtext import to_latex
    from lipschitz_icl.report.scope import setting_text

    assert setting_text("ngrid", [[100, 1000], [10, 20]]) == "ngrid = (100, 1000), (10, 20)"
    assert "(100, 1000)" in str(to_latex(setting_text("n_grid", [[100, 1000]])))  # as the profile appendix shows it
    assert setting_text("d", [2, 3]) == "d = 2, 3"
    texts = [o.text() for o in omissions("default")]
    assert not any("[" in text for text in texts), texts
