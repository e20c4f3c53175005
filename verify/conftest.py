"""The gates are generated from the claims registry (:mod:`lipschitz_icl.gates.registry`): a gate file names
its ``GROUP`` and holds one test taking ``claim_case``; every case of that group in the chosen
``--profile`` (grid point times replicate seed) becomes one test whose id is the claim id.  The test hands
the case to ``record_claim``, which records ``claim_case.run()`` -- or, under ``--scheduler``, the
result of the case's piece computed on the cluster (:mod:`lipschitz_icl.gates.pytest_plugin`)."""

from lipschitz_icl.gates import registry


def pytest_generate_tests(metafunc):
    if "claim_case" not in metafunc.fixturenames:
        return
    group = metafunc.module.GROUP
    found = registry.cases(metafunc.config.getoption("--profile"), group)
    metafunc.parametrize("claim_case", found, ids=[c.claim_id for c in found])
