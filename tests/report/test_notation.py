"""The notation table: one symbol per meaning; the glossary keeps the terms the report uses."""

from __future__ import annotations

import re

from lipschitz_icl.report.notation import GLOSSARY, NOTATION, glossary


def test_one_symbol_per_meaning():
    symbols = [s.strip() for entry, _ in NOTATION for s in re.split(r",\\\s*|,\s*", entry)]
    assert len(symbols) == len(set(symbols)), sorted(s for s in symbols if symbols.count(s) > 1)
    meanings = [m for _, m in NOTATION]
    assert len(meanings) == len(set(meanings))


def test_the_glossary_keeps_only_the_terms_used():
    found = dict(glossary("a gated ratio on cosine-4 at d8k2"))
    assert "gated" in found and any("cosine" in term for term in found) and any("d3k1" in t for t in found)
    assert glossary("nothing of the kind") == []
    assert all(len(entry) == 3 for entry in GLOSSARY)


def test_the_terms_a_referee_met_undefined_are_defined_where_used():
    """w0, q', r_1, R_d, c_q, A_d, L_P (the optimal low-rank ICL error, a calligraphic L: L is the Lipschitz
    constant), the M-form, the registry, its salt and re-lock, the trusted base:
    each is defined when the report's text uses it (w0 in the table, beside the window law's next order)."""
    text = (
        r"$O(w^{-q'})$; $R_{d}(w)$; $r_{1}$; $c_{q}$; $A_{d}(w)$; $\mathcal{L}_P(d)$; the $M$-form; "
        "the registry's salt; re-lock; the prover's trusted base"
    )
    terms = " ".join(term for term, _ in glossary(text))
    for shown in ("R_d", "r_1", "c_q", "A_d", r"\mathcal{L}_P", "M$-form", "registry", "re-lock", "trusted base"):
        assert shown in terms, shown
    # q' (the bias part's next order, and the window law's) is a symbol of the table, beside kappa
    assert any("w_0 = C_d" in meaning and "q'" in symbol for symbol, meaning in NOTATION)


def test_the_rule_types_and_the_interval_methods_are_defined_where_used():
    """The second referee met the rule types (the map's ``rule (sign)``), Bonferroni, Welch and antithetic
    undefined; a text that uses none of them gets none of the entries."""
    text = r"rule (sign); rule (asymptotic); Bonferroni over all intervals; 99\% (Welch); reflection-antithetic"
    found = dict(glossary(text))
    assert "rule (equivalence, one-sided, sign, asymptotic)" in found and "predicted side" in str(found)
    assert {"Bonferroni", "Welch", "antithetic"} <= set(found)
    assert not {"Bonferroni", "Welch", "antithetic"} & set(dict(glossary("a sign rule decided it")))


def test_a_group_srenamed_symbol_is_printed_renamed():
    """The regularity group's bias power (its records' beta) is zeta, as Theorem 3.4's (their p): beta is the
    noise power, p_i the softmax weights; a symbol is renamed letter by letter (delta beta is delta zeta), never
    inside an upright name or a subscript."""
    from lipschitz_icl.report.render import renamed_symbol
    from lipschitz_icl.report.symbols import rename_for

    assert renamed_symbol(r"\beta", rename_for("regularity.bias-power")) == r"\zeta"
    assert renamed_symbol(r"\delta\beta", rename_for("regularity.bias-power")) == r"\delta\zeta"
    assert renamed_symbol("-p", rename_for("thm34.bias-noise")) == r"-\zeta"
    assert renamed_symbol(r"\beta", rename_for("thm34.bias-noise")) == r"\beta"
    assert renamed_symbol("b_d", rename_for("regularity.bias-power")) == "b_d"
    assert renamed_symbol(r"\delta E_{\mathrm{lin}}", rename_for("linear.cannot-adapt")) == r"\delta E_{\mathrm{lin}}"
    assert renamed_symbol(r"\kappa_Q", rename_for("thm44.saddle")) == r"\partial_\xi^2\mathcal{L}_Q"


# ----------------------------------------------------------------------------- one symbol per meaning
def _symbols() -> list[str]:
    return [s.strip() for entry, _ in NOTATION for s in re.split(r",\\\s*|,\s*", entry)]


def test_the_table_gives_each_clashing_letter_one_meaning():
    """The referee's clashes: B (basis, bias part), p (softmax weights, bias power), q (query, next-order
    exponent), C (proved constant, window-law constant), P (projector, probability), L (Lipschitz constant,
    loss), s (resolution, K's argument): each letter of the table has one entry, and no entry hedges ("with its
    argument", "alone is")."""
    symbols = _symbols()
    for letter in ("B", "p_i", "C", "C_d", "P", "L", r"\zeta", "q'", r"\mathcal{B}(w)", r"\mathbb{P}", r"\xi"):
        assert symbols.count(letter) == 1, letter
    for absent in ("p", "q", "B(w)", "N(w)", "K(s)", "s"):
        assert absent not in symbols, absent
    assert not any(re.search(r"alone is|with its argument|each claim names its own", m) for _, m in NOTATION)
    # the resolutions are delta (of X: delta X), epsilon (a log scale), theta (an angle); s, c, x are not among them
    (resolution,) = [m for s, m in NOTATION if s.startswith(r"\delta")]
    assert "resolution" in resolution


def test_the_glossary_uses_no_symbol_of_the_table_for_something_else():
    """Bonferroni's level was 1 - alpha/m (alpha is the window exponent); signal-matched named z; T's row
    used f and g (the task and the link)."""
    text = " ".join(meaning for _, _, meaning in GLOSSARY) + " ".join(m for _, m in NOTATION)
    assert r"\alpha/m" not in text and "$z =" not in text and r"T f \le g" not in text


def _typeset(key: str, text: str) -> str:
    from lipschitz_icl.report.mathtext import to_latex
    from lipschitz_icl.report.symbols import rename_for

    return str(to_latex(text, rename=rename_for(key)))


def _statement(key: str) -> str:
    from lipschitz_icl.gates import registry

    return _typeset(key, registry.find(key).statement)


def test_the_bias_and_noise_parts_are_calligraphic_and_their_derivatives_upright():
    for key in ("loss_shape.relu-bias-turns", "loss_shape.bias-falls", "loss_shape.bias-power"):
        out = _statement(key)
        assert r"\mathcal{B}" in out and not re.search(r"(?<![\\{A-Za-z])B(?![A-Za-z_^])", out), out
    out = _statement("loss_shape.noise-rises")
    assert r"\mathcal{N}" in out and r"\mathrm{d}/\mathrm{d} w" in out and "p_{i}" in out, out
    assert r"\mathrm{d} \mathcal{B}/\mathrm{d} w" in _statement("loss_shape.relu-bias-turns")
    # their derivatives too (a resolution's meaning: the least slope n N'(w), the least fall -B'(w))
    assert _typeset("loss_shape.noise-rises", "n N'(w), -B'(w), L'") == r"$n \mathcal{N}'(w)$, $-\mathcal{B}'(w)$, $L'$"


def test_the_bias_power_is_zeta_in_every_group():
    assert r"w^{-\zeta}" in _statement("loss_shape.bias-power")
    assert r"w^{-\zeta}" in _typeset("thm34.bias-noise", "large-n bias = b_d L^2 w^-p (1 + O(w^-q')), p = 2")
    out = _statement("regularity.bias-power")
    assert r"w^{-\zeta}" in out and r"\beta" not in out, out
    # the regularity law's m = (d-1)/2 is the noise power beta, its C the window-law constant C_d
    out = _typeset("regularity.window-law", "C = (beta b/(m c_R))^alpha, alpha = 1/(beta + m)")
    assert out == r"$C_d = (\zeta b_d/(\beta c_{R}))^{\alpha}$, $\alpha = 1/(\zeta + \beta)$", out
    # p stays the softmax weights' in the loss_shape claims that mean them
    assert r"\mathrm{Cov}_{p}(p, t)" in _typeset("loss_shape.noise-rises", "2 Cov_p(p, t) >= 0")


def test_the_window_law_s_constant_and_next_order_exponent():
    assert r"C_d \Lambda^{\alpha}" in _typeset("thm35.generalisation", "w*(n) ~ C rho^alpha")
    assert r"w_{0}^{-q'}" in _typeset("thm34.window-law", "1 + k w0^-q")
    assert r"\kappa" in _typeset("thm34.window-law", "1 + k w0^-q")


def test_a_probability_is_blackboard_and_the_projector_italic():
    out = _statement("concentration.projection-tails")
    assert r"\mathbb{P}(\|Px\|" in out and "projector $P$" in out and not re.search(r"(?<![{\\])P\(", out), out
    assert r"\mathrm{KL}(a/n" in _statement("concentration.cap-counts-chernoff")
    out = _statement("concentration.cap-counts-multiplicative")
    assert "(1 + r)" in out and r"\delta" not in out, out  # Chernoff's deviation: delta is a claim's resolution
    assert r"1 + \chi \le  e^{\chi}" in _typeset("concentration.projection-tails-sharp", "before 1 + x <= e^x")


def test_the_loss_and_the_probe_step_in_the_low_rank_claims():
    out = _statement("thm44.saddle")
    assert r"\mathcal{L}({c^{*}} B B^{\top} \pm  \xi Q)" in out and not re.search(r"(?<![{\\])L\(", out), out
    assert r"\Delta \mathcal{L}" in _typeset("thm44.saddle", "Delta L along +-s Q")
    assert r"\mathcal{L}''" in _typeset("thm44.direction", "L'' c*^2 (s^2/2 - eps s)")
    assert _typeset("thm44.direction", "L = 2") == "$L = 2$"


def test_the_linear_group_s_covariance_and_expectation():
    out = _typeset("linear.optimum", "a0 = k(1), a1 = B = E_t[t k(t)]")
    assert out == r"$a_{0} = K(1)$, $a_{1} = \bar K = \mathbb{E}_{t}[t K(t)]$", out


def test_a_resolution_written_with_a_letter_of_the_table_is_delta():
    """A record's resolution symbol s, c, x or gamma (the projection threshold, the scale c B B^T, a point of
    the sphere, the regularity law's kernel power) is printed delta, in its meaning's words too; delta is kept
    where a claim's statement calls something else delta."""
    from lipschitz_icl.report.render import resolution_of
    from lipschitz_icl.report.symbols import rename_for

    def res(key, symbol, meaning):
        record = {"resolution": {"parameter": "p", "symbol": symbol, "meaning": meaning, "value": 0.3}}
        return resolution_of([record], rename_for(key))

    out = res("figures.fig1", "s", "not as fast as L^-s")
    assert str(out["symbol"]) == r"$\delta$" and r"L^{-\delta}" in str(out["meaning"])
    out = res("thm44.saddle", "x", "(x = -1: no change)")
    assert str(out["symbol"]) == r"$\delta$" and r"$\delta = -1$" in str(out["meaning"])
    for symbol in ("c", r"\gamma"):
        assert str(res("figures.fig5", symbol, "a change")["symbol"]) == r"$\delta$"
    out = res("concentration.cap-counts-multiplicative", r"\delta C/C", "below C (1 + value)")
    assert str(out["symbol"]) == r"$\delta C/C$" and r"$(1 + \delta C/C)$" in str(out["meaning"])
    assert str(res("regularity.bias-power", r"\delta\beta", "the bias power beta")["meaning"]).endswith(r"$\zeta$")


def test_the_figure_labels_and_captions_use_the_table_s_symbols():
    from lipschitz_icl.report.symbols import FIGURE_CAPTIONS, figure_axes

    axes = figure_axes("thm44.saddle", "measured $2\\Delta_Q / s^2$")
    assert r"\xi" in axes["ylabel"] and r"\mathcal{L}_Q" in axes["xlabel"]
    assert r"\mathbb{P}" in figure_axes("concentration.projection-tails", "$P(\\|Px\\|^2 \\geq s)$")["ylabel"]
    assert "C_d" in figure_axes("regularity.window-law", "$w^*/(C\\,\\rho^\\alpha)$")["ylabel"]
    assert "q'" in figure_axes("thm34.window-law", "$w^*/(C_d\\,\\rho^\\alpha)$")["theory"]
    captions = " ".join(FIGURE_CAPTIONS.values())
    assert r"\epsilon" not in captions and not re.search(r"(?<![{\\])[LP]\(", captions), captions


def test_the_regularity_laws_lambda_and_the_low_rank_errors_have_their_own_symbols():
    """A referee found Lambda meaning n L^2/sigma^2 and, in the regularity law, n/sigma^2 (Lambda_0 now), and the
    optimal low-rank error L_P printed with the Lipschitz constant's letter (calligraphic now)."""
    from lipschitz_icl.report.mathtext import to_latex
    from lipschitz_icl.report.symbols import rename_for

    assert r"\Lambda_0" in to_latex("w* = C rho^alpha", rename=rename_for("regularity.window-law"))
    assert r"\Lambda_0" not in to_latex("w* = C_d rho^alpha", rename=rename_for("thm34.window-law"))
    assert r"\mathcal{L}_P" in to_latex("L_P(d)/L_P(inf) - 1 <= 0.05", rename=rename_for("thm44.dimension"))
    symbols = [symbol for symbol, _ in NOTATION]
    assert any(r"\Lambda_0" in s for s in symbols)


def test_every_resolution_letter_meaning_something_else_is_printed_as_delta():
    """a (the count threshold), t (x.q) and f (a task) were still printed as resolution symbols (a review)."""
    from lipschitz_icl.report.symbols import figure_axes, resolution_letter

    for letter in ("s", "c", "x", r"\gamma", "a", "t", "f"):
        assert resolution_letter(letter)[0] == r"\delta"
    assert resolution_letter(r"\delta\alpha") == (r"\delta\alpha", {})
    # the probability is blackboard P on the Levy and normaliser axes too; the rough regularity law's Lambda_0
    assert r"\mathbb{P}" in figure_axes("concentration.levy-exact", "$P(x\\cdot q \\geq t)$")["ylabel"]
    assert r"\mathbb{P}" in figure_axes("concentration.softmax-normaliser", "x")["ylabel"]
    assert r"\Lambda_0" in figure_axes("regularity.window-law-rough", "$w^*/(C\\,\\rho^\\alpha)$")["xlabel"]


def test_the_window_laws_k_and_q_are_renamed_in_its_claim_only():
    """k -> kappa and q -> q' are the window law's next order; elsewhere in Theorem 3.4's group k is a rank and
    q the query (a review: the group-wide rename would print 'rank kappa' and 'x . q'')."""
    from lipschitz_icl.report.mathtext import to_latex
    from lipschitz_icl.report.symbols import rename_for

    assert to_latex("(1 + k w0^-q)", rename=rename_for("thm34.window-law")) == r"$(1 + \kappa w_{0}^{-q'})$"
    out = to_latex("rank k and the query x.q", rename=rename_for("thm34.isotropy"))
    assert r"\kappa" not in out and "q'" not in out
