"""The engine's ``w*`` and ICL loss through the on-disk cache (:mod:`lipschitz_icl.runtime.cache`).

:func:`cached_wstar` and :func:`cached_loss` key an evaluation by the problem (:func:`problem_key`: task
class with its parameters, ``n``, ``sigma``), the method and its keyword arguments; the stored JSON is
validated before it is trusted (finite estimates, ``0 < w*``, ``ci_low <= w* <= ci_high`` with an open end
only for a search that ended at its bound, non-negative losses, the requested method, the search's flags
as booleans).  The engine never imports the cache; this module stands above both.
"""

from __future__ import annotations

import json
import math

from lipschitz_icl import optimum
from lipschitz_icl.estimate import Estimate, LossEstimate
from lipschitz_icl.loss.estimators import icl_loss
from lipschitz_icl.optimum import WStar
from lipschitz_icl.runtime.cache import cached, json_default

__all__ = ["cached_wstar", "cached_loss", "problem_key"]

_FLAGS = {
    "at_search_bound": (bool,),
    "at_budget_bound": (bool,),
    "precision_reached": (bool, type(None)),
    "loss_converged": (bool, type(None)),
}


def problem_key(problem) -> dict:
    """The inputs that define a :class:`~lipschitz_icl.problem.Problem` (task class, n, sigma)."""
    tc = problem.task_class
    key = {
        "task": tc.name,
        "d": tc.d,
        "L": tc.L,
        "frequency": tc.frequency,
        "B": None if tc.B is None else tc.B.tolist(),
        "n": problem.n,
        "sigma": problem.sigma,
    }
    others = {k: v for k, v in getattr(tc, "parameter_values", dict)().items() if k != "frequency"}
    if others:  # a class's extra parameters besides the frequency (none among the built-in classes)
        key["parameters"] = others
    return key


def _estimate_to_dict(e: Estimate) -> dict:
    return {"value": e.value, "standard_error": e.standard_error, "samples": e.samples, "abs_error": e.abs_error}


def _finite(x, minimum=-math.inf) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= minimum


def _valid_estimate(raw) -> bool:
    """An :class:`Estimate` dict: finite value and ``abs_error >= 0``, standard error ``>= 0`` (``inf`` only
    from a single sample), integer ``samples >= 0``."""
    se = raw["standard_error"]
    return (
        _finite(raw["value"])
        and _finite(raw["abs_error"], 0.0)
        and isinstance(se, (int, float))
        and not isinstance(se, bool)
        and se >= 0
        and (math.isfinite(se) or raw["samples"] <= 1)
        and isinstance(raw["samples"], int)
        and not isinstance(raw["samples"], bool)
        and raw["samples"] >= 0
    )


def _valid_wstar(raw, method: str) -> bool:
    """A stored ``w*``: valid estimates, ``0 < w*``, ``0 <= ci_low <= w* <= ci_high`` (``ci_high = inf`` only
    for a search that ended at its bound), non-negative loss, the requested method, the flags of
    :class:`~lipschitz_icl.optimum.WStar` with their types, an ``info`` dict."""
    w, lo, hi = raw["w_star"]["value"], raw["ci_low"], raw["ci_high"]
    flags_ok = all(isinstance(raw.get(name, 0), types) for name, types in _FLAGS.items())
    open_ok = hi == math.inf and raw.get("at_search_bound") is True
    return (
        flags_ok
        and _valid_estimate(raw["w_star"])
        and _valid_estimate(raw["loss"])
        and raw["loss"]["value"] >= 0
        and _finite(w, 0.0)
        and w > 0
        and _finite(lo, 0.0)
        and (_finite(hi) or open_ok)
        and lo <= w <= hi
        and raw["method"] == method
        and isinstance(raw["info"], dict)
    )


def _valid_loss(raw, method: str) -> bool:
    """A stored loss: valid, non-negative estimates of loss, bias and noise, the requested method."""
    return (
        all(_valid_estimate(raw[k]) and raw[k]["value"] >= -1e-300 for k in ("loss", "bias", "noise"))
        and raw["method"] == method
        and isinstance(raw["info"], dict)
    )


def _estimate_from_dict(raw: dict) -> Estimate:
    return Estimate(float(raw["value"]), float(raw["standard_error"]), int(raw["samples"]), float(raw["abs_error"]))


def _clean_info(info: dict) -> dict:
    """The JSON-serialisable entries of ``info`` (the rest is dropped from the stored copy)."""
    out = {}
    for k, v in info.items():
        try:
            json.dumps(v, default=json_default)
        except (TypeError, ValueError):
            continue
        out[k] = v
    return out


def cached_wstar(problem, method: str, **kwargs) -> WStar:
    """:func:`lipschitz_icl.optimum.wstar` through :func:`~lipschitz_icl.runtime.cache.cached` (key: problem, method,
    kwargs)."""

    def compute():
        r = optimum.wstar(problem, method, **kwargs)
        return {
            "w_star": _estimate_to_dict(r.w_star),
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "loss": _estimate_to_dict(r.loss),
            "method": r.method,
            "info": _clean_info(r.info),
            **{name: getattr(r, name) for name in _FLAGS},
        }

    raw = cached(
        {"problem": problem_key(problem), "method": method, "kwargs": kwargs},
        compute,
        namespace="wstar",
        validate=lambda raw: _valid_wstar(raw, method),
    )
    return WStar(
        _estimate_from_dict(raw["w_star"]),
        float(raw["ci_low"]),
        float(raw["ci_high"]),
        _estimate_from_dict(raw["loss"]),
        raw["method"],
        raw["info"],
        **{name: raw[name] for name in _FLAGS},  # present: an entry without them is invalid
    )


def cached_loss(problem, w: float, method: str, **kwargs) -> LossEstimate:
    """:func:`lipschitz_icl.loss.estimators.icl_loss` at ``M = w I`` through
    :func:`~lipschitz_icl.runtime.cache.cached`."""
    w = float(w)
    if not math.isfinite(w):
        raise ValueError(f"w must be finite (got {w!r})")

    def compute():
        r = icl_loss(problem, w, method=method, **kwargs)
        return {
            "loss": _estimate_to_dict(r.loss),
            "bias": _estimate_to_dict(r.bias),
            "noise": _estimate_to_dict(r.noise),
            "method": r.method,
            "info": _clean_info(r.info),
        }

    raw = cached(
        {"problem": problem_key(problem), "w": w, "method": method, "kwargs": kwargs},
        compute,
        namespace="loss",
        validate=lambda raw: _valid_loss(raw, method),
    )
    return LossEstimate(
        _estimate_from_dict(raw["loss"]),
        _estimate_from_dict(raw["bias"]),
        _estimate_from_dict(raw["noise"]),
        raw["method"],
        raw["info"],
    )
