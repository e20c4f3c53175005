"""Shared test settings: Hypothesis profile with bounded example counts, no deadline (the
estimators are vectorised Monte Carlo, their run time is not what these tests measure) and
derandomised example generation, so that CI runs the same examples every time."""

import atexit
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
settings.load_profile("default")

# The tests never write outside their own temporary directories: the on-disk cache of every test (and
# of the subprocesses they start, which inherit the environment) lives in one temporary directory per
# test process, removed at the end; the examples are derandomised, so no Hypothesis database is kept.
_CACHE_DIR = tempfile.mkdtemp(prefix="lipschitz-icl-test-cache-")
os.environ["LIPSCHITZ_ICL_CACHE"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, True)


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    """An enabled on-disk cache in the test's temporary directory (restored afterwards)."""
    from lipschitz_icl.runtime import cache

    root = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(root))
    previous = cache.enabled()
    cache.set_enabled(True)
    yield root
    cache.set_enabled(previous)


@pytest.fixture
def group_registry(tmp_path_factory, monkeypatch):
    """``use(group)`` puts a registry holding only the package's ``<group>.toml`` (and the sections) in use
    for the test -- a group is tested whatever state the other groups' files are in -- and returns its
    specs ``{claim name: ClaimSpec}``."""
    from lipschitz_icl.gates import registry

    def use(group: str) -> dict:
        directory = tmp_path_factory.mktemp(f"registry-{group}")
        for name in (f"{group}.toml", "_sections.toml"):
            shutil.copy(registry.REGISTRY_DIR / name, directory / name)
        monkeypatch.setenv(registry.REGISTRY_ENV, str(directory))
        return {spec.name: spec for spec in registry.specs(group)}

    return use


@pytest.fixture
def check_registry_entry():
    """``check(module, spec, **overrides)``: the registry entry ``spec`` run through its measure function in
    ``module`` on its design with ``overrides`` (smaller samples): the decide function takes every resolution's
    and alternative's keywords and decides by the registry's rule (the signatures themselves are checked for
    the whole registry by tests/gates/test_registry.py)."""
    import numpy as np

    def check(module, spec, **overrides):
        seed = {"seed": np.random.SeedSequence(7)} if spec.stochastic else {}
        outcome = getattr(module, spec.measure)(**{**spec.design, **spec.grids["default"][0], **overrides, **seed})
        decisions = [outcome.decide()] + [outcome.decide(**{r.arg: r.start}) for r in spec.resolutions]
        decisions += [outcome.decide(**a.args) for a in spec.alternatives]
        assert {d.rule for d in decisions} == {spec.rule}
        assert spec.resolutions and spec.alternatives

    return check


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="also run the tests marked 'slow' (deselected by default; CI runs them in their own "
        "step: pytest tests/ -n auto --slow -m slow)",
    )


def pytest_collection_modifyitems(config, items):
    """Without ``--slow``, the tests marked ``slow`` are deselected (counted as deselected in the summary,
    never skipped silently); with it they run like any other (select only them with ``-m slow``, which alone
    also enables them)."""
    if config.getoption("--slow") or "slow" in (config.getoption("markexpr") or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def pytest_terminal_summary(terminalreporter, config):
    """Say that the slow tests were left out (under pytest-xdist the controller reports no deselected count)."""
    if not (config.getoption("--slow") or "slow" in (config.getoption("markexpr") or "")):
        terminalreporter.write_line(
            "tests marked 'slow' were deselected; run them with --slow (CI: pytest tests/ -n auto --slow -m slow)"
        )


@pytest.fixture(scope="session")
def not_dask_servers():
    """The class ``NotDaskServers`` of ``tests/_servers.py`` (TCP servers that are no Dask scheduler: silent,
    HTTP, garbage), loaded from its file: tests/ is not on the import path."""
    spec = importlib.util.spec_from_file_location("lipschitz_icl_test_servers", Path(__file__).with_name("_servers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.NotDaskServers
