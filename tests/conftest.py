"""Shared test settings: Hypothesis profile with bounded example counts, no deadline (the
estimators are vectorised Monte Carlo, their run time is not what these tests measure) and
derandomised example generation, so that CI runs the same examples every time."""

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    """An enabled on-disk cache in the test's temporary directory (restored afterwards)."""
    from lipschitz_icl import cache

    root = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(root))
    previous = cache.enabled()
    cache.set_enabled(True)
    yield root
    cache.set_enabled(previous)
