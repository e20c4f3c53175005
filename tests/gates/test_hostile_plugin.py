"""Hostile input to the pytest plugin (issue #11): a bad ``--report-dir`` is refused before any gate
runs; a variant whose bound cannot be evaluated is a usage error (one line), and one whose quantity
cannot be measured is reported as an error, never recorded as a refutation."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ("pytester",)

GATE = """
def test_gate(record_claim, tmp_path_factory):
    import pathlib
    pathlib.Path(MARKER).write_text("ran")
"""

HEADER = 'name = "{name}"\nquantity = "{quantity}"\ntask = "{task}"\nrelation = "<="\nbound = "{bound}"\n'


@pytest.fixture
def gate(pytester, tmp_path, monkeypatch):
    from lipschitz_icl.runtime import cache

    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    marker = tmp_path / "gate-ran"
    pytester.makepyfile(test_gate=GATE.replace("MARKER", repr(str(marker))))
    return marker


def _run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", "--rootdir", str(pytester.path), *args)


@pytest.mark.parametrize(
    "cid, make",
    [
        ("existing-file", lambda p: (p / "afile").write_text("x") and p / "afile"),
        ("under-a-file", lambda p: (p / "bfile").write_text("x") and p / "bfile" / "sub"),
        ("claims-json-is-a-dir", lambda p: (p / "rep" / "claims.json").mkdir(parents=True) or p / "rep"),
    ],
)
def test_bad_report_dir_is_refused_before_any_gate(pytester, gate, cid, make):
    report_dir = make(pytester.path)
    result = _run(pytester, "--report-dir", str(report_dir))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1 and "--report-dir" in lines[0] and "Traceback" not in result.stderr.str()
    assert not gate.exists()


def test_bound_that_divides_by_zero_is_one_usage_line_not_a_refutation(pytester, gate, tmp_path):
    variant = tmp_path / "div0.toml"
    variant.write_text(
        HEADER.format(name="div0", quantity="w_star", task="affine", bound="1/(d-3)")
        + "[grid]\nd = [3, 4]\nn = 100\nL = 1.0\nsigma = 1.0\n"
    )
    result = _run(pytester, "--report-dir", str(pytester.path / "reports"), f"--variants={variant}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1 and "div0.toml:5" in lines[0] and "division by zero" in lines[0]
    assert "FAILED" not in result.stdout.str() and not gate.exists()


def test_variant_that_cannot_be_measured_is_an_error_not_a_refutation(pytester, gate, tmp_path):
    variant = tmp_path / "relu-w.toml"  # the exact relu grid refuses w = 1e6 at small n (memory budget)
    variant.write_text(
        HEADER.format(name="relu-w", quantity="bias", task="relu", bound="d")
        + 'at_w = "1e6"\n[grid]\nd = 20\nn = 100\nL = 1.0\nsigma = 1.0\n'
    )
    result = _run(pytester, "--report-dir", str(pytester.path / "reports"), f"--variants={variant}")
    out = result.stdout.str()
    outcomes = result.parseoutcomes()  # pytest's ERROR (setup failed), never FAILED
    assert outcomes.get("errors") == 1 and "failed" not in outcomes, outcomes
    assert "variant relu-w cannot be evaluated (not a refutation)" in out and "Traceback" not in out
    claims_path = pytester.path / "reports" / "claims.json"  # written only when something was recorded
    claims = json.loads(claims_path.read_text())["claims"] if claims_path.exists() else []
    assert all(not r["claim_id"].startswith("variant:") for r in claims)  # nothing recorded as 'fails'
