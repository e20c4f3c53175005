"""The Theorem 3.4 claim machinery decides correctly on synthetic inputs and through the CLI."""

import json

import numpy as np

from lipschitz_icl.claims.thm34 import minimiser_verdict, sign_verdict, scaling_rule
from lipschitz_icl.cli import main
from lipschitz_icl.estimate import Estimate


def test_scaling_rule_accepts_the_law_it_was_given_and_rejects_others():
    alpha, C, q, k = 0.4, 0.3, 0.5, 1.5
    rho = np.logspace(6, 14, 5)
    w0 = C * rho**alpha
    w = w0 * (1 + k * w0**-q)  # a law with exactly the derived first correction
    assert scaling_rule(rho, w, alpha, C, q, k)["verdict"] == "holds"
    assert scaling_rule(rho, w, alpha + 0.05, C, q, k)["verdict"] == "fails"
    assert scaling_rule(rho, w, alpha, 1.1 * C, q, k)["verdict"] == "fails"
    assert scaling_rule(rho, w * rho**0.01, alpha, C, q, k)["verdict"] == "fails"


def test_minimiser_and_sign_rules():
    up = [Estimate(1.0, 0.1), Estimate(2.0, 0.1)]
    assert minimiser_verdict(up)[0] == "holds"
    assert minimiser_verdict([Estimate(1.0, 0.1), Estimate(-2.0, 0.1)])[0] == "fails"
    assert minimiser_verdict([Estimate(0.1, 0.1)])[0] == "inconclusive"
    assert sign_verdict([1.1, 1.2], +1, 1e-5) == "holds"
    assert sign_verdict([1.1, 0.9], +1, 1e-5) == "fails"
    assert sign_verdict([1.0 + 1e-7], +1, 1e-5) == "inconclusive"


def test_scaling_command(capsys):
    assert main(["scaling", "--task", "affine", "--d", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"alpha_derived", "C_derived", "alpha_measured", "ci_low", "ci_high", "ratio_trend", "verdict"} <= set(out)
    assert abs(out["alpha_measured"] - out["alpha_derived"]) <= out["tolerance"]
    assert out["verdict"] == "holds" and len(out["ratio_trend"]) == 3
