"""A case decided by proof ships its certificates: the gates write them beside claims.json
(``certificates/``), the record names them, and the trusted checker re-derives the proved verdict from each."""

from __future__ import annotations

import json
import re

import pytest

pytest_plugins = ("pytester",)

GATE = """
from lipschitz_icl.gates import registry

CASE = next(c for c in registry.cases("default", "concentration") if c.claim_id == "CLAIM_ID")


def test_the_proved_case(record_claim):
    record_claim(CASE)
"""


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    from lipschitz_icl.runtime import cache

    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))


def _smallest_cap_case() -> str:
    from lipschitz_icl.gates import registry

    ids = [c.claim_id for c in registry.cases("default", "concentration") if "cap-probability" in c.claim_id]
    return min(ids, key=len)


def test_a_proved_case_writes_its_certificates_and_each_rechecks_as_proved(pytester, isolated_cache):
    from lipschitz_icl.prover.checker import recheck

    claim_id = _smallest_cap_case()
    pytester.makepyfile(test_gate=GATE.replace("CLAIM_ID", claim_id))
    reports = pytester.path / "reports"
    result = pytester.runpytest("-p", "no:cacheprovider", "--rootdir", str(pytester.path), "--report-dir", str(reports))
    result.assert_outcomes(passed=1)
    (record,) = json.loads((reports / "claims.json").read_text())["claims"]
    proof = record["proof"]
    assert record["verdict"] == "proved" and "certificates" not in proof  # named, not held in claims.json
    assert proof["certificate"] == proof["certificate_files"][0] == claim_id.replace("/", "--") + ".json"
    for name in proof["certificate_files"]:
        report = recheck(reports / "certificates" / name).to_dict()
        assert report["recheck"] == "passed" and report["verdict"] == "proved", report
        assert "cap_tail" in json.dumps(report)  # the statement it verified is the claim's quantity
    # the constants proved on the whole domain, the resolution's bisection included: the stated one among them,
    # the largest below the refuted end C (1 + high) of the sharpest constant's bracket
    stated = float(re.search(r"proved at C = ([0-9.eE+-]+)", record["decision"]).group(1))
    refuted = stated * (1 + record["resolution"]["high"])
    assert stated in proof["proved_at"] and stated < max(proof["proved_at"]) < refuted
    # the sharpest constant's two ends ship certificates too: proved at the largest constant proved, refuted at
    # the smallest refuted (the resolution's end), each rechecking with its own verdict
    bracket = proof["bracket"]
    assert bracket["proved"]["value"] == max(proof["proved_at"])
    assert bracket["refuted"]["value"] == pytest.approx(refuted, rel=1e-12)
    for end in ("proved", "refuted"):
        assert bracket[end]["files"][0] == claim_id.replace("/", "--") + f".{end}.json"
        for name in bracket[end]["files"]:
            report = recheck(reports / "certificates" / name).to_dict()
            assert report["recheck"] == "passed" and report["verdict"] == end, report
