"""The trusted base of the prover and of its checker: each certified quantity named with its enclosure.

Everything the prover proves rests on this table and on the functions it names; the search
(:mod:`lipschitz_icl.prover.search`) and the checker (:mod:`lipschitz_icl.prover.checker`) both read it,
and nothing else decides what a quantity is.  An entry of :data:`QUANTITIES` is a :class:`Quantity`:

* ``params``: its parameters, each with the range where the formula is valid (:data:`PARAMETERS`);
* ``value``: the certified ball at a point, a function of :mod:`lipschitz_icl.certified` (the laws of
  :mod:`lipschitz_icl.certified.laws`, the certified loss of :mod:`lipschitz_icl.certified.loss`); or, for a
  *witnessed* quantity (``w_star``, ``icl_error``), ``witness_value``: the ball at a point shown by checking a
  *witness* given with it, a ``w*`` proof (:func:`lipschitz_icl.certified.wstar_proof.verify`).  The table
  never searches for a witness: the search finds it (:mod:`lipschitz_icl.prover.witness`), the certificate
  carries it, and the checker verifies it here;
* ``extremes``: a theorem, the two points of a box where the quantity is smallest and largest (proofs
  below), so that every value on the box lies between ``value(smallest)`` and ``value(largest)``
  (:meth:`Quantity.enclose`); a parameter in which no theorem is used must be a single value on the box,
  else :class:`NoEnclosure` names it;
* ``domain_rule``: what the formula needs of a whole domain beyond the ranges (``k <= d``).

A statement ``w_star <= B`` (or ``>=``) on a whole box -- ``n``, ``sigma`` and ``L`` intervals, one ``d`` --
needs no enclosure of ``w*``: :func:`one_sided_holds` checks a one-sided ``w*`` proof of the box, a walk from a
window ``B'`` at or inside the bound outwards (:func:`lipschitz_icl.certified.wstar_proof.verify_bound`, on the
certified loss over the box).

Adding a quantity is one entry here: its parameters, its certified value function and its extremes
(with the proof of the monotonicity in this docstring).  A quantity enclosed directly on a box (say
the loss with ``n`` an interval) gives ``extremes = whole_box`` and a ``value`` that encloses a box.

Proofs (couplings: ``x = g / |g|`` with ``g`` standard Gaussian in ``R^d``; rotation invariance lets a
rank-``k`` projector be the coordinate projector onto the first ``k`` coordinates; ``N = #{i <= n: U_i <=
p}`` with ``U_i`` i.i.d. uniform on ``[0, 1]``):

* cap ``P(t >= h)``, ``t = x . q = g_1 / |g|``: a tail probability, so nonincreasing in ``h``; ``|g|``
  grows with ``d`` (more coordinates), so ``|t|`` is pointwise nonincreasing in ``d``; for ``h >= 0``,
  ``P(t >= h) = P(|t| >= h) / 2`` is nonincreasing in ``d``, for ``h <= 0``,
  ``P(t >= h) = 1 - P(|t| > -h) / 2`` is nondecreasing in ``d`` (``t`` is symmetric).  On a box, the
  quantity is at least its value at ``h_hi`` and at most its value at ``h_lo`` (for every ``d``), and at
  those two heights the extreme ``d`` is ``d_hi`` where the height is ``>= 0`` (smallest) or ``<= 0``
  (largest), else ``d_lo``; so a box whose ``h`` straddles 0 is enclosed too.
* projection ``||P x||^2 = sum_{i <= k} g_i^2 / sum_{i <= d} g_i^2``: pointwise nondecreasing in ``k``
  and nonincreasing in ``d``; the upper tail ``P(||Px||^2 >= s)`` is nonincreasing in ``s``, the lower
  tail ``P(||Px||^2 <= s)`` nondecreasing in ``s`` (the mirror in ``k`` and ``d``).
* binomial ``N``: pointwise nondecreasing in ``p`` and in ``n``; ``P(N >= a)`` is nonincreasing in ``a``,
  ``P(N <= a)`` nondecreasing in ``a`` (the mirror in ``p`` and ``n``).
* ``icl_error = min_w L(w)`` (classes :data:`LOSS_TASKS`, whose kernels scale with ``L^2``) is nondecreasing
  in ``sigma`` and in ``L``: for every ``w`` the loss ``sigma^2 E[sum_i p_i^2] + L^2 B(w)`` is (``B >= 0``,
  the bias of the kernel at ``L = 1``), and a minimum of nondecreasing functions is.
* ``w*`` depends on ``(sigma, L)`` only through ``r = sigma/L`` (``L(w) = L^2 (r^2 N(w) + B(w))``)
  and is nonincreasing in ``r``: ``N = E[sum_i p_i^2]`` is strictly increasing in ``w``, so for
  ``r' > r`` with minimisers ``w'`` and ``w``, adding the two optimality inequalities gives
  ``(r'^2 - r^2)(N(w') - N(w)) <= 0``, i.e. ``w' <= w``: nonincreasing in ``sigma``, nondecreasing in
  ``L``.  No monotonicity in ``d`` or ``n`` is used for the loss quantities.
* ``bias``, ``noise``, ``loss`` (``= bias + noise``, the ICL error of ``M = w I``) and their ``w``-derivatives
  ``dbias_dw``, ``dnoise_dw``, ``dloss_dw`` at ``w`` (classes :data:`LOSS_TASKS`): no theorem is used; the
  value encloses a whole box itself (``extremes = whole_box``): :func:`lipschitz_icl.certified.loss.enclose`
  and :func:`~lipschitz_icl.certified.loss.enclose_on_w_range` (the ball at the centre of the ``w`` range
  widened by the half-width times a certified bound of the next ``w``-derivative: the mean value theorem)
  hold the quantity at every point of a box of ``w``, ``sigma``, ``L`` and real ``n`` (``n`` enters
  analytically, so an integer range ``{a..b}`` with ``a >= 5`` is enclosed as the real interval ``[a, b]``);
  ``d`` must be a single value on a box, and so must ``n`` below 5.
* ``dloss_dw_step``, the step in ``n`` of the loss's ``w``-derivative, ``dL/dw(w, n + 1) - dL/dw(w, n)``
  (classes :data:`LOSS_TASKS`): no theorem is used; on a box whose ``n`` runs over the integers ``{a..b}``
  (``a >= 5``) the value holds the step for every ``n`` of it (so ``n + 1`` reaches ``b + 1``) and every
  ``w``, ``sigma``, ``L`` of the box (:func:`lipschitz_icl.certified.loss.enclose_step_in_n`: the Gauss sums'
  Taylor models in ``n`` give the slope, the quadrature's error bound counts twice).  ``dloss_dw_step <= -C``
  on ``W x {a..b}`` is the decreasing differences of Topkis's theorem: every minimiser of the loss over ``W``
  is then nondecreasing in ``n`` on ``{a..b + 1}``; a claim that also proves ``w*`` inside ``W`` there has
  ``w*`` nondecreasing in ``n``.
* ``linear_error`` (the ICL error of the optimal linear attention, classes affine and relu): the closed form
  ``k(1) - B^2/a2`` of :mod:`lipschitz_icl.certified.linear`, nonincreasing in ``n`` and nondecreasing in
  ``sigma`` and ``L`` (proved in that module's docstring); ``d`` a single value on a box.

Each certified ``w*`` point costs seconds to tens of seconds (``costly``: the search tests only the corners it has
already enclosed for counterexamples); a point without a witness, or whose witness does not check, has no
enclosure.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from flint import arb

from lipschitz_icl.certified import arithmetic, laws
from lipschitz_icl.problem import L_RANGE, SIGMA_MAX
from lipschitz_icl.validation import ParameterError

__all__ = [
    "Parameter",
    "PARAMETERS",
    "Quantity",
    "QUANTITIES",
    "NoEnclosure",
    "LOSS_TASKS",
    "lookup",
    "one_sided_holds",
    "point_key",
    "whole_box",
]


@dataclass(frozen=True)
class Parameter:
    """A parameter of a quantity: an integer or a real, in ``[minimum, maximum]`` (``(minimum, maximum]``
    when ``open_minimum``)."""

    name: str
    integer: bool
    minimum: float
    maximum: float
    open_minimum: bool = False

    def admits(self, value) -> bool:
        """``value`` lies in the range (for an integer parameter: an ``int``, never a ``bool`` or float)."""
        if isinstance(value, bool) or not isinstance(value, int if self.integer else (int, float)):
            return False
        above = value > self.minimum if self.open_minimum else value >= self.minimum
        return bool(above and value <= self.maximum)

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a real number"
        opening = "(" if self.open_minimum else "["
        return f"{kind} in {opening}{self.minimum:g}, {self.maximum:g}]"


PARAMETERS = {
    "d": Parameter("d", True, 2, 512),
    "k": Parameter("k", True, 1, 512),
    "n": Parameter("n", True, 1, 10**15),
    "a": Parameter("a", True, 0, 10**15),
    "h": Parameter("h", False, -1.0, 1.0),
    "s": Parameter("s", False, 0.0, 1.0),
    "t": Parameter("t", False, -1.0, 1.0),
    "p": Parameter("p", False, 0.0, 1.0),
    "L": Parameter("L", False, L_RANGE[0], L_RANGE[1]),
    "sigma": Parameter("sigma", False, 0.0, SIGMA_MAX, open_minimum=True),
    "w": Parameter("w", False, 0.0, 1e8, open_minimum=True),
}


class NoEnclosure(Exception):
    """The quantity has no enclosure on this box until ``param`` is narrowed to a single value (no
    monotonicity in it is used); ``param`` None: no narrowing helps (e.g. a ``w*`` proof that did not close)."""

    def __init__(self, param: str | None, reason: str):
        super().__init__(reason)
        self.param = param
        self.reason = reason


Ranges = Mapping[str, "tuple | list"]  # parameter -> (lo, hi); a point has lo == hi
Point = dict


def point_key(point: Mapping) -> tuple:
    """The key of a point in a mapping of witnesses: its ``(name, value)`` pairs in name order."""
    return tuple(sorted(point.items()))


def _corner(box: Ranges, upper) -> Point:
    """The point of ``box`` at the upper end of every parameter named in ``upper``, at the lower end of the rest."""
    return {name: box[name][1] if name in upper else box[name][0] for name in box}


def whole_box(box: Ranges) -> tuple:
    """``extremes`` of a quantity whose ``value`` encloses a whole box itself."""
    return box, box


@dataclass(frozen=True)
class Quantity:
    """A certified quantity (module docstring): its parameters, certified value and extremes theorem."""

    name: str
    params: tuple[Parameter, ...]
    value: Callable[[Point], arb]
    extremes: Callable[[Ranges], tuple]
    task: str | None = None
    costly: bool = False
    domain_rule: Callable[[dict], str | None] = lambda pieces: None
    tasks: tuple[str, ...] = ()  # a quantity of several classes (``task_value``), bound to one by ``for_task``
    task_value: Callable[[Point, str], arb] | None = None
    witness_value: Callable[[Point, str, object], arb] | None = None  # a witnessed quantity (module docstring)

    @property
    def witnessed(self) -> bool:
        return self.witness_value is not None

    def for_task(self, task: str) -> Quantity:
        """This quantity of the class ``task`` (one of :attr:`tasks`): ``value`` computes for that class."""
        task_value = self.task_value
        if task not in self.tasks or (task_value is None and self.witness_value is None):
            raise ParameterError("task", f"one of {', '.join(self.tasks)} for {self.name}", task)
        if task_value is None:  # a witnessed quantity: its values come from witnesses (:meth:`value_at`)
            return dataclasses.replace(self, task=task)

        def value(point: Point) -> arb:
            return task_value(point, task)

        return dataclasses.replace(self, task=task, value=value)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def parameter(self, name: str) -> Parameter:
        for parameter in self.params:
            if parameter.name == name:
                return parameter
        raise ParameterError(name, f"a parameter of {self.name} (one of {', '.join(self.names)})", name)

    def value_at(self, point: Point, witnesses: Mapping | None = None) -> arb:
        """The certified ball at ``point``: :attr:`value`, or for a witnessed quantity the ball its witness
        shows (``witnesses`` maps :func:`point_key` of a point to the witness's JSON form).  Raises
        :class:`NoEnclosure` (no witness for the point, or one that does not check)."""
        if self.witness_value is None:
            return self.value(point)
        witness = None if witnesses is None else witnesses.get(point_key(point))
        if witness is None:
            raise NoEnclosure(None, f"no {self.name} proof is given at the point {dict(point)}")
        if self.task is None:
            return _no_task()
        return self.witness_value(point, self.task, witness)

    def enclose(self, box: Ranges, witnesses: Mapping | None = None) -> tuple[arb, arb]:
        """``(low, high)``: balls holding the quantity's values at its two extremes on ``box`` (ranges of all
        its parameters), so every value on the box lies between ``low``'s lower end and ``high``'s upper
        end.  Two balls, not their union: a union ``[0, 1]`` is a ball whose upper end passes 1, while
        ``high`` keeps an exact end value (the cap probability is exactly 1 at ``h = -1``).  A witnessed
        quantity needs the witnesses of the two extremes (:meth:`value_at`).  Raises :class:`NoEnclosure`."""
        smallest, largest = self.extremes(box)
        low = self.value_at(smallest, witnesses)
        return (low, low) if smallest == largest else (low, self.value_at(largest, witnesses))


# ----------------------------------------------------------------------------- the extremes theorems
def _cap_extremes(box: Ranges) -> tuple:
    h_lo, h_hi = box["h"]
    smallest = _corner(box, ("h", "d") if h_hi >= 0 else ("h",))
    largest = _corner(box, ("d",) if h_lo <= 0 else ())
    return smallest, largest


def _monotone(up: tuple, down: tuple) -> Callable[[Ranges], tuple]:
    """Extremes of a quantity nondecreasing in ``up`` and nonincreasing in ``down``; any other parameter
    must be a single value on the box (no monotonicity in it is used: :class:`NoEnclosure` names it)."""

    def extremes(box: Ranges) -> tuple:
        for name, (lo, hi) in box.items():
            if lo != hi and name not in up and name not in down:
                raise NoEnclosure(name, f"no monotonicity in {name} is used here")
        return _corner(box, down), _corner(box, up)

    return extremes


def _ranks_within_dimension(pieces: dict) -> str | None:
    highest_k = max(hi for _, hi in pieces["k"])
    lowest_d = min(lo for lo, _ in pieces["d"])
    return None if highest_k <= lowest_d else "every k at most every d (a rank-k projector of R^d)"


# ----------------------------------------------------------------------------- the certified values
def _proof_value(name: str) -> Callable[[Point, str, object], arb]:
    """The ball of ``w*`` (``name = "w_star"``) or of the minimum loss (``"icl_error"``) of class ``task`` at a
    point, shown by the witness: a ``w*`` proof (its JSON form) checked by
    :func:`lipschitz_icl.certified.wstar_proof.verify` on the certified loss at that point; :class:`NoEnclosure`
    when it does not check (the reason names the failing test)."""

    def value(point: Point, task: str, witness: object) -> arb:
        text = json.dumps(witness, sort_keys=True)
        verified = _verified(task, point["d"], point["n"], float(point["sigma"]), float(point["L"]), text)
        if isinstance(verified, str):
            raise NoEnclosure(None, f"the w* proof at {dict(point)} does not check: {verified}")
        if name == "w_star":
            return arithmetic.interval(verified.low, verified.high)
        return arithmetic.interval(arithmetic.low(verified.loss_low), arithmetic.high(verified.loss_high))

    return value


@functools.lru_cache(maxsize=256)
def _verified(task: str, d: int, n: int, sigma: float, L: float, text: str):
    """The checked proof (:class:`~lipschitz_icl.certified.wstar_proof.Verified`) or the reason it fails (cached:
    a sharpest constant's parts and the two extremes of neighbouring boxes check the same proofs)."""
    from lipschitz_icl.certified import wstar_proof

    try:
        proof = wstar_proof.read_proof(json.loads(text))
        pieces = len(proof.left) + len(proof.right)
        objective = wstar_proof.Objective(
            _kernel(task, d), n, sigma, L, seconds=math.inf, evaluations=PROOF_EVALUATIONS + 4 * pieces
        )
        return wstar_proof.verify(objective, proof)
    except wstar_proof.ProofError as exc:
        return str(exc)
    except ParameterError as exc:  # the certified grid's budget refused an evaluation
        return f"an evaluation is beyond the certified budget: {exc}"


PROOF_EVALUATIONS = 8  # a w* proof's evaluations besides its pieces' (U, the bracket, the minimum)


LOSS_TASKS = ("affine", "relu", "cosine")  # cosine at frequency 1
_PARTS = {"bias": ("bias", 0), "noise": ("noise", 0), "loss": ("loss", 0)}
_PARTS.update({f"d{name}_dw": (part, 1) for name, (part, _) in list(_PARTS.items())})


@functools.lru_cache(maxsize=64)
def _kernel(task: str, d: int):
    from lipschitz_icl.certified.loss import kernel_of

    return kernel_of(task, d, 1.0)


def _ends(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def _loss_part_value(name: str) -> Callable[[Point, str], arb]:
    """The ball of quantity ``name`` (:data:`_PARTS`: its part and ``w``-derivative order) holding its value at
    every point of a box (each parameter a value or a range ``(lo, hi)``); :class:`NoEnclosure` names ``d``
    (or ``n`` below 5) when it is a range, and ``w`` (else nothing) when the certified grid is over budget.
    Balls are cached by box (a sharpest constant's bisection encloses the same boxes again), both parts at
    once (:func:`_loss_parts`)."""

    def value(point: Point, task: str) -> arb:
        ends = tuple((key, _ends(point[key])) for key in ("d", "n", "L", "sigma", "w"))
        return _loss_part_ball(name, task, ends)

    return value


def _loss_part_ball(name: str, task: str, ends: tuple) -> arb:
    try:  # one evaluation gives both parts, cached by box: the noise and bias quantities of a box share it
        return getattr(_loss_parts(task, _PARTS[name][1], ends), _PARTS[name][0])
    except ParameterError as exc:  # the certified grid's budget: a narrower w may fit it
        w = dict(ends)["w"]
        raise NoEnclosure("w" if w[0] != w[1] else None, f"{name}: {exc}") from None


@functools.lru_cache(maxsize=4096)
def _loss_parts(task: str, order: int, ends: tuple):
    from lipschitz_icl.certified.loss import enclose_on_w_range

    box = dict(ends)
    d_lo, d_hi = box["d"]
    if d_lo != d_hi:
        raise NoEnclosure("d", "no monotonicity in d is used: one d per box")
    n_lo, n_hi = box["n"]
    if n_lo != n_hi and n_lo < 5:
        raise NoEnclosure("n", "a range of n is enclosed as one real interval from n = 5 up")
    return enclose_on_w_range(
        _kernel(task, d_lo),
        box["w"],
        n_lo if n_lo == n_hi else (n_lo, n_hi),
        box["sigma"],
        box["L"],
        order=order,
    )


def _params(*names: str, **overrides: Parameter) -> tuple[Parameter, ...]:
    return tuple(overrides.get(name, PARAMETERS[name]) for name in names)


_LOSS_PARAMS = _params("d", "n", "L", "sigma", n=Parameter("n", True, 2, 10**15))
_LOSS_AT_W_PARAMS = _params("d", "n", "L", "sigma", "w", n=Parameter("n", True, 1, 10**15))

QUANTITIES = {
    "cap_tail": Quantity(
        name="cap_tail",
        params=_params("d", "h"),
        value=lambda q: laws.cap_probability(q["d"], q["h"]),
        extremes=_cap_extremes,
    ),
    "projection_tail": Quantity(
        name="projection_tail",
        params=_params("d", "k", "s"),
        value=lambda q: laws.projection_tail(q["d"], q["k"], q["s"]),
        extremes=_monotone(up=("k",), down=("d", "s")),
        domain_rule=_ranks_within_dimension,
    ),
    "projection_lower_tail": Quantity(
        name="projection_lower_tail",
        params=_params("d", "k", "s"),
        value=lambda q: laws.projection_lower_tail(q["d"], q["k"], q["s"]),
        extremes=_monotone(up=("d", "s"), down=("k",)),
        domain_rule=_ranks_within_dimension,
    ),
    "binomial_tail": Quantity(
        name="binomial_tail",
        params=_params("n", "a", "p"),
        value=lambda q: laws.binomial_tail(q["n"], q["a"], q["p"]),
        extremes=_monotone(up=("n", "p"), down=("a",)),
    ),
    "binomial_lower_tail": Quantity(
        name="binomial_lower_tail",
        params=_params("n", "a", "p"),
        value=lambda q: laws.binomial_lower_tail(q["n"], q["a"], q["p"]),
        extremes=_monotone(up=("a",), down=("n", "p")),
    ),
    "w_star": Quantity(
        name="w_star",
        params=_LOSS_PARAMS,
        value=lambda point: _no_task(),
        extremes=_monotone(up=("L",), down=("sigma",)),  # d and n single values
        costly=True,
        tasks=LOSS_TASKS,
        witness_value=_proof_value("w_star"),
    ),
    "icl_error": Quantity(
        name="icl_error",
        params=_LOSS_PARAMS,
        value=lambda point: _no_task(),
        extremes=_monotone(up=("L", "sigma"), down=()),  # d and n single values
        costly=True,
        tasks=LOSS_TASKS,
        witness_value=_proof_value("icl_error"),
    ),
}
QUANTITIES["linear_error"] = Quantity(
    name="linear_error",
    params=_params("d", "n", "L", "sigma"),
    value=lambda point: _no_task(),
    extremes=_monotone(up=("L", "sigma"), down=("n",)),  # d a single value
    tasks=("affine", "relu"),
    task_value=lambda point, task: _linear_error(task, point),
)
QUANTITIES.update(
    {
        name: Quantity(
            name=name,
            params=_LOSS_AT_W_PARAMS,
            value=lambda point: _no_task(),
            extremes=whole_box,
            tasks=LOSS_TASKS,
            task_value=_loss_part_value(name),
        )
        for name in _PARTS
    }
)


@functools.lru_cache(maxsize=4096)
def _loss_step_ball(task: str, ends: tuple) -> arb:
    """The ball of ``dloss_dw_step`` on a box (module docstring): ``n`` over ``{a..b}`` is the step's interval
    ``(a, b + 1)``; :class:`NoEnclosure` names ``d`` when it is a range, ``w`` (else nothing) when the
    certified grid is over budget."""
    from lipschitz_icl.certified.loss import enclose_step_in_n

    box = dict(ends)
    d_lo, d_hi = box["d"]
    if d_lo != d_hi:
        raise NoEnclosure("d", "no monotonicity in d is used: one d per box")
    n_lo, n_hi = (int(x) for x in box["n"])
    w = box["w"]
    try:
        step = enclose_step_in_n(
            _kernel(task, d_lo), w if w[0] != w[1] else w[0], (n_lo, n_hi + 1), box["sigma"], box["L"]
        )
    except ParameterError as exc:  # the certified grid's budget (w): a narrower w may fit it; else nothing to split
        split = "w" if w[0] != w[1] and exc.name == "w" else None
        raise NoEnclosure(split, f"dloss_dw_step: {exc}") from None
    return step.loss


def _loss_step_value(point: Point, task: str) -> arb:
    return _loss_step_ball(task, tuple((k, _ends(point[k])) for k in ("d", "n", "L", "sigma", "w")))


QUANTITIES["dloss_dw_step"] = Quantity(
    name="dloss_dw_step",
    params=_params("d", "n", "L", "sigma", "w", n=Parameter("n", True, 5, 10**15)),
    value=lambda point: _no_task(),
    extremes=whole_box,
    tasks=LOSS_TASKS,
    task_value=_loss_step_value,
)


def _linear_error(task: str, point: Point) -> arb:
    from lipschitz_icl.certified.linear import linear_error

    return linear_error(task, point["d"], point["n"], float(point["L"]), float(point["sigma"]))


def _no_task() -> arb:
    raise NoEnclosure(None, "a loss quantity is evaluated for a class (Quantity.for_task)")


def lookup(name: str, task: str | None = None) -> Quantity:
    """The certified quantity ``name`` of ``task`` (None for the tails); :class:`ParameterError` otherwise."""
    if not isinstance(name, str) or name not in QUANTITIES:
        raise ParameterError("quantity", "one of the certified quantities: " + ", ".join(QUANTITIES), name)
    quantity = QUANTITIES[name]
    if quantity.tasks:
        if not isinstance(task, str):
            raise ParameterError("task", f"one of {', '.join(quantity.tasks)} for {name}", task)
        return quantity.for_task(task)
    if task is not None:
        raise ParameterError("task", f"not given for {name} (a tail of the sphere, not a loss of a class)", task)
    return quantity


def one_sided_holds(quantity: Quantity, box: Ranges, relation: str, bound: arb, raw) -> None:
    """Check that the one-sided ``w*`` proof ``raw`` (its JSON form,
    :meth:`~lipschitz_icl.certified.wstar_proof.BoundProof.to_dict`) shows ``w_star <relation> bound`` at every
    point of ``box``: its side is the relation's (``upper`` for ``<=``), its window at or inside the bound's ball
    (``B' <= low(bound)`` for ``<=``, ``>= high(bound)`` for ``>=``), and its walk checks on the certified loss
    over the box (``d`` one value; ``n``, ``sigma``, ``L`` intervals).  :class:`NoEnclosure` names what fails;
    :class:`~lipschitz_icl.certified.wstar_proof.ProofError` from a malformed proof."""
    from lipschitz_icl.certified import wstar_proof

    if quantity.name != "w_star" or quantity.task is None:
        raise NoEnclosure(None, f"{quantity.name} has no one-sided proofs (w_star of a class has)")
    proof = wstar_proof.read_bound_proof(raw)
    side = "upper" if relation == "<=" else "lower"
    if proof.side != side:
        raise NoEnclosure(None, f"a one-sided proof of side {proof.side} for the relation {relation}")
    window = arithmetic.exact(proof.bound)
    if not (window <= bound if relation == "<=" else window >= bound):
        raise NoEnclosure(None, f"the proof's window {proof.bound!r} is not certainly {relation} the bound {bound}")
    d_lo, d_hi = box["d"]
    if d_lo != d_hi:
        raise NoEnclosure("d", "a one-sided w* proof is for one d")
    n, sigma, L = (lo if lo == hi else (lo, hi) for lo, hi in (box["n"], box["sigma"], box["L"]))
    failure = _verified_bound(quantity.task, d_lo, n, sigma, L, json.dumps(proof.to_dict(), sort_keys=True))
    if failure is not None:
        raise NoEnclosure(None, f"the one-sided w* proof on the box does not check: {failure}")


@functools.lru_cache(maxsize=256)
def _verified_bound(task: str, d: int, n, sigma, L, text: str) -> str | None:
    """None when the one-sided proof ``text`` checks on the box, else the reason (cached by the proof's text)."""
    from lipschitz_icl.certified import wstar_proof

    proof = wstar_proof.read_bound_proof(json.loads(text))
    try:
        objective = wstar_proof.Objective(
            _kernel(task, d), n, sigma, L, seconds=math.inf, evaluations=PROOF_EVALUATIONS + 4 * len(proof.walk)
        )
        wstar_proof.verify_bound(objective, proof)
    except wstar_proof.ProofError as exc:
        return str(exc)
    except ParameterError as exc:  # the certified grid's budget refused an evaluation
        return f"an evaluation is beyond the certified budget: {exc}"
    return None
