"""The Dasgupta-Gupta projection bounds as prover expressions, and the lemma that decides their ends.

:data:`DG_BOUNDS`: the bounds on the tails of ``||P x||^2 ~ Beta(k/2, (d-k)/2)`` with the rate ``C`` (stated
``1/2``), ``beta = s d/k``: ``exponential`` ``beta^(C k) e^(C k (1 - beta))`` and ``sharp`` (before
``1 + x <= e^x``) ``(beta^(k/2) (1 + (1 - beta) k/(d - k))^((d-k)/2))^(2C)``.

:func:`beta_end_lemma`: both sides vanish at ``s = 0`` (lower tail) and, for the sharp form, at ``s = 1``
(upper tail), where enclosures cannot separate them.  With ``X ~ Beta(a, b)``, ``a = k/2``, ``b = (d-k)/2``:

* lower, ``s <= s_1``: ``P(X <= s) = (1/B) int_0^s x^(a-1) (1-x)^(b-1) <= s^a max(1, (1-s_1)^(b-1)) / (a B)``;
  at ``C = 1/2`` the exponential bound is ``s^a (d/k)^a e^(a (1 - s d/k)) >= s^a (d/k)^a e^(a (1 - s_1 d/k))``
  and the sharp one ``s^a (1-s)^b (d/k)^a (d/(d-k))^b >= s^a (1-s_1)^b (d/k)^a (d/(d-k))^b``;
* upper (sharp), ``s >= s_2``: ``P(X >= s) <= (1-s)^b max(1, s_2^(a-1)) / (b B)`` against
  ``(1-s)^b s_2^a (d/k)^a (d/(d-k))^b``.

The common power of ``s`` (or ``1 - s``) cancels: the piece holds when the remaining constants
compare, checked in ball arithmetic.  The argument needs ``C = 1/2`` (other rates change the power).
"""

from __future__ import annotations

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.decision import Verdict
from lipschitz_icl.prover.pieces import Lemma, Piece

__all__ = ["DG_BOUNDS", "beta_end_lemma"]

DG_BOUNDS = {  # Dasgupta-Gupta with the rate C (stated 1/2), beta = s d / k
    "exponential": "(s*d/k)**(C*k) * exp(C*k*(1 - s*d/k))",
    "sharp": "((s*d/k)**(k/2) * (1 + (1 - s*d/k)*k/(d - k))**((d - k)/2))**(2*C)",
}


def beta_end_lemma(d: int, k: int, form: str, side: str, end: float) -> Lemma:
    """The lemma of the module docstring for the projection bound ``form`` on the ``side`` of the mean, on
    ``s`` up to (lower) or from (upper) ``end``."""
    quantity, s_range = ("projection_lower_tail", [0.0, end]) if side == "lower" else ("projection_tail", [end, 1.0])
    search = Piece(quantity, DG_BOUNDS[form], {"d": [d], "k": [k], "s": s_range})
    a, b = arithmetic.exact(k) / 2, arithmetic.exact(d - k) / 2
    beta = a.gamma() * b.gamma() / (a + b).gamma()
    e = arithmetic.exact(end)
    ratio, ratio_c = arithmetic.exact(d) / k, arithmetic.exact(d) / (d - k)
    if side == "lower":
        tail = ((1 - e) ** (b - 1)).max(arithmetic.exact(1)) / (a * beta)
        floor = ratio**a * ((a * (1 - e * ratio)).exp() if form == "exponential" else (1 - e) ** b * ratio_c**b)
        text = f"lemma on s in [0, {end:.6g}] (lower tail: both sides vanish at s = 0)"
    else:
        tail = (e ** (a - 1)).max(arithmetic.exact(1)) / (b * beta)
        floor = e**a * ratio**a * ratio_c**b
        text = f"lemma on s in [{end:.6g}, 1] (upper tail: both sides vanish at s = 1)"

    def check(value):
        if value != 0.5:
            return Verdict.UNDECIDED, "the argument holds at rate 1/2 only"
        if tail < floor:
            return Verdict.PROVED, f"{arithmetic.high(tail):.6g} < {arithmetic.low(floor):.6g}"
        return Verdict.UNDECIDED, "the constants do not compare"

    return Lemma(text, check, search)
