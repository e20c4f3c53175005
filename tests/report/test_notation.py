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
    """w0, q', r_1, R_d, c_q, A_d, L_P, the M-form, the registry, its salt and re-lock, the trusted base:
    each is defined when the report's text uses it (w0 in the table, beside the window law's next order)."""
    text = (
        r"$O(w^{-q'})$; $R_{d}(w)$; $r_{1}$; $c_{q}$; $A_{d}(w)$; $L_{P}(d)$; the $M$-form; the registry's salt; "
        "re-lock; the prover's trusted base"
    )
    terms = " ".join(term for term, _ in glossary(text))
    for shown in ("q'", "R_d", "r_1", "c_q", "A_d", "L_P", "M$-form", "registry", "re-lock", "trusted base"):
        assert shown in terms, shown
    assert any("w_0 = C_d" in meaning for _, meaning in NOTATION)


def test_the_rule_types_and_the_interval_methods_are_defined_where_used():
    """The second referee met the rule types (the map's ``rule (sign)``), Bonferroni, Welch and antithetic
    undefined; a text that uses none of them gets none of the entries."""
    text = r"rule (sign); rule (asymptotic); Bonferroni over all intervals; 99\% (Welch); reflection-antithetic"
    found = dict(glossary(text))
    assert "rule (equivalence, one-sided, sign, asymptotic)" in found and "predicted side" in str(found)
    assert {"Bonferroni", "Welch", "antithetic"} <= set(found)
    assert not {"Bonferroni", "Welch", "antithetic"} & set(dict(glossary("a sign rule decided it")))


def test_a_group_srenamed_symbol_is_printed_renamed():
    """The regularity group's bias power is p (beta is the noise power): its constants print (p), not (beta)."""
    from lipschitz_icl.report.render import renamed_symbol
    from lipschitz_icl.report.symbols import rename_for

    assert renamed_symbol(r"\beta", rename_for("regularity.bias-power")) == "p"
    assert renamed_symbol(r"\beta", rename_for("thm34.bias-noise")) == r"\beta"
