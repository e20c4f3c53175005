"""On-disk cache of expensive evaluations (``w*`` searches, ICL losses), keyed by inputs and code.

Where: ``$LIPSCHITZ_ICL_CACHE`` if set, else ``~/.cache/lipschitz-icl`` (:func:`cache_dir`).  Each
entry is one JSON file ``<namespace>/<key>.json`` holding the key parts, the payload and a SHA-256
checksum of the payload; the key is the SHA-256 of the canonical JSON of

    (namespace, key parts, code version)

where the code version (:func:`code_version`) is the package ``__version__`` plus a hash of every
``.py`` source file of the package, so any edit of the code invalidates every entry.  Entries are
JSON (never pickle): reading a cache directory cannot run code.  An entry that is not valid JSON,
whose checksum does not match its payload, or whose stored key parts differ from the request is
*corrupt*: it is ignored, recomputed and overwritten.  Writes are atomic (temporary file, then
``os.replace``).

Bypass: ``set_enabled(False)`` (the ``--no-cache`` flag of ``lipschitz-icl check`` and the pytest
option ``--no-cache``), or the context manager :func:`disabled`.  :data:`STATS` counts hits, misses
and corrupt entries of this process (for tests and progress lines).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from .estimate import Estimate, LossEstimate

__all__ = ["cache_dir", "code_version", "cached", "cached_wstar", "cached_loss", "set_enabled", "enabled",
           "disabled", "STATS", "ENV_VAR"]

ENV_VAR = "LIPSCHITZ_ICL_CACHE"
STATS = {"hits": 0, "misses": 0, "corrupt": 0}
_ENABLED = [True]


def cache_dir() -> Path:
    """``$LIPSCHITZ_ICL_CACHE`` when set and non-empty, else ``~/.cache/lipschitz-icl``."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path.home() / ".cache" / "lipschitz-icl"


@lru_cache(maxsize=1)
def code_version() -> str:
    """``"<__version__>+<sha256 of the package's .py files>"`` (paths and contents, sorted by path)."""
    from . import __version__

    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return f"{__version__}+{digest.hexdigest()[:16]}"


def set_enabled(flag: bool) -> None:
    """Turn the cache on or off for this process."""
    _ENABLED[0] = bool(flag)


def enabled() -> bool:
    """Whether :func:`cached` reads and writes the disk cache."""
    return _ENABLED[0]


@contextlib.contextmanager
def disabled():
    """Context in which every :func:`cached` call recomputes and stores nothing."""
    previous = _ENABLED[0]
    _ENABLED[0] = False
    try:
        yield
    finally:
        _ENABLED[0] = previous


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)


def _json_default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):  # numpy arrays
        return value.tolist()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _checksum(payload_text: str) -> str:
    return hashlib.sha256(payload_text.encode()).hexdigest()


def cached(key_parts, compute, *, namespace: str = "default"):
    """``compute()`` memoised on disk under ``key_parts`` (JSON-serialisable) and the code version.

    ``compute`` must return a JSON-serialisable value (dicts, lists, numbers, strings; non-finite
    floats are kept).  A hit returns the stored value; a miss or a corrupt entry calls ``compute``
    and stores its result.  With the cache disabled, ``compute()`` is returned directly.
    """
    if not enabled():
        return compute()
    ident = {"namespace": namespace, "key": json.loads(_canonical(key_parts)), "code": code_version()}
    key = hashlib.sha256(_canonical(ident).encode()).hexdigest()
    path = cache_dir() / namespace / f"{key[:2]}" / f"{key}.json"
    stored = _read(path, ident)
    if stored is not _MISSING:
        STATS["hits"] += 1
        return stored
    STATS["misses"] += 1
    value = compute()
    _write(path, ident, value)
    return value


_MISSING = object()


def _read(path: Path, ident: dict):
    try:
        text = path.read_text()
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return _MISSING
    except OSError:
        STATS["corrupt"] += 1
        return _MISSING
    try:
        entry = json.loads(text)
        payload_text = entry["payload"]
        ok = (isinstance(payload_text, str) and entry.get("checksum") == _checksum(payload_text)
              and entry.get("ident") == ident)
        value = json.loads(payload_text) if ok else _MISSING
    except (ValueError, KeyError, TypeError, AttributeError):
        ok, value = False, _MISSING
    if not ok:
        STATS["corrupt"] += 1
        return _MISSING
    return value


def _write(path: Path, ident: dict, value) -> None:
    payload_text = json.dumps(value, default=_json_default)
    entry = {"ident": ident, "checksum": _checksum(payload_text), "payload": payload_text}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as handle:
            json.dump(entry, handle)
        os.replace(tmp, path)
    except OSError:
        # An unwritable cache costs speed, never correctness: the value is returned regardless.
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)


# ------------------------------------------------------------------ the cached evaluations

def problem_key(problem) -> dict:
    """The inputs that define a :class:`~lipschitz_icl.problem.Problem` (task class, n, sigma)."""
    tc = problem.task_class
    return {"task": tc.name, "d": tc.d, "L": tc.L, "frequency": tc.frequency,
            "B": None if tc.B is None else tc.B.tolist(), "n": problem.n, "sigma": problem.sigma}


def _estimate_to_dict(e: Estimate) -> dict:
    return {"value": e.value, "standard_error": e.standard_error, "samples": e.samples,
            "abs_error": e.abs_error}


def _estimate_from_dict(raw: dict) -> Estimate:
    return Estimate(float(raw["value"]), float(raw["standard_error"]), int(raw["samples"]),
                    float(raw["abs_error"]))


def _clean_info(info: dict) -> dict:
    out = {}
    for k, v in info.items():
        try:
            json.dumps(v, default=_json_default)
        except (TypeError, ValueError):
            continue
        out[k] = v
    return out


def cached_wstar(problem, method: str, **kwargs):
    """:func:`lipschitz_icl.optimum.wstar` through :func:`cached` (key: problem, method, kwargs)."""
    from .optimum import WStar, wstar

    def compute():
        r = wstar(problem, method, **kwargs)
        return {"w_star": _estimate_to_dict(r.w_star), "ci_low": r.ci_low, "ci_high": r.ci_high,
                "loss": _estimate_to_dict(r.loss), "method": r.method, "info": _clean_info(r.info)}

    raw = cached({"problem": problem_key(problem), "method": method, "kwargs": kwargs}, compute,
                 namespace="wstar")
    return WStar(_estimate_from_dict(raw["w_star"]), float(raw["ci_low"]), float(raw["ci_high"]),
                 _estimate_from_dict(raw["loss"]), raw["method"], raw["info"])


def cached_loss(problem, w: float, method: str, **kwargs) -> LossEstimate:
    """:func:`lipschitz_icl.loss.icl_loss` at ``M = w I`` through :func:`cached`."""
    from .loss import icl_loss

    w = float(w)
    if not math.isfinite(w):
        raise ValueError(f"w must be finite (got {w!r})")

    def compute():
        r = icl_loss(problem, w, method=method, **kwargs)
        return {"loss": _estimate_to_dict(r.loss), "bias": _estimate_to_dict(r.bias),
                "noise": _estimate_to_dict(r.noise), "method": r.method, "info": _clean_info(r.info)}

    raw = cached({"problem": problem_key(problem), "w": w, "method": method, "kwargs": kwargs}, compute,
                 namespace="loss")
    return LossEstimate(_estimate_from_dict(raw["loss"]), _estimate_from_dict(raw["bias"]),
                        _estimate_from_dict(raw["noise"]), raw["method"], raw["info"])
