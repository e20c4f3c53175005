"""Sweeps of independent pieces: in the calling process or on a ``dask.distributed`` cluster.

A *piece* is a picklable function and its arguments, ``fn(*args)``; a sweep runs a list of pieces and
returns their results in piece order.  A piece must be a pure function of its arguments: anything
random in it draws from a seed or ``SeedSequence`` passed *in its arguments* (spawned per piece, e.g.
:meth:`lipschitz_icl.gates.registry.ClaimCase.seed_sequence`, never per worker), so the results are the
same bit for bit whichever process, worker or scheduler computes them.

Schedulers (the ``--scheduler`` option of ``check``, ``scaling``, ``figures`` and of pytest):

``serial``
    every piece in the calling process, in order; Dask is not imported.
``auto`` (the CLI default)
    pieces run in the calling process while the grid is *tiny*: as long as the projected time ``R`` of
    the pieces left (mean seconds per piece so far times their number) is under
    ``START_SECONDS * c / (c - 1)`` on ``c`` cores (a cluster costs about :data:`START_SECONDS` to start
    and to import the package in its workers, and saves ``R (1 - 1/c)``: 6 s on 2 cores), or fewer
    than 2 pieces are left, or the machine has one core.  Past that, the rest goes to a
    ``distributed.LocalCluster`` started for the session (one worker process per core, one thread
    each), kept for the later sweeps of the same session.  So a grid of cache hits or of a few cheap
    points never pays the cluster's start (about 1-2 s), and a long grid spends at most one piece's
    time before going parallel.
``local`` / ``local:N``
    a ``LocalCluster`` of one worker per core (``N`` workers), one thread each.
``ADDRESS`` (``tcp://HOST:PORT``, ``tls://HOST:PORT`` or ``HOST:PORT``)
    an existing Dask scheduler, e.g. one started by ``dask-jobqueue`` on an HPC batch system
    (``docs/hpc.md``); connecting waits at most :data:`CONNECT_TIMEOUT` seconds and the scheduler's
    first reply (Dask's handshake) at most :data:`HANDSHAKE_TIMEOUT` seconds in all; a host name is
    checked (DNS labels, at most 253 characters, or an IP address) before any lookup.

Every piece runs with its BLAS on one thread, wherever it runs (:func:`run_here`, threadpoolctl): a
multi-threaded BLAS splits its sums by thread count (the exact ``w*`` of relu at ``d = 4``, ``n = 1e5``
differs in the 12th digit between one and two OpenBLAS threads), and the parallelism of a sweep is
across its pieces.  So the numbers do not depend on the scheduler nor on the number of cores (on one
kind of CPU and BLAS build: BLAS kernels chosen per CPU may round differently).

What a piece sees on a worker: the calling process's cache settings (enabled or not, and
``$LIPSCHITZ_ICL_CACHE``) for the duration of the piece, progress bars silenced, and no sweep session
(sweeps nested in a piece run serially on its worker).  The disk-cache counters a piece changes
(:data:`lipschitz_icl.runtime.cache.STATS`) are sent back with its result and added to the caller's counters,
so the hits and misses a command reports are those of all its pieces.  A worker whose package source
differs from the caller's (:func:`lipschitz_icl.runtime.cache.code_version`) is refused: its numbers could
differ.

A local cluster listens on 127.0.0.1 only (its dashboard on a random local port).  Dask itself does not
authenticate: whoever can reach a scheduler's port can run code as its owner, so on a shared cluster
use TLS (``tls://`` addresses; Dask's ``distributed.comm.tls`` settings, e.g. dask-jobqueue's
``security=``), which the client here reads from the Dask configuration.

Errors: a piece that raises makes the sweep raise the exception of the *first* failing piece in
piece order (as a serial run would), after cancelling the pieces after it; a
:class:`~lipschitz_icl.validation.ParameterError` stays a ``ParameterError``.  Clusters and clients a
session starts are closed when it ends (also on errors and Ctrl-C); the workers' scratch files go to
a temporary directory removed at the end.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from lipschitz_icl import progress
from lipschitz_icl.runtime import cache
from lipschitz_icl.validation import ParameterError

__all__ = [
    "Sweep",
    "session",
    "active",
    "map_pieces",
    "run_here",
    "one_blas_thread",
    "parse_scheduler",
    "add_scheduler_argument",
    "START_SECONDS",
    "CONNECT_TIMEOUT",
    "HANDSHAKE_TIMEOUT",
    "SCHEDULER_CHOICES",
]

START_SECONDS = 3.0  # auto: cost of starting a local cluster (measured: 2-3 s on 2 cores, imports included)
CONNECT_TIMEOUT = 5.0  # seconds to reach a scheduler ADDRESS
MAX_LOCAL_WORKERS = 1024
SCHEDULER_CHOICES = (
    "serial, auto, local, local:N (N worker processes), or the address of a running Dask "
    "scheduler (tcp://HOST:PORT or HOST:PORT)"
)
HANDSHAKE_TIMEOUT = 10.0  # seconds for the connection and the scheduler's first reply (Dask's handshake)
_ADDRESS = re.compile(r"(?:(tcp|tls)://)?([^/\[\]:]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]):([0-9]{1,5})", re.ASCII)
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)", re.ASCII)


def _valid_host(host: str) -> bool:
    """A DNS name (labels of 1-63 letters, digits and inner hyphens, at most 253 characters: ``a..b``
    and a 64-character label are refused before any lookup), an IPv4 address or a bracketed IPv6
    address."""
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    return len(host) <= 253 and all(_LABEL.fullmatch(label) for label in host.split("."))


_LOCAL = re.compile(r"local(?::([0-9]{1,4}))?", re.ASCII)


@dataclass(frozen=True)
class Scheduler:
    """A parsed ``--scheduler``: ``kind`` is serial, auto, local or address."""

    kind: str
    workers: int | None = None  # local: worker processes (None: one per core)
    address: str | None = None
    text: str = ""  # as given


def parse_scheduler(text) -> Scheduler:
    """The :class:`Scheduler` named by ``text`` (:data:`SCHEDULER_CHOICES`); else ``ParameterError``
    naming ``scheduler``."""
    if isinstance(text, str):
        if text in ("serial", "auto"):
            return Scheduler(text, text=text)
        local = _LOCAL.fullmatch(text)  # "local:N" is never read as host "local" (write tcp://local:N)
        workers = None if local is None or local.group(1) is None else int(local.group(1))
        if local and (workers is None or 1 <= workers <= MAX_LOCAL_WORKERS):
            return Scheduler("local", workers, text=text)
        address = _ADDRESS.fullmatch(text)
        if address and not local and _valid_host(address.group(2)) and 1 <= int(address.group(3)) <= 65535:
            return Scheduler("address", address=text if "://" in text else f"tcp://{text}", text=text)
    raise ParameterError(
        "scheduler",
        SCHEDULER_CHOICES + f"; local:N with 1 <= N <= {MAX_LOCAL_WORKERS}, "
        "a host name of labels of 1-63 letters, digits and inner hyphens (at most 253 "
        "characters) or an IP address, a port in 1..65535",
        text,
    )


def add_scheduler_argument(parser, default: str = "auto") -> None:
    """The ``--scheduler`` option of a command (checked by :func:`parse_scheduler` when it runs)."""
    parser.add_argument(
        "--scheduler",
        default=default,
        metavar="SCHEDULER",
        help=f"where the independent pieces run: {SCHEDULER_CHOICES} (default {default}: in "
        "this process for tiny grids, else a local cluster on this machine's cores); "
        "results are the same bit for bit on any scheduler",
    )


def cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# ----------------------------------------------------------------------------- the piece on a worker
@dataclass(frozen=True)
class _Context:
    """What a piece inherits from the caller: the cache switch and directory, the code version."""

    cache_enabled: bool
    cache_dir: str | None
    code: str


@dataclass(frozen=True)
class _Failure:
    """A :class:`ParameterError` raised by a piece, sent back as data (its constructor does not pickle)."""

    name: str
    requirement: str
    value: object


@contextlib.contextmanager
def one_blas_thread():
    """BLAS libraries limited to one thread in this block (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def run_here(fn, *args):
    """``fn(*args)`` in this process, as every scheduler runs a piece: BLAS on one thread."""
    with one_blas_thread():
        return fn(*args)


def _context() -> _Context:
    return _Context(cache.enabled(), os.environ.get(cache.ENV_VAR), cache.code_version())


def _run_piece(fn, args: tuple, context: _Context):
    """``(fn(*args), cache counter deltas)`` on a worker, under the caller's cache settings; a
    ``ParameterError`` is returned as a :class:`_Failure`."""
    if context.code != cache.code_version():
        return _Failure(
            "scheduler",
            f"a cluster whose workers run this lipschitz-icl source (version "
            f"{context.code}; a worker has {cache.code_version()})",
            os.uname().nodename,
        )
    saved = cache.enabled(), os.environ.get(cache.ENV_VAR)
    _set_cache(context.cache_enabled, context.cache_dir)
    before = dict(cache.STATS)
    try:
        with progress.silenced():
            value = run_here(fn, *args)
    except ParameterError as exc:
        return _Failure(exc.name, exc.requirement, exc.value)
    finally:
        _set_cache(*saved)
    return value, {k: cache.STATS[k] - before.get(k, 0) for k in cache.STATS}


def _set_cache(enabled: bool, directory: str | None) -> None:
    cache.set_enabled(enabled)
    if directory is None:
        os.environ.pop(cache.ENV_VAR, None)
    else:
        os.environ[cache.ENV_VAR] = directory


def _unwrap(raw):
    """The value of a piece's raw result, its cache counters added to this process's."""
    if isinstance(raw, _Failure):
        raise ParameterError(raw.name, raw.requirement, raw.value)
    value, stats = raw
    for key, delta in stats.items():
        cache.STATS[key] = cache.STATS.get(key, 0) + delta
    return value


# ----------------------------------------------------------------------------- the sweep
class Sweep:
    """Runs pieces on one scheduler (module docstring); a cluster or client is started when first
    needed (an ADDRESS is reached at once) and kept until :meth:`close`."""

    def __init__(self, scheduler: str = "serial"):
        self.scheduler = parse_scheduler(scheduler)
        self._client: Any = None  # a distributed.Client once started
        self._cluster: Any = None  # a distributed.LocalCluster once started
        self._scratch: str | None = None
        if self.scheduler.kind == "address":
            self._connect()

    # --------------------------------------------------------------- public
    def map(self, fn, pieces, *, desc: str, unit: str = "piece") -> list:
        """``[fn(*args) for args in pieces]``, computed on this sweep's scheduler, with a progress bar."""
        pieces = [tuple(args) for args in pieces]
        with progress.bar(total=len(pieces), desc=desc, unit=unit) as bar:
            kind = self.scheduler.kind
            if kind == "serial" or not pieces:
                return _serial(fn, pieces, bar)
            if kind == "auto":
                return self._auto(fn, pieces, bar)
            return self._distributed(fn, pieces, bar)

    def submit(self, fn, *args) -> Pending:
        """One piece, started now on the cluster (in the calling process when :meth:`result` is asked,
        for the serial scheduler)."""
        if self.scheduler.kind == "serial":
            return Pending(None, fn, args)
        future = self._ensure_client().submit(_run_piece, fn, args, _context(), pure=False)
        return Pending(future, fn, args)

    @property
    def uses_cluster(self) -> bool:
        """Whether a cluster or client has been started or reached."""
        return self._client is not None

    def close(self) -> None:
        """Close the client and the cluster this sweep started; remove the workers' scratch directory."""
        client, cluster, scratch = self._client, self._cluster, self._scratch
        self._client = self._cluster = self._scratch = None
        try:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --------------------------------------------------------------- schedulers
    def _auto(self, fn, pieces, bar) -> list:
        """In this process while the grid is tiny (module docstring); then a local cluster for the rest."""
        results: list = []
        c = cores()
        start = time.perf_counter()
        for i, args in enumerate(pieces):
            left = len(pieces) - i
            projected = (time.perf_counter() - start) / i * left if i else 0.0
            if left >= 2 and c >= 2 and (self._client is not None or projected > START_SECONDS * c / (c - 1)):
                return results + self._distributed(fn, pieces[i:], bar)
            results.append(run_here(fn, *args))
            bar.update(1)
        return results

    def _distributed(self, fn, pieces, bar) -> list:
        from distributed import as_completed

        client = self._ensure_client()
        context = _context()
        futures = [client.submit(_run_piece, fn, args, context, pure=False) for args in pieces]
        position = {future.key: i for i, future in enumerate(futures)}
        raw = [_MISSING] * len(futures)
        try:
            for future in as_completed(futures, loop=client.loop):
                i = position[future.key]
                try:
                    raw[i] = future.result()
                    failed = isinstance(raw[i], _Failure)
                except Exception:  # re-raised below in piece order
                    failed = True
                if failed:
                    _raise_first_failure(client, futures, raw, i)
                bar.update(1)
        finally:
            pending = [f for f in futures if not f.done()]
            if pending:
                client.cancel(pending)
        return [_unwrap(r) for r in raw]

    # --------------------------------------------------------------- clients
    def _ensure_client(self):
        if self._client is None:
            self._start_local(self.scheduler.workers or cores())
        return self._client

    def _start_local(self, workers: int) -> None:
        import dask
        from distributed import Client, LocalCluster

        self._scratch = tempfile.mkdtemp(prefix="lipschitz-icl-dask-")
        try:  # temporary-directory: else the scheduler's lock files go to <tmp>/dask-scratch-space, never removed
            with (
                _workers_ignore_sigint(),
                _worker_environment(),
                dask.config.set({"temporary-directory": self._scratch}),
            ):
                self._cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address="127.0.0.1:0",
                    local_directory=self._scratch,
                    memory_limit=0,
                    silence_logs=logging.CRITICAL,
                )
            self._client = Client(self._cluster, set_as_default=False)
        except BaseException:
            self.close()
            raise

    def _connect(self) -> None:
        from distributed import Client

        _handshake(self.scheduler)
        try:
            with _quiet_logs():
                self._client = Client(self.scheduler.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ParameterError(
                "scheduler",
                f"the address of a running Dask scheduler (no answer within "
                f"{CONNECT_TIMEOUT:g} s: {type(exc).__name__})",
                self.scheduler.text,
            ) from None


def _handshake(scheduler: Scheduler) -> None:
    """Dask's connection and handshake with ``scheduler`` (its first reply), all within
    :data:`HANDSHAKE_TIMEOUT` seconds, before a client is built: Dask bounds the connection only, so a
    server that accepts and stays silent, speaks another protocol (HTTP, garbage) or is a plain port
    behind a ``tls://`` address held a client for ever.  Runs on its own thread and event loop;
    a failure is a :class:`ParameterError` on ``scheduler``."""
    import asyncio
    import concurrent.futures

    from distributed.comm import connect
    from distributed.security import Security

    assert scheduler.address is not None  # a client connects to an "address" scheduler only
    args = {}
    if scheduler.address.startswith("tls://"):
        args = Security().get_connection_args("client")
        if args.get("ssl_context") is None:
            raise ParameterError(
                "scheduler",
                "a tls:// address with Dask's TLS settings configured "
                "(distributed.comm.tls: ca-file and client certificate)",
                scheduler.text,
            )

    async def probe():
        comm = await asyncio.wait_for(connect(scheduler.address, timeout=CONNECT_TIMEOUT, **args), HANDSHAKE_TIMEOUT)
        try:
            if not isinstance(comm.remote_info, dict) or "pickle-protocol" not in comm.remote_info:
                raise ValueError("not a Dask handshake")
        finally:
            comm.abort()

    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="lipschitz-icl-handshake")
    future = pool.submit(asyncio.run, probe())
    try:
        with _quiet_logs():
            future.result(timeout=HANDSHAKE_TIMEOUT + 2.0)
    except (concurrent.futures.TimeoutError, asyncio.TimeoutError, TimeoutError):
        raise ParameterError(
            "scheduler",
            f"the address of a running Dask scheduler (no Dask handshake within {HANDSHAKE_TIMEOUT:g} s)",
            scheduler.text,
        ) from None
    except Exception as exc:  # whatever a server that is no Dask scheduler makes Dask's parser raise
        raise ParameterError(
            "scheduler",
            f"the address of a running Dask scheduler (the handshake failed: {type(exc).__name__})",
            scheduler.text,
        ) from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


class Pending:
    """A piece submitted by :meth:`Sweep.submit`; :meth:`result` waits for it (computes it, when serial)."""

    def __init__(self, future, fn, args):
        self._future, self._fn, self._args = future, fn, args

    def result(self):
        if self._future is None:
            return run_here(self._fn, *self._args)
        return _unwrap(self._future.result())


_MISSING = object()


def _serial(fn, pieces, bar) -> list:
    results = []
    for args in pieces:
        results.append(run_here(fn, *args))
        bar.update(1)
    return results


def _raise_first_failure(client, futures, raw, failed: int):
    """Cancel the pieces after ``failed``, wait for those before it, raise the first failure in order."""
    client.cancel(futures[failed + 1 :])
    for i in range(failed + 1):
        if raw[i] is _MISSING or i == failed:
            raw[i] = futures[i].result()  # raises the piece's own exception
        if isinstance(raw[i], _Failure):
            _unwrap(raw[i])
    raise AssertionError(f"unreachable: piece {failed} failed")  # pragma: no cover


@contextlib.contextmanager
def _workers_ignore_sigint():
    """Processes started in this block ignore SIGINT (inherited across exec): Ctrl-C on a terminal
    reaches the whole process group, and the calling process alone ends the sweep and closes the
    cluster (one line, exit code 130), instead of every worker printing a traceback.  (A Ctrl-C in the
    second or so the cluster takes to start is ignored.)"""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _worker_environment():
    """Local workers start with BLAS on one thread but *without* Dask's default
    ``MALLOC_TRIM_THRESHOLD_=65536``: a fixed trim threshold turns off glibc's adaptive mmap threshold,
    and the pieces, which allocate and free large NumPy arrays, ran 3-4 times slower (a thm44 direction
    gate: 1.4 s -> 5.4 s).  The nanny writes its variables into this process's environment before
    spawning; the environment is restored afterwards."""
    import dask

    saved = dict(os.environ)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _quiet_logs():
    """Silence ``distributed``'s own log lines (the caller reports errors in one line)."""
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


# ----------------------------------------------------------------------------- the session
_ACTIVE: list[Sweep] = []


@contextlib.contextmanager
def session(scheduler: str = "auto"):
    """A :class:`Sweep` that :func:`map_pieces` uses until the block ends (then closed)."""
    sweep = Sweep(scheduler)
    _ACTIVE.append(sweep)
    try:
        yield sweep
    finally:
        _ACTIVE.remove(sweep)
        sweep.close()


def active() -> Sweep:
    """The innermost active :func:`session`'s sweep; outside any session, a serial one."""
    return _ACTIVE[-1] if _ACTIVE else Sweep("serial")


def map_pieces(fn, pieces, *, desc: str, unit: str = "piece") -> list:
    """``[fn(*args) for args in pieces]`` on the scheduler of :func:`active` (serial, in this process,
    outside any session), with a progress bar."""
    return active().map(fn, pieces, desc=desc, unit=unit)
