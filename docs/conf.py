"""Sphinx configuration of the lipschitz-icl documentation.

Build (warnings are errors) and run every example of the pages and of the documented docstrings::

    sphinx-build -W --keep-going -b html docs docs/_build/html
    sphinx-build -W --keep-going -b doctest docs docs/_build/doctest
"""

import lipschitz_icl

project = "lipschitz-icl"
author = "lipschitz-icl authors"
copyright = "the lipschitz-icl authors"
version = release = lipschitz_icl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
]

exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = []

# API reference (api.rst, api/*.rst): the members of each module's __all__, in source order.
autodoc_member_order = "bysource"
autodoc_typehints = "none"          # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# The functions with examples keep complete numpydoc sections: every parameter documented (PR01, PR02),
# a Returns section (RT01) and an Examples section (EX01); under -W a gap fails the build.  The other
# documented objects keep their prose docstrings and are not validated.
EXAMPLES = ("problem.make_problem", "loss.icl_loss", "optimum.wstar", "train.train", "prover.prove")
numpydoc_validation_checks = {"PR01", "PR02", "RT01", "EX01"}
numpydoc_validation_exclude = {r"^(?!lipschitz_icl\.(" + "|".join(e.replace(".", r"\.") for e in EXAMPLES) + r")$)"}

# Inline ``literal`` text stays code; a single-backtick name is a cross-reference to Python objects.
default_role = "py:obj"

# The doctest builder runs the >>> examples of the guide pages and of every docstring autodoc pulls into
# the API reference; each example imports what it uses (the docstrings' examples run on their own too).
# Exception messages are compared too (Sphinx ignores their detail by default); ``...`` matches anything.
import doctest  # noqa: E402

doctest_default_flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1
