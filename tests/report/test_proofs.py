"""The proofs written out: inequalities read from the records, typeset by SymPy, the sharpest constant,
and the certificate files beside claims.json."""

from __future__ import annotations

import json
import re

import pytest

from lipschitz_icl.report.proofs import (
    QUANTITY_LATEX,
    Inequality,
    bound_latex,
    certificate_rows,
    domain_latex,
    find_certificates,
    inequalities,
    merged_displays,
    proof_blocks,
    proof_cases,
)

RULE = (
    "proved on the whole domain by certified ball arithmetic (lipschitz_icl.prover.search: branch and bound on "
    "python-flint enclosures, at most 20000 boxes per piece): projection_tail <= (s*d/k)**(C*k) * exp(C*k*(1 - s*d/k)) "
    "on {'d': [3], 'k': [1], 's': [0.3333333333333333, 1.0]}; binomial_tail <= exp(-C*n*p) on "
    "{'n': [100], 'a': {'from': 25, 'to': 99}, 'p': [0.25, 0.25]}; lemma on s in [0, 0.0833333] (lower tail: both "
    "sides vanish at s = 0)"
)


def _record(**more) -> dict:
    record = {
        "claim_id": "concentration/cap-probability/d3",
        "key": "concentration.cap-probability",
        "scope": "lemma",
        "paper_ref": "Sphere concentration: cap probability (Ball, Lemma 2.2)",
        "statement": "For x uniform on S^{d-1}, P(x.q >= h) <= exp(-d h^2/2).",
        "verdict": "proved",
        "rule_name": "proof",
        "rule": "proved ...: cap_tail <= exp(-C*d*h**2) on {'d': [3], 'h': [0.0, 1.0]}",
        "proof": {"verdict": "proved", "boxes": 5, "pieces": []},
        "resolution": {"parameter": "relative increase of the rate C (stated 0.5)", "low": 1.3845, "high": 1.3855},
        "alternatives": [{"name": "rate 1", "verdict": "proved", "detail": "proved at C = 1 (17 boxes); ..."}],
    }
    record.update(more)
    return record


def test_the_pieces_and_lemmas_are_read_from_the_rule():
    found, lemmas = inequalities(RULE)
    assert [(i.quantity, i.relation) for i in found] == [("projection_tail", "<="), ("binomial_tail", "<=")]
    assert found[0].domain == {"d": [3], "k": [1], "s": [0.3333333333333333, 1.0]}
    assert found[1].domain["a"] == {"from": 25, "to": 99}
    assert lemmas == ["lemma on s in [0, 0.0833333] (lower tail: both sides vanish at s = 0)"]


def test_bounds_and_domains_are_typeset():
    assert bound_latex("exp(-C*d*h**2)") == r"\exp\left(- C d h^{2}\right)"
    assert domain_latex({"d": [3], "h": [0.0, 1.0]}) == r"d = 3, h \in [0, 1]"
    assert domain_latex({"a": {"from": 1, "to": 5}, "p": [0.25, 0.25]}) == r"a \in \{1, \dots, 5\}, p = 0.25"
    assert domain_latex({"d": [[2, 10], [20, 30]]}) == r"d \in [2, 10] \cup [20, 30]"
    # one piece reads as that piece (it read "d \in 3"); a point among ranges is a one-element set
    assert domain_latex({"d": [[3]], "n": [[100]]}) == r"d = 3, n = 100"
    assert domain_latex({"d": [[3], [5, 8]]}) == r"d \in \{3\} \cup [5, 8]"
    # a small constant in exponent form, never 1e-06
    assert domain_latex({"C": 1e-06, "c": 2.5e-07}) == r"C = 10^{-6}, c = 2.5 \times 10^{-7}"


def test_the_loss_slopes_read_as_derivatives():
    for quantity, latex in (
        ("dbias_dw", r"\mathrm{d}(L^2 \mathcal{B})/\mathrm{d}w"),
        ("dnoise_dw", r"\mathrm{d}(\sigma^2 \mathcal{N})/\mathrm{d}w"),
    ):
        assert QUANTITY_LATEX[quantity] == latex


def test_the_proved_quantities_use_the_notation_table_s_symbols():
    """The bias and noise parts are calligraphic (B is the low-rank basis, N a count of points), a probability is
    \\mathbb{P} (P is the projector B B^T): no proved quantity prints B(w), N(w) or P(...)."""
    for quantity, latex in QUANTITY_LATEX.items():
        assert not re.search(r"(?<![\\{])\b[BN]\(w\)|(?<![\\{\w])P\(", latex), (quantity, latex)
    assert QUANTITY_LATEX["bias"] == r"L^2 \mathcal{B}(w)" and QUANTITY_LATEX["noise"] == r"\sigma^2 \mathcal{N}(w)"
    assert QUANTITY_LATEX["cap_tail"].startswith(r"\mathbb{P}(") and QUANTITY_LATEX["binomial_tail"].startswith(
        r"\mathbb{P}(N"
    )


def test_a_hostile_bound_is_never_evaluated_and_prints_as_code():
    text = "__import__('os').system('false')"
    out = bound_latex(text)
    assert out.startswith(r"\texttt{") and "import" in out  # refused by the bound reader, shown literally


def test_the_sharpest_constant_is_bracketed_by_a_proof_and_a_counterexample():
    (case,) = proof_cases([_record()], [])
    # proved at C = 1 (the alternative "rate 1" was proved too), refuted at 0.5 (1 + 1.3855)
    assert case.sharpest == "C* in [1, 1.19275)"
    (case,) = proof_cases([_record(alternatives=[])], [])
    assert case.sharpest.startswith("C* in [0.5, ")
    # the resolution's bisection proved the bound up to C = 1.18 on the whole domain: the bracket's proved end
    proof = {"verdict": "proved", "boxes": 5, "pieces": [], "proved_at": [0.5, 0.9, 1.18]}
    (case,) = proof_cases([_record(alternatives=[], proof=proof)], [])
    assert case.sharpest == "C* in [1.18, 1.19275)"


def test_a_loss_quantity_s_band_is_read_typeset_and_bracketed_in_its_own_constant():
    """A piece of a loss quantity names its class (``bias (affine) >= ...``); the claim's constant is ``T``,
    stated as a fraction, and an alternative that moves another constant is not a proof of a ``T``."""
    rule = (
        "proved on the whole domain by certified ball arithmetic (lipschitz_icl.prover.search: branch and bound"
        " on python-flint enclosures, at most 400 boxes per piece): bias (affine) >= L**2*T/(9*w**2) on {'d': [3],"
        " 'n': [10000], 'L': 1.0, 'sigma': 0.5, 'w': [4.0, 32.0]}; bias (affine) <= L**2/(9*T*w**2) on {'d': [3],"
        " 'n': [10000], 'L': 1.0, 'sigma': 0.5, 'w': [4.0, 32.0]}"
    )
    found, _ = inequalities(rule)
    assert [(i.quantity, i.relation) for i in found] == [("bias", ">="), ("bias", "<=")]
    proof = {"verdict": "proved", "boxes": 80, "pieces": [], "proved_at": [0.5, 0.75, 0.85], "constant": "T"}
    alternatives = [{"name": "S", "verdict": "proved", "detail": "proved at T = 0.5, S = 0.5 (3 boxes); ..."}]
    record = _record(
        rule=rule,
        proof=proof,
        alternatives=alternatives,
        resolution={"parameter": "relative increase of the tightness T (stated 1/2)", "low": 0.7, "high": 0.84},
    )
    (case,) = proof_cases([record], [])
    assert case.stated == 0.5 and case.sharpest == "T* in [0.85, 0.92)"
    (block,) = proof_blocks([case], {record["claim_id"]: 1}, lambda key, records: "the band")
    assert block["inequalities"][0] == r"L^2 \mathcal{B}(w) \ge \frac{L^{2} T}{9 w^{2}}"
    assert "T = 0.5" in block["cases"][0]["domain"]


def _certificate(tmp_path, name: str, **more) -> None:
    folder = tmp_path / "certificates"
    folder.mkdir(exist_ok=True)
    cert = {
        "format": "lipschitz-icl prove certificate",
        "version": 1,
        "statement": {
            "quantity": "w_star",
            "relation": "<=",
            "bound": "C*(n*L**2/sigma**2)**(2/(d+3))",
            "constants": {"C": 0.7},
            "domain": {"d": [[3, 3]], "n": [[100, 10000]]},
        },
        "precision_bits": 128,
        "sharpest": {"name": "C", "low": 0.612, "high": 0.6125},
        "parts": [],
        **more,
    }
    (folder / name).write_text(json.dumps(cert))


def test_a_paper_statement_proved_with_its_certificate(tmp_path):
    _certificate(tmp_path, "thm34-window-bound-d3.json")
    _certificate(tmp_path, "unnamed.json")
    (tmp_path / "certificates" / "broken.json").write_text("{not json")
    found = find_certificates([tmp_path])
    assert sorted(c.name for c in found) == ["broken.json", "thm34-window-bound-d3.json", "unnamed.json"]
    record = _record(
        claim_id="thm34/window-bound/affine/d3",
        key="thm34.window-bound",
        scope="paper",
        paper_ref="Theorem 3.4",
        rule="proved on the whole domain by certified ball arithmetic: no pieces written here",
        proof={"verdict": "proved", "boxes": 40, "certificate": "certificates/thm34-window-bound-d3.json"},
        resolution=None,
        alternatives=[],
    )
    (case,) = proof_cases([record], found)
    assert case.certificate is not None and case.certificate.name == "thm34-window-bound-d3.json"
    assert [i.quantity for i in case.inequalities] == ["w_star"]  # read from the certificate's statement
    assert case.sharpest.startswith("C in [0.612, 0.6125]")
    (block,) = proof_blocks([case], {record["claim_id"]: 7}, lambda key, records: records[0]["statement"])
    assert block["inequalities"] and r"w^* \le" in block["inequalities"][0]
    assert block["cases"][0]["number"] == 7 and "thm34-window-bound-d3.json" in block["cases"][0]["sharpest"]
    rows = certificate_rows(found, [case], {record["claim_id"]: 7})
    assert [r["name"] for r in rows] == ["broken.json", "unnamed.json"]  # the named one is shown in its row
    assert "not read" in rows[0]["case"] and rows[1]["case"] == "named by no record"


def test_the_sharpest_constant_reads_its_certified_ends_and_their_files_are_not_listed_apart(tmp_path):
    """A record whose gates wrote the bracket's certificates (``proof.bracket``) gives the sharpest constant from
    them, and the files are the case's own, never 'named by no record'."""
    for name in ("c.json", "c.proved.json", "c.refuted.json", "stray.json"):
        _certificate(tmp_path, name, sharpest=None)
    found = find_certificates([tmp_path])
    bracket = {
        "proved": {"value": 0.61, "files": ["c.proved.json"]},
        "refuted": {"value": 0.62, "files": ["c.refuted.json"]},
    }
    record = _record(
        proof={"verdict": "proved", "boxes": 5, "certificate": "c.json", "constant": "C", "bracket": bracket},
        resolution={"parameter": "relative increase of the rate C (stated 0.5)", "low": 0.1, "high": 0.3},
    )
    (case,) = proof_cases([record], found)
    assert case.sharpest == "C* in [0.61, 0.62)"  # the certified ends, not C (1 + high) = 0.65
    rows = certificate_rows(found, [case], {record["claim_id"]: 3})
    assert [r["name"] for r in rows] == ["stray.json"]


@pytest.mark.parametrize(
    "paper_ref, key, title",
    [
        (
            "Sphere concentration: projection tails (Dasgupta-Gupta, Lemma 2.2)",
            "concentration.projection-tails",
            "projection tails",
        ),
        (
            "Theorem 3.4 (its proof, Lemmas C.3-C.9: the noise part grows as the window narrows)",
            "loss_shape.noise-rises",
            "noise rises",
        ),
        (
            "Lemmas C.3-C.9 (the bias part falls as the window narrows, w grows)",
            "loss_shape.relu-bias-turns",
            "relu bias turns",
        ),
    ],
)
def test_a_proof_block_is_titled_by_a_top_level_colon_else_by_the_claim_s_name(paper_ref, key, title):
    """A colon inside the reference's parentheses is its remark, not a title ("the noise part grows as the
    window narrows)" was printed as one, with its stray parenthesis)."""
    record = _record(claim_id=key.replace(".", "/") + "/d3", key=key, paper_ref=paper_ref)
    (case,) = proof_cases([record], [])
    (block,) = proof_blocks([case], {record["claim_id"]: 1}, lambda key, records: records[0]["statement"])
    assert str(block["title"]).startswith(title + r" (\code{")  # the title, then the claim's key in parentheses


def test_long_decimals_and_round_integers_are_typeset_as_a_reader_writes_them():
    """A cold read found ``2697917882273567/10^15`` (a decimal of the bound's text, read as an exact rational),
    ``n in {2, ..., 1000000000000}`` and ``2.69 C + 2.69`` for ``(1 + C) 2.69`` in the proof displays."""
    from lipschitz_icl.report.proofs import bound_latex, domain_latex

    tex = bound_latex("(1 + C)*2.697917882273567")
    assert tex == r"2.697917882273567 \left(C + 1\right)"  # the factor of the text, not spread over the sum
    assert bound_latex("C*L**2/3") == r"\frac{C L^{2}}{3}"  # a short fraction stays one
    assert r"\{2, \dots, 10^{12}\}" in domain_latex({"n": {"from": 2, "to": 10**12}})
    assert "1234567" in domain_latex({"n": {"from": 2, "to": 1234567}})  # not round: every digit
    assert r"2 \times 10^{6}" in domain_latex({"n": {"from": 2, "to": 2 * 10**6}})


def test_a_case_of_several_pieces_shows_every_certificate_and_names_its_task_class(tmp_path):
    """Every certificate file of a case is listed in its row (not only the first), the task class the
    statement is proved for is named, and a quantity's code name prints as math, never as code."""
    for bits, name in ((128, "linear--error-floor--affine--d3.json"), (64, "linear--error-floor--affine--d3.1.json")):
        _certificate(tmp_path, name, precision_bits=bits)  # two files, two hashes
    found = find_certificates([tmp_path])
    record = _record(
        claim_id="linear/error-floor/affine/d3",
        key="linear.error-floor",
        scope="paper",
        params={"task": "affine", "d": 3},
        rule="proved ...: linear_error >= C*L**2/3 on {'d': [3], 'L': [1], 'n': {'from': 2, 'to': 100}}",
        proof={
            "verdict": "proved",
            "boxes": 1,
            "certificate": "certificates/linear--error-floor--affine--d3.json",
            "certificate_files": [
                "certificates/linear--error-floor--affine--d3.json",
                "certificates/linear--error-floor--affine--d3.1.json",
            ],
        },
        alternatives=[],
    )
    (case,) = proof_cases([record], found)
    (block,) = proof_blocks([case], {record["claim_id"]: 37}, lambda key, records: "")
    (row,) = block["cases"]
    shas = {c.sha256[:12] for c in found}
    assert len(shas) == 2 and all(sha in row["certificate"] for sha in shas)  # both pieces' files
    assert row["domain"].startswith("affine tasks; ")
    assert r"E_{\mathrm{lin}}(n)" in block["inequalities"][0] and "linear_error" not in block["inequalities"][0]
    assert QUANTITY_LATEX["linear_error"] == r"E_{\mathrm{lin}}(n)"


def test_the_report_states_the_libraries_the_certificates_record(tmp_path):
    """One line under the certificate table: the versions every file records, each record with its count where
    they differ, and how many files record none."""
    from lipschitz_icl.report.proofs import libraries_text

    made = {"python-flint": "0.9.0", "FLINT": "3.6.0"}
    _certificate(tmp_path, "a.json", libraries=made)
    _certificate(tmp_path, "b.json", libraries=made)
    assert libraries_text(find_certificates([tmp_path])) == "python-flint 0.9.0, FLINT 3.6.0"
    _certificate(tmp_path, "c.json", libraries={"python-flint": "0.8.0", "FLINT": "3.5.0"})
    _certificate(tmp_path, "d.json")
    assert libraries_text(find_certificates([tmp_path])) == (
        "python-flint 0.9.0, FLINT 3.6.0 (2 files); python-flint 0.8.0, FLINT 3.5.0 (1 file); "
        "none recorded in 1 of 4 files"
    )
    assert libraries_text([]) == ""


def test_pieces_at_different_values_of_a_parameter_say_which_beside_their_display():
    """wstar-follows-L printed w* <= 2.6979 beside w* >= 2.6979 (C + 1), which read as one w* squeezed: each
    display now names the L it is at; pieces that share their single values, or differ in a range, are not
    annotated."""
    low = Inequality("w_star", "<=", "2.697917882273567", {"d": [3], "n": [100], "sigma": 0.5, "L": 0.5})
    high = Inequality("w_star", ">=", "(1 + C)*2.697917882273567", {"d": [3], "n": [100], "sigma": 0.5, "L": 1.0})
    shown = merged_displays([low, high])
    assert shown[0].endswith("(L = 0.5)") and shown[1].endswith("(L = 1)")
    ranged = [
        Inequality("w_star", ">=", "8.737", {"d": [3], "n": {"from": 1000, "to": 1250}}),
        Inequality("w_star", "<=", "11.39", {"d": [3], "n": {"from": 1000, "to": 1249}}),
    ]
    assert merged_displays(ranged) == [r"w^* \ge 8.737", r"w^* \le 11.39"]


def test_a_certificate_the_record_names_but_the_folder_lacks_reads_not_found_in_one_short_cell(tmp_path):
    """A bare claims.json (no certificates/ folder) printed each missing file's whole name, three lines of the
    table per file: 23 pages for the CI's 20.  The cell now says 'not found'; the note under the tables says
    where the files belong and how they are named."""
    record = _record(
        claim_id="thm34/window-bound/affine/d3",
        key="thm34.window-bound",
        proof={"verdict": "proved", "boxes": 40, "certificate": "certificates/thm34-window-bound-d3.json"},
        resolution=None,
        alternatives=[],
    )
    (case,) = proof_cases([record], find_certificates([tmp_path]))
    (block,) = proof_blocks([case], {record["claim_id"]: 7}, lambda key, records: records[0]["statement"])
    cell = str(block["cases"][0]["certificate"])
    assert cell == r"{\tiny not found}"
