"""LaTeX text helpers: escaping of special characters and ``siunitx`` numbers with uncertainties.

``escape(text)`` makes any string safe to typeset as text with pdfLaTeX (the ten special characters
``\\ { } $ & # ^ _ % ~`` and the angle brackets, which T1 text fonts lack, are replaced by their
text-mode commands; line breaks and other control characters become spaces, so no blank line can end
a paragraph inside a table cell or a heading).  Unicode: ASCII and Latin-1/Latin Extended-A letters
pass through (pdfLaTeX's UTF-8 input with T1 fonts typesets them); Greek letters, common math
symbols (``≥ ≤ ≠ ≈ ± × ∞ → ∈ ∑ √ ·`` ...) and typographic punctuation (``— – ‘ ’ “ ” … •``) are
mapped to their LaTeX commands (:data:`UNICODE`); any other character is shown as its code point
``[U+XXXX]`` -- the report always compiles.  ``num(value, low, high)`` formats a measurement for ``\\num{...}`` in the
parenthesised-uncertainty form ``1.234(5)``: the uncertainty is the larger half-width
``max(high - value, value - low)`` of the interval, rounded to two significant digits, and the value
is rounded to the same decimal place (exponent form ``1.234(5)e-3`` outside ``[1e-3, 1e4)``).
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_CEILING, Decimal, localcontext

__all__ = ["Latex", "escape", "breakable", "num", "as_float"]

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


_GREEK = (
    "alpha beta gamma delta varepsilon zeta eta theta iota kappa lambda mu nu xi o pi rho varsigma sigma "
    "tau upsilon varphi chi psi omega"
).split()
_GREEK_UPPER = "A B Gamma Delta E Z H Theta I K Lambda M N Xi O Pi P - Sigma T Upsilon Phi X Psi Omega".split()
UNICODE = {
    **{chr(0x3B1 + i): (rf"$\{g}$" if g != "o" else "o") for i, g in enumerate(_GREEK)},
    **{chr(0x391 + i): (rf"$\{g}$" if len(g) > 1 else g) for i, g in enumerate(_GREEK_UPPER) if g != "-"},
    "\u03d5": r"$\phi$",
    "\u03f5": r"$\epsilon$",
    "\u03d1": r"$\vartheta$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≠": r"$\neq$",
    "≈": r"$\approx$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "÷": r"$\div$",
    "∞": r"$\infty$",
    "→": r"$\to$",
    "←": r"$\leftarrow$",
    "⇒": r"$\Rightarrow$",
    "⇔": r"$\Leftrightarrow$",
    "↔": r"$\leftrightarrow$",
    "∈": r"$\in$",
    "∉": r"$\notin$",
    "⊂": r"$\subset$",
    "⊆": r"$\subseteq$",
    "∪": r"$\cup$",
    "∩": r"$\cap$",
    "∑": r"$\sum$",
    "∏": r"$\prod$",
    "∫": r"$\int$",
    "∂": r"$\partial$",
    "∇": r"$\nabla$",
    "√": r"$\surd$",
    "·": r"$\cdot$",
    "∼": r"$\sim$",
    "≪": r"$\ll$",
    "≫": r"$\gg$",
    "∝": r"$\propto$",
    "∀": r"$\forall$",
    "∃": r"$\exists$",
    "′": r"$'$",
    "−": r"$-$",
    "∘": r"$\circ$",
    "≡": r"$\equiv$",
    "µ": r"$\mu$",
    "²": r"$^2$",
    "³": r"$^3$",
    "¹": r"$^1$",
    "—": "---",
    "–": "--",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "…": r"\ldots{}",
    "•": r"\textbullet{}",
    "\u00a0": "~",
    "°": r"\textdegree{}",
    "§": r"\S{}",
    "¶": r"\P{}",
    "©": r"\textcopyright{}",
    "€": r"\texteuro{}",
    "«": r"\guillemotleft{}",
    "»": r"\guillemotright{}",
}


def _char(ch: str) -> str:
    """One character as LaTeX text (module docstring)."""
    if ch in _SPECIAL:
        return _SPECIAL[ch]
    code = ord(ch)
    if code < 0x20 or 0x7F <= code < 0xA0 or ch in "\u2028\u2029":
        return " "
    if code < 0x7F:
        return ch
    if ch in UNICODE:
        return UNICODE[ch]
    if 0xC0 <= code <= 0x17F and code not in (0xD7, 0xF7, 0x138, 0x149, 0x17F):
        return ch
    return f"[U+{code:04X}]"


class Latex(str):
    """A string that is already LaTeX: the template engine does not escape it."""


def escape(text) -> Latex:
    """``text`` (any object, via ``str``) with every LaTeX special character made literal."""
    if isinstance(text, Latex):
        return text
    return Latex("".join(_char(ch) for ch in str(text)))


LONG_RUN = 14  # letters and digits in a row before a break opportunity is added


def breakable(text) -> Latex:
    """``escape(text)`` with line-break opportunities after ``/``, ``:``, ``_``, ``-`` and ``.`` and
    inside any longer run of letters and digits (every :data:`LONG_RUN` characters), for narrow table
    columns holding identifiers such as ``thm34/scaling/affine/d2`` (an identifier never sticks out of
    its column)."""
    out: str = escape(text)
    for mark in ("/", ":", r"\_", "-", "."):
        out = out.replace(mark, mark + r"\allowbreak{}")
    return Latex(re.sub(r"\\[A-Za-z]+|[A-Za-z0-9]+", _chunked, out))


def _chunked(match: re.Match) -> str:
    """A LaTeX command as it is; a run of letters and digits with a break opportunity every
    :data:`LONG_RUN` characters."""
    run = match.group(0)
    if run.startswith("\\"):
        return run
    return r"\allowbreak{}".join(run[i : i + LONG_RUN] for i in range(0, len(run), LONG_RUN))


def as_float(value) -> float | None:
    """A claims.json number: floats/ints as they are, 'inf'/'-inf'/'nan' strings decoded, else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return None


def _nonfinite(x: float) -> Latex:
    if math.isnan(x):
        return Latex(r"\text{NaN}")
    return Latex(r"$\infty$" if x > 0 else r"$-\infty$")


def _exponent(value: float) -> int:
    if value == 0:
        return 0
    e = math.floor(math.log10(abs(value)))
    return 0 if -3 <= e < 4 else e


def _reach(shown: Decimal, lo: float, hi: float) -> Decimal:
    """The larger distance from the printed value ``shown`` to the interval's ends, exactly (the ends' binary
    values, not their shortest decimals; a double's exact decimal has at most 767 significant digits)."""
    with localcontext(prec=2000):
        return max(Decimal(hi) - shown, shown - Decimal(lo), Decimal(0))


def _exact_decade(u: Decimal) -> int:
    """The exponent of the smallest power of ten at least ``u > 0``, exactly."""
    k = u.adjusted()  # u = d.ddd... x 10^k
    return k if u == Decimal(1).scaleb(k) else k + 1


def num(value, low=None, high=None, *, digits: int = 6, compact: bool = False, max_digits: int | None = None) -> Latex:
    """``\\num{...}`` of ``value`` with the uncertainty of the interval ``[low, high]`` (if any).

    Without an interval (or a zero-width one) the value is shown to ``digits`` significant digits; when
    the interval's half-width exceeds the value itself, the value and the interval are shown as such
    (with ``compact``, in the parenthesised form all the same: ``1.3(43)e-6``, for narrow columns).  Otherwise
    ``value(uu)``: the value rounded to the place of the uncertainty's second significant digit, and ``uu`` the
    larger distance from that printed value to the interval's ends, rounded up in units of that place, computed
    exactly (:class:`decimal.Decimal` of the ends' binary values), so that the interval the reader rebuilds,
    value +- uu, holds the computed one.
    With ``max_digits``, a value whose uncertainty would need more significant digits than that is shown
    to ``digits`` digits followed by the smallest power of ten at least that distance (``-2 \\pm 10^{-10}`` for
    ``-1.99999999997`` and a half-width of ``8.7e-13``): the interval is always printed, never dropped.
    ``None`` gives an en dash; non-finite values their symbol.
    """
    v = as_float(value)
    if v is None:
        return Latex("--")
    if not math.isfinite(v):
        return _nonfinite(v)
    lo, hi = as_float(low), as_float(high)
    u = 0.0
    if lo is not None and hi is not None:
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return Latex(rf"\num{{{v:.{digits}g}}}\,(interval unbounded)")
        u = max(hi - v, v - lo, 0.0)
    if u == 0.0:
        return Latex(rf"\num{{{v:.{digits}g}}}")
    if u > abs(v) and not compact:  # the interval dwarfs the value: show it rather than round the value away
        return Latex(rf"\num{{{v:.4g}}}\,[\num{{{lo:.3g}}}, \num{{{hi:.3g}}}]")
    e = _exponent(v if abs(v) >= u else u)
    scale = 10.0**e
    vs, us = v / scale, u / scale
    place = math.floor(math.log10(us)) - 1  # two significant digits of the uncertainty
    if place > 20 or place < -40:
        return Latex(rf"\num{{{v:.{digits}g}}}")
    assert lo is not None and hi is not None  # u > 0 came from the interval
    if max_digits is not None and vs != 0 and math.floor(math.log10(abs(vs))) - place + 1 > max_digits:
        shown = f"{v:.{digits}g}"
        return Latex(rf"\num{{{shown}}}\,{{\tiny$\pm 10^{{{_exact_decade(_reach(Decimal(shown), lo, hi))}}}$}}")
    suffix = f"e{e}" if e else ""
    for _ in range(3):  # the uncertainty's digits from the value as printed; one more place if they carry to three
        step = 10.0**place
        value_text = f"{round(vs / step) * step:.0f}" if place >= 0 else f"{vs:.{-place}f}"
        unit = Decimal(1).scaleb(place + e)
        with localcontext(prec=2000):  # exact: the unit is a power of ten
            u_digits = int((_reach(Decimal(value_text).scaleb(e), lo, hi) / unit).to_integral_value(ROUND_CEILING))
        if u_digits < 100:
            break
        place += 1
    unc_text = f"{u_digits * step:.0f}" if place >= 0 else str(u_digits)
    return Latex(rf"\num{{{value_text}({unc_text}){suffix}}}")
