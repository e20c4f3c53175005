"""Certified ICL error of the optimal linear attention: the closed form of
:mod:`lipschitz_icl.derivations.linear_attention` evaluated in ball arithmetic.

With ``k(1) = E f(q)^2`` and ``B = E_t[t k(t)]`` of a rotation-invariant class (``t = x . q``), the loss of the
linear predictor ``yhat(q) = (m/n) sum_i y_i x_i . q`` is ``m^2 a2 - 2 m B + k(1)``, minimised at ``m* = B/a2``:

    E_lin(n) = k(1) - B^2 / a2,     a2 = (k(1) + sigma^2)/(n d) + (1 - 1/n) B/d,

and ``E_lin(n) -> k(1) - d B`` as ``n -> inf`` (affine tasks: ``L^2/3``).  The class moments are the
derivation's (:func:`lipschitz_icl.derivations.linear_attention.class_moments`), exact rationals in
``L^2`` and ``d`` for the affine and ReLU classes (affine ``k(1) = (L^2/3)(1 + 1/d)``, ``B = L^2/(3 d^2)``;
ReLU ``k(1) = L^2/3 + L^2/(3 d)``, ``B = L^2/(6 d^2)``), turned into exact balls; ``n``, ``L`` and ``sigma`` are
exact (an integer and two doubles), so the ball's width is rounding alone.

Monotonicity (the theorem the prover's table uses to enclose ``E_lin`` on a box, proved here):

* ``E_lin`` is nonincreasing in ``n``: ``a2 = B/d + (k(1) + sigma^2 - B)/(n d)`` and ``B < k(1)`` (``|k(t)| <=
  k(1)`` for a covariance and ``E|t| < 1``), so ``a2`` falls with ``n`` and ``B^2/a2`` rises;
* nondecreasing in ``sigma``: ``a2`` rises with ``sigma``;
* nondecreasing in ``L``: with ``k(1) = L^2 kappa``, ``B = L^2 beta`` and ``lam = L^2``, ``E = lam kappa - lam^2
  beta^2/(lam c + s)`` (``c = (kappa + (n - 1) beta)/(n d)``, ``s = sigma^2/(n d)``), and
  ``dE/dlam = kappa - beta^2 lam (lam c + 2 s)/(lam c + s)^2 >= kappa - beta^2/c`` (since ``lam c (lam c + 2 s)
  <= (lam c + s)^2``); ``kappa - beta^2/c = (kappa^2 + (n - 1) beta kappa - n d beta^2)/(kappa + (n - 1) beta)``,
  and ``kappa >= d beta`` (the limit ``k(1) - d B >= 0``) makes the numerator at least ``d (d - 1) beta^2 >= 0``.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from lipschitz_icl.certified.arithmetic import exact

__all__ = ["LINEAR_TASKS", "class_moments", "linear_error"]

LINEAR_TASKS = ("affine", "relu")  # classes whose moments are exact rationals (cosine's involve Bessel values)


def class_moments(task: str, d: int, L: float) -> tuple[arb, arb]:
    """``(k(1), B)`` of the class ``task`` at ``d`` and ``L`` as exact balls (module docstring): affine
    ``((L^2/3)(1 + 1/d), L^2/(3 d^2))``, ReLU ``(L^2/3 + L^2/(3 d), L^2/(6 d^2))`` -- the moments of
    :func:`lipschitz_icl.derivations.linear_attention.class_moments` (its tests hold the two equal; this
    layer does not import the derivations)."""
    if task not in LINEAR_TASKS:
        raise ValueError(f"task must be one of {LINEAR_TASKS} for the certified linear error, got {task!r}")
    L2 = Fraction(L) ** 2
    if task == "affine":
        k1, B = L2 / 3 * (1 + Fraction(1, d)), L2 / (3 * d * d)
    else:
        k1, B = L2 / 3 + L2 / (3 * d), L2 / (6 * d * d)
    return exact(k1), exact(B)


def linear_error(task: str, d: int, n: int, L: float, sigma: float) -> arb:
    """``E_lin(n) = k(1) - B^2/a2``, ``a2 = (k(1) + sigma^2)/(n d) + (1 - 1/n) B/d`` (module docstring), a ball."""
    k1, B = class_moments(task, d, L)
    s = exact(sigma)
    N = arb(n)
    a2 = (k1 + s * s) / (N * d) + (1 - 1 / N) * B / d
    return k1 - B * B / a2
