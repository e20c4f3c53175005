"""lipschitz_icl.report.mathtext: the project's ASCII math typeset for LaTeX and matplotlib."""

import pytest

from lipschitz_icl.report.mathtext import to_latex, to_mathtext


@pytest.mark.parametrize(
    "text, latex",
    [
        ("w* = C_d rho^alpha", r"${w^{*}} = C_{d} \Lambda^{\alpha}$"),
        ("n L^2/sigma^2", r"$n L^{2}/\sigma^{2}$"),
        ("rho(M, B) <= 0.05", r"$\rho(M, B) \le  0.05$"),
        # a second derivative stays one formula, its differentials upright (never the dimension d)
        ("curvature d^2L/ds^2 along Q", r"curvature $\mathrm{d}^{2} L/\mathrm{d} s^{2}$ along $Q$"),
        ("a window of width 1/w", r"a window of width $1/w$"),
        # ^T is a transpose; T alone is the tightness factor of a band (one symbol per meaning)
        ("c* B B^T and T C_d", r"${c^{*}} B B^{\top}$ and $T C_{d}$"),
        # a signed exponent keeps the parentheses of a sum: n^{-alpha + delta} would flip delta's sign
        ("as fast as n^-(alpha + delta)", r"as fast as $n^{-(\alpha + \delta)}$"),
        ("w^-(p)", r"$w^{-p}$"),
        # a derivative dB/dw is one formula, not a word beside one; its d is upright, not the dimension
        ("(dB/dw <= -C at w)", r"($\mathrm{d} B/\mathrm{d} w \le  -C$ at $w$)"),
        # a sign before a symbol or number is a minus or plus sign, a hyphen between words or a range stays
        ("the slope lies above -C here", r"the slope lies above $-C$ here"),
        ("bias -4.1 at 4-6 along +D_j", r"bias $-4.1$ at 4-6 along $+D_{j}$"),
        ("a pre-specified 2-sided rule", "a pre-specified 2-sided rule"),
        # a formula that starts with a signed number keeps its sign and stays one formula
        ("at most -1e-6 L^2", r"at most $-10^{-6} L^{2}$"),
        ("-2^k", r"$-2^{k}$"),
        ("power -1/2", r"power $-1/2$"),
        ("n^-(a +- b)", r"$n^{-(a \pm  b)}$"),
    ],
)
def test_ascii_math_is_typeset_and_prose_stays_text(text, latex):
    assert str(to_latex(text)) == latex


@pytest.mark.parametrize("text", ["curvature d^2L/ds^2 along Q", "n L^2/sigma^2", "the bias^2 part"])
def test_no_caret_or_greek_name_is_left_as_text(text):
    for rendered in (str(to_latex(text)), to_mathtext(text)):
        outside = "".join(part for k, part in enumerate(rendered.split("$")) if k % 2 == 0)
        assert "^" not in outside and "textasciicircum" not in outside and "sigma" not in outside


@pytest.mark.parametrize("text", ["raised after a seed was inconclusive (4e9f7ac)", "undecided (06190c1, 954e621)"])
def test_a_commit_hash_is_code_not_a_number(text):
    rendered = str(to_latex(text))
    for commit in ("4e9f7ac", "06190c1", "954e621"):
        if commit in text:
            assert rf"\code{{{commit}}}" in rendered
    assert "times" not in rendered and "_{" not in rendered


@pytest.mark.parametrize("text", ["the paper's figures", "softmax's window", "Jensen's inequality"])
def test_a_possessive_is_a_word_not_a_prime(text):
    assert str(to_latex(text)) == text


def test_mathtext_already_written_is_kept_only_when_it_parses():
    assert to_mathtext(r"$\Lambda = nL^2/\sigma^2$") == r"$\Lambda = nL^2/\sigma^2$"
    assert to_mathtext(r"large-$n$ bias part") == r"large-$n$ bias part"
    assert to_mathtext(r"$\foo$ x") == r"\$\foo\$ $x$"  # does not parse: literal, never a traceback


@pytest.mark.parametrize(
    "text",
    [
        "Lemma B.1",
        "Lemmas C.3-C.9 (the bias part falls)",
        "the Eq. (4) form",
        "Theorem 3.4 (its proof, Lemmas C.3-C.9)",
    ],
)
def test_a_reference_to_the_paper_is_text_not_math(text):
    assert str(to_latex(text)) == text  # "Lemma $B$.1" and "$Eq$." were set as math


def test_a_letter_with_a_word_subscript_is_a_symbol_a_program_name_is_code():
    assert str(to_latex("w_high = 4.0")) == r"$w_{\mathrm{high}} = 4.0$"  # it read as code beside w_low as math
    assert str(to_latex("wstar_exact")) == r"\code{wstar\_\allowbreak{}exact}"


@pytest.mark.parametrize(
    "text, latex",
    [
        ("refutes as 'training ends on the tilted subspace'", "refutes as `training ends on the tilted subspace'"),
        ("the trained layers' value leak", "the trained layers' value leak"),
        ("the exact w*'s stated accuracy", r"the exact ${w^{*}}$'s stated accuracy"),
        ("E(L' = 10L)/E(L' = L)", r"$E(L' = 10L)/E(L' = L)$"),  # a prime stays a prime
        # a quoted phrase holding a possessive is still one quotation
        ("from 'they follow as softmax's window does'", "from `they follow as softmax's window does'"),
    ],
)
def test_an_apostrophe_that_is_not_a_prime_is_a_quote(text, latex):
    assert str(to_latex(text)) == latex


def test_a_renamed_name_with_a_word_subscript_is_one_symbol():
    rename = {"falls_at": r"w_{\mathrm{fall}}"}
    assert str(to_latex("at w = falls_at", rename=rename)) == r"at $w = w_{\mathrm{fall}}$"
    # without the rename it keeps its subscript
    assert str(to_latex("at w = falls_at")) != r"at $w = w_{\mathrm{fall}}$"


def test_a_derivative_reads_alike_in_the_report_and_in_a_figure():
    assert str(to_latex("slope dL/dw")) == r"slope $\mathrm{d} L/\mathrm{d} w$"
    assert to_mathtext("slope dL/dw") == r"slope $\mathrm{d} L/\mathrm{d} w$"


@pytest.mark.parametrize(
    "text, latex",
    [
        # every form of a derivative: its differentials upright, never the dimension d beside them
        ("d/dw (sigma^2 N) >= 0", r"$\mathrm{d}/\mathrm{d} w (\sigma^{2} N) \ge  0$"),
        ("local slope d log w*/d log rho", r"local slope $\mathrm{d} \log {w^{*}}/\mathrm{d} \log \Lambda$"),
        # d log alone (no derivative's "/ d log" after it) is the dimension times a log
        ("in d = 3, d log", r"in $d = 3$, $d \log$"),
    ],
)
def test_a_derivative_s_d_is_upright_and_the_dimension_is_not(text, latex):
    assert str(to_latex(text)) == latex


def test_a_letter_s_rename_is_of_the_letter_alone():
    """The bias power p is renamed, the softmax weights p_i and the exponent q' are not; a letter applied to an
    argument is renamed apart (P(...) a probability, the projector P alone kept)."""
    rename = {"p": r"\zeta", "q": "q'", "P(": r"\mathbb{P}"}
    assert str(to_latex("w^-p (1 + O(w^-q'))", rename=rename)) == r"$w^{-\zeta} (1 + O(w^{-q'}))$"
    assert str(to_latex("n E sum_i p_i^2 and k w0^-q", rename=rename)) == (
        r"$n \mathbb{E} \sum_{i} p_{i}^{2}$ and $k w_{0}^{-q'}$"
    )
    assert str(to_latex("P(||Px||^2 >= s) for a projector P", rename=rename)) == (
        r"$\mathbb{P}(\|Px\|^{2} \ge  s)$ for a projector $P$"
    )


def test_a_phrase_may_name_a_symbol_no_letter_stands_for():
    rename = {"Delta L": "Delta calL", "L''": r"\mathcal{L}''", "s": r"\xi"}
    assert str(to_latex("every Delta L interval; L'' (s^2/2) and L = 1", rename=rename)) == (
        r"every $\Delta \mathcal{L}$ interval; $\mathcal{L}'' (\xi^{2}/2)$ and $L = 1$"
    )


@pytest.mark.parametrize(
    "text, latex",
    [
        # seconds are a unit (text), not the symbol s
        ("from 120 s to 300 s; about 70 CPU s; at s = 0", r"from 120 s to 300 s; about 70 CPU s; at $s = 0$"),
        # an expectation over t is \mathbb{E}, never an error E; the error at L' keeps its prime in the subscript
        ("a1 = E_t[t k(t)]", r"$a_{1} = \mathbb{E}_{t}[t k(t)]$"),
        ("log(E_L'/E_L) > 0", r"$\log(E_{L'}/E_{L}) > 0$"),
    ],
)
def test_units_expectations_and_primes(text, latex):
    assert str(to_latex(text)) == latex


def test_a_rename_phrase_replaces_whole_phrases_only():
    """'Delta L' (thm34: the loss change) must not rewrite the start of 'Delta Lambda' (a review found
    '$\\Delta$ calLambda')."""
    from lipschitz_icl.report.symbols import rename_for

    out = to_latex("Delta Lambda and Delta L", rename=rename_for("thm34.window-law"))
    assert r"\Delta \Lambda" in out and r"\Delta \mathcal{L}" in out and "calLambda" not in out


def test_a_word_with_a_letter_past_ascii_is_text_not_a_symbol_and_a_word():
    """'Lévy' was typeset '$L$évy' (its L read as the Lipschitz constant, the rest as text); the locked
    alternatives' 'Levy's' is printed with its accent."""
    from lipschitz_icl.report.symbols import rename_for

    assert str(to_latex("Lévy's concentration; Hardy, Littlewood, Pólya; L = 1")) == (
        "Lévy's concentration; Hardy, Littlewood, Pólya; $L = 1$"
    )
    out = str(to_latex("instead of Levy's (d-2)/2", rename=rename_for("concentration.levy-monte-carlo")))
    assert out.startswith("instead of Lévy") and "$L$" not in out
