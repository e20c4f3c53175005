"""The base of every task class: :class:`TaskFamily`, what a task distribution answers, and its facts.

Every class has the form ``f(x) = theta . phi_u(x) + b``: a random *direction* ``u`` (or ``a``), a
feature map ``phi_u``, coefficients ``theta`` with ``E[theta] = 0`` and ``E[theta theta^T] = v I``,
and an intercept ``b`` (``b ~ U[-L, L]`` where the class has one).  The intercept cancels in
``f(x_i) - f(q)`` because the softmax weights sum to one, so for any weights ``p``

    E_theta[(sum_i p_i f(x_i) - f(q))^2 | u] = v || sum_i p_i phi_u(x_i) - phi_u(q) ||^2.      (*)

A class is a frozen dataclass with fields ``d``, ``L`` (and ``B`` for low-rank classes, one field per
extra parameter such as ``frequency``) and class-level facts:

======================  ========================================================================
``name``                the registry key (:data:`lipschitz_icl.tasks.registry.TASKS`) and the CLI's ``--task``
``rotation_invariant``  the law of ``f`` is invariant under rotations: ``E_f[f(x) f(y)] = K(x.y)``,
                        the class has a zonal kernel (:meth:`TaskFamily.zonal_kernel`), ``w*``, the
                        reduced Monte Carlo form and the exact method apply
``has_intercept``       ``f`` carries ``b ~ U[-L, L]`` (variance ``L^2/3``; seen by linear attention)
``low_rank``            ``f`` depends on ``x`` through ``B^T x`` (``B``: ``d x r``, orthonormal columns)
``parameters``          extra real parameters: ``{name: (default, minimum, maximum)}``
``quadrature``          the kernel form that the dedicated quadrature (:mod:`lipschitz_icl.exact.quadrature`)
                        and the large-``n`` formula (:mod:`lipschitz_icl.loss.asymptotic`) implement:
                        ``"linear"`` (``K`` linear in ``t``) or ``"arc-cosine"``; ``None``: the exact
                        method is the zonal series (:mod:`lipschitz_icl.exact.zonal`)
``has_kink``            ``f`` has a kink through the query's direction: the reduced form samples
                        ``c = u.q`` near 0 more often (importance weights, :meth:`reduced_features`)
======================  ========================================================================

A subclass supplies :meth:`draw_coefficients` and :meth:`link` (``f`` from the projection ``s = u.x``),
:meth:`scalar_features` (the features of (*)) and

* when rotation-invariant, its kernel once, as a SymPy expression in ``t``: :meth:`kernel_form`.  The numeric
  kernel (``K(1)``, ``D(u) = K(1) - K(1 - u)``) and the covariance :meth:`covariance` are derived from it
  (:mod:`lipschitz_icl.tasks.kernel_form`); a class may give a numeric ``D`` of its own for accuracy or speed
  (:meth:`kernel_gap`), which is checked against the form before use, as are ``K(1) > 0`` and positive
  definiteness (Schoenberg);
* otherwise (low-rank classes), its covariance :meth:`link_covariance`.

:meth:`task_lipschitz` defaults to ``L`` for every task.  :mod:`lipschitz_icl.tasks.admission` says what a class
must pass to be registered.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Protocol

import numpy as np

from lipschitz_icl.sphere import laws
from lipschitz_icl.validation import ParameterError, check_int, check_real

__all__ = [
    "Features",
    "Task",
    "TaskPrior",
    "TaskFamily",
    "EXACT_ROUTES",
    "QUADRATURE_FORMS",
    "class_kernel",
]

# kernel forms with a dedicated quadrature (lipschitz_icl.exact.quadrature) and large-n formula
# (lipschitz_icl.loss.asymptotic): K linear in t (affine), the arc-cosine kernel (relu)
QUADRATURE_FORMS = ("linear", "arc-cosine")
# exact routes (TaskFamily.exact_route): the dedicated quadrature of the class's kernel form, or the
# Gegenbauer series of any zonal kernel
EXACT_ROUTES = ("quadrature", "zonal")


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


class TaskPrior(Protocol):
    """What a problem asks of its task distribution: a :class:`TaskFamily`, or a prior given by its zonal
    kernel alone (:class:`lipschitz_icl.tasks.zonal_class.ZonalTaskClass`)."""

    @property
    def d(self) -> int: ...
    @property
    def L(self) -> float: ...
    @property
    def name(self) -> str: ...
    @property
    def rotation_invariant(self) -> bool: ...
    @property
    def has_intercept(self) -> bool: ...
    @property
    def low_rank(self) -> bool: ...
    @property
    def quadrature(self) -> str | None: ...
    @property
    def has_kink(self) -> bool: ...
    @property
    def exact_route(self) -> str | None: ...
    @property
    def B(self) -> np.ndarray | None: ...
    @property
    def frequency(self) -> float: ...
    @property
    def rank(self) -> int: ...
    def sample(self, rng: np.random.Generator, size: int) -> Task: ...
    def evaluate(self, params: dict, x: np.ndarray) -> np.ndarray: ...
    def task_lipschitz(self, params: dict) -> np.ndarray: ...
    def covariance(self, a: Any, b: Any) -> np.ndarray: ...
    def covariance_kernel(self) -> Any: ...
    def features(self, rng: np.random.Generator, x: np.ndarray, q: np.ndarray) -> Features: ...
    def reduced_features(
        self, rng: np.random.Generator, t: np.ndarray, *, kink_width: float | None = None
    ) -> Features: ...


@dataclass
class Task:
    """A batch of sampled tasks; ``task(x)`` evaluates ``f`` for ``x`` of shape ``(batch, ..., d)``."""

    task_class: TaskPrior
    params: dict

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.task_class.evaluate(self.params, np.asarray(x, dtype=np.float64))

    @property
    def lipschitz(self) -> np.ndarray:
        """Lipschitz constant of each sampled task on the sphere (at most ``L``)."""
        return self.task_class.task_lipschitz(self.params)


@dataclass(frozen=True)
class TaskFamily:
    """A task distribution on ``S^(d-1)`` with Lipschitz bound ``L`` (module docstring: the facts and the
    methods a subclass supplies).  Build instances with :func:`lipschitz_icl.tasks.registry.make_task_class`."""

    d: int
    L: float

    name: ClassVar[str] = ""
    rotation_invariant: ClassVar[bool] = False
    has_intercept: ClassVar[bool] = False
    low_rank: ClassVar[bool] = False
    parameters: ClassVar[dict] = {}
    quadrature: ClassVar[str | None] = None
    has_kink: ClassVar[bool] = False
    exact_route: ClassVar[str | None] = None  # derived (__init_subclass__), one of EXACT_ROUTES or None
    frequency = 1.0  # classes with a frequency: a field

    @property
    def B(self) -> np.ndarray | None:
        """``None``; low-rank classes override it with a field (``d x r``, orthonormal columns)."""
        return None

    # ----------------------------------------------------------------- structure
    @property
    def rank(self) -> int:
        """Rank ``r`` of ``B`` for low-rank classes, ``d`` otherwise."""
        return self.d if self.B is None else self.B.shape[1]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.exact_route = _exact_route(cls)

    def parameter_values(self) -> dict:
        """The extra parameters of this instance, ``{name: value}`` (see :attr:`parameters`)."""
        return {name: getattr(self, name) for name in self.parameters}

    # ----------------------------------------------------------------- what a subclass supplies
    def draw_coefficients(self, rng: np.random.Generator, size: int) -> dict:
        """The random coefficients of ``size`` tasks (drawn after the directions ``u``)."""
        return {}

    def link(self, s: np.ndarray, col: dict) -> np.ndarray:
        """``f`` from the projection ``s = u.x`` (a fresh array, may be overwritten) and the coefficients
        ``col`` (each of shape ``(batch, 1, ...)``)."""
        raise NotImplementedError

    def link_covariance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``E_f[f(a) f(b)]`` for points ``a``, ``b`` already projected (``B^T a``, ``B^T b``): the covariance of a
        class that is not rotation-invariant (a rotation-invariant class's comes from its :meth:`kernel_form`)."""
        raise NotImplementedError

    def scalar_features(self, s_x: np.ndarray, s_q: np.ndarray) -> Features:
        """Features of (*) from the projections ``s_x = u.x_i``, ``s_q = u.q``."""
        raise NotImplementedError

    # The project's own classes: their numeric D (kernel_gap) and K(1) (kernel_k1) are held to their SymPy form
    # by the test suite over a grid of d, L and parameters (tests/tasks/test_kernel_form.py), so a kernel is
    # built from them without SymPy (a numeric method never imports it); Schoenberg is still checked at every
    # build.  A registered class leaves this False: its kernel is derived from, or checked against, its form.
    numeric_forms_tested: ClassVar[bool] = False
    # the relative error of such a class's numeric D against its form (max over the tested grid; bounded there
    # by the same test): the rounding floor of its Schoenberg check
    numeric_gap_error: ClassVar[float] = 1e-16

    @classmethod
    def kernel_form(cls, d: int, L: float, **parameters):
        """The kernel ``K(t) = E_f[f(x) f(y)]``, ``t = x.y``, of a rotation-invariant class as a SymPy expression in
        the symbol ``t`` (``sympy.Symbol("t")``; numbers ``d``, ``L`` and the class's parameters substituted): the
        one statement of the kernel, from which :meth:`zonal_kernel` derives the rest."""
        raise ParameterError("task", "a rotation-invariant class (it has a zonal kernel)", cls.name)

    @classmethod
    def kernel_gap(cls, d: int, L: float, **parameters):
        """A vectorised NumPy ``D(u) = K(1) - K(1 - u)`` for ``u`` in ``[0, 2]``, more accurate or faster than the
        one derived from :meth:`kernel_form`; ``None`` (the default): derive it.  A given ``D`` is checked against
        the form (:func:`lipschitz_icl.tasks.kernel_form.class_kernel`)."""
        return None

    @classmethod
    def zonal_kernel(cls, d: int, L: float, **parameters):
        """The :class:`~lipschitz_icl.tasks.kernel.ZonalKernel` ``K(t)`` of a rotation-invariant class, built from
        :meth:`kernel_form` (and :meth:`kernel_gap`) and checked before use
        (:func:`lipschitz_icl.tasks.kernel_form.class_kernel`); a class does not override it."""
        if not cls.rotation_invariant:
            raise ParameterError("task", "a rotation-invariant class (it has a zonal kernel)", cls.name)
        if cls.numeric_forms_tested:
            return _tested_kernel(cls, d, L, parameters)
        from lipschitz_icl.tasks import kernel_form

        return kernel_form.class_kernel(cls, d, L, parameters)

    @classmethod
    def kernel_k1(cls, d: int, L: float, **parameters) -> float | None:
        """``K(1)`` as a double where the class states it beside its form (with :attr:`numeric_forms_tested`);
        ``None`` (the default): ``K(1)`` is read from :meth:`kernel_form`."""
        return None

    def task_lipschitz(self, params: dict) -> np.ndarray:
        """Per-task Lipschitz constant on the sphere (default: ``L`` for every task)."""
        return np.full(params["u"].shape[0], self.L)

    # ----------------------------------------------------------------- sampling and evaluation
    def sample(self, rng: np.random.Generator, size: int) -> Task:
        """Draw ``size`` tasks from the class (one ``Generator`` for reproducibility): the directions
        ``u`` on ``S^(r-1)``, then :meth:`draw_coefficients`."""
        size = check_int("size", size, minimum=1)
        params = {"u": laws.uniform_sphere(rng, size, self.rank)}
        params.update(self.draw_coefficients(rng, size))
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
        s = self._projection(params, x)  # a fresh array: the links work in place
        shape = (-1,) + (1,) * (s.ndim - 1)
        col = {key: np.reshape(value, shape) for key, value in params.items() if key != "u"}
        return self.link(s, col)

    # ----------------------------------------------------------------- exact moments
    def covariance(self, a, b) -> np.ndarray:
        """Exact ``E_f[f(a) f(b)]`` for points ``a``, ``b`` of the sphere (shape ``(..., d)``): ``K(a.b)`` of the
        kernel for a rotation-invariant class, else :meth:`link_covariance` (of ``B^T a``, ``B^T b`` for low-rank
        classes)."""
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if self.rotation_invariant:  # t = a.b, clipped to [-1, 1] against rounding (a.a = 1 + 2e-16)
            return self.covariance_kernel()(np.clip(np.sum(a * b, axis=-1), -1.0, 1.0))
        if self.B is not None:
            a, b = a @ self.B, b @ self.B
        return self.link_covariance(a, b)

    def covariance_kernel(self):
        """The zonal kernel of this instance (one object per class and arguments: its Gegenbauer
        coefficients are cached on it)."""
        parameters = tuple(sorted(self.parameter_values().items()))
        return class_kernel(type(self), self.d, self.L, parameters)  # type: ignore[arg-type]  # a class object is hashable (mypy checks the instances' __hash__)

    # ----------------------------------------------------------------- features for (*)
    def features(self, rng: np.random.Generator, x: np.ndarray, q: np.ndarray) -> Features:
        """Features of (*) for contexts ``x`` ``(batch, n, d)`` and queries ``q`` ``(batch, d)``; the
        direction ``u`` is drawn once per context from ``rng``."""
        task = self.sample(rng, x.shape[0])
        s_x = self._projection(task.params, x)
        s_q = self._projection(task.params, q[:, None, :])[:, 0]
        return self.scalar_features(s_x, s_q)

    def reduced_features(self, rng: np.random.Generator, t: np.ndarray, *, kink_width: float | None = None) -> Features:
        """Features of (*) for ``M = w I`` on a rotation-invariant class, from ``t_i = x_i . q`` alone.

        With ``q = e_1``, ``x_i = t_i e_1 + sqrt(1 - t_i^2) v_i`` (``v_i`` uniform on the unit sphere of
        ``e_1``'s complement) and the softmax weights depend on ``t`` only: draw ``c = u . q`` (law
        ``p_d``) and ``z_i`` (law of ``t`` in ``R^{d-1}``), so
        ``u . x_i = c t_i + sqrt(1 - c^2) sqrt(1 - t_i^2) z_i``: cost ``O(n)`` per context whatever ``d``.

        ``kink_width`` (classes with :attr:`has_kink`): draw ``c`` instead from
        ``g = (p_d + U[-delta, delta]) / 2`` with ``delta = kink_width`` and weight each context by
        ``p_d(c) / g(c) <= 2`` (importance sampling; unbiased for any ``delta``): the bias of a kinked
        class lives where ``|c| < ~1/sqrt(w)``, the kink of the query's own value, and plain draws of
        ``c`` rarely land there when ``w`` is large.
        """
        if not self.rotation_invariant:
            raise ParameterError("task", "a rotation-invariant class for the reduced form", self.name)
        t = np.asarray(t, dtype=np.float64)
        shape = t.shape[:-1]
        weight = None
        if self.has_kink and kink_width is not None:
            delta = check_real("kink_width", kink_width, minimum=0.0, strict_minimum=True, maximum=1.0)
            c = laws.sample_t(rng, self.d, shape)
            near = rng.random(shape) < 0.5
            c = np.where(near, rng.uniform(-delta, delta, shape), c)
            p = laws.t_density(c, self.d)
            weight = p / (0.5 * p + 0.5 * (np.abs(c) < delta) / (2.0 * delta))
        else:
            c = laws.sample_t(rng, self.d, shape)
        z = laws.sample_t(rng, self.d - 1, t.shape)
        s_x = c[..., None] * t + np.sqrt(1.0 - c * c)[..., None] * np.sqrt(np.clip(1.0 - t * t, 0.0, None)) * z
        features = self.scalar_features(s_x, c)
        features.weight = weight
        return features


def _exact_route(cls) -> str | None:
    """The exact route, a class fact derived from the others: ``"quadrature"`` (a quadrature form), ``"zonal"``
    (rotation-invariant: the series of its kernel) or ``None`` (no exact method; also for facts that are not
    what they should be, which registration refuses with a reason)."""
    try:
        quadrature = cls.quadrature
        rotation_invariant = cls.rotation_invariant
    except Exception:  # an attribute that raises: refused with that reason at registration
        return None
    if isinstance(quadrature, str):
        return "quadrature"
    return "zonal" if rotation_invariant is True else None


def _tested_kernel(cls, d: int, L: float, parameters: dict) -> Any:
    """The kernel of a class whose numeric forms the test suite holds to its SymPy form
    (:attr:`TaskFamily.numeric_forms_tested`): ``D`` from :meth:`TaskFamily.kernel_gap`, ``K(1)`` from
    :meth:`TaskFamily.kernel_k1`, the SymPy form built on first read; ``K(1) > 0`` and Schoenberg checked."""
    from dataclasses import replace

    from lipschitz_icl.tasks.kernel import ZonalKernel, check_schoenberg, kernel_label

    label = kernel_label(cls.name, parameters)
    k1 = cls.kernel_k1(d, L, **parameters)
    gap = cls.kernel_gap(d, L, **parameters)
    if k1 is None or gap is None:
        raise ParameterError("task", "a class with numeric forms tested that states kernel_gap and kernel_k1", cls.name)

    def form():
        return cls.kernel_form(d, L, **parameters)

    kernel = ZonalKernel(label, d, float(k1), gap, form)
    check_schoenberg(kernel, relative_error=cls.numeric_gap_error)
    return replace(kernel, checked=True)


@lru_cache(maxsize=256)
def class_kernel(cls: type[TaskFamily], d: int, L: float, parameters: tuple) -> Any:
    """``cls.zonal_kernel(d, L, **parameters)``, one object per arguments (``parameters`` a sorted tuple of
    ``(name, value)``): its Gegenbauer coefficients are cached on it."""
    return cls.zonal_kernel(d, L, **dict(parameters))
