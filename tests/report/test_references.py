"""The bibliography: the paper with its version, the inequalities' sources, the libraries with versions."""

from __future__ import annotations

import re
from importlib import resources

from lipschitz_icl.report.references import PAPER_KEY, citations, library_versions, paper_version, references


def test_keys_are_unique_and_every_cited_key_exists():
    keys = [r.key for r in references()]
    assert len(keys) == len(set(keys)) and PAPER_KEY in keys
    template = resources.files("lipschitz_icl.report").joinpath("templates/report.tex.j2").read_text("utf-8")
    notation = resources.files("lipschitz_icl.report").joinpath("notation.py").read_text("utf-8")
    for text in (template, notation):
        for cited in re.findall(r"\\cite\{([^}]+)\}", text):
            for key in cited.split(","):
                assert key.strip() in keys, key


def test_the_papers_version_is_stated():
    assert "arXiv:2402.11639v2" in paper_version()  # the arXiv revision, not the identifier alone
    assert "not recorded" not in paper_version()


def test_a_claims_source_cites_its_works():
    assert citations("Sphere concentration: projection tails (Dasgupta-Gupta, Lemma 2.2)") == ["dasgupta2003"]
    assert citations("cap counts (Chernoff-Hoeffding, relative-entropy form)") == ["chernoff1952", "hoeffding1963"]
    assert citations("the softmax normaliser (Bernstein)") == ["boucheron2013"]
    assert citations("Theorem 3.4") == []


def test_library_versions_come_from_the_run_when_it_recorded_them():
    versions = library_versions({"numpy": "1.0", "versions": {"python-flint": "0.1"}})
    assert versions["numpy"] == ("1.0", False) and versions["python-flint"] == ("0.1", False)
    assert versions["sympy"][1] is True  # read when the report was built
