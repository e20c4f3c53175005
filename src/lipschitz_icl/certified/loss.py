"""Certified ICL loss of ``M = w I`` for every certified rotation-invariant class: balls of the noise part, the
bias part and their sum, and their ``w``-derivatives, over a box of inputs.

One call encloses the quantities over a whole box: each of ``w``, ``n``, ``sigma`` and ``L`` may be a number
or an interval ``(lo, hi)``.  ``n`` enters the formulas analytically (``n``, ``n (n - 1)``, ``psi^(n-1)``,
:mod:`lipschitz_icl.certified.laplace`), so an integer range of ``n`` is one real interval: the balls hold
the value at every real ``n`` of it, in particular at every integer.  ``sigma`` and ``L`` enter as factors
(``noise = sigma^2 N(w)``, ``bias = L^2 B(w)`` for the built-in classes, whose kernels scale with ``L^2``; a
user's kernel carries its own scale).  A wide box gives a wide ball (ball arithmetic cannot see that a
quantity varies less than its parts), so a caller that needs tight balls splits the box:
:func:`enclose_split` does it geometrically in ``w`` and ``n`` and returns the union.

What is computed (``LossEnclosure``): ``noise``, ``bias``, ``loss = noise + bias`` and, for each requested
order ``k`` in ``1..3``, ``d^k/dw^k`` of each (``derivative(k)``); ``q = E[(sum_i p_i u_i)^2]`` on request
(the far-field bound of :mod:`lipschitz_icl.certified.wstar`).  ``n = 1`` is exact (``noise = sigma^2``,
``bias = 2 E[D]``, no ``w`` dependence); ``w = 0`` too (``p_i = 1/n``: ``N = 1/n``, ``bias = (n + 1) E[D] / n``)
when only the value is asked.

Which classes (:mod:`lipschitz_icl.certified.kernels`): affine, relu, cosine (any frequency), their mixtures,
the low-rank classes (by their rotation average), and a user's kernel that is analytic in ``t`` on
``[-1, 1]``; anything else is refused with a :class:`~lipschitz_icl.validation.ParameterError` naming what is
not certified.

Budget: the work of one evaluation is about (``s`` nodes of the direct zone) x (``theta`` nodes of a
window) ball operations, known before any is done (:func:`lipschitz_icl.certified.laplace.estimate_work`);
beyond :data:`MAX_WORK` (or a Gegenbauer degree beyond :data:`MAX_DEGREE` for a kernel that needs one) the
call is refused up front on ``w``, naming the budget and a cheaper setting.  Few points dominate the
normaliser when ``n`` is small and ``w`` large (the ``s`` range reaches ``2 w``), which is where it binds.

For the prover: :func:`enclose` with a :class:`~lipschitz_icl.certified.kernels.CertifiedKernel` (from
:func:`~lipschitz_icl.certified.kernels.certified_kernel` of a problem's task class or
:func:`~lipschitz_icl.certified.kernels.builtin_kernel`) and the box; ``bias``, ``noise``, ``loss`` and
``derivative(k)`` are its quantities ``bias``, ``noise``, ``icl_error`` and their ``w``-derivatives
(``dbias_dw = derivative(1).bias``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from flint import arb

from lipschitz_icl.certified import arithmetic, kernels, laplace
from lipschitz_icl.validation import ParameterError

__all__ = [
    "LossEnclosure",
    "Derivative",
    "enclose",
    "enclose_split",
    "derivative_bounds",
    "part_bounds",
    "enclose_on_w_range",
    "design",
    "Design",
    "problem_enclosure",
    "kernel_of",
    "loss_enclosure",
    "loss_derivatives",
    "TASKS",
    "MAX_WORK",
    "MAX_DEGREE",
    "MAX_W",
    "ACCURACY",
]

TASKS = kernels.CERTIFIED_CLASSES
MAX_W = 1e8
MAX_WORK = 2.5e5  # (s nodes) x (theta nodes) of one evaluation: a few seconds
MAX_DEGREE = 600  # Gegenbauer terms of a kernel of infinite degree
ACCURACY = 1e-6  # the stated accuracy of a loss: the relative width of its interval (LossEnclosure.converged)
Q_THETA = 14  # Gauss nodes per theta panel
Q_S = 16  # Gauss nodes per s panel


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Derivative:
    """``d^k/dw^k`` of the noise part, the bias part and the loss, as balls.  ``combined``: a ball of the loss
    computed as one quantity (over an interval of ``n`` tighter than the sum of the parts' balls, whose
    variations in ``n`` would add: :func:`lipschitz_icl.certified.laplace.integrate`); the loss is then the
    intersection of the two enclosures, each of which holds it."""

    noise: arb
    bias: arb
    combined: arb | None = None

    @property
    def loss(self) -> arb:
        return _loss_ball(self.noise, self.bias, self.combined)


def _loss_ball(noise: arb, bias: arb, combined: arb | None) -> arb:
    """``noise + bias``, intersected with ``combined`` when there is one (both hold the loss; disjoint balls
    would be a defect of the enclosures, refused rather than hidden)."""
    total = noise + bias
    if combined is None:
        return total
    if not total.overlaps(combined):
        raise ArithmeticError(f"the loss's two enclosures are disjoint: {total} and {combined}")
    return total.intersection(combined)


@dataclass(frozen=True)
class LossEnclosure:
    """Balls of the parts (``noise``, ``bias``, ``loss``), their ``w``-derivatives (``derivatives[k]``) and
    ``q`` when asked; ``info``: the grid and what it cost."""

    noise: arb
    bias: arb
    derivatives: dict = field(default_factory=dict)
    q: arb | None = None
    info: dict = field(default_factory=dict)
    combined: arb | None = None  # the loss as one quantity (Derivative.combined)
    steps: dict = field(default_factory=dict)  # order k -> Derivative of the step in n (enclose's n_step)

    @property
    def loss(self) -> arb:
        return _loss_ball(self.noise, self.bias, self.combined)

    @property
    def converged(self) -> bool:
        """The loss interval ``[lo, hi]`` is finite and reaches the stated accuracy, ``hi - lo <= 2 ACCURACY
        max(|lo|, |hi|)`` (:data:`ACCURACY`).  The balls hold the loss whatever their width; a wider one is
        no number (its tail bounds grow like a power of ``d`` where few points weigh, e.g. ``d = 100``,
        ``n = 2``, ``w = 1`` gives ``[-7.6e6, 7.6e6]``): the command reports it as inconclusive."""
        e = arithmetic.Enclosure.of(self.loss)
        if not (math.isfinite(e.low) and math.isfinite(e.high)):
            return False
        return e.width <= 2 * ACCURACY * max(abs(e.low), abs(e.high))

    def derivative(self, k: int) -> Derivative:
        """``d^k/dw^k`` (``k = 0``: the values)."""
        if k == 0:
            return Derivative(self.noise, self.bias, self.combined)
        return self.derivatives[k]

    def to_dict(self) -> dict:
        """The loss command's keys: ``loss``, ``bias``, ``noise`` (midpoints; null for an unbounded interval),
        ``ci_low``/``ci_high`` (the certified interval of the loss), zero standard errors, ``method =
        "certified"``, ``converged`` (:attr:`converged`: false, the interval is wider than the stated accuracy
        and the command exits 3), and
        ``loss_low``/``loss_high``, ``bias_low``/``bias_high``, ``noise_low``/``noise_high``; with derivatives,
        ``dloss_dw_low``/``_high`` (and ``d2loss_dw2``, ...)."""
        out: dict[str, Any] = {"method": "certified"}
        for name, ball in (("loss", self.loss), ("bias", self.bias), ("noise", self.noise)):
            e = arithmetic.Enclosure.of(ball)
            bounded = math.isfinite(e.low) and math.isfinite(e.high)
            out[name] = float(ball.mid()) if bounded else None  # an unbounded interval has no midpoint
            out[f"{name}_low"], out[f"{name}_high"] = e.low, e.high
            out[f"{name}_stderr"] = 0.0
        out["ci_low"], out["ci_high"] = out["loss_low"], out["loss_high"]
        out["converged"] = self.converged
        for k, value in sorted(self.derivatives.items()):
            key = "dloss_dw" if k == 1 else f"d{k}loss_dw{k}"
            e = arithmetic.Enclosure.of(value.loss)
            out[f"{key}_low"], out[f"{key}_high"] = e.low, e.high
        return out


# ----------------------------------------------------------------------------- inputs
def _ball(name: str, value, minimum: float, maximum: float, *, positive: bool = False) -> tuple:
    """``(ball, lo, hi)`` of a number or an interval ``(lo, hi)`` within ``[minimum, maximum]``."""
    from lipschitz_icl.validation import check_real

    ends = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(ends) != 2:
        raise ParameterError(name, "a number or an interval (lo, hi)", value)
    lo, hi = (check_real(name, x, minimum=minimum, maximum=maximum) for x in ends)
    if not lo <= hi:
        raise ParameterError(name, "an interval (lo, hi) with lo <= hi", list(ends))
    if positive and not lo > 0:
        raise ParameterError(name, "> 0", lo)
    return arithmetic.interval(lo, hi), lo, hi


def _counts(value) -> tuple:
    """``(Counts, lo, hi)`` for ``n``: an integer ``1 <= n <= 1e150`` or an interval of reals ``[lo, hi]``
    with ``5 <= lo`` (the binomial series of ``psi^(n-2)`` needs ``n - 2`` above the order)."""
    from lipschitz_icl.problem import MAX_N
    from lipschitz_icl.validation import check_int

    if isinstance(value, (tuple, list)) and len(value) == 2 and value[0] != value[1]:
        lo, hi = value
        for x in (lo, hi):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise ParameterError("n", "an interval (lo, hi) of reals", list(value))
        if not 5 <= lo < hi <= MAX_N:
            raise ParameterError("n", f"an interval (lo, hi) with 5 <= lo < hi <= {MAX_N:.0e}", list(value))
        return laplace.Counts(arithmetic.interval(lo, hi), None), float(lo), float(hi)
    n = value[0] if isinstance(value, (tuple, list)) else value
    n = check_int("n", n, minimum=1, maximum=MAX_N)
    return laplace.Counts(arb(n), n), float(n), float(n)


def kernel_of(task: str, d: int, L=1.0, frequency: float = 1.0) -> kernels.CertifiedKernel:
    """The certified kernel of a built-in class or ``mix:NAME=WEIGHT,...`` at scale ``L`` (a number or a ball)."""
    from lipschitz_icl.tasks.zonal import is_mixture, parse_mixture
    from lipschitz_icl.validation import check_int

    d = check_int("d", d, minimum=2, maximum=512)
    if isinstance(task, str) and is_mixture(task):
        parts = parse_mixture(task)
        total = math.fsum(w for _, w in parts)
        return kernels.mixture_kernel([(name, w / total, frequency) for name, w in parts if w > 0], d, L)
    if task not in TASKS:
        raise ParameterError("task", f"one of {', '.join(TASKS)} or mix:NAME=WEIGHT,... for the certified method", task)
    return kernels.builtin_kernel(task, d, L, frequency)


# ----------------------------------------------------------------------------- the design of one evaluation
def _s_range(
    d: int, *, w_lo: float, w_hi: float, n_lo: float, n_hi: float, rtol: float = 1e-12, safe: bool = False
) -> tuple:
    """``(s_lo, s_hi)`` in dimension ``d`` for windows ``w`` in ``[w_lo, w_hi]`` and context sizes in
    ``[n_lo, n_hi]``, to the relative tolerance ``rtol``.

    Float estimates of where the integrands live (they set the grids, not the result; the tails beyond
    are bounded, :func:`lipschitz_icl.certified.laplace.integrate`): below ``s_lo`` they fall like ``e^(2 s)``
    (``n E[e^(-V)] e^s ~ 1`` at their peak ``s*``; ``s_lo`` is ``log(1/rtol)/2 + 4`` below it), above ``s_hi``
    ``psi^(n-2)`` or ``y >= e^(s - 2w)`` makes them vanish: ``s_hi`` is the exact method's ``V_q + 4.5``, or
    with ``safe`` False the nearer ``s* + 10`` when that is smaller."""
    from lipschitz_icl.exact.grids import v_quantile
    from lipschitz_icl.sphere.laws import log_phi

    def log_x1(w: float) -> float:  # log E[e^(-w u)], decreasing in w
        return float(log_phi(d, w)) - w

    s_lo = -math.log(n_hi) - log_x1(w_lo) - (0.5 * math.log(1.0 / max(rtol, 1e-16)) + 4.0)
    if n_lo <= 3:
        s_hi = 2.0 * w_hi + 6.0
    else:
        s_hi = min(v_quantile(d, w_hi, int(min(n_lo, 1e300))) + 4.5, 2.0 * w_hi + 6.0)
        if not safe:
            s_hi = min(s_hi, -math.log(n_lo) - log_x1(w_hi) + 10.0)
    return min(s_lo, s_hi - 6.0), s_hi


def _degree(kernel: kernels.CertifiedKernel, w_hi: float, s_hi: float) -> int:
    """Gegenbauer terms computed exactly: the kernel's degree, or ``4 sqrt(w (s + 2)) + 8`` (the exact
    method's rule: ``A_1[P_l](s)`` falls like ``exp(-l^2 / (2 w (s + 2)))``) plus the kernel's frequency."""
    if kernel.degree is not None:
        return max(kernel.degree, 1)
    return math.ceil(4.0 * math.sqrt(max(w_hi, 0.0) * (max(s_hi, 0.0) + 2.0)) + 8 + 2.0 * kernel.frequency)


def _orders_for(rtol: float) -> tuple:
    """Gauss orders ``(theta, s)`` for a relative tolerance (``rho >= 2.6`` inside, ``2.6`` outside)."""
    digits = math.log(1.0 / max(rtol, 1e-16))
    return (
        min(24, max(8, math.ceil(digits / (2 * math.log(2.6))) + 3)),
        min(26, max(8, math.ceil(digits / (2 * math.log(2.6))) + 5)),
    )


@dataclass
class Design:
    """What one evaluation (or a family of them, in a ``w*`` search) integrates on."""

    kernel: kernels.CertifiedKernel
    m: int
    order: int
    w_lo: float
    w_hi: float
    s_top: float
    q: int
    q_s: int
    want_q: bool
    grid: Any = None

    def theta_grid(self) -> laplace.ThetaGrid:
        if self.grid is None:
            self.grid = laplace.theta_grid(
                self.kernel,
                m=self.m,
                order=self.order,
                w_lo=max(self.w_lo, 1e-6),
                w_hi=max(self.w_hi, 1e-6),
                s_top=self.s_top,
                q=self.q,
                q_s=self.q_s,
                parseval=self.kernel.degree is None,
                want_q=self.want_q,
            )
        return self.grid

    def covers(self, order: int, w_lo: float, w_hi: float, s_hi: float, want_q: bool) -> bool:
        return (
            order <= self.order
            and self.w_lo <= w_lo
            and w_hi <= self.w_hi
            and s_hi <= self.s_top
            and (self.want_q or not want_q)
        )


def design(
    kernel: kernels.CertifiedKernel,
    w: tuple[float, float],
    n: tuple[float, float],
    *,
    order: int,
    rtol: float,
    want_q: bool = False,
    safe: bool = False,
) -> Design:
    """The design (the grids of one evaluation) for ``w`` in ``[w_lo, w_hi]`` and ``n`` in ``[n_lo, n_hi]``
    with ``w``-derivatives up to ``order`` at accuracy ``rtol`` (and ``q`` when ``want_q``), refused up front
    (on ``w``) beyond :data:`MAX_WORK` or :data:`MAX_DEGREE` (``safe``: for the exact method's farther
    ``s_hi``)."""
    (w_lo, w_hi), (n_lo, n_hi) = w, n
    d = kernel.d
    _, s_hi = _s_range(d, w_lo=max(w_lo, 1e-6), w_hi=max(w_hi, 1e-6), n_lo=n_lo, n_hi=n_hi, safe=safe)
    q, q_s = _orders_for(rtol)
    work = laplace.estimate_work(d, w_hi, s_hi, q, q_s) * max(1.0, w_hi / max(w_lo, 1e-6)) ** 0.5
    m = _degree(kernel, w_hi, s_hi)
    n_text = f"{n_lo:.4g}" if n_lo == n_hi else f"[{n_lo:.4g}, {n_hi:.4g}]"
    if work > MAX_WORK:
        raise ParameterError(
            "w",
            f"a window whose certified grid fits the budget at n = {n_text}, d = {d} ({work:.2g} > "
            f"{MAX_WORK:.0e} ball operations: few points dominate the normaliser up to V = {s_hi:.3g}; use a "
            "smaller w or a larger n, or --method exact)",
            w_hi if w_lo == w_hi else [w_lo, w_hi],
        )
    if m > MAX_DEGREE:
        raise ParameterError(
            "w",
            f"a window whose certified Gegenbauer series fits the budget at n = {n_text}, d = {d} ({m} > "
            f"{MAX_DEGREE} terms for {kernel.name}; use a smaller w, or --method exact)",
            w_hi if w_lo == w_hi else [w_lo, w_hi],
        )
    return Design(kernel=kernel, m=m, order=order, w_lo=w_lo, w_hi=w_hi, s_top=s_hi + 1.0, q=q, q_s=q_s, want_q=want_q)


# ----------------------------------------------------------------------------- enclosures
def enclose(
    kernel: kernels.CertifiedKernel,
    w,
    n,
    sigma,
    L=None,
    *,
    orders: tuple = (0,),
    rtol: float = 1e-10,
    want_q: bool = False,
    plan: Design | None = None,
    splits: int = 6,
    precision_bits: int = arithmetic.PRECISION,
    n_step: bool = False,
) -> LossEnclosure:
    """Balls of the noise part, the bias part, the loss and their ``w``-derivatives of orders ``orders``
    (``0`` to ``3``) holding the values at every point of the box (module docstring): ``w`` in
    ``[0, 1e8]``, ``n`` an integer or an interval of reals, ``sigma >= 0``, ``L > 0`` (the scale of a
    built-in class's kernel; None keeps the kernel's own).  ``rtol`` sets the quadratures (the balls are
    certified whatever it is); ``plan`` reuses a :class:`Design` (a ``w*`` search evaluates many points on
    one grid); ``splits`` bounds the halvings of an outer panel (0 for a wide ``w`` ball, whose width is its
    own dependency on ``w``, not the quadrature's).  ``n_step`` (``n`` an interval): ``steps[k]`` holds balls
    of the step ``P(n + 1) - P(n)`` of each part's ``k``-th ``w``-derivative, for every ``n`` with ``n`` and
    ``n + 1`` in the interval (:func:`lipschitz_icl.certified.laplace.integrate`)."""
    order = max(orders) if orders else 0
    if not set(orders) <= {0, 1, 2, 3}:
        raise ParameterError("orders", "a subset of (0, 1, 2, 3)", orders)
    w_ball, w_lo, w_hi = _ball("w", w, 0.0, MAX_W)
    counts, n_lo, n_hi = _counts(n)
    sigma_ball, _, _ = _ball("sigma", sigma, 0.0, 1e6)
    scale = kernel.scale
    if L is not None:
        L_ball, _, _ = _ball("L", L, 1e-6, 1e6, positive=True)
        scale = L_ball * L_ball
    with arithmetic.precision(precision_bits):
        sigma2 = sigma_ball * sigma_ball
        if counts.exact == 1 or (w_hi == 0 and order == 0):
            return _closed_form(kernel, counts, sigma2, scale, order, w_hi == 0 and counts.exact != 1)
        _, s_hi = _s_range(kernel.d, w_lo=max(w_lo, 1e-6), w_hi=max(w_hi, 1e-6), n_lo=n_lo, n_hi=n_hi)
        if plan is None or not plan.covers(order, w_lo, w_hi, s_hi, want_q):
            plan = design(kernel, (w_lo, w_hi), (n_lo, n_hi), order=order, rtol=rtol, want_q=want_q)
        grid = plan.theta_grid()
        names = ("noise", "bias") + (("q",) if want_q else ())
        weights = {"noise": float(sigma2.mid()) or 0.0, "bias": float(scale.mid()), "q": 0.0}
        for safe in (False, True):
            s_lo, s_hi = _s_range(
                kernel.d, w_lo=max(w_lo, 1e-6), w_hi=max(w_hi, 1e-6), n_lo=n_lo, n_hi=n_hi, rtol=rtol, safe=safe
            )
            if safe and s_hi > plan.s_top:
                plan = design(kernel, (w_lo, w_hi), (n_lo, n_hi), order=order, rtol=rtol, want_q=want_q, safe=True)
                grid = plan.theta_grid()
            parts = laplace.integrate(
                grid,
                w_ball,
                counts,
                names,
                rtol,
                weights,
                s_range=(s_lo, min(s_hi, plan.s_top)),
                scale_w=max(w_hi, 1e-3),
                max_splits=splits,
                combine={"loss": {"noise": sigma2, "bias": scale}},
                n_step=n_step,
            )
            if not _upper_tail_large(parts, weights, rtol):
                break
    coefficients = parts.coefficients
    derivatives = {
        k: Derivative(
            sigma2 * coefficients["noise"][k] * math.factorial(k),
            scale * coefficients["bias"][k] * math.factorial(k),
            coefficients["loss"][k] * math.factorial(k),
        )
        for k in orders
        if k > 0
    }
    info = dict(parts.info, degree=grid.m, theta_nodes=grid.size)
    q = coefficients["q"][0] if want_q else None
    noise, bias = sigma2 * coefficients["noise"][0], scale * coefficients["bias"][0]
    steps = {
        k: Derivative(
            sigma2 * parts.steps["noise"][k] * math.factorial(k),
            scale * parts.steps["bias"][k] * math.factorial(k),
            parts.steps["loss"][k] * math.factorial(k),
        )
        for k in orders
        if parts.steps
    }
    return LossEnclosure(noise, bias, derivatives, q, info, coefficients["loss"][0], steps)


def enclose_step_in_n(kernel: kernels.CertifiedKernel, w, n: tuple, sigma, L=None) -> Derivative:
    """Balls of the step in ``n`` of ``dP/dw`` for the noise part, the bias part and the loss, ``S(w) = P'(w, n +
    1) - P'(w, n)``, holding it for every integer ``n`` with ``n_lo <= n < n_hi`` (``n = (n_lo, n_hi)``,
    integers, ``5 <= n_lo < n_hi``) and every ``w`` of ``[lo, hi]`` (``w`` a number or ``(lo, hi)``).  Its sign
    on a box of ``w`` and ``n`` is Topkis's condition: ``S < 0`` there is the loss's decreasing differences in
    ``(w, n)``, under which the minimisers over the box's ``w`` rise with ``n``.

    Over a range of ``w``, by Taylor's theorem at the centre ``c`` (``|z| <= r``): ``S(c + z) = S(c) + S'(c) z +
    S''(xi) z^2 / 2``, the centre's steps of the first and second ``w``-derivatives and a ball of the third's
    over the whole range (crude, but it enters at ``r^2``): a ball evaluation over ``w`` itself loses the
    sign at one percent of width.  The quadratures are asked for a relative :data:`STEP_RTOL` (a step is a
    difference of order ``1/n`` of the derivative: a coarse quadrature's error bound would swamp it)."""
    n_lo, n_hi = n
    for x in (n_lo, n_hi):
        if isinstance(x, bool) or not isinstance(x, int):
            raise ParameterError("n", "an interval (lo, hi) of integers for a step in n", list(n))
    if not 5 <= n_lo < n_hi:
        raise ParameterError("n", "an interval (lo, hi) of integers with 5 <= lo < hi", list(n))
    _, lo, hi = _ball("w", w, 0.0, MAX_W)
    if lo == hi:
        return enclose(kernel, lo, (n_lo, n_hi), sigma, L, orders=(1,), rtol=STEP_RTOL, n_step=True).steps[1]
    centre = 0.5 * (lo + hi)
    radius = (arithmetic.exact(hi) - arithmetic.exact(centre)).max(arithmetic.exact(centre) - arithmetic.exact(lo))
    at = enclose(kernel, centre, (n_lo, n_hi), sigma, L, orders=(1, 2), rtol=STEP_RTOL, n_step=True).steps
    top = enclose(kernel, (lo, hi), (n_lo, n_hi), sigma, L, orders=(3,), rtol=STEP_RTOL, n_step=True).steps[3]
    first, square = arb(0, 1) * radius, arb(0.5, 0.5) * radius * radius / 2
    parts = {}
    for part in ("noise", "bias", "loss"):
        parts[part] = getattr(at[1], part) + getattr(at[2], part) * first + getattr(top, part) * square
    return Derivative(parts["noise"], parts["bias"], parts["loss"])


STEP_RTOL = 1e-13  # the quadratures' target for a step in n (enclose_step_in_n)


def part_bounds(
    kernel: kernels.CertifiedKernel,
    w: tuple,
    n,
    sigma,
    L=None,
    *,
    order: int = 2,
    plan: Design | None = None,
    precision_bits: int = arithmetic.PRECISION,
) -> dict:
    """``{"noise": [B_0, ..., B_order], "bias": [...]}``: ``sup |d^k P/dw^k| <= B_k`` over the box for the noise
    part and the bias part ``P`` (``w = (lo, hi)``; ``n``, ``sigma``, ``L`` as in :func:`enclose`), by
    majorants, not by a ball evaluation of the derivative (whose dependency on ``w`` through every
    ``exp(-w u)`` would inflate it beyond use on a wide piece):
    :func:`lipschitz_icl.certified.laplace.sup_coefficients` for the noise and bias factors, then
    ``B_k = k! sigma^2 sup|N_k|`` and ``k! scale sup|B_k|``."""
    w_ball, w_lo, w_hi = _ball("w", w, 0.0, MAX_W)
    counts, n_lo, n_hi = _counts(n)
    sigma_ball, _, _ = _ball("sigma", sigma, 0.0, 1e6)
    scale = kernel.scale
    if L is not None:
        L_ball, _, _ = _ball("L", L, 1e-6, 1e6, positive=True)
        scale = L_ball * L_ball
    with arithmetic.precision(precision_bits):
        s_lo, s_hi = _s_range(kernel.d, w_lo=max(w_lo, 1e-6), w_hi=max(w_hi, 1e-6), n_lo=n_lo, n_hi=n_hi)
        if plan is None or not plan.covers(order, w_lo, w_hi, s_hi, False):
            plan = design(kernel, (w_lo, w_hi), (n_lo, n_hi), order=order, rtol=1e-6)
        grid = plan.theta_grid()
        bounds = laplace.sup_coefficients(
            grid, w_ball, counts, ("noise", "bias"), s_range=(s_lo, min(s_hi, plan.s_top))
        )
        factors = {"noise": arb((sigma_ball * sigma_ball).abs_upper()), "bias": arb(scale.abs_upper())}
        return {
            part: [arb((math.factorial(k) * factors[part] * bounds[part][k]).upper()) for k in range(order + 1)]
            for part in ("noise", "bias")
        }


def derivative_bounds(
    kernel: kernels.CertifiedKernel,
    w: tuple,
    n,
    sigma,
    L=None,
    *,
    order: int = 2,
    plan: Design | None = None,
    precision_bits: int = arithmetic.PRECISION,
) -> dict:
    """``{k: B_k}`` for ``k = 0 .. order``: ``sup |d^k L/dw^k| <= B_k`` over the box, the sum of the two parts'
    bounds of :func:`part_bounds`."""
    parts = part_bounds(kernel, w, n, sigma, L, order=order, plan=plan, precision_bits=precision_bits)
    return {k: arb((parts["noise"][k] + parts["bias"][k]).upper()) for k in range(order + 1)}


BALL_PIECE = 1.05  # _top_derivative_bounds: a ball evaluation on pieces w_hi <= BALL_PIECE w_lo only
TAYLOR_TOP = 3  # enclose_on_w_range: the centre's derivatives up to order 2, a majorant of the third beyond


def enclose_on_w_range(kernel: kernels.CertifiedKernel, w: tuple, n, sigma, L=None, *, order: int = 0) -> Derivative:
    """Balls of ``d^order/dw^order`` of the noise and bias parts holding every point of the box with ``w`` in
    ``[lo, hi]``, by Taylor's theorem at the centre ``c`` with ``m = max(1, 3 - order)`` terms:

    ``P^(order)(c + z) = sum_{j < m} P^(order + j)(c) z^j / j! + R``, ``|R| <= sup |P^(order + m)| r^m / m!``

    for every ``|z| <= r`` (``r`` an upper bound of ``max(hi - c, c - lo)``): the centre's derivatives are
    balls of :func:`enclose` (with ``n``, ``sigma``, ``L`` as given: numbers or intervals), ``z^j`` the ball
    of ``[-r, r]^j``, and the ``sup`` the smaller of two bounds over the piece (:func:`_top_derivative_bounds`:
    the majorant of :func:`part_bounds` and a ball evaluation).  Both are crude (often tens to a thousand
    times the true derivative), so they enter only at the power ``r^m``: on a piece of one percent the ball
    is about a hundred times narrower than by the mean value theorem with the majorant alone (``m = 1``)."""
    lo, hi = w
    if lo == hi:
        return enclose(kernel, lo, n, sigma, L, orders=(order,)).derivative(order)
    terms = max(1, TAYLOR_TOP - order)
    centre = 0.5 * (lo + hi)
    radius = (arithmetic.exact(hi) - arithmetic.exact(centre)).max(arithmetic.exact(centre) - arithmetic.exact(lo))
    at = enclose(kernel, centre, n, sigma, L, orders=tuple(range(order, order + terms)))
    # z^j over |z| <= r: [-r^j, r^j] for odd j, [0, r^j] for even j (products, not arb powers: a power of a
    # ball holding 0 is nan in Arb)
    powers = [arb(1)]
    while len(powers) <= terms:
        powers.append(powers[-1] * radius)
    spans = [arb(1)] + [arb(0, 1) * p if j % 2 else arb(0.5, 0.5) * p for j, p in enumerate(powers) if j >= 1]
    top = _top_derivative_bounds(kernel, (lo, hi), n, sigma, L, order + terms)
    balls = {}
    for part in ("noise", "bias"):
        total = arb(0)
        for j in range(terms):
            total += getattr(at.derivative(order + j), part) * spans[j] / math.factorial(j)
        remainder = arb(arithmetic.high(top[part] * powers[terms] / math.factorial(terms)))
        balls[part] = total + arb(0, 1) * remainder
    return Derivative(balls["noise"], balls["bias"])


def _top_derivative_bounds(kernel: kernels.CertifiedKernel, w: tuple, n, sigma, L, k: int) -> dict:
    """``{"noise": B, "bias": B}`` with ``sup |d^k P/dw^k| <= B`` on the piece ``w``: the smaller of the
    majorant of :func:`part_bounds` and the magnitude of a ball evaluation over the piece (:func:`enclose`,
    for ``k <= 3`` and a piece of at most 5%).  Each is a bound, and neither is always the sharper: the
    majorant drops the cancellations of the softmax's derivatives, the ball evaluation grows with
    ``exp(w u)``'s dependency on wide pieces."""
    sups = part_bounds(kernel, w, n, sigma, L, order=k)
    bounds = {part: sups[part][k] for part in ("noise", "bias")}
    if k > 3 or w[1] > BALL_PIECE * w[0]:  # on a wider piece the ball evaluation is slow and no sharper
        return bounds
    try:
        ball = enclose(kernel, w, n, sigma, L, orders=(k,), rtol=1e-3).derivative(k)
    except ParameterError:  # the piece's ball evaluation is beyond the certified grid's budget: the majorant
        return bounds
    for part in ("noise", "bias"):
        value = getattr(ball, part)
        if value.is_finite():
            bounds[part] = bounds[part].min(arb(abs(value).abs_upper()))
    return bounds


def _upper_tail_large(parts, weights: dict, rtol: float) -> bool:
    """The bound of the integrands beyond ``s_hi`` is above ``rtol/100`` of the loss (then a farther ``s_hi``)."""
    loss_value = sum(
        weights.get(name, 0.0) * abs(float(values[0].mid())) for name, values in parts.coefficients.items()
    )
    tail = sum(weights.get(name, 0.0) * high for name, (_, high) in parts.info["tails"].items())
    return tail > 0.01 * rtol * loss_value


def _closed_form(kernel, counts, sigma2: arb, scale: arb, order: int, at_zero: bool) -> LossEnclosure:
    """``n = 1``: ``noise = sigma^2``, ``bias = 2 E[D]``, no ``w`` dependence; ``w = 0``: ``p_i = 1/n``,
    ``N = 1/n``, ``bias = E[sum_ij p_i p_j (...)] = (2 E[D] + (n - 1) sum_{l>=1} a_l (E Q_l)^2) / n = (n + 1)
    E[D] / n`` (``E Q_l = 1``)."""
    mean = kernel.coefficients(1).mean_gap
    if at_zero:
        n = counts.n
        return LossEnclosure(sigma2 / n, scale * (n + 1) * mean / n, {}, None, {"exact": "w = 0"})
    zero = {k: Derivative(arb(0), arb(0)) for k in range(1, order + 1)}
    return LossEnclosure(sigma2, scale * 2 * mean, zero, None, {"exact": "n = 1"})


def enclose_split(kernel, w, n, sigma, L=None, *, orders=(0,), pieces: tuple = (1, 1), **kwargs) -> LossEnclosure:
    """:func:`enclose` on ``pieces = (w_pieces, n_pieces)`` geometric pieces of the box, and the union of the
    balls (each piece's ball holds its values, so the union holds all)."""
    w_pieces, n_pieces = pieces
    w_lo, w_hi = tuple(w) if isinstance(w, (tuple, list)) else (w, w)
    n_lo, n_hi = tuple(n) if isinstance(n, (tuple, list)) else (n, n)
    out = None
    for i in range(w_pieces):
        wa, wb = _geometric(w_lo, w_hi, w_pieces, i)
        for j in range(n_pieces):
            na, nb = _geometric(n_lo, n_hi, n_pieces, j)
            part = enclose(kernel, (wa, wb), (na, nb) if na != nb else na, sigma, L, orders=orders, **kwargs)
            out = part if out is None else _union(out, part)
    if out is None:
        raise ParameterError("pieces", "at least one piece of w and of n", pieces)
    return out


def _geometric(lo: float, hi: float, pieces: int, i: int) -> tuple:
    if lo == hi or pieces == 1:
        return lo, hi
    if lo <= 0:
        return lo + (hi - lo) * i / pieces, lo + (hi - lo) * (i + 1) / pieces
    ratio = hi / lo
    return (lo if i == 0 else lo * ratio ** (i / pieces)), (hi if i == pieces - 1 else lo * ratio ** ((i + 1) / pieces))


def _union(a: LossEnclosure, b: LossEnclosure) -> LossEnclosure:
    derivatives = {
        k: Derivative(
            a.derivatives[k].noise.union(b.derivatives[k].noise),
            a.derivatives[k].bias.union(b.derivatives[k].bias),
            a.derivatives[k].loss.union(b.derivatives[k].loss),
        )
        for k in a.derivatives
    }
    q = a.q.union(b.q) if a.q is not None and b.q is not None else None
    return LossEnclosure(a.noise.union(b.noise), a.bias.union(b.bias), derivatives, q, a.info, a.loss.union(b.loss))


def problem_enclosure(problem, w, *, orders: tuple = (0,), rtol: float = 1e-10) -> LossEnclosure:
    """:func:`enclose` for a :class:`~lipschitz_icl.problem.Problem` (its class's certified kernel at its
    ``L``, its ``n`` and ``sigma``), or the :class:`ParameterError` naming what is not certified."""
    kernel = kernels.certified_kernel(problem.task_class)
    return enclose(kernel, w, problem.n, problem.sigma, orders=orders, rtol=rtol)


# ----------------------------------------------------------------------------- the former interface
def loss_enclosure(
    d: int,
    n: int,
    w,
    sigma: float,
    L: float,
    *,
    rtol: float = 1e-10,
    task: str = "affine",
    frequency: float = 1.0,
    precision_bits: int = arithmetic.PRECISION,
) -> LossEnclosure:
    """Certified balls of the noise and bias parts of the ICL loss of the class ``task`` at ``M = w I``
    (``w`` a number or a ``(lo, hi)`` pair: then every ``w`` in it)."""
    kernel = kernel_of(task, d, 1.0, frequency)
    return enclose(kernel, w, n, sigma, L, rtol=rtol, precision_bits=precision_bits)


def loss_derivatives(
    d: int,
    n: int,
    w,
    sigma: float,
    L: float,
    orders: tuple = (1,),
    *,
    rtol: float = 1e-10,
    task: str = "affine",
    precision_bits: int = arithmetic.PRECISION,
) -> dict:
    """``{order: ball}``: certified balls of ``d^k L / dw^k`` (``k`` in ``orders``, 0 to 3) holding every
    ``w`` of the ball ``w``, and ``"info"``."""
    kernel = kernel_of(task, d, 1.0)
    result = enclose(kernel, w, n, sigma, L, orders=tuple(orders), rtol=rtol, precision_bits=precision_bits)
    return {k: result.derivative(k).loss for k in orders} | {"info": result.info}
