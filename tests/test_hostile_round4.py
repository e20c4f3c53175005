"""Hostile input, fourth round (issue 30, "run your own adversarial round over what is new"): the certified
loss classes, ``prove`` on the loss quantities with hostile ``[domain]`` tables, the checker's malformed
certificates and the new options.  Same harness as :mod:`test_hostile_round3` (every case in ONE worker
process under ``setrlimit``, a wall-clock alarm per case): each row asserts the exit code, at most one stderr
line (none for exit 0 and 1), no traceback and no warning, the fragment in the one line, and its CPU time (the
work done before the answer).  The tests after the table check what the answers say.

Rows: ``(id, argv, exit code, fragment of the stderr line, CPU seconds)``; ``{tmp}`` is the case directory,
where :func:`_prepare` writes the variant files (``{tmp}/<id>.toml``) and the certificates.

Found and fixed by this round (each a row below):

* ``prove`` of a cosine file with ``frequency = 5`` proved the statement of the frequency-1 class (the
  certified table's) with exit 0: a proof of another statement.  Refused now.
* ``loss --method certified`` at ``d = 100``, ``n = 2``, ``w = 1`` printed the interval ``[-7.6e6, 7.6e6]`` of
  a loss of 0.13 with exit 0 (its tail bounds grow like a power of ``d``), and at ``d = 512`` stopped with
  "the result 'loss_low' is not finite" naming no option: an interval wider than the stated accuracy is
  ``converged: false``, exit 3.
* ``prove --recheck`` of a certificate holding a JSON integer beyond the double range (``1e400`` written out)
  escaped as an ``OverflowError`` traceback; a refusal found while the JSON was parsed named the path as ``''``.
* a refusal of a problem given by ``--kernel`` (or ``--kernel-file``) named ``--task``, which the user never gave.
* ``loss --kernel "1/(1.5-t)" --method certified`` (a pole outside ``[-1, 1]``) escaped as a ``NotCertified``
  traceback where a quadrature panel's complex rectangle reached the pole.
* the cosine class stopped every method from ``d = 280`` on with "--kernel: must be finite on [-1, 1]" (its
  ``Gamma(d/2) (2/r)^(d/2-1) J_(d/2-1)(r)`` overflowed to ``inf * 0``); an unbounded certified interval printed
  ``7e307`` as its loss.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from test_hostile_cli import AS_LIMIT, SRC, _limits
from test_hostile_round3 import WORKER

P = ["--L", "1", "--sigma", "0.5"]
LOSS_DOMAIN = {"d": "[3]", "n": "[10]", "L": "1.0", "sigma": "0.5", "w": "[1.0, 2.0]"}
WSTAR_DOMAIN = {"d": "[3]", "n": "[10]", "L": "1.0", "sigma": "0.5"}
SMALL_PROOF = """name = "cap-small"
quantity = "cap_tail"
relation = "<="
bound = "exp(-d*h**2/2)"
[domain]
d = [5]
h = [0, 1]
"""


def _variant(quantity="loss", task="affine", relation=">=", bound="-1e9", extra="", domain=None, **overrides):
    """A variant file's text: a loss quantity of ``task`` on ``domain`` (default :data:`LOSS_DOMAIN`) with the
    entries of ``overrides`` replaced (None removes one)."""
    table = dict(LOSS_DOMAIN if domain is None else domain, **overrides)
    head = f'name = "h"\nquantity = "{quantity}"\n' + (f'task = "{task}"\n' if task else "")
    head += f'relation = "{relation}"\nbound = "{bound}"\n{extra}\n[domain]\n'
    return head + "".join(f"{k} = {v}\n" for k, v in table.items() if v is not None)


# every variant file of the table, by the id of the case that proves it
FILES = {
    # --- [domain] tables refused before any work, naming the parameter
    "n-float": _variant(n="[10.5]"),
    "n-zero": _variant(n="[0]"),
    "n-negative": _variant(n="[-5]"),
    "n-string": _variant(n='["10"]'),
    "n-bool": _variant(n="[true]"),
    "n-nan": _variant(n="[nan]"),
    "n-inf": _variant(n="[inf]"),
    "n-over-max": _variant(n="[10000000000000000]"),
    "n-from-float": _variant(n="{from = 5.5, to = 10}"),
    "n-range-inverted": _variant(n="{from = 10, to = 5}"),
    "n-range-extra-key": _variant(n="{from = 5, to = 10, by = 2}"),
    "n-empty-list": _variant(n="[]"),
    "n-nested": _variant(n="[[10]]"),
    "w-cross-zero": _variant(w="[-1.0, 2.0]"),
    "w-zero": _variant(w="[0.0, 2.0]"),
    "w-negative": _variant(w="[-2.0, -1.0]"),
    "w-nan": _variant(w="[nan, 2.0]"),
    "w-inf": _variant(w="[1.0, inf]"),
    "w-string": _variant(w='["1", 2.0]'),
    "w-three": _variant(w="[1.0, 2.0, 3.0]"),
    "w-empty": _variant(w="[]"),
    "w-table": _variant(w="{from = 1, to = 2}"),
    "w-above-max": _variant(w="[1.0, 1e9]"),
    "w-inverted": _variant(w="[2.0, 1.0]"),
    "w-bool": _variant(w="true"),
    "w-missing": _variant(w=None),
    "L-missing": _variant(L=None),
    "L-zero": _variant(L="0.0"),
    "L-above": _variant(L="[1.0, 1e7]"),
    "sigma-zero": _variant(sigma="0.0"),
    "sigma-range-from-zero": _variant(sigma="[0.0, 1.0]"),
    "sigma-negative": _variant(sigma="-0.5"),
    "d-noninteger": _variant(d="[3.5]"),
    "d-above": _variant(d="[513]"),
    "d-one": _variant(d="[1]"),
    "d-string": _variant(d='"3"'),
    "d-repeated": _variant(d="[3, 3]"),
    "roots-too-many": _variant(d=str(list(range(2, 502))), n=str(list(range(10, 20)))),
    "param-k": _variant(k="[1]"),
    "param-h": _variant(h="[0.0, 1.0]"),
    "wstar-n1": _variant("w_star", bound="0", domain=WSTAR_DOMAIN, n="[1]"),
    "wstar-with-w": _variant("w_star", bound="0", domain=WSTAR_DOMAIN, w="[1.0, 2.0]"),
    "icl-error-n1": _variant("icl_error", bound="0", domain=WSTAR_DOMAIN, n="[1]"),
    # --- the file's other fields
    "task-missing": _variant(task=None),
    "task-not-certified": _variant(task="lowrank-linear"),
    "task-mixture": _variant(task="mix:affine=1,relu=1"),
    "task-kernel": _variant(task="kernel:t"),
    "cosine-frequency-5": _variant(task="cosine", extra="frequency = 5.0"),
    "cosine-frequency-1": _variant(task="cosine", extra="frequency = 1.0"),
    "at-w": _variant(extra='at_w = "sqrt(n)"'),
    "seed": _variant(extra="seed = 3"),
    "bound-log-zero": _variant(relation="<=", bound="log(w - 1)"),
    "bound-divide-by-zero": _variant(relation="<=", bound="1/(n - 10)"),
    "bound-undefined": _variant(relation="<=", bound="0*log(-1)"),
    "bound-overflow": _variant(relation="<=", bound="10**400"),
    # --- valid, decided quickly
    "loss": _variant(),
    "dloss-dw": _variant("dloss_dw"),
    "dnoise-dw": _variant("dnoise_dw"),
    "n-integral-float": _variant(n="[1e14]"),
    "d-integral-float": _variant(d="[3.0]"),
    "w-subnormal": _variant(w="5e-324"),
    "loss-refuted": _variant(relation="<=", bound="0.01"),
    "bound-tower": _variant(relation="<=", bound="w**w**w"),
    # --- unbounded in size, bounded in work: undecided within --seconds / --max-boxes
    "n-huge-range": _variant(n="{from = 5, to = 1000000000000000}"),
    "w-enormous": _variant(w="[1e-300, 1e8]"),
    "sigma-enormous": _variant(sigma="[1e-300, 1000000.0]"),
    "L-enormous": _variant(L="[1e-6, 1e6]"),
    "d-every": _variant(d="{from = 2, to = 512}"),
    "w-beyond-budget": _variant(n="[2]", w="[1e7, 1e8]"),
    "wstar-n-range": _variant("w_star", bound="0", domain=WSTAR_DOMAIN, n="{from = 2, to = 1000000000000000}"),
}


def prove(cid, *extra):
    return ["prove", f"{{tmp}}/{cid}.toml", "--json", *extra]


def recheck(cid):
    return ["prove", "--recheck", f"{{tmp}}/{cid}.json", "--json"]


def certified_loss(*problem):
    return ["loss", *problem, "--method", "certified", "--json"]


PARAMETER = "domain: parameter"
CERTIFICATE = "--recheck: must be a proof certificate"

CASES = [
    # --- prove on the loss quantities: a hostile [domain] refused before any work, naming the parameter
    *[
        (f"prove-{cid}", prove(cid), 2, fragment, 3)
        for cid, fragment in (
            ("n-float", f"{PARAMETER} 'n' must be an integer in [1, 1e15] (got 10.5)"),
            ("n-zero", f"{PARAMETER} 'n' must be an integer in [1, 1e15] (got 0)"),
            ("n-negative", f"{PARAMETER} 'n' must be an integer"),
            ("n-string", f"{PARAMETER} 'n' must be an integer"),
            ("n-bool", f"{PARAMETER} 'n' must be an integer"),
            ("n-nan", f"{PARAMETER} 'n' must be an integer"),
            ("n-inf", f"{PARAMETER} 'n' must be an integer"),
            ("n-over-max", f"{PARAMETER} 'n' must be an integer in [1, 1e15]"),
            ("n-from-float", f"{PARAMETER} 'n' must be an integer"),
            ("n-range-inverted", f"{PARAMETER} 'n' must be a range with from <= to"),
            ("n-range-extra-key", f"{PARAMETER} 'n' must be an integer, a list of integers or a range"),
            ("n-empty-list", f"{PARAMETER} 'n' must be a non-empty list"),
            ("n-nested", f"{PARAMETER} 'n' must be an integer"),
            ("w-cross-zero", f"{PARAMETER} 'w' must be a finite real number > 0"),
            ("w-zero", f"{PARAMETER} 'w' must be a finite real number > 0"),
            ("w-negative", f"{PARAMETER} 'w' must be a finite real number > 0"),
            ("w-nan", f"{PARAMETER} 'w' must be a finite real number"),
            ("w-inf", f"{PARAMETER} 'w' must be a finite real number"),
            ("w-string", f"{PARAMETER} 'w' must be a finite real number"),
            ("w-three", f"{PARAMETER} 'w' must be a closed interval [lo, hi]"),
            ("w-empty", f"{PARAMETER} 'w' must be a closed interval [lo, hi]"),
            ("w-table", f"{PARAMETER} 'w' must be a finite real number"),
            ("w-above-max", f"{PARAMETER} 'w' must be a finite real number > 0 and <= 1e+08"),
            ("w-inverted", f"{PARAMETER} 'w' must be an interval [lo, hi] with lo <= hi"),
            ("w-bool", f"{PARAMETER} 'w' must be a finite real number"),
            ("w-missing", "parameter 'w' must be given in the [domain]"),
            ("L-missing", f"{PARAMETER} 'L' must be given in the domain"),
            ("L-zero", f"{PARAMETER} 'L' must be a finite real number >= 1e-06"),
            ("L-above", f"{PARAMETER} 'L' must be a finite real number >= 1e-06 and <= 1e+06"),
            ("sigma-zero", f"{PARAMETER} 'sigma' must be a finite real number > 0"),
            ("sigma-range-from-zero", f"{PARAMETER} 'sigma' must be a finite real number > 0"),
            ("sigma-negative", f"{PARAMETER} 'sigma' must be a finite real number > 0"),
            ("d-noninteger", f"{PARAMETER} 'd' must be an integer in [2, 512] (got 3.5)"),
            ("d-above", f"{PARAMETER} 'd' must be an integer in [2, 512]"),
            ("d-one", f"{PARAMETER} 'd' must be an integer in [2, 512]"),
            ("d-string", f"{PARAMETER} 'd' must be an integer in [2, 512]"),
            ("param-k", f"{PARAMETER} 'k' must be a parameter of the quantity (one of d, n, L, sigma, w)"),
            ("param-h", f"{PARAMETER} 'h' must be a parameter of the quantity"),
            ("wstar-n1", "parameter 'n' must be an integer in [2, 1e+15] for w_star"),
            ("wstar-with-w", f"{PARAMETER} 'w' must be a parameter of the quantity (one of d, n, L, sigma)"),
            ("icl-error-n1", "parameter 'n' must be an integer in [2, 1e+15] for icl_error"),
            ("task-missing", "missing key 'task'"),
            ("task-not-certified", "'task' must be one of affine, relu, cosine"),
            ("task-mixture", "parameter 'task' must be one of affine, relu, cosine for loss"),
            ("task-kernel", "'task' must be one of affine, relu, cosine"),
            ("cosine-frequency-5", "'frequency' must be 1 for `prove`"),
            ("at-w", "'at_w' applies to the quantities bias and noise only"),
            ("seed", "'seed' applies to method 'mc' only"),
            ("bound-log-zero", "'bound' cannot be evaluated at d=3, n=10, L=1, sigma=0.5, w=1"),
            ("bound-divide-by-zero", "'bound' cannot be evaluated"),
            ("bound-undefined", "bad 'bound': constant sub-expression is undefined"),
            ("bound-overflow", "bad 'bound': constant sub-expression out of range"),
        )
    ],
    ("prove-d-repeated", prove("d-repeated"), 2, f"{PARAMETER} 'd' must be a list without repeated values", 3),
    ("prove-roots-too-many", prove("roots-too-many"), 2, "'domain' must be at most 4096 root boxes", 3),
    # --- prove on the loss quantities: valid, decided in seconds
    ("prove-loss", prove("loss"), 0, None, 15),
    ("prove-dloss-dw", prove("dloss-dw"), 0, None, 15),
    ("prove-dnoise-dw", prove("dnoise-dw"), 0, None, 15),
    ("prove-cosine-frequency-1", prove("cosine-frequency-1"), 0, None, 30),
    ("prove-n-integral-float", prove("n-integral-float"), 0, None, 15),
    ("prove-d-integral-float", prove("d-integral-float"), 0, None, 15),
    ("prove-w-subnormal", prove("w-subnormal"), 0, None, 15),
    ("prove-loss-refuted", prove("loss-refuted"), 1, None, 15),
    ("prove-bound-tower", prove("bound-tower"), 0, None, 15),
    # --- unbounded in size: undecided (exit 3) within the budget the user gave, never minutes
    *[
        (f"prove-{cid}", prove(cid, "--seconds", "0.5"), 3, None, 8)
        for cid in ("n-huge-range", "w-enormous", "sigma-enormous", "L-enormous", "d-every", "wstar-n-range")
    ],
    ("prove-w-beyond-budget", prove("w-beyond-budget", "--max-boxes", "200"), 3, None, 8),
    # --- prove's options
    ("prove-max-boxes-0", ["prove", "{tmp}/small.toml", "--max-boxes", "0"], 2, "--max-boxes: must be an integer", 2),
    ("prove-max-boxes-1e8", ["prove", "{tmp}/small.toml", "--max-boxes", "1e8"], 2, "--max-boxes", 2),
    ("prove-seconds-0", ["prove", "{tmp}/small.toml", "--seconds", "0"], 2, "--seconds: must be a finite real", 2),
    ("prove-seconds-nan", ["prove", "{tmp}/small.toml", "--seconds", "nan"], 2, "--seconds", 2),
    ("prove-seconds-tiny", ["prove", "{tmp}/small.toml", "--seconds", "1e-9", "--json"], 3, None, 2),
    ("prove-rtol-0", ["prove", "{tmp}/small.toml", "--sharpest-rtol", "0"], 2, "--sharpest-rtol", 2),
    ("prove-no-file", ["prove"], 2, "FILE: must be a variant file", 2),
    ("prove-two-files", ["prove", "{tmp}/small.toml", "{tmp}/small.toml"], 2, "unrecognized arguments", 2),
    ("prove-file-directory", ["prove", "{tmp}"], 2, "not a regular file", 2),
    ("prove-file-fifo", ["prove", "{tmp}/fifo"], 2, "not a regular file", 2),
    ("prove-file-device", ["prove", "/dev/zero"], 2, "not a regular file", 2),
    ("prove-force-alone", ["prove", "{tmp}/small.toml", "--force", "--json"], 0, None, 5),
    ("recheck-with-file", ["prove", "{tmp}/small.toml", "--recheck", "{tmp}/good.json"], 2, "--recheck: must be", 2),
    (
        "recheck-with-certificate",
        ["prove", "--recheck", "{tmp}/good.json", "--certificate", "{tmp}/x.json"],
        2,
        "--recheck: must be given alone",
        2,
    ),
    ("recheck-empty-path", ["prove", "--recheck", ""], 2, CERTIFICATE, 2),
    ("recheck-seconds-tiny", ["prove", "--recheck", "{tmp}/good.json", "--seconds", "1e-9"], 3, None, 2),
    # --- the checker's malformed certificates: one line naming --recheck (and the path), or a failed recheck
    ("recheck-good", recheck("good"), 0, None, 5),
    *[
        (f"recheck-{cid}", recheck(cid), 2, fragment, 3)
        for cid, fragment in (
            ("empty", "readable JSON (JSONDecodeError)"),
            ("not-json", "readable JSON (JSONDecodeError)"),
            ("not-utf8", "readable JSON (UnicodeDecodeError)"),
            ("list", "an object with format"),
            ("deep", "readable JSON (RecursionError)"),
            ("nan", "a number that is not finite (NaN)) (got '{tmp}/nan.json')"),
            ("repeated-key", "an object with a repeated key) (got '{tmp}/repeated-key.json')"),
            ("infinite-constant", "the constant c must be a finite number) (got '{tmp}/infinite-constant.json')"),
            ("huge-integer-domain", "a number beyond the double range) (got '{tmp}/huge-integer-domain.json')"),
            ("huge-integer-split", "(got '{tmp}/huge-integer-split.json')"),
            ("huge-integer-leaf", "(got '{tmp}/huge-integer-leaf.json')"),
            ("version-1", "this file says version 1"),
            ("version-true", "this file says version True"),
            ("extra-key", "the certificate must have exactly the keys"),
            ("no-parts", "the certificate must have exactly the keys"),
            ("parts-empty", "the parts must be a list of one part"),
            ("precision-huge", "precision_bits must be an integer in [64, 1024]"),
            ("verdict-holds", "the verdict must be one of proved, refuted, undecided"),
            ("quantity-unknown", "the quantity must be one of"),
            ("loss-without-task", "the task of loss must be one of affine, relu, cosine"),
            ("tail-with-task", "the task of cap_tail must be null"),
            ("bound-code", "the bound does not read"),
            ("bound-not-text", "the bound must be a text"),
            ("relation-strict", "the relation must be '<=' or '>='"),
            ("domain-missing", "the domain must give exactly the parameters d, h"),
            ("domain-float-d", "a piece of the domain's d must be [a, b], each an integer in [2, 512]"),
            ("domain-outside", "the domain's h must lie in a real number in [-1, 1]"),
            ("domain-inverted", "the domain's h must have low <= high"),
            ("domain-too-many-listed", "the domain's d must be a list of 1 to 1000 integer pieces"),
            ("constant-shadows", "a constant 'd' names a parameter"),
            ("split-at-text", "a split point must be a finite number"),
            ("leaf-decision", "a leaf's decision must be 'proved' or 'undecided'"),
            ("directory", "a regular file of at most"),
            ("missing", "a regular file of at most"),
            ("fifo", "a regular file of at most"),
            ("dangling", "a regular file of at most"),
        )
    ],
    *[
        (f"recheck-{cid}", recheck(cid), 1, None, 3)
        for cid in ("roots-empty", "split-outside", "split-unknown", "tree-cut", "tree-longer", "claims-refuted")
    ],
    # --- the certified loss: refused or inconclusive outside its reach, never a wide interval with exit 0
    ("certified-d100-n2-w1", certified_loss("--task", "affine", "--d", "100", "--n", "2", *P, "--w", "1"), 3, None, 10),
    ("certified-d3", certified_loss("--task", "affine", "--d", "3", "--n", "100", *P, "--w", "5"), 0, None, 10),
    ("certified-relu-w0", certified_loss("--task", "relu", "--d", "3", "--n", "100", *P, "--w", "0"), 0, None, 10),
    ("certified-cosine-n1", certified_loss("--task", "cosine", "--d", "3", "--n", "1", *P, "--w", "5"), 0, None, 10),
    (
        "certified-relu-w1e8-n1e150",
        certified_loss("--task", "relu", "--d", "3", "--n", "1e150", *P, "--w", "1e8"),
        2,
        "--w: must be a window whose certified Gegenbauer series fits the budget",
        5,
    ),
    (
        "certified-affine-w1e8-n2",
        certified_loss("--task", "affine", "--d", "3", "--n", "2", *P, "--w", "1e8"),
        2,
        "--w: must be a window whose certified grid fits the budget",
        5,
    ),
    (
        "certified-cosine-d300-unbounded",
        certified_loss("--task", "cosine", "--d", "300", "--n", "1000", *P, "--w", "5"),
        3,
        None,
        15,
    ),
    (
        "certified-kernel-pole-outside",  # analytic on [-1, 1]; a panel near its pole escaped as a traceback
        certified_loss("--kernel", "1/(1.5-t)", "--d", "3", "--n", "100", "--sigma", "0.5", "--w", "5"),
        0,
        None,
        15,
    ),
    (
        "certified-kernel-pole-near",
        certified_loss("--kernel", "1/(1.01-t)", "--d", "3", "--n", "100", "--sigma", "0.5", "--w", "5"),
        2,
        "--kernel: must be analytic in t on [-1, 1] for the certified method",
        15,
    ),
    (
        "certified-kernel-t100",  # [-4e16, 4e16] with exit 0 before: an interval beyond the stated accuracy
        certified_loss("--kernel", "t**100", "--d", "3", "--n", "100", "--sigma", "0.5", "--w", "5"),
        3,
        None,
        15,
    ),
    # --- the cosine class at every dimension the options allow (it stopped from d = 280 on, naming --kernel)
    (
        "exact-cosine-d512",
        ["loss", "--task", "cosine", "--d", "512", "--n", "1000", *P, "--w", "5", "--method", "exact", "--json"],
        0,
        None,
        15,
    ),
    (
        "exact-wstar-cosine-d300",
        ["wstar", "--task", "cosine", "--d", "300", "--n", "1000", *P, "--method", "exact", "--json"],
        0,
        None,
        15,
    ),
    # --- every error names the option the user gave: a kernel is not a --task
    (
        "asymptotic-kernel",
        ["loss", "--kernel", "t", "--d", "3", "--n", "100000", "--sigma", "0.5", "--w", "5", "--method", "asymptotic"],
        2,
        "--kernel: must be affine or relu for the asymptotic loss",
        5,
    ),
    (
        "asymptotic-kernel-file",
        ["loss", "--kernel-file", "{tmp}/kernel.toml", "--d", "3", "--n", "100000", "--sigma", "0.5", "--w", "5"]
        + ["--method", "asymptotic"],
        2,
        "--kernel-file: must be affine or relu for the asymptotic loss",
        5,
    ),
    (
        "asymptotic-wstar-kernel",
        ["wstar", "--kernel", "t", "--d", "3", "--n", "100000", "--sigma", "0.5", "--method", "asymptotic"],
        2,
        "--kernel:",
        5,
    ),
]


def _certificates(tmp) -> None:
    """``good.json`` (a proof of :data:`SMALL_PROOF`) and its malformed copies, one per ``recheck-*`` row."""
    from lipschitz_icl.gates.variants import load_variant
    from lipschitz_icl.prover import search
    from lipschitz_icl.prover.certificate import write

    variant = load_variant(tmp / "small.toml")
    statement = search.Statement(
        quantity=search.quantity_of(variant.quantity, variant.task),
        relation=variant.relation,
        bound=variant.bound,
        constants=dict(variant.constants),
        domain=variant.domain,
        sharpest=variant.sharpest,
    )
    good = search.prove_statement(statement).certificate
    write(good, tmp / "good.json")
    good = json.loads((tmp / "good.json").read_text())
    text = json.dumps(good)
    raw = {
        "empty": "",
        "not-json": "not json",
        "list": "[1, 2]",
        "deep": "[" * 100000 + "]" * 100000,
        "nan": text.replace('"precision_bits": ', '"precision_bits": NaN, "x": '),
        "repeated-key": '{"format": 1, "format": 2}',
        "infinite-constant": text.replace('"constants": {}', '"constants": {"c": 1e400}', 1),
        "huge-integer-domain": text.replace('"h": [0.0, 1.0]}', '"h": [0, ' + "1" * 401 + "]}", 1),
    }
    for name, content in raw.items():
        (tmp / f"{name}.json").write_text(content)
    (tmp / "not-utf8.json").write_bytes(b"\xff\xfe{}")

    def edit(change):
        data = copy.deepcopy(good)
        change(data)
        return data

    root = ["parts", 0, "roots", 0]

    def at(data, path):
        for key in path:
            data = data[key]
        return data

    edits = {
        "huge-integer-split": lambda d: at(d, root)[0].update(split={"param": "h", "at": 10**400}),
        "huge-integer-leaf": lambda d: at(d, root)[1].update(quantity=[0, 10**400]),
        "version-1": lambda d: d.update(version=1),
        "version-true": lambda d: d.update(version=True),
        "extra-key": lambda d: d.update(extra=1),
        "no-parts": lambda d: d.pop("parts"),
        "parts-empty": lambda d: d.update(parts=[]),
        "precision-huge": lambda d: d.update(precision_bits=10**9),
        "verdict-holds": lambda d: d.update(verdict="holds"),
        "quantity-unknown": lambda d: d["statement"].update(quantity="evil"),
        "loss-without-task": lambda d: d["statement"].update(quantity="loss"),
        "tail-with-task": lambda d: d["statement"].update(task="affine"),
        "bound-code": lambda d: d["statement"].update(bound="__import__('os').system('true')"),
        "bound-not-text": lambda d: d["statement"].update(bound=5),
        "relation-strict": lambda d: d["statement"].update(relation="<"),
        "domain-missing": lambda d: d["statement"]["domain"].pop("h"),
        "domain-float-d": lambda d: d["statement"]["domain"].update(d=[[5.0, 5.0]]),
        "domain-outside": lambda d: d["statement"]["domain"].update(h=[0.0, 2.0]),
        "domain-inverted": lambda d: d["statement"]["domain"].update(h=[1.0, 0.0]),
        "domain-too-many-listed": lambda d: d["statement"]["domain"].update(d=[[k, k] for k in range(2, 1200)]),
        "constant-shadows": lambda d: d["statement"].update(constants={"d": 1.0}),
        "split-at-text": lambda d: at(d, root)[0].update(split={"param": "h", "at": "0.5"}),
        "leaf-decision": lambda d: at(d, root)[1].update(decision="maybe"),
        "roots-empty": lambda d: d["parts"][0].update(roots=[]),
        "split-outside": lambda d: at(d, root)[0].update(split={"param": "h", "at": 5.0}),
        "split-unknown": lambda d: at(d, root)[0].update(split={"param": "zz", "at": 0.5}),
        "tree-cut": lambda d: at(d, root).pop(),
        "tree-longer": lambda d: at(d, root).append(at(d, root)[1]),
        "claims-refuted": lambda d: d.update(verdict="refuted"),
    }
    for name, change in edits.items():
        (tmp / f"{name}.json").write_text(json.dumps(edit(change)))
    (tmp / "directory.json").mkdir()
    os.mkfifo(tmp / "fifo.json")
    (tmp / "dangling.json").symlink_to(tmp / "no-such-certificate.json")


def _prepare(tmp) -> None:
    for cid, text in FILES.items():
        (tmp / f"{cid}.toml").write_text(text)
    (tmp / "small.toml").write_text(SMALL_PROOF)
    (tmp / "kernel.toml").write_text('kernel = "t"\n')
    os.mkfifo(tmp / "fifo")
    _certificates(tmp)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile4")
    _prepare(tmp)
    cases = [
        (cid, [a.replace("{tmp}", str(tmp)) for a in argv], None, float(seconds) + 10.0)
        for cid, argv, _, _, seconds in CASES
    ]
    (tmp / "cases.json").write_text(json.dumps(cases))
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["LIPSCHITZ_ICL_CACHE"] = str(tmp / "cache")
    env.pop("LIPSCHITZ_ICL_REGISTRY", None)
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, str(tmp / "cases.json"), str(tmp / "results.json")],
        cwd=tmp,
        env=env,
        preexec_fn=_limits,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp / "results.json").read_text())
    data["_tmp"] = tmp
    return data


def test_case_ids_are_unique():
    assert len({c[0] for c in CASES}) == len(CASES)


def test_every_variant_file_is_used():
    used = {arg.split("/")[-1].removesuffix(".toml") for _, argv, *_ in CASES for arg in argv if arg.endswith(".toml")}
    assert set(FILES) <= used


@pytest.mark.parametrize("cid, argv, code, fragment, seconds", CASES, ids=[c[0] for c in CASES])
def test_hostile_case(results, cid, argv, code, fragment, seconds):
    r = results[cid]
    lines = r["stderr"].strip().splitlines()
    assert r["code"] == code, f"exit {r['code']} (expected {code}); stderr: {r['stderr'][:500]}"
    assert "Traceback" not in r["stderr"] and "Warning" not in r["stderr"], r["stderr"][:1000]
    assert len(lines) in {0: [0], 1: [0], 2: [1], 3: [0, 1]}[code], r["stderr"][:1000]
    if fragment is not None:
        fragment = fragment.replace("{tmp}", str(results["_tmp"]))
        assert fragment in lines[0] and len(lines[0]) < 1000, lines
    if code == 2:
        assert r["stdout"] == "" and lines[0].startswith("lipschitz-icl: error:")
    assert r["cpu_seconds"] < seconds, f"{r['cpu_seconds']:.1f} CPU s"  # work done before the answer, not load
    if "--json" in argv and code in (0, 1, 3):
        json.loads(r["stdout"])


def test_worker_memory_stayed_bounded(results):
    assert results["_maxrss_kb"] < AS_LIMIT // 1024


def test_an_inconclusive_certified_loss_still_holds_the_loss_and_says_so(results):
    """d = 100, n = 2, w = 1: the interval is wider than the stated accuracy, so ``converged`` is false and the
    exit 3; it still holds the exact loss (0.1306, the exact method) -- inconclusive, never wrong."""
    from lipschitz_icl.certified.loss import ACCURACY

    wide = json.loads(results["certified-d100-n2-w1"]["stdout"])
    assert wide["converged"] is False and wide["loss_low"] < 0.1306 < wide["loss_high"]
    assert wide["loss_high"] - wide["loss_low"] > 2 * ACCURACY * wide["loss_high"]
    tight = json.loads(results["certified-d3"]["stdout"])
    assert tight["converged"] is True
    assert tight["loss_high"] - tight["loss_low"] <= 2 * ACCURACY * tight["loss_high"]
    unbounded = json.loads(results["certified-cosine-d300-unbounded"]["stdout"])
    assert unbounded["converged"] is False and unbounded["loss"] is None and unbounded["loss_high"] == "inf"


def test_the_cosine_class_answers_at_large_dimensions(results):
    loss = json.loads(results["exact-cosine-d512"]["stdout"])
    assert 0 < loss["ci_low"] <= loss["loss"] <= loss["ci_high"] < 1
    w_star = json.loads(results["exact-wstar-cosine-d300"]["stdout"])
    assert w_star["ci_low"] < w_star["w_star"] < w_star["ci_high"]


def test_the_undecided_proofs_name_what_stopped_them(results):
    """Unbounded domains stop at the budget the user gave (exit 3, the boxes left open listed), never a verdict."""
    for cid in ("n-huge-range", "w-enormous", "d-every", "w-beyond-budget"):
        out = json.loads(results[f"prove-{cid}"]["stdout"])
        assert out["verdict"] == "undecided" and out["undecided_count"] > 0 and out["counterexample"] is None


def test_the_refuted_loss_bound_gives_a_certified_counterexample(results):
    out = json.loads(results["prove-loss-refuted"]["stdout"])
    assert out["verdict"] == "refuted"
    low, _ = out["counterexample"]["quantity"]
    assert low > 0.01  # the loss's certified lower end above the bound
