"""A broken claims registry (``LIPSCHITZ_ICL_REGISTRY``) is one line and exit 2 from the CLI, never a
traceback or an empty listing with exit 0."""

import shutil
from pathlib import Path

import pytest

from lipschitz_icl import cli
from lipschitz_icl.gates import registry


@pytest.fixture
def copy_of_registry(tmp_path, monkeypatch):
    target = tmp_path / "claims"
    shutil.copytree(Path(registry.REGISTRY_DIR), target)
    monkeypatch.setenv(registry.REGISTRY_ENV, str(target))
    registry._load.cache_clear()
    yield target
    registry._load.cache_clear()


def _run(capsys, *argv) -> tuple[int, str]:
    code = cli.main(list(argv))
    err = capsys.readouterr().err
    return code, err


def test_invalid_toml_is_one_line_naming_the_file(copy_of_registry, capsys):
    with (copy_of_registry / "thm34.toml").open("a") as handle:
        handle.write("garbage = [\n")
    code, err = _run(capsys, "claims")
    assert code == 2 and "thm34.toml: not valid TOML" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_registry_that_is_not_a_directory_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(registry.REGISTRY_ENV, str(tmp_path / "nowhere"))
    registry._load.cache_clear()
    try:
        code, err = _run(capsys, "claims")
    finally:
        registry._load.cache_clear()
    assert code == 2 and "is not a directory" in err and registry.REGISTRY_ENV in err
