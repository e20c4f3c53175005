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
