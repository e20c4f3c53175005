"""Time of ``lipschitz-icl report --no-pdf`` on a hostile claims.json: the given file plus ``--keys``
made-up claim keys (three quantities, a 200-character statement and a ten-point figure each; issue 22:
a 270 KB file with 400 keys ran past 120 s, the target is well under that), and the same with the PDF
when latexmk is on PATH.  Each time is one run in a fresh output directory.

    PYTHONPATH=src python3 benchmarks/bench_report.py [--claims reports/claims.json] [--keys 400]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from lipschitz_icl.cli import main as cli

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "claims_example.json"


def hostile(base: Path, keys: int) -> dict:
    data = json.loads(base.read_text())
    for i in range(keys):
        data["claims"].append(
            {
                "claim_id": f"hostile/key{i}/d3",
                "key": f"hostile.key{i}",
                "group": "hostile",
                "verdict": ("holds", "fails", "inconclusive")[i % 3],
                "statement": "w* = C (n L^2/sigma^2)^alpha " * 7,
                "quantities": [
                    {
                        "name": f"q{j} $\\foo$",
                        "theory": 1.0,
                        "measured": 1.0 + j * 1e-3,
                        "ci_low": 0.99,
                        "ci_high": 1.01,
                        "verdict": "holds",
                        "note": "x" * 40,
                    }
                    for j in range(3)
                ],
                "figure": {
                    "kind": "loglog",
                    "x": list(range(1, 11)),
                    "y": [1.0 / k for k in range(1, 11)],
                    "xlabel": "$\\foo$",
                    "ylabel": "y",
                },
            }
        )
    return data


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    code = cli(argv)
    if code != 0:
        raise SystemExit(f"report exited {code}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, default=FIXTURE)
    parser.add_argument("--keys", type=int, default=400)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, cpus {os.cpu_count()}, latexmk {shutil.which('latexmk') is not None}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "claims.json"
        path.write_text(json.dumps(hostile(args.claims, args.keys)))
        size = path.stat().st_size
        no_pdf = timed(["report", "--json", "--no-pdf", "--claims", str(path), "--out", str(Path(tmp) / "a")])
        print(f"{args.keys} keys, {size / 1024:.0f} KB: report --no-pdf {no_pdf:.1f} s")
        if shutil.which("latexmk"):
            with_pdf = timed(["report", "--json", "--claims", str(path), "--out", str(Path(tmp) / "b")])
            print(f"{args.keys} keys, {size / 1024:.0f} KB: report with the PDF {with_pdf:.1f} s")


if __name__ == "__main__":
    main()
