"""A derivation written up for a theorist: statement, assumptions, steps and results, as Markdown.

Each derivation module's ``document()`` returns a :class:`Document` built from the expression objects the
module computes; :func:`to_markdown` prints every formula with SymPy's LaTeX printer (``sympy.latex``), so
the text and the mathematics come from the same code.  Display formulas are GitHub ```` ```math ```` blocks
and inline mathematics in tables is ``$`...`$`` (GitHub's forms that Markdown leaves untouched).  Exact
numbers (SymPy expressions evaluated at 30 digits) are printed by :func:`number`: 12 significant digits of the
IEEE double, the same on every machine (for the same SymPy version).  A number computed numerically (a
quadrature, a search) is an :class:`Approximate` cell: printed to the digits its stated accuracy warrants, and
compared numerically by :func:`agrees` (what ``lipschitz-icl derivations --check`` uses), since its last digits
can differ between machines (the order of a sum, a search's path) by up to its accuracy.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import sympy as sp

__all__ = [
    "Formula",
    "Table",
    "Step",
    "Document",
    "Approximate",
    "number",
    "to_markdown",
    "to_index",
    "agrees",
    "SOURCE_DIR",
    "COMMAND",
]

SOURCE_DIR = "src/lipschitz_icl/derivations"
COMMAND = "lipschitz-icl derivations --out derivations"
RELATIONS = ("=", r"\approx", r"\sim")
SIGNIFICANT = 12


def number(value) -> str:
    """``value`` (a float or a SymPy number) as text: its double rounded to 12 significant digits."""
    x = float(sp.N(value, 30)) if isinstance(value, sp.Basic) else float(value)
    if not math.isfinite(x):
        raise ValueError(f"a document number must be finite, got {x}")
    return f"{x + 0.0:.{SIGNIFICANT}g}"  # + 0.0 turns -0.0 into 0.0


@dataclass(frozen=True)
class Approximate:
    """A number computed numerically with its stated absolute ``accuracy`` (``|value - exact| <= accuracy``):
    printed to :attr:`digits` significant digits, the last of whose unit is at least the accuracy (at most 12);
    two computations of it may differ by up to twice the accuracy, so :func:`agrees` compares it within that."""

    value: float
    accuracy: float

    def __post_init__(self):
        if not (math.isfinite(self.value) and math.isfinite(self.accuracy) and self.accuracy >= 0):
            raise ValueError(f"an approximate number is finite with a finite accuracy >= 0, got {self}")

    @property
    def digits(self) -> int:
        """``floor(log10 |value|) - ceil(log10 accuracy) + 1`` within ``[1, 12]`` (12 for an exact 0 accuracy)."""
        if self.accuracy == 0 or self.value == 0:
            return SIGNIFICANT
        digits = math.floor(math.log10(abs(self.value))) - math.ceil(math.log10(self.accuracy)) + 1
        return max(1, min(SIGNIFICANT, digits))

    def text(self) -> str:
        return f"{self.value + 0.0:.{self.digits}g}"

    def admits(self, text: str) -> bool:
        """``text`` (a printed number) is this number as another computation may print it: within twice the
        accuracy and half a unit of its last printed digit."""
        try:
            found = float(text)
        except ValueError:
            return False
        unit = 10.0 ** (math.floor(math.log10(abs(found))) - self.digits + 1) if found else 0.0
        return abs(found - self.value) <= 2.0 * self.accuracy + 0.5 * unit * (1 + 1e-9) + 1e-15 * abs(self.value)


@dataclass(frozen=True)
class Formula:
    """A displayed formula ``lhs relation rhs`` (or ``lhs`` alone), both sides SymPy objects."""

    lhs: object
    rhs: object = None
    relation: str = "="

    def latex(self) -> str:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {self.relation!r}")
        text = sp.latex(sp.sympify(self.lhs))
        if self.rhs is not None:
            text += f" {self.relation} {sp.latex(sp.sympify(self.rhs))}"
        return text


@dataclass(frozen=True)
class Table:
    """A table: ``header`` (text) and ``rows`` of cells: text, ``int``, ``float`` (:func:`number`), an
    :class:`Approximate`, a SymPy expression (inline LaTeX) or ``None`` (not derived)."""

    header: tuple
    rows: tuple


@dataclass(frozen=True)
class Step:
    """One step: a title, short prose, its formulas and optionally a table."""

    title: str
    prose: str
    formulas: tuple = ()
    table: Table | None = None


@dataclass(frozen=True)
class Document:
    """A derivation: ``name`` is its module (and file stem), ``summary`` its line in the index, ``claims`` the
    registry keys whose theory numbers it gives (``used_by``: modules that evaluate its formulas)."""

    name: str
    title: str
    summary: str
    paper: str
    claims: tuple
    used_by: tuple
    statement: Step
    assumptions: tuple
    steps: tuple
    results: tuple
    exactness: str


_SLOT = "\x00"  # where an Approximate cell stands in a template (never in a document: _cell refuses it)
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)"


def _cell(value, slots: list | None = None) -> str:
    if isinstance(value, Approximate):
        if slots is None:
            return value.text()
        slots.append(value)
        return _SLOT
    if value is None:
        text = "—"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        raise TypeError("a table cell cannot be a bool")
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = number(value)
    else:
        text = f"$`{sp.latex(sp.sympify(value))}`$"
    if "\\|" in text or "\n" in text or _SLOT in text:
        raise ValueError(f"a table cell cannot hold '\\|' or a line break: {text!r}")
    return text.replace("|", "\\|")  # GFM: an escaped pipe stays in its cell, also inside code spans


def _table(table: Table, slots: list | None = None) -> list[str]:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    for row in table.rows:
        if len(row) != len(table.header):
            raise ValueError(f"row {row!r} does not have {len(table.header)} cells")
        lines.append("| " + " | ".join(_cell(c, slots) for c in row) + " |")
    return lines


def _block(step: Step, slots: list | None = None) -> list[str]:
    lines = [step.prose.strip(), ""] if step.prose else []
    for formula in step.formulas:
        lines += ["```math", formula.latex(), "```", ""]
    if step.table is not None:
        lines += _table(step.table, slots) + [""]
    return lines


def _links(doc: Document) -> str:
    source = f"[`{SOURCE_DIR}/{doc.name}.py`](../{SOURCE_DIR}/{doc.name}.py)"
    parts = [f"**Code:** {source}", f"**Paper:** {doc.paper}"]
    parts.append("**Claims:** " + (", ".join(f"`{c}`" for c in doc.claims) if doc.claims else "none directly"))
    if doc.used_by:
        parts.append("**Used by:** " + ", ".join(f"`{m}`" for m in doc.used_by))
    return ". ".join(parts) + "."


def to_markdown(doc: Document) -> str:
    """The document as Markdown (ends with one newline)."""
    return _render(doc, None)


def agrees(doc: Document, text: str) -> bool:
    """``text`` is the document: equal to :func:`to_markdown` except that each :class:`Approximate` number may
    be printed as another computation of it would be (:meth:`Approximate.admits`)."""
    slots: list[Approximate] = []
    parts = _render(doc, slots).split(_SLOT)
    if len(parts) == 1:
        return text == parts[0]
    found = re.fullmatch(_NUMBER.join(re.escape(part) for part in parts), text)
    return found is not None and all(slot.admits(cell) for slot, cell in zip(slots, found.groups()))


def _render(doc: Document, slots: list | None) -> str:
    """The document as Markdown; with ``slots``, each :class:`Approximate` cell is left as a slot (appended)."""
    lines = [
        f"# {doc.title}",
        "",
        f"<!-- Generated from {SOURCE_DIR}/{doc.name}.py by `{COMMAND}`: edit the code, not this file. -->",
        "",
        _links(doc),
        "",
        "## Statement",
        "",
    ]
    lines += _block(doc.statement, slots)
    lines += ["## Assumptions", ""] + [f"- {a}" for a in doc.assumptions] + [""]
    lines += ["## Derivation", ""]
    for i, step in enumerate(doc.steps, 1):
        lines += [f"### {i}. {step.title}", ""] + _block(step, slots)
    lines += ["## Results", ""]
    for step in doc.results:
        lines += [f"### {step.title}", ""] + _block(step, slots)
    lines += [f"*Exact and numeric:* {doc.exactness}", ""]
    return "\n".join(lines)


def to_index(docs) -> str:
    """``README.md`` of the documents' folder: one line per document, what it derives, which claims use it."""
    rows = tuple(
        (f"[{d.name}.md]({d.name}.md)", d.summary, ", ".join(f"`{c}`" for c in d.claims) or "none directly")
        for d in docs
    )
    lines = [
        "# Derivations",
        "",
        f"<!-- Generated by `{COMMAND}`: edit the code in {SOURCE_DIR}/, not these files. -->",
        "",
        "The derivations behind the project's theory numbers, one document per module of "
        f"[`{SOURCE_DIR}/`](../{SOURCE_DIR}/): its statement, assumptions, the steps as the SymPy code performs "
        "them and the results. Every formula is printed by `sympy.latex` from the expression the code computes, "
        "and every number is the value the derivation's functions return to the claims (12 significant "
        "digits).",
        "",
        f"Rebuild after changing a derivation: `{COMMAND}` (`--force` to overwrite). "
        f"CI runs `{COMMAND} --check`, which fails when a document here is stale.",
        "",
    ]
    lines += _table(Table(("document", "what it derives", "claims that use it"), rows)) + [""]
    return "\n".join(lines)
