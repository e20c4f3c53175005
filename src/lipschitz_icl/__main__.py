"""``python -m lipschitz_icl``: the same as the ``lipschitz-icl`` console script."""

import sys

from .cli import main

sys.exit(main())
