"""What the LaTeX log says about text that did not fit: the report's build fails on lost text.

pdfTeX writes ``Overfull \\vbox (193.1pt too high)`` when a page's material does not fit (text pushed
off the page or under the page number) and ``Overfull \\hbox (12.3pt too wide)`` when a line sticks out
into the margin.  :func:`lost_text` lists every overfull vbox and every overfull hbox wider than
:data:`HBOX_TOLERANCE_PT` (a line a few points into the margin is still read whole), each with the
input line or page the log names, so the build can refuse the PDF (:mod:`lipschitz_icl.report.build`).
"""

from __future__ import annotations

import re

__all__ = ["HBOX_TOLERANCE_PT", "lost_text"]

HBOX_TOLERANCE_PT = 5.0
_OVERFULL = re.compile(r"^Overfull \\(?P<box>[hv])box \((?P<pt>[\d.]+)pt too (?:wide|high)\)(?P<where>.*)$")
_PAGE = re.compile(r"\[(\d+)(?=[\s\]<{])")


def lost_text(log: str) -> list[str]:
    """One line per overfull vbox (any size) and per overfull hbox over :data:`HBOX_TOLERANCE_PT`,
    e.g. ``overfull vbox 193.1 pt too high (while the output routine was active) after page 4``."""
    problems = []
    page = 0
    for line in log.splitlines():
        pages = _PAGE.findall(line)
        if pages:
            page = int(pages[-1])
        m = _OVERFULL.match(line)
        if m is None:
            continue
        size = float(m.group("pt"))
        if m.group("box") == "h" and size <= HBOX_TOLERANCE_PT:
            continue
        kind = "vbox" if m.group("box") == "v" else "hbox"
        extent = "high" if kind == "vbox" else "wide"
        where = m.group("where").strip()
        where = where.replace("has occurred while \\output is active", "while the output routine was active")
        where = re.sub(r"\s*\[\]\s*$", "", where)
        problems.append(
            f"overfull {kind} {size:.1f} pt too {extent} ({where or 'no input line named'}) after page {page}"
        )
    return problems
