"""``python -m lipschitz_icl``: the same as the ``lipschitz-icl`` console script (Ctrl-C while the
package is still importing also ends with one line and exit code 130)."""

import sys

try:
    from .cli import main
except KeyboardInterrupt:  # pragma: no cover - timing dependent
    print("lipschitz-icl: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
