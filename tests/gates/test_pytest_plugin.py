"""The pytest plugin: claim records, verdicts as outcomes, power, figure data, --variants, --no-cache."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

EXAMPLES = Path(__file__).resolve().parents[2] / "variants" / "examples"

GATES = """
from lipschitz_icl import cache
from lipschitz_icl.gates.evidence import Evidence, Quantity

RESOLVED = {"parameter": "p", "value": 0.01, "low": 0.009, "high": 0.01, "limit": 1.0}
UNRESOLVED = {"parameter": "p", "value": None, "low": 1.0, "high": None, "limit": 1.0}


def alt(name, verdict):
    return {"name": name, "statement": name, "verdict": verdict, "detail": "", "fresh": True,
            "ruled_out": verdict == "fails"}


def ev(claim_id, verdict, alternatives=(), status="confirmatory", resolution=RESOLVED):
    return Evidence(claim_id=claim_id, paper_ref="Theorem X", statement="statement of " + claim_id, rule="rule",
                    quantities=(Quantity(name="q", theory=1.0, measured=1.01, ci_low=0.99, ci_high=1.03,
                                         verdict=verdict),),
                    verdict=verdict, seconds=0.1, alternatives=tuple(alternatives), status=status,
                    resolution=resolution, scope="paper")


def test_holds(record_claim):
    record_claim(ev("c-holds", "holds", [alt("wrong sign", "fails")]),
                 figure={"kind": "line", "x": [1, 2], "y": [3, 4]})


def test_fails(record_claim):
    record_claim(ev("c-fails", "fails"))


def test_inconclusive(record_claim):
    record_claim(ev("c-inconclusive", "inconclusive"))


def test_alternative_not_ruled_out_is_reported(record_claim):
    record_claim(ev("c-alt-wins", "holds", [alt("wrong exponent", "holds")]))


def test_no_power(record_claim):
    record_claim(ev("c-no-power", "holds", resolution=UNRESOLVED))


def test_proved(record_claim):
    record_claim(ev("c-proved", "proved"))


def test_refuted(record_claim):
    record_claim(ev("c-refuted", "refuted"))


def test_exploratory_fails_but_never_fails_the_run(record_claim):
    record_claim(ev("c-exploratory", "fails", status="exploratory"))


def test_duplicate_id(record_claim):
    record_claim(ev("c-dup", "holds", [alt("near miss", "fails")]))
    record_claim(ev("c-dup", "holds", [alt("near miss", "fails")]))


def test_cache_state():
    assert cache.enabled() is EXPECT_CACHE
"""


@pytest.fixture
def gates(pytester, tmp_path, monkeypatch):
    import shutil

    from lipschitz_icl.gates import registry
    from lipschitz_icl.runtime import cache

    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    empty = tmp_path / "registry"  # a registry with no claims: the gates here record hand-made evidence
    empty.mkdir()
    shutil.copy(registry.REGISTRY_DIR / "_sections.toml", empty)
    monkeypatch.setenv(registry.REGISTRY_ENV, str(empty))

    def make(expect_cache=True):
        pytester.makepyfile(test_gates=GATES.replace("EXPECT_CACHE", str(expect_cache)))

    return make


def run(pytester, *args):
    """Inner pytest run confined to the pytester directory (variant paths given as option values would
    otherwise pull the rootdir, and the default report dir, up to their common ancestor)."""
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-ra",
        "--rootdir",
        str(pytester.path),
        "--report-dir",
        str(pytester.path / "reports"),
        *args,
    )


def _claims(pytester):
    return {r["claim_id"]: r for r in json.loads((pytester.path / "reports" / "claims.json").read_text())["claims"]}


def test_verdicts_become_outcomes_and_claims_json(pytester, gates):
    gates()
    result = run(pytester)
    result.assert_outcomes(passed=5, failed=5)
    result.stdout.fnmatch_lines(
        [
            "*claim c-fails FAILS*",
            "*claim c-inconclusive INCONCLUSIVE (confirmatory claims must be decided)*",
            "*claim c-no-power: its rule refutes no deviation of p up to 1.0*",
            "*claim c-refuted REFUTED*",
            "*claim id 'c-dup' recorded twice*",
            "*8 confirmatory claims: 4 holds, 1 fails, 1 inconclusive, 1 proved, 1 refuted*",
            "*1 exploratory claims: 0 holds, 1 fails, 0 inconclusive*",
            "*the paper's statements (scope paper, confirmatory): 5/8 hold or are proved*",
            "*pre-specified alternatives ruled out 2/3*",
        ]
    )
    claims = _claims(pytester)
    assert set(claims) == {
        "c-holds",
        "c-fails",
        "c-inconclusive",
        "c-alt-wins",
        "c-no-power",
        "c-proved",
        "c-refuted",
        "c-exploratory",
        "c-dup",
    }
    assert claims["c-exploratory"]["status"] == "exploratory"
    assert claims["c-holds"]["power"] == [1, 1] and claims["c-alt-wins"]["power"] == [0, 1]
    assert claims["c-holds"]["figure"] == {"kind": "line", "x": [1, 2], "y": [3, 4]}
    assert claims["c-fails"].get("figure") is None
    assert claims["c-holds"]["quantities"][0]["ratio"] == pytest.approx(1.01)


def test_variants_run_as_gates(pytester, gates):
    ok, bad = EXAMPLES / "cap_tail_gaussian.toml", EXAMPLES / "projection_tail_fail_nomean.toml"
    result = run(pytester, "--variants", str(ok), str(bad))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*claim variant:projection-tail-fail-nomean FAILS*"])
    claims = _claims(pytester)
    assert claims["variant:cap-tail-gaussian"]["verdict"] == "holds"
    failing = claims["variant:projection-tail-fail-nomean"]
    assert failing["verdict"] == "fails" and "counter-example at d=10, k=5, s=0.2" in failing["rule"]
    assert failing["quantities"][0]["verdict"] == "fails"  # the counter-example comes first


def test_bad_variant_file_is_a_usage_error_and_runs_nothing(pytester, gates, tmp_path):
    gates()
    marker = tmp_path / "PWNED"
    evil = tmp_path / "evil.toml"
    evil.write_text(
        f'name = "e"\nquantity = "cap_tail"\nrelation = "<="\n'
        f"bound = \"__import__('os').system('touch {marker}')\"\n[grid]\nd = 3\nh = 0.5\n"
    )
    result = run(pytester, "--variants", str(evil))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{evil}:4: bad 'bound'*"])
    assert not marker.exists()
    result = run(pytester, "--variants", str(tmp_path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*is not a .toml variant file*"])


def test_no_cache_option_disables_the_cache_for_the_session(pytester, gates):
    from lipschitz_icl.runtime import cache

    gates(expect_cache=False)
    result = run(pytester, "-k", "cache_state", "--no-cache")
    result.assert_outcomes(passed=1)
    assert cache.enabled()  # restored when the session ends
    gates(expect_cache=True)
    run(pytester, "-k", "cache_state").assert_outcomes(passed=1)


def test_claims_json_from_gates_feeds_the_report(pytester, gates):
    from lipschitz_icl.report import build_report

    gates()
    run(pytester, "--variants", str(EXAMPLES / "cap_tail_gaussian.toml"))
    result = build_report(pytester.path / "reports" / "claims.json", pytester.path / "out", compile_pdf=False)
    tex = result.tex.read_text().replace(r"\allowbreak{}", "")
    verdicts = {
        "c-holds": "holds",
        "c-fails": "fails",
        "c-inconclusive": "inconclusive",
        "c-alt-wins": "holds",
        "variant:cap-tail-gaussian": "holds",
    }
    for claim_id, verdict in verdicts.items():
        # its entry (id, then the verdict flush right) in the appendix of every case
        entry = rf"\\enspace {re.escape(claim_id)}(?: \(run [^)]*\))?\\hfill\\enspace {verdict}(?: at \d+ pts)?\n"
        assert re.search(entry, tex), claim_id
    assert r"\section{User bound variants}" in tex
    assert (result.power["refuted"], result.power["total"]) == (2, 3)
    assert any(p.name.startswith("c-holds") for p in result.figures)  # the gate's figure= data


@pytest.mark.slow(
    reason="two pytest runs, one on xdist workers (~9 s); CI's pytest verify/ -n auto merges workers on every run"
)
def test_xdist_workers_merge_into_one_claims_json_equal_to_serial(pytester, gates):
    """``-n 2``: every worker's records reach the controller, which writes one claims.json with the same
    ids and verdicts, in the same order, as a serial run, and prints the summary once."""
    pytest.importorskip("xdist")
    gates()
    serial = run(pytester)
    expected = [(r["claim_id"], r["verdict"]) for r in _claims_list(pytester)]
    (pytester.path / "reports" / "claims.json").unlink()
    parallel = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--rootdir",
        str(pytester.path),
        "--report-dir",
        str(pytester.path / "reports"),
    )
    assert [(r["claim_id"], r["verdict"]) for r in _claims_list(pytester)] == expected
    assert parallel.ret == serial.ret
    assert sum("lipschitz-icl claims" in line for line in parallel.outlines) == 1


def _claims_list(pytester):
    return json.loads((pytester.path / "reports" / "claims.json").read_text())["claims"]


def test_a_changed_design_fails_its_gate_naming_the_change(tmp_path):
    """Issue 19's check: in a copy of the registry with its lock, ``runs`` of a confirmatory claim is
    edited; ``pytest verify/ --registry COPY`` fails that claim before measuring, naming the change."""
    import shutil
    import subprocess
    import sys

    from lipschitz_icl.gates import lock, registry

    root = Path(__file__).resolve().parents[2]
    copy = tmp_path / "registry"
    copy.mkdir()
    for name in ("thm34.toml", "_sections.toml", lock.LOCK_NAME):
        if (registry.REGISTRY_DIR / name).exists():
            shutil.copy(registry.REGISTRY_DIR / name, copy)
    text = (copy / "thm34.toml").read_text()
    assert "runs = 8" in text
    (copy / "thm34.toml").write_text(text.replace("runs = 8", "runs = 5", 1))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(root / "verify" / "test_thm34.py"),
            "-p",
            "no:cacheprovider",
            "-q",
            "--registry",
            str(copy),
            "--report-dir",
            str(tmp_path / "r"),
            "-k",
            "trained",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 1, out.stdout[-2000:]
    assert "its design differs from the lock" in out.stdout and "design.runs: 8 -> 5" in out.stdout


REAL_GATES = """
from lipschitz_icl.gates import registry
from lipschitz_icl.gates.evidence import Evidence

CASES = {c.claim_id: c for c in registry.cases("default", "lemmaB1")}
FIRST, SECOND = sorted(CASES)[:2]


def _record(record_claim, claim_id):
    spec = CASES[claim_id].spec
    record_claim(Evidence(claim_id=claim_id, verdict="holds", status="exploratory", key=spec.key, group=spec.group,
                          design_hash=spec.design_hash, seconds=0.1, cpu_seconds=0.1))


def test_first(record_claim):
    _record(record_claim, FIRST)


def test_second(record_claim):
    _record(record_claim, SECOND)
"""


def _claims_file(pytester):
    return json.loads((pytester.path / "reports" / "claims.json").read_text())


def test_a_partial_run_merges_into_claims_json_and_marks_each_record_s_run(pytester, cache_root):
    """``-k`` runs one gate: the other keeps its record of the earlier run, whose id it carries; ``runs`` says
    what each run was; the summary says how many records were kept.  Records of another profile are not kept."""
    from lipschitz_icl.gates import registry

    first, second = sorted(c.claim_id for c in registry.cases("default", "lemmaB1"))[:2]
    pytester.makepyfile(test_real=REAL_GATES)
    run(pytester).assert_outcomes(passed=2)
    before = _claims_file(pytester)
    (old_run,) = {r["run"] for r in before["claims"]}
    assert [r["id"] for r in before["runs"]] == [old_run] and before["runs"][0]["profile"] == "default"
    result = run(pytester, "-k", "first")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 claims not run now keep their records from earlier runs*"])
    after = _claims_file(pytester)
    runs = {r["claim_id"]: r["run"] for r in after["claims"]}
    assert set(runs) == {first, second} and runs[second] == old_run and runs[first] != old_run
    assert [r["id"] for r in after["runs"]] == [runs[first], old_run] and after["provenance"]["run"] == runs[first]
    assert after["runs"][0]["selection"].endswith("-k 'first'")
    assert [r["claim_id"] for r in after["claims"]] == [first, second]  # registry order
    run(pytester, "-k", "first", "--profile", "full").assert_outcomes(passed=1)
    assert [r["claim_id"] for r in _claims_file(pytester)["claims"]] == [first]  # a default record is not full


def test_merge_keeps_only_unrun_registry_claims_of_the_same_design():
    from lipschitz_icl.gates import registry
    from lipschitz_icl.gates.pytest_plugin import merge_records

    a, b, c, d = registry.cases("default", "lemmaB1")[:4]
    where = str(registry.registry_dir())

    def old(case, **extra):
        return {
            "claim_id": case.claim_id,
            "design_hash": case.spec.design_hash,
            "run": "r0",
            "_profile": "default",
            "_registry": where,
            **extra,
        }

    previous = [old(a), old(b), old(c, design_hash="0" * 16), old(d), {**old(d), "claim_id": "variant:x"}]
    kept = merge_records([{"claim_id": a.claim_id}], previous, "default", where, collected={d.claim_id})
    assert [r["claim_id"] for r in kept] == [b.claim_id]  # a ran, c is of another design, d was collected
    other = [old(b, _registry="/elsewhere"), old(a, _profile="full")]
    assert merge_records([], other, "default", where) == []


def test_gates_run_longest_first_by_the_last_cpu_seconds(pytester):
    from lipschitz_icl.gates import registry

    ids = [c.claim_id for c in registry.cases("default", "lemmaB1")]
    pytester.makeconftest((Path(__file__).resolve().parents[2] / "verify" / "conftest.py").read_text())
    pytester.makepyfile(test_lemma='GROUP = "lemmaB1"\n\n\ndef test_claim(claim_case):\n    pass\n')
    (pytester.path / "reports").mkdir()
    seconds = {ids[0]: 1.0, ids[1]: 30.0, ids[2]: 5.0}  # ids[3] has no record: it goes first
    records = [{"claim_id": i, "cpu_seconds": s, "seconds": 2 * s} for i, s in seconds.items()]
    (pytester.path / "reports" / "claims.json").write_text(json.dumps({"claims": records}))
    result = run(pytester, "--collect-only", "-q")
    order = [line.split("[", 1)[1].rstrip("]") for line in result.outlines if "::test_claim[" in line]
    assert order == [ids[3], ids[1], ids[2], ids[0]]


def test_gates_without_a_record_start_with_the_long_proofs_then_training(pytester):
    """A clean checkout has no record: the loss-shape proofs (tens of CPU seconds each) would otherwise start
    last, in the registry's order, and end the run alone on one worker."""
    from lipschitz_icl.gates import registry

    groups = ("thm34", "lemmaB1", "loss_shape")
    pytester.makeconftest((Path(__file__).resolve().parents[2] / "verify" / "conftest.py").read_text())
    for group in groups:
        pytester.makepyfile(**{f"test_{group}": f'GROUP = "{group}"\n\n\ndef test_claim(claim_case):\n    pass\n'})
    result = run(pytester, "--collect-only", "-q")
    order = [line.split("[", 1)[1].rstrip("]") for line in result.outlines if "::test_claim[" in line]
    specs = {c.claim_id: c.spec for group in groups for c in registry.cases("default", group)}
    assert sorted(order) == sorted(specs)
    kinds = [
        "long proof"
        if specs[i].rule == "proof" and specs[i].design.get("seconds", 0) >= 300
        else "training"
        if "protocol" in specs[i].design
        else "other"
        for i in order
    ]
    assert kinds == sorted(kinds, key=["long proof", "training", "other"].index)
    assert kinds[0] == "long proof" and "training" in kinds and kinds[-1] == "other"


def test_a_claim_without_a_lock_says_how_to_lock_it(tmp_path, monkeypatch):
    """A new confirmatory claim not in the lock read "its design differs from the lock": now its gate says it is not
    locked yet and names the command that locks it."""
    import shutil

    from lipschitz_icl.gates import lock, pytest_plugin, registry

    for name in ("thm34.toml", "_sections.toml"):
        shutil.copy(registry.REGISTRY_DIR / name, tmp_path)
    monkeypatch.setenv(registry.REGISTRY_ENV, str(tmp_path))
    (case, *_) = next(s for s in registry.load() if s.key == "thm34.trained-isotropy").cases("default")
    with pytest.raises(pytest.fail.Exception) as info:
        pytest_plugin._check_lock(case)
    message = str(info.value)
    assert "not locked yet: run lipschitz-icl lock thm34.trained-isotropy --reason" in message
    assert "differs" not in message
    lock.relock([case.spec], "first lock", directory=tmp_path, today="2026-11-24", commit="abc")
    pytest_plugin._check_lock(case)  # locked: the gate goes on to measure
