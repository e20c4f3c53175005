"""Where theory and practice part: the sentences built from the records."""

from __future__ import annotations

from lipschitz_icl.report.remarks import PRACTICAL_LAMBDA, remarks, two_sided_constants


def test_the_window_law_at_practical_sizes():
    record = {
        "claim_id": "thm34/window-law/relu/d2",
        "key": "thm34.window-law",
        "extra": {"rho": [400.0, 4e4, 4e6], "ratio": [1.32, 1.15, 1.05]},
    }
    (text,) = remarks("thm34.window-law", [record])
    assert f"{PRACTICAL_LAMBDA:.0e}" in text and "1.32" in text and "rho = 400" in text
    assert remarks("thm34.window-law", [{"claim_id": "x", "extra": {}}]) == []


def test_the_window_law_note_says_where_the_next_order_term_accounts_for_the_gap_and_where_not():
    """The derived curve 1 + k w0^-q overshoots the data at small rho (an asymptotic term): the note says
    so with its range there, from which rho on it matches the measured gap, and which case it never matches
    (a constant ratio of gap to term along the grid)."""
    relu = {
        "claim_id": "thm34/window-law/relu/d2",
        "key": "thm34.window-law",
        "params": {"task": "relu", "d": 2},
        "extra": {
            "rho": [400.0, 4e4, 4e6, 4e8],
            "ratio": [1.32, 1.15, 1.055, 1.0183],
            "next_order": [0.6, 0.19, 0.06, 0.0188],
        },
    }
    affine = {
        "claim_id": "thm34/window-law/affine/d2",
        "key": "thm34.window-law",
        "params": {"task": "affine", "d": 2},
        "extra": {"rho": [400.0, 4e4, 4e6], "ratio": [1.094, 1.0133, 1.0021], "next_order": [0.0527, 0.0084, 0.0013]},
    }
    (text,) = remarks("thm34.window-law", [relu, affine])
    assert "accounting for the gap" not in text  # the curve reaches 1.6 where the data are at most 1.32
    assert "between 1.05 and 1.6" in text and "does not account for the gap at these sizes" in text
    assert "from rho = 4e+06" in text  # 0.055 vs 0.06 and 0.0183 vs 0.0188: within 10% from 4e6 on
    assert "never does" in text and "1.62 at rho = 4e+06" in text  # affine: 0.0021/0.0013


def test_the_two_sided_constants_are_the_min_and_max_over_the_grid_with_their_intervals():
    record = {
        "claim_id": "thm34/window-law/affine/d5",
        "key": "thm34.window-law",
        "extra": {"derived": {"alpha": 0.25, "C": 1.1247}},
        "quantities": [
            {
                "name": "c_lo: min over the grid of w*/rho^alpha",
                "measured": 0.93,
                "ci_low": 0.92,
                "ci_high": 0.94,
                "note": "over n in [1e+02, 1e+14]; interval: min of the ends of each w*'s interval",
            },
            {"name": "c_hi: max over the grid of w*/rho^alpha", "measured": 1.12, "ci_low": 1.11, "ci_high": "inf"},
        ],
    }
    (t,) = two_sided_constants([record], {"thm34/window-law/affine/d5": 5})
    assert (t.number, t.alpha, t.c_d, t.n_range) == (5, 0.25, 1.1247, "1e+02, 1e+14")
    assert t.c_lo == (0.93, 0.92, 0.94) and t.c_hi == (1.12, 1.11, float("inf"))  # an open end stays open
    bare = {**record, "quantities": [{**q, "ci_low": None} for q in record["quantities"]]}
    assert two_sided_constants([bare], {}) == []  # a constant without its interval is not printed


def test_the_low_rank_error_against_its_limit_and_a_limit_measured_at_finite_n():
    dim = {
        "claim_id": "thm44/dimension/lowrank-linear/k2/seed0",
        "quantities": [{"name": "B: L_P(d=4)/L_P(inf) - 1 <= bound", "measured": -0.48}],
    }
    (text,) = remarks("thm44.dimension", [dim])
    assert "0.52 at d = 4" in text
    lin = {
        "claim_id": "linear/cannot-adapt/affine/d3/seed0",
        "quantities": [
            {"name": "E(n=160) / (k(1) - d B) - 1", "theory": 0.0333, "measured": 0.036, "verdict": "holds"},
            {
                "name": "linear error limit k(1) - d B (n -> inf)",
                "theory": 1 / 3,
                "measured": 0.3453,
                "note": "measured at n=160",
            },
        ],
    }
    (text,) = remarks("linear.cannot-adapt", [lin])
    assert "measured at n=160" in text and "0.0333" in text
