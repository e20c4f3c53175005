"""The project's ASCII math (``n L^2/sigma^2``, ``w*``, ``W_K^T W_Q``, ``||Px||^2 >= beta k/d``) typeset:
as LaTeX for the report (:func:`to_latex`) and as matplotlib mathtext for figure labels
(:func:`to_mathtext`).

Statements, rules and axis labels in ``claims.json`` and the registry are plain ASCII.  The text is cut
into *tokens* (words, identifiers with subscripts ``C_d``/stars ``w*``/primes ``L'``, numbers, operators);
a *math run* is a maximal stretch of identifiers, numbers and operators (a word of two or more letters
that is not a Greek letter or a function ends it, as does a comma or ``;`` outside parentheses), and a
run is typeset as math when it holds a symbol (a single letter other than the article ``a``, a Greek
name, an identifier with a subscript or star) or an operator (``^ _ = < > <= >= -> +- / * || ~``).
Everything else stays text (escaped).  Within a run:

* ``x^2``, ``w^-p``, ``(expr)^(a/b)`` and ``w^-min(gamma, 2)`` become superscripts (the parentheses of a
  parenthesised exponent are dropped); ``C_d``, ``E_lin``, ``c_lo`` subscripts (words upright); ``w*`` is
  ``w^*``; ``w0``, ``a1`` are ``w_0``, ``a_1``; ``B^T`` is the transpose ``B^\\top`` (``T`` alone is the
  tightness factor of a proved band); a second sub- or superscript wraps the first (no double scripts);
* Greek names become letters (``eps`` is ``\\varepsilon``); one symbol per concept: ``rho`` alone is the
  project's ``n L^2 / sigma^2``, typeset ``\\Lambda``, while ``rho(M, B)`` is the paper's representation error
  ``\\rho(M, B)``;
* ``exp log sqrt min max tr sum lim`` are operators, ``inf`` is ``\\infty``, ``E`` alone (``E f``) and
  ``E_t[...]`` are ``\\mathbb{E}``; a derivative's differentials (``dB/dw``, ``d/dw``, ``d^2L/ds^2``,
  ``d log w*/d log rho``) are an upright ``\\mathrm{d}``, never the dimension ``d``; ``120 s`` and ``CPU s`` are
  seconds (text); ``E_L'`` is ``E_{L'}``;
* a ``rename`` (:mod:`lipschitz_icl.report.symbols`) maps a letter alone (``p``, never ``p_i`` or ``q'``; key
  ``N'``: the primed letter), a letter
  applied to an argument (key ``P(``: ``P(N >= a)``, never the projector ``P``), a name with a word subscript
  (``falls_at``) or a phrase to another symbol; :data:`SYMBOLS` names what no ASCII letter stands for (``calL``
  the ICL loss ``\\mathcal{L}``, ``calB``, ``calN``, ``bbP``);
* ``<= >= -> +- != ~ ...`` are ``\\le \\ge \\to \\pm \\ne \\sim \\dots``; ``||x||`` is ``\\|x\\|``; ``x.q``
  between letters is ``x \\cdot q``; ``1e-06`` is ``10^{-6}``; ``[[a, b], [c, d]]`` is a small matrix.

References are words: ``Eq. (4)``, ``Lemma B.1``, ``Lemmas C.3-C.9`` (an upper-case letter, a dot and a
number) stay text.

Dotted or underscored program names (``lipschitz_icl.derivations``, ``wstar_exact``) and commit hashes
(7 to 40 hex digits with a letter and a digit: ``4e9f7ac``) are set as code (``\\code{...}``).  The output
always compiles: braces are only emitted in pairs, every LaTeX special character inside math is escaped,
and characters outside ASCII end a run (they are text, escaped by :func:`~lipschitz_icl.report.latex.escape`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lipschitz_icl.report.latex import Latex, breakable, escape

__all__ = ["to_latex", "to_mathtext", "mpl_text", "code", "written_out", "GREEK", "SYMBOLS"]

GREEK = {
    name: "\\" + name
    for name in (
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi sigma tau upsilon phi chi "
        "psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega varepsilon varphi vartheta"
    ).split()
}
GREEK.update({"eps": r"\varepsilon", "rho": r"\Lambda"})  # rho alone: the project's n L^2 / sigma^2
# names a rename's phrase may write for a symbol no ASCII letter stands for (symbols.RENAMES): the ICL loss
# (calL), the bias and noise parts (calB, calN), a probability (bbP)
SYMBOLS = {"calL": r"\mathcal{L}", "calB": r"\mathcal{B}", "calN": r"\mathcal{N}", "bbP": r"\mathbb{P}"}
FUNCTIONS = {
    "exp": r"\exp",
    "log": r"\log",
    "sqrt": r"\sqrt",
    "min": r"\min",
    "max": r"\max",
    "sum": r"\sum",
    "lim": r"\lim",
    "ln": r"\ln",
    "tr": r"\operatorname{tr}",
    "inf": r"\infty",
    "cos": r"\cos",
    "sin": r"\sin",
    "argmin": r"\operatorname{arg\,min}",
    "argmax": r"\operatorname{arg\,max}",
    "diff": r"\mathrm{d}",  # the differential of a derivative (d B/d w written out: _reworded), never the dimension d
}
OPERATORS = {
    "<=": r"\le ",
    ">=": r"\ge ",
    "->": r"\to ",
    "+-": r"\pm ",
    "!=": r"\ne ",
    "==": "=",
    "~": r"\sim ",
    "...": r"\dots ",
    "*": r"\cdot ",
    "<": "<",
    ">": ">",
    "%": r"\%",
    "#": r"\#",
    "&": r"\&",
    "$": r"\$",
    "\\": r"\backslash ",
    "{": r"\{",
    "}": r"\}",
    "`": "'",
    '"': "''",
    "?": "?",
    "@": "@",
    "!": "!",
}
_STRONG = set("^_=<>/*~") | {"<=", ">=", "->", "+-", "!=", "||", "..."}
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<textword>[^\W\d_]*[^\x00-\x7f\W\d_][^\W\d_]*(?:'s\b)?  # a word with a letter past ASCII: Lévy's, Pólya
      |e\.g\.|i\.e\.|i\.i\.d\.|cf\.|vs\.|Eqs?\.|\u2019s\b|[A-Za-z]{2,}'s\b|\d+(?:\.\d+)*'s\b|[A-Z]'s\b
      |\b[A-Z]\.\d+(?:\.\d+)*\b
      |(?:(?<=\d\ )|(?<=CPU\ ))s\b(?![\^_(/])  # seconds, the unit (120 s, CPU s): never the symbol s
  )
  | (?P<code>\b(?=[0-9a-f]{0,39}[a-f])(?=[0-9a-f]{0,39}[0-9])[0-9a-f]{7,40}\b
      |[A-Za-z_][A-Za-z0-9_]{3,}(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+){2,}
      |[a-z][a-z0-9]+_[a-z0-9]{4,}[A-Za-z0-9_]*|[A-Z][A-Z0-9]*_[A-Z][A-Z0-9_]+)
  | (?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z][A-Za-z0-9]*(?:_(?:[A-Za-z0-9]+))?\*?'*)
  | (?P<op>\|\||<=|>=|->|\+-|!=|==|\.\.\.)
  | (?P<char>.)
""",
    re.VERBOSE | re.DOTALL,
)
_MATRIX = re.compile(r"\[\[([^\[\]]+)\](?:,\s*\[([^\[\]]+)\])+\]")


@dataclass
class _Tok:
    kind: str  # ws, textword, code, num, ident, op, char
    text: str

    @property
    def word(self) -> bool:
        """A plain English word (ends a math run)."""
        return self.kind == "textword" or (self.kind == "ident" and _ident_role(self.text) == "word")


def _ident_role(text: str) -> str:
    """``symbol`` (single letter, Greek, subscripted, starred), ``function`` or ``word``."""
    base = text.rstrip("*'").split("_")[0]
    if text in FUNCTIONS:
        return "function"
    if "_" in text or text.endswith(("*", "'")) or base in GREEK or base in SYMBOLS:
        return "symbol"
    if re.fullmatch(r"[A-Za-z]\d*", base):
        return "word" if base == "a" else "symbol"
    if re.fullmatch(r"[A-Z][xyqz]", base):  # Px, Mq: a matrix times a vector
        return "symbol"
    return "word"


def _tokens(text: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        out.append(_Tok(kind, m.group()))
    return out


# ----------------------------------------------------------------------------- runs
_OPERAND_SIDE = {"=", "<", ">", "/", "+", "-", "*", "(", "<=", ">=", "||", "^", "_", ")", ","}


def _article_is_symbol(toks: list[_Tok], i: int) -> bool:
    """``a`` next to an operator (``N >= a``, ``a/n``) is a symbol, else the article."""
    j, k = i - 1, i + 1
    while j >= 0 and toks[j].kind == "ws":
        j -= 1
    while k < len(toks) and toks[k].kind == "ws":
        k += 1
    return (j >= 0 and toks[j].text in _OPERAND_SIDE - {")", ","}) or (
        k < len(toks) and toks[k].text in _OPERAND_SIDE - {"(", "-", "+"}
    )


def _is_math(tok: _Tok, toks: list[_Tok] | None = None, i: int = 0) -> bool:
    if tok.kind in ("num", "op", "ws"):
        return True
    if tok.kind == "ident":
        if tok.text == "a" and toks is not None:
            return _article_is_symbol(toks, i)
        return not tok.word or (toks is not None and _scripted(toks, i))
    return tok.kind == "char" and tok.text.isascii() and not tok.text.isalnum()


def _starts_run(toks: list[_Tok], i: int) -> bool:
    tok = toks[i]
    if tok.text == "A":  # the article at a sentence's start
        return False
    if tok.text == "a" and tok.kind == "ident" and _article_is_symbol(toks, i):
        return True
    if tok.kind == "ident" and (not tok.word or _scripted(toks, i)):
        previous = toks[i - 1] if i else None
        before = toks[i - 2] if i > 1 else None
        return not (previous is not None and previous.text == "-" and before is not None and before.word)
    if tok.kind == "num":
        j = i + 1
        while j < len(toks) and toks[j].kind == "ws":
            j += 1
        spaced_paren = j > i + 1 and j < len(toks) and toks[j].text == "("  # "Theorem 4.4 (M* = ...)"
        return not spaced_paren and not (i and toks[i - 1].text == "-" and i > 1 and toks[i - 2].word)
    return tok.text in ("(", "[", "|", "||", "+-", "<=", ">=", "<", ">", "->")


def _run_end(toks: list[_Tok], start: int) -> int:
    """Index one past the last token of the math run starting at ``start`` (module docstring)."""
    depth, i = 0, start
    while i < len(toks):
        tok = toks[i]
        if not _is_math(tok, toks, i):
            break
        if tok.text in "([":
            depth += 1
        elif tok.text in ")]":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (tok.text in (",", ";", ":") or (tok.text == "." and not _between_letters(toks, i))):
            break
        i += 1
    # trim: trailing spaces, operators that cannot end an expression, and unclosed brackets
    end = i
    while end > start:
        last = toks[end - 1]
        if last.kind == "ws" or last.text in ("-", "+", "=", "(", "[", "'", ":", ".", "*", "/", "^", "_"):
            end -= 1
            continue
        break
    while end > start and _depth(toks[start:end]) > 0:
        end = _last_open(toks, start, end)
        while end > start and toks[end - 1].kind == "ws":
            end -= 1
    return end


def _scripted(toks: list[_Tok], i: int) -> bool:
    """A letter group with a superscript right after it (``ds^2`` in ``d^2 L/ds^2``) is math: prose words
    never carry one."""
    return i + 1 < len(toks) and toks[i + 1].text == "^"


def _between_letters(toks: list[_Tok], i: int) -> bool:
    return (
        0 < i < len(toks) - 1
        and toks[i - 1].kind == "ident"
        and toks[i + 1].kind == "ident"
        and not toks[i - 1].word
        and not toks[i + 1].word
    )


def _depth(toks) -> int:
    depth = 0
    for t in toks:
        depth += int(t.text in ("(", "["))
        depth -= int(t.text in (")", "]"))
    return depth


def _last_open(toks, start: int, end: int) -> int:
    depth = 0
    for j in range(end - 1, start - 1, -1):
        if toks[j].text in (")", "]"):
            depth += 1
        elif toks[j].text in ("(", "["):
            if depth == 0:
                return j
            depth -= 1
    return start


def _strong(toks) -> bool:
    """A run is math when it holds a symbol, an operator or a number in exponent form (a function
    name alone, as in "log-Sobolev", is not enough)."""
    for t in toks:
        if t.kind == "ident" and not t.word and _ident_role(t.text) == "symbol":
            return True
        if t.text in _STRONG or (t.kind == "num" and "e" in t.text.lower()):
            return True
    return False


def _unary_sign(toks: list[_Tok], i: int) -> bool:
    """A ``-`` or ``+`` that signs what follows it (``-C``, ``-4.1``, ``+D_j``): after a space, an opening
    bracket or at the start, and right before a number or a symbol; never a hyphen between words or a range
    ``1-3``."""
    if toks[i].text not in ("-", "+") or i + 1 >= len(toks):
        return False
    after = toks[i + 1]
    if after.kind not in ("num", "ident") or (after.kind == "ident" and after.word):
        return False
    return i == 0 or toks[i - 1].kind == "ws" or toks[i - 1].text in ("(", "[")


def _strong_run_at(toks: list[_Tok], i: int) -> bool:
    """Whether a math run that :func:`_segments` keeps (a strong one) starts at ``i``."""
    if not _starts_run(toks, i):
        return False
    end = _run_end(toks, i)
    return end > i and _strong(toks[i:end])


def _segments(text: str):
    """``(is_math, tokens)`` pieces of ``text``."""
    toks = _tokens(text)
    out: list[tuple[bool, list[_Tok]]] = []
    plain: list[_Tok] = []
    i = 0
    while i < len(toks):
        if _unary_sign(toks, i) and toks[i + 1].kind == "num" and not _strong_run_at(toks, i + 1):
            # "bias -4.1": a minus sign, not a hyphen (a formula starting there, -2^k, takes its sign below)
            if plain:
                out.append((False, plain))
                plain = []
            out.append((True, toks[i : i + 2]))
            i += 2
            continue
        if _starts_run(toks, i):
            end = _run_end(toks, i)
            if end > i and _strong(toks[i:end]):
                start = i - 1 if i and _unary_sign(toks, i - 1) else i  # "above -C": the sign is the formula's
                if start < i:
                    plain.pop()
                if plain:
                    out.append((False, plain))
                    plain = []
                out.append((True, toks[start:end]))
                i = end
                continue
        plain.append(toks[i])
        i += 1
    if plain:
        out.append((False, plain))
    return out


# ----------------------------------------------------------------------------- math emission
class _Emitter:
    """Recursive-descent emission of one math run (``mpl``: matplotlib's mathtext dialect)."""

    def __init__(self, toks: list[_Tok], mpl: bool, rename: dict):
        self.toks = toks
        self.i = 0
        self.mpl = mpl
        self.rename = rename

    def peek(self, skip_ws: bool = True):
        j = self.i
        while skip_ws and j < len(self.toks) and self.toks[j].kind == "ws":
            j += 1
        return self.toks[j] if j < len(self.toks) else None

    def take(self):
        while self.i < len(self.toks) and self.toks[self.i].kind == "ws":
            self.i += 1
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expression(self, closers: tuple = ()) -> str:
        """Atoms up to (not including) the first token in ``closers`` (the innermost group's closer or
        an enclosing one) or the end."""
        atoms: list[list] = []  # [body, sub, sup]
        while self.i < len(self.toks):
            tok = self.toks[self.i]
            if tok.text in closers:
                break
            if tok.kind == "ws":
                self.i += 1
                atoms.append([" ", None, None])
                continue
            self.i += 1
            if tok.text in ("^", "_"):
                operand = self.operand(closers)
                if tok.text == "^" and operand == "T":  # a transpose, never the letter T (the tightness factor)
                    operand = r"\top"
                self._attach(atoms, tok.text, operand)
                continue
            atoms.append([self.atom(tok, closers), None, None])
        return "".join(self._render(a) for a in atoms)

    @staticmethod
    def _attach(atoms, mark: str, operand: str) -> None:
        slot = 2 if mark == "^" else 1
        while atoms and atoms[-1][0] == " ":
            atoms.pop()
        if not atoms:
            atoms.append(["{}", None, None])
        if atoms[-1][slot] is not None:  # a second script of the same kind: wrap the first
            body = _Emitter._render(atoms[-1])
            atoms[-1] = ["{" + body + "}", None, None]
        atoms[-1][slot] = operand

    @staticmethod
    def _render(atom) -> str:
        body, sub, sup = atom
        return body + (f"_{{{sub}}}" if sub is not None else "") + (f"^{{{sup}}}" if sup is not None else "")

    def group(self, opener: str, closers: tuple = ()) -> tuple[str, bool]:
        """The contents of a group opened by ``opener`` and whether its closer was found."""
        closer = {"(": ")", "[": "]", "|": "|", "||": "||", "{": "}"}[opener]
        inner = self.expression((closer, *closers))
        if self.i < len(self.toks) and self.toks[self.i].text == closer:
            self.i += 1
            return inner, True
        return inner, False

    def operand(self, closers: tuple = ()) -> str:
        """What a ``^`` or ``_`` applies to: an optional sign, then a parenthesised group (its contents; after a
        sign, a sum or difference keeps its parentheses), a function with its argument, or one token."""
        sign = ""
        nxt = self.peek(skip_ws=False)
        if nxt is not None and nxt.text in ("-", "+"):
            sign = self.take().text
            nxt = self.peek(skip_ws=False)
        if nxt is None or nxt.kind == "ws":
            return sign
        if nxt.text in closers:
            return sign
        tok = self.take()
        if tok.text in ("(", "{"):
            inner, _ = self.group(tok.text, closers)
            if sign and any(op in inner for op in ("+", "-", r"\pm", r"\mp")):  # n^-(a + b) is n^{-(a + b)}
                return sign + "(" + inner + ")"
            return sign + inner
        body = self.atom(tok, closers)
        if tok.kind == "ident" and _ident_role(tok.text) == "function" and tok.text != "sqrt":
            after = self.peek(skip_ws=False)
            if after is not None and after.text == "(":
                self.take()
                inner, _ = self.group("(", closers)
                body += "(" + inner + ")"
        return sign + body

    def atom(self, tok: _Tok, closers: tuple = ()) -> str:
        if tok.kind == "num":
            return _number(tok.text)
        if tok.kind == "ident":
            return self.identifier(tok.text, closers)
        if tok.kind == "code":
            return r"\mathrm{" + _escape_math(tok.text) + "}"
        text = tok.text
        if text in ("(", "["):
            inner, closed = self.group(text, closers)
            return text + inner + ({"(": ")", "[": "]"}[text] if closed else "")
        if text == "{":  # TeX-style grouping in the source (S^{d-1}): a group, no visible braces
            inner, _ = self.group(text, closers)
            return "{" + inner + "}"
        if text in ("|", "||"):
            inner, closed = self.group(text, closers)
            bar = "|" if text == "|" else (r"\Vert " if self.mpl else r"\|")
            return bar + inner + (bar if closed else "")
        if text in (")", "]"):
            return text
        if text == "}":
            return r"\}"
        if text == "." and _between_letters(self.toks, self.i - 1):
            return r"\cdot "
        if text in OPERATORS:
            out = OPERATORS[text]
            return _MPL_OPERATORS.get(out, out) if self.mpl else out
        if text in "+-=,;:/'.":
            return text
        return _escape_math(text)

    def _neighbours(self) -> tuple:
        """The tokens before and after the one just taken, skipping spaces, and whether both sides had
        a space."""
        j, k = self.i - 2, self.i
        spaced = (j >= 0 and self.toks[j].kind == "ws") and (k < len(self.toks) and self.toks[k].kind == "ws")
        while j >= 0 and self.toks[j].kind == "ws":
            j -= 1
        while k < len(self.toks) and self.toks[k].kind == "ws":
            k += 1
        return (self.toks[j] if j >= 0 else None), (self.toks[k] if k < len(self.toks) else None), spaced

    def identifier(self, text: str, closers: tuple = ()) -> str:
        primes = len(text) - len(text.rstrip("'"))
        text = text.rstrip("'")
        star = text.endswith("*")
        text = text.rstrip("*")
        nxt = self.peek(skip_ws=False)
        if "_" in text and text in self.rename:  # a name with a word subscript (falls_at), renamed whole
            return self.rename[text] + ("^{*}" if star else "") + "'" * primes
        base, _, sub = text.partition("_")
        if not sub and primes and base + "'" * primes in self.rename:  # a primed letter renamed as such (N')
            return self.rename[base + "'" * primes] + ("^{*}" if star else "")
        if not sub and not primes:  # a letter's rename is of the letter alone (p, not p_i or q')
            applied = self.rename.get(base + "(") if nxt is not None and nxt.text == "(" else None
            base = applied or self.rename.get(base, base)  # "P(": P applied to an argument (a probability)
        if base.startswith("\\") or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", base):
            # renamed to LaTeX outright (\zeta, C_d, q')
            return base + (f"_{{{sub}}}" if sub else "") + ("^{*}" if star else "") + "'" * primes
        if re.fullmatch(r"[A-Za-z]\d+", base) and not sub:
            base, sub = base[0], base[1:]
        before, after, spaced = self._neighbours()
        if (
            base == "x"
            and not sub
            and not star
            and spaced
            and after is not None
            and after.kind == "num"
            and before is not None
            and (before.kind in ("num", "ident") or before.text == ")")
        ):
            return r"\times "  # "C x 1.022": a factor
        if base == "rho" and nxt is not None and nxt.text == "(":
            body = r"\rho"
        elif base in SYMBOLS:
            body = SYMBOLS[base]
        elif base == "E" and len(sub) == 1 and sub.islower() and not star and nxt is not None and nxt.text == "[":
            return rf"\mathbb{{E}}_{{{sub}}}"  # "E_t[t K(t)]": an expectation over t, not an error E
        elif base in GREEK:
            body = GREEK[base]
        elif base in FUNCTIONS:
            if base == "sqrt" and nxt is not None and nxt.text == "(":
                self.take()
                inner, _ = self.group("(", closers)
                return r"\sqrt{" + inner + "}"
            body = (_MPL_FUNCTIONS.get(base) if self.mpl else None) or FUNCTIONS[base]
        elif (
            base == "E"
            and not sub
            and not star
            and nxt is not None
            and nxt.kind == "ws"
            and after is not None
            and after.kind == "ident"
        ):
            body = r"\mathbb{E}"  # "E f": an expectation
        elif len(base) == 1 or re.fullmatch(r"[A-Z][xyqz]", base):
            body = base
        else:
            body = r"\mathrm{" + base + "}"
        if sub:
            sub = sub if len(sub) == 1 or sub.isdigit() else r"\mathrm{" + sub + "}"
            if primes and re.fullmatch(r"[A-Z]", sub):  # E_L': the error at L', not a derivative of E_L
                sub, primes = sub + "'" * primes, 0
            body = f"{body}_{{{sub}}}"
        if star:  # braced, so a following ^ or _ applies to the whole w^*
            body = f"{{{body}^{{*}}}}"
        return body + "'" * primes


_MPL_OPERATORS = {r"\le ": r"\leq ", r"\ge ": r"\geq ", r"\to ": r"\rightarrow ", r"\dots ": r"\ldots "}
_MPL_FUNCTIONS = {"tr": r"\mathrm{tr}", "argmin": r"\mathrm{argmin}", "argmax": r"\mathrm{argmax}", "sqrt": r"\surd "}


def _escape_math(text: str) -> str:
    """``text`` with the characters special to (La)TeX inside math made literal."""
    table = {
        "%": r"\%",
        "#": r"\#",
        "&": r"\&",
        "$": r"\$",
        "\\": r"\backslash ",
        "{": r"\{",
        "}": r"\}",
        "~": r"\sim ",
        "^": r"\hat{}",
        "_": r"\_",
    }
    return "".join(table.get(ch, ch) for ch in text)


def _number(text: str) -> str:
    """``1e+14`` as ``10^{14}``, ``2.5e-3`` as ``2.5\\times 10^{-3}``, others as they are."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)[eE]([+-]?\d+)", text)
    if not m:
        return text
    mantissa, exponent = m.group(1), int(m.group(2))
    power = f"10^{{{exponent}}}"
    return power if float(mantissa) == 1 else f"{mantissa}\\times {power}"


# ----------------------------------------------------------------------------- public
def _matrix(match: re.Match, mpl: bool, rename: dict) -> str:
    rows = re.findall(r"\[([^\[\]]+)\]", match.group(0))
    cells = [[_math_of(c.strip(), mpl, rename) for c in row.split(",")] for row in rows]
    if mpl:
        return "[" + "; ".join(", ".join(r) for r in cells) + "]"
    body = r" \\ ".join(" & ".join(r) for r in cells)
    return r"\left[\begin{smallmatrix}" + body + r"\end{smallmatrix}\right]"


def _math_of(text: str, mpl: bool, rename: dict) -> str:
    return _Emitter(_tokens(text), mpl, rename).expression().strip()


def _convert(text: str, mpl: bool, rename: dict):
    """``(is_math, string)`` pieces: math as LaTeX (without ``$``), text as it is."""
    pieces = []
    pos = 0
    for m in _MATRIX.finditer(text):
        pieces.extend(_plain_convert(text[pos : m.start()], mpl, rename))
        pieces.append((True, _matrix(m, mpl, rename)))
        pos = m.end()
    pieces.extend(_plain_convert(text[pos:], mpl, rename))
    return pieces


def _plain_convert(text: str, mpl: bool, rename: dict):
    out: list[tuple[bool | str, str]] = []
    for is_math, toks in _segments(text):
        if is_math:
            out.append((True, _Emitter(toks, mpl, rename).expression().strip()))
        else:
            for tok in toks:
                out.append(("code" if tok.kind == "code" else False, tok.text))
    return out


def code(text) -> Latex:
    """``text`` as code: ``\\code{...}`` (typewriter, breakable after ``/ : . _ -`` and inside long runs:
    :func:`lipschitz_icl.report.latex.breakable`)."""
    return Latex(r"\code{" + breakable(text) + "}")


# "the 2x rule", "at least 2 x the matched one": a factor, not 2 times a symbol x
_FACTOR = re.compile(r"\b(\d+(?:\.\d+)?) ?x(?= [a-z]{2,}|[,;.)]|$)")
_LEVEL = re.compile(r"(\d+(?:\.\d+)?)% ?t-interval")  # "99%t-interval"
# apostrophes that are not primes: a quoted phrase ('training ends ...'), a plural possessive (the layers'
# value leak), the possessive of a starred symbol (w*'s accuracy); each becomes a typographic quote
_QUOTED = re.compile(r"(?<![\w*'])'([A-Za-z](?:[^'\n]|(?<=\w)'(?=\w)){0,80}?)'(?![\w'])")  # softmax's inside
_PLURAL_POSSESSIVE = re.compile(r"(?<=[A-Za-z]{2}s)'(?=[\s,.;:)]|$)")
_STAR_POSSESSIVE = re.compile(r"(?<=\*)'s\b")
# a derivative (dB/dw, d/dw, d^2L/ds^2, d log w*/d log rho): its differentials written "diff", a function typeset
# upright (\mathrm{d}), so that they never read as the dimension d
_DERIVATIVES = (
    (re.compile(r"\bd\^2 ?([A-Za-z]\w*)/d([a-z])\^2(?![\w^])"), r"diff^2 \1/diff \2^2"),
    (re.compile(r"\bd([A-Z]|cal[A-Z])/d([a-z])\b"), r"diff \1/diff \2"),
    (re.compile(r"\bd/d([a-z])\b"), r"diff/diff \1"),
    (re.compile(r"\bd log ([^/;,]+?) ?/ ?d log\b"), r"diff log \1/diff log"),
)


def _derivatives(text: str) -> str:
    for pattern, written in _DERIVATIVES:
        text = pattern.sub(written, text)
    return text


def _reworded(text: str, rename: dict) -> tuple[str, dict]:
    """The record's shorthand written out before it is typeset: phrases of ``rename`` (keys that are not
    identifiers, such as ``w*/law``: replaced as text by their ASCII math), a factor ``2x`` as ``2 times``
    (typeset ``2\\times``), ``99%t-interval`` as ``t-interval at 99%``, apostrophes that are not primes as
    typographic quotes (a quoted phrase, ``layers'``, ``w*'s``), a derivative's differentials (``dB/dw``, ``d/dw``,
    ``d^2L/ds^2``, ``d log w*/d log rho``) as upright ``d``s; returns
    the text and the identifier renames."""
    phrases = {k: v for k, v in rename.items() if not re.fullmatch(r"[A-Za-z_]\w*(?:\(|'+)?", k)}
    for phrase, replacement in phrases.items():  # whole phrases only: "Delta L" is not the start of "Delta Lambda"
        before = r"(?<!\w)" if phrase[0].isalnum() else ""
        after = r"(?!\w)" if phrase[-1].isalnum() else ""
        text = re.sub(before + re.escape(phrase) + after, replacement.replace("\\", "\\\\"), text)
    text = _FACTOR.sub(lambda m: m.group(1) + "\u00d7", text)
    text = _LEVEL.sub(r"t-interval at \1%", text)
    text = _QUOTED.sub("\u2018\\1\u2019", text)
    text = _PLURAL_POSSESSIVE.sub("\u2019", text)
    text = _STAR_POSSESSIVE.sub("\u2019s", text)
    text = _derivatives(text)
    return text, {k: v for k, v in rename.items() if k not in phrases}


def written_out(text: str, rename: dict | None = None) -> str:
    """``text`` as the report words it before typesetting (:func:`_reworded`: phrases of ``rename`` replaced,
    ``2x`` as a factor, ``99%t-interval`` as ``t-interval at 99%``), still ASCII."""
    return _reworded(str(text), rename or {})[0]


def to_latex(text, *, rename: dict | None = None) -> Latex:
    """``text`` with its ASCII math typeset (module docstring) as LaTeX (inline ``$...$``), the rest
    escaped; program names as :func:`code`.  ``rename`` maps identifiers to others (one symbol per
    concept across the report, see :mod:`lipschitz_icl.report.symbols`) and phrases to their ASCII math
    (:func:`_reworded`)."""
    if isinstance(text, Latex):
        return text
    parts: list[str] = []
    plain: list[str] = []
    text, rename = _reworded(str(text), rename or {})
    for kind, piece in _convert(text, False, rename):
        if kind is True:
            if plain:
                parts.append(escape("".join(plain)))
                plain = []
            parts.append("$" + piece + "$")
        elif kind == "code":
            if plain:
                parts.append(escape("".join(plain)))
                plain = []
            parts.append(code(piece))
        else:
            plain.append(piece)
    if plain:
        parts.append(escape("".join(plain)))
    return Latex("".join(parts))


def mpl_text(text) -> str:
    """Any text made safe for matplotlib: ``$`` escaped, so no mathtext is parsed from it."""
    return str(text).replace("$", r"\$")


def to_mathtext(text, *, rename: dict | None = None) -> str:
    """``text`` with its ASCII math as matplotlib mathtext (``$...$``), the rest made literal; checked
    by matplotlib's own parser, falling back to literal text where a piece does not parse.  A piece
    already written as mathtext (``$...$``, as a claim's figure labels are) is kept when it parses."""
    out = []
    for part in re.split(r"(\$[^$]+\$)", str(text)):
        if len(part) > 2 and part[0] == part[-1] == "$" and _parses(part):
            out.append(part)
            continue
        ascii_math = _derivatives(part)  # dL/dw as to_latex writes it
        for kind, piece in _convert(ascii_math, True, rename or {}):
            if kind is True and _parses("$" + piece + "$"):
                out.append("$" + piece + "$")
            else:
                out.append(mpl_text(piece))
    return "".join(out)


def _parses(text: str) -> bool:
    from matplotlib.mathtext import MathTextParser

    try:
        MathTextParser("path").parse(text, dpi=72)
    except ValueError:
        return False
    return True
