"""``python -m lipschitz_icl``: the same as the ``lipschitz-icl`` console script (Ctrl-C while the
package is still importing also ends with one line and exit code 130: :mod:`lipschitz_icl._entry`)."""

import sys

from lipschitz_icl._entry import main

sys.exit(main())
