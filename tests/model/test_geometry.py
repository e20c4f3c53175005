"""Perturbation directions of lipschitz_icl.model.geometry: orthogonal to I, unit size, of their stated kind."""

import numpy as np
import pytest

from lipschitz_icl.model import geometry


@pytest.mark.parametrize("d", [2, 3, 6])
def test_anisotropic_directions_are_unit_and_orthogonal_to_the_identity(d):
    dirs = geometry.anisotropic_directions(np.random.default_rng(d).normal(size=(d, d)))
    assert set(dirs) == {"symmetric", "antisymmetric", "rank-one"}
    for D in dirs.values():
        assert np.linalg.norm(D) == pytest.approx(1.0, rel=1e-14)
        assert np.trace(D) == pytest.approx(0.0, abs=1e-14)  # Frobenius-orthogonal to I
        assert geometry.anisotropy(D) == pytest.approx(1.0, rel=1e-12)
    assert np.allclose(dirs["symmetric"], dirs["symmetric"].T)
    assert np.allclose(dirs["antisymmetric"], -dirs["antisymmetric"].T)
    # u u^T - I/d has Frobenius norm sqrt(1 - 1/d): undoing the scaling leaves a rank-one projector
    assert np.linalg.matrix_rank(dirs["rank-one"] * np.sqrt(1 - 1 / d) + np.eye(d) / d, tol=1e-10) == 1
