"""Zonal task priors: Gegenbauer polynomials and coefficients, the Schoenberg check, the exact zonal
loss against the affine/relu quadrature of :mod:`lipschitz_icl.exact` and against the independent
pairwise-kernel Monte Carlo of :mod:`lipschitz_icl.pairwise`, and the CLI for the new classes."""

import json
import zlib

import numpy as np
import pytest
from scipy import special

from lipschitz_icl import zonal
from lipschitz_icl.cli import main
from lipschitz_icl.exact import exact_loss
from lipschitz_icl.exact_zonal import zonal_loss
from lipschitz_icl.pairwise import pairwise_loss
from lipschitz_icl.problem import make_problem
from lipschitz_icl.validation import ParameterError
from lipschitz_icl.zonal_task import kernel_problem, mixture_problem, zonal_problem

MATERN = "(1 + sqrt(3)*sqrt(2-2*t)/ell)*exp(-sqrt(3)*sqrt(2-2*t)/ell)"
Z_TWO_SIDED = 3.9   # two-sided 1e-4 per comparison: a failure is a real disagreement, not bad luck


def _seed(name: str) -> int:
    """A fixed seed per comparison, from its name (not chosen by its outcome)."""
    return zlib.crc32(name.encode())


@pytest.mark.parametrize("d", [2, 3, 5, 8])
def test_gegenbauer_table_matches_scipy(d):
    t = np.linspace(-1, 1, 11)
    P = zonal.gegenbauer_table(d, t, 12)
    for l in range(13):
        ref = special.eval_chebyt(l, t) if d == 2 else \
            special.eval_gegenbauer(l, 0.5 * (d - 2), t) / special.eval_gegenbauer(l, 0.5 * (d - 2), 1.0)
        np.testing.assert_allclose(P[:, l], ref, atol=1e-13)


@pytest.mark.parametrize("d", [2, 3, 6])
def test_coefficients_reproduce_the_kernels(d):
    t = np.array([-0.95, -0.3, 0.2, 0.7, 0.999])
    affine = zonal.builtin_kernel("affine", d, 2.0)
    a = affine.coefficients(40)
    assert a[0] == pytest.approx(4.0 / 3.0, rel=1e-12) and a[1] == pytest.approx(4.0 / (3.0 * d), rel=1e-12)
    assert np.max(np.abs(a[2:])) < 1e-13
    for name in ("cosine", "relu"):
        k = zonal.builtin_kernel(name, d, 1.0, 1.5)
        a = zonal.check_schoenberg(k, 400)
        assert np.all(a > -zonal.rounding_floor(k, 400))
        series = zonal.gegenbauer_table(d, t, 400) @ a
        # cosine: analytic, the series converges geometrically; relu: a_l ~ l^-4 leaves ~ 400^-3
        np.testing.assert_allclose(series, k(t), atol=1e-12 if name == "cosine" else 1e-6)


def test_schoenberg_check_names_the_first_negative_coefficient(capsys):
    with pytest.raises(ParameterError, match="first negative coefficient a_0"):
        zonal.expression_kernel("2*t**2 - 1", 3)
    with pytest.raises(ParameterError, match="first negative coefficient a_1"):
        zonal.callable_kernel(lambda t: 1.0 - 0.5 * t, 4)
    assert main(["loss", "--kernel", "1 - 0.5*t", "--d", "3", "--n", "10", "--sigma", "0.3", "--w", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a_1" in err[0] and "--kernel" in err[0]


def test_kernel_is_given_by_its_scale_and_shape():
    with pytest.raises(ParameterError, match="'kernel'"):
        zonal.expression_kernel("exp(-sqrt(2-2*t)", 3)              # unbalanced: refused by the parser
    with pytest.raises(ParameterError, match="'kernel'"):
        zonal.expression_kernel("__import__('os')", 3)
    k = zonal.expression_kernel("exp(-sqrt(2-2*t)/ell)", 3, {"ell": 0.5})
    assert k(np.array([1.0, 0.0]))[1] == pytest.approx(np.exp(-np.sqrt(2) / 0.5), rel=1e-14)
    assert k.gap(np.array([1e-12]))[0] == pytest.approx(1 - np.exp(-np.sqrt(2e-12) / 0.5), rel=1e-12)


AGREEMENT = [(task, d, n, w) for task in ("affine", "relu") for d in (2, 3, 5)
             for n, w in ((1, 3.0), (10, 5.0), (100, 40.0), (10**6, 300.0), (10**14, 2e4), (10**14, 2e3))
             if not (task == "relu" and w > 1e4)]   # the relu matrix of lipschitz_icl.exact grows as w


@pytest.mark.parametrize("task,d,n,w", AGREEMENT)
def test_exact_zonal_agrees_with_the_exact_affine_and_relu(task, d, n, w):
    problem = make_problem(task, d, n, 1.3, 0.4)
    ref = exact_loss(problem, w)
    got = zonal_loss(problem, w)
    assert got.info["converged"]
    for part in ("bias", "noise"):
        assert getattr(got, part).value == pytest.approx(getattr(ref, part).value, rel=1e-6, abs=0)
        assert getattr(got, part).abs_error <= 1e-6 * getattr(got, part).value


CASES = [
    ("cosine k=2", lambda: make_problem("cosine", 3, 20, 1.0, 0.5, frequency=2.0), 6.0),
    ("cosine k=1 d=5", lambda: make_problem("cosine", 5, 10, 1.0, 0.3), 15.0),
    ("mixture", lambda: mixture_problem("mix:affine=1,relu=2,cosine=1", 3, 20, 1.0, 0.5), 8.0),
    ("exponential", lambda: kernel_problem("exp(-sqrt(2-2*t))", 3, 20, 0.5), 10.0),
    ("matern", lambda: kernel_problem(MATERN, 4, 15, 0.3, {"ell": 0.7}), 20.0),
    ("callable", lambda: zonal_problem(zonal.callable_kernel(lambda t: np.exp(2.0 * (t - 1)), 2), 25, 0.2), 30.0),
]


@pytest.mark.parametrize("name,make,w", CASES, ids=[c[0] for c in CASES])
def test_exact_zonal_agrees_with_pairwise_monte_carlo(name, make, w):
    problem = make()
    exact = zonal_loss(problem, w)
    mc = pairwise_loss(problem, w, contexts=3000, rng=_seed(name))
    for part in ("bias", "noise"):
        e, m = getattr(exact, part), getattr(mc, part)
        assert e.abs_error < 1e-6 * e.value
        assert abs(m.value - e.value) <= Z_TWO_SIDED * m.standard_error + e.abs_error, (part, m.value, e.value)


def test_cosine_pairwise_agrees_with_the_reduced_feature_estimator():
    """Two independent Monte Carlo routes (pairwise kernel; sampled tasks, reduced form) agree."""
    from lipschitz_icl.loss import icl_loss
    problem = make_problem("cosine", 3, 20, 1.0, 0.5, frequency=2.0)
    a = pairwise_loss(problem, 6.0, contexts=3000, rng=_seed("pairwise cos"))
    b = icl_loss(problem, 6.0, method="averaged", contexts=20000, rng=_seed("reduced cos"))
    assert abs(a.bias.value - b.bias.value) <= Z_TWO_SIDED * np.hypot(a.bias.standard_error, b.bias.standard_error)


def test_cli_wstar_and_loss_for_the_new_classes(tmp_path, capsys):
    base = ["--d", "3", "--n", "50", "--sigma", "0.3", "--json"]
    assert main(["wstar", "--task", "cosine", "--frequency", "2", "--L", "1", "--method", "exact", *base]) == 0
    cos = json.loads(capsys.readouterr().out)
    assert cos["method"] == "exact" and cos["w_star"] > 0
    assert main(["wstar", "--task", "mix:affine=1,relu=1", "--L", "1", "--method", "exact", *base]) == 0
    assert json.loads(capsys.readouterr().out)["w_star"] > 0
    path = tmp_path / "k.toml"
    path.write_text('kernel = "exp(-sqrt(2-2*t)/ell)"\n[constants]\nell = 2.0\n')
    assert main(["loss", "--kernel-file", str(path), "--w", "4", "--method", "exact", *base]) == 0
    via_file = json.loads(capsys.readouterr().out)
    assert main(["loss", "--kernel", "exp(-sqrt(2-2*t)/2)", "--w", "4", "--method", "exact", *base]) == 0
    assert json.loads(capsys.readouterr().out)["loss"] == pytest.approx(via_file["loss"], rel=1e-12)
    for bad in (["--kernel", "t", "--L", "1"], ["--task", "relu", "--frequency", "2", "--L", "1"],
                ["--task", "mix:affine=1,sine=1", "--L", "1"], ["--task", "cosine"], []):
        assert main(["loss", *bad, "--w", "4", *base]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_mixture_sampler_agrees_with_the_exact_mixture_loss():
    """Sampling the mixture (naive Monte Carlo: tasks, covariates, noise) against the class-by-class
    exact loss: an independent check of the mixture's sampler and of the weights."""
    from lipschitz_icl.loss import icl_loss
    problem = mixture_problem("mix:affine=1,relu=2,cosine=1", 3, 20, 1.0, 0.5)
    exact = zonal_loss(problem, 8.0)
    mc = icl_loss(problem, 8.0, method="naive", contexts=40000, rng=_seed("naive mixture"))
    assert abs(mc.loss.value - exact.loss.value) <= Z_TWO_SIDED * mc.loss.standard_error + exact.loss.abs_error


def test_cli_train_accepts_mixtures_and_cosine_frequency(capsys):
    base = ["--d", "3", "--n", "10", "--L", "1", "--sigma", "0.5", "--steps", "20", "--json"]
    assert main(["train", "--task", "mix:affine=1,cosine=1", *base]) == 0
    assert json.loads(capsys.readouterr().out)["task"].startswith("mix:")
    assert main(["train", "--task", "cosine", "--frequency", "2", *base]) == 0
    capsys.readouterr()
    assert main(["train", "--kernel", "exp(-sqrt(2-2*t))", "--d", "3", "--n", "10", "--sigma", "0.5"]) == 2
    assert "sampler" in capsys.readouterr().err
