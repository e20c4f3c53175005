"""Command-line interface ``lipschitz-icl`` (also ``python -m lipschitz_icl``).

Each sub-command lives in :mod:`lipschitz_icl.commands` as a module with ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> (payload: dict, exit_code: int)``.  A command module imports
the engine inside ``add_arguments`` and ``run``, never at its top, and only the options of the command
given are built: ``--help`` and a refused argument import NumPy and what that command's options read
(``tests/test_cli_imports.py`` holds the import lists; ``benchmarks/bench_cli.py`` times them).
Exit codes (contract): 0 success, 1 a checked claim or variant fails (or the output could not be written to
stdout), 2 bad input (one line on stderr naming the option and the allowed range, never a traceback; also a
file that cannot be read or written, memory, recursion or encoding exhausted), 3 inconclusive, 130
interrupted (Ctrl-C at any point, the imports and the final print included; one line), 141 stdout closed by
its reader.  With ``--json`` the payload is printed as one JSON object on stdout; without it, as ``key:
value`` lines.

Input rules: options are never abbreviated and never repeated; numbers are ASCII text, integers read
exactly (``--n 9007199254740993`` stays itself; ``1e14`` is accepted as it is integral).

Numbers in the output (one convention, also in the README): finite numbers are JSON numbers; an
infinite end of an interval is the string ``"inf"`` or ``"-inf"`` and appears only with exit code 3
(inconclusive); NaN is never printed: a result holding NaN, or an infinity with exit code 0, is an
error (one line, exit 2: the inputs are outside the range the method computes).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import sys
import time

from lipschitz_icl import progress
from lipschitz_icl.validation import ParameterError, received, shorten

__all__ = ["main", "build_parser", "jsonable", "plain_text", "NonFiniteResult"]

COMMAND_MODULES = (
    "wstar",
    "loss",
    "train",
    "check",
    "prove",
    "report",
    "scaling",
    "claims",
    "figures",
    "lock",
    "derivations",
)

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a pipe closed by its reader
EXIT_IO_FAILURE = 1  # the result could not be written to stdout (a full disk, /dev/full, an I/O error)
ALIASES = {"rng": "seed"}  # library parameter names that a command fills from another option


class _UsageError(Exception):
    pass


class NonFiniteResult(ValueError):
    """A result that would leave as NaN (or as an infinity with exit code 0)."""


class _Parser(argparse.ArgumentParser):
    """argparse without abbreviations, reporting bad arguments as one line and exit code 2."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message):  # argparse hook
        raise _UsageError(message)


def _once(action: argparse.Action) -> None:
    """Make a repeated option an error instead of silently keeping the last value."""
    base = type(action)

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_seen_options", set())
        if self.dest in seen:
            raise _UsageError(f"argument {'/'.join(self.option_strings)}: given more than once")
        seen.add(self.dest)
        base.__call__(self, parser, namespace, values, option_string)

    action.__class__ = type(f"Once{base.__name__}", (base,), {"__call__": __call__})


def build_parser(commands=COMMAND_MODULES) -> argparse.ArgumentParser:
    """The parser of every command; the options of those named in ``commands`` only (the others are listed
    with their help).  :func:`main` builds the options of the command it is given alone: a command module
    imports only the names its help needs, and ``add_arguments`` what its options need, so a refused
    argument or ``--help`` costs little more than importing NumPy (``tests/test_cli_imports.py``)."""
    parser = _Parser(prog="lipschitz-icl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"lipschitz_icl.commands.{name}")
        command = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        if name not in commands:
            continue
        command.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        module.add_arguments(command)
        options = {}
        for action in command._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                _once(action)
                options[action.dest] = action.option_strings[0]
            elif not action.option_strings:  # a positional argument is named as its usage line names it
                options[action.dest] = str(action.metavar or action.dest.upper())
        command.set_defaults(_run=module.run, _options=options, _format=getattr(module, "format_text", None))
    return parser


def jsonable(value, *, allow_infinite: bool = True, where: str = "result"):
    """The output convention: finite numbers unchanged, infinities as ``"inf"``/``"-inf"`` (only when
    ``allow_infinite``), NaN refused (:class:`NonFiniteResult` naming the key ``where``)."""
    if hasattr(value, "item") and not isinstance(value, (dict, list, tuple)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value) or not allow_infinite:
            raise NonFiniteResult(
                f"the result {where!r} is not finite ({value}) for these inputs: "
                "they are outside the range this method computes"
            )
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: jsonable(v, allow_infinite=allow_infinite, where=str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, allow_infinite=allow_infinite, where=where) for v in value]
    return value


def _given(name, args):
    """The option the user gave for the library's parameter ``name``: a problem given by its kernel
    (``--kernel``, ``--kernel-file``) is the library's ``task``, so a refusal of it names the kernel option."""
    if name == "task" and getattr(args, "task", None) is None:
        for dest in ("kernel", "kernel_file"):
            if getattr(args, dest, None) is not None:
                return dest
    return name


def plain_text(payload: dict) -> str:
    """The text output of a command without its own format: a line ``key: value`` per key, the value as in
    ``--json`` (``true``, ``null``, ``[0.001, 100000000.0]``) but a string bare; a list of lists (``pieces``) as
    ``key:`` and one indented line per item."""
    lines = []
    for key, value in payload.items():
        if isinstance(value, list) and value and all(isinstance(item, list) for item in value):
            lines.append(f"{key}:")
            lines.extend(f"  {json.dumps(item, ensure_ascii=False)}" for item in value)
        else:
            lines.append(f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines)


def _option_message(exc: ParameterError, options: dict, args=None) -> str:
    """``--sigma: must be ... (got ...)`` when the parameter is an option of the command (the one the user
    gave: :func:`_given`), else the library's own message."""
    name = _given(ALIASES.get(exc.name, exc.name), args)
    option = options.get(name) or options.get(str(name).replace("-", "_").lower())
    if option is None:
        return str(exc)
    return f"{option}: must be {exc.requirement} ({received(exc.value)})"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _say(text: str) -> None:
    """One line on stderr; a failure to write it (stderr closed or full, Ctrl-C) is not reported."""
    try:
        print(f"lipschitz-icl: {_one_line(text)}", file=sys.stderr, flush=True)
    except (OSError, ValueError, KeyboardInterrupt):
        pass


def _describe_os_error(exc: OSError) -> str:
    where = f": {shorten(exc.filename)}" if getattr(exc, "filename", None) else ""
    return f"{exc.strerror or type(exc).__name__}{where}"


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of what could not be written
    cannot fail again (and print its own 'Exception ignored' lines)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _write_output(text: str) -> int:
    """Print ``text`` on stdout; the reader gone is exit 141, any other failure to write (a full disk,
    /dev/full, an I/O error) is exit 1 -- one line each, never a traceback."""
    try:
        try:
            print(text, flush=True)
        except UnicodeEncodeError:  # a terminal that cannot show a character of a user's path
            sys.stdout.buffer.write(text.encode(sys.stdout.encoding or "ascii", "backslashreplace") + b"\n")
            sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (e.g. `| head`): one line, no traceback, not exit 0
        _silence_stdout()
        _say("error: stdout closed before the output was written")
        return EXIT_BROKEN_PIPE
    except (OSError, ValueError) as exc:
        _silence_stdout()
        reason = _describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
        _say(f"error: the output could not be written to stdout ({reason})")
        return EXIT_IO_FAILURE
    return EXIT_OK


def main(argv=None) -> int:
    """Run the CLI; returns the exit code.  Ctrl-C at any point (the final print included) is one line and
    130; ``OSError``, ``MemoryError``, ``RecursionError`` and ``UnicodeError`` are one line and exit 2
    (writing the output: exit 1, or 141 when the reader went away)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED


_ARGPARSE_NEGATIVE = re.compile(r"-\d+|-\d*\.\d+")  # the negative numbers argparse itself reads as values


def _unread_negative(text: str) -> bool:
    """A negative number argparse would take for an option (``-inf``, ``-nan``, ``-1e5``)."""
    if not text.startswith("-") or _ARGPARSE_NEGATIVE.fullmatch(text):
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def _value_options(parser: argparse.ArgumentParser) -> set:
    """The option strings of the parser's commands that take a value (not flags such as ``--json``)."""
    out: set = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                out |= {o for a in command._actions if a.option_strings and a.nargs != 0 for o in a.option_strings}
    return out


def _joined_negatives(argv: list, value_options: set) -> list:
    """``argv`` with a negative number that argparse would read as an option (``-inf``, ``-nan``, ``-1e5``: its
    own pattern knows only ``-1`` and ``-1.5``) joined to the option before it when that option takes a value
    (``--w -inf`` -> ``--w=-inf``), so the option's own check refuses or reads it; nothing after ``--``."""
    out: list = []
    for k, arg in enumerate(argv):
        if arg == "--":
            return out + argv[k:]
        previous = out[-1] if out else ""
        if _unread_negative(arg) and previous in value_options:
            out[-1] = f"{previous}={arg}"
        else:
            out.append(arg)
    return out


def _command_in(argv) -> tuple:
    """The command named in ``argv`` (the first argument that names one), as a tuple of at most one."""
    return tuple(arg for arg in argv if arg in COMMAND_MODULES)[:1]


class _NeverRaised(Exception):
    pass


def _registry_error() -> type[Exception]:
    """:class:`lipschitz_icl.gates.registry.RegistryError` once the registry is imported (the parser's choices
    of figures and claims read it), else an exception nothing raises: the registry is not imported for the
    commands that do not read it."""
    registry = sys.modules.get("lipschitz_icl.gates.registry")
    return _NeverRaised if registry is None else registry.RegistryError


def _main(argv) -> int:
    started = time.perf_counter()  # a command's wall-clock budget (prove --seconds) counts from here
    argv = sys.argv[1:] if argv is None else list(argv)
    args = None
    try:
        parser = build_parser(_command_in(argv))
        args = parser.parse_args(_joined_negatives(argv, _value_options(parser)))
        args._started = started
        if getattr(args, "_run", None) is None:
            _say("error: a COMMAND is required (one of " + ", ".join(COMMAND_MODULES) + "; see --help)")
            return EXIT_BAD_INPUT
        with progress.silenced(args.json):
            payload, code = args._run(args)
        payload = jsonable(payload, allow_infinite=code != EXIT_OK)
        if args.json:
            text = json.dumps(payload, allow_nan=False)
        elif args._format is not None:
            text = args._format(payload)
        else:
            text = plain_text(payload)
    except (_UsageError, NonFiniteResult) as exc:
        _say(f"error: {exc}")
        return EXIT_BAD_INPUT
    except _registry_error() as exc:  # evaluated when an exception reaches it
        _say(f"error: the claims registry: {exc}")
        return EXIT_BAD_INPUT
    except ParameterError as exc:
        _say(f"error: {_option_message(exc, args._options, args) if args is not None else exc}")
        return EXIT_BAD_INPUT
    except MemoryError:
        _say("error: out of memory: these inputs need more memory than this machine has (use smaller inputs)")
        return EXIT_BAD_INPUT
    except RecursionError:
        _say("error: an input nested too deeply to be read")
        return EXIT_BAD_INPUT
    except UnicodeError as exc:
        _say(
            f"error: text that is not valid UTF-8 or cannot be encoded ({type(exc).__name__}: "
            f"{shorten(getattr(exc, 'reason', exc))})"
        )
        return EXIT_BAD_INPUT
    except OSError as exc:
        _say(f"error: {_describe_os_error(exc)}")
        return EXIT_BAD_INPUT
    written = _write_output(text)
    return code if written == EXIT_OK else written


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
