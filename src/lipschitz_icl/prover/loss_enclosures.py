"""Certified loss quantities of a bound variant over a box: ``w_star`` and ``icl_error`` (affine class).

At a point ``(d, n, L, sigma)`` the value is :func:`lipschitz_icl.certified.wstar.certified_wstar`: an
interval proved to hold the global minimiser ``w*`` over the search range, and the minimum loss
``icl_error = min_w L(w)`` (its ball).  Over a box, ``d`` and ``n`` must be single values (no
monotonicity in them is used) and two theorems give the enclosure from two corners:

* ``icl_error`` is nondecreasing in ``sigma`` and in ``L``: for every ``w`` the loss
  ``sigma^2 E[sum_i p_i^2] + (L^2/(3d)) E[...]`` is, and a minimum of nondecreasing functions is;
* ``w*`` depends on ``(sigma, L)`` only through ``r = sigma/L`` (``L(w) = L^2 (r^2 N(w) + B(w)/(3d))``)
  and is nonincreasing in ``r``: ``N = E[sum_i p_i^2]`` is strictly increasing in ``w``, so for
  ``r' > r`` with minimisers ``w'`` and ``w``, adding the two optimality inequalities gives
  ``(r'^2 - r^2)(N(w') - N(w)) <= 0``, i.e. ``w' <= w`` (monotone comparative statics).

Each certified ``w*`` costs tens of seconds, so a domain of loss quantities is practical for a few
boxes; a point where the ``w*`` proof does not close leaves its box undecided (never split further).
Relu and zonal kernels are not certified (refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flint import arb

from lipschitz_icl.certified import arithmetic
from lipschitz_icl.prover.domain import Box
from lipschitz_icl.prover.enclosures import NeedsSplit
from lipschitz_icl.validation import ParameterError

__all__ = ["LossQuantity", "loss_quantity", "LOSS_QUANTITIES"]

LOSS_QUANTITIES = ("w_star", "icl_error")


@dataclass
class LossQuantity:
    """``w_star`` or ``icl_error`` of the affine class as a prover quantity (module docstring)."""

    name: str
    task: str = "affine"
    params: tuple = ("d", "n", "L", "sigma")
    cache: dict = field(default_factory=dict)
    corners_only = True  # the prover tests corners for counterexamples, not a new midpoint

    def check_domain(self, domain) -> None:
        if "w" in domain.pieces:
            raise ParameterError("w", f"absent for {self.name} (it is optimised over w)", "w")

    def _certified(self, point: dict):
        key = (point["d"], point["n"], point["L"], point["sigma"])
        if key not in self.cache:
            from lipschitz_icl.certified.wstar import certified_wstar

            self.cache[key] = certified_wstar(point["d"], point["n"], point["sigma"], point["L"])
        return self.cache[key]

    def value(self, point: dict) -> arb:
        result = self._certified(point)
        if not result.decided:
            raise NeedsSplit(None, f"the certified w* did not close at {point}: {result.info.get('reason')}")
        low, high = (result.low, result.high) if self.name == "w_star" else (result.loss_low, result.loss_high)
        return arithmetic.interval(low, high)

    def corners(self, box: Box) -> tuple:
        """The corners where the quantity is smallest and largest (module docstring)."""
        for name in ("d", "n"):
            if not box.is_point(name):
                raise NeedsSplit(name, f"no monotonicity in {name} is used here")
        if self.name == "icl_error":
            return box.corner({"sigma": -1, "L": -1}), box.corner({"sigma": 1, "L": 1})
        return box.corner({"sigma": 1, "L": -1}), box.corner({"sigma": -1, "L": 1})

    def enclose(self, box: Box) -> arb:
        smallest, largest = self.corners(box)
        return self.value(smallest).union(self.value(largest))


def loss_quantity(name: str, task: str | None) -> LossQuantity:
    """The certified loss quantity ``name`` of ``task`` (affine only)."""
    if name not in LOSS_QUANTITIES:
        raise ParameterError(
            "quantity",
            "one of the certified quantities: cap_tail, projection_tail, "
            "projection_lower_tail, binomial_tail, binomial_lower_tail, w_star, icl_error",
            name,
        )
    if task != "affine":
        raise ParameterError("task", f"affine for {name} in `prove` (relu and zonal kernels are not certified)", task)
    return LossQuantity(name, task)
