"""Command-line interface ``lipschitz-icl`` (also ``python -m lipschitz_icl``).

Each sub-command lives in :mod:`lipschitz_icl.commands` as a module with ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> (payload: dict, exit_code: int)``.  Exit codes (contract):
0 success, 1 a checked claim or variant fails, 2 bad input (one line on stderr naming the parameter and
the allowed range, never a traceback), 3 inconclusive.  With ``--json`` the payload is printed as one
JSON object on stdout; without it, as ``key: value`` lines.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys

from .validation import ParameterError

__all__ = ["main", "build_parser"]

COMMAND_MODULES = ("wstar", "loss", "train", "check", "report", "scaling", "claims", "figures")

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad arguments as one line and exit code 2 (no usage dump)."""

    def error(self, message):  # noqa: D401 - argparse hook
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lipschitz-icl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f".commands.{name}", __package__)
        command = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        command.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        module.add_arguments(command)
        command.set_defaults(_run=module.run, _format=getattr(module, "format_text", None))
    return parser


def _jsonable(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return value


def main(argv=None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if getattr(args, "_run", None) is None:
            parser.print_help(sys.stderr)
            return EXIT_BAD_INPUT
        payload, code = args._run(args)
    except _UsageError as exc:
        print(f"lipschitz-icl: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ParameterError as exc:
        print(f"lipschitz-icl: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    payload = _jsonable(payload)
    if args.json:
        print(json.dumps(payload))
    elif args._format is not None:
        print(args._format(payload))
    else:
        for key, value in payload.items():
            print(f"{key}: {value}")
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
