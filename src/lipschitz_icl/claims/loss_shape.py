"""Measure functions of the group ``loss_shape`` (registry: ``claims/loss_shape.toml``): the shape of the ICL
loss of ``M = w I`` in ``w``, decided by proof on the certified loss quantities
(:mod:`lipschitz_icl.prover.trusted`, :mod:`lipschitz_icl.gates.proof_outcome`): the noise part
``sigma^2 N(w)`` rises and the bias part ``L^2 B(w)`` falls as the window narrows (``w`` grows) on a stated
range of ``w`` (the two halves of Theorem 3.4's trade-off), each lies within a stated factor of its derived
power of ``w`` on a stated range (Theorem 3.4's "bounded by powers of w"), where the bias part turns, how the
optimal window ``w*`` moves with ``L`` and ``sigma``, and ``w*`` itself within a stated factor of its derived
law on a whole range of ``n`` (Theorem 3.4's "bounded above and below by powers of n L^2/sigma^2")."""

from __future__ import annotations

import itertools
import math

from lipschitz_icl.gates.evidence import Outcome
from lipschitz_icl.gates.proof_outcome import proof_outcome
from lipschitz_icl.prover.pieces import Piece

__all__ = [
    "bias_turns",
    "noise_rises",
    "bias_falls",
    "bias_power",
    "noise_power",
    "wstar_follows_L",
    "window_bound",
    "wstar_rises_with_n",
]


def bias_turns(
    *,
    d: int,
    n: int,
    task: str,
    L: float,
    sigma: float,
    falls_at: float,
    rises_at: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """The bias part is not monotone in ``w``: ``dB/dw <= -C`` at ``w = falls_at`` and ``dB/dw >= C`` at
    ``w = rises_at`` (``C = stated``), each certified at its point by the prover (rule ``proof``)."""
    common = {"d": [d], "n": [n], "L": L, "sigma": sigma}
    pieces = [
        Piece("dbias_dw", "-C", {**common, "w": falls_at}, task=task, relation="<="),
        Piece("dbias_dw", "C", {**common, "w": rises_at}, task=task, relation=">="),
    ]
    return proof_outcome(pieces=pieces, constant="C", stated=stated, max_boxes=max_boxes, seconds=seconds)


def _slope_on_range(
    quantity: str,
    bound: str,
    relation: str,
    *,
    d: int,
    n: int,
    task: str,
    L: float,
    sigma: float,
    w_low: float,
    w_high: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """``quantity relation bound`` (a ``w``-derivative of a part, ``C = stated``) at every ``w`` of ``[w_low,
    w_high]`` for the class ``task`` at ``d``, ``n``, ``L``, ``sigma``, proved on the whole range by the prover
    (budgets ``max_boxes`` and ``seconds``; rule ``proof``)."""
    domain = {"d": [d], "n": [n], "L": L, "sigma": sigma, "w": [w_low, w_high]}
    piece = Piece(quantity, bound, domain, task=task, relation=relation)
    return proof_outcome(pieces=[piece], constant="C", stated=stated, max_boxes=max_boxes, seconds=seconds)


def noise_rises(
    *,
    d: int,
    n: int,
    task: str,
    L: float,
    sigma: float,
    w_low: float,
    w_high: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """The noise part rises with ``w`` on ``[w_low, w_high]``: ``d/dw (sigma^2 N(w)) >= C sigma^2 / n`` at every
    ``w`` of the range (``C = stated``; ``N = E sum_i p_i^2`` does not depend on the class, whose kernel only
    names the certified quantity), proved on the whole range (:func:`_slope_on_range`)."""
    return _slope_on_range(
        "dnoise_dw",
        "C*sigma**2/n",
        ">=",
        d=d,
        n=n,
        task=task,
        L=L,
        sigma=sigma,
        w_low=w_low,
        w_high=w_high,
        stated=stated,
        max_boxes=max_boxes,
        seconds=seconds,
    )


def bias_falls(
    *,
    d: int,
    n: int,
    task: str,
    L: float,
    sigma: float,
    w_low: float,
    w_high: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """The bias part falls as ``w`` grows on ``[w_low, w_high]``: ``d/dw (L^2 B(w)) <= -C L^2`` at every ``w`` of
    the range (``C = stated``), proved on the whole range (:func:`_slope_on_range`)."""
    return _slope_on_range(
        "dbias_dw",
        "-C*L**2",
        "<=",
        d=d,
        n=n,
        task=task,
        L=L,
        sigma=sigma,
        w_low=w_low,
        w_high=w_high,
        stated=stated,
        max_boxes=max_boxes,
        seconds=seconds,
    )


def _band(
    quantity: str, law: str, domain: dict, task: str, *, stated: float, max_boxes: int, seconds: float
) -> Outcome:
    """``T law <= quantity <= law / T`` on ``domain`` (``T = stated``, the claim's tightness; ``law`` may hold
    the power shift ``S``, stated 0, that the alternatives move), two pieces proved by the prover."""
    pieces = [
        Piece(quantity, f"T*{law}", domain, task=task, relation=">="),
        Piece(quantity, f"{law}/T", domain, task=task, relation="<="),
    ]
    return proof_outcome(
        pieces=pieces, constant="T", stated=stated, fixed={"S": 0.0}, max_boxes=max_boxes, seconds=seconds
    )


def bias_power(
    *,
    d: int,
    n: int,
    task: str,
    L: float,
    sigma: float,
    w_low: float,
    w_high: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """The bias part lies within the factor ``1/T`` of its derived large-``n`` power law at every ``w`` of
    ``[w_low, w_high]``: ``T b_d L^2 w^-(p + S) <= L^2 B(w) <= b_d L^2 w^-(p + S) / T`` (``T = stated``, the
    power shift ``S = 0``; ``p`` and ``b_d`` exact, from
    :func:`lipschitz_icl.derivations.window_law.bias_leading_exact`), proved on the whole range by the prover;
    an alternative moves ``S``."""
    from lipschitz_icl.derivations.window_law import bias_leading_exact

    power, constant = bias_leading_exact(task, d)  # bias_inf ~ b_d L^2 w^-p
    law = f"({constant})*L**2*w**(-({power} + S))"
    domain = {"d": [d], "n": [n], "L": L, "sigma": sigma, "w": [w_low, w_high]}
    return _band("bias", law, domain, task, stated=stated, max_boxes=max_boxes, seconds=seconds)


def noise_power(
    *,
    d: int,
    n: int,
    task: str,
    L: float,
    sigma: float,
    w_low: float,
    w_high: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """The noise part lies within the factor ``1/T`` of its derived power law at every ``w`` of ``[w_low,
    w_high]``: ``T c_R sigma^2 w^(beta + S)/n <= sigma^2 N(w) <= c_R sigma^2 w^(beta + S)/(n T)`` (``T =
    stated``, ``S = 0``; ``beta = (d - 1)/2`` and ``c_R`` exact, from
    :func:`lipschitz_icl.derivations.window_law.noise_leading_exact`; ``N`` is the same for every class),
    proved on the whole range by the prover; an alternative moves ``S``."""
    from lipschitz_icl.derivations.window_law import noise_leading_exact

    beta, constant = noise_leading_exact(d)
    law = f"({constant})*sigma**2*w**({beta} + S)/n"
    domain = {"d": [d], "n": [n], "L": L, "sigma": sigma, "w": [w_low, w_high]}
    return _band("noise", law, domain, task, stated=stated, max_boxes=max_boxes, seconds=seconds)


def wstar_follows_L(
    *,
    d: int,
    n: int,
    task: str,
    sigma: float,
    L_low: float,
    L_high: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """``w*`` grows with ``L`` and falls with ``sigma`` (Theorem 3.4), and from ``L_low`` to ``L_high`` at least by
    the factor ``1 + C`` (``C = stated``).

    The direction on the whole range is a theorem of the prover's trusted base
    (:mod:`lipschitz_icl.prover.trusted`: ``w*`` depends on ``(sigma, L)`` through ``sigma/L`` only and is
    nonincreasing in it, from the two optimality inequalities and ``N = E sum_i p_i^2`` strictly increasing in
    ``w``).  The growth is certified by two pieces: ``w*(L_low) <= Y`` and ``w*(L_high) >= (1 + C) Y``, ``Y``
    the upper end of the certified ``w*`` at ``L_low`` (each rechecked from its statement by the checker, which
    checks the ``w*`` proofs the certificate carries)."""
    from lipschitz_icl.certified import arithmetic
    from lipschitz_icl.prover import witness
    from lipschitz_icl.prover.trusted import NoEnclosure, lookup

    at_low = {"d": d, "n": n, "sigma": sigma, "L": L_low}
    try:
        upper = arithmetic.high(witness.point_value(lookup("w_star", task), at_low)[0])
    except NoEnclosure:  # the w* proof did not close: the first piece stays undecided, as it will in the prover
        upper = math.inf
    bound = repr(upper) if math.isfinite(upper) else "1e300"
    common = {"d": [d], "n": [n], "sigma": sigma}
    pieces = [
        Piece("w_star", bound, {**common, "L": L_low}, task=task, relation="<="),
        Piece("w_star", f"(1 + C)*{bound}", {**common, "L": L_high}, task=task, relation=">="),
    ]
    return proof_outcome(pieces=pieces, constant="C", stated=stated, max_boxes=max_boxes, seconds=seconds)


def window_bound(
    *,
    d: int,
    task: str,
    n_low: int,
    n_high: int,
    L: float,
    sigma: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """Theorem 3.4's two-sided window bound with the derived law's constants, at every integer ``n`` of
    ``[n_low, n_high]``: ``T C_d Lambda^(alpha + S) <= w* <= C_d Lambda^(alpha + S) / T``, ``Lambda = n L^2 /
    sigma^2`` (``T = stated``; ``alpha`` and ``C_d`` from
    :func:`lipschitz_icl.derivations.window_law.window_law`; the exponent shift ``S = 0``, moved by an
    alternative).  Two pieces, the lower first (a tighter band is refuted there first: the finite-``n`` ``w*``
    lies below the law), each proved on boxes of ``n`` by one-sided ``w*`` proofs (no ``w*`` located;
    :func:`lipschitz_icl.prover.witness.one_sided`)."""
    from fractions import Fraction

    from lipschitz_icl.derivations.window_law import window_law

    alpha, constant = window_law(task, d)
    power = Fraction(alpha).limit_denominator(100)  # 2/(d+3) or 2/(d+2), exact
    law = f"({constant!r})*(n*L**2/sigma**2)**({power} + S)"
    domain = {"d": [d], "n": {"from": n_low, "to": n_high}, "L": L, "sigma": sigma}
    pieces = [
        Piece("w_star", f"T*{law}", domain, task=task, relation=">="),
        Piece("w_star", f"{law}/T", domain, task=task, relation="<="),
    ]
    return proof_outcome(
        pieces=pieces, constant="T", stated=stated, fixed={"S": 0.0}, max_boxes=max_boxes, seconds=seconds
    )


def wstar_rises_with_n(
    *,
    d: int,
    task: str,
    n_low: int,
    n_high: int,
    ratio: float,
    margin: float,
    L: float,
    sigma: float,
    stated: float,
    max_boxes: int,
    seconds: float,
) -> Outcome:
    """``w*`` is nondecreasing in ``n`` at every integer of ``[n_low, n_high]`` (Theorem 3.4: the window narrows
    as ``n`` grows), by Topkis's theorem on windows of ``w``.

    The range is cut at ``e_0 = n_low < e_1 < ... = n_high`` (``e_(i+1) = ceil(ratio e_i)``).  On each part three
    pieces: ``w* >= lo_i`` and ``w* <= hi_i`` at every ``n`` of ``{e_i..e_(i+1)}`` (one-sided ``w*`` proofs on
    boxes of ``n``), and ``dloss_dw_step <= -C`` on ``[lo_i, hi_i] x {e_i..e_(i+1) - 1}`` (``C = stated``): the
    loss has strictly decreasing differences there, so for ``n`` and ``n + 1`` of the part ``D(w) = L(w, n + 1)
    - L(w, n)`` falls on the window, and a ``w`` of it below ``w*(n)`` has ``L(w, n + 1) > L(w*(n), n + 1)``:
    every minimiser at ``n + 1`` (inside the window by the first two pieces) is at least every one at ``n``.
    The parts share their ends, so the steps chain over the whole range.  The windows are a plan, not a
    premise: ``lo_i = w*(e_i)/(1 + margin)``, ``hi_i = w*(e_(i+1)) (1 + margin)`` from the float exact method,
    rounded outward to four digits.  The windows are pieces of the plan (:class:`~lipschitz_icl.prover.pieces.Piece`
    ``plan``): one that misses ``w*`` shows the plan failed, not that ``w*`` falls somewhere, so its refutation
    leaves the claim undecided.  The step bound is part of the statement (its ``C`` is the resolution's): a
    certified step above ``-C`` refutes it."""
    from lipschitz_icl.optimum import wstar
    from lipschitz_icl.problem import make_problem

    edges = [n_low]
    while edges[-1] < n_high:
        edges.append(min(n_high, math.ceil(edges[-1] * ratio)))
    w_exact = {n: float(wstar(make_problem(task, d, n, L, sigma), "exact").w_star.value) for n in edges}
    pieces = []
    for a, b in itertools.pairwise(edges):
        lo, hi = _rounded(w_exact[a] / (1 + margin), math.floor), _rounded(w_exact[b] * (1 + margin), math.ceil)
        window = {"d": [d], "n": {"from": a, "to": b}, "L": L, "sigma": sigma}
        steps = {"d": [d], "n": {"from": a, "to": b - 1}, "L": L, "sigma": sigma, "w": [lo, hi]}
        pieces += [
            Piece("w_star", repr(lo), window, task=task, relation=">=", plan=True),
            Piece("w_star", repr(hi), window, task=task, relation="<=", plan=True),
            Piece("dloss_dw_step", "-C", steps, task=task, relation="<="),
        ]
    return proof_outcome(pieces=pieces, constant="C", stated=stated, max_boxes=max_boxes, seconds=seconds)


def _rounded(x: float, way) -> float:
    """``x`` to four significant digits, rounded by ``way`` (``math.floor`` or ``math.ceil``): a window's end as
    the report prints it."""
    scale = 10.0 ** (3 - math.floor(math.log10(x)))
    return way(x * scale) / scale
