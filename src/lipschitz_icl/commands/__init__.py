"""Sub-commands of the ``lipschitz-icl`` CLI, one module each (see :mod:`lipschitz_icl.cli`)."""
