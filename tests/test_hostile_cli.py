"""Hostile input over the CLI (issue #11): every case runs in ONE worker process bounded by
``resource.setrlimit`` (address space 3 GiB, CPU 300 s) and a per-case wall-clock alarm; each case
asserts the exit code, at most one stderr line (none for exit 0), no traceback, the option named in
the message, and bounded time.

Table rows: ``(id, argv, expected exit code, fragment that the one stderr line must contain)``;
``{tmp}`` in an argument is the case directory prepared by :func:`workdir`.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
AS_LIMIT = 3 * 1024**3
CASE_SECONDS = 20.0  # alarm per case (a bomb would hit it)
REFUSAL_SECONDS = 2.0  # a refusal must come well within this

B = ["--task", "affine", "--d", "3", "--n", "200", "--L", "1", "--sigma", "0.5"]


def loss(*extra, base=B, w="5", method="exact"):
    return ["loss", *base, "--w", w, "--method", method, *extra]


def prob(**over):
    """The base problem options with some replaced (value None drops the option)."""
    values = {"--task": "affine", "--d": "3", "--n": "200", "--L": "1", "--sigma": "0.5", **over}
    out = []
    for key, value in values.items():
        if value is not None:
            out += [key, value]
    return out


TRAIN = ["train", *B, "--steps", "3", "--batch", "4"]

CASES = [
    # --- parsing: abbreviations, repeats, digits, exact integers, long values
    ("abbrev-tas", ["loss", "--tas", "affine", *B[2:], "--w", "1"], 2, "--tas"),
    ("abbrev-meth", loss("--meth", "exact")[:-2] + ["--meth", "exact"], 2, "--meth"),
    ("repeat-n", loss("--n", "300"), 2, "more than once"),
    ("repeat-w", loss("--w", "6"), 2, "more than once"),
    ("repeat-json", loss("--json", "--json"), 2, "more than once"),
    ("repeat-method", loss("--method", "asymptotic"), 2, "more than once"),
    ("fullwidth-d", loss(base=prob(**{"--d": "３"})), 2, "--d"),
    ("fullwidth-n", loss(base=prob(**{"--n": "１００"})), 2, "--n"),
    ("arabic-indic-n", loss(base=prob(**{"--n": "١٠٠"})), 2, "--n"),
    ("fullwidth-L", loss(base=prob(**{"--L": "１"})), 2, "--L"),
    ("n-float", loss(base=prob(**{"--n": "1.5"})), 2, "--n"),
    ("n-negative", loss(base=prob(**{"--n": "-5"})), 2, "--n"),
    ("n-zero", loss(base=prob(**{"--n": "0"})), 2, "--n"),
    ("n-empty", loss(base=prob(**{"--n": ""})), 2, "--n"),
    ("n-hex", loss(base=prob(**{"--n": "0x10"})), 2, "--n"),
    ("n-underscore", loss(base=prob(**{"--n": "1_000"})), 2, "--n"),
    ("n-space", loss(base=prob(**{"--n": " 100"})), 2, "--n"),
    ("n-e-only", loss(base=prob(**{"--n": "1e"})), 2, "--n"),
    ("n-1e300", loss(base=prob(**{"--n": "1e300"})), 2, "--n"),
    ("n-1e151", loss(base=prob(**{"--n": "1e151"})), 2, "--n"),
    ("n-inf", loss(base=prob(**{"--n": "inf"})), 2, "--n"),
    ("n-nan", loss(base=prob(**{"--n": "nan"})), 2, "--n"),
    ("n-frac-big", loss(base=prob(**{"--n": "9007199254740993.5"})), 2, "--n"),
    ("n-400-digits", loss(base=prob(**{"--n": "9" * 400})), 2, "--n"),
    ("n-long-value", loss(base=prob(**{"--n": "x" * 100000})), 2, "--n"),
    ("d-one", loss(base=prob(**{"--d": "1"})), 2, "--d"),
    ("d-zero", loss(base=prob(**{"--d": "0"})), 2, "--d"),
    ("d-negative", loss(base=prob(**{"--d": "-3"})), 2, "--d"),
    ("d-513", loss(base=prob(**{"--d": "513"})), 2, "--d"),
    ("d-100000", loss(base=prob(**{"--d": "100000"}), w="30"), 2, "--d"),
    ("d-20-digits", loss(base=prob(**{"--d": "12345678901234567890"})), 2, "--d"),
    ("d-float", loss(base=prob(**{"--d": "2.5"})), 2, "--d"),
    ("d-text", loss(base=prob(**{"--d": "three"})), 2, "--d"),
    ("L-zero", loss(base=prob(**{"--L": "0"})), 2, "--L"),
    ("L-negative", loss(base=prob(**{"--L": "-1"})), 2, "--L"),
    ("L-1e300", loss(base=prob(**{"--L": "1e300"})), 2, "--L"),
    ("L-1e-300", loss(base=prob(**{"--L": "1e-300"})), 2, "--L"),
    ("L-1e-8", loss(base=prob(**{"--L": "1e-8"})), 2, "--L"),
    ("L-1e7", loss(base=prob(**{"--L": "1e7"})), 2, "--L"),
    ("L-inf", loss(base=prob(**{"--L": "inf"})), 2, "--L"),
    ("L-nan", loss(base=prob(**{"--L": "nan"})), 2, "--L"),
    ("L-comma", loss(base=prob(**{"--L": "1,5"})), 2, "--L"),
    ("L-1e-400", loss(base=prob(**{"--L": "1e-400"})), 2, "--L"),
    ("sigma-negative", loss(base=prob(**{"--sigma": "-1"})), 2, "--sigma"),
    ("sigma-1e300", loss(base=prob(**{"--sigma": "1e300"})), 2, "--sigma"),
    ("sigma-1e8", loss(base=prob(**{"--sigma": "1e8"})), 2, "--sigma"),
    ("sigma-inf", loss(base=prob(**{"--sigma": "Infinity"})), 2, "--sigma"),
    ("sigma-nan", loss(base=prob(**{"--sigma": "NaN"})), 2, "--sigma"),
    ("w-negative", loss(w="-1"), 2, "--w"),
    ("w-1e300", loss(w="1e300"), 2, "--w"),
    ("w-1e9", loss(w="1e9"), 2, "--w"),
    ("w-nan", loss(w="nan"), 2, "--w"),
    ("w-empty", loss(w=""), 2, "--w"),
    ("contexts-zero", loss("--contexts", "0", method="averaged"), 2, "--contexts"),
    ("contexts-one", loss("--contexts", "1", method="averaged"), 2, "--contexts"),
    # below 100 the normal-approximation interval under-covers (0.72 at 2 contexts): refused, naming the range
    ("contexts-few", loss("--contexts", "99", method="averaged"), 2, "[100, 1000000]"),
    # a method that samples nothing refuses --contexts rather than ignore it
    ("contexts-exact", loss("--contexts", "100", method="exact"), 2, "--contexts: must be unset"),
    ("contexts-asymptotic", loss("--contexts", "100", method="asymptotic"), 2, "--contexts: must be unset"),
    ("contexts-huge", loss("--contexts", "99999999999999", method="averaged"), 2, "--contexts"),
    ("contexts-float", loss("--contexts", "1.5", method="averaged"), 2, "--contexts"),
    ("seed-negative", loss("--seed", "-1", method="averaged"), 2, "--seed"),
    ("seed-float", loss("--seed", "1.5", method="averaged"), 2, "--seed"),
    ("seed-2-64", loss("--seed", str(2**64), method="averaged"), 2, "--seed"),
    ("method-bogus", loss(method="bogus"), 2, "--method"),
    ("task-bogus", loss(base=prob(**{"--task": "sine"})), 2, "--task"),
    ("missing-L", loss(base=prob(**{"--L": None})), 2, "--L"),
    ("missing-L-not-given", loss(base=prob(**{"--L": None})), 2, "(not given)"),
    # a negative number argparse alone would take for an option reaches the option's own check
    ("w-minus-inf", loss(w="-inf"), 2, "argument --w: must be a finite real number"),
    ("w-minus-nan", loss(w="-nan"), 2, "argument --w: must be a finite real number"),
    ("w-minus-1e5", loss(w="-1e5"), 2, "argument --w: must be a finite real number >= 0"),
    ("sigma-minus-inf", loss(base=prob(**{"--sigma": "-inf"})), 2, "argument --sigma"),
    # nothing after "--" is joined to an option, nor is a number after a flag
    ("double-dash-negative-file", ["check", "--", "-1e5"], 2, "-1e5: cannot read the file"),
    ("flag-then-negative", loss("--json", "-1e5"), 2, "unrecognized arguments: -1e5"),
    # a refusal repeats the conflicting value the library names
    ("recheck-conflict-echo", ["prove", "--recheck", "x.json", "y.toml"], 2, "(got 'y.toml')"),
    # a huge n is repeated in scientific form, not as 151 digits
    ("n-1e150-echo", loss(base=prob(**{"--n": "1e150"}), method="averaged"), 2, "(got 1e+150)"),
    # the refused option's value is the one given for it, not the problem's name
    (
        "wstar-kernel-mc-echoes-method",
        ["wstar", "--kernel", "exp(t)", "--d", "3", "--n", "100", "--sigma", "0.5", "--method", "mc"],
        2,
        "--method: must be exact or certified",
    ),
    (
        "wstar-kernel-mc-got-mc",
        ["wstar", "--kernel", "exp(t)", "--d", "3", "--n", "100", "--sigma", "0.5", "--method", "mc"],
        2,
        "(got 'mc')",
    ),
    ("no-command", [], 2, "COMMAND"),
    ("unknown-command", ["frobnicate"], 2, "frobnicate"),
    ("mc-n-1e8", loss(base=prob(**{"--n": "1e8"}), method="averaged"), 2, "--n"),
    ("naive-work", loss(base=prob(**{"--n": "1e7"}), method="naive"), 2, "--contexts"),
    ("general-memory", loss("--contexts", "100", base=prob(**{"--n": "1e7", "--d": "512"}), method="naive"), 2, "--n"),
    # --- valid inputs at the edges: finite numbers, exit 0, nothing on stderr
    ("exact-n-1e150", loss("--json", base=prob(**{"--n": "1e150"}), w="1e8"), 0, None),
    ("exact-n-1e14", loss("--json", base=prob(**{"--n": "1e14"}), w="100"), 0, None),
    ("exact-n-exact-int", loss("--json", base=prob(**{"--n": "9007199254740993"}), w="100"), 0, None),
    ("asymptotic-w-1e8", loss("--json", base=prob(**{"--n": "1e20"}), w="1e8", method="asymptotic"), 0, None),
    ("n-1e2-integral", loss("--json", base=prob(**{"--n": "1e2"})), 0, None),
    ("n-100.0-integral", loss("--json", base=prob(**{"--n": "100.0"})), 0, None),
    (
        "wstar-d512-no-warning",
        ["wstar", *prob(**{"--d": "512", "--n": "1000"}), "--method", "exact", "--json"],
        0,
        None,
    ),
    # --- wstar: ranges, search bounds (exit 3 with an open interval), precision
    ("wstar-n-1e300", ["wstar", *prob(**{"--n": "1e300"}), "--method", "exact"], 2, "--n"),
    ("wstar-n-1", ["wstar", *prob(**{"--n": "1"}), "--method", "exact"], 2, "--n"),
    ("wstar-n-1e25-bound", ["wstar", *prob(**{"--n": "1e25"}), "--method", "exact", "--json"], 3, None),
    (
        "wstar-small-L-bound",
        ["wstar", *prob(**{"--L": "1e-6", "--sigma": "1e6"}), "--method", "exact", "--json"],
        3,
        None,
    ),
    ("wstar-L-1e-8", ["wstar", *prob(**{"--L": "1e-8"}), "--method", "exact"], 2, "--L"),
    ("wstar-sigma-1e8", ["wstar", *prob(**{"--sigma": "1e8"}), "--method", "exact"], 2, "--sigma"),
    ("wstar-sigma-zero", ["wstar", *prob(**{"--sigma": "0"}), "--method", "exact"], 2, "--sigma"),
    ("wstar-L-1e300", ["wstar", *prob(**{"--L": "1e300"})], 2, "--L"),
    ("wstar-sigma-1e300", ["wstar", *prob(**{"--sigma": "1e300"})], 2, "--sigma"),
    ("wstar-d-1e6", ["wstar", *prob(**{"--d": "1000000"})], 2, "--d"),
    ("wstar-d-1e5-exact", ["wstar", *prob(**{"--d": "100000"}), "--method", "exact"], 2, "--d"),
    ("wstar-relprec-1e-12", ["wstar", *B, "--rel-precision", "1e-12"], 2, "--rel-precision"),
    ("wstar-relprec-big", ["wstar", *B, "--rel-precision", "0.9"], 2, "--rel-precision"),
    ("wstar-relprec-nan", ["wstar", *B, "--rel-precision", "nan"], 2, "--rel-precision"),
    ("wstar-relprec-abbrev", ["wstar", *B, "--rel", "0.01"], 2, "--rel"),
    ("wstar-cosine-asymptotic", ["wstar", *prob(**{"--task": "cosine"}), "--method", "asymptotic"], 2, "--task"),
    ("wstar-mc-n-1e7", ["wstar", *prob(**{"--n": "1e7"})], 2, "--n"),
    ("wstar-seed-text", ["wstar", *B, "--seed", "abc"], 2, "--seed"),
    ("wstar-method-bogus", ["wstar", *B, "--method", "newton"], 2, "--method"),
    # --- train: limits and --out (checked before training: --steps 1000000 would take hours)
    ("train-steps-huge", ["train", *B, "--steps", "99999999999999"], 2, "--steps"),
    ("train-steps-zero", ["train", *B, "--steps", "0"], 2, "--steps"),
    ("train-lr-1e300", ["train", *B, "--lr", "1e300"], 2, "--lr"),
    ("train-lr-zero", ["train", *B, "--lr", "0"], 2, "--lr"),
    ("train-lr-nan", ["train", *B, "--lr", "nan"], 2, "--lr"),
    ("train-batch-zero", ["train", *B, "--batch", "0"], 2, "--batch"),
    ("train-batch-huge", ["train", *B, "--batch", "100000000"], 2, "--batch"),
    ("train-average", ["train", *B, "--average", "1.5"], 2, "--average"),
    ("train-k-full-rank", ["train", *B, "--k", "1"], 2, "--k"),
    ("train-n-1e8", ["train", *prob(**{"--n": "1e8"})], 2, "--n"),
    ("train-out-empty", ["train", *B, "--steps", "1000000", "--out="], 2, "--out"),
    ("train-out-long", ["train", *B, "--steps", "1000000", "--out", "{tmp}/" + "a" * 300 + ".npz"], 2, "--out"),
    ("train-out-not-npz", ["train", *B, "--steps", "1000000", "--out", "{tmp}/x.txt"], 2, "--out"),
    ("train-out-existing", ["train", *B, "--steps", "1000000", "--out", "{tmp}/existing.npz"], 2, "--out"),
    ("train-out-symlink", ["train", *B, "--steps", "1000000", "--out", "{tmp}/link.npz"], 2, "--out"),
    ("train-out-directory", ["train", *B, "--steps", "1000000", "--out", "{tmp}/adir.npz"], 2, "--out"),
    ("train-out-no-dir", ["train", *B, "--steps", "1000000", "--out", "{tmp}/nodir/x.npz"], 2, "--out"),
    ("train-out-system-file", ["train", *B, "--steps", "1000000", "--out", "{tmp}/passwd"], 2, "--out"),
    ("train-out-force", [*TRAIN, "--out", "{tmp}/forced.npz", "--force", "--json"], 0, None),
    ("train-out-new", [*TRAIN, "--out", "{tmp}/new.npz", "--json"], 0, None),
    # --- scaling
    ("scaling-d-1", ["scaling", "--task", "affine", "--d", "1"], 2, "--d"),
    ("scaling-d-100", ["scaling", "--task", "affine", "--d", "100"], 2, "--d"),
    ("scaling-d-text", ["scaling", "--task", "affine", "--d", "x"], 2, "--d"),
    ("scaling-task", ["scaling", "--task", "sawtooth", "--d", "3"], 2, "--task"),
    # a claims file the user names must exist (a mistyped path listed every claim as never run, exit 0)
    ("claims-missing-file", ["claims", "--claims", "no/such/claims.json"], 2, "--claims: must be an existing"),
    # a constant kernel has no bias part, so no window law: one line naming --kernel, not a traceback
    ("scaling-constant-kernel", ["scaling", "--kernel", "1", "--d", "3"], 2, "--kernel: must be a kernel the regul"),
    ("scaling-constant-kernel-pi", ["scaling", "--kernel", "1+0*t", "--d", "3"], 2, "no bias part"),
    # --- check: variant files (the file and its line are named)
    ("check-dev-zero", ["check", "/dev/zero"], 2, "not a regular file"),
    ("check-fifo", ["check", "{tmp}/fifo.toml"], 2, "not a regular file"),
    ("check-directory", ["check", "{tmp}"], 2, "not a regular file"),
    ("check-missing", ["check", "{tmp}/missing.toml"], 2, "cannot read"),
    ("check-big", ["check", "{tmp}/big.toml"], 2, "larger than"),
    ("check-binary", ["check", "{tmp}/binary.toml"], 2, "UTF-8"),
    ("check-tower", ["check", "{tmp}/tower.toml"], 2, ":5:"),
    ("check-rational-power", ["check", "{tmp}/ratpow.toml"], 2, ":5:"),
    ("check-400-digits", ["check", "{tmp}/digits.toml"], 2, "out of range"),
    ("check-div-zero", ["check", "{tmp}/divzero.toml"], 2, "division by zero"),
    ("check-exp-bomb", ["check", "{tmp}/expbomb.toml"], 2, "exp"),
    ("check-L-1e300", ["check", "{tmp}/L1e300.toml"], 2, "'L'"),
    ("check-sigma-1e300", ["check", "{tmp}/sigma1e300.toml"], 2, "'sigma'"),
    ("check-eval", ["check", "{tmp}/eval.toml"], 2, "not allowed"),
    ("check-dunder", ["check", "{tmp}/dunder.toml"], 2, "attribute"),
    ("check-deep", ["check", "{tmp}/deep.toml"], 2, "nested"),
    ("check-log-negative", ["check", "{tmp}/logneg.toml"], 2, "log"),
    ("check-at-w-huge", ["check", "{tmp}/atw.toml"], 2, "at_w"),
    ("check-grid-points", ["check", "{tmp}/grid.toml"], 2, "grid"),
    ("check-bad-toml", ["check", "{tmp}/badtoml.toml"], 2, "TOML"),
    ("check-good", ["check", "{tmp}/good.toml", "--json"], 0, None),
    # --- report: hostile claims.json (schema before rendering)
    ("report-power-string", ["report", "--claims", "{tmp}/c-power.json", "--out", "{tmp}/r1", "--no-pdf"], 2, "power"),
    (
        "report-quantities-object",
        ["report", "--claims", "{tmp}/c-qobj.json", "--out", "{tmp}/r2", "--no-pdf"],
        2,
        "quantities",
    ),
    (
        "report-subnormal",
        ["report", "--claims", "{tmp}/c-subnormal.json", "--out", "{tmp}/r3", "--no-pdf"],
        2,
        "theory",
    ),
    ("report-near-max", ["report", "--claims", "{tmp}/c-max.json", "--out", "{tmp}/r4", "--no-pdf"], 2, "measured"),
    ("report-10-400", ["report", "--claims", "{tmp}/c-bigint.json", "--out", "{tmp}/r5", "--no-pdf"], 2, "theory"),
    ("report-deep", ["report", "--claims", "{tmp}/c-deep.json", "--out", "{tmp}/r6", "--no-pdf"], 2, "--claims"),
    ("report-depth-21", ["report", "--claims", "{tmp}/c-depth21.json", "--out", "{tmp}/r7", "--no-pdf"], 2, "nested"),
    ("report-nan-literal", ["report", "--claims", "{tmp}/c-nan.json", "--out", "{tmp}/r8", "--no-pdf"], 2, "NaN"),
    ("report-nan-string", ["report", "--claims", "{tmp}/c-nanstr.json", "--out", "{tmp}/r9", "--no-pdf"], 2, "NaN"),
    (
        "report-duplicate-ids",
        ["report", "--claims", "{tmp}/c-dup.json", "--out", "{tmp}/r10", "--no-pdf"],
        2,
        "duplicate",
    ),
    (
        "report-blank-line-id",
        ["report", "--claims", "{tmp}/c-blank.json", "--out", "{tmp}/r11", "--no-pdf"],
        2,
        "claim_id",
    ),
    ("report-tex-is-dir", ["report", "--claims", "{tmp}/c-ok.json", "--out", "{tmp}/rdir", "--no-pdf"], 2, "--out"),
    (
        "report-out-is-file",
        ["report", "--claims", "{tmp}/c-ok.json", "--out", "{tmp}/existing.npz", "--no-pdf"],
        2,
        "--out",
    ),
    ("report-claims-dir", ["report", "--claims", "{tmp}", "--out", "{tmp}/r12", "--no-pdf"], 2, "--claims"),
    (
        "report-claims-binary",
        ["report", "--claims", "{tmp}/binary.toml", "--out", "{tmp}/r13", "--no-pdf"],
        2,
        "--claims",
    ),
    ("report-not-object", ["report", "--claims", "{tmp}/c-list.json", "--out", "{tmp}/r14", "--no-pdf"], 2, "--claims"),
    ("report-status", ["report", "--claims", "{tmp}/c-status.json", "--out", "{tmp}/r15", "--no-pdf"], 2, "status"),
    ("report-verdict", ["report", "--claims", "{tmp}/c-verdict.json", "--out", "{tmp}/r16", "--no-pdf"], 2, "verdict"),
    (
        "report-new-fields-ok",
        ["report", "--claims", "{tmp}/c-newfields.json", "--out", "{tmp}/r17", "--no-pdf", "--json"],
        0,
        None,
    ),
]

HEADER = """name = "hostile"
quantity = "w_star"
task = "affine"
relation = "<="
bound = "{bound}"
[grid]
d = [3, 10]
n = 100
L = {L}
sigma = {sigma}
"""


def _variant(bound, L="1.0", sigma="1.0", extra=""):
    return HEADER.format(bound=bound, L=L, sigma=sigma) + extra


def _claims(record_changes=None, records=None, raw=None):
    base = json.loads((Path(__file__).parent / "data" / "claims_example.json").read_text())
    if raw is not None:
        return raw
    if records is not None:
        base["claims"] = records
    if record_changes:
        base["claims"][0].update(record_changes)
    return json.dumps(base)


def _prepare(tmp: Path) -> None:
    """The files the table refers to."""
    files = {
        "existing.npz": "not an npz, but it exists",
        "passwd": "root:x:0:0:root:/root:/bin/bash\n",  # stands for a system file (never /etc/passwd in a test)
        "big.toml": "# " + "x" * (70 * 1024),
        "tower.toml": _variant("d**d**d**d"),
        "ratpow.toml": _variant("(1+1e-30)**(1e30) * d"),
        "digits.toml": _variant("9" * 400 + " * d"),
        "divzero.toml": _variant("1/(d-3)"),
        "expbomb.toml": _variant("exp(exp(exp(d)))"),
        "L1e300.toml": _variant("d", L="1e300"),
        "sigma1e300.toml": _variant("d", sigma="1e300"),
        "eval.toml": _variant("__import__"),
        "dunder.toml": _variant("d.__class__"),
        "deep.toml": _variant("(" * 60 + "d" + ")" * 60),
        "logneg.toml": _variant("log(3 - d)"),
        "atw.toml": _variant("d", extra="")
        .replace('quantity = "w_star"', 'quantity = "bias"')
        .replace("[grid]", 'at_w = "10**9 * d"\n[grid]'),
        "grid.toml": _variant("d")
        .replace("d = [3, 10]", "d = [" + ", ".join(str(k) for k in range(2, 60)) + "]")
        .replace("n = 100", "n = [100, 200, 300, 400]"),
        "badtoml.toml": "name = \n",
        "good.toml": _variant("10 * d**2"),
        "c-power.json": _claims({"power": ["a", 1]}),
        "c-qobj.json": _claims({"quantities": [1, 2]}),
        "c-subnormal.json": _claims({"quantities": [{"name": "q", "theory": 5e-324}]}),
        "c-max.json": _claims({"quantities": [{"name": "q", "measured": 1.7e308}]}),
        "c-bigint.json": _claims({"quantities": [{"name": "q", "theory": 10**400}]}),
        "c-deep.json": _claims(raw='{"claims": [], "x": ' + "[" * 100000 + "]" * 100000 + "}"),
        "c-depth21.json": _claims({"extra": {"x": json.loads("[" * 25 + "]" * 25)}}),
        "c-nan.json": _claims(raw='{"claims": [{"claim_id": "a", "verdict": "holds", "seconds": NaN}]}'),
        "c-nanstr.json": _claims({"quantities": [{"name": "q", "theory": "nan"}]}),
        "c-dup.json": _claims(
            records=[{"claim_id": "same", "verdict": "holds"}, {"claim_id": "same", "verdict": "fails"}]
        ),
        "c-blank.json": _claims({"claim_id": "a\n\nb"}),
        "c-ok.json": _claims(),
        "c-list.json": "[1, 2, 3]",
        "c-status.json": _claims({"status": "maybe"}),
        "c-verdict.json": _claims({"verdict": "probably"}),
        "c-newfields.json": _claims(
            {
                "status": "exploratory",
                "resolution": {"parameter": "n", "value": None, "note": "x"},
                "margin": "3 s.e.",
                "margin_source": "lipschitz_icl/derivations/x.py",
                "seed": 4,
                "group": "thm34",
                "future_field": {"nested": [1, "inf", None]},
            }
        ),
    }
    for name, text in files.items():
        (tmp / name).write_text(text)
    (tmp / "binary.toml").write_bytes(b"\xff\xfe\x00bad")
    os.mkfifo(tmp / "fifo.toml")
    os.symlink(tmp / "existing.npz", tmp / "link.npz")
    (tmp / "adir.npz").mkdir()
    (tmp / "rdir" / "report.tex").mkdir(parents=True)
    (tmp / "forced.npz").write_text("old")


WORKER = textwrap.dedent("""
    import contextlib, io, json, resource, signal, sys, time
    from lipschitz_icl.cli import build_parser, main
    import lipschitz_icl.gates.variants, lipschitz_icl.report  # imports are not a case's time
    import lipschitz_icl.exact.route
    build_parser()
    cases, result_path = json.load(open(sys.argv[1])), sys.argv[2]

    class Timeout(BaseException):
        pass

    def on_alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    out = {}
    for cid, argv, limit in cases:
        so, se = io.StringIO(), io.StringIO()
        start, cpu = time.perf_counter(), time.process_time()
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
                code = main(argv)
        except Timeout:
            code = "timeout"
        except BaseException as exc:  # anything escaping main() is a defect the test reports
            code = "escaped " + type(exc).__name__ + ": " + str(exc)[:300]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out[cid] = {"code": code, "stdout": so.getvalue()[:20000], "stderr": se.getvalue()[:20000],
                    "seconds": time.perf_counter() - start,
                    "cpu_seconds": time.process_time() - cpu}
    out["_maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    json.dump(out, open(result_path, "w"))
""")


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (300, 300))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    _prepare(tmp)
    cases = [(cid, [a.replace("{tmp}", str(tmp)) for a in argv], CASE_SECONDS) for cid, argv, _, _ in CASES]
    (tmp / "cases.json").write_text(json.dumps(cases))
    env = dict(
        os.environ,
        PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        LIPSCHITZ_ICL_CACHE=str(tmp / "cache"),
    )
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


def test_at_least_150_hostile_cases_in_this_table():
    assert len(CASES) >= 150 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("cid, argv, code, fragment", CASES, ids=[c[0] for c in CASES])
def test_hostile_cli_case(results, cid, argv, code, fragment):
    r = results[cid]
    lines = r["stderr"].strip().splitlines()
    assert r["code"] == code, f"exit {r['code']} (expected {code}); stderr: {r['stderr'][:500]}"
    assert "Traceback" not in r["stderr"] and "Warning" not in r["stderr"]
    if code == 0 and argv[0] != "report":  # report --no-pdf says in one line that it did not compile
        assert lines == [], r["stderr"][:500]
    else:
        assert len(lines) <= 1, r["stderr"][:1000]
    if code == 2:
        assert len(lines) == 1 and fragment in lines[0], lines
        assert len(lines[0]) < 700  # long values are shortened, never echoed whole
        assert r["stdout"] == ""
        assert r["cpu_seconds"] < REFUSAL_SECONDS  # CPU: the work before the refusal, not the machine's load
    if "--json" in argv and code in (0, 3):
        payload = json.loads(r["stdout"], parse_constant=_refuse_non_finite)  # no NaN/Infinity token
        numbers = [v for v in payload.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        assert all(v == v and abs(v) != float("inf") for v in numbers)


def _refuse_non_finite(token: str):
    raise AssertionError(f"non-finite JSON token {token} in the output")


def test_worker_memory_stayed_bounded(results):
    assert results["_maxrss_kb"] < AS_LIMIT // 1024


def test_every_refusal_reads_the_same_way(results):
    """Every exit-2 refusal is ``lipschitz-icl: error: `` and a message naming what was refused (printed
    with ``-s`` for the closing note)."""
    for cid, _argv, code, _fragment in CASES:
        message = results[cid]["stderr"].strip()
        print(f"{cid:28s} {results[cid]['code']!s:>3}  {results[cid]['seconds']:.2f}s  {message[:150]}")
        if code == 2:
            assert message.startswith("lipschitz-icl: error: ") and len(message) > len("lipschitz-icl: error: ") + 10


def test_search_at_its_bound_reports_an_open_interval(results):
    upper = json.loads(results["wstar-n-1e25-bound"]["stdout"])
    assert upper["at_search_bound"] is True and upper["ci_high"] == "inf" and upper["ci_low"] == upper["w_star"]
    lower = json.loads(results["wstar-small-L-bound"]["stdout"])
    assert lower["at_search_bound"] is True and lower["ci_low"] == 0.0 and lower["ci_high"] == lower["w_star"]


def test_exact_loss_at_the_range_ends_is_finite_and_positive(results):
    for cid in ("exact-n-1e150", "exact-n-1e14", "asymptotic-w-1e8"):
        payload = json.loads(results[cid]["stdout"])
        assert all(isinstance(payload[k], float) and payload[k] > 0 for k in ("loss", "bias", "noise")), payload
        assert payload["ci_low"] <= payload["loss"] <= payload["ci_high"]


def test_integral_spellings_of_n_give_the_same_number(results):
    a, b = (json.loads(results[c]["stdout"]) for c in ("n-1e2-integral", "n-100.0-integral"))
    assert a == b


def test_train_out_wrote_only_what_it_was_allowed_to(results):
    tmp = results["_tmp"]
    assert (tmp / "existing.npz").read_text() == "not an npz, but it exists"
    assert (tmp / "passwd").read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert (tmp / "link.npz").is_symlink()
    assert (tmp / "forced.npz").read_bytes()[:2] == b"PK" and (tmp / "new.npz").read_bytes()[:2] == b"PK"
    assert not list(tmp.glob(".train-*"))


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    import signal
    import time
    import warnings

    import psutil

    env = dict(
        os.environ,
        PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        LIPSCHITZ_ICL_CACHE=str(tmp_path / "cache"),
    )
    argv = [
        sys.executable,
        "-m",
        "lipschitz_icl",
        "loss",
        "--task",
        "affine",
        "--d",
        "50",
        "--n",
        "1000",
        "--L",
        "1",
        "--sigma",
        "1",
        "--w",
        "3",
        "--method",
        "naive",
        "--contexts",
        "20000",
    ]  # within the command's work budget (about 50 s estimated): it runs until interrupted
    # no preexec_fn here: the test process may hold threads by now (Dask clients, the trainer's draw-ahead
    # thread), and a Python preexec_fn between fork and exec can then deadlock the child before exec
    # (subprocess docs); this command's memory is bounded by the CLI's own budgets.
    # A child inherits an *ignored* SIGINT across exec (a handled one is reset to the default, which Python
    # turns into KeyboardInterrupt).  In the fresh-clone CI order the test process was once found ignoring
    # SIGINT by now (cause under investigation, see the closing note of issue 14); a user's shell never
    # starts a command that way, so the child gets the default disposition, and the leak is reported.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        warnings.warn(
            "SIGINT is ignored in the test process before the Ctrl-C test (leaked by an earlier test)", stacklevel=1
        )
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    # past the imports even on a loaded machine (an earlier Ctrl-C is also one line): the command has used
    # more CPU time than its imports take (about 0.5 s), so it is in its Monte Carlo loop
    child = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60.0
    while sum(child.cpu_times()[:2]) < 2.0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, "the command ended before it was interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "lipschitz-icl: interrupted" and out == ""
