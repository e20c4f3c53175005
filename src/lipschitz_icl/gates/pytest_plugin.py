"""pytest plugin (entry point ``pytest11``): collects each gate's evidence into ``claims.json``.

Runs serially or under pytest-xdist (``-n auto``): each worker hands its records to the controller
(``workeroutput``), which orders them as the registry does, writes one ``claims.json`` and prints the
summary once.

Options: ``--profile {default,full}`` (size of grids and seed sweeps), ``--report-dir DIR`` (where
``claims.json`` goes; default ``reports/``), ``--variants FILE...`` (user bound variants, TOML, run as
gates: one test ``variant[<name>]`` each; see :mod:`lipschitz_icl.gates.variants`), ``--no-cache`` (recompute
every cached ``w*``/loss evaluation, :mod:`lipschitz_icl.runtime.cache`), ``--scheduler`` (default ``serial``: each
gate computes its claim when it runs; ``local``, ``local:N``, ``auto`` (= ``local``) or the ADDRESS of a
Dask scheduler: right after collection every collected claim case is submitted to that cluster as one
piece, :mod:`lipschitz_icl.runtime.sweep`, and each gate records the evidence of its own piece when it runs;
user variants' grids go to the same cluster; the records are those of a serial run.  Not with
pytest-xdist's ``-n``, the other parallel route).

A gate calls the ``record_claim`` fixture with its ``claim_case`` (a
:class:`~lipschitz_icl.gates.registry.ClaimCase`: its evidence is ``claim_case.run()``, or the result of its piece
under ``--scheduler``) or with an :class:`~lipschitz_icl.gates.evidence.Evidence` (and,
optionally, ``figure=`` data for the report: a dict ``{kind, x, y, ...}``, see
:mod:`lipschitz_icl.report.figures`): the record is kept for the report, a ``fails`` verdict fails the
test, an ``inconclusive`` one is reported as skipped with the word INCONCLUSIVE (never as a pass), and
a false variant that was not refuted fails the test (the gate has lost its power).  At the end a
one-screen claims summary is printed.  Records are kept on the pytest ``config`` object, so nested
sessions (pytester) do not mix their records.

A run of some of the gates (``pytest verify/ -k X``, one gate file) merges into ``claims.json``: the
registry claims it did not run keep their records from the file already there (same profile, same
registry, same design hash; :func:`merge_records`), so the report still shows every claim.  Every record
carries ``run``, the id (date and time, to the microsecond) of the run that made it, and the file's ``runs``
lists each run a record comes from (``id``, date, commit, profile, ``selection``: its paths and ``-k``/``-m``,
seconds; read by :func:`lipschitz_icl.report.provenance.run_rows`).  Each record also carries ``cpu_seconds``
(the CPU time of the process while the claim was measured, every thread) beside its wall ``seconds``.

Order: the claim gates run longest first, by the CPU seconds each took in the ``claims.json`` already in
the report directory (gates it does not list first of all, in registry order), so that the workers of
``-n 2`` finish together; the records are written in registry order whatever order the gates ran in.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from lipschitz_icl.decision import STATISTICAL, Verdict
from lipschitz_icl.gates.evidence import VERDICTS, Evidence

PROFILES = ("default", "full")
_RECORDS_KEY = pytest.StashKey[list]()
_VARIANTS_KEY = pytest.StashKey[list]()
_CACHE_STATE_KEY = pytest.StashKey[bool]()
_SWEEP_KEY = pytest.StashKey[contextlib.ExitStack]()  # the --scheduler session, closed at unconfigure
_PENDING_KEY = pytest.StashKey[object]()  # per item: the submitted piece of its claim case
_COLLECTED_KEY = pytest.StashKey[set]()  # claim ids of the gates this session collected (after -k)
_WORKER_KEY = "lipschitz_icl_records"  # pytest-xdist workeroutput key (JSON text of the worker's records)
_WORKER_COLLECTED = "lipschitz_icl_collected"  # pytest-xdist workeroutput key (the claim ids it collected)


def pytest_addoption(parser):
    group = parser.getgroup("lipschitz-icl", "claim gates of lipschitz-icl")
    group.addoption(
        "--profile",
        choices=PROFILES,
        default="default",
        help="grid size of the claim gates: default (fast) or full (tighter grids, seed sweeps)",
    )
    group.addoption("--report-dir", default="reports", help="directory for claims.json (default: reports/)")
    group.addoption(
        "--variants",
        nargs="+",
        default=[],
        metavar="FILE",
        help="TOML files of user bound variants to run as gates (put this option last, or write --variants=FILE)",
    )
    group.addoption(
        "--registry",
        default=None,
        dest="lipschitz_icl_registry",
        metavar="DIR",
        help="a directory of claim TOML files and its design lock to use instead of the package's "
        "registry (e.g. an edited copy)",
    )
    group.addoption(
        "--no-cache",
        action="store_true",
        dest="lipschitz_icl_no_cache",
        help="recompute every w*/loss evaluation instead of reading the lipschitz-icl disk cache",
    )
    group.addoption(
        "--scheduler",
        default="serial",
        dest="lipschitz_icl_scheduler",
        metavar="SCHEDULER",
        help="serial (default: each gate computes its claim), local, local:N, auto (= local) or "
        "the ADDRESS of a Dask scheduler (tcp://HOST:PORT): every collected claim case is "
        "computed on that cluster; claims.json is the same as a serial run's",
    )


def _records(config) -> list:
    return config.stash.setdefault(_RECORDS_KEY, [])


def pytest_configure(config):
    from lipschitz_icl.runtime import cache

    config.stash[_RECORDS_KEY] = []
    registry_option = config.getoption("lipschitz_icl_registry", None)
    if registry_option:
        from lipschitz_icl.gates.registry import REGISTRY_ENV

        if not Path(registry_option).is_dir():
            raise pytest.UsageError(f"--registry: {registry_option!r} is not a directory")
        os.environ[REGISTRY_ENV] = str(Path(registry_option).resolve())
    # --report-dir must be a directory or creatable as one, with no directory named claims.json in it:
    # checked before any gate runs (it used to fail after every gate had run)
    option = config.getoption("--report-dir", "reports")
    out_dir = Path(option) if Path(option).is_absolute() else Path(config.rootpath) / option
    existing = out_dir
    while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
        existing = existing.parent
    problem = None
    if existing == out_dir and not out_dir.is_dir():
        problem = "exists and is not a directory"
    elif not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        problem = f"cannot be written ({existing} is not a writable directory)"
    elif (out_dir / "claims.json").is_dir():
        problem = "holds a directory named claims.json"
    if problem:
        raise pytest.UsageError(f"--report-dir: {option!r} {problem}")
    config.stash[_CACHE_STATE_KEY] = cache.enabled()
    if config.getoption("lipschitz_icl_no_cache", False):
        cache.set_enabled(False)
    files = config.getoption("--variants", []) or []
    if files:
        from lipschitz_icl.gates.variants import VariantFileError, load_variant

        variants = []
        for name in files:
            path = Path(name)
            if path.is_dir() or path.suffix != ".toml":
                raise pytest.UsageError(
                    f"--variants: {name!r} is not a .toml variant file (put --variants "
                    "after the test paths, or write --variants=FILE)"
                )
            try:
                variants.append(load_variant(path))
            except VariantFileError as exc:
                raise pytest.UsageError(f"--variants: {exc}") from None
        config.stash[_VARIANTS_KEY] = variants
    _start_sweep(config)


def _start_sweep(config) -> None:
    """Open the ``--scheduler`` session (a refused value or an unreachable address: a usage error)."""
    from lipschitz_icl.runtime import sweep
    from lipschitz_icl.validation import ParameterError

    text = config.getoption("lipschitz_icl_scheduler", "serial")
    try:
        kind = sweep.parse_scheduler(text).kind
        if kind != "serial" and (getattr(config.option, "numprocesses", None) or _is_worker(config)):
            raise pytest.UsageError(
                "--scheduler: serial with pytest-xdist's -n (use one parallel route: -n or --scheduler)"
            )
        if kind != "serial":
            stack = contextlib.ExitStack()
            stack.enter_context(sweep.session(text))
            config.stash[_SWEEP_KEY] = stack
    except ParameterError as exc:
        raise pytest.UsageError(f"--scheduler: must be {exc.requirement} (got {text!r})") from None


def pytest_collection_finish(session):
    """Note the claim ids collected (a claim collected but not recorded keeps no earlier record); under
    ``--scheduler``: submit every collected claim case as one piece, in test order."""
    from lipschitz_icl.gates.registry import ClaimCase
    from lipschitz_icl.runtime import sweep

    collected = session.config.stash.setdefault(_COLLECTED_KEY, set())
    collected.update(cid for cid in map(_claim_id, session.items) if cid)
    if _SWEEP_KEY not in session.config.stash or session.config.option.collectonly:
        return
    active = sweep.active()
    for item in session.items:
        case = getattr(getattr(item, "callspec", None), "params", {}).get("claim_case")
        if isinstance(case, ClaimCase) and (case.spec.status != "confirmatory" or not _lock_changes(case)):
            item.stash[_PENDING_KEY] = (case, active.submit(ClaimCase.run, case))


def _lock_changes(case) -> list:
    from lipschitz_icl.gates import lock

    return lock.changes(case.spec)


def pytest_unconfigure(config):
    from lipschitz_icl.runtime import cache

    stack = config.stash.get(_SWEEP_KEY, None)
    if stack is not None:
        del config.stash[_SWEEP_KEY]
        stack.close()
    if _CACHE_STATE_KEY in config.stash:
        cache.set_enabled(config.stash[_CACHE_STATE_KEY])


@pytest.fixture(scope="session")
def profile(request) -> str:
    """The gate profile: ``default`` or ``full``."""
    return request.config.getoption("--profile")


def record_evidence(config, nodeid: str, evidence: Evidence, figure: dict | None = None) -> Evidence:
    """Keep ``evidence`` for claims.json and turn its verdict into the test outcome.

    Confirmatory claims: ``fails`` or ``refuted`` fails the gate; ``inconclusive`` or ``undecided`` fails
    it too (with its reason: a confirmatory claim that cannot be decided is not shown); a resolution that
    was not reached fails it (the rule refutes no deviation within its search limit: the gate has no
    shown power).  The pre-specified alternatives are recorded whatever their verdicts (data that cannot
    rule one out are reported, not hidden).  Exploratory claims are recorded and reported, never fail the
    run, and never count as the paper holding or failing.  An id recorded twice fails.
    """
    record = {**evidence.to_dict(), "test": nodeid}
    _write_certificates(config, record)
    figure = figure if figure is not None else getattr(evidence, "figure", None)
    if figure is not None:
        record["figure"] = figure
    records = _records(config)
    if any(r["claim_id"] == evidence.claim_id for r in records):
        pytest.fail(
            f"claim id {evidence.claim_id!r} recorded twice (ids must carry every varying parameter "
            "and the seed); the second record is not kept",
            pytrace=False,
        )
    records.append(record)
    if evidence.status == "exploratory":
        return evidence
    verdict = Verdict(evidence.verdict)
    if verdict.refutes:
        pytest.fail(f"claim {evidence.claim_id} {verdict.value.upper()}: {_brief(evidence)}", pytrace=False)
    if not verdict.passes:
        pytest.fail(
            f"claim {evidence.claim_id} {verdict.value.upper()} (confirmatory claims must be decided): "
            f"{_brief(evidence)}",
            pytrace=False,
        )
    if evidence.group != "variants" and not evidence.resolved:
        limit = (evidence.resolution or {}).get("limit")
        pytest.fail(
            f"claim {evidence.claim_id}: its rule refutes no deviation of "
            f"{(evidence.resolution or {}).get('parameter', 'its parameter')} up to {limit} "
            "(its power is not shown)",
            pytrace=False,
        )
    return evidence


CERTIFICATES = "certificates"  # the folder beside claims.json with the proof certificates of the proved cases


def _write_certificates(config, record: dict) -> None:
    """A case decided by proof: its pieces' certificates (``proof.certificates``, from
    :func:`lipschitz_icl.gates.proof_outcome.proof_outcome`) written to ``<report-dir>/certificates/`` as
    ``<claim id, / as -->[.k].json`` (replacing the last run's), and the record names them instead of holding
    them: ``proof.certificate`` (the first) and ``proof.certificate_files``.  The certificates of the sharpest
    constant's ends (``proof.bracket_certificates``) go beside them as ``<stem>.proved[.k].json`` and
    ``<stem>.refuted[.k].json``, named with their constants in ``proof.bracket``.  Each rechecks with
    ``lipschitz-icl prove --recheck FILE``."""
    proof = record.get("proof")
    if not isinstance(proof, dict):
        return
    bracket = proof.pop("bracket_certificates", None) or {}
    if not proof.get("certificates"):
        proof.pop("certificates", None)
        return
    from lipschitz_icl.prover import certificate

    folder = _report_dir(config) / CERTIFICATES
    folder.mkdir(parents=True, exist_ok=True)
    stem = record["claim_id"].replace("/", "--")

    def write(certificates: list, tag: str) -> list:
        names = [stem + tag + ("" if k == 0 else f".{k}") + ".json" for k in range(len(certificates))]
        for name, data in zip(names, certificates):
            certificate.write(data, folder / name, force=True)
        return names

    names = write(proof.pop("certificates"), "")
    ends = {
        end: {"value": bracket[end]["value"], "files": write(bracket[end]["certificates"], f".{end}")}
        for end in ("proved", "refuted")
        if end in bracket
    }
    record["proof"] = {**proof, "certificate": names[0], "certificate_files": names, "bracket": ends}


@pytest.fixture
def record_claim(request):
    """Record an :class:`Evidence`, or the evidence of a :class:`~lipschitz_icl.gates.registry.ClaimCase`
    (optionally with ``figure=`` data), and turn its verdict into the test outcome."""

    def record(evidence, figure: dict | None = None) -> Evidence:
        from lipschitz_icl.gates.registry import ClaimCase

        if isinstance(evidence, ClaimCase):
            evidence = _case_evidence(request.node, evidence)
        return record_evidence(request.config, request.node.nodeid, evidence, figure)

    return record


def _case_evidence(item, case) -> Evidence:
    """The evidence of ``case``: its submitted piece's result under ``--scheduler``, else ``case.run()``
    in this process as a sweep runs a piece (BLAS on one thread, :func:`lipschitz_icl.runtime.sweep.run_here`),
    so that every route gives the same numbers."""
    from lipschitz_icl.runtime import sweep

    _check_lock(case)
    submitted, pending = item.stash.get(_PENDING_KEY, (None, None))
    return pending.result() if submitted is case else sweep.run_here(case.run)


def _check_lock(case) -> None:
    """Fail a confirmatory claim whose design differs from its lock, naming what changed, before it is
    measured (:mod:`lipschitz_icl.gates.lock`)."""
    from lipschitz_icl.gates import lock

    if case.spec.status != "confirmatory":
        return
    if lock.entry_of(case.spec) is None:
        pytest.fail(f"claim {case.claim_id}: {lock.not_locked(case.spec)}", pytrace=False)
    changed = lock.changes(case.spec)
    if changed:
        pytest.fail(
            f"claim {case.claim_id}: its design differs from the lock ({lock.LOCK_NAME}): "
            + "; ".join(changed[:8])
            + (f"; ... {len(changed) - 8} more" if len(changed) > 8 else "")
            + f". A changed design draws fresh data: lipschitz-icl lock {case.spec.key} --reason TEXT",
            pytrace=False,
        )


class VariantError(Exception):
    """A user variant that cannot be evaluated (reported as a setup error, one line)."""


class VariantItem(pytest.Item):
    """One user bound variant run as a gate: its evidence is recorded like a claim's."""

    def __init__(self, *, variant, **kwargs):
        super().__init__(**kwargs)
        self.variant = variant
        self.result = None

    def setup(self):
        """Measure the variant over its grid.  A variant that cannot be evaluated raises here, so pytest
        reports an ERROR (setup failed), never a FAILED gate, which would read as a refutation."""
        from lipschitz_icl.gates.variants import evaluate_variant
        from lipschitz_icl.validation import ParameterError

        try:
            self.result = evaluate_variant(self.variant)
        except ParameterError as exc:
            message = " ".join(str(exc).split())
            raise VariantError(
                f"variant {self.variant.name} cannot be evaluated (not a refutation): {message}"
            ) from None

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, VariantError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def runtest(self):
        from lipschitz_icl.gates.variants import variant_evidence

        result = self.result
        assert result is not None  # pytest runs a test only after its setup measured the variant
        evidence = variant_evidence(result)
        c = result.counterexample
        if c is not None:
            where = ", ".join(f"{k}={v:g}" for k, v in c.params.items())
            at = next(i for i, p in enumerate(result.points) if p is c)
            rows = list(evidence.quantities)
            evidence = replace(
                evidence,
                quantities=(rows.pop(at), *rows),
                rule=evidence.rule + f" (counter-example at {where}: measured {c.measured:.6g}, bound {c.bound:.6g})",
            )
        record_evidence(self.config, self.nodeid, evidence)

    def reportinfo(self):
        return self.variant.path, None, f"variant {self.variant.name} ({self.variant.path})"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    for variant in config.stash.get(_VARIANTS_KEY, []):
        items.append(VariantItem.from_parent(session, name=f"variant[{variant.name}]", variant=variant))
    _longest_first(config, items)


def _claim_id(item) -> str | None:
    case = getattr(getattr(item, "callspec", None), "params", {}).get("claim_case")
    return getattr(case, "claim_id", None)


def _prior_cost(item) -> float:
    """A gate's expected cost before any record of it: a proof with a budget of minutes (the loss-shape proofs,
    tens of CPU seconds each) first, longest budget first, then a claim that trains attention layers (its
    design names a training ``protocol``), then a stochastic claim, then the rest (exact computations, the
    tail proofs: well under a second each).  Only the order of the gates depends on it, never a result."""
    case = getattr(getattr(item, "callspec", None), "params", {}).get("claim_case")
    spec = getattr(case, "spec", None)
    if spec is None:
        return 0.0
    seconds = spec.design.get("seconds")
    if spec.rule == "proof" and isinstance(seconds, (int, float)) and seconds >= 300:
        return 3.0 + seconds / 1e4
    if "protocol" in spec.design:
        return 2.0
    return 1.0 if spec.seeds else 0.0


def _longest_first(config, items) -> None:
    """Sort the claim gates by the CPU seconds (else the seconds) of their last records, longest first; gates
    without a record first, among them by :func:`_prior_cost` (a clean checkout has no record: the long proofs
    would otherwise start last, on the run's critical path); the sort is stable, so ties keep the registry's
    order (every pytest-xdist worker reads the same file and collects the same order)."""
    last = {r["claim_id"]: r for r in _previous_records(_report_dir(config))[0]}

    def cost(item) -> tuple:
        record = last.get(_claim_id(item) or "")
        value = None if record is None else record.get("cpu_seconds", record.get("seconds"))
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return (0, -_prior_cost(item))
        return (1, -float(value))

    items.sort(key=cost)


def _brief(evidence: Evidence) -> str:
    parts = [evidence.decision] if evidence.decision else []
    for q in evidence.quantities[:4]:
        measured = "-" if q.measured is None else f"{q.measured:.4g}"
        theory = "-" if q.theory is None else f"{q.theory:.4g}"
        parts.append(f"{q.name}: measured {measured} vs theory {theory}")
    return "; ".join(parts)


def pytest_sessionstart(session):
    _records(session.config).clear()
    session.config._lipschitz_icl_start = time.time()


def _is_worker(config) -> bool:
    """A pytest-xdist worker process (it hands its records to the controller instead of writing)."""
    return hasattr(config, "workeroutput")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist controller: collect the records a worker handed over when it finished."""
    output = getattr(node, "workeroutput", None) or {}
    if output.get(_WORKER_KEY):
        _records(node.config).extend(json.loads(output[_WORKER_KEY]))
    node.config.stash.setdefault(_COLLECTED_KEY, set()).update(json.loads(output.get(_WORKER_COLLECTED, "[]")))


def _ordered(records: list) -> list:
    """Records in registry order (then the others in id order), whatever order workers finished in."""
    from lipschitz_icl.gates import registry

    rank: dict[str, int] = {}
    for profile in registry.PROFILES:
        for case in registry.cases(profile):
            rank.setdefault(case.claim_id, len(rank))
    return sorted(records, key=lambda r: (rank.get(r["claim_id"], len(rank)), r["claim_id"]))


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    records = _records(config)
    if _is_worker(config):
        config.workeroutput[_WORKER_KEY] = json.dumps(records)
        config.workeroutput[_WORKER_COLLECTED] = json.dumps(sorted(config.stash.get(_COLLECTED_KEY, set())))
        return
    if not records:
        return
    out_dir = _report_dir(config)
    out_dir.mkdir(parents=True, exist_ok=True)
    seconds = time.time() - getattr(config, "_lipschitz_icl_start", time.time())
    here = provenance(config, seconds)
    for r in records:
        r["run"] = here["run"]
    previous, runs = _previous_records(out_dir)
    runs[here["run"]] = _run_summary(here, _selection(config))
    collected = config.stash.get(_COLLECTED_KEY, set())
    kept = merge_records(records, previous, config.getoption("--profile"), here["registry"], collected)
    config._lipschitz_icl_kept = len(kept)
    merged = _ordered(records + kept)
    payload = {
        "profile": config.getoption("--profile"),
        "seconds": seconds,
        "provenance": here,
        "runs": [runs[run] for run in dict.fromkeys([here["run"], *(r["run"] for r in kept)])],
        "design_history": _design_history(),
        "replicates": replicate_summary(merged),
        "claims": merged,
    }
    from lipschitz_icl.writefile import write_file  # atomic, never through a link, the file's mode kept

    write_file(out_dir / "claims.json", json.dumps(payload, indent=1, allow_nan=False), force=True, option="report-dir")
    config._lipschitz_icl_report = out_dir / "claims.json"


def _run_summary(prov: dict, selection: str | None = None) -> dict:
    """What ``runs`` keeps of a run's provenance: its ``id``, date, commit (and whether the tree was dirty),
    profile, ``selection`` (what the run was asked to run), seconds and workers (the fields it has)."""
    out = {"id": str(prov.get("run") or prov.get("date") or "earlier run")}
    for key in ("date", "commit", "dirty", "profile", "seconds", "workers"):
        if prov.get(key) is not None:
            out[key] = prov[key]
    if selection is not None:
        out["selection"] = selection
    return out


def _selection(config) -> str:
    """What this run was asked to run: its paths and its ``-k`` and ``-m`` expressions."""
    words = [str(arg) for arg in config.args]
    for option, flag in (("keyword", "-k"), ("markexpr", "-m")):
        expression = config.getoption(option, "")
        if expression:
            words += [flag, repr(expression)]
    return " ".join(words) or "every gate"


def _previous_records(out_dir: Path) -> tuple[list, dict]:
    """The records of the ``claims.json`` in ``out_dir`` (each with its ``run``), and the provenance of each run
    they come from; nothing if there is no readable file.  A record without ``run`` (a file written before
    records carried it) comes from the file's own run."""
    try:
        data = json.loads((out_dir / "claims.json").read_text(encoding="utf-8"))
        records, prov = data["claims"], data.get("provenance") or {}
        if not isinstance(records, list) or not all(isinstance(r, dict) and "claim_id" in r for r in records):
            return [], {}
    except (OSError, ValueError, KeyError, TypeError):
        return [], {}
    own = str(prov.get("run") or prov.get("date") or "earlier run")
    listed = data.get("runs") if isinstance(data.get("runs"), list) else []
    runs = {run["id"]: run for run in listed if isinstance(run, dict) and isinstance(run.get("id"), str)}
    out = []
    for r in records:
        run = r.get("run") if isinstance(r.get("run"), str) else own
        out.append({**r, "run": run, "_profile": data.get("profile"), "_registry": prov.get("registry")})
        runs.setdefault(run, _run_summary(prov) if run == own else {"id": run})
    return out, runs


def merge_records(records: list, previous: list, profile: str, registry_path: str, collected=()) -> list:
    """The records of ``previous`` (an earlier ``claims.json``) to keep beside this run's ``records``: those of
    registry claims of ``profile`` that this run neither measured nor collected (a gate that ran and
    recorded nothing, e.g. an error, keeps no stale record), from a file of the same profile and registry,
    whose design hash is the claim's current one (a record of another design is not the claim's last
    record).  User variants are never kept (they are the files of one run)."""
    from lipschitz_icl.gates import registry

    done = {r["claim_id"] for r in records} | set(collected)
    current = {c.claim_id: c.spec.design_hash for c in registry.cases(profile)}
    kept = []
    for r in previous:
        same_run_kind = r.pop("_profile", None) == profile and r.pop("_registry", None) == registry_path
        cid = r["claim_id"]
        if same_run_kind and cid not in done and cid in current and r.get("design_hash") == current[cid]:
            kept.append(r)
    return kept


def provenance(config, seconds: float) -> dict:
    """Where and how the evidence was made: commit (and whether the tree had uncommitted changes), date,
    profile, runtime, Python, numpy, platform, pytest-xdist workers, the registry used."""
    import numpy

    from lipschitz_icl.gates.registry import registry_dir

    def git(*args) -> str:
        try:
            out = subprocess.run(
                ["git", *args], capture_output=True, text=True, timeout=10, cwd=config.rootpath, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    now = datetime.now(timezone.utc)
    return {
        "run": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),  # the id each of this run's records carries
        "commit": commit,
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")) if commit else None,
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "profile": config.getoption("--profile"),
        "seconds": seconds,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "workers": _workers(config),
        "registry": str(registry_dir()),
        "seeds": "replicate k = child k of SeedSequence(sha256(claim id [#salt])), salts in design.lock.json",
    }


def _workers(config) -> int:
    value = getattr(config.option, "numprocesses", None)
    try:
        return max(int(value or 1), 1)
    except (TypeError, ValueError):
        return os.cpu_count() or 1


def _design_history() -> list:
    from lipschitz_icl.gates import lock
    from lipschitz_icl.gates.registry import registry_dir

    return lock.history(registry_dir())


def _report_dir(config) -> Path:
    out_dir = Path(config.getoption("--report-dir"))
    return out_dir if out_dir.is_absolute() else Path(config.rootpath) / out_dir


def _resolution_text(record: dict) -> str:
    res = record.get("resolution")
    if not isinstance(res, dict):
        return "resolution -"
    value = res.get("value")
    return f"resolution {res.get('parameter', '?')} {'not reached' if value is None else format(value, '.3g')}"


def replicate_summary(records) -> dict:
    """``base id -> {verdict: count}`` over the replicate seeds of each stochastic claim (records with a
    ``seed``; the base id is the claim id without its ``/seed{k}``)."""
    out: dict = {}
    for r in records:
        if r.get("seed") is None:
            continue
        base = r["claim_id"].rsplit("/seed", 1)[0]
        counts = out.setdefault(base, {"holds": 0, "fails": 0, "inconclusive": 0})
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return out


def _replicate_lines(records) -> list[str]:
    summary = {k: v for k, v in replicate_summary(records).items() if sum(v.values()) > 1}
    if not summary:
        return []
    lines = ["seed sweeps (independent replicates):"]
    for base, counts in summary.items():
        lines.append(
            f"  {base}: {counts['holds']}/{sum(counts.values())} seeds hold"
            + (f", {counts['fails']} fail" if counts["fails"] else "")
            + (f", {counts['inconclusive']} inconclusive" if counts["inconclusive"] else "")
        )
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    records = _records(config)
    if not records or _is_worker(config):
        return
    tr = terminalreporter
    tr.section("lipschitz-icl claims")
    width = max(len(r["claim_id"]) for r in records)
    refuted = total = 0
    for r in records:
        p_ok, p_all = r["power"]
        refuted += p_ok
        total += p_all
        status = "" if r.get("status", "confirmatory") == "confirmatory" else " (exploratory)"
        tr.write_line(
            f"{r['claim_id']:<{width}}  {r['verdict'].upper() + status:<26}  {r['paper_ref']:<24}  "
            f"{_resolution_text(r)}  alternatives ruled out {p_ok}/{p_all}  {r['seconds']:.1f}s"
            + (f" ({r['cpu_seconds']:.1f}s CPU)" if r.get("cpu_seconds") else "")
        )
    for status in ("confirmatory", "exploratory"):
        rows = [r for r in records if r.get("status", "confirmatory") == status]
        if rows:
            counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
            tr.write_line(
                f"{len(rows)} {status} claims: "
                + ", ".join(f"{n} {v}" for v, n in counts.items() if n or v in STATISTICAL)
            )
    paper = [r for r in records if r.get("scope") == "paper" and r.get("status") == "confirmatory"]
    if paper:
        held = sum(Verdict(r["verdict"]).passes for r in paper)
        tr.write_line(f"the paper's statements (scope paper, confirmatory): {held}/{len(paper)} hold or are proved")
    for line in _replicate_lines(records):
        tr.write_line(line)
    tr.write_line(f"pre-specified alternatives ruled out {refuted}/{total}")
    kept = getattr(config, "_lipschitz_icl_kept", 0)
    if kept:
        tr.write_line(f"{kept} claims not run now keep their records from earlier runs (their 'run' says which)")
    report = getattr(config, "_lipschitz_icl_report", None)
    if report is not None:
        tr.write_line(f"evidence written to {report}")
