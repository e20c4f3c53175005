"""The claims registry: every entry is valid and runnable, ids are unique in each profile and carry
their seed, replicate streams are independent SeedSequence children, and bad entries are refused."""

import numpy as np
import pytest

from lipschitz_icl import decision, registry
from lipschitz_icl.claims import thm34  # noqa: F401  (measure modules import cleanly)


def test_every_entry_names_a_rule_a_status_and_an_existing_measure():
    import importlib

    specs = registry.load()
    assert {s.group for s in specs} >= {"thm34"}
    for s in specs:
        assert s.rule in decision.RULES and s.status in ("confirmatory", "exploratory")
        assert s.scope in ("paper", "lemma", "beyond", "finding")
        module = importlib.import_module(f"lipschitz_icl.claims.{s.group}")
        assert callable(getattr(module, s.measure)), s.key
        assert s.margin and s.margin_source and s.parameter and s.statement


@pytest.mark.parametrize("profile", registry.PROFILES)
def test_ids_unique_and_carry_the_seed(profile):
    cases = registry.cases(profile)
    ids = [c.claim_id for c in cases]
    assert len(ids) == len(set(ids))
    for c in cases:
        assert (c.seed is None) == (not c.spec.stochastic)
        if c.seed is not None:
            assert c.claim_id.endswith(f"/seed{c.seed}")


def test_full_profile_runs_ten_seeds_of_every_stochastic_claim():
    for s in registry.specs():
        if s.stochastic:
            assert s.seeds["full"] == 10, s.key


def test_replicate_streams_are_spawned_children_and_independent():
    spec = next(s for s in registry.specs() if s.stochastic)
    cases = [c for c in spec.cases("full") if c.params == spec.cases("full")[0].params]
    seqs = [c.seed_sequence() for c in cases]
    root = np.random.SeedSequence(seqs[0].entropy)
    for k, (seq, child) in enumerate(zip(seqs, root.spawn(len(seqs)))):
        assert seq.spawn_key == child.spawn_key == (k,)
        assert np.array_equal(seq.generate_state(4), child.generate_state(4))
    states = {tuple(s.generate_state(4)) for s in seqs}
    assert len(states) == len(seqs)
    other = [c for c in spec.cases("full") if c.params != cases[0].params]
    if other:
        assert other[0].seed_sequence().entropy != seqs[0].entropy


def _write(tmp_path, body):
    path = tmp_path / "grp.toml"
    path.write_text('[group]\nname = "grp"\n' + body)
    return path


ENTRY = '''
[[claim]]
name = "c"
id = "grp/c/{task}"
paper_ref = "Theorem X"
statement = "s"
status = "confirmatory"
scope = "paper"
measure = "m"
rule = "sign"
margin = "0"
margin_source = "reason"
parameter = "p"
[[claim.grid.default]]
task = ["a", "b"]
'''


def test_a_valid_file_loads(tmp_path):
    (spec,) = registry._load_file(_write(tmp_path, ENTRY))
    assert [c.claim_id for c in spec.cases("full")] == ["grp/c/a", "grp/c/b"]


@pytest.mark.parametrize("change, message", [
    (('rule = "sign"', 'rule = "eyeball"'), "rule"),
    (('status = "confirmatory"', 'status = "exploratory"'), "exploratory_reason"),
    (('id = "grp/c/{task}"', 'id = "grp/c"'), "misses varying"),
    (('margin_source = "reason"', 'margin_source = ""'), "missing"),
    (('scope = "paper"', 'scope = "folklore"'), "scope"),
    (('scope = "paper"\n', ''), "missing"),
])
def test_bad_entries_are_refused(tmp_path, change, message):
    with pytest.raises(registry.RegistryError, match=message):
        registry._load_file(_write(tmp_path, ENTRY.replace(*change)))


def test_claims_command_lists_the_registry_with_last_resolutions(tmp_path, capsys):
    import json

    from lipschitz_icl.cli import main

    case = registry.cases("default")[0]
    last = {"claims": [{"claim_id": case.claim_id, "verdict": "holds",
                        "resolution": {"parameter": "p", "value": 0.01}}]}
    (tmp_path / "claims.json").write_text(json.dumps(last))
    assert main(["claims", "--json", "--claims", str(tmp_path / "claims.json")]) == 0
    rows = json.loads(capsys.readouterr().out)["claims"]
    assert len(rows) == len(registry.cases("default"))
    keys = {"claim_id", "paper_ref", "statement", "status", "scope", "rule", "margin", "resolution"}
    assert all(keys <= set(r) for r in rows)
    assert rows[0]["claim_id"] == case.claim_id and rows[0]["resolution"]["value"] == 0.01
    assert all(r["resolution"] is None for r in rows[1:])
    assert main(["claims", "--claims", str(tmp_path / "missing.json")]) == 0  # before any run: no resolutions
    assert "resolution: -" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["claims", "--claims", str(tmp_path / "bad.json")]) == 2
