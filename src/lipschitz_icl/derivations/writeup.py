"""A derivation written up for a theorist: statement, assumptions, steps and results, as Markdown.

Each derivation module's ``document()`` returns a :class:`Document` built from the expression objects the
module computes; :func:`to_markdown` prints every formula with SymPy's LaTeX printer (``sympy.latex``), so
the text and the mathematics come from the same code.  Display formulas are GitHub ```` ```math ```` blocks
and inline mathematics in tables is ``$`...`$`` (GitHub's forms that Markdown leaves untouched).  Numbers
are printed by :func:`number`: 12 significant digits of the IEEE double, so the output is byte-identical
across runs and machines (for the same SymPy version).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

__all__ = ["Formula", "Table", "Step", "Document", "number", "to_markdown", "to_index", "SOURCE_DIR", "COMMAND"]

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
    """A table: ``header`` (text) and ``rows`` of cells: text, ``int``, ``float`` (:func:`number`), a SymPy
    expression (inline LaTeX) or ``None`` (not derived)."""

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


def _cell(value) -> str:
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
    if "\\|" in text or "\n" in text:
        raise ValueError(f"a table cell cannot hold '\\|' or a line break: {text!r}")
    return text.replace("|", "\\|")  # GFM: an escaped pipe stays in its cell, also inside code spans


def _table(table: Table) -> list[str]:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    for row in table.rows:
        if len(row) != len(table.header):
            raise ValueError(f"row {row!r} does not have {len(table.header)} cells")
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return lines


def _block(step: Step) -> list[str]:
    lines = [step.prose.strip(), ""] if step.prose else []
    for formula in step.formulas:
        lines += ["```math", formula.latex(), "```", ""]
    if step.table is not None:
        lines += _table(step.table) + [""]
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
    lines += _block(doc.statement)
    lines += ["## Assumptions", ""] + [f"- {a}" for a in doc.assumptions] + [""]
    lines += ["## Derivation", ""]
    for i, step in enumerate(doc.steps, 1):
        lines += [f"### {i}. {step.title}", ""] + _block(step)
    lines += ["## Results", ""]
    for step in doc.results:
        lines += [f"### {step.title}", ""] + _block(step)
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
