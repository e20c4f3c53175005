"""Attention on the circle (lipschitz_icl.estimators.circle): the weight profiles and the centre of attention."""

import math

import numpy as np
import pytest

from lipschitz_icl import sphere
from lipschitz_icl.estimators import circle


def test_weight_profiles_average_to_one_for_softmax_and_follow_cos_for_linear():
    angle = np.linspace(-np.pi, np.pi, 4001)[:-1]
    soft, linear = circle.weight_profiles(angle, [0.5, 8.0], [2.0])
    for w, profile in zip([0.5, 8.0], soft):  # n x weight: exp(w cos a) / Phi_2(w) averages to 1 on the circle
        assert np.mean(profile) == pytest.approx(1.0, rel=1e-9)
        assert profile[2000] == pytest.approx(math.exp(w - float(sphere.log_phi(2, w))), rel=1e-12)
    assert linear[0][2000] == pytest.approx(2.0) and linear[0][0] == pytest.approx(-2.0)


def test_centre_of_a_rotated_window_is_the_direction_of_M_q():
    theta, w = 0.4, 6.0
    M = w * np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    angle, step, _profiles, centres = circle.centres(M, w, 720)
    assert centres["iso"] == pytest.approx(0.0, abs=step) and centres["gen"] == pytest.approx(theta, abs=step)
    assert step == pytest.approx(2 * math.pi / 720) and len(angle) == 720


def test_profiles_shown_thin_the_grid_to_about_720_angles_and_keep_each_profiles_values():
    M = 4.0 * np.diag([1.5, 0.5])
    for points, every in ((360, 1), (4000, 5)):
        angle, _step, profiles, _centres = circle.centres(M, 4.0, points)
        shown = circle.profiles_shown(angle, profiles, points)
        assert len(shown["angle"]) == len(range(0, points, every)) <= 800
        assert shown["angle"][1] - shown["angle"][0] == pytest.approx(every * 2 * math.pi / points)
        for key, name in (("weights_isotropic", "iso"), ("weights_general", "gen")):
            assert shown[key] == [float(v) for v in profiles[name][::every]]


def test_weighted_slice_scales_one_task_by_L_and_peaks_softmax_weights_at_the_query():
    L_grid, ws, ms = [0.5, 2.0], [1.0, 6.0], [0.3, 0.9]
    data = circle.weighted_slice(
        "affine", L_grid=L_grid, n=15, sigma=0.2, rng=np.random.default_rng(4), points=181, ws=ws, ms=ms
    )
    assert np.allclose(np.asarray(data["curves"][1]), 4.0 * np.asarray(data["curves"][0]))  # L f_1 for each L
    assert data["query_f"][1] == pytest.approx(4.0 * data["query_f"][0])
    assert len(data["context_y"][0]) == len(data["context_angle"]) == 15
    for profiles in (data["softmax_weights"], data["linear_weights"]):
        assert [len(p) for p in profiles] == [181, 181] and all(int(np.argmax(p)) == 90 for p in profiles)
    assert max(data["softmax_weights"][1]) > max(data["softmax_weights"][0])  # a larger w* concentrates more
