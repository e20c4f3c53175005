"""Attention on the circle (``d = 2``, the paper's Figures 1 and 6): a task of a class seen along the
circle, the weight profile a window puts on context points at angle ``a`` from the query, and the centre
of the attention a general ``M`` induces.

With uniformly spread context points the ``n``-scaled weights are ``exp(w cos a) / Phi_2(w)`` for softmax
attention at ``M = w I`` (:func:`weight_profiles`; ``Phi_2(w) = E exp(w t)``) and ``m cos a`` for linear
attention at ``m I``; for a general ``M`` the softmax weight ``exp(x^T M q)`` peaks at the direction of
``M q`` (:func:`centres`; a general ``M`` of :func:`general_window`).
"""

from __future__ import annotations

import math

import numpy as np

from lipschitz_icl.model.attention import Attention
from lipschitz_icl.problem import make_problem
from lipschitz_icl.sphere import laws

__all__ = ["slice_task", "weight_profiles", "weighted_slice", "general_window", "centres", "profiles_shown"]


def _floats(values) -> list:
    return [float(v) for v in values]


def slice_task(task: str, L_grid, n: int, sigma: float, rng: np.random.Generator, points: int):
    """One task of the class at ``L = 1`` on the circle (``d = 2``), scaled by each ``L`` (every scalar
    of the class scales with ``L``, so ``L f_1`` is a draw of the class at bound ``L``); ``n`` context
    points with the same noise draws for every ``L``; the query at angle 0."""
    f1 = make_problem(task, 2, n, 1.0, sigma).task_class.sample(rng, 1)
    angle = np.linspace(-np.pi, np.pi, points)
    ctx = rng.uniform(-np.pi, np.pi, n)
    eps = rng.standard_normal(n)
    circle = lambda a: np.stack([np.cos(a), np.sin(a)], axis=-1)[None]  # noqa: E731
    f_grid, f_ctx, f_q = f1(circle(angle))[0], f1(circle(ctx))[0], float(f1(circle(np.zeros(1)))[0, 0])
    return {
        "angle": _floats(angle),
        "context_angle": _floats(ctx),
        "query_angle": 0.0,
        "curves": [_floats(L * f_grid) for L in L_grid],
        "context_y": [_floats(L * f_ctx + sigma * eps) for L in L_grid],
        "query_f": [L * f_q for L in L_grid],
    }


def weight_profiles(angle, ws, ms):
    """``n`` times the attention weight a context point at angle ``a`` from the query receives, for
    uniformly spread context points on the circle: softmax ``exp(w cos a) / E[exp(w t)]`` (the
    normaliser from :func:`lipschitz_icl.sphere.laws.log_phi`), linear ``m cos a``."""
    a = np.asarray(angle)
    soft = [_floats(np.exp(w * np.cos(a) - float(laws.log_phi(2, w)))) for w in ws]
    return soft, [_floats(m * np.cos(a)) for m in ms]


def weighted_slice(task: str, *, L_grid, n: int, sigma: float, rng: np.random.Generator, points: int, ws, ms) -> dict:
    """:func:`slice_task` with, on its angle grid, the :func:`weight_profiles` of the softmax windows ``w I``
    (``ws``, as ``softmax_weights``) and the linear windows ``m I`` (``ms``, as ``linear_weights``)."""
    data = slice_task(task, L_grid, n, sigma, rng, points)
    soft, linear = weight_profiles(data["angle"], ws, ms)
    return {**data, "softmax_weights": soft, "linear_weights": linear}


def general_window(w: float, rotation: float, anisotropy: float) -> np.ndarray:
    """``M = w R(rotation) diag(1 + anisotropy, 1 - anisotropy)``, ``R`` the rotation of the plane."""
    return (
        w
        * np.array([[math.cos(rotation), -math.sin(rotation)], [math.sin(rotation), math.cos(rotation)]])
        @ np.diag([1 + anisotropy, 1 - anisotropy])
    )


def centres(M: np.ndarray, w: float, points: int):
    """The softmax weights ``exp(x^T A q)`` of ``A = w I`` and ``A = M`` over ``points`` evenly spaced context
    points on the circle (``n`` x weight), and the grid angle of each profile's largest weight."""
    step = 2 * math.pi / points
    angle = -math.pi + step * np.arange(points)
    grid, q = np.stack([np.cos(angle), np.sin(angle)], axis=-1), np.array([1.0, 0.0])
    profiles = {name: points * Attention(A).weights(grid, q) for name, A in (("iso", w * np.eye(2)), ("gen", M))}
    return angle, step, profiles, {name: float(angle[int(np.argmax(p))]) for name, p in profiles.items()}


def profiles_shown(angle, profiles: dict, points: int) -> dict:
    """The profiles of :func:`centres` as drawn: every ``max(1, points // 720)``-th of the ``points`` grid angles
    (no more than about 720), with the weights of ``w I`` and of ``M`` there."""
    shown = slice(None, None, max(1, points // 720))
    return {
        "angle": _floats(angle[shown]),
        "weights_isotropic": _floats(profiles["iso"][shown]),
        "weights_general": _floats(profiles["gen"][shown]),
    }
