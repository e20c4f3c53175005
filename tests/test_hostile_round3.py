"""Hostile input, third round (issue 30): methods far outside their regime, the design lock bypassed or
malformed, writes through symbolic links, internal errors on valid input.  Same harness as
:mod:`test_hostile_round2` (every case in ONE worker process under ``setrlimit``, a wall-clock alarm per
case): each row asserts the exit code, at most one stderr line (none for exit 0 and 1), no traceback and no
warning, the fragment in the one line, and its CPU time (work done before the answer); the tests after the
table check what the cases left on disk (links not followed, targets untouched, the lock's history, the modes).

Rows: ``(id, argv, registry, exit code, fragment of the stderr line, seconds)``; ``registry`` names the
prepared registry directory the case runs against (``$LIPSCHITZ_ICL_REGISTRY``; ``None``: the package's);
``{tmp}`` is the case directory.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lipschitz_icl.gates import registry
from test_hostile_cli import AS_LIMIT, SRC, _limits

P = ["--L", "1", "--sigma", "1"]
SMALL_PROOF = """name = "cap-small"
quantity = "cap_tail"
relation = "<="
bound = "exp(-d*h**2/2)"
[domain]
d = [5]
h = [0, 1]
"""


def asym_loss(task, d, n, w):
    return ["loss", "--task", task, "--d", d, "--n", n, *P, "--w", w, "--method", "asymptotic", "--json"]


def prove(*extra):
    return ["prove", "{tmp}/small.toml", "--json", *extra]


CASES = [
    # --- 1. the asymptotic method far outside its regime: refused, naming the option and the exact method
    ("asym-affine-d3-n2-w50", asym_loss("affine", "3", "2", "50"), None, 2, "--n: must be >= 1001", 5),
    ("asym-relu-d10-n2-w100", asym_loss("relu", "10", "2", "100"), None, 2, "--method exact", 5),
    ("asym-w0-n10", asym_loss("affine", "3", "10", "0"), None, 2, "--n: must be >= 20", 5),
    ("asym-inside", asym_loss("affine", "3", "100000", "50"), None, 0, None, 5),
    (
        "asym-wstar-d50-n3",
        ["wstar", "--task", "affine", "--d", "50", "--n", "3", "--L", "1", "--sigma", "0.1", "--method", "asymptotic"],
        None,
        2,
        "--method: must be a method inside its regime",
        10,
    ),
    (
        "asym-wstar-d512-n1e150",  # R/n = 1e-6 but the derived next-order noise term is 1e22 times the 1/n one
        ["wstar", "--task", "relu", "--d", "512", "--n", "1e150", *P, "--method", "asymptotic"],
        None,
        2,
        "--method",
        30,
    ),
    (
        "asym-wstar-inside",
        ["wstar", "--task", "affine", "--d", "3", "--n", "1000", *P, "--method", "asymptotic", "--json"],
        None,
        0,
        None,
        10,
    ),
    # --- 2. the design lock: a stochastic claim's lock does not move without a new salt; demotion is seen
    (
        "lock-keep-data-stochastic",
        ["lock", "thm34.isotropy", "--reason", "more contexts", "--keep-data"],
        "changed",
        2,
        "--keep-data: must be left out",
        10,
    ),
    (
        "lock-relock-stochastic",
        ["lock", "thm34.isotropy", "--reason", "more contexts", "--json"],
        "relock",
        0,
        None,
        10,
    ),
    (
        "lock-repeated-key",
        ["lock", "thm34.isotropy", "thm34.isotropy", "--reason", "more contexts", "--json"],
        "repeated",
        0,
        None,
        10,
    ),
    (
        "lock-relock-unchanged",  # a new salt for the same design: new data until one passes
        ["lock", "thm34.isotropy", "--reason", "once more"],
        "unchanged",
        2,
        "its design matches the lock",
        10,
    ),
    ("lock-check-demoted", ["lock", "--check", "--json"], "demoted", 1, None, 10),
    ("lock-check-removed", ["lock", "--check", "--json"], "removed", 1, None, 10),
    (
        "lock-keep-data-deterministic",
        ["lock", "thm34.window-law", "--reason", "record", "--keep-data", "--json"],
        "deterministic",
        0,
        None,
        10,
    ),
    ("lock-unknown-key", ["lock", "no.such-claim", "--reason", "x"], None, 2, "unknown: no.such-claim", 5),
    # --- 6. a malformed lock: one line, exit 2, for --check and for a re-lock
    *[
        (f"lock-{kind}-{which}", argv, kind, 2, fragment, 10)
        for kind, fragment in (
            ("format2", "format '2', expected 1"),
            ("list", "a JSON list, not an object"),
            ("not-json", "not a design lock"),
            ("not-utf8", "not UTF-8"),
            ("bad-salt", "salt = 'x' is not a valid salt"),
            ("deep", "not a design lock"),
            ("huge", "larger than 64 MiB"),
            ("fifo", "not a regular file"),
        )
        for which, argv in (("check", ["lock", "--check"]), ("key", ["lock", "thm34.window-law", "--reason", "x"]))
    ],
    # --- 3. writes through symbolic links: the lock, certificates, trained parameters
    ("lock-link-check", ["lock", "--check"], "link", 2, "a symbolic link", 10),
    ("lock-link-key", ["lock", "thm34.window-law", "--reason", "x"], "link", 2, "a symbolic link", 10),
    ("lock-dangling-key", ["lock", "thm34.window-law", "--reason", "x"], "dangling", 2, "a symbolic link", 10),
    ("cert-link-force", prove("--certificate", "{tmp}/cert-link.json", "--force"), None, 0, None, 30),
    ("cert-dangling-force", prove("--certificate", "{tmp}/cert-dangling.json", "--force"), None, 0, None, 30),
    ("cert-link", prove("--certificate", "{tmp}/cert-link2.json"), None, 2, "--certificate: must be a path", 2),
    ("cert-dangling", prove("--certificate", "{tmp}/cert-dangling2.json"), None, 2, "a symbolic link is there", 2),
    ("cert-existing", prove("--certificate", "{tmp}/small.toml"), None, 2, "--certificate", 2),
    ("cert-directory", prove("--certificate", "{tmp}"), None, 2, "--certificate: must be a file path", 2),
    ("cert-no-parent", prove("--certificate", "{tmp}/no/such/dir/c.json"), None, 2, "--certificate", 2),
    ("cert-empty", prove("--certificate", ""), None, 2, "--certificate", 2),
    (
        "train-link-force",
        ["train", "--task", "affine", "--d", "3", "--n", "10", *P, "--steps", "2", "--batch", "4"]
        + ["--out", "{tmp}/train-link.npz", "--force"],
        None,
        0,
        None,
        60,
    ),
    # --- 5. valid input that stopped with an internal error ("parameter 'edges' must be ...")
    *[
        (
            f"exact-{task}-d{d}-n{n}",
            ["loss", "--task", task, "--d", d, "--n", n, *P, "--w", "10", "--method", "exact", "--json"],
            None,
            0,
            None,
            60,
        )
        for task, d, n in (("affine", "7", "1e120"), ("affine", "8", "1e150"), ("relu", "7", "1e150"))
    ],
    # --- 4, 5. the certified method: at any n in seconds, an unaffordable grid refused up front
    *[
        (
            f"certified-{task}-d{d}-n{n}-w{w}",
            ["loss", "--task", task, "--d", d, "--n", n, *P, "--w", w, "--method", "certified", "--json"],
            None,
            0,
            None,
            60,
        )
        for task, d, n, w in (("affine", "3", "1e150", "10"), ("affine", "7", "1e120", "10"))
    ],
    (
        "certified-d100-n3-w300",
        ["loss", "--task", "affine", "--d", "100", "--n", "3", *P, "--w", "300", "--method", "certified"],
        None,
        2,
        "--w: must be a window whose certified grid fits the budget",
        10,
    ),
    # --- 7. the contract: the certified method's refusals name the option the user gave
    (
        "certified-wstar-sigma0",
        ["wstar", "--task", "affine", "--d", "3", "--n", "100", "--L", "1", "--sigma", "0", "--method", "certified"],
        None,
        2,
        "--sigma: must be > 0 for the certified w*",
        10,
    ),
    (
        "certified-wstar-n1",
        ["wstar", "--task", "affine", "--d", "3", "--n", "1", "--L", "1", "--sigma", "0.5", "--method", "certified"],
        None,
        2,
        "--n: must be >= 2",
        10,
    ),
    (
        "certified-kernel",
        ["loss", "--kernel", "t", "--d", "3", "--n", "100", "--sigma", "0.5", "--w", "2", "--method", "certified"],
        None,
        0,
        None,
        60,
    ),
]

WORKER = textwrap.dedent("""
    import contextlib, io, json, os, resource, signal, sys, time
    from lipschitz_icl.cli import build_parser, main
    import lipschitz_icl.exact.route, lipschitz_icl.gates.lock
    build_parser()
    cases, result_path = json.load(open(sys.argv[1])), sys.argv[2]

    class Timeout(BaseException):
        pass

    def on_alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    out = {}
    for cid, argv, registry_dir, limit in cases:
        if registry_dir:
            os.environ["LIPSCHITZ_ICL_REGISTRY"] = registry_dir
        else:
            os.environ.pop("LIPSCHITZ_ICL_REGISTRY", None)
        so, se = io.StringIO(), io.StringIO()
        start, cpu = time.perf_counter(), time.process_time()
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
                code = main(argv)
        except Timeout:
            code = "timeout"
        except BaseException as exc:  # anything escaping main() is a defect the test reports
            code = "escaped " + type(exc).__name__ + ": " + str(exc)[:300]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out[cid] = {"code": code, "stdout": so.getvalue()[:20000], "stderr": se.getvalue()[:20000],
                    "seconds": time.perf_counter() - start,
                    "cpu_seconds": time.process_time() - cpu}
    out["_maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    json.dump(out, open(result_path, "w"))
""")


def _registry_copy(tmp: Path, name: str) -> Path:
    """A copy of the package's registry (its claim files and its lock) to run a case against."""
    target = tmp / f"registry-{name}"
    shutil.copytree(registry.REGISTRY_DIR, target, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return target


def _edit(path: Path, old: str, new: str, after: str | None = None) -> None:
    text = path.read_text()
    start = text.index(after) if after else 0
    at = text.index(old, start)
    path.write_text(text[:at] + new + text[at + len(old) :])


def _prepare(tmp: Path) -> dict:
    """The case directory: registries (malformed, linked, changed locks), the proof file, the link decoys."""
    dirs = {}
    malformed = {
        "format2": b'{"format": 2}',
        "list": b"[1, 2]",
        "not-json": b"not json",
        "not-utf8": b"\xff\xfe{}",
        "bad-salt": b'{"format": 1, "claims": {}, "history": [{"key": "k", "design_hash": "h", "salt": "x", '
        b'"fixed": "", "commit": "", "reason": ""}]}',
        "deep": b"[" * 100000 + b"]" * 100000,
    }
    for kind, content in malformed.items():
        dirs[kind] = _registry_copy(tmp, kind)
        (dirs[kind] / "design.lock.json").write_bytes(content)
    dirs["huge"] = _registry_copy(tmp, "huge")
    with open(dirs["huge"] / "design.lock.json", "wb") as handle:
        handle.truncate(100 * 1024**2)  # sparse
    dirs["fifo"] = _registry_copy(tmp, "fifo")
    (dirs["fifo"] / "design.lock.json").unlink()
    os.mkfifo(dirs["fifo"] / "design.lock.json")
    for kind in ("changed", "relock", "demoted", "repeated"):
        dirs[kind] = _registry_copy(tmp, kind)
        _edit(dirs[kind] / "thm34.toml", "contexts = 20000", "contexts = 30000", after='name = "isotropy"')
    _edit(
        dirs["demoted"] / "thm34.toml",
        'status = "confirmatory"',
        'status = "exploratory"\nexploratory_reason = "demoted after the data"',
        after='name = "isotropy"',
    )
    dirs["removed"] = _registry_copy(tmp, "removed")
    text = (dirs["removed"] / "thm34.toml").read_text()
    start = text.rindex("[[claim]]", 0, text.index('name = "isotropy"'))
    end = text.index("[[claim]]", start + 9)
    (dirs["removed"] / "thm34.toml").write_text(text[:start] + text[end:])
    dirs["deterministic"] = _registry_copy(tmp, "deterministic")
    dirs["unchanged"] = _registry_copy(tmp, "unchanged")
    (tmp / "outside").mkdir()
    (tmp / "outside" / "real.lock.json").write_bytes((registry.REGISTRY_DIR / "design.lock.json").read_bytes())
    for kind, pointed in (("link", "real.lock.json"), ("dangling", "no-such.lock.json")):
        dirs[kind] = _registry_copy(tmp, kind)
        (dirs[kind] / "design.lock.json").unlink()
        (dirs[kind] / "design.lock.json").symlink_to(tmp / "outside" / pointed)
    (tmp / "small.toml").write_text(SMALL_PROOF)
    (tmp / "outside" / "cert-target.json").write_text("not yours")
    (tmp / "outside" / "train-target.npz").write_text("not yours")
    for name, pointed in (
        ("cert-link.json", "cert-target.json"),
        ("cert-link2.json", "cert-target.json"),
        ("cert-dangling.json", "no-such-cert.json"),
        ("cert-dangling2.json", "no-such-cert.json"),
        ("train-link.npz", "train-target.npz"),
    ):
        (tmp / name).symlink_to(tmp / "outside" / pointed)
    return {kind: str(path) for kind, path in dirs.items()}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile3")
    dirs = _prepare(tmp)
    cases = [
        (cid, [a.replace("{tmp}", str(tmp)) for a in argv], dirs.get(reg) if reg else None, float(seconds) + 10.0)
        for cid, argv, reg, _, _, seconds in CASES
    ]
    (tmp / "cases.json").write_text(json.dumps(cases))
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["LIPSCHITZ_ICL_CACHE"] = str(tmp / "cache")
    env.pop("LIPSCHITZ_ICL_REGISTRY", None)
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, str(tmp / "cases.json"), str(tmp / "results.json")],
        cwd=tmp,
        env=env,
        preexec_fn=_limits,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp / "results.json").read_text())
    data["_tmp"], data["_dirs"] = tmp, dirs
    return data


def test_case_ids_are_unique():
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("cid, argv, reg, code, fragment, seconds", CASES, ids=[c[0] for c in CASES])
def test_hostile_case(results, cid, argv, reg, code, fragment, seconds):
    r = results[cid]
    lines = r["stderr"].strip().splitlines()
    assert r["code"] == code, f"exit {r['code']} (expected {code}); stderr: {r['stderr'][:500]}"
    assert "Traceback" not in r["stderr"] and "Warning" not in r["stderr"], r["stderr"][:1000]
    assert len(lines) in {0: [0], 1: [0], 2: [1], 3: [0, 1]}[code], r["stderr"][:1000]
    if fragment is not None:
        assert fragment in lines[0] and len(lines[0]) < 1000, lines
    if code == 2:
        assert r["stdout"] == ""
    assert r["cpu_seconds"] < seconds, f"{r['cpu_seconds']:.1f} CPU s"  # work done before the answer, not load
    if "--json" in argv and code in (0, 1, 3):
        json.loads(r["stdout"])


def test_worker_memory_stayed_bounded(results):
    assert results["_maxrss_kb"] < AS_LIMIT // 1024


def test_the_asymptotic_answer_inside_its_regime_states_rho_and_its_error(results):
    out = json.loads(results["asym-inside"]["stdout"])
    assert 0 < out["regime"] <= 0.05 and out["ci_low"] < out["loss"] < out["ci_high"]
    w = json.loads(results["asym-wstar-inside"]["stdout"])
    assert 0 < w["regime"] <= 0.05 and w["ci_low"] < w["w_star"] < w["ci_high"]


def _lock(results, kind) -> dict:
    return json.loads((Path(results["_dirs"][kind]) / "design.lock.json").read_text())


def test_the_lock_moved_only_with_a_new_salt_and_recorded_what_it_kept(results):
    package = json.loads((registry.REGISTRY_DIR / "design.lock.json").read_text())
    assert _lock(results, "changed") == package  # the refused --keep-data left the lock as it was
    relocked = _lock(results, "relock")
    old_salt = package["claims"]["thm34.isotropy"]["salt"]
    assert relocked["claims"]["thm34.isotropy"]["salt"] > max(
        h["salt"] for h in package["history"] if h["key"] == "thm34.isotropy"
    )
    assert relocked["claims"]["thm34.isotropy"]["salt"] > old_salt
    repeated = _lock(results, "repeated")
    assert len(repeated["history"]) == len(package["history"]) + 1  # a key given twice is locked once
    kept = _lock(results, "deterministic")
    assert kept["history"][-1]["kept_data"] is True and kept["history"][-1]["key"] == "thm34.window-law"
    assert kept["history"][-1]["salt"] == package["claims"]["thm34.window-law"]["salt"]


def test_a_demoted_or_removed_claim_is_named_by_the_check(results):
    demoted = json.loads(results["lock-check-demoted"]["stdout"])["changed"]
    assert 'status: "confirmatory" -> "exploratory"' in demoted["thm34.isotropy"]
    assert "design.contexts: 20000 -> 30000" in demoted["thm34.isotropy"]
    removed = json.loads(results["lock-check-removed"]["stdout"])["changed"]
    assert "no longer in the registry" in removed["thm34.isotropy"][0]


def test_no_write_went_through_a_link(results):
    tmp = results["_tmp"]
    outside = tmp / "outside"
    assert sorted(p.name for p in outside.iterdir()) == ["cert-target.json", "real.lock.json", "train-target.npz"]
    assert (outside / "cert-target.json").read_text() == "not yours"
    assert (outside / "train-target.npz").read_text() == "not yours"
    assert (outside / "real.lock.json").read_bytes() == (registry.REGISTRY_DIR / "design.lock.json").read_bytes()
    for kind in ("link", "dangling"):
        assert (Path(results["_dirs"][kind]) / "design.lock.json").is_symlink()
    for name in ("cert-link2.json", "cert-dangling2.json"):  # refused without --force: the links stay
        assert (tmp / name).is_symlink()
    for name in ("cert-link.json", "cert-dangling.json", "train-link.npz"):  # --force: the link itself replaced
        path = tmp / name
        assert not path.is_symlink() and path.is_file()
        assert stat.S_IMODE(path.stat().st_mode) == 0o644 & ~_umask()
    assert json.loads((tmp / "cert-link.json").read_text())["parts"][0]["verdict"] == "proved"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.slow(reason="about 30 s: the writer compares an existing document with every derivation, built here")
def test_derivations_force_keeps_a_documents_mode(tmp_path):
    """`derivations --force` wrote every document 0600 (an existing 0644 README became 0600): a replaced
    document keeps its mode, a new one is 0644 less the umask (the documents themselves are built in
    derivations/test_documents.py; here two small ones, through the command's writer)."""
    from lipschitz_icl.commands.derivations import write

    (tmp_path / "README.md").write_text("old index\n")
    os.chmod(tmp_path / "README.md", 0o644)
    (tmp_path / "window_law.md").write_text("old\n")
    os.chmod(tmp_path / "window_law.md", 0o640)
    payload = write(tmp_path, {"README.md": "index\n", "window_law.md": "law\n", "saddle.md": "new\n"}, force=True)
    assert {d["file"]: d["status"] for d in payload["documents"]} == {
        "README.md": "overwritten",
        "window_law.md": "overwritten",
        "saddle.md": "written",
    }
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {"README.md": 0o644, "window_law.md": 0o640, "saddle.md": 0o644 & ~_umask()}


def test_every_refusal_speaks_in_the_project_s_voice(results):
    """Every exit-2 case's one line starts with ``lipschitz-icl: error:`` (printed with ``-s``)."""
    for cid, *_ in CASES:
        r = results[cid]
        print(f"{cid:30s} {r['code']!s:>3}  {r['cpu_seconds']:5.2f} CPU s  {r['stderr'].strip()[:160]}")
    refusals = {cid: results[cid]["stderr"] for cid, *_ in CASES if results[cid]["code"] == 2}
    assert refusals and all(text.startswith("lipschitz-icl: error:") for text in refusals.values()), refusals
