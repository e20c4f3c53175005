"""The proofs, written out: every case decided by rule ``proof``, as an inequality in typeset math.

For each claim decided by proof (any scope: the lemmas the paper's proofs cite, and the paper's own
statements once claims of scope ``paper`` are decided by proof) the report prints the statement, its
source (the record's ``paper_ref`` with the works it cites, :mod:`lipschitz_icl.report.references`), each
proved inequality ``quantity <= bound(C)`` typeset (the bound read by the project's bound reader
:func:`lipschitz_icl.expression.parse_expression` -- never ``eval`` -- and printed by SymPy), and per case
its domain, the method (branch and bound on python-flint/Arb ball enclosures, the end pieces decided by a
stated lemma), the boxes, the verdict, the sharpest constant where the resolution or the certificate
computed one, and the certificate file.

Sources, in order of preference: a certificate (``proof.certificate`` of the record, a file of the
certificates folder; format :mod:`lipschitz_icl.prover.certificate`) gives the statement, constants,
domain and the sharpest constant (``sharpest``); otherwise the record's ``rule`` text (``quantity <= bound
on {domain}; ...; lemma on ...``) and ``resolution`` (``low``/``high`` of the relative shift of the rate
``C`` that a certified counterexample refutes) are read.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from lipschitz_icl.report.latex import Latex, escape
from lipschitz_icl.report.mathtext import GREEK
from lipschitz_icl.report.scope import case_params

__all__ = [
    "Inequality",
    "ProofCase",
    "Certificate",
    "proof_cases",
    "inequalities",
    "domain_latex",
    "bound_latex",
    "find_certificates",
    "proof_blocks",
    "certificate_rows",
    "QUANTITY_LATEX",
    "CERTIFICATES",
]

CERTIFICATES = "certificates"  # the folder beside claims.json (and in --out) holding one file per proved case
MAX_CERTIFICATE_BYTES = 256 * 1024 * 1024

# the prover's quantities (lipschitz_icl.prover.enclosures, loss_enclosures) as they read in the report
QUANTITY_LATEX = {
    # a probability is \mathbb{P} (P alone is the projector B B^T)
    "cap_tail": r"\mathbb{P}(x\cdot q \ge h)",
    "projection_tail": r"\mathbb{P}(\|Px\|^2 \ge s)",
    "projection_lower_tail": r"\mathbb{P}(\|Px\|^2 \le s)",
    "binomial_tail": r"\mathbb{P}(N \ge a)",
    "binomial_lower_tail": r"\mathbb{P}(N \le a)",
    "w_star": r"w^*",
    "icl_error": r"\mathcal{L}(w^* I)",
    # the ICL loss of M = wI, its parts and their w-slopes as the report names them (the bias part L^2 B(w), the
    # noise part sigma^2 N(w) of the registry's statements, printed calligraphic: B is the low-rank basis)
    "bias": r"L^2 \mathcal{B}(w)",
    "noise": r"\sigma^2 \mathcal{N}(w)",
    "loss": r"\mathcal{L}(w I)",
    "dbias_dw": r"\mathrm{d}(L^2 \mathcal{B})/\mathrm{d}w",
    "dnoise_dw": r"\mathrm{d}(\sigma^2 \mathcal{N})/\mathrm{d}w",
    "dloss_dw": r"\mathrm{d}\mathcal{L}(w I)/\mathrm{d}w",
    "linear_error": r"E_{\mathrm{lin}}(n)",
    # the step in n of the loss's w-slope: dL/dw(w, n + 1) - dL/dw(w, n)
    "dloss_dw_step": r"\Delta_n\, \mathrm{d}\mathcal{L}(w I)/\mathrm{d}w",
}
_RELATIONS = {"<=": r"\le", ">=": r"\ge"}


@dataclass(frozen=True)
class Inequality:
    """``quantity relation bound`` on ``domain`` (a piece of a claim's domain)."""

    quantity: str
    relation: str
    bound: str
    domain: dict

    def latex(self, constant: str = "C") -> Latex:
        """Display math of the inequality (the domain apart: :func:`domain_latex`)."""
        left = quantity_latex(self.quantity)
        relation = _RELATIONS.get(self.relation, _RELATIONS["<="])
        return Latex(f"{left} {relation} {bound_latex(self.bound, self.domain, constant)}")


def quantity_latex(name: str) -> str:
    """A proved quantity as math (:data:`QUANTITY_LATEX`); one not listed there in words (``some_name`` ->
    ``\text{some name}``), never as a code name."""
    return QUANTITY_LATEX.get(name, r"\text{" + escape(name.replace("_", " ")) + "}")


@dataclass(frozen=True)
class Certificate:
    """A certificate file found in the certificates folder."""

    path: Path
    name: str
    size: int
    sha256: str
    statement: dict = field(default_factory=dict, hash=False)
    sharpest: dict | None = field(default=None, hash=False)
    precision_bits: int | None = None
    error: str = ""
    libraries: tuple = field(default=(), hash=False)  # ((name, version), ...) the file records, if any


@dataclass
class ProofCase:
    """One case decided by proof."""

    record: dict
    inequalities: list
    lemmas: list
    boxes: int | None
    certificate: Certificate | None
    certificate_named: str  # the file the record names (may be missing)
    sharpest: str  # plain text with ASCII math, "" if not computed
    stated: float | None
    pieces: list = field(default_factory=list)  # (file name, Certificate or None) of every file the case names


def bound_latex(text: str, domain: dict | None = None, constant: str = "C") -> str:
    """The bound ``text`` (the prover's expression language) as LaTeX printed by SymPy, a common factor of a sum
    taken out (``(1 + C)*2.69`` prints ``2.69 (C + 1)``: SymPy spreads a number over a sum it multiplies); the
    text itself as code when the bound reader refuses it."""
    import sympy as sp

    from lipschitz_icl.expression import ExpressionError, parse_expression

    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)) - {"exp", "log", "sqrt", "abs", "min", "max", "pi"}
    try:
        expr = parse_expression(text, names | {constant})
    except ExpressionError:
        return r"\texttt{" + escape(text) + "}"
    return _exp_printer().doprint(sp.factor_terms(_decimals(expr.sympy)))


def _decimals(expr):
    """``expr`` with each rational of a long decimal of the bound's text (denominator a power of ten beyond 10,
    :func:`_decimal`) written back as that decimal, to its own digits: ``2.697917882273567 C``, not
    ``\\frac{2697917882273567 C}{1000000000000000}`` (a display only; the proof is the certificate's)."""
    import sympy as sp

    swaps = {}
    for r in expr.atoms(sp.Rational):
        decimal = _decimal(int(r.p), int(r.q))
        if decimal is not None:
            swaps[r] = sp.Float(decimal, dps=len(decimal.replace("-", "").replace(".", "")))
    return expr.xreplace(swaps) if swaps else expr


def _exp_printer():
    """SymPy's LaTeX printer with ``exp(x)`` printed ``\\exp(x)`` (a long exponent is read on the line,
    not in a superscript)."""
    from sympy.printing.latex import LatexPrinter  # type: ignore[import-untyped]

    class ExpPrinter(LatexPrinter):
        def _print_ExpBase(self, expr, exp=None):
            tex = r"\exp\left(" + self._print(expr.args[0]) + r"\right)"
            return self._do_exponent(tex, exp)

    return ExpPrinter()


def _decimal(p: int, q: int) -> str | None:
    """``p/q`` written exactly as a decimal when it is a decimal of at least two places whose fraction SymPy may
    have reduced (a decimal of the bound's text read as an exact rational: ``2697917882273567/10^15`` is
    ``2.697917882273567``, and ``8.737861802355354`` arrives as ``4368930901177677/(5 10^14)``): ``q`` divides
    ``10^k`` for some ``k >= 2`` and is at least 100 or ``k >= 6`` (so ``2/5`` and ``1/8`` stay fractions);
    else None."""
    digits = next((k for k in range(2, 40) if (10**k) % q == 0), None)
    if digits is None or (q < 100 and digits < 6):
        return None
    p, q = p * (10**digits // q), 10**digits
    sign, whole, fraction = "-" if p < 0 else "", *divmod(abs(p), q)
    return f"{sign}{whole}." + f"{fraction:0{digits}d}".rstrip("0")


def _point(value) -> bool:
    """A range whose ends print alike (an enclosure of one number): shown as that number."""
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) for v in value)
        and _number(value[0]) == _number(value[1])
    )


def _number(x) -> str:
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return _integer(x)
    if isinstance(x, float):
        text = f"{x:.6g}"
        if "e" not in text:
            return text
        mantissa, exponent = text.split("e")
        power = rf"10^{{{int(exponent)}}}"  # 1e-06 as 10^{-6} (math mode)
        return power if mantissa == "1" else rf"{mantissa} \times {power}"
    return escape(str(x))


def _integer(x: int) -> str:
    """An integer exactly, a large round one as a power of ten: ``10^{12}``, ``2 \times 10^{6}``."""
    zeros = len(str(abs(x))) - len(str(abs(x)).rstrip("0"))
    mantissa = x // 10**zeros if zeros else x
    if abs(x) < 10**6 or zeros < 6 or len(str(abs(mantissa))) > 3:
        return str(x)
    power = rf"10^{{{zeros}}}"
    return power if mantissa == 1 else rf"{mantissa} \times {power}"


def domain_latex(domain: dict) -> Latex:
    """``d = 3, h \\in [0, 1]``, ``a \\in \\{25, \\dots, 99\\}`` (math mode)."""
    parts: list[str] = []
    for name, value in domain.items():
        symbol = GREEK.get(str(name), escape(str(name)))  # sigma as \sigma (math mode)
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple)) for v in value):
            pieces = [domain_latex({name: v}) for v in value]
            if len(pieces) == 1:  # one piece: d = 3, or h in [0, 1]
                parts.append(pieces[0])
                continue
            sets = [
                piece.split(r" \in ", 1)[-1] if r" \in " in piece else r"\{" + piece.split(" = ", 1)[-1] + r"\}"
                for piece in pieces
            ]
            parts.append(rf"{symbol} \in " + r" \cup ".join(sets))
        elif isinstance(value, dict) and "from" in value and "to" in value:
            parts.append(rf"{symbol} \in \{{{_number(value['from'])}, \dots, {_number(value['to'])}\}}")
        elif isinstance(value, (list, tuple)) and len(value) == 2 and value[0] != value[1] and not _point(value):
            parts.append(rf"{symbol} \in [{_number(value[0])}, {_number(value[1])}]")
        elif isinstance(value, (list, tuple)) and value:
            parts.append(rf"{symbol} = {_number(value[0])}")
        else:
            parts.append(rf"{symbol} = {_number(value)}")
    return Latex(", ".join(parts))


def _balanced(text: str, start: int) -> int:
    """The index after the ``}`` closing the ``{`` at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    return len(text)


_PIECE = re.compile(r"(?P<q>[a-z][a-z_]*)(?: \([a-z]+\))? (?P<rel><=|>=) (?P<bound>.+?) on (?=\{)")


def inequalities(rule: str) -> tuple[list[Inequality], list[str]]:
    """The pieces ``quantity <= bound on {domain}`` of a proof record's ``rule`` and its lemma texts."""
    head, _, body = rule.partition("): ")
    text = body or head
    found, lemmas, pos = [], [], 0
    while (m := _PIECE.search(text, pos)) is not None:
        end = _balanced(text, m.end())
        try:
            domain = ast.literal_eval(text[m.end() : end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            domain = None
        if isinstance(domain, dict):
            found.append(Inequality(m.group("q"), m.group("rel"), m.group("bound"), domain))
        pos = end
    lemmas = [s.strip() for s in text[pos:].split("; ") if s.strip().startswith("lemma")]
    return found, lemmas


def _object(record: dict, key: str) -> dict:
    """``record[key]`` when it is an object, else ``{}``."""
    value = record.get(key)
    return value if isinstance(value, dict) else {}


def _constant(record: dict) -> str:
    """The name of the constant a proof record's resolution moves (``C`` unless the proof names another)."""
    name = _object(record, "proof").get("constant")
    return name if isinstance(name, str) and re.fullmatch(r"[A-Za-z]\w*", name) else "C"


def _stated(record: dict) -> float | None:
    """The stated constant, from the resolution's parameter (``... (stated 1e-6)``, ``(stated 1/2)``)."""
    res = _object(record, "resolution")
    m = re.search(r"\(stated ([0-9.eE+-]+)(?:/([0-9]+))?\)", str(res.get("parameter", "")))
    if m:
        try:
            value = float(m.group(1))
            return value / int(m.group(2)) if m.group(2) else value
        except (ValueError, ZeroDivisionError):
            return None
    return None


def _sharpest(record: dict, certificate: Certificate | None, stated: float | None) -> str:
    """The sharpest constant as computed: the certificate's interval, else the resolution's bracket of
    the rate ``C``: proved at the largest of the stated value, a proved alternative's and the constants the
    proof recorded as proved on the whole domain (``proof.proved_at``: the resolution's bisection proves
    below the threshold); refuted by a certified counterexample at ``C (1 + high)``."""
    if certificate is not None and isinstance(certificate.sharpest, dict):
        s = certificate.sharpest
        name = str(s.get("name", "C"))
        low, high = s.get("low"), s.get("high")
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            return f"{name} in [{low:.6g}, {high:.6g}] (certified; certificate {certificate.name})"
    res = record.get("resolution")
    if not isinstance(res, dict) or stated is None or record.get("verdict") != "proved":
        return ""
    proof = record.get("proof")
    ends = bracket_values(record)
    if "proved" in ends and "refuted" in ends:  # both ends certified, their files beside the report
        return f"{_constant(record)}* in [{ends['proved']:.6g}, {ends['refuted']:.6g})"
    recorded = proof.get("proved_at", []) if isinstance(proof, dict) else []
    proved_at = [c for c in recorded if isinstance(c, (int, float)) and math.isfinite(c)]
    proved = max([stated, *_proved_alternatives(record), *proved_at])
    name = _constant(record)
    low, high = res.get("low"), res.get("high")
    if not isinstance(high, (int, float)) or not math.isfinite(high):
        return f"proved at {name} = {proved:.6g}; no counterexample found up to the search limit"
    refuted = stated * (1 + high)
    return f"{name}* in [{proved:.6g}, {refuted:.6g})"


def bracket_values(record: dict) -> dict[str, float]:
    """The sharpest constant's certified ends as the gates recorded them (``proof.bracket``: ``proved`` the
    largest constant proved, ``refuted`` the smallest refuted, each with its certificate files)."""
    bracket = _object(_object(record, "proof"), "bracket")
    out = {}
    for end in ("proved", "refuted"):
        value = _object(bracket, end).get("value")
        if isinstance(value, (int, float)) and math.isfinite(value):
            out[end] = float(value)
    return out


def bracket_files(record: dict) -> list[str]:
    """The certificate files of the sharpest constant's two ends (``proof.bracket``), proved end first."""
    bracket = _object(_object(record, "proof"), "bracket")
    files = [_object(bracket, end).get("files") for end in ("proved", "refuted")]
    return [Path(f).name for group in files if isinstance(group, list) for f in group if isinstance(f, str)]


def _proved_alternatives(record: dict) -> list[float]:
    """The constants at which a pre-specified alternative (another value of the claim's constant, nothing
    else moved) was proved as well."""
    name = re.escape(_constant(record))
    out = []
    for alt in record.get("alternatives", []):
        if isinstance(alt, dict) and alt.get("verdict") == "proved":
            m = re.match(rf"proved at {name} = ([0-9.eE+-]+) \(", str(alt.get("detail", "")))
            if m:
                try:
                    out.append(float(m.group(1)))
                except ValueError:
                    continue
    return out


def find_certificates(directories) -> list[Certificate]:
    """Every ``*.json`` file of the certificates folders in ``directories`` (first found of each name), read
    for its statement and sharpest constant; a file that is not a certificate is listed with its error."""
    import hashlib

    seen: dict[str, Certificate] = {}
    for directory in directories:
        folder = Path(directory) / CERTIFICATES
        if not folder.is_dir() or folder.is_symlink():
            continue
        for path in sorted(folder.glob("*.json")):
            if path.name in seen or path.is_symlink() or not path.is_file():
                continue
            try:
                raw = path.read_bytes()[: MAX_CERTIFICATE_BYTES + 1]
            except OSError as exc:
                seen[path.name] = Certificate(path, path.name, 0, "", error=exc.strerror or "unreadable")
                continue
            digest = hashlib.sha256(raw).hexdigest()
            cert = Certificate(path, path.name, len(raw), digest)
            try:
                data = json.loads(raw.decode("utf-8"))
                if not (isinstance(data, dict) and data.get("format") == "lipschitz-icl prove certificate"):
                    raise ValueError("not a lipschitz-icl certificate")
                statement = _object(data, "statement")
                sharpest = _object(data, "sharpest") or None
                bits = data.get("precision_bits") if isinstance(data.get("precision_bits"), int) else None
                made_by = tuple((str(k), str(v)) for k, v in _object(data, "libraries").items())
                cert = Certificate(path, path.name, len(raw), digest, statement, sharpest, bits, libraries=made_by)
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                cert = Certificate(path, path.name, len(raw), digest, error=str(exc)[:120])
            seen[path.name] = cert
    return list(seen.values())


def libraries_text(certificates: list[Certificate]) -> str:
    """What the certificates record of the libraries that made them: ``"python-flint 0.9.0, FLINT 3.6.0"`` when
    every readable one records the same, each distinct record with its count when they differ, and how many
    record none (``""`` when no certificate was read)."""
    readable = [c for c in certificates if not c.error]
    if not readable:
        return ""
    kinds: dict[tuple, int] = {}
    for cert in readable:
        kinds[cert.libraries] = kinds.get(cert.libraries, 0) + 1
    named = {k: n for k, n in kinds.items() if k}
    parts = [", ".join(f"{name} {version}" for name, version in k) for k in named]
    if len(named) > 1:
        parts = [f"{text} ({named[k]} file{'' if named[k] == 1 else 's'})" for text, k in zip(parts, named)]
    missing = kinds.get((), 0)
    if missing:
        parts.append(f"none recorded in {missing} of {len(readable)} files")
    return "; ".join(parts)


def _named_certificate(record: dict) -> str:
    named = _object(record, "proof").get("certificate")
    return Path(named).name if isinstance(named, str) and named else ""


def _from_certificate(cert: Certificate) -> list[Inequality]:
    st = cert.statement
    if not st or not isinstance(st.get("bound"), str) or not isinstance(st.get("domain"), dict):
        return []
    return [Inequality(str(st.get("quantity", "")), str(st.get("relation", "<=")), st["bound"], st["domain"])]


def proof_cases(records: list, certificates: list[Certificate]) -> list[ProofCase]:
    """Every record decided by proof, with its inequalities, sharpest constant and certificate."""
    by_name = {c.name: c for c in certificates}
    out = []
    for record in records:
        if record.get("rule_name") != "proof":
            continue
        named = _named_certificate(record)
        cert = by_name.get(named) if named else None
        found, lemmas = inequalities(str(record.get("rule", "")))
        if cert is not None and not found:
            found = _from_certificate(cert)
        proof = _object(record, "proof")
        boxes = proof.get("boxes") if isinstance(proof.get("boxes"), int) else None
        stated = _stated(record)
        files = proof.get("certificate_files")
        names = [Path(f).name for f in files if isinstance(f, str)] if isinstance(files, list) else []
        names = list(dict.fromkeys([named, *names] if named else names))
        pieces = [(name, by_name.get(name)) for name in names]
        out.append(
            ProofCase(record, found, lemmas, boxes, cert, named, _sharpest(record, cert, stated), stated, pieces)
        )
    return out


def compact_domain(found: list[Inequality], lemmas: list[str], rename: dict) -> Latex:
    """A case's domain in one line: the parameters every piece fixes alike, then each piece's own
    ranges by its side (``P(N >= a)``), then the end pieces a lemma decides."""
    from lipschitz_icl.report.mathtext import to_latex

    if not found:
        return Latex("; ".join(to_latex(text, rename=rename) for text in lemmas))
    common = {
        name: value
        for name, value in found[0].domain.items()
        if all(i.domain.get(name) == value for i in found[1:]) and not _is_range(value)
    }
    parts = [Latex("$" + domain_latex(common) + "$")] if common else []
    for ineq in found:
        own = {k: v for k, v in ineq.domain.items() if k not in common}
        if own:
            left = quantity_latex(ineq.quantity)
            parts.append(Latex(f"${left}$: ${domain_latex(own)}$"))
    parts.extend(to_latex(text.replace("lemma on ", "by a lemma on "), rename=rename) for text in lemmas)
    return Latex("; ".join(parts))


def _is_range(value) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, (list, tuple)) and len(value) == 2 and value[0] != value[1] and not _point(value)


def _title(record: dict) -> str:
    """A proof block's title: what follows a top-level colon of the paper reference ("Sphere concentration:
    projection tails (...)" gives "projection tails"); else the claim's name in words ("noise-rises" gives
    "noise rises": a colon inside parentheses belongs to the reference's own remark)."""
    ref = str(record.get("paper_ref", ""))
    depth = 0
    for i, char in enumerate(ref):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and ref.startswith(": ", i):
            return ref[i + 2 :].split(" (", 1)[0]
    key = str(record.get("key") or record["claim_id"])
    return key.split(".", 1)[-1].split("/", 1)[0].replace("-", " ")


def proof_blocks(cases: list[ProofCase], numbers: dict, statement_of) -> list[dict]:
    """One block per claim decided by proof (LaTeX for the report): title, source with its citations,
    statement, the distinct inequalities proved (display math), and a row per case (domain, boxes, verdict,
    sharpest constant, and the first 12 hex digits of its certificate's SHA-256).  ``statement_of(key,
    records)`` gives a claim's statement."""
    from lipschitz_icl.report.mathtext import code, to_latex
    from lipschitz_icl.report.references import citations
    from lipschitz_icl.report.symbols import rename_for

    blocks: dict[str, dict] = {}
    for case in cases:
        record = case.record
        key = str(record.get("key") or record["claim_id"])
        rename = rename_for(key)
        if key not in blocks:
            records = [c.record for c in cases if str(c.record.get("key") or c.record["claim_id"]) == key]
            ref = str(record.get("paper_ref", ""))
            cites = citations(ref, str(record.get("statement", "")))
            source = Latex(to_latex(ref, rename=rename) + (r"~\cite{" + ",".join(cites) + "}" if cites else ""))
            scope = str(record.get("scope", ""))
            blocks[key] = {
                "title": Latex(to_latex(_title(record)) + " (" + code(key) + ")"),
                "source": source,
                "statement": to_latex(statement_of(key, records), rename=rename),
                "scope_note": escape(f"scope: {scope}"),
                "inequalities": [],
                "cases": [],
                "_seen": set(),
                "_forms": [],
            }
        block = blocks[key]
        stated = Latex("") if case.stated is None else Latex(f", ${_constant(record)} = {_number(float(case.stated))}$")
        for ineq in case.inequalities:
            form = (ineq.quantity, ineq.relation, ineq.bound)
            if form not in block["_seen"]:
                block["_seen"].add(form)
                block["_forms"].append(ineq)
        # every file of the case (a case of several pieces has one each; named after the case id, module
        # docstring of lipschitz_icl.gates.pytest_plugin), each by the first 12 hex digits of its SHA-256
        # (in the smallest type, two to a line: a case of four pieces takes two lines); a file the record names
        # that is not in the folder reads "not found" (its name is the case id's, stated under the table)
        shown = [
            Latex(r"{\tiny " + code(cert.sha256[:12]) + "}") if cert is not None else Latex(r"{\tiny not found}")
            for _, cert in case.pieces
        ]
        certificate = Latex(" ".join(shown)) if shown else Latex("--")
        sharpest = to_latex(case.sharpest) if case.sharpest else Latex("--")
        block["cases"].append(
            {
                "number": numbers.get(record["claim_id"], 0),
                "domain": Latex(_task_class(record) + compact_domain(case.inequalities, case.lemmas, rename) + stated),
                "boxes": "--" if case.boxes is None else str(case.boxes),
                "verdict": escape(str(record.get("verdict", ""))),
                "sharpest": sharpest,
                "certificate": certificate,
            }
        )
    for block in blocks.values():
        block.pop("_seen")
        block["inequalities"] = merged_displays(block.pop("_forms"))
    return list(blocks.values())


def _task_class(record: dict) -> Latex:
    """``affine tasks; `` when the case proves a statement of one task class (its ``task`` parameter, else a
    class named in its claim's key, e.g. ``relu-bias-turns``), ``""`` when the statement holds for every
    class (the noise part)."""
    from lipschitz_icl.report.symbols import TASKS

    task = case_params(record).get("task")
    if not isinstance(task, str):
        name = str(record.get("key", "")).split(".", 1)[-1]
        task = next((t for t in ("affine", "relu", "cosine") if re.search(rf"\b{t}\b", name)), None)
    return Latex(escape(f"{TASKS.get(task, task)} tasks; ")) if task else Latex("")


def merged_displays(forms: list[Inequality]) -> list[Latex]:
    """One display per distinct bound: the quantities it bounds joined (``P(N >= a), P(N <= a) <= ...``); where
    the pieces sit at different single values of a parameter (``w*(L_low) <= Y`` beside ``w*(L_high) >= (1 +
    C) Y``), each display says at which (``(L = 0.5)``): without it the two read as one ``w*`` squeezed."""
    by_bound: dict[tuple, list[Inequality]] = {}
    for ineq in forms:
        by_bound.setdefault((ineq.relation, ineq.bound), []).append(ineq)
    apart = _points_apart(forms)
    out = []
    for (relation, bound), members in by_bound.items():
        lefts = list(dict.fromkeys(quantity_latex(i.quantity) for i in members))
        rel = _RELATIONS.get(relation, _RELATIONS["<="])
        display = ",\\quad ".join(lefts) + f" {rel} " + bound_latex(bound, members[0].domain)
        at = {name: members[0].domain[name] for name in apart}
        if apart and all(all(i.domain.get(k) == v for k, v in at.items()) for i in members):
            display += r"\quad (" + domain_latex(at) + ")"
        out.append(Latex(display))
    return out


def _points_apart(forms: list[Inequality]) -> list[str]:
    """The parameters that every piece fixes at one value, not the same for all (printed beside each display)."""
    names = [name for name in forms[0].domain if all(name in i.domain for i in forms)] if forms else []
    out = []
    for name in names:
        shown = {domain_latex({name: i.domain[name]}) for i in forms}
        if len(shown) > 1 and not any(r"\in" in text for text in shown):
            out.append(name)
    return out


def certificate_rows(certificates: list[Certificate], cases: list[ProofCase], numbers: dict) -> list[dict]:
    """One row per certificate file found that no case's row shows (named by no record, or not readable):
    name, size, the first 16 hex digits of its SHA-256 and why it is listed apart."""
    named: dict[str, list[int]] = {}
    for case in cases:
        if case.certificate is not None:
            named.setdefault(case.certificate.name, []).append(numbers.get(case.record["claim_id"], 0))
        further = _object(case.record, "proof").get("certificate_files")  # a case of several pieces: one file each
        for name in further if isinstance(further, list) else []:
            if isinstance(name, str):
                named.setdefault(Path(name).name, []).append(numbers.get(case.record["claim_id"], 0))
        for name in bracket_files(case.record):  # the sharpest constant's ends (stated in the section's text)
            named.setdefault(name, []).append(numbers.get(case.record["claim_id"], 0))
    rows = []
    for cert in certificates:
        if cert.error:
            which = f"not read: {cert.error}"
        elif cert.name in named:
            continue  # shown in the row of the case that names it
        else:
            which = "named by no record"
        rows.append({"name": escape(cert.name), "size": str(cert.size), "sha": cert.sha256[:16], "case": escape(which)})
    return rows
