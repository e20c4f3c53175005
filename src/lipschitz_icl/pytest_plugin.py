"""pytest plugin (entry point ``pytest11``): collects each gate's evidence into ``claims.json``.

Options: ``--profile {default,full}`` (size of grids and seed sweeps), ``--report-dir DIR`` (where
``claims.json`` goes; default ``reports/``), ``--variants FILE...`` (user bound variants, run as gates).

A gate calls the ``record_claim`` fixture with its :class:`~lipschitz_icl.evidence.Evidence`: the
record is kept for the report, a ``fails`` verdict fails the test, an ``inconclusive`` one is reported
as skipped with the word INCONCLUSIVE (never as a pass), and a false variant that was not refuted fails
the test (the gate has lost its power).  At the end a one-screen claims summary is printed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .evidence import Evidence

PROFILES = ("default", "full")
_RECORDS: list[dict] = []


def pytest_addoption(parser):
    group = parser.getgroup("lipschitz-icl", "claim gates of lipschitz-icl")
    group.addoption("--profile", choices=PROFILES, default="default",
                    help="grid size of the claim gates: default (fast) or full (tighter grids, seed sweeps)")
    group.addoption("--report-dir", default="reports", help="directory for claims.json (default: reports/)")
    group.addoption("--variants", nargs="+", default=[], metavar="FILE",
                    help="TOML files of user bound variants to run as gates")


@pytest.fixture(scope="session")
def profile(request) -> str:
    """The gate profile: ``default`` or ``full``."""
    return request.config.getoption("--profile")


@pytest.fixture
def record_claim(request):
    """Record an :class:`Evidence` and turn its verdict into the test outcome."""

    def record(evidence: Evidence) -> Evidence:
        _RECORDS.append({**evidence.to_dict(), "test": request.node.nodeid})
        refuted, total = evidence.power
        if evidence.verdict == "fails":
            pytest.fail(f"claim {evidence.claim_id} FAILS: {_brief(evidence)}", pytrace=False)
        if refuted < total:
            missed = [v.name for v in evidence.false_variants if not v.refuted]
            pytest.fail(f"claim {evidence.claim_id}: false variants not refuted: {missed}", pytrace=False)
        if evidence.verdict == "inconclusive":
            pytest.skip(f"INCONCLUSIVE: claim {evidence.claim_id}: {_brief(evidence)}")
        return evidence

    return record


def _brief(evidence: Evidence) -> str:
    parts = []
    for q in evidence.quantities[:4]:
        measured = "-" if q.measured is None else f"{q.measured:.4g}"
        theory = "-" if q.theory is None else f"{q.theory:.4g}"
        parts.append(f"{q.name}: measured {measured} vs theory {theory}")
    return "; ".join(parts)


def pytest_sessionstart(session):
    _RECORDS.clear()
    session.config._lipschitz_icl_start = time.time()


def pytest_sessionfinish(session, exitstatus):
    if not _RECORDS:
        return
    out_dir = Path(session.config.getoption("--report-dir"))
    if not out_dir.is_absolute():
        out_dir = Path(session.config.rootpath) / out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {"profile": session.config.getoption("--profile"),
               "seconds": time.time() - getattr(session.config, "_lipschitz_icl_start", time.time()),
               "claims": _RECORDS}
    (out_dir / "claims.json").write_text(json.dumps(payload, indent=1))
    session.config._lipschitz_icl_report = out_dir / "claims.json"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _RECORDS:
        return
    tr = terminalreporter
    tr.section("lipschitz-icl claims")
    width = max(len(r["claim_id"]) for r in _RECORDS)
    refuted = total = 0
    for r in _RECORDS:
        p_ok, p_all = r["power"]
        refuted += p_ok
        total += p_all
        tr.write_line(f"{r['claim_id']:<{width}}  {r['verdict'].upper():<12}  {r['paper_ref']:<24}  "
                      f"false variants refuted {p_ok}/{p_all}  {r['seconds']:.1f}s")
    counts = {v: sum(r["verdict"] == v for r in _RECORDS) for v in ("holds", "fails", "inconclusive")}
    tr.write_line(f"{len(_RECORDS)} claims: {counts['holds']} hold, {counts['fails']} fail, "
                  f"{counts['inconclusive']} inconclusive; false variants refuted {refuted}/{total}")
    report = getattr(config, "_lipschitz_icl_report", None)
    if report is not None:
        tr.write_line(f"evidence written to {report}")
