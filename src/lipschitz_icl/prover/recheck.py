"""Re-verify a proof certificate (:mod:`lipschitz_icl.prover.certificate`) without the prover's search code.

This module is short on purpose, so that a reader can audit it: it shares only the bound reader
(:func:`lipschitz_icl.expression.parse_expression` and its ball evaluation), the domain reader and
python-flint with the prover.  For every part of the certificate it

1. rebuilds the domain's root boxes and walks each tree (a preorder list), checking that every stored box is the box its
   parent's split produces (a real split point strictly inside its range, an integer one in range), so
   the leaves partition the whole domain;
2. at every leaf marked ``proved``, recomputes the quantity and the bound with fresh ball arithmetic at
   :data:`PRECISION` bits (the search uses 128): the quantity from its own formula (the regularised
   incomplete beta laws below) at the two corners its monotonicity names, the bound on the box's balls;
   the leaf passes when the rule holds on these fresh balls and the stored enclosures meet them;
3. at a counterexample, recomputes both sides at the point and requires the violation.

Tail laws (``I`` the regularised incomplete beta, Arb ``beta_lower``): cap ``I_{(1-h)/2}((d-1)/2,
(d-1)/2)``; projection ``I_{1-s}((d-k)/2, k/2)`` (lower: ``I_s(k/2, (d-k)/2)``; 1 or an indicator at
``k = d``); binomial ``I_p(a, n-a+1)`` (lower: ``I_{1-p}(n-a, a+1)``).  Monotone directions (proofs in
:mod:`lipschitz_icl.prover.enclosures`): cap nonincreasing in ``h``, in ``d`` for ``h >= 0`` (nondecreasing for
``h <= 0``); upper projection tail nonincreasing in ``s`` and ``d``, nondecreasing in ``k``; upper
binomial tail nondecreasing in ``p`` and ``n``, nonincreasing in ``a``; lower tails mirrored.  Loss
quantities (``w_star``, ``icl_error``) are recomputed with :mod:`lipschitz_icl.prover.loss_enclosures`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flint import arb, ctx

from lipschitz_icl.expression import ExpressionError, parse_expression
from lipschitz_icl.prover import certificate
from lipschitz_icl.prover.domain import INTEGER_PARAMS, REAL_PARAMS, Box, Domain, check_value
from lipschitz_icl.validation import ParameterError

__all__ = ["CertificateError", "recheck", "PRECISION"]

PRECISION = 96
MAX_BYTES = 256 * 1024 * 1024


class CertificateError(ParameterError):
    """The file is not a certificate (exit 2)."""

    def __init__(self, reason: str):
        super().__init__("certificate", reason, "")
        self.args = (f"not a proof certificate: {reason}",)

    def __str__(self):
        return self.args[0]


def _need(condition, reason: str):
    if not condition:
        raise CertificateError(reason)


def _beta(z, a, b):
    return arb(z).beta_lower(arb(a), arb(b), regularized=True)


def _tail(name: str, q: dict):
    # the integer parameters a tail reads, from a box corner or a stored point (absent: None)
    d: Any = q.get("d")
    k: Any = q.get("k")
    n: Any = q.get("n")
    a: Any = q.get("a")
    if name == "cap_tail":
        return _beta((1 - arb(q["h"])) / 2, arb(d - 1) / 2, arb(d - 1) / 2)
    if name == "projection_tail":
        return arb(1) if k == d else _beta(1 - arb(q["s"]), arb(d - k) / 2, arb(k) / 2)
    if name == "projection_lower_tail":
        return arb(int(q["s"] >= 1)) if k == d else _beta(arb(q["s"]), arb(k) / 2, arb(d - k) / 2)
    if name == "binomial_tail":
        return arb(int(a <= 0)) if not 1 <= a <= n else _beta(arb(q["p"]), a, n - a + 1)
    return arb(int(a >= n)) if not 0 <= a < n else _beta(1 - arb(q["p"]), n - a, a + 1)


def _directions(name: str, box: Box) -> dict:
    if name == "cap_tail":
        h_lo, h_hi = box["h"]
        return {"h": -1, "d": -1 if h_lo >= 0 else (1 if h_hi <= 0 else 0)}
    sign = -1 if name.endswith("lower_tail") else 1
    if name.startswith("projection"):
        return {"s": -sign, "k": sign, "d": -sign}
    return {"p": sign, "n": sign, "a": -sign}


def _quantity_on(statement: dict, box: Box):
    name = statement["quantity"]
    if name in ("w_star", "icl_error"):
        from lipschitz_icl.prover.loss_enclosures import loss_quantity

        return loss_quantity(name, statement.get("task")).enclose(box)
    sides = _directions(name, box)
    for key, lo, hi in box.ranges:
        _need(lo == hi or sides.get(key), f"a box varies {key}, in which no monotonicity is known")
    low = _tail(name, box.corner({k: -v for k, v in sides.items()}))
    high = _tail(name, box.corner(sides))
    return low.union(high)


def _point_value(statement: dict, point: dict):
    name = statement["quantity"]
    if name in ("w_star", "icl_error"):
        from lipschitz_icl.prover.loss_enclosures import loss_quantity

        return loss_quantity(name, statement.get("task")).value(point)
    return _tail(name, point)


def _meets(stored, ball) -> bool:
    return (
        isinstance(stored, list)
        and len(stored) == 2
        and all(isinstance(x, (int, float)) for x in stored)
        and stored[0] <= stored[1]
        and ball.overlaps(arb(stored[0]).union(arb(stored[1])))
    )


class _Check:
    """One part's walk; ``bad`` is the first failing box (``(box, reason)``) or None."""

    def __init__(self, statement: dict, bound, constants: dict):
        self.statement, self.bound, self.constants = statement, bound, constants
        self.relation = statement["relation"]
        self.leaves, self.undecided = 0, 0
        self.bad: tuple[str, str] | None = None

    def holds(self, q, b):
        return q <= b if self.relation == "<=" else q >= b

    def fail(self, box, reason):
        if self.bad is None:
            self.bad = (box.describe() if isinstance(box, Box) else str(box), reason)

    def tree(self, nodes, root: Box):
        """Walk one root's preorder list, rebuilding every box from the root and the splits."""
        _need(isinstance(nodes, list) and all(isinstance(x, dict) for x in nodes), "a tree that is not a list")
        expected, used = [root], 0
        while expected and self.bad is None:
            box = expected.pop()
            if used == len(nodes):
                return self.fail(box, "the partition ends before this box")
            node, used = nodes[used], used + 1
            if node.get("box") != box.to_dict():
                return self.fail(box, "the stored box is not the one its parent's split gives")
            if "split" in node:
                split = node["split"] if isinstance(node["split"], dict) else {}
                # read from the certificate: checked below before use
                param: Any = split.get("param")
                at: Any = split.get("at")
                lo, hi = box[param] if param in box.names else (None, None)
                if not (
                    isinstance(at, (int, float))
                    and lo is not None
                    and (lo <= at < hi if param in INTEGER_PARAMS else lo < at < hi)
                ):
                    return self.fail(box, f"a split of {param} at {at} that does not halve the box")
                expected += [
                    box.replace(param, at + 1 if param in INTEGER_PARAMS else at, hi),
                    box.replace(param, lo, at),
                ]
                continue
            self.leaf(node, box)
        if self.bad is None and used != len(nodes):
            self.fail(root, "nodes beyond the partition")

    def leaf(self, node, box: Box):
        self.leaves += 1
        if node.get("decision") != "proved":
            self.undecided += 1
            return
        try:
            q = _quantity_on(self.statement, box)
            b = self.bound.evaluate_ball({**box.balls(), **self.constants})
        except ExpressionError as exc:
            return self.fail(box, f"the bound cannot be evaluated on the box ({exc.reason})")
        if not self.holds(q, b):
            return self.fail(box, f"the rule {node.get('rule')} does not hold on fresh enclosures")
        if not (_meets(node.get("quantity"), q) and _meets(node.get("bound"), b)):
            self.fail(box, "the stored enclosures do not meet the fresh ones")

    def counterexample(self, cx, domain: Domain):
        _need(isinstance(cx, dict) and isinstance(cx.get("params"), dict), "a refuted part without a counterexample")
        point = cx["params"]
        _need(set(point) == set(domain.pieces), "a counterexample that does not name every parameter")
        inside = any(all(lo <= point[k] <= hi for k, lo, hi in root.ranges) for root in domain.roots())
        if not inside:
            return self.fail(point, "the counterexample lies outside the domain")
        q = _point_value(self.statement, point)
        b = self.bound.evaluate_ball({**{k: arb(v) for k, v in point.items()}, **self.constants})
        violated = q > b if self.relation == "<=" else q < b
        if not violated:
            self.fail(point, "the counterexample does not violate the bound on fresh enclosures")


def _load(path) -> dict:
    path = Path(path)
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            raise CertificateError(f"{path} is not a regular file of at most {MAX_BYTES} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        if isinstance(exc, CertificateError):
            raise
        raise CertificateError(f"{path} is not readable JSON ({type(exc).__name__})") from None
    _need(isinstance(data, dict) and data.get("format") == certificate.FORMAT, "no 'format' of a certificate")
    _need(data.get("version") == certificate.VERSION, f"version must be {certificate.VERSION}")
    _need(
        isinstance(data.get("statement"), dict) and isinstance(data.get("parts"), list) and data["parts"],
        "no statement or parts",
    )
    return data


def recheck(path) -> dict:
    """Re-verify the certificate at ``path``; returns ``{"verdict", "recheck", "boxes_checked",
    "undecided_boxes", "first_bad_box", "reason"}`` (``recheck`` is ``passed`` or ``failed``).  A file that
    is not a certificate raises :class:`CertificateError`."""
    data = _load(path)
    st = data["statement"]
    _need(st.get("relation") in ("<=", ">=") and isinstance(st.get("bound"), str), "a statement without relation")
    _need(
        isinstance(st.get("domain"), dict) and all(k in REAL_PARAMS + INTEGER_PARAMS for k in st["domain"]),
        "a statement without a domain",
    )
    try:
        domain = Domain.from_dict(st["domain"])
        for pieces in domain.pieces.values():
            _need(all(lo <= hi for lo, hi in pieces), "an inverted domain range")
        for name, pieces in domain.pieces.items():
            [check_value(name, v) for piece in pieces for v in piece]
        names = set(domain.pieces) | set(st.get("constants", {})) | set(st.get("free", []))
        bound = parse_expression(st["bound"], names)
    except (TypeError, ValueError, KeyError) as exc:
        raise CertificateError(f"an unreadable statement ({exc})") from None
    verdicts, checked, undecided, bad = [], 0, 0, None
    previous = ctx.prec
    ctx.prec = PRECISION
    try:
        for part in data["parts"]:
            _need(isinstance(part, dict) and isinstance(part.get("constants"), dict), "a part without constants")
            constants = {k: arb(v) for k, v in part["constants"].items()}
            walk = _Check(st, bound, constants)
            verdict = part.get("verdict")
            if verdict == "refuted":
                walk.counterexample(part.get("counterexample"), domain)
            else:
                roots = part.get("roots")
                _need(verdict in ("proved", "undecided") and isinstance(roots, list), "a part without a partition")
                _need(len(roots) == len(domain.roots()), "a partition that misses root boxes of the domain")
                for nodes, root in zip(roots, domain.roots()):
                    walk.tree(nodes, root)
                _need(verdict == "undecided" or walk.undecided == 0, "a proved part with undecided boxes")
            verdicts.append(verdict)
            checked, undecided = checked + walk.leaves, undecided + walk.undecided
            bad = bad or walk.bad
    finally:
        ctx.prec = previous
    verdict = "undecided" if "undecided" in verdicts else ("refuted" if verdicts == ["refuted"] else "proved")
    return {
        "verdict": verdict,
        "recheck": "failed" if bad else "passed",
        "boxes_checked": checked,
        "undecided_boxes": undecided,
        "first_bad_box": bad[0] if bad else None,
        "reason": bad[1] if bad else None,
    }
