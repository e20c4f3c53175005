"""Tests of lipschitz_icl.derivations.kernel_identity: softmax attention with M = wI on the sphere is a Gaussian-kernel
smoother with bandwidth 1/sqrt(w) (Lemma B.5 / Eqs. (7)-(8); registry: thm34.isotropy)."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from lipschitz_icl.derivations import kernel_identity as K


@pytest.mark.parametrize("d", [1, 2, 3, 4, 6])
def test_exponent_gap_vanishes_on_the_sphere(d):
    assert K.squared_distance_identity(d) == 0
    assert K.kernel_identity_residual(d) == 0


@pytest.mark.parametrize("d", [2, 3])
def test_identity_fails_off_the_sphere(d):
    """False variant: without the unit-norm constraint the gap is w (|x|^2 + |y|^2 - 2)/2, not 0."""
    gap = K.kernel_identity_residual(d, on_sphere=False)
    x, y = K._vectors(d)
    expected = K.w * ((x.T * x)[0, 0] + (y.T * y)[0, 0] - 2) / 2
    assert gap != 0
    assert sp.expand(gap - expected) == 0


def test_bandwidth_and_softmax_weights():
    assert sp.simplify(K.bandwidth() - 1 / sp.sqrt(K.w)) == 0
    assert K.softmax_weights_residual(3) == 0
    assert K.verify_kernel_identity(dims=range(1, 5), n_points=3)


def test_numerical_spot_check_high_precision():
    """exp(w x.y) = exp(w) exp(-w |x-y|^2/2) at 40 digits for random unit vectors; the same with
    non-unit vectors differs by exp(w (|x|^2+|y|^2-2)/2), which is far from 1."""
    rng = np.random.default_rng(20240211)
    with mpmath.workdps(40):
        for d in (2, 3, 7):
            for wv in ("0.5", "7", "250"):
                wv = mpmath.mpf(wv)
                a, b = rng.standard_normal(d), rng.standard_normal(d)
                x = [mpmath.mpf(float(v)) for v in a]
                y = [mpmath.mpf(float(v)) for v in b]
                nx, ny = mpmath.sqrt(mpmath.fsum(v * v for v in x)), mpmath.sqrt(mpmath.fsum(v * v for v in y))
                xu, yu = [v / nx for v in x], [v / ny for v in y]
                dot = mpmath.fsum(p * q for p, q in zip(xu, yu))
                dist2 = mpmath.fsum((p - q) ** 2 for p, q in zip(xu, yu))
                lhs = mpmath.exp(wv * dot)
                rhs = mpmath.exp(wv) * mpmath.exp(-wv * dist2 / 2)
                assert abs(lhs / rhs - 1) < mpmath.mpf(10) ** -35
                dot_raw = mpmath.fsum(p * q for p, q in zip(x, y))
                dist2_raw = mpmath.fsum((p - q) ** 2 for p, q in zip(x, y))
                off = mpmath.exp(wv * dot_raw) / (mpmath.exp(wv) * mpmath.exp(-wv * dist2_raw / 2))
                assert abs(off - 1) > mpmath.mpf(10) ** -3


def test_derivations_live_in_the_package_namespace():
    """The derivations install as ``lipschitz_icl.derivations``; no generic top-level ``derivations`` module (the
    top-level ``derivations/`` folder holds documents, no Python: from the repository root it is at most an empty
    namespace; the tests' own ``tests/derivations/`` is on the test path and not counted)."""
    import importlib.util
    from pathlib import Path

    import tomllib

    import lipschitz_icl.derivations as pkg

    assert Path(pkg.__file__).parent.parent.name == "lipschitz_icl"
    spec = importlib.util.find_spec("derivations")
    tests = Path(__file__).resolve().parents[1]  # tests/derivations/ (on the test path) is the tests' folder
    assert spec is None or (
        spec.origin is None
        and not any(any(Path(p).glob("*.py")) for p in spec.submodule_search_locations if tests not in Path(p).parents)
    )
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    found = pyproject["tool"]["setuptools"]["packages"]["find"]  # the installed packages: lipschitz_icl and below
    assert found == {"where": ["src"], "include": ["lipschitz_icl*"]}
