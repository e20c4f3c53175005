"""The claims registry: every entry is valid and runnable, ids are unique in each profile and carry
their seed, replicate streams are independent SeedSequence children, and bad entries are refused."""

import numpy as np
import pytest

from lipschitz_icl import decision
from lipschitz_icl.claims import thm34  # noqa: F401  (measure modules import cleanly)
from lipschitz_icl.gates import registry


def test_every_entry_names_a_rule_a_status_and_an_existing_measure():
    import importlib

    specs = registry.load()
    assert {s.group for s in specs} >= {"thm34"}
    for s in specs:
        assert s.rule in decision.RULES and s.status in ("confirmatory", "exploratory")
        assert s.scope in ("paper", "lemma", "beyond", "finding")
        module = importlib.import_module(f"lipschitz_icl.claims.{s.group}")
        assert callable(getattr(module, s.measure)), s.key
        assert s.margin and s.margin_source and s.parameter and s.statement and s.resolutions[0].meaning


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


ENTRY = """
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
[claim.design]
level = 0.01
[[claim.resolution]]
parameter = "p"
meaning = "what p means"
start = 0.001
limit = 1.0
[[claim.alternative]]
name = "a"
statement = "a rival"
args = { shift = 0.5 }
[[claim.grid.default]]
task = ["a", "b"]
"""


def test_a_valid_file_loads(tmp_path):
    (spec,) = registry._load_file(_write(tmp_path, ENTRY))
    assert [c.claim_id for c in spec.cases("full")] == ["grp/c/a", "grp/c/b"]
    assert spec.design == {"level": 0.01} and spec.cases("default")[0].kwargs == {"level": 0.01, "task": "a"}
    assert spec.resolutions[0].meaning == "what p means" and spec.alternatives[0].args == {"shift": 0.5}


@pytest.mark.parametrize(
    "change, message",
    [
        (('rule = "sign"', 'rule = "eyeball"'), "rule"),
        (('status = "confirmatory"', 'status = "exploratory"'), "exploratory_reason"),
        (('id = "grp/c/{task}"', 'id = "grp/c"'), "misses varying"),
        (('margin_source = "reason"', 'margin_source = ""'), "missing"),
        (('scope = "paper"', 'scope = "folklore"'), "scope"),
        (('scope = "paper"\n', ""), "missing"),
        (('meaning = "what p means"\n', ""), "meaning"),
        (("start = 0.001", "start = 2.0"), "start <= limit"),
        (("[claim.design]\nlevel = 0.01", "[claim.design]\ntask = 1"), "both in the grid"),
        (('margin = "0"', 'margin = "0"\ncontexts = 1000'), "unknown fields"),
        (('name = "a"\n', ""), "alternative"),
        (('margin = "0"', 'margin = "0"\nseeds = { default = 1, full = 2 }\ndata = "grp/data"'), "misses varying"),
        (('margin = "0"', 'margin = "0"\nseeds = { default = 1, full = 2 }\ndata = ""'), "non-empty"),
        (('margin = "0"', 'margin = "0"\ndata = "grp/data/{task}"'), "stochastic"),
        (('margin = "0"', 'margin = "0"\nheadline = ""'), "headline"),
        (('margin = "0"', 'margin = "0"\nheadline = 3'), "headline"),
        (('margin = "0"', 'margin = "0"\nheadline = "two\\nlines"'), "headline"),
        (('margin = "0"', 'margin = "0"\nnot_proved = ""'), "not_proved"),
        (('margin = "0"', 'margin = "0"\nnot_proved = "why"'), "decided by proof"),
    ],
)
def test_bad_entries_are_refused(tmp_path, change, message):
    with pytest.raises(registry.RegistryError, match=message):
        registry._load_file(_write(tmp_path, ENTRY.replace(*change)))


def test_a_claim_outside_every_section_is_an_error_naming_it(tmp_path, monkeypatch):
    """A claim missing from ``_sections.toml`` was filed under "Other records" by the report: now the registry
    refuses to load, naming it; a missing ``_sections.toml`` is named too."""
    _write(tmp_path, ENTRY)
    monkeypatch.setenv(registry.REGISTRY_ENV, str(tmp_path))
    with pytest.raises(registry.RegistryError, match=r"_sections\.toml: missing"):
        registry._load(str(tmp_path))
    registry._sections.cache_clear()
    (tmp_path / "_sections.toml").write_text(
        '[[section]]\nname = "S"\npaper_ref = "X"\nstatement = "s"\nmembers = ["other.*"]\n'
    )
    with pytest.raises(registry.RegistryError, match=r"no section holds the claims grp\.c "):
        registry._load(str(tmp_path))
    (tmp_path / "_sections.toml").write_text(
        '[[section]]\nname = "S"\npaper_ref = "X"\nstatement = "s"\nmembers = ["other.*", "grp.c"]\n'
    )
    registry._sections.cache_clear()
    assert [s.key for s in registry._load(str(tmp_path))] == ["grp.c"]


def test_design_hash_covers_the_design_not_the_prose(tmp_path):
    (spec,) = registry._load_file(_write(tmp_path, ENTRY))
    (prose,) = registry._load_file(
        _write(tmp_path, ENTRY.replace('margin_source = "reason"', 'margin_source = "a better reason"'))
    )
    (headline,) = registry._load_file(
        _write(tmp_path, ENTRY.replace('margin = "0"', 'margin = "0"\nheadline = "gist"'))
    )
    (not_proved,) = registry._load_file(
        _write(tmp_path, ENTRY.replace('rule = "sign"', 'rule = "proof"\nnot_proved = "ReLU: too slow"'))
    )
    (proof,) = registry._load_file(_write(tmp_path, ENTRY.replace('rule = "sign"', 'rule = "proof"')))
    assert not_proved.design_hash == proof.design_hash and not_proved.not_proved == "ReLU: too slow"
    (level,) = registry._load_file(_write(tmp_path, ENTRY.replace("level = 0.01", "level = 0.02")))
    (alt,) = registry._load_file(_write(tmp_path, ENTRY.replace("shift = 0.5", "shift = 0.4")))
    assert spec.design_hash == prose.design_hash == headline.design_hash and headline.headline == "gist"
    assert len({spec.design_hash, level.design_hash, alt.design_hash}) == 3


def _numeric(node) -> bool:
    import ast

    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_numeric(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and any(_numeric(v) for v in node.values)
    if isinstance(node, ast.Call):  # dict(lr=25.0, ...)
        return any(_numeric(k.value) for k in node.keywords)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def test_no_number_in_claim_code_shadows_the_registry():
    """Every number that shapes a verdict comes from the registry: claim modules hold no module-level
    numeric constants, and no function default is a number other than a neutral 0, 1 or -1 (a deviation
    that is zero, a sign)."""
    import ast
    import pathlib

    found = []
    for path in sorted((pathlib.Path(registry.REGISTRY_DIR)).glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _numeric(node.value):
                found.append(f"{path.name}:{node.lineno} module constant")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                for default in [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]:
                    value = ast.literal_eval(default) if _numeric(default) else None
                    if value is not None and value not in (0, 1, -1):
                        found.append(f"{path.name}:{default.lineno} default {value!r}")
    assert not found, found


def test_measure_functions_take_exactly_the_design_and_the_grid():
    """A measure function's keyword-only parameters, none with a default, are exactly the grid's
    parameters, the keys of [claim.design] and (stochastic claims) ``seed``."""
    import inspect

    for spec in registry.load():
        measure = registry.ClaimCase(spec, (), None).measure()
        params = inspect.signature(measure).parameters.values()
        assert all(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params), spec.key
        names = {p.name for p in params}
        expected = set(spec.design) | set().union(*spec.grids["full"], *spec.grids["default"])
        assert names == expected | ({"seed"} if spec.stochastic else set()), (spec.key, names ^ expected)


def test_each_claims_module_exports_its_measure_functions():
    """A claims module's ``__all__`` names every measure function the registry takes from it."""
    import importlib

    for spec in registry.load():
        module = importlib.import_module(f"lipschitz_icl.claims.{spec.group}")
        assert spec.measure in module.__all__, (spec.key, spec.measure)


def test_claims_command_lists_the_registry_with_last_resolutions(tmp_path, capsys, monkeypatch):
    import json

    from lipschitz_icl.cli import main

    case = registry.cases("default")[0]
    last = {
        "claims": [{"claim_id": case.claim_id, "verdict": "holds", "resolution": {"parameter": "p", "value": 0.01}}]
    }
    (tmp_path / "claims.json").write_text(json.dumps(last))
    assert main(["claims", "--json", "--claims", str(tmp_path / "claims.json")]) == 0
    rows = json.loads(capsys.readouterr().out)["claims"]
    assert len(rows) == len(registry.cases("default"))
    keys = {"claim_id", "paper_ref", "statement", "status", "scope", "rule", "margin", "resolution", "design_hash"}
    assert all(keys <= set(r) for r in rows)
    assert rows[0]["claim_id"] == case.claim_id and rows[0]["resolution"]["value"] == 0.01
    assert all(r["resolution"] is None for r in rows[1:])
    # a path the user names must exist (a typo must not read as 'no run yet'); the default may be absent
    assert main(["claims", "--claims", str(tmp_path / "missing.json")]) == 2
    assert "--claims: must be an existing claims.json" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)  # no reports/claims.json here: before any run, no resolutions
    assert main(["claims"]) == 0
    assert "resolution: -" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["claims", "--claims", str(tmp_path / "bad.json")]) == 2


SHARED = """
[[claim]]
name = "{name}"
id = "grp/{name}/{{task}}"
paper_ref = "Theorem X"
statement = "s"
status = "{status}"
exploratory_reason = "looked first"
scope = "paper"
measure = "m"
rule = "sign"
margin = "0"
margin_source = "reason"
seeds = {{ default = 1, full = 3 }}
data = "grp/layers/{{task}}"
[[claim.resolution]]
parameter = "p"
meaning = "what p means"
start = 0.001
limit = 1.0
[[claim.grid.default]]
task = ["a", "b"]
"""


def test_claims_naming_one_data_stream_draw_the_same_data(tmp_path, monkeypatch):
    """Two confirmatory claims and an exploratory one name the stream grp/layers/{task}: at equal salts their
    cases (and their alternatives' replicates) draw the same seeds; a case of another task does not; the salt
    of the exploratory one is the confirmatory claims' (it is never locked); a re-lock parts the data."""
    from lipschitz_icl.gates import lock

    body = "".join(SHARED.format(name=n, status=st) for n, st in [("x", "confirmatory"), ("y", "confirmatory")])
    (tmp_path / "grp.toml").write_text('[group]\nname = "grp"\n' + body + SHARED.format(name="z", status="exploratory"))
    (tmp_path / "_sections.toml").write_text(
        '[[section]]\nname = "G"\npaper_ref = "G"\nstatement = "s"\nmembers = ["grp.*"]\n'
    )
    registry._sections.cache_clear()
    monkeypatch.setenv(registry.REGISTRY_ENV, str(tmp_path))
    registry._load.cache_clear()
    x, y, z = registry.specs("grp")
    assert "data" in x.design_record() and x.to_dict()["data"] == "grp/layers/{task}"
    lock.relock([x, y], "first lock", directory=tmp_path, today="2026-11-28", commit="abc")
    cases = {s.name: s.cases("full") for s in (x, y, z)}
    assert {s.name: s.cases("full")[0].salt for s in (x, y, z)} == {"x": 1, "y": 1, "z": 1}
    for k in range(6):
        states = {name: tuple(found[k].seed_sequence().generate_state(4)) for name, found in cases.items()}
        alternatives = {tuple(found[k].seed_sequence("alternatives").generate_state(4)) for found in cases.values()}
        assert len(set(states.values())) == 1 and len(alternatives) == 1
        assert states["x"] not in alternatives
    assert cases["x"][0].data_id == "grp/layers/a" and cases["x"][3].data_id == "grp/layers/b"
    assert cases["x"][0].seed_sequence().entropy != cases["x"][3].seed_sequence().entropy
    changed = SHARED.format(name="x", status="confirmatory").replace("limit = 1.0", "limit = 2.0")
    y_and_z = SHARED.format(name="y", status="confirmatory") + SHARED.format(name="z", status="exploratory")
    (tmp_path / "grp.toml").write_text('[group]\nname = "grp"\n' + changed + y_and_z)
    registry._load.cache_clear()
    x, y, z = registry.specs("grp")
    lock.relock([x], "changed", directory=tmp_path, today="2026-11-28", commit="abd")  # a new design, a new salt
    x_case, y_case, z_case = (s.cases("default")[0] for s in (x, y, z))
    assert (x_case.salt, y_case.salt, z_case.salt) == (2, 1, 2)
    assert x_case.seed_sequence().entropy == z_case.seed_sequence().entropy != y_case.seed_sequence().entropy
    registry._load.cache_clear()
