"""The gates are generated from the claims registry (:mod:`lipschitz_icl.gates.registry`): a gate file names
its ``GROUP`` and holds one test taking ``claim_case``; every case of that group in the chosen
``--profile`` (grid point times replicate seed) becomes one test whose id is the claim id.  The test hands
the case to ``record_claim``, which records ``claim_case.run()`` -- or, under ``--scheduler``, the
result of the case's piece computed on the cluster (:mod:`lipschitz_icl.gates.pytest_plugin`).

Under pytest-xdist (``-n``) the gates are spread one by one, longest first (the plugin sorts them by their
last CPU time), not file by file as ``--dist loadfile`` in pyproject.toml spreads tests/: one file of gates
holds most of the run's proofs, and a file on one worker would be the whole run's critical path."""

import pytest

from lipschitz_icl.gates import registry


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Spread the gates one by one over the workers (pytest-xdist's ``load`` scheduling; module docstring)."""
    from xdist.scheduler import LoadScheduling

    return LoadScheduling(config, log)


def pytest_generate_tests(metafunc):
    if "claim_case" not in metafunc.fixturenames:
        return
    group = metafunc.module.GROUP
    found = registry.cases(metafunc.config.getoption("--profile"), group)
    metafunc.parametrize("claim_case", found, ids=[c.claim_id for c in found])
