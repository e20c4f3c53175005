"""The task-averaged loss of a class of the arc-cosine form (relu) for ``M = w I``: the direction of the
task averaged exactly, across its kinks, in the reduced form.

Setting (the reduced form of :mod:`lipschitz_icl.loss.isotropic`): the query rotated to ``q = e_1``,
``x_i = t_i q + r_i v_i`` with ``r_i = sqrt(1 - t_i^2)``, and the task direction ``u = c q + s u_perp``,
``c = u . q``, ``s = sqrt(1 - c^2)``; ``z_i = v_i . u_perp`` has the law ``p_{d-1}``, independent of
``t`` and of ``c``.  A context draws ``t`` and ``z``; ``c`` is integrated out exactly.  With
``c = cos phi``, ``phi`` in ``[0, pi]``,

    u . x_i = a_i c + b_i s,    a_i = t_i,    b_i = r_i z_i.

For the relu link ``f = l1 (u.x)_+ + l2 (-u.x)_+ + b`` (``l1, l2, b ~ U[-L, L]``; the intercept cancels,
softmax weights sum to one) the bias given the context is

    bias_c = (L^2/3) (J(t, z) + J(t, -z)) = (2 L^2/3) (J(t, z) + J(t, -z)) / 2,
    J = E_c[(S(c) - c_+)^2],    S(c) = sum_i p_i (a_i c + b_i s)_+

(``J(t, -z)``: the ``l2`` term, ``u -> -u``).  Its mean over contexts is the loss of every class whose
kernel has the arc-cosine form (:data:`lipschitz_icl.tasks.family.QUADRATURE_FORMS`), since the loss
depends on the prior through its kernel alone.

The integral over ``c``: ``a_i c + b_i s`` changes sign once on ``[0, pi]``, at ``c_i = cos phi_i =
-sign(a_i) b_i / A_i``, ``A_i = |(a_i, b_i)|``; point ``i`` is active for ``c > c_i`` when ``a_i >= 0`` and
for ``c < c_i`` otherwise.  Between consecutive kinks (sorted in ``c``) ``S(c) = P c + Q s`` with ``(P, Q)``
constant (cumulative sums of ``sign(a_i) p_i (a_i, b_i)`` from ``c = -1``), so with the lower moments of
``c`` (law ``p_d``) ``H(c) = E[(c'^2, c' s', s'^2) 1{c' < c}]``,

    E_c[S^2]     = sum over the pieces of P^2 dH_cc + 2 P Q dH_cs + Q^2 dH_ss,
    E_c[S c_+]   = sum_i p_i h_i,   h_i = E_c[(a_i c + b_i s)_+ c 1{c > 0}] (one kink each),
    E_c[c_+^2]   = 1/(2d),

with ``H_cc = G/d - X``, ``H_cs = -s^d/(d B)``, ``H_ss = (d - 1) G/d + X``, ``X = c s^(d-1)/(d B)``,
``G(c) = P(c' < c)`` (:func:`lipschitz_icl.sphere.laws.cap_probability` at ``-c``) and
``B = B(1/2, (d-1)/2)``.  One sort per context (``O(n log n)``); ``J(t, -z)`` reads the same sort
backwards (``c_i -> -c_i``).  The per-context bias and collision ``sum_i p_i^2`` are then adjusted by
the cross-fitted control variates of :mod:`lipschitz_icl.loss.control_variates` (unbiased).

Against the naive estimator at ``d = 5``, ``n = 1000``, ``w = w*`` (variance x time):
``benchmarks/bench_relu.py`` and ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import math

import numpy as np

from lipschitz_icl.exact.quadrature import bias_scale
from lipschitz_icl.loss import control_variates
from lipschitz_icl.sphere import laws
from lipschitz_icl.tasks.family import TaskPrior

__all__ = ["ARRAYS_PER_POINT", "direction_integral", "arccosine_terms"]

ARRAYS_PER_POINT = 26  # float64 arrays of a chunk's shape alive at once (measured peak: 24.1 per point)
BLOCK_ELEMENTS = 1 << 16  # context points per chunk: the chunk's arrays stay in cache


def _beta(d: int) -> float:
    """``B(1/2, (d-1)/2)``, the normaliser of ``p_d`` in ``(1 - c^2)^((d-3)/2)``."""
    return math.exp(math.lgamma(0.5) + math.lgamma(0.5 * (d - 1)) - math.lgamma(0.5 * d))


def _power(base: np.ndarray, exponent: int) -> np.ndarray:
    """``base ** exponent`` for an integer ``exponent >= 1`` by repeated squaring (a few multiplications
    instead of a ``pow`` per element)."""
    result, square = np.ones_like(base), base
    while exponent:
        if exponent & 1:
            result *= square
        exponent >>= 1
        if exponent:
            square = square * square
    return result


def _square_integral(p_after, q_after, *, step_p, step_q, ends, below, x, upper_cs, d: int) -> np.ndarray:
    """``E_c[S^2]`` from the coefficients ``(P, Q)`` after each kink, their steps there and their values
    ``ends`` at ``c = 1``, with ``G``, ``X``, ``s^d/(d B)`` at the kinks (the kinks in any order).  Summed by
    parts over the pieces: with ``H(-1) = 0`` and ``H(1) = (1/d, 0, (d-1)/d)``,
    ``sum_pieces f dH = f(1) H(1) - sum_kinks H (f_after - f_before)`` for ``f = P^2, 2 P Q, Q^2``;
    ``H_cc = G/d - X``, ``H_ss = (d-1) G/d + X``, ``H_cs = -s^d/(d B)``."""
    d_pp = step_p * (2.0 * p_after - step_p)  # P_after^2 - P_before^2
    d_qq = step_q * (2.0 * q_after - step_q)
    d_pq = step_p * q_after + step_q * p_after - step_p * step_q  # P_after Q_after - P_before Q_before
    inner = below * (d_pp + (d - 1.0) * d_qq) / d + x * (d_qq - d_pp) - 2.0 * upper_cs * d_pq
    p_end, q_end = ends
    return (p_end * p_end + (d - 1.0) * q_end * q_end) / d - np.sum(inner, axis=-1)


def _cross_integral(positive, pa, pb, *, sign, upper_cc, upper_cs, d: int) -> np.ndarray:
    """``E_c[S c_+] = sum_i p_i h_i`` from the upper moments ``F_cc``, ``F_cs`` at the kinks (``positive``:
    the kinks with ``c_i > 0``): for ``a_i >= 0`` the moments of ``c > max(c_i, 0)``, for ``a_i < 0`` those of
    ``0 < c < c_i``; ``h_i = p_i (a_i F_cc + b_i F_cs)`` at ``max(c_i, 0)`` when ``a_i >= 0``, and at ``0``
    less at ``c_i`` when ``a_i < 0 < c_i``."""
    f_cc0, f_cs0 = 0.5 / d, 1.0 / (d * _beta(d))  # E[c^2 1{c > 0}], E[c s 1{c > 0}]
    at_zero = pa * f_cc0 + pb * f_cs0
    at_kink = np.where(positive, pa * upper_cc + pb * upper_cs, at_zero)
    return np.sum(np.where(sign > 0, at_kink, at_zero - at_kink), axis=-1)


def direction_integral(d: int, t: np.ndarray, z: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``J(t, z) + J(t, -z)`` per context (module docstring) for draws ``t``, ``z`` and softmax weights ``p``,
    each of shape ``(contexts, n)``."""
    b = np.sqrt(np.clip((1.0 - t) * (1.0 + t), 0.0, None)) * z
    negative = t < 0.0
    kink = np.hypot(t, b)
    np.divide(np.where(negative, b, -b), kink, out=kink, where=kink > 0)  # c_i = -sign(a_i) b_i / A_i
    pa, pb = p * t, p * b
    start_p = np.sum(np.where(negative, pa, 0.0), axis=-1, keepdims=True)
    start_q = np.sum(np.where(negative, pb, 0.0), axis=-1, keepdims=True)
    order = np.argsort(kink, axis=-1)
    c, pa, pb = (np.take_along_axis(v, order, axis=-1) for v in (kink, pa, pb))
    sign = np.where(pa >= 0.0, 1.0, -1.0)  # sign(a_i) (p_i = 0: both terms of the point are 0)
    s = np.sqrt(np.clip((1.0 - c) * (1.0 + c), 0.0, None))
    x = _power(s, d - 1) / (d * _beta(d))
    upper_cs = s * x
    x *= c
    below = laws.cap_probability(d, -c)  # G(c) = P(c' < c)
    lower_cc = below / d - x  # H_cc; the upper moment F_cc = 1/d - H_cc
    step_p, step_q = sign * pa, sign * pb
    p_after = start_p + np.cumsum(step_p, axis=-1)
    q_after = start_q + np.cumsum(step_q, axis=-1)
    ends = (p_after[..., -1], q_after[..., -1])
    plus_z = _square_integral(
        p_after, q_after, step_p=step_p, step_q=step_q, ends=ends, below=below, x=x, upper_cs=upper_cs, d=d
    )
    plus_z -= 2.0 * _cross_integral(c > 0.0, pa, pb, sign=sign, upper_cc=1.0 / d - lower_cc, upper_cs=upper_cs, d=d)
    # -z: c_i -> -c_i, b -> -b (so G -> 1 - G, X -> -X, F_cc -> H_cc; s unchanged) and the kinks in the
    # reverse order, whose coefficients after a kink are those before it read from the other end:
    # P' = P_start + P_end - P_before, Q' = Q_before - Q_start - Q_end
    p_flipped = start_p + ends[0][..., None] - (p_after - step_p)
    q_flipped = (q_after - step_q) - start_q - ends[1][..., None]
    minus_z = _square_integral(
        p_flipped,
        q_flipped,
        step_p=step_p,
        step_q=-step_q,
        ends=(ends[0], -ends[1]),
        below=1.0 - below,
        x=-x,
        upper_cs=upper_cs,
        d=d,
    )
    minus_z -= 2.0 * _cross_integral(c < 0.0, pa, -pb, sign=sign, upper_cc=lower_cc, upper_cs=upper_cs, d=d)
    return plus_z + minus_z + 1.0 / d


def arccosine_terms(
    task_class: TaskPrior, n: int, w: float, contexts: int, rng: np.random.Generator, chunk_elements: int
):
    """Per-context ``(bias_c, collision_c)`` (``collision_c = sum_i p_i^2``) of ``contexts`` fresh contexts,
    the direction averaged exactly and both adjusted by the cross-fitted control variates; drawn chunk by
    chunk (memory ``O(chunk_elements)``)."""
    d = task_class.d
    scale = 0.5 * bias_scale("arc-cosine", d, task_class.L)
    per_chunk = max(1, min(chunk_elements, BLOCK_ELEMENTS) // n)
    bias, collision, moments = [], [], []
    for start in range(0, contexts, per_chunk):
        size = min(per_chunk, contexts - start)
        t = laws.sample_t(rng, d, (size, n))
        z = laws.sample_t(rng, d - 1, (size, n))
        e = np.exp(w * (t - np.max(t, axis=-1, keepdims=True)))
        p = e / np.sum(e, axis=-1, keepdims=True)
        bias.append(scale * direction_integral(d, t, z, p))
        collision.append(np.sum(p * p, axis=-1))
        moments.append(control_variates.reduced_moments(t, z, w))
    means = control_variates.reduced_moment_means(d, w)
    bias_c, collision_c = control_variates.cross_fitted(
        [np.concatenate(bias), np.concatenate(collision)], np.concatenate(moments), means
    )
    return bias_c, collision_c
