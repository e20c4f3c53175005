"""The certified inner integrals do not depend on how they are computed: the groups' columns read by position
or by selecting products (:data:`lipschitz_icl.certified.laplace.PICK_FROM`), a row type's factors folded into
its kernel or applied to its values (:func:`lipschitz_icl.certified.laplace.folds`) are choices of speed; every
ball of one way must overlap the other's, with the same radius to a fraction of itself."""

from __future__ import annotations

import pytest
from flint import arb

from lipschitz_icl.certified import arithmetic, laplace, loss


def _grid(task: str, w: float, order: int):
    kernel = loss.kernel_of(task, 3, 1.0)
    return loss.design(kernel, (w, w), (1000, 1000), order=order, rtol=1e-6).theta_grid()


def _balls(rows: list) -> list:
    out = []
    for row in rows:
        out += [row.om, row.psi]
        for name in sorted(row.groups, key=str):
            out += list(row.groups[name])
        for j in sorted(row.Y):
            out += [row.Y[j][c] for c in sorted(row.Y[j])]
    return out


def _agree(a: list, b: list) -> None:
    assert len(a) == len(b) and a
    for x, y in zip(a, b):
        assert x.overlaps(y)
        rx, ry = float(x.rad()), float(y.rad())
        assert abs(rx - ry) <= 1e-6 * max(rx, ry) + 1e-300


@pytest.mark.parametrize("task, order", [("relu", 1), ("affine", 2)])
def test_the_inner_integrals_are_the_same_whichever_way_the_columns_and_factors_go(monkeypatch, task, order):
    w = arb(5)
    points = [arb(x) for x in (-3.5, 0.0, 1.5, 4.0)]
    balls = [arithmetic.interval(a, a + 0.5) for a in (-3.9, 1.0)]
    series_points = [arb(x) for x in (-8.0, -4.5)]
    results = []
    for pick_from, fold in ((0, True), (10**9, False)):  # picks and folded kernels; selecting products, scaled values
        monkeypatch.setattr(laplace, "PICK_FROM", pick_from)
        monkeypatch.setattr(laplace, "folds", lambda *args, fold=fold: fold)
        grid = _grid(task, 5.0, order)
        assert bool(grid.selectors) == (pick_from > 0)
        series = laplace.exponential_moments(grid, w, 2 * grid.order + 3 + laplace.SERIES_TERMS)
        results.append(
            _balls(laplace.direct_rows(grid, w, points))
            + _balls(laplace.direct_rows(grid, w, balls, ball=True))
            + _balls(laplace.series_rows(grid, series, series_points))
        )
    _agree(*results)
