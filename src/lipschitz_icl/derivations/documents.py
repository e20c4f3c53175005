"""The derivations as documents a theorist reads: the contents of the top-level ``derivations/`` folder.

:func:`files` returns ``{file name: text}``: ``<module>.md`` from each derivation module's ``document()``
(rendered by :mod:`lipschitz_icl.derivations.writeup`) and ``README.md``, their index.  The command
``lipschitz-icl derivations --out derivations`` writes them, and with ``--check`` compares them with the
committed files (:func:`current`: numbers computed numerically within their stated accuracy, the rest as text).
The regularity law is worked through for the kernels of the ``regularity`` claims, the saddle
for the cases of ``thm44.saddle`` (its design and full grid, copied here: the tests compare them with the registry).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from lipschitz_icl.derivations import (
    generalisation,
    kernel_identity,
    linear_attention,
    ratio_expansion,
    regularity,
    saddle,
    sphere_asymptotics,
    window_law,
    writeup,
)
from lipschitz_icl.derivations.writeup import Document, to_index, to_markdown
from lipschitz_icl.problem import matched_problem
from lipschitz_icl.tasks import zonal

__all__ = [
    "SUPPORT_MODULES",
    "REGULARITY_DIMS",
    "REGULARITY_EXPRESSIONS",
    "regularity_examples",
    "SADDLE_DESIGN",
    "SADDLE_GRID",
    "saddle_cases",
    "documents",
    "files",
    "current",
    "INDEX",
]

SUPPORT_MODULES = ("documents", "writeup")  # modules of the package that are not derivations
INDEX = "README.md"
REGULARITY_DIMS = (3, 5)
# the regularity claims' kernels beyond the built-in classes (the union of their [claim.design] kernels)
REGULARITY_EXPRESSIONS = (
    ("exponential", "exp(-sqrt(2-2*t))"),
    ("matern32", "(1 + sqrt(3)*sqrt(2-2*t))*exp(-sqrt(3)*sqrt(2-2*t))"),
)


def regularity_examples() -> tuple:
    """``(label, K(t), d)`` for the built-in classes (``L = 1``, cosine ``k = 1``) and the expression kernels,
    each the object the project builds (:mod:`lipschitz_icl.tasks.zonal`)."""
    out = []
    for d in REGULARITY_DIMS:
        out += [(name, zonal.builtin_kernel(name, d, 1.0, 1.0).sympy, d) for name in zonal.BUILTIN_KERNELS]
        out += [(name, zonal.expression_kernel(text, d).sympy, d) for name, text in REGULARITY_EXPRESSIONS]
    return tuple(out)


# thm44.saddle: the design numbers that shape the derived ones, and the full grid as (task, d, k)
SADDLE_DESIGN: dict[str, Any] = {"n": 20, "L0": 1.0, "sigma": 0.3, "step": 0.04, "scale_bounds": (0.5, 50.0)}
SADDLE_GRID = tuple(
    (task, d, k) for d, k in ((3, 1), (4, 2), (8, 2)) for task in ("lowrank-quadratic", "lowrank-cosine")
)


def saddle_cases() -> tuple:
    """``(task, Setting)`` per case of :data:`SADDLE_GRID`: the claim's signal-matched problem
    (:func:`lipschitz_icl.problem.matched_problem`)."""
    kw = {key: SADDLE_DESIGN[key] for key in ("n", "L0", "sigma")}
    return tuple((task, saddle.Setting.of(matched_problem(task, d, k, **kw))) for task, d, k in SADDLE_GRID)


@lru_cache(maxsize=1)
def documents() -> tuple[Document, ...]:
    """One document per derivation module, in reading order (immutable, computed once)."""
    return (
        kernel_identity.document(),
        sphere_asymptotics.document(),
        ratio_expansion.document(),
        window_law.document(),
        regularity.document(regularity_examples()),
        linear_attention.document(),
        generalisation.document(),
        saddle.document(saddle_cases(), step=SADDLE_DESIGN["step"], scale_bounds=SADDLE_DESIGN["scale_bounds"]),
    )


def files() -> dict[str, str]:
    """``{file name: Markdown text}``: the index first, then one file per document."""
    docs = documents()
    return {INDEX: to_index(docs), **{f"{d.name}.md": to_markdown(d) for d in docs}}


def current(name: str, text: str) -> bool:
    """``text`` is the current content of the file ``name`` of :func:`files`: the same text, except that a number
    computed numerically may be printed as another machine computes it (within its stated accuracy:
    :func:`lipschitz_icl.derivations.writeup.agrees`)."""
    docs = {f"{d.name}.md": d for d in documents()}
    if name in docs:
        return writeup.agrees(docs[name], text)
    return files()[name] == text
