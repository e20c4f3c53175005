"""The prover (``lipschitz-icl prove``): tail bounds decided on a whole domain, sharpest constants,
certificates and their independent recheck (issue 18, "Shown by")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lipschitz_icl import cli
from lipschitz_icl.certified.arithmetic import high, interval, low
from lipschitz_icl.decision import Verdict
from lipschitz_icl.expression import ExpressionError, parse_expression
from lipschitz_icl.prover import search as prover
from lipschitz_icl.prover.domain import Box, parse_domain
from lipschitz_icl.validation import ParameterError

ISSUE_FILE = """name = "cap-tail-rate-{rate}"
quantity = "cap_tail"
relation = "<="
bound = "exp(-{rate}*d*h**2)"
[domain]
d = {d}
h = [0.01, 0.99]
"""


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, text, name="variant.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_rate_12_is_refuted_between_the_grid_points(tmp_path, capsys):
    """The issue's file (rate 1.2, d in {3, 5}) holds at its grid points but is false: the certified
    counterexample sits between h = 0.6 and 0.95 with the tail's enclosure wholly above the bound's."""
    code, out, _ = run(["prove", write(tmp_path, ISSUE_FILE.format(rate=1.2, d=[3, 5])), "--json"], capsys)
    result = json.loads(out)
    assert code == 1 and result["verdict"] == "refuted"
    c = result["counterexample"]
    assert 0.6 < c["params"]["h"] < 0.95 and c["params"]["d"] in (3, 5)
    assert c["quantity"][0] > c["bound"][1]
    # the point values agree with an independent 30-digit evaluation
    d, h = c["params"]["d"], c["params"]["h"]
    with mpmath.workdps(30):
        a = mpmath.mpf(d - 1) / 2
        tail = mpmath.betainc(a, a, 0, (1 - mpmath.mpf(h)) / 2, regularized=True)
        bound = mpmath.exp(-mpmath.mpf("1.2") * d * mpmath.mpf(h) ** 2)
    assert c["quantity"][0] <= tail <= c["quantity"][1] and c["bound"][0] <= bound <= c["bound"][1]


def test_rate_11_is_proved_and_the_certificate_rechecks(tmp_path, capsys):
    cert = tmp_path / "cert.json"
    code, out, _ = run(
        ["prove", write(tmp_path, ISSUE_FILE.format(rate=1.1, d=[5])), "--json", "--certificate", str(cert)], capsys
    )
    result = json.loads(out)
    assert code == 0 and result["verdict"] == "proved" and result["undecided_count"] == 0
    data = json.loads(cert.read_text())
    assert data["parts"][0]["verdict"] == "proved"
    code, out, _ = run(["prove", "--recheck", str(cert), "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["recheck"] == "passed" and report["verdict"] == "proved"
    assert report["boxes_checked"] == result["boxes_proved"] > 1


def _leaves(nodes):
    return (node for node in nodes if "split" not in node)


@pytest.fixture
def certificate(tmp_path, capsys):
    cert = tmp_path / "cert.json"
    code, _, _ = run(
        ["prove", write(tmp_path, ISSUE_FILE.format(rate=1.1, d=[5])), "--json", "--certificate", str(cert)], capsys
    )
    assert code == 0
    return cert


@pytest.mark.parametrize("tamper", ["bound", "enclosure", "split", "box"])
def test_a_tampered_certificate_fails_naming_a_box(certificate, capsys, tamper):
    data = json.loads(certificate.read_text())
    nodes = data["parts"][0]["roots"][0]
    root, leaf = nodes[0], next(_leaves(nodes))
    if tamper == "bound":  # a sharper statement than the one proved
        data["statement"]["bound"] = "exp(-1.12*d*h**2)"
    elif tamper == "enclosure":  # a stored enclosure that excludes the true value
        leaf["quantity"] = [leaf["quantity"][1] + 1.0, leaf["quantity"][1] + 2.0]
    elif tamper == "split":  # a split point moved: the children no longer halve their parent
        root["split"]["at"] = root["split"]["at"] * 0.5
    else:  # a leaf claims a wider box than its parent gives
        leaf["box"]["h"] = [0.0, leaf["box"]["h"][1]]
    certificate.write_text(json.dumps(data))
    code, out, _ = run(["prove", "--recheck", str(certificate), "--json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["recheck"] == "failed"
    assert report["first_bad_box"] and "h" in report["first_bad_box"] and report["reason"]


def test_a_tampered_counterexample_fails(tmp_path, capsys):
    cert = tmp_path / "cert.json"
    code, _, _ = run(["prove", write(tmp_path, ISSUE_FILE.format(rate=1.2, d=[5])), "--certificate", str(cert)], capsys)
    assert code == 1
    data = json.loads(cert.read_text())
    assert data["parts"][0]["verdict"] == "refuted"
    code, out, _ = run(["prove", "--recheck", str(cert), "--json"], capsys)
    assert code == 0 and json.loads(out)["verdict"] == "refuted"
    data["parts"][0]["counterexample"]["params"]["h"] = 0.1  # the bound holds there
    cert.write_text(json.dumps(data))
    code, out, _ = run(["prove", "--recheck", str(cert), "--json"], capsys)
    assert code == 1 and "violate" in json.loads(out)["reason"]


def _true_sharpest_rate(d: int) -> mpmath.mpf:
    """``inf_{0 < h < 1} -log P(h) / (d h^2)``, ``P(h) = P(t >= h)``, at 30 digits: the largest ``C`` with
    ``P(h) <= exp(-C d h^2)`` on ``[0, 1]`` (at ``h = 0`` and ``h = 1`` every ``C > 0`` holds).  The rate's
    derivative vanishes where ``h p(h) / P(h) + 2 log P(h) = 0`` (``p = -P'`` the density of ``t``,
    ``(1 - h^2)^((d-3)/2) / (2^(d-2) B(a, a))``, ``a = (d-1)/2``); mpmath's incomplete beta for ``P`` and a
    root started at the best point of a coarse grid."""
    with mpmath.workdps(30):
        a = mpmath.mpf(d - 1) / 2

        def tail(h):
            return mpmath.betainc(a, a, 0, (1 - h) / 2, regularized=True)

        def rate(h):
            return -mpmath.log(tail(h)) / (d * h * h)

        def stationary(h):
            density = (1 - h * h) ** ((d - 3) / mpmath.mpf(2)) / (2 ** (d - 2) * mpmath.beta(a, a))
            return h * density / tail(h) + 2 * mpmath.log(tail(h))

        start = min((mpmath.mpf(i) / 100 for i in range(2, 100)), key=rate)
        h_star = mpmath.findroot(stationary, start)
        assert 0 < h_star < 1 and abs(stationary(h_star)) < mpmath.mpf(10) ** -25
        return rate(h_star)


@pytest.mark.parametrize("d", [5, 50])
def test_sharpest_rate_interval_contains_the_true_rate(tmp_path, capsys, d):
    text = f"""name = "cap-sharpest"
quantity = "cap_tail"
relation = "<="
bound = "exp(-C*d*h**2)"
sharpest = "C"
[constants]
C = [0.5, 2.0]
[domain]
d = [{d}]
h = [0, 1]
"""
    code, out, _ = run(["prove", write(tmp_path, text), "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["verdict"] == "proved"
    s = result["sharpest"]
    truth = _true_sharpest_rate(d)
    assert s["low"] <= truth <= s["high"]
    assert s["high"] - s["low"] < 1e-3
    assert s["proved_at"] == s["low"] and s["refuted_at"] == s["high"]
    c = s["counterexample"]
    assert c["quantity"][0] > c["bound"][1]


def test_sharpest_certificate_holds_both_ends(tmp_path, capsys):
    text = """name = "cap-sharpest"
quantity = "cap_tail"
relation = "<="
bound = "exp(-C*d*h**2)"
sharpest = "C"
[constants]
C = [0.5, 2.0]
[domain]
d = [5]
h = [0, 1]
"""
    cert = tmp_path / "c.json"
    code, _, _ = run(["prove", write(tmp_path, text), "--sharpest-rtol", "0.01", "--certificate", str(cert)], capsys)
    assert code == 0
    parts = json.loads(cert.read_text())["parts"]
    assert [p["verdict"] for p in parts] == ["proved", "refuted"]
    code, out, _ = run(["prove", "--recheck", str(cert), "--json"], capsys)
    assert code == 0 and json.loads(out)["recheck"] == "passed"


def test_python_api_returns_a_frozen_result():
    result = prover.prove("cap_tail", "exp(-d*h**2/2)", {"d": {"from": 2, "to": 40}, "h": [0, 1]})
    assert result.verdict is Verdict.PROVED and result.exit_code == 0
    assert result.undecided_share == 0.0 and result.counterexample is None
    assert result.certificate["parts"][0]["verdict"] == "proved"
    with pytest.raises(AttributeError):
        result.verdict = Verdict.REFUTED


def test_projection_and_binomial_tails():
    # Dasgupta-Gupta's exponential form on its upper side, a range of d at fixed k (monotone in d, k, s)
    dg = prover.prove(
        "projection_tail", "exp(k/2*(1 - s*d/k + log(s*d/k)))", {"d": {"from": 20, "to": 24}, "k": [2], "s": [0.1, 1]}
    )
    assert dg.verdict is Verdict.PROVED
    # Chernoff's relative-entropy bound for P(N >= a), a >= n p (p up to a/n)
    chernoff = prover.prove(
        "binomial_tail",
        "exp(-n*(a/n*log(a/(n*p)) + (1 - a/n)*log((1 - a/n)/(1 - p))))",
        {"n": [50], "a": [30], "p": [0.05, 0.6]},
    )
    assert chernoff.verdict is Verdict.PROVED
    # the same bound without the mean's side condition fails below the mean
    wrong = prover.prove(
        "binomial_tail",
        "exp(-n*(a/n*log(a/(n*p)) + (1 - a/n)*log((1 - a/n)/(1 - p))))",
        {"n": [50], "a": [30], "p": [0.05, 0.9]},
    )
    assert wrong.verdict is Verdict.REFUTED and wrong.counterexample["params"]["p"] > 0.6


def test_budget_exhausted_is_undecided_with_its_share(tmp_path, capsys):
    code, out, err = run(
        ["prove", write(tmp_path, ISSUE_FILE.format(rate=1.1, d=[5])), "--json", "--max-boxes", "3"], capsys
    )
    result = json.loads(out)
    assert code == 3 and result["verdict"] == "undecided" and "Traceback" not in err
    assert result["boxes_evaluated"] == 3 and 0 < result["undecided_share"] <= 1
    assert result["undecided_count"] >= 1 and result["undecided_boxes"][0]["reason"]


def test_both_sides_vanishing_at_an_endpoint_is_named():
    """The sharp Dasgupta-Gupta form and the tail both vanish at s = 1: the box there cannot be separated
    by enclosures, and the result says so instead of skipping it."""
    bound = "(s*d/k)**(k/2) * (1 + (1 - s*d/k)*k/(d - k))**((d - k)/2)"
    result = prover.prove("projection_tail", bound, {"d": [6], "k": [2], "s": [0.5, 1]}, max_boxes=300)
    assert result.verdict is Verdict.UNDECIDED
    assert any("vanish at s = 1" in entry["reason"] for entry in result.undecided_boxes)
    assert result.undecided_share < 1e-6


@pytest.mark.parametrize(
    "case",
    [
        "inverted interval",
        "one-number interval",
        "outside the range",
        "d too large",
        "no domain",
        "bracket reversed",
        "bracket not a bracket",
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case):
    domain = {
        "inverted interval": "d = [5]\nh = [0.9, 0.1]",
        "one-number interval": "d = [5]\nh = [0.5]",
        "outside the range": "d = [5]\nh = [0, 1.5]",
        "d too large": "d = [513]\nh = [0, 1]",
    }.get(case, "d = [5]\nh = [0, 1]")
    bound, constants = "exp(-d*h**2/2)", ""
    if case.startswith("bracket"):
        bound = "exp(-C*d*h**2)"
        bracket = "[2.0, 0.5]" if case == "bracket reversed" else "[0.1, 0.2]"
        constants = f'sharpest = "C"\n[constants]\nC = {bracket}\n'
    text = f'name = "bad"\nquantity = "cap_tail"\nrelation = "<="\nbound = "{bound}"\n{constants}'
    text += "" if case == "no domain" else f"[domain]\n{domain}\n"
    if case == "no domain":
        text += "[grid]\nd = [5]\nh = [0.5]\n"
    code, out, err = run(["prove", write(tmp_path, text)], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "content", ["{}", "not json at all", '{"format": "something else"}', 'name = "x"\nquantity = "cap_tail"']
)
def test_a_file_that_is_not_a_certificate_is_exit_2(tmp_path, capsys, content):
    path = tmp_path / "c.json"
    path.write_text(content)
    code, out, err = run(["prove", "--recheck", str(path)], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "certificate" in err


def test_an_existing_certificate_is_not_overwritten_without_force(tmp_path, capsys):
    path = write(tmp_path, ISSUE_FILE.format(rate=1.1, d=[5]))
    cert = tmp_path / "c.json"
    cert.write_text("keep me")
    code, _, err = run(["prove", path, "--certificate", str(cert)], capsys)
    assert code == 2 and cert.read_text() == "keep me" and "--force" in err
    code, _, _ = run(["prove", path, "--certificate", str(cert), "--force"], capsys)
    assert code == 0 and json.loads(cert.read_text())["format"]


def test_check_says_it_samples(tmp_path, capsys):
    text = (
        ISSUE_FILE.format(rate=1.2, d=[3, 5])
        .replace("[domain]", "[grid]")
        .replace("h = [0.01, 0.99]", "h = [0.05, 0.1, 0.3, 0.5, 0.9]")
    )
    path = write(tmp_path, text)
    code, out, _ = run(["check", path, "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["verdict"] == "holds" and result["mode"] == "grid" and result["points"] == 10
    code, out, _ = run(["check", path], capsys)
    # no [domain] here: the hint says to add one (prove would refuse this file), never to run prove on it
    assert "holds at 10 points (grid sample; add a [domain] table for `lipschitz-icl prove`" in out


# ----------------------------------------------------------------------------- the ball evaluation
_BOUNDS = [
    "exp(-C*d*h**2)",
    "sqrt(h)*d + log(1 + h)",
    "max(h, 1/d) - min(h**3, 0.5)",
    "abs(h - 0.3)**(3/2)",
    "(1 - h)**5 / (1 + h**2)",
    "(h - 0.5)*(0.3 - h)/(h + 2) - (h - 0.7)**3 * (h + 0.1)**-2",  # products of wide balls of either sign
    "exp(-d*(h - 0.4)**2) / (h - 2)**3",
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_BOUNDS), st.floats(0, 1), st.floats(0, 1), st.integers(2, 40), st.floats(0, 1))
def test_ball_evaluation_contains_every_point_value(text, a, b, d, where):
    """The ball of a bound on a box contains the 30-digit value at a point of the box."""
    lo, hi = min(a, b), max(a, b)
    expr = parse_expression(text, {"C", "d", "h"})
    try:
        ball = expr.evaluate_ball({"C": 1.25, "d": d, "h": interval(lo, hi)})
    except ExpressionError:
        return  # undefined somewhere on the box: refused, never a wrong ball
    h = min(max(lo + where * (hi - lo), lo), hi)
    value = float(expr.evaluate({"C": 1.25, "d": d, "h": h}))
    slack = 1e-14 * abs(value) + 1e-300
    assert low(ball) - slack <= value <= high(ball) + slack


def test_ball_evaluation_refuses_undefined_operations():
    expr = parse_expression("log(h) + 1/(h - 0.5)", {"h"})
    with pytest.raises(ExpressionError):
        expr.evaluate_ball({"h": interval(0.0, 1.0)})
    with pytest.raises(ExpressionError):
        expr.evaluate_ball({"h": interval(0.25, 1.0)})
    assert math.isfinite(float(expr.evaluate_ball({"h": interval(0.125, 0.25)}).mid()))


def test_ball_evaluation_keeps_intermediates_within_the_magnitude_budget():
    """Every intermediate |x| within [1e-1e6, 1e1e6] or 0 (BALL_MAGNITUDE_LOG10): exp(-7000) is a ball, exp(-3e6)
    and exp(3e6) are refused, 0 is not out of range; the same tree evaluated again gives the same ball."""
    expr = parse_expression("exp(-C*h) * (h - 0.5)", {"C", "h"})
    tail = expr.evaluate_ball({"C": 7000, "h": 1})
    assert abs(float(tail.log().mid()) - (-7000 + math.log(0.5))) < 1e-9  # below the double range, still a ball
    for C in (3e6, -3e6):
        with pytest.raises(ExpressionError, match="out of range"):
            expr.evaluate_ball({"C": C, "h": 1})
    assert expr.evaluate_ball({"C": 1, "h": 0.5}) == 0
    again = expr.evaluate_ball({"C": 7000, "h": 1})
    assert (again.mid(), again.rad()) == (tail.mid(), tail.rad())


HOSTILE = {
    "no file": ["prove"],
    "file and recheck": ["prove", "{file}", "--recheck", "{file}"],
    "zero boxes": ["prove", "{file}", "--max-boxes", "0"],
    "negative seconds": ["prove", "{file}", "--seconds", "-1"],
    "missing file": ["prove", "/nonexistent/v.toml"],
    "directory": ["prove", "{dir}"],
    "certificate is a directory": ["prove", "{file}", "--certificate", "{dir}"],
    "recheck of a directory": ["prove", "--recheck", "{dir}"],
    "certified loss of a kernel not analytic": [
        "loss",
        "--kernel",
        "exp(-sqrt(2 - 2*t))",
        "--d",
        "3",
        "--n",
        "5",
        "--sigma",
        "1",
        "--w",
        "1",
        "--method",
        "certified",
    ],
    "certified wstar of a kernel not analytic": [
        "wstar",
        "--kernel",
        "exp(-sqrt(2 - 2*t))",
        "--d",
        "3",
        "--n",
        "5",
        "--sigma",
        "1",
        "--method",
        "certified",
    ],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_command_lines_are_one_line_and_exit_2(tmp_path, capsys, case):
    path = write(tmp_path, ISSUE_FILE.format(rate=1.1, d=[5]))
    argv = [a.format(file=path, dir=str(tmp_path)) for a in HOSTILE[case]]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


BAD_DOMAINS = {
    "k above d": ('quantity = "projection_tail"', "exp(-s)", "d = [5]\nk = [6]\ns = [0, 1]"),
    "bound singular at a corner": ('quantity = "cap_tail"', "log(h)", "d = [5]\nh = [0, 1]"),
    "unknown parameter": ('quantity = "cap_tail"', "exp(-h)", "d = [5]\nh = [0, 1]\ns = [0, 1]"),
    "missing parameter": ('quantity = "cap_tail"', "exp(-h)", "h = [0, 1]"),
    "inverted integer range": ('quantity = "cap_tail"', "exp(-h)", "d = { from = 9, to = 3 }\nh = [0, 1]"),
    "sharpest constant as a number": (
        'quantity = "cap_tail"\nsharpest = "C"\n[constants]\nC = 2.0',
        "exp(-C*h)",
        "d = [5]\nh = [0, 1]",
    ),
    "not a cap probability": ('quantity = "binomial_tail"', "1", "n = [5]\na = [2]\np = [0, 1.5]"),
}


@pytest.mark.parametrize("case", sorted(BAD_DOMAINS))
def test_bad_domains_are_refused_with_a_line_number(tmp_path, capsys, case):
    head, bound, domain = BAD_DOMAINS[case]
    quantity, _, tables = head.partition("\n")  # the quantity line, then any further keys and tables
    text = f'name = "bad"\n{quantity}\nrelation = "<="\nbound = "{bound}"\n{tables}\n[domain]\n{domain}\n'
    path = write(tmp_path, text)
    code, out, err = run(["prove", path], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{path}:" in err


# ----------------------------------------------------------------------------- domains, split rule, budgets
def test_a_domain_is_sized_before_it_is_enumerated(tmp_path, capsys):
    """300 x 300 listed integers are 90000 root boxes: refused at once (one line, exit 2), before a corner
    is built; a range {from, to} is one root box."""
    with pytest.raises(ParameterError, match="root boxes"):
        parse_domain({"n": list(range(1, 301)), "a": list(range(300)), "p": [0.0, 1.0]}, ("n", "a", "p"))
    assert len(parse_domain({"n": {"from": 1, "to": 10**6}, "a": [3], "p": [0.0, 1.0]}, ("n", "a", "p")).roots()) == 1
    text = 'name = "big"\nquantity = "binomial_tail"\nrelation = "<="\nbound = "1"\n[domain]\n'
    text += f"n = {list(range(1, 301))}\na = {list(range(300))}\np = [0, 1]\n"
    code, out, err = run(["prove", write(tmp_path, text)], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "root boxes" in err


def test_corners_are_listed_once():
    domain = prover.make_statement("cap_tail", "1", {"d": [3, 4, 5], "h": [0, 1]}).domain
    corners = domain.corners()
    assert len(corners) == 6 and len({tuple(c.items()) for c in corners}) == 6


def test_a_loss_quantity_domain_is_checked_against_its_own_ranges(tmp_path, capsys):
    text = (
        'name = "w"\nquantity = "w_star"\ntask = "affine"\nrelation = "<="\nbound = "1e6"\n'
        "[domain]\nd = [3]\nn = [1]\nL = 1.0\nsigma = 0.5\n"
    )
    code, out, err = run(["prove", write(tmp_path, text)], capsys)
    assert code == 2 and out == "" and "'n'" in err and "[2, " in err


def test_the_split_rule_gives_every_parameter_its_turn():
    """A real range toward 0 is measured against its extent in the domain: [0, 2^-10] of h in [0, 1] is
    narrow, so the integer range of d is split first (before, h was halved toward 0 forever)."""
    box = Box((("d", 2, 512), ("h", 0.0, 2.0**-10)))
    assert prover.split_param(box, {"d": 510, "h": 1.0}) == "d"
    box = Box((("d", 8, 9), ("h", 0.0, 0.5)))
    assert prover.split_param(box, {"d": 510, "h": 1.0}) == "h"  # d relative to its size: 1/9
    box = Box((("n", 50, 50), ("a", 10, 40), ("p", 0.1, 0.1 + 1e-12)))
    assert prover.split_param(box, {"n": 0, "a": 30, "p": 1e-12}) == "a"  # a pinned real range is split last


def test_seconds_count_from_the_start_of_the_command(tmp_path, capsys):
    """A budget the command's own start-up has used up: no box is evaluated, every root box is undecided
    (exit 3), and the certificate says so; the recheck honours --seconds as well."""
    path = write(tmp_path, ISSUE_FILE.format(rate=1.1, d=[3, 5]))
    cert = tmp_path / "c.json"
    code, out, _ = run(["prove", path, "--seconds", "1e-6", "--json", "--certificate", str(cert)], capsys)
    result = json.loads(out)
    assert code == 3 and result["boxes_evaluated"] == 0 and result["undecided_count"] == 2
    assert result["notes"] == ["budget exhausted"] and result["undecided_share"] == 1.0
    code, out, _ = run(["prove", "--recheck", str(cert), "--json"], capsys)
    assert code == 3 and json.loads(out)["verdict"] == "undecided"
    code, out, _ = run(["prove", "--recheck", str(cert), "--json", "--seconds", "1e-6"], capsys)
    assert code == 3 and json.loads(out)["recheck"] == "unfinished"


def test_a_statement_keeps_its_quantity_balls_per_point_and_precision(monkeypatch):
    """A search's quantity keeps its balls at plain points for every statement of the process (a bisection on
    a constant encloses the same boxes again), per working precision: a repeated point is not computed
    again, its ball is the law's own, and a finer precision computes a narrower ball."""
    from lipschitz_icl.certified import arithmetic, laws
    from lipschitz_icl.prover.search import make_statement

    calls = []
    law = laws.projection_lower_tail

    def counted(d, k, s):
        calls.append((d, k, s))
        return law(d, k, s)

    monkeypatch.setattr(laws, "projection_lower_tail", counted)
    balls = {}
    for bits in (64, 200):
        with arithmetic.precision(bits):
            for C in (0.5, 0.75):  # two statements, as a bisection on C makes
                st = make_statement(
                    "projection_lower_tail", "exp(-C*s)", {"d": [7], "k": [3], "s": [0.1, 0.2]}, constants={"C": C}
                )
                balls[bits] = st.quantity.value({"d": 7, "k": 3, "s": 0.123456789})
            assert (balls[bits].mid(), balls[bits].rad()) == (
                law(7, 3, 0.123456789).mid(),
                law(7, 3, 0.123456789).rad(),
            )
    assert calls == [(7, 3, 0.123456789)] * 2  # once per precision
    assert balls[200].rad() < balls[64].rad()


def test_check_points_to_prove_only_for_a_file_with_a_domain(capsys):
    """A variant with both tables (the cap-tail example): the grid sample names `prove FILE` for the domain."""
    path = Path(__file__).resolve().parents[2] / "variants" / "examples" / "cap_tail_gaussian.toml"
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 0 and f"(grid sample; `lipschitz-icl prove {path}` decides the whole domain)" in out


@pytest.mark.parametrize(
    "bound, where",
    [
        ("1 + sqrt((h - 0.7)**2 - 0.01)", "h=0.75: sqrt of a negative number"),  # undefined on (0.6, 0.8)
        ("1/(h - 0.5)**2", "h=0.5: division by zero"),  # undefined at one interior point
    ],
)
def test_a_bound_undefined_inside_the_domain_is_refused_not_searched_to_the_budget(tmp_path, capsys, bound, where):
    """Defined at the domain's corners, undefined inside: was 20000 boxes and 'budget exhausted' (exit 0 with
    an undecided verdict); now one line at the bound's line, exit 2, naming the point."""
    with pytest.raises(prover.UndefinedBound) as info:
        prover.prove("cap_tail", bound, {"d": [10], "h": [0.5, 1] if "0.7" in bound else [0, 1]})
    assert where in str(info.value)
    path = tmp_path / "undefined.toml"
    domain = "[0.5, 1]" if "0.7" in bound else "[0, 1]"
    path.write_text(
        f'name = "u"\nquantity = "cap_tail"\nrelation = "<="\nbound = "{bound}"\n[domain]\nd = [10]\nh = {domain}\n'
    )
    assert cli.main(["prove", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "undefined.toml:4: 'bound' must be defined at every point of the domain" in err
    assert where in err
