"""Composite Gauss-Legendre quadrature: the one rule behind every panel integral of the package.

The ``m``-point Gauss-Legendre rule on ``[-1, 1]`` has nodes ``x_j`` (the roots of the Legendre
polynomial ``P_m``) and weights ``g_j = 2 / ((1 - x_j^2) P_m'(x_j)^2)``; it is exact for polynomials of
degree at most ``2m - 1``.  On panels ``e_0 < e_1 < ... < e_K`` with midpoints ``c_k = (e_k + e_(k+1))/2``
and half-widths ``h_k = (e_(k+1) - e_k)/2`` the composite rule is::

    int_(e_0)^(e_K) f(x) dx  ~  sum_k sum_j  h_k g_j  f(c_k + h_k x_j)

(nodes in panel-major order), exact for piecewise polynomials of degree ``<= 2m - 1`` with breaks at
the edges; for ``f`` analytic on each panel its error falls geometrically in ``m`` and like
``h^(2m)`` in the panel width.  The reference rule of each order is computed once
(:func:`numpy.polynomial.legendre.leggauss`) and cached read-only.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from lipschitz_icl.validation import ParameterError, check_int, check_real

__all__ = ["gauss_legendre", "panel_rule", "composite_rule", "composite_edges"]

MAX_ORDER = 512


@cache
def _reference(order: int) -> tuple[np.ndarray, np.ndarray]:
    x, g = np.polynomial.legendre.leggauss(order)
    x.setflags(write=False)
    g.setflags(write=False)
    return x, g


def gauss_legendre(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``x_j`` (increasing) and weights ``g_j`` of the ``order``-point rule on ``[-1, 1]``
    (read-only arrays, shared by every caller)."""
    return _reference(check_int("order", order, minimum=1, maximum=MAX_ORDER))


def panel_rule(edges, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``c_k + h_k x_j`` and weights ``h_k g_j`` of the composite rule on the panels
    ``[edges[k], edges[k+1]]`` (``edges`` finite and strictly increasing), panel by panel."""
    x, g = gauss_legendre(order)
    edges = _floats("edges", edges)
    if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) or not np.all(np.diff(edges) > 0):
        raise ParameterError("edges", "at least two finite, strictly increasing numbers", edges)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    return (mid[:, None] + half[:, None] * x).ravel(), (half[:, None] * g).ravel()


def _floats(name: str, values) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(name, "numbers", values) from None


def composite_edges(a: float, b: float, *, panels=1, breakpoints=()) -> np.ndarray:
    """Panel edges on ``[a, b]``: the pieces between ``a``, the ``breakpoints`` (sorted, in ``[a, b]``)
    and ``b``, piece ``i`` split into ``panels[i]`` equal panels (``panels`` an integer: the same for
    every piece); empty pieces and repeated edges are dropped."""
    a, b = check_real("a", a), check_real("b", b)
    if not a < b:
        raise ParameterError("b", f"greater than a = {a:g}", b)
    cuts = _floats("breakpoints", breakpoints).ravel()
    if not np.all(np.isfinite(cuts)) or np.any(cuts < a) or np.any(cuts > b) or np.any(np.diff(cuts) < 0):
        raise ParameterError("breakpoints", f"sorted numbers in [{a:g}, {b:g}]", breakpoints)
    bounds = np.concatenate([[a], cuts, [b]])
    counts = np.broadcast_to(np.asarray(panels), bounds.size - 1) if np.ndim(panels) == 0 else panels
    if len(counts) != bounds.size - 1:
        raise ParameterError("panels", f"an integer or one integer per piece ({bounds.size - 1})", panels)
    pieces = [
        np.linspace(lo, hi, check_int("panels", k, minimum=1) + 1) for lo, hi, k in zip(bounds[:-1], bounds[1:], counts)
    ]
    return np.unique(np.concatenate(pieces))


def composite_rule(a: float, b: float, order: int, *, panels=1, breakpoints=()) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the composite ``order``-point rule on :func:`composite_edges` ``(a, b)``."""
    return panel_rule(composite_edges(a, b, panels=panels, breakpoints=breakpoints), order)
