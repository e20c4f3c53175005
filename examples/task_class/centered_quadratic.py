"""A task class the project does not ship, as its own installable package: the worked example of the how-to
"Adding a task class" (``docs/guide/task_class.rst``).

``f(x) = l ((u.x)^2 - 1/d) + b`` with ``l, b ~ U[-L, L]`` and ``u`` uniform on the sphere ``S^(d-1)``: an even
link, rotation-invariant (the law of ``f`` does not change when ``x`` is rotated).  Its Lipschitz constant on the
sphere is ``|l|``: the tangential gradient of ``(u.x)^2`` is ``2 s sqrt(1 - s^2)``, ``s = u.x``, at most 1.

Its kernel, from ``E_u[(u.x)^2 (u.y)^2] = (1 + 2 t^2)/(d (d + 2))`` and ``E_u[(u.x)^2] = 1/d``, ``t = x.y``:

    K(t) = E_f[f(x) f(y)] = (L^2/3) ((1 + 2 t^2)/(d (d + 2)) - 1/d^2) + L^2/3.

The class states it once (:meth:`CenteredQuadraticTask.kernel_form`); the project derives ``K(1)`` and
``D(u) = K(1) - K(1 - u)`` from it and checks, before the class is registered, that the sampler and the features
give the same covariance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lipschitz_icl.tasks.family import Features, TaskFamily

__all__ = ["CenteredQuadraticTask"]


@dataclass(frozen=True)
class CenteredQuadraticTask(TaskFamily):
    """``f(x) = l ((u.x)^2 - 1/d) + b``, ``l, b ~ U[-L, L]``, ``u`` uniform on ``S^(d-1)`` (module docstring)."""

    name = "centered-quadratic"  # the --task choice, and the name of the entry point
    rotation_invariant = True  # it has a kernel K(t): the exact method and w* apply
    has_intercept = True  # f carries b ~ U[-L, L]

    def draw_coefficients(self, rng, size):
        """The coefficients of ``size`` tasks (their directions ``u`` are drawn by the base class)."""
        return {"l": rng.uniform(-self.L, self.L, size), "b": rng.uniform(-self.L, self.L, size)}

    def link(self, s, col):
        """``f`` from the projection ``s = u.x`` and the coefficients ``col``."""
        return col["l"] * (s * s - 1.0 / self.d) + col["b"]

    def task_lipschitz(self, params):
        """``|l|`` per task."""
        return np.abs(params["l"])

    def scalar_features(self, s_x, s_q):
        """``f = theta . phi + b`` with ``phi(s) = s^2`` and ``theta = l`` of variance ``L^2/3`` (the constant
        ``-l/d`` and the intercept cancel in ``f(x_i) - f(q)``)."""
        return Features(s_x[..., None] ** 2, s_q[..., None] ** 2, self.L**2 / 3.0)

    @classmethod
    def kernel_form(cls, d, L):
        """``K(t) = (L^2/3) ((1 + 2 t^2)/(d (d + 2)) - 1/d^2 + 1)`` in the SymPy symbol ``t``."""
        import sympy as sp

        t = sp.Symbol("t")
        return sp.Float(L) ** 2 / 3 * ((1 + 2 * t**2) / (d * (d + 2)) - sp.Rational(1, d**2) + 1)
