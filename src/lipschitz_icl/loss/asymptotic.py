"""Large-``n`` ICL loss for ``M = w I`` with its first correction in ``1/n`` (the classes whose kernel has
the form ``"linear"``, affine, or ``"arc-cosine"``, relu: :attr:`lipschitz_icl.tasks.family.TaskFamily.quadrature`).

Write ``sum_i p_i h_i = A / S`` with ``A = (1/n) sum_i e_i h_i``, ``S = (1/n) sum_i e_i``,
``e_i = exp(w t_i)``.  The second-order delta method (``lipschitz_icl/derivations/ratio_expansion.py``) gives

    E[(A/S)^2] = r^2 + (R_d(w) / n) (E_2w[(h - r)^2] - 2 r E_2w[h - r]) + O(1/n^2),
    E[sum_i p_i^2] = R_d(w) / n + O(1/n^2),

with ``r = E_w[h]`` the mean under the tilted law (density ``exp(w t) p_d(t) / Phi_d(w)``),
``E_2w`` the same at ``2w`` and ``R_d(w) = Phi_d(2w) / Phi_d(w)^2``.

affine, the linear form (``h = x - q`` coordinate-wise, variance ``L^2/(3d)``; ``mu = A_d(w) = E_w[t]``): closed form
::

    bias  = (L^2/(3d)) [ (1 - mu)^2 + (R/n) ( E_2w[(t - mu)^2] + E_2w[1 - t^2]
                                               + 2 (1 - mu) (A_d(2w) - mu) ) ]
    noise = sigma^2 R / n.

relu, the arc-cosine form (``h = (u.x)_+ - (u.q)_+``, ``c = u.q``; the ``(-u.x)_+`` part gives the same by symmetry):
::

    bias  = (2 L^2 / 3) E_c[ r(c)^2 + (R/n) (E_2w[h^2] - 4 r E_2w[h] + 3 r^2) ],

where the average over ``z`` (the component of ``u`` along the part of ``x`` orthogonal to ``q``) is
in closed form (:func:`relu_moments`) and ``c``, ``t`` are integrated by Gauss-Legendre panels
(:func:`~lipschitz_icl.sphere.laws.polar_rule` for ``t``; for ``c`` panels refined within
``10/sqrt(w)`` of ``c = 0``, where the kink of the relu is smoothed over).

Accuracy of the relu quadrature at ``refine=1`` (:func:`form_accuracy`), measured against the exact quadrature
of :mod:`lipschitz_icl.exact.route` at n = 1e60 to 1e100 over ``w`` in ``[0.1, 1e6]``: at d = 2, where the
z-average has kinks in ``t`` at ``theta = gamma`` that the panels do not follow, up to 2.8e-4 relative in
the band ``15 < w < 50`` (spikes: 1.8e-4 at w = 20.9, 2.8e-4 at w = 36.2; stated 5e-4 below w = 60) and
5.8e-5 from w = 50 to 1e6 (stated 1e-4); 2.3e-5 at d = 3, 2e-6 or better for d >= 4.  The formula itself
drops terms of order ``1/n^2``.

The regime (:class:`Regime`)
----------------------------
The delta method expands ``A/S`` in the fluctuations of the means ``A`` and ``S``; the terms it drops are
small relative to the ones it keeps when two numbers are small (``lipschitz_icl/derivations/ratio_expansion.py``,
``lipschitz_icl/derivations/window_law.py``), both exactly proportional to ``1/n``:

* ``R_d(w) / n``: one over the effective number of context points in the window (``n / R_d(w)``);
* ``|3 R^2 - 2 R_3 - R| / (n R)`` with ``R_3 = Phi_d(3w)/Phi_d(w)^3``: the derived next-order (``1/n^2``)
  term of ``E[sum_i p_i^2]`` relative to its ``1/n`` term (``window_law.delta_method_noise_correction``;
  it grows like ``(4/3)^((d-1)/2) R / n`` at large ``w``: the large-``d`` failure that ``R/n`` alone misses).

``rho``, the larger of the two, is the method's regime parameter: :data:`REGIME_LIMIT` (0.05) bounds it, and
:func:`asymptotic_loss` refuses (``ParameterError`` on ``n``, naming the smallest ``n`` inside the regime at
that ``w``; use the exact method) outside.  Inside, each part carries as its stated error the estimated
size of what it drops: the noise the derived next-order term ``sigma^2 |3 R^2 - 2 R_3 - R| / n^2``, the
bias ``rho`` times its own ``1/n`` term (the next term of a series whose successive terms shrink by
``rho``), each times :data:`MODEL_ERROR_FACTOR` (2), plus the form's quadrature accuracy
(:func:`form_accuracy`).  Measured against the exact quadrature (affine, relu; d = 2 ... 50; n = 2 ... 1e6;
w = 0.1 ... 1000): up to ``rho = 0.3`` the noise's error is at most 1.19 times its next-order term and the
bias's at most 1.86 times ``rho`` times its ``1/n`` term (244 points); inside the regime the exact value
lies within 0.73 of the stated error at each of 238 points; ``tests/loss/test_asymptotic.py`` checks a
sample.  A point far outside (``loss --task affine --d 3 --n 2 --sigma 1 --w 50``: noise 25 for an exact
0.98, ``rho = 25``) is refused instead of answered.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import special

from lipschitz_icl import quadrature
from lipschitz_icl.estimate import Estimate, LossEstimate
from lipschitz_icl.problem import MAX_W, Problem, check_problem
from lipschitz_icl.sphere import laws
from lipschitz_icl.tasks.registry import TASKS
from lipschitz_icl.validation import ParameterError, check_real

__all__ = [
    "asymptotic_loss",
    "large_n_model",
    "Regime",
    "regime",
    "REGIME_LIMIT",
    "MODEL_ERROR_FACTOR",
    "asymptotic_terms",
    "form_terms",
    "relu_moments",
    "asymptotic_tasks",
    "FORM_ACCURACY",
    "form_accuracy",
    "QUADRATURE_ACCURACY",
]

# stated relative accuracy of asymptotic_terms at refine=1 (module docstring), by kernel form: the linear
# form is closed form up to the Bessel functions' rounding; the arc-cosine quadrature is within 1e-4 except
# in the band of d = 2, w < 60 (form_accuracy)
FORM_ACCURACY = {"linear": 1e-12, "arc-cosine": 1e-4}
_KINK_BAND = (2, 60.0, 5e-4)  # d = 2, w < 60: up to 2.8e-4 measured (w = 36.2), stated 5e-4

REGIME_LIMIT = 0.05  # the regime: rho <= 0.05 (at least 20 effective context points in the window, ...)
MODEL_ERROR_FACTOR = 2.0  # stated error = 2 x the estimated dropped terms (measured ratio <= 1.86, docstring)
_LOG_OVERFLOW = 700.0  # exp beyond this is not a double


def form_accuracy(form: str, d: int, w: float) -> float:
    """The stated relative accuracy of :func:`form_terms` at ``refine=1`` (module docstring): :data:`FORM_ACCURACY`,
    wider for the arc-cosine form in its kink band (d = 2, w < 60)."""
    band_d, band_w, band_accuracy = _KINK_BAND
    if form == "arc-cosine" and d == band_d and w < band_w:
        return band_accuracy
    return FORM_ACCURACY[form]


def asymptotic_tasks() -> tuple:
    """The registered classes with a large-``n`` formula (a kernel form of :data:`FORM_ACCURACY`)."""
    return tuple(name for name, cls in TASKS.items() if cls.quadrature in FORM_ACCURACY)


class _AccuracyByTask(Mapping):
    """:data:`FORM_ACCURACY` by the name of a registered class (:func:`asymptotic_tasks`)."""

    def __getitem__(self, task):
        if task not in asymptotic_tasks():
            raise KeyError(task)
        return FORM_ACCURACY[TASKS[task].quadrature]

    def __iter__(self):
        return iter(asymptotic_tasks())

    def __len__(self):
        return len(asymptotic_tasks())


QUADRATURE_ACCURACY = _AccuracyByTask()


def _refusal(task) -> ParameterError:
    return ParameterError("task", f"{' or '.join(asymptotic_tasks())} for the asymptotic loss", task)


def _form(task: str) -> str:
    """The kernel form of the registered class ``task`` (refused without a large-``n`` formula)."""
    if task not in asymptotic_tasks():
        raise _refusal(task)
    return TASKS[task].quadrature


def asymptotic_terms(task: str, d: int, w: float, *, refine: int = 1):
    """``(bias0, bias1, collision1)`` per unit ``L^2`` of the registered class ``task``: bias ~
    ``L^2 (bias0 + bias1 / n)``, ``E sum p^2 ~ collision1 / n``."""
    return form_terms(_form(task), d, w, refine=refine)


def form_terms(form: str, d: int, w: float, *, refine: int = 1):
    """:func:`asymptotic_terms` of the kernel form ``form`` (``"linear"`` or ``"arc-cosine"``)."""
    log_R = float(laws.log_collision_ratio(d, w))
    if log_R > 700.0:  # R_d(w) ~ w^((d-1)/2) beyond the double range: no finite large-n model at any n
        raise ParameterError(
            "w",
            f"small enough that R_d(w) = Phi_d(2w)/Phi_d(w)^2 fits a double at d = {d} "
            f"(log R = {log_R:.4g} > 700; use a smaller w or the exact method)",
            w,
        )
    R = math.exp(log_R)
    mu = float(laws.tilted_mean(d, w))
    if form == "linear":
        mu2 = float(laws.tilted_mean(d, 2.0 * w))
        s2 = float(laws.tilted_second_moment(d, 2.0 * w))
        var_2w = s2 - 2.0 * mu * mu2 + mu * mu
        bias0 = (1.0 - mu) ** 2 / (3.0 * d)
        bias1 = R * (var_2w + (1.0 - s2) + 2.0 * (1.0 - mu) * (mu2 - mu)) / (3.0 * d)
        return bias0, bias1, R
    return (*_relu_terms(d, w, R, refine), R)


def _relu_terms(d: int, w: float, R: float, refine: int):
    c, c_weights = _c_rule(d, w, refine)
    sqrt_1mc2 = np.sqrt(np.clip(1.0 - c * c, 0.0, None))
    cplus = np.maximum(c, 0.0)
    expectations = []
    for tilt in (w, 2.0 * w):
        rule = laws.polar_rule(d, tilt, panels=8 * refine, order=16)
        alpha = c[:, None] * rule.t[None, :]
        beta = sqrt_1mc2[:, None] * np.sqrt(np.clip(1.0 - rule.t * rule.t, 0.0, None))[None, :]
        m1, m2 = relu_moments(d, alpha, beta)
        expectations.append((m1 @ rule.weights, m2 @ rule.weights))
    (m1_w, _), (m1_2w, m2_2w) = expectations
    r = m1_w - cplus
    h_2w = m1_2w - cplus
    h2_2w = m2_2w - 2.0 * cplus * m1_2w + cplus * cplus
    bias0 = (2.0 / 3.0) * (r * r) @ c_weights
    bias1 = (2.0 / 3.0) * R * (h2_2w - 4.0 * r * h_2w + 3.0 * r * r) @ c_weights
    return float(bias0), float(bias1)


def _c_rule(d: int, w: float, refine: int):
    """Nodes ``c = cos gamma`` and weights for the law ``p_d(c)``, panels in ``gamma`` refined in
    ``|gamma - pi/2| < delta``, ``delta = min(pi/2, 10/sqrt(w))``."""
    delta = np.pi / 2 if w <= 0 else min(np.pi / 2, 10.0 / np.sqrt(w))
    gamma, gw = quadrature.composite_rule(
        0.0, np.pi, 16, panels=(4 * refine, 6 * refine, 4 * refine), breakpoints=(np.pi / 2 - delta, np.pi / 2 + delta)
    )
    weights = gw * np.sin(gamma) ** (d - 2)
    return np.cos(gamma), weights / weights.sum()


def relu_moments(d: int, alpha, beta):
    """``(E_z[(alpha + beta z)_+], E_z[(alpha + beta z)_+^2])`` for ``beta >= 0`` and ``z`` distributed
    as ``t`` in ``R^{d-1}`` (``z = 2 Beta(a, a) - 1``, ``a = (d-2)/2``; Rademacher for ``d = 2``).

    With ``z0 = -alpha/beta`` in ``(-1, 1)``: ``P = P(z > z0) = I_{(1-z0)/2}(a, a)``,
    ``E[z; z > z0] = (1 - z0^2)^a / (2a 2^(2a-1) B(a, a))``,
    ``E[z^2; z > z0] = P - (2a/(2a+1)) I_{(1-z0)/2}(a+1, a+1)``; then
    ``m1 = alpha P + beta E[z; .]`` and ``m2 = alpha^2 P + 2 alpha beta E[z; .] + beta^2 E[z^2; .]``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    if d == 2:
        hi, lo = np.maximum(alpha + beta, 0.0), np.maximum(alpha - beta, 0.0)
        return 0.5 * (hi + lo), 0.5 * (hi * hi + lo * lo)
    a = 0.5 * (d - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = np.where(beta > 0, -alpha / np.where(beta > 0, beta, 1.0), np.where(alpha >= 0, -np.inf, np.inf))
    zc = np.clip(z0, -1.0, 1.0)
    x = 0.5 * (1.0 - zc)
    P = special.betainc(a, a, x)
    with np.errstate(divide="ignore"):
        E1 = np.exp(a * np.log1p(-zc * zc) - np.log(2.0 * a) - (2.0 * a - 1.0) * np.log(2.0) - special.betaln(a, a))
    E2 = P - (2.0 * a / (2.0 * a + 1.0)) * special.betainc(a + 1.0, a + 1.0, x)
    m1 = alpha * P + beta * E1
    m2 = alpha * alpha * P + 2.0 * alpha * beta * E1 + beta * beta * E2
    return m1, m2


@dataclass(frozen=True)
class Regime:
    """Where the large-``n`` formula holds (module docstring): at ``(d, n, w)``, ``window_points = n / R_d(w)``
    (the effective number of context points in the window) and ``noise_next = |3 R^2 - 2 R_3 - R| / (n R)``
    (the derived ``1/n^2`` term of ``E[sum_i p_i^2]`` relative to its ``1/n`` term); both scale as ``1/n``."""

    d: int
    n: int
    w: float
    window_points: float
    noise_next: float

    @property
    def rho(self) -> float:
        """The regime parameter ``max(R_d(w)/n, noise_next)``."""
        return max(1.0 / self.window_points, self.noise_next)

    @property
    def inside(self) -> bool:
        """``rho <= REGIME_LIMIT``."""
        return self.rho <= REGIME_LIMIT

    @property
    def n_min(self) -> float:
        """The smallest ``n`` inside the regime at this ``d`` and ``w`` (``rho`` scales as ``1/n``)."""
        return math.ceil(self.n * self.rho / REGIME_LIMIT) if math.isfinite(self.rho) else math.inf

    def describe(self) -> str:
        """The regime in words, with this point's numbers."""
        return (
            f"its regime: rho = max(R_d(w)/n, next-order noise term / its 1/n term) <= {REGIME_LIMIT:g}; here "
            f"n/R_d(w) = {self.window_points:.3g} effective context points in the window, rho = {self.rho:.3g}"
        )


def regime(d: int, n: int, w: float) -> Regime:
    """The :class:`Regime` of the large-``n`` formula at ``(d, n, w)`` (``R_3 = Phi_d(3w)/Phi_d(w)^3`` in log
    space: an overflow is an infinitely distant point, outside)."""
    log_R = float(laws.log_collision_ratio(d, w))
    log_phi_w = float(laws.log_phi(d, w))
    log_R3_over_R = float(laws.log_phi(d, 3.0 * w)) - 3.0 * log_phi_w - log_R
    if max(log_R, log_R3_over_R) > _LOG_OVERFLOW:
        return Regime(d, n, w, 0.0, math.inf)
    R = math.exp(log_R)
    noise_next = abs(3.0 * R - 2.0 * math.exp(log_R3_over_R) - 1.0) / n
    return Regime(d, n, w, n / R, noise_next)


def large_n_model(problem: Problem, w: float, *, refine: int = 1) -> LossEstimate:
    """The large-``n`` model ``L^2 (bias0(w) + bias1(w)/n) + sigma^2 R_d(w)/n`` at any ``w``, inside its regime or
    not, without a stated error (what a search over ``w`` minimises; :func:`asymptotic_loss` is the method)."""
    problem = check_problem(problem)
    form = problem.task_class.quadrature
    if form not in FORM_ACCURACY:
        raise _refusal(problem.task)
    w = check_real("w", w, minimum=0.0, maximum=MAX_W)
    bias0, bias1, R = form_terms(form, problem.d, w, refine=refine)
    L2, n = problem.L**2, problem.n
    bias = L2 * (bias0 + bias1 / n)
    noise = problem.sigma**2 * R / n
    info = {"bias0": L2 * bias0, "bias1": L2 * bias1, "collision1": R}
    return LossEstimate(Estimate(bias + noise), Estimate(bias), Estimate(noise), "asymptotic", info)


def asymptotic_loss(problem: Problem, w: float, *, refine: int = 1) -> LossEstimate:
    """``L(w) ~ L^2 (bias0(w) + bias1(w)/n) + sigma^2 R_d(w)/n`` for a class of a kernel form
    with a large-``n`` formula (:func:`asymptotic_tasks`: affine, relu), inside its regime (module docstring).

    Deterministic (standard error 0); each part's ``abs_error`` is the estimated size of the terms it drops
    (times :data:`MODEL_ERROR_FACTOR`; the relu form's quadrature accuracy added); ``info`` keeps the three
    terms and ``regime`` (``rho``).

    Supported: the problem's ranges (``2 <= d <= 512``, ``n <= 1e150``), ``0 <= w <= 1e8``,
    ``log R_d(w) <= 700`` (large ``w`` at large ``d``: refused on ``w``) and the regime ``rho <=``
    :data:`REGIME_LIMIT` (refused on ``n``, naming the smallest ``n`` inside it); ``R_d(w)`` comes from
    scaled Bessel functions, without cancellation at any ``w``."""
    problem = check_problem(problem)
    w = check_real("w", w, minimum=0.0, maximum=MAX_W)
    model = large_n_model(problem, w, refine=refine)
    where = regime(problem.d, problem.n, w)
    if not where.inside:
        raise ParameterError(
            "n",
            f">= {where.n_min:.4g} for the asymptotic method at d = {problem.d}, w = {w:.4g} "
            f"({where.describe()}; use --method exact)",
            problem.n,
        )
    n, info = problem.n, model.info
    bias_error = MODEL_ERROR_FACTOR * where.rho * abs(info["bias1"]) / n
    bias_error += form_accuracy(str(problem.task_class.quadrature), problem.d, w) * model.bias.value
    noise_error = MODEL_ERROR_FACTOR * problem.sigma**2 * where.noise_next * info["collision1"] / n
    bias = Estimate(model.bias.value, abs_error=bias_error)
    noise = Estimate(model.noise.value, abs_error=noise_error)
    loss = Estimate(model.loss.value, abs_error=bias_error + noise_error)
    return LossEstimate(loss, bias, noise, "asymptotic", {**info, "regime": where.rho})
