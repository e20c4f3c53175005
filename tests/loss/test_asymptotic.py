"""The asymptotic method states its regime: the large-``n`` loss is refused outside it (naming the smallest ``n``
inside), and inside it each part's stated error holds the exact loss (:mod:`lipschitz_icl.loss.asymptotic`; the
large-``n`` limit itself is held against Monte Carlo and the exact method in ``loss/test_estimators.py`` and
``exact/test_route.py``)."""

import json
import math

import mpmath
import pytest

from lipschitz_icl import make_problem
from lipschitz_icl.cli import main
from lipschitz_icl.derivations.window_law import delta_method_noise_correction
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.loss.asymptotic import REGIME_LIMIT, asymptotic_loss, large_n_model, regime
from lipschitz_icl.validation import ParameterError


def _log_phi(d, w):
    """``log Phi_d(w)`` at 40 digits (Bessel form), an independent reference."""
    with mpmath.workdps(40):
        nu = mpmath.mpf(d) / 2 - 1
        w = mpmath.mpf(w)
        return mpmath.log(mpmath.gamma(mpmath.mpf(d) / 2) * (2 / w) ** nu * mpmath.besseli(nu, w))


@pytest.mark.parametrize("d, w", [(3, 2.0), (5, 20.0), (50, 1.0), (50, 10.0)])
def test_the_next_order_noise_term_is_the_derived_one(d, w):
    """``noise_next`` is ``delta_method_noise_correction`` (``3R^2 - 2 m3/m1^3 - R``) over ``n R``."""
    import sympy as sp

    expr = delta_method_noise_correction()
    m1, m2, m3 = (mpmath.exp(_log_phi(d, k * w)) for k in (1, 2, 3))
    symbols = {str(s): s for s in expr.free_symbols}
    value = expr.subs({symbols["m1"]: m1, symbols["m2"]: m2, symbols["m3"]: m3})
    n = 1000
    expected = abs(float(sp.N(value, 30))) / (n * float(m2 / m1**2))
    assert regime(d, n, w).noise_next == pytest.approx(expected, rel=1e-9)
    assert 1.0 / regime(d, n, w).window_points == pytest.approx(float(m2 / m1**2) / n, rel=1e-12)


def test_rho_scales_as_one_over_n_and_n_min_is_the_edge():
    where = regime(3, 2, 50.0)
    assert regime(3, 4, 50.0).rho == pytest.approx(where.rho / 2, rel=1e-12)
    assert not where.inside and regime(3, where.n_min, 50.0).inside
    assert not regime(3, where.n_min - 2, 50.0).inside
    assert regime(3, 10**6, 0.0).rho == pytest.approx(1e-6)  # at w = 0: R = 1, no next-order term
    assert regime(512, 10**150, 1e8).noise_next == math.inf  # R_3 beyond a double: outside, not an overflow


@pytest.mark.parametrize(
    "task, d, n, w, exact",
    [
        ("affine", 3, 2, 50.0, 1.127),  # gave noise 25 > sigma^2 = 1 with a zero-width interval
        ("relu", 10, 2, 100.0, 1.02),  # gave 162685
    ],
)
def test_far_outside_its_regime_the_loss_is_refused_naming_n(task, d, n, w, exact):
    problem = make_problem(task, d, n, 1.0, 1.0)
    with pytest.raises(ParameterError, match=r"'n' must be >= [0-9.e+]+ for the asymptotic method.*--method exact"):
        asymptotic_loss(problem, w)
    assert large_n_model(problem, w).loss.value > 10 * exact  # the model itself is still there, far off


POINTS = [  # (task, d, n, w): inside the regime, exact quadrature in milliseconds to a second
    ("affine", 2, 30, 1.0),
    ("affine", 2, 1000, 100.0),
    ("affine", 3, 1000, 30.0),
    ("affine", 5, 10**4, 10.0),
    ("affine", 20, 10**6, 10.0),
    ("affine", 50, 1000, 3.0),
    ("relu", 2, 10**4, 30.0),
    ("relu", 3, 1000, 10.0),
    ("relu", 5, 10**4, 10.0),
    ("relu", 10, 10**6, 10.0),
]


@pytest.mark.parametrize("task, d, n, w", POINTS)
def test_inside_its_regime_the_stated_error_holds_the_exact_loss(task, d, n, w):
    """Each part's ``abs_error`` (twice the estimated dropped terms) holds the exact part, a sample of the 238
    points measured in the module docstring."""
    problem = make_problem(task, d, n, 1.0, 1.0)
    asym = asymptotic_loss(problem, w)
    exact = exact_loss(problem, w, rtol=1e-9)
    assert asym.info["regime"] <= REGIME_LIMIT
    for part in ("bias", "noise", "loss"):
        a, e = getattr(asym, part), getattr(exact, part)
        assert abs(a.value - e.value) <= a.abs_error + e.abs_error, (part, a, e)
        assert a.abs_error > 0


def test_the_cli_refuses_outside_and_reports_rho_inside(capsys):
    base = ["loss", "--task", "affine", "--d", "3", "--L", "1", "--sigma", "1", "--method", "asymptotic"]
    assert main([*base, "--n", "2", "--w", "50"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lipschitz-icl: error: --n: must be >= ") and "--method exact" in err
    assert main([*base, "--n", "100000", "--w", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert 0 < out["regime"] <= REGIME_LIMIT and out["ci_low"] < out["loss"] < out["ci_high"]
