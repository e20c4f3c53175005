"""A task class defined by its covariance kernel alone (a zonal task prior).

:class:`ZonalTaskClass` carries a :class:`~lipschitz_icl.tasks.zonal.ZonalKernel` and answers what the
loss, ``w*`` and claim machinery ask of a rotation-invariant class (``d``, ``rotation_invariant``,
``covariance``); a prior given by its kernel alone defines no sampler, so the methods that draw tasks
refuse it with a :class:`ParameterError` (use ``exact``, or ``averaged``: the pairwise-kernel Monte
Carlo of :mod:`lipschitz_icl.loss.pairwise`); mixtures of the registered classes sample (``naive``, ``train``).  ``L``
is
a nominal scale, ``sqrt(3 K(1) d / (d + 1))`` (the ``L`` of
the affine class with the same ``K(1)``), used only to start the ``w*`` search: the kernel carries the
scale.  Its problems are made by :func:`lipschitz_icl.problem.zonal_problem` (and ``kernel_problem``,
``mixture_problem``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lipschitz_icl.tasks.registry import Task, make_task_class, parameters_of
from lipschitz_icl.tasks.zonal import ZonalKernel, is_mixture
from lipschitz_icl.validation import ParameterError

__all__ = ["ZonalTaskClass"]


@dataclass(frozen=True)
class ZonalTaskClass:
    """A zonal task prior: ``kernel`` (``E_f[f(x) f(y)] = K(x.y)``) on ``S^(d-1)``."""

    kernel: ZonalKernel

    @property
    def name(self) -> str:
        return self.kernel.name if is_mixture(self.kernel.name) else f"kernel:{self.kernel.name}"

    @property
    def d(self) -> int:
        return self.kernel.d

    @property
    def L(self) -> float:
        d = self.kernel.d
        return math.sqrt(3.0 * self.kernel.k1 * d / (d + 1.0))

    # the facts of lipschitz_icl.tasks.family.TaskFamily: exact by the zonal series (mixtures class by class)
    rotation_invariant = True
    has_intercept = False
    low_rank = False
    parameters: ClassVar[dict] = {}
    quadrature = None
    has_kink = False
    exact_route = "zonal"
    B = None
    frequency = 1.0

    def covariance_kernel(self) -> ZonalKernel:
        """The prior's kernel."""
        return self.kernel

    @property
    def rank(self) -> int:
        return self.kernel.d

    def covariance(self, a, b) -> np.ndarray:
        """``K(a.b)``."""
        return self.kernel(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float), axis=-1))

    def wstar_guess(self, n: int, sigma: float) -> float:
        """A start for the ``w*`` search (not a result): the minimiser over a log grid of the leading-order
        model ``2 E_(u~Gamma(m, w))[D(u)] - E_(u~Gamma(m, w/2))[D(u)] + D'(0) m^2/w^2 + sigma^2 c_R w^m/n``
        (:mod:`lipschitz_icl.derivations.regularity`, evaluated numerically: generalised Gauss-Laguerre in ``w u``)."""
        return _leading_order_wstar(self.kernel, n, sigma)

    def _no_sampler(self, *args, **kwargs):
        raise ParameterError(
            "method",
            "exact or certified for a mixture or a prior given by its kernel (the task-averaged Monte Carlo, and the "
            "w* search built on it, needs a single class's features; loss also averages such a prior through its "
            "kernel: method averaged)",
            self.name,
        )

    features = reduced_features = _no_sampler

    def sample(self, rng: np.random.Generator, size: int) -> Task:
        """Mixtures of the built-in classes: each task draws its class with probability its weight, then
        a task of that class (covariance ``sum_c w_c K_c``, mean zero); other kernels have no sampler."""
        if not self.kernel.parts:
            raise ParameterError(
                "task",
                "a class with a sampler of tasks (the built-in classes and their "
                "mixtures); a prior given by its kernel alone has none: use method exact "
                "or averaged",
                self.name,
            )
        classes = [
            make_task_class(name, self.d, L, **parameters_of(name, frequency=f)) for name, _, L, f in self.kernel.parts
        ]
        weights = np.array([w for _, w, _, _ in self.kernel.parts])
        component = rng.choice(len(classes), size=size, p=weights / weights.sum())
        return Task(self, {"component": component, "subs": [c.sample(rng, size) for c in classes]})

    def evaluate(self, params: dict, x: np.ndarray) -> np.ndarray:
        """``f(x)`` of each sampled task: the value of its drawn class's task."""
        values = np.stack([sub(x) for sub in params["subs"]])
        index = params["component"].reshape((1, -1) + (1,) * (values.ndim - 2))
        return np.take_along_axis(values, index, axis=0)[0]

    def task_lipschitz(self, params: dict) -> np.ndarray:
        values = np.stack([sub.lipschitz for sub in params["subs"]])
        return np.take_along_axis(values, params["component"][None, :], axis=0)[0]


def _leading_order_wstar(kernel: ZonalKernel, n: int, sigma: float) -> float:
    from scipy import special

    d = kernel.d
    m = 0.5 * (d - 1)
    x, g = special.roots_genlaguerre(40, m - 1.0)
    g = g / special.gamma(m)
    c_r = math.sqrt(math.pi) / (special.gamma(0.5 * d) * 2.0 ** (d - 2))
    w = np.exp(np.linspace(math.log(1e-2), math.log(1e8), 201))
    u = x[None, :] / w[:, None]
    with np.errstate(all="ignore"):  # a kernel near the double range (exp(700 t)): inf, never chosen
        d1 = float(kernel.gap(np.array([1e-7]))[0]) / 1e-7
        bias = 2.0 * (kernel.gap(np.minimum(u, 2.0)) @ g) - kernel.gap(np.minimum(2.0 * u, 2.0)) @ g + d1 * m * m / w**2
        loss = bias + sigma * sigma * c_r * w**m / n
    return float(w[int(np.argmin(np.where(np.isfinite(loss), loss, np.inf)))])
