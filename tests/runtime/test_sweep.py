"""lipschitz_icl.runtime.sweep: the same numbers on every scheduler (serial, a local Dask cluster of 2 workers,
a scheduler ADDRESS) for check, scaling, figures and the claim gates; refused schedulers; errors in
piece order; progress bars; no worker process or scratch directory left behind."""

from __future__ import annotations

import contextlib
import io
import json
import operator
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

import lipschitz_icl
from lipschitz_icl.cli import main
from lipschitz_icl.runtime import cache, sweep
from lipschitz_icl.validation import ParameterError, parse_int

ROOT = Path(__file__).resolve().parents[2]

VARIANTS = {
    "wstar.toml": """
name = "wstar-relu-grid"
quantity = "w_star"
task = "relu"
method = "exact"
relation = ">="
bound = "C * (n*L**2/sigma**2)**(2/(d+2))"
[constants]
C = 0.2
[grid]
d = [3, 4]
n = [100, 100000]
L = 1.0
sigma = [0.5, 1.0]
""",  # d=4, n=1e5, sigma=0.5: the exact w* there differs in the 12th digit with 1 or 2 OpenBLAS threads
    "noise_mc.toml": """
name = "noise-mc-grid"
quantity = "noise"
task = "affine"
method = "mc"
relation = ">="
bound = "sigma**2 / n"
at_w = "sqrt(n)"
seed = 3
contexts = 2000
[grid]
d = [3, 5]
n = [50, 200]
L = 1.0
sigma = 0.5
""",
}


@pytest.fixture(scope="module")
def address(tmp_path_factory):
    """A Dask cluster of 2 single-threaded worker processes, shared by this module's tests (its scratch
    files in pytest's temporary directory)."""
    import dask
    from distributed import LocalCluster

    scratch = str(tmp_path_factory.mktemp("dask"))
    with (
        dask.config.set({"temporary-directory": scratch}),
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",
            local_directory=scratch,
            silence_logs=50,
        ) as cluster,
    ):
        yield cluster.scheduler_address


@pytest.fixture
def variant_files(tmp_path):
    for name, text in VARIANTS.items():
        (tmp_path / name).write_text(text)
    return [str(tmp_path / name) for name in VARIANTS]


def _run(argv, capsys) -> tuple[int, dict]:
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


RUN_SPECIFIC = {"seconds", "cpu_seconds", "run"}  # timings and the run's id differ run to run


def _without_seconds(payload):
    """The payload with every run-specific entry dropped (:data:`RUN_SPECIFIC`)."""
    if isinstance(payload, dict):
        return {k: _without_seconds(v) for k, v in payload.items() if k not in RUN_SPECIFIC}
    if isinstance(payload, (list, tuple)):
        return [_without_seconds(v) for v in payload]
    return payload


def _warm_key(directory: Path, monkeypatch):
    """Point the cache at ``directory`` and create its key first (as any earlier run would have)."""
    monkeypatch.setenv(cache.ENV_VAR, str(directory))
    cache.cached(["key"], lambda: 0, namespace="warm")


def _children() -> set:
    """Pids of this process's live descendants, except multiprocessing's resource tracker (started with
    the first spawned process, it lives as long as this process)."""
    out = set()
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if (
                p.is_running()
                and p.status() != psutil.STATUS_ZOMBIE
                and "multiprocessing.resource_tracker" not in " ".join(p.cmdline())
            ):
                out.add(p.pid)
    return out


# ----------------------------------------------------------------------------- the scheduler option
@pytest.mark.parametrize(
    "text, kind",
    [
        ("serial", "serial"),
        ("auto", "auto"),
        ("local", "local"),
        ("local:3", "local"),
        ("tcp://10.0.0.5:8786", "address"),
        ("node-7.cluster:8786", "address"),
        ("tls://[::1]:8786", "address"),
    ],
)
def test_scheduler_values_accepted(text, kind):
    assert sweep.parse_scheduler(text).kind == kind


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Serial",
        "local:0",
        "local:x",
        "local:2000",
        "tcp://host",
        "host:0",
        "host:65536",
        "http://host:80",
        "host:80/path",
        "a b:80",
        None,
        "tcp://a..b:80",
        "tcp://-a.b:80",
        "tcp://a-.b:80",
        "tcp://" + "a" * 64 + ".b:80",
        "tcp://" + "a." * 127 + "ab:80",
        "tcp://[zz::1]:80",
        "tcp://[::1:80",
        "tcp://h\u00e9.example:80",
        "tcp://.a:80",
        "tcp://a.:80",
    ],
)
def test_scheduler_values_refused(text):
    with pytest.raises(ParameterError, match="'scheduler'"):
        sweep.parse_scheduler(text)


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "{file}"],
        ["scaling", "--task", "affine", "--d", "2"],
        ["figures", "--out", "{tmp}/figs", "--only", "fig5"],
    ],
)
def test_cli_refuses_a_bad_scheduler_in_one_line(argv, tmp_path, variant_files, capsys):
    argv = [a.format(file=variant_files[0], tmp=tmp_path) for a in argv]
    assert main([*argv, "--scheduler", "threads", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("lipschitz-icl: error: --scheduler: must be ")


def test_cli_unreachable_address_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(sweep, "CONNECT_TIMEOUT", 0.5)
    assert main(["scaling", "--task", "affine", "--d", "2", "--scheduler", "tcp://127.0.0.1:9", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--scheduler: must be the address of a running Dask scheduler" in err


@pytest.mark.parametrize("behaviour,scheme", [("huge-frame", "tcp")])
def test_a_server_that_is_no_dask_scheduler_is_one_line_within_the_handshake_timeout(
    monkeypatch, capsys, behaviour, scheme, not_dask_servers
):
    """Announcing a frame and never sending it held the client (Dask bounds only the connection): now the
    handshake has a deadline (silent, HTTP, garbage and tls:// servers: tests/test_hostile_round2.py).  The
    one-line refusal is the check: a client held by the server never returns (no wall-clock bound here)."""
    monkeypatch.setattr(sweep, "CONNECT_TIMEOUT", 1.0)
    monkeypatch.setattr(sweep, "HANDSHAKE_TIMEOUT", 1.5)
    servers = not_dask_servers((behaviour,))
    try:
        code = main(
            [
                "scaling",
                "--task",
                "affine",
                "--d",
                "2",
                "--scheduler",
                f"{scheme}://127.0.0.1:{servers.ports()[behaviour]}",
                "--json",
            ]
        )
    finally:
        servers.close()
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert (
        captured.err.count("\n") == 1 and "--scheduler: must be the address of a running Dask scheduler" in captured.err
    )


# ----------------------------------------------------------------------------- serial vs cluster
@pytest.mark.slow(
    reason="a local Dask cluster running check (~9 s); the default run keeps the scaling case on the cluster"
)
def test_check_on_a_cluster_equals_serial(address, variant_files, tmp_path, monkeypatch, capsys):
    """The JSON of check (numbers, verdicts, counter-examples, cache counts) is the serial one."""
    runs = {}
    for name, scheduler in (("serial", "serial"), ("cluster", address)):
        _warm_key(tmp_path / f"cache-{name}", monkeypatch)
        runs[name] = [
            _run(["check", *variant_files, "--json", "--scheduler", scheduler], capsys) for _ in range(2)
        ]  # the second run reads what the first one cached
    assert runs["cluster"][0][0] == runs["serial"][0][0] == 0
    for first_or_second in (0, 1):
        serial, cluster = (_without_seconds(runs[k][first_or_second][1]) for k in ("serial", "cluster"))
        for payload in (serial, cluster):
            payload["cache"].pop("dir")
        assert cluster == serial
    first, second = runs["cluster"][0][1]["cache"], runs["cluster"][1][1]["cache"]
    assert first["misses"] > 0 and first["corrupt"] == 0  # counted on the workers
    assert second == {**first, "hits": first["hits"] + first["misses"], "misses": 0}


def test_check_no_cache_reaches_the_workers(address, variant_files, tmp_path, monkeypatch, capsys):
    root = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(root))
    code, payload = _run(["check", *variant_files, "--no-cache", "--json", "--scheduler", address], capsys)
    assert code == 0 and payload["cache"]["misses"] == payload["cache"]["hits"] == 0
    assert not root.exists()


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--task", "affine", "--d", "2"], id="thm34-law"),
        pytest.param(["--kernel", "exp(t-1)", "--d", "3"], id="smooth-kernel-law"),  # an expression kernel, ~1 s
        pytest.param(
            ["--kernel", "exp(-sqrt(2-2*t))", "--d", "3"],
            id="kernel-law",
            marks=pytest.mark.slow(
                reason="each worker evaluates the rough kernel's exact loss up to n = 2e7 afresh (~30 s); "
                "the default run "
                "ships an expression kernel to the workers in smooth-kernel-law"
            ),
        ),
    ],
)
def test_scaling_on_a_cluster_equals_serial(argv, address, capsys):
    serial = _run(["scaling", *argv, "--json", "--scheduler", "serial"], capsys)
    cluster = _run(["scaling", *argv, "--json", "--scheduler", address], capsys)
    assert cluster == serial


@pytest.mark.slow(
    reason="a local Dask cluster running figures (~10 s); the default run keeps the scaling case on the cluster"
)
def test_figures_on_a_cluster_equal_serial(address, tmp_path, capsys):
    files = {}
    for name, scheduler in (("serial", "serial"), ("cluster", address)):
        code, payload = _run(
            ["figures", "--out", str(tmp_path / name), "--only", "fig5", "--json", "--scheduler", scheduler], capsys
        )
        assert code == 0 and [f["name"] for f in payload["figures"]] == ["fig5"]
        files[name] = {p.name: p.read_text() for p in (tmp_path / name).glob("*.json")}
    assert files["cluster"] == files["serial"] and len(files["serial"]) == 1


@pytest.mark.slow(
    reason="two pytest verify/ subprocesses (~25 s); the default run checks check, scaling and figures "
    "on the cluster and the plugin's xdist merge (tests/gates/test_pytest_plugin.py)"
)
def test_claim_gates_on_a_cluster_equal_serial(address, tmp_path):
    """pytest verify/ --scheduler ADDRESS: the same claims.json records as a serial run."""
    selection = "softmax-normaliser or projection-tails/d3-k1"  # Monte Carlo claims (seeded per case)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(lipschitz_icl.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]),
        cache.ENV_VAR: str(tmp_path / "cache"),
    }
    records = {}
    for name, scheduler in (("serial", "serial"), ("cluster", address)):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "verify/",
                "-q",
                "-p",
                "no:cacheprovider",
                "-k",
                selection,
                "--report-dir",
                str(tmp_path / name),
                "--scheduler",
                scheduler,
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        claims = json.loads((tmp_path / name / "claims.json").read_text())["claims"]
        records[name] = _without_seconds(claims)
    assert len(records["serial"]) >= 5 and any(r["seed"] is not None for r in records["serial"])
    assert records["cluster"] == records["serial"]


def test_pytest_refuses_a_bad_scheduler_and_xdist_with_a_scheduler(tmp_path):
    for extra, message in (
        (["--scheduler", "threads"], "--scheduler: must be"),
        (["--scheduler", "local", "-n", "2"], "one parallel route"),
    ):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "verify/test_lemmaB1.py",
                "--co",
                "-q",
                "-p",
                "no:cacheprovider",
                "--report-dir",
                str(tmp_path),
                *extra,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 4 and message in proc.stderr


# ----------------------------------------------------------------------------- sweep semantics
def test_pieces_in_order_and_the_first_failure_in_piece_order(address):
    with sweep.Sweep(address) as s:
        assert s.map(operator.mul, [(i, 3) for i in range(7)], desc="mul") == [3 * i for i in range(7)]
        with pytest.raises(ParameterError, match=r"'d' .*got 'x'"):  # stays a ParameterError
            s.map(parse_int, [("d", "1"), ("d", "2"), ("d", "x"), ("d", "y")], desc="parse")
        with pytest.raises(ZeroDivisionError):
            s.map(operator.truediv, [(1, 1), (1, 0)], desc="div")


def test_auto_stays_in_process_for_a_tiny_grid_and_goes_local_for_a_long_one(
    monkeypatch, variant_files, capsys, tmp_path
):
    """auto: a tiny grid never starts a cluster; a long one starts a local cluster, gives the serial
    numbers, and leaves no worker process or scratch directory behind."""
    tiny = sweep.Sweep("auto")
    assert tiny.map(operator.add, [(1, 2), (3, 4), (5, 6)], desc="add") == [3, 7, 11]
    assert not tiny.uses_cluster
    monkeypatch.setattr(sweep, "START_SECONDS", -1.0)  # every grid of >= 3 pieces projects as long
    monkeypatch.setattr(sweep, "cores", lambda: 2)
    children = _children()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))  # the calling process's temporary directory, empty
    mc = variant_files[1]
    serial = _without_seconds(_run(["check", mc, "--no-cache", "--json", "--scheduler", "serial"], capsys))
    auto = _without_seconds(_run(["check", mc, "--no-cache", "--json"], capsys))
    assert auto == serial
    _, alive = psutil.wait_procs([psutil.Process(pid) for pid in _children() - children], timeout=10)
    assert not alive and _children() <= children
    assert list(tmp.iterdir()) == []  # neither the sweep's scratch nor Dask's default dask-scratch-space


def test_progress_bar_per_variant_on_a_terminal_and_silent_under_json(variant_files, monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for json_flag, drawn in (([], True), (["--json"], False)):
        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        main(["check", variant_files[1], "--no-cache", "--scheduler", "serial", *json_flag])
        monkeypatch.undo()
        capsys.readouterr()
        assert ("noise-mc-grid: 100%" in terminal.getvalue() and "4/4" in terminal.getvalue()) is drawn
        assert (terminal.getvalue() == "") is not drawn
