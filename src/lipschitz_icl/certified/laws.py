"""Certified enclosures of the sphere laws: each function returns an ``arb`` ball that provably contains
the true value (ball arithmetic, :mod:`lipschitz_icl.certified.arithmetic`).

The laws (the same formulas as :mod:`lipschitz_icl.sphere.laws` and
:mod:`lipschitz_icl.sphere.concentration`, here certified):

* cap: ``P(x . q >= h) = I_{(1-h)/2}(a, a)``, ``a = (d-1)/2`` (``t = x . q`` has ``(1+t)/2 ~ Beta(a, a)``);
* projections: ``||P x||^2 ~ Beta(k/2, (d-k)/2)`` for a rank-``k`` projector ``P`` (``k < d``):
  ``P(||Px||^2 >= s) = I_{1-s}((d-k)/2, k/2)`` and ``P(||Px||^2 <= s) = I_s(k/2, (d-k)/2)``;
* binomial tails, ``N ~ Binomial(n, p)``: ``P(N >= a) = I_p(a, n - a + 1)`` (``1 <= a <= n``) and
  ``P(N <= a) = I_{1-p}(n - a, a + 1)`` (``0 <= a < n``);
* ``Phi_d(w) = E exp(w t) = Gamma(d/2) (2/w)^(d/2-1) I_{d/2-1}(w) = 0F1(; d/2; w^2/4)`` (the
  hypergeometric form is entire in ``w``, so a ball about ``w = 0`` is fine).

``I`` is the regularised incomplete beta function (Arb's ``arb_hypgeom_beta_lower``), at the working
precision of :mod:`lipschitz_icl.certified.arithmetic`.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from lipschitz_icl.certified.arithmetic import exact

__all__ = [
    "cap_probability",
    "projection_tail",
    "projection_lower_tail",
    "binomial_tail",
    "binomial_lower_tail",
    "phi",
]


def _beta_regularised(z: arb, a, b) -> arb:
    """``I_z(a, b)``, the regularised lower incomplete beta function, ``z`` in ``[0, 1]``."""
    return exact(z).beta_lower(exact(a), exact(b), regularized=True)


def cap_probability(d: int, h) -> arb:
    """``P(x . q >= h) = I_{(1-h)/2}((d-1)/2, (d-1)/2)`` for ``x`` uniform on ``S^{d-1}``, ``-1 <= h <= 1``."""
    a = Fraction(d - 1, 2)
    return _beta_regularised((1 - exact(h)) / 2, a, a)


def projection_tail(d: int, k: int, s) -> arb:
    """``P(||P x||^2 >= s) = I_{1-s}((d-k)/2, k/2)`` for a rank-``k`` projector (``1 <= k < d``,
    ``0 <= s <= 1``); ``k = d`` gives ``||P x||^2 = 1``, a tail of 1."""
    if k == d:
        return arb(1)
    if s < 0.5:  # 1 - s would round away a tiny s (a NaN ball at s = 2e-24): the complement I_s(k/2, (d-k)/2)
        return 1 - _beta_regularised(exact(s), Fraction(k, 2), Fraction(d - k, 2))
    return _beta_regularised(1 - exact(s), Fraction(d - k, 2), Fraction(k, 2))


def projection_lower_tail(d: int, k: int, s) -> arb:
    """``P(||P x||^2 <= s) = I_s(k/2, (d-k)/2)`` (``1 <= k < d``, ``0 <= s <= 1``); ``k = d``: 1 at
    ``s = 1``, else 0."""
    if k == d:
        return arb(1) if s >= 1 else arb(0)
    return _beta_regularised(exact(s), Fraction(k, 2), Fraction(d - k, 2))


def binomial_tail(n: int, a: int, p) -> arb:
    """``P(N >= a) = I_p(a, n - a + 1)`` for ``N ~ Binomial(n, p)`` (1 for ``a <= 0``, 0 for ``a > n``)."""
    if a <= 0:
        return arb(1)
    if a > n:
        return arb(0)
    return _beta_regularised(exact(p), a, n - a + 1)


def binomial_lower_tail(n: int, a: int, p) -> arb:
    """``P(N <= a) = I_{1-p}(n - a, a + 1)`` for ``N ~ Binomial(n, p)`` (0 for ``a < 0``, 1 for ``a >= n``)."""
    if a < 0:
        return arb(0)
    if a >= n:
        return arb(1)
    return _beta_regularised(1 - exact(p), n - a, a + 1)


def phi(d: int, w) -> arb:
    """``Phi_d(w) = E exp(w t) = 0F1(; d/2; w^2/4)`` (``t = x . q``; equal to
    ``Gamma(d/2) (2/w)^(d/2-1) I_{d/2-1}(w)``, :func:`lipschitz_icl.sphere.laws.log_phi`)."""
    w = exact(w)
    return (w * w / 4).hypgeom_0f1(exact(Fraction(d, 2)))
