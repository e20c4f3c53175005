"""Zonal task priors: Gegenbauer polynomials and coefficients, the Schoenberg check, the exact zonal
loss against the affine/relu quadrature of :mod:`lipschitz_icl.exact.route` and against the independent
pairwise-kernel Monte Carlo of :mod:`lipschitz_icl.loss.pairwise`, and the CLI for the new classes."""

import json
import zlib

import mpmath
import numpy as np
import pytest
from scipy import special

from lipschitz_icl.cli import main
from lipschitz_icl.exact.route import exact_loss
from lipschitz_icl.exact.zonal import zonal_loss
from lipschitz_icl.expression import parse_expression
from lipschitz_icl.loss.pairwise import pairwise_loss
from lipschitz_icl.problem import kernel_problem, make_problem, mixture_problem, zonal_problem
from lipschitz_icl.tasks import kernel_form, zonal
from lipschitz_icl.validation import ParameterError

MATERN = "(1 + sqrt(3)*sqrt(2-2*t)/ell)*exp(-sqrt(3)*sqrt(2-2*t)/ell)"
Z_TWO_SIDED = 3.9  # two-sided 1e-4 per comparison: a failure is a real disagreement, not bad luck


def _seed(name: str) -> int:
    """A fixed seed per comparison, from its name (not chosen by its outcome)."""
    return zlib.crc32(name.encode())


@pytest.mark.parametrize("d", [2, 3, 5, 8])
def test_gegenbauer_table_matches_scipy(d):
    t = np.linspace(-1, 1, 11)
    P = zonal.gegenbauer_table(d, t, 12)
    for l in range(13):
        ref = (
            special.eval_chebyt(l, t)
            if d == 2
            else special.eval_gegenbauer(l, 0.5 * (d - 2), t) / special.eval_gegenbauer(l, 0.5 * (d - 2), 1.0)
        )
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
        zonal.expression_kernel("exp(-sqrt(2-2*t)", 3)  # unbalanced: refused by the parser
    with pytest.raises(ParameterError, match="'kernel'"):
        zonal.expression_kernel("__import__('os')", 3)
    k = zonal.expression_kernel("exp(-sqrt(2-2*t)/ell)", 3, {"ell": 0.5})
    assert k(np.array([1.0, 0.0]))[1] == pytest.approx(np.exp(-np.sqrt(2) / 0.5), rel=1e-14)
    assert k.gap(np.array([1e-12]))[0] == pytest.approx(1 - np.exp(-np.sqrt(2e-12) / 0.5), rel=1e-12)


AGREEMENT = [
    (task, d, n, w)
    for task in ("affine", "relu")
    for d in (2, 3, 5)
    for n, w in ((1, 3.0), (10, 5.0), (100, 40.0), (10**6, 300.0), (10**14, 2e4), (10**14, 2e3))
    if not (task == "relu" and w > 1e4)
]  # the relu matrix of lipschitz_icl.exact.route grows as w


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
    from lipschitz_icl.loss.estimators import icl_loss

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
    for bad in (
        ["--kernel", "t", "--L", "1"],
        ["--task", "relu", "--frequency", "2", "--L", "1"],
        ["--task", "mix:affine=1,sine=1", "--L", "1"],
        ["--task", "cosine"],
        [],
    ):
        assert main(["loss", *bad, "--w", "4", *base]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_mixture_sampler_agrees_with_the_exact_mixture_loss():
    """Sampling the mixture (naive Monte Carlo: tasks, covariates, noise) against the class-by-class
    exact loss: an independent check of the mixture's sampler and of the weights."""
    from lipschitz_icl.loss.estimators import icl_loss

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


# ----------------------------------------------------------------------------- kernels mean what they say (issue 22)
@pytest.mark.parametrize("text", ["abs(t)", "sqrt(t**2)", "max(t, 0)", "abs(t)**1.5"])
def test_no_sympy_assumption_rewrites_a_kernel(text):
    """Under a positive-t assumption these became t (abs(t) gave the w* of t, exit 0); on [-1, 1] they
    are not covariances: refused, naming the first negative Gegenbauer coefficient a_4."""
    with pytest.raises(ParameterError, match="first negative coefficient a_4 = -"):
        zonal.expression_kernel(text, 3)


def test_abs_of_t_is_refused_on_the_command_line(capsys):
    assert main(["wstar", "--kernel", "abs(t)", "--d", "3", "--n", "1000", "--sigma", "0.5", "--method", "exact"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--kernel" in err[0] and "a_4 = -0.18" in err[0]


def test_the_sympy_form_is_held_to_the_expression_values():
    """A symbolic form that does not keep the values of the expression is refused before use."""
    points = kernel_form.check_points("abs(t)")
    parsed = parse_expression("abs(t)", {"t", "d"})
    exact = [parsed.evaluate({"d": 3, "t": mpmath.mpf(float(t))}) for t in points]  # the expression's own values
    what = "an expression whose symbolic form keeps its values"

    def true_form(u):
        return 1.0 - np.abs(1.0 - u)

    def rewritten(u):  # abs(t) rewritten as t
        return np.asarray(u, dtype=float)

    kernel_form.check_gap(true_form, exact, points, name="kernel", text="abs(t)", what=what)
    with pytest.raises(ParameterError, match="symbolic form keeps its values"):
        kernel_form.check_gap(rewritten, exact, points, name="kernel", text="abs(t)", what=what)


def test_a_double_form_that_overflows_says_so():
    """2 exp(700 t) is a double everywhere on [-1, 1] but SymPy's K(1) - K(1 - u) overflows on the way (exp(709 t),
    whose form does not, is accepted): the refusal says why the two forms differ."""
    with pytest.raises(ParameterError, match="not inf: an intermediate value of its double form overflows"):
        zonal.expression_kernel("2*exp(700*t)", 3)


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("sqrt(t)", "at t = -1: sqrt of a negative number"),
        ("log(1 + t)", "at t = -1: log of zero"),
        ("(t + 1)**(10**300)", "out of range"),
        ("1/t", "division by zero"),
    ],
)
def test_a_kernel_undefined_somewhere_on_the_interval_is_refused(text, fragment):
    with pytest.raises(ParameterError, match="real, finite function of t") as info:
        zonal.expression_kernel(text, 3)
    assert fragment in str(info.value)


def test_d_is_substituted_with_a_magnitude_budget(monkeypatch):
    """--d 512 --kernel 'd**d**d' reached 4 GB before a MemoryError: now refused by the expression's own
    evaluator (its magnitude budget), before any SymPy step."""
    symbolic_steps = []
    monkeypatch.setattr(zonal, "_sympy_form", lambda *args: symbolic_steps.append(args))
    with pytest.raises(ParameterError, match="out of range"):
        zonal.expression_kernel("d**d**d * t", 512)
    assert symbolic_steps == []


def test_simplify_runs_under_a_time_budget(monkeypatch):
    """(t+1)**500 took 47 s in simplify, (t+1)**1000 more than 300 s: a budget hit is one refusal."""
    from lipschitz_icl.tasks import symbolic

    monkeypatch.setattr(symbolic, "SECONDS", 0.5)
    with pytest.raises(ParameterError, match="time budget"):
        zonal.expression_kernel("((t + 1)/2)**500", 3)


def test_a_timed_out_step_leaves_profiling_working():
    """The timeout was once cleared with PyThreadState_SetAsyncExc(thread, NULL), which left CPython's pending
    flag set: the next sys.setprofile of the process hung (this test never returned)."""
    import sys

    from lipschitz_icl.tasks import symbolic

    def busy():
        while True:
            pass

    with pytest.raises(ParameterError, match="time budget"):
        symbolic.within_budget(busy, name="x", text="x", what="loop", seconds=0.1)
    events = []
    sys.setprofile(lambda frame, event, arg: events.append(event))
    try:
        zonal.is_mixture("affine")
    finally:
        sys.setprofile(None)
    assert "call" in events


def test_the_budget_never_fires_after_its_step():
    """A step that returns in time leaves no timeout behind (not in this thread, not later), and the
    budget works in any thread."""
    import threading
    import time

    from lipschitz_icl.tasks import symbolic

    assert symbolic.within_budget(lambda: 3, name="x", text="x", what="w", seconds=0.01) == 3
    deadline = time.perf_counter() + 0.3
    while time.perf_counter() < deadline:  # a stray asynchronous timeout would land here
        pass

    def busy():
        while True:
            pass

    outcome = []

    def in_thread():
        try:
            symbolic.within_budget(busy, name="x", text="x", what="loop", seconds=0.2)
        except ParameterError as exc:
            outcome.append(str(exc))

    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and "time budget" in outcome[0]


def test_the_budget_counts_the_step_s_cpu_time_and_caps_a_waiting_step():
    """A step that computes is stopped by its CPU time (a loaded machine does not make an input fail); a step
    that waits, using no CPU, is stopped by the wall-clock cap (``WALL_FACTOR`` budgets)."""
    import time

    from lipschitz_icl.tasks import symbolic

    def waits():
        while True:
            time.sleep(0.01)

    with pytest.raises(ParameterError, match="time budget"):
        symbolic.within_budget(waits, name="x", text="x", what="wait", seconds=0.02)


def test_a_swallowed_timeout_does_not_let_the_step_run_on():
    """CPython prints and swallows an exception raised inside a weakref callback or ``__del__`` (CI once saw the
    timeout land in SymPy's cache cleanup and ``simplify`` run to its end): the timeout is raised again until
    the step ends, and a step that returns after its deadline is refused all the same."""
    from lipschitz_icl.tasks import symbolic

    swallowed = []

    def swallows_the_first():
        while True:
            try:
                while True:
                    pass
            except BaseException:  # stands in for CPython's unraisable-exception hook
                if swallowed:
                    raise
                swallowed.append(True)

    with pytest.raises(ParameterError, match="time budget"):
        symbolic.within_budget(swallows_the_first, name="x", text="x", what="loop", seconds=0.1)
    assert swallowed == [True]

    def returns_after_its_deadline():
        try:
            while True:
                pass
        except BaseException:
            return "late"

    with pytest.raises(ParameterError, match="time budget"):
        symbolic.within_budget(returns_after_its_deadline, name="x", text="x", what="loop", seconds=0.1)


@pytest.mark.parametrize("name", ["pi", "d", "t", "u", "exp", "max", "1x", "a-b"])
def test_a_constant_may_not_shadow_a_name(name):
    with pytest.raises(ParameterError, match="identifier"):
        zonal.expression_kernel("exp(t)", 3, {name: 2.0})


KERNEL_FILES = [
    ("pi.toml", 'kernel = "exp(-pi*(1 - t))"\n[constants]\npi = 100.0\n', "shadow"),
    ("d.toml", 'kernel = "exp(t)"\n[constants]\nd = 3.0\n', "shadow"),
    ("unknown.toml", 'kernel = "exp(t)"\nell = 0.5\n', "unknown key 'ell'"),
    ("table.toml", 'kernel = "exp(t)"\n[constants]\nell = 0.5\n[other]\nx = 1\n', "unknown key 'other'"),
    ("nested.toml", 'kernel = "exp(t)"\n[constants.inner]\nx = 1\n', "constant 'inner' is a dict"),
    ("string.toml", 'kernel = "exp(t*ell)"\n[constants]\nell = "0.5"\n', "constant 'ell' is a str"),
    ("bool.toml", 'kernel = "exp(t*ell)"\n[constants]\nell = true\n', "constant 'ell' is a bool"),
    ("inf.toml", 'kernel = "exp(t*ell)"\n[constants]\nell = inf\n', "constant ell"),
    ("nokernel.toml", "[constants]\nell = 1.0\n", "'kernel' is a string"),
    ("deep.toml", 'kernel = "t"\n[constants]\nx = ' + "[" * 30000 + "]" * 30000 + "\n", "nested too deeply"),
    ("big.toml", "# " + "x" * 70000 + '\nkernel = "t"\n', "larger than"),
]


@pytest.mark.parametrize("filename,text,fragment", KERNEL_FILES, ids=[k[0] for k in KERNEL_FILES])
def test_kernel_files_are_read_like_variant_files(tmp_path, filename, text, fragment):
    from lipschitz_icl.commands._zonal import load_kernel_file

    path = tmp_path / filename
    path.write_text(text)
    with pytest.raises(ParameterError, match="kernel-file") as info:
        load_kernel_file(str(path))
    assert fragment in str(info.value)


def test_kernel_files_that_are_not_regular_utf8_files(tmp_path):
    import os

    from lipschitz_icl.commands._zonal import load_kernel_file

    (tmp_path / "binary.toml").write_bytes(b'kernel = "\xff\xfe"\n')
    os.mkfifo(tmp_path / "fifo.toml")
    with open(tmp_path / "sparse.toml", "wb") as handle:  # claims 3 GB, holds none
        handle.truncate(3 * 1024**3)
    for path, fragment in (
        (tmp_path / "binary.toml", "not UTF-8"),
        (tmp_path / "fifo.toml", "not a regular file"),
        ("/dev/zero", "not a regular file"),
        (tmp_path, "not a regular file"),
        (tmp_path / "sparse.toml", "larger than"),
        (tmp_path / "missing.toml", "cannot read"),
    ):
        with pytest.raises(ParameterError, match=fragment):
            load_kernel_file(str(path))


def test_a_kernel_near_the_double_range_prints_no_warnings():
    """exp(700 t): K(1) ~ 1e304.  The w* start and the Monte Carlo mean and standard error stay finite
    and silent (they printed overflow RuntimeWarnings)."""
    import warnings

    from lipschitz_icl.estimate import Estimate

    problem = kernel_problem("exp(700*t)", 3, 50, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        guess = problem.task_class.wstar_guess(50, 0.5)
        big = Estimate.from_samples(np.array([1.7e308, 1.6e308, 1.75e308]))
        mc = pairwise_loss(problem, 3.0, contexts=50, rng=_seed("exp700"))
    assert 1e-2 <= guess <= 1.0001e8 and np.isfinite(big.value) and np.isfinite(big.standard_error)
    assert big.value == pytest.approx(1.6833333333333333e308, rel=1e-12)
    assert np.isfinite(mc.loss.standard_error) and mc.loss.value > 1e300


MIXTURES = [
    ("mix:affine=1e308,relu=1e308", "<= 1e+300"),  # normalised every weight to 0: bias 0.0, exit 0
    ("mix:affine=1e300,relu=1e300,cosine=1e300", None),
    ("mix:affine=٣,relu=1", "ASCII"),
    ("mix:affine=１２", "ASCII"),
    ("mix:affine=1_0", "ASCII"),
    ("mix:affine= 5 ", "ASCII"),
    ("mix:affine=nan", "ASCII"),
    ("mix:affine=inf", "ASCII"),
    ("mix:affine=-1", ">= 0"),
    ("mix:affine=0,relu=0", "all weights are 0"),
    ("mix:affine=1,affine=2", "distinct"),
    ("mix:affine=1,sine=1", "distinct"),
    ("mix: affine=1", "distinct"),
    ("mix:affine", "distinct"),
    ("mix:", "distinct"),
    ("mix:" + ",".join(["affine=1"] * 3000), "at most 3 parts"),
]


@pytest.mark.parametrize("task,fragment", MIXTURES, ids=[m[0][:40] for m in MIXTURES])
def test_mixtures_are_validated_as_a_whole(task, fragment, monkeypatch):
    """A refused mixture builds no kernel: the text is refused as a whole before any part is built."""
    if fragment is None:
        parts = zonal.parse_mixture(task)
        kernel = zonal.mixture_kernel(parts, 3)
        assert [p[1] for p in kernel.parts] == pytest.approx([1 / 3] * 3) and np.isfinite(kernel.k1)
        return
    built = []
    monkeypatch.setattr(zonal, "mixture_kernel", lambda *args: built.append(args))
    with pytest.raises(ParameterError, match="'task'") as info:
        zonal.parse_task(task, 3)
    assert fragment in str(info.value) and built == []


def test_a_mixture_with_a_zero_weight_part_drops_it():
    kernel = zonal.parse_task("mix:affine=0,relu=2", 3)
    assert [p[0] for p in kernel.parts] == ["relu"] and kernel.parts[0][1] == 1.0
    assert kernel.gap(np.array([0.3]))[0] == pytest.approx(zonal.builtin_kernel("relu", 3).gap(np.array([0.3]))[0])
