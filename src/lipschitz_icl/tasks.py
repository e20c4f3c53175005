"""Task classes (the canonical distributions below): samplers, Lipschitz constants, exact task moments.

Every class has the form ``f(x) = theta . phi_u(x) + b``: a random *direction* ``u`` (or ``a``), a
feature map ``phi_u``, coefficients ``theta`` with ``E[theta] = 0`` and ``E[theta theta^T] = v I``,
and an intercept ``b`` (``b ~ U[-L, L]`` where the class has one).  The intercept cancels in
``f(x_i) - f(q)`` because the softmax weights sum to one, so for any weights ``p``

    E_theta[(sum_i p_i f(x_i) - f(q))^2 | u] = v || sum_i p_i phi_u(x_i) - phi_u(q) ||^2.      (*)

:meth:`TaskClass.features` returns ``phi_u`` at the context and the query with ``u`` drawn (or, for
the affine and low-rank linear classes, averaged out exactly), which lets the loss estimators integrate
the coefficients and the noise out exactly.  :meth:`TaskClass.covariance` gives the exact
``E_f[f(a) f(b)]`` (``E_f[f(a)] = 0`` for every class), the reference the features are tested against.

Canonical distributions (``u ~ Unif(S^{d-1})``, scalars ``~ U[-L, L]``, all independent):

=================  =============================================  ==============================
name               f(x)                                           Lipschitz constant
=================  =============================================  ==============================
affine             ``l u.x + b``                                  ``|l| <= L``
relu               ``l1 (u.x)_+ + l2 (-u.x)_+ + b``               ``max(|l1|, |l2|) <= L``
cosine             ``(L/k) cos(k u.x + phi)``, ``phi ~ U[0,2pi]``  ``L``
lowrank-linear     ``L a.(B^T x)``, ``a ~ Unif(S^{r-1})``          ``L``
lowrank-affine     ``l a.(B^T x) + b``                            ``|l| <= L``
lowrank-quadratic  ``l (a.(B^T x))^2 + b``                        ``|l| <= L`` on the sphere
lowrank-cosine     ``(L/k) cos(k a.(B^T x) + phi)``               ``L``
=================  =============================================  ==============================

Lipschitz constants are on the sphere, where the covariates live (the quadratic link has ``2|l|`` on
the ball: its gradient is radial where it is largest).
``B`` (``d x r``, orthonormal columns) defaults to the first ``r`` coordinate axes; ``r`` is the
``k`` of the paper's Theorem 4.4 and is called ``rank`` here to keep ``k`` for the cosine frequency.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from . import sphere
from .validation import ParameterError, check_choice, check_int, check_real

__all__ = [
    "Features",
    "Task",
    "TaskClass",
    "TASK_NAMES",
    "ROTATION_INVARIANT",
    "make_task_class",
    "relu_kernel",
    "sphere_characteristic",
]


@dataclass
class Features:
    """Feature values for (*): ``phi_x`` ``(..., n, m)``, ``phi_q`` ``(..., m)``, variance ``v``.

    ``remainder`` (``(..., n)`` or ``None``) adds ``v sum_i p_i^2 remainder_i`` to (*): the part of
    the features orthogonal to the query that was averaged out exactly (affine class, reduced form).
    ``weight`` (``(...)`` or ``None``) is an importance weight per context multiplying (*).
    """

    phi_x: np.ndarray
    phi_q: np.ndarray
    variance: float
    remainder: np.ndarray | None = None
    weight: np.ndarray | None = None

    def bias(self, p: np.ndarray) -> np.ndarray:
        """``weight v (||sum_i p_i phi(x_i) - phi(q)||^2 + sum_i p_i^2 remainder_i)`` per context."""
        diff = np.einsum("...n,...nm->...m", p, self.phi_x) - self.phi_q
        value = np.sum(diff * diff, axis=-1)
        if self.remainder is not None:
            value = value + np.sum(p * p * self.remainder, axis=-1)
        return self.variance * value if self.weight is None else self.variance * self.weight * value


@dataclass
class Task:
    """A batch of sampled tasks; ``task(x)`` evaluates ``f`` for ``x`` of shape ``(batch, ..., d)``."""

    task_class: "TaskClass"
    params: dict

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.task_class.evaluate(self.params, np.asarray(x, dtype=np.float64))

    @property
    def lipschitz(self) -> np.ndarray:
        """Lipschitz constant of each sampled task on the sphere (at most ``L``)."""
        return self.task_class.task_lipschitz(self.params)


@dataclass(frozen=True)
class TaskClass:
    """A task distribution: ``name``, dimension ``d``, Lipschitz bound ``L`` and its extras.

    Build instances with :func:`make_task_class`, which validates every argument.
    """

    name: str
    d: int
    L: float
    frequency: float = 1.0
    B: np.ndarray | None = field(default=None, compare=False)

    # ----------------------------------------------------------------- structure
    @property
    def rank(self) -> int:
        """Rank ``r`` of ``B`` for low-rank classes, ``d`` otherwise."""
        return self.d if self.B is None else self.B.shape[1]

    @property
    def has_intercept(self) -> bool:
        """True when ``f`` carries an intercept ``b ~ U[-L, L]`` (variance ``L^2/3``)."""
        return self._link() in ("affine", "relu", "quadratic")

    @property
    def rotation_invariant(self) -> bool:
        """True when the task law is invariant under rotations of ``R^d``."""
        return self.name in ROTATION_INVARIANT

    def _link(self) -> str:
        return self.name.split("-", 1)[1] if self.name.startswith("lowrank") else self.name

    # ----------------------------------------------------------------- sampling
    def sample(self, rng: np.random.Generator, size: int) -> Task:
        """Draw ``size`` tasks from the class (one ``Generator`` for reproducibility)."""
        size = check_int("size", size, minimum=1)
        L = self.L
        link = self._link()
        if self.B is None:
            params = {"u": sphere.uniform_sphere(rng, size, self.d)}
        else:
            params = {"u": sphere.uniform_sphere(rng, size, self.rank)}
        if link in ("affine", "quadratic"):
            params["l"] = rng.uniform(-L, L, size)
            params["b"] = rng.uniform(-L, L, size)
        elif link == "relu":
            params["l1"] = rng.uniform(-L, L, size)
            params["l2"] = rng.uniform(-L, L, size)
            params["b"] = rng.uniform(-L, L, size)
        elif link == "cosine":
            params["phi"] = rng.uniform(0.0, 2.0 * np.pi, size)
        return Task(self, params)

    def _projection(self, params: dict, x: np.ndarray) -> np.ndarray:
        """``s = u.x`` (or ``a.(B^T x)``) for a batch of tasks, ``x`` of shape ``(batch, ..., d)``."""
        u = params["u"]
        if self.B is not None:
            u = u @ self.B.T  # the direction B a in R^d
        extra = x.ndim - 2
        return np.einsum("b...d,bd->b...", x, u) if extra >= 0 else x @ u

    def evaluate(self, params: dict, x: np.ndarray) -> np.ndarray:
        """``f(x)`` for each task of the batch; ``x`` has shape ``(batch, ..., d)``."""
        s = self._projection(params, x)            # a fresh array: the links below work in place
        shape = (-1,) + (1,) * (s.ndim - 1)
        col = {key: np.reshape(value, shape) for key, value in params.items() if key != "u"}
        link = self._link()
        if link == "linear":
            return np.multiply(s, self.L, out=s)
        if link == "affine":
            s *= col["l"]
            s += col["b"]
            return s
        if link == "quadratic":
            value = col["l"] * s
            value *= s
            value += col["b"]
            return value
        if link == "relu":
            return col["l1"] * np.maximum(s, 0.0) + col["l2"] * np.maximum(-s, 0.0) + col["b"]
        k = self.frequency
        s *= k
        s += col["phi"]
        np.cos(s, out=s)
        s *= self.L / k
        return s

    def task_lipschitz(self, params: dict) -> np.ndarray:
        """Per-task Lipschitz constant on the sphere (the table in the module docstring)."""
        link = self._link()
        size = params["u"].shape[0]
        if link in ("affine", "quadratic"):
            return np.abs(params["l"])
        if link == "relu":
            return np.maximum(np.abs(params["l1"]), np.abs(params["l2"]))
        return np.full(size, self.L)

    # ----------------------------------------------------------------- exact moments
    def covariance(self, a, b) -> np.ndarray:
        """Exact ``E_f[f(a) f(b)]`` for points ``a``, ``b`` (shape ``(..., d)``); ``E_f[f] = 0``.

        affine ``(L^2/3)(a.b/d + 1)``; relu ``(2L^2/3) kappa(a, b) + L^2/3`` with the arc-cosine
        kernel :func:`relu_kernel`; cosine ``(L^2/(2k^2)) Psi_d(k ||a - b||)`` with the sphere's
        characteristic function :func:`sphere_characteristic`; low-rank classes the same with
        ``B^T a``, ``B^T b`` in ``R^r`` (quadratic:
        ``(L^2/3)(|A|^2|C|^2 + 2 (A.C)^2)/(r(r+2)) + L^2/3``).
        """
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if self.B is not None:
            a, b = a @ self.B, b @ self.B
        m = a.shape[-1]
        L2 = self.L**2
        link = self._link()
        dot = np.sum(a * b, axis=-1)
        if link == "linear":
            return L2 * dot / m
        if link == "affine":
            return (L2 / 3.0) * (dot / m + 1.0)
        if link == "relu":
            return (2.0 * L2 / 3.0) * relu_kernel(a, b) + L2 / 3.0
        if link == "quadratic":
            na, nb = np.sum(a * a, axis=-1), np.sum(b * b, axis=-1)
            return (L2 / 3.0) * (na * nb + 2.0 * dot**2) / (m * (m + 2.0)) + L2 / 3.0
        k = self.frequency
        r = np.linalg.norm(a - b, axis=-1)
        return (L2 / (2.0 * k * k)) * sphere_characteristic(m, k * r)

    # ----------------------------------------------------------------- features for (*)
    def features(self, rng: np.random.Generator, x: np.ndarray, q: np.ndarray) -> Features:
        """Features of (*) for contexts ``x`` ``(batch, n, d)`` and queries ``q`` ``(batch, d)``.

        The direction ``u`` is drawn once per context from ``rng``; for ``affine`` and
        ``lowrank-linear`` it is averaged out exactly instead (``phi(x) = x`` or ``B^T x``).
        """
        link = self._link()
        if link in ("linear", "affine") and (self.B is None or link == "linear"):
            proj_x = x if self.B is None else x @ self.B
            proj_q = q if self.B is None else q @ self.B
            m = proj_x.shape[-1]
            variance = self.L**2 / m if link == "linear" else self.L**2 / (3.0 * m)
            return Features(proj_x, proj_q, variance)
        task = self.sample(rng, x.shape[0])
        s_x = self._projection(task.params, x)
        s_q = self._projection(task.params, q[:, None, :])[:, 0]
        return self._scalar_features(s_x, s_q)

    def reduced_features(self, rng: np.random.Generator, t: np.ndarray, *,
                         kink_width: float | None = None) -> Features:
        """Features of (*) for ``M = w I`` on a rotation-invariant class, from ``t_i = x_i . q`` alone.

        With ``q = e_1``, ``x_i = t_i e_1 + sqrt(1 - t_i^2) v_i`` (``v_i`` uniform on the unit sphere of
        ``e_1``'s complement) and the softmax weights depend on ``t`` only.  affine: averaging ``u`` and
        ``v_i`` exactly gives ``phi(t) = t``, ``phi(q) = 1``, remainder ``1 - t_i^2``, ``v = L^2/(3d)``.
        relu, cosine: draw ``c = u . q`` (law ``p_d``) and ``z_i`` (law of ``t`` in ``R^{d-1}``), so
        ``u . x_i = c t_i + sqrt(1 - c^2) sqrt(1 - t_i^2) z_i``: cost ``O(n)`` per context whatever ``d``.

        ``kink_width`` (relu): draw ``c`` instead from ``g = (p_d + U[-delta, delta]) / 2`` with
        ``delta = kink_width`` and weight each context by ``p_d(c) / g(c) <= 2`` (importance sampling;
        unbiased for any ``delta``): the relu bias lives where ``|c| < ~1/sqrt(w)``, the kink of the
        query's own value, and plain draws of ``c`` rarely land there when ``w`` is large.
        """
        if not self.rotation_invariant:
            raise ParameterError("task", "a rotation-invariant class (affine, relu, cosine) for the "
                                 "reduced form", self.name)
        t = np.asarray(t, dtype=np.float64)
        if self.name == "affine":
            return Features(t[..., None], np.ones(t.shape[:-1] + (1,)), self.L**2 / (3.0 * self.d),
                            remainder=1.0 - t * t)
        shape = t.shape[:-1]
        weight = None
        if self.name == "relu" and kink_width is not None:
            delta = check_real("kink_width", kink_width, minimum=0.0, strict_minimum=True, maximum=1.0)
            c = sphere.sample_t(rng, self.d, shape)
            near = rng.random(shape) < 0.5
            c = np.where(near, rng.uniform(-delta, delta, shape), c)
            p = sphere.t_density(c, self.d)
            weight = p / (0.5 * p + 0.5 * (np.abs(c) < delta) / (2.0 * delta))
        else:
            c = sphere.sample_t(rng, self.d, shape)
        z = sphere.sample_t(rng, self.d - 1, t.shape)
        s_x = c[..., None] * t + np.sqrt(1.0 - c * c)[..., None] * np.sqrt(np.clip(1.0 - t * t, 0.0, None)) * z
        features = self._scalar_features(s_x, c)
        features.weight = weight
        return features

    def _scalar_features(self, s_x: np.ndarray, s_q: np.ndarray) -> Features:
        link = self._link()
        L2 = self.L**2
        if link == "relu":
            phi_x = np.stack([np.maximum(s_x, 0.0), np.maximum(-s_x, 0.0)], axis=-1)
            phi_q = np.stack([np.maximum(s_q, 0.0), np.maximum(-s_q, 0.0)], axis=-1)
            return Features(phi_x, phi_q, L2 / 3.0)
        if link == "affine":
            return Features(s_x[..., None], s_q[..., None], L2 / 3.0)
        if link == "quadratic":
            return Features(s_x[..., None] ** 2, s_q[..., None] ** 2, L2 / 3.0)
        k = self.frequency
        phi_x = np.stack([np.cos(k * s_x), np.sin(k * s_x)], axis=-1)
        phi_q = np.stack([np.cos(k * s_q), np.sin(k * s_q)], axis=-1)
        return Features(phi_x, phi_q, L2 / (2.0 * k * k))


TASK_NAMES = ("affine", "relu", "cosine", "lowrank-linear", "lowrank-affine",
              "lowrank-quadratic", "lowrank-cosine")
ROTATION_INVARIANT = ("affine", "relu", "cosine")
# cosine frequency k: below 1e-6 the task (L/k) cos(k u.x + phi) is its linear limit to 1e-12 and its
# values (~ L/k) lose their differences to rounding (relative 4e-16/k); above 1e3 the kernel's
# Gegenbauer series outgrows the exact method's budget
FREQUENCY_RANGE = (1e-6, 1e3)


def make_task_class(name: str, d: int, L: float, *, frequency: float = 1.0, rank: int | None = None,
                    B=None) -> TaskClass:
    """Validated constructor of a :class:`TaskClass`.

    ``rank`` (low-rank classes) sets ``B`` to the first ``rank`` coordinate axes unless ``B`` is given;
    a given ``B`` must be ``d x r`` with orthonormal columns, ``1 <= r <= d``.
    """
    name = check_choice("task", name, TASK_NAMES)
    d = check_int("d", d, minimum=2)
    L = check_real("L", L, minimum=0.0, strict_minimum=True)
    frequency = check_real("frequency", frequency, minimum=FREQUENCY_RANGE[0], maximum=FREQUENCY_RANGE[1])
    if not name.startswith("lowrank"):
        if B is not None or rank is not None:
            raise ParameterError("rank", f"unset for the full-rank class {name!r}", rank if B is None else "B")
        return TaskClass(name, d, L, frequency)
    if B is None:
        if rank is None:
            raise ParameterError("rank", f"an integer in [1, {d}] for the low-rank class {name!r}", rank)
        rank = check_int("rank", rank, minimum=1, maximum=d)
        B = np.eye(d)[:, :rank]
    else:
        B = np.asarray(B, dtype=np.float64)
        if B.ndim != 2 or B.shape[0] != d or not 1 <= B.shape[1] <= d or not np.all(np.isfinite(B)):
            raise ParameterError("B", f"a finite d x r matrix with d = {d} and 1 <= r <= {d}",
                                 f"array of shape {B.shape}")
        if not np.allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-10):
            raise ParameterError("B", "a matrix with orthonormal columns (B^T B = I)", "B^T B != I")
        if rank is not None and check_int("rank", rank, minimum=1) != B.shape[1]:
            raise ParameterError("rank", f"equal to the number of columns of B ({B.shape[1]})", rank)
    return TaskClass(name, d, L, frequency, B)


def relu_kernel(a, b) -> np.ndarray:
    """``kappa(a, b) = E_u[(u.a)_+ (u.b)_+] = |a||b| (sin th + (pi - th) cos th) / (2 pi m)``,
    ``u`` uniform on ``S^{m-1}``, ``th`` the angle between ``a`` and ``b`` (arc-cosine kernel of
    degree one, scaled by ``E||g||^2 = m`` from the Gaussian version)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m = a.shape[-1]
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    denom = np.where(na * nb > 0, na * nb, 1.0)
    cos = np.clip(np.sum(a * b, axis=-1) / denom, -1.0, 1.0)
    th = np.arccos(cos)
    return na * nb * (np.sin(th) + (np.pi - th) * cos) / (2.0 * np.pi * m)


def sphere_characteristic(m: int, r) -> np.ndarray:
    """``Psi_m(r) = E[cos(r u_1)] = Gamma(m/2) (2/r)^(m/2-1) J_{m/2-1}(r)``, ``u`` uniform on
    ``S^{m-1}`` (``cos r`` for ``m = 1``; ``1`` at ``r = 0``)."""
    r = np.abs(np.asarray(r, dtype=np.float64))
    nu = 0.5 * m - 1.0
    small = r < 1e-8
    rs = np.where(small, 1.0, r)
    value = np.exp(special.gammaln(0.5 * m) + nu * np.log(2.0 / rs)) * special.jv(nu, rs)
    return np.where(small, 1.0 - r * r / (2.0 * m), value)
