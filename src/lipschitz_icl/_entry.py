"""The console script ``lipschitz-icl`` and ``python -m lipschitz_icl``: imports the CLI inside the
function, so that Ctrl-C while NumPy, SciPy and SymPy are still importing is one line and exit code 130
(never a traceback, never death by signal), and ignores Ctrl-C once the exit code is decided (the
interpreter's shutdown cannot turn it into a traceback either).  This module and the package's
``__init__`` import nothing heavy."""

import signal
import sys


def main() -> int:
    """Run :func:`lipschitz_icl.cli.main` and return its exit code (130 on Ctrl-C at any point)."""
    try:
        from lipschitz_icl.cli import main as run

        code = run()
    except KeyboardInterrupt:
        try:
            print("lipschitz-icl: interrupted", file=sys.stderr, flush=True)
        except (OSError, ValueError, KeyboardInterrupt):
            pass
        code = 130
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # not the main thread: nothing to guard
        pass
    return code
