"""The on-disk cache: hits, misses, the code version in the key, corrupt entries, bypass."""

from __future__ import annotations

import json

import pytest

from lipschitz_icl import make_problem, optimum
from lipschitz_icl.runtime import cache, memo


class Counter:
    def __init__(self, value):
        self.calls = 0
        self.value = value

    def __call__(self):
        self.calls += 1
        return self.value


def _entries(root):
    return sorted(p for p in root.rglob("*.json"))


def test_default_dir_and_env_override(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / ".cache" / "lipschitz-icl"
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "elsewhere"))
    assert cache.cache_dir() == tmp_path / "elsewhere"


def test_miss_then_hit_returns_the_stored_value(cache_root):
    compute = Counter({"x": [1.5, float("inf")], "s": "a"})
    before = dict(cache.STATS)
    first = cache.cached({"a": 1, "b": [2, 3]}, compute, namespace="t")
    second = cache.cached({"b": [2, 3], "a": 1}, compute, namespace="t")  # key order does not matter
    assert compute.calls == 1
    assert first == second == {"x": [1.5, float("inf")], "s": "a"}
    assert cache.STATS["misses"] - before["misses"] == 1
    assert cache.STATS["hits"] - before["hits"] == 1
    assert len(_entries(cache_root)) == 1


def test_different_inputs_or_code_version_miss(cache_root, monkeypatch):
    compute = Counter(1)
    cache.cached({"a": 1}, compute, namespace="t")
    cache.cached({"a": 2}, compute, namespace="t")
    cache.cached({"a": 1}, compute, namespace="other")
    assert compute.calls == 3
    monkeypatch.setattr(cache, "code_version", lambda: "0.0.0+edited")
    cache.cached({"a": 1}, compute, namespace="t")
    assert compute.calls == 4


def test_code_version_hashes_the_package_sources():
    from lipschitz_icl import __version__

    version = cache.code_version()
    assert version.startswith(__version__ + "+")
    assert len(version.split("+")[1]) == 16


@pytest.mark.parametrize("damage", ["garbage", "checksum", "ident", "payload-not-json"])
def test_corrupt_entry_is_recomputed_and_repaired(cache_root, damage):
    compute = Counter({"v": 1.0})
    cache.cached({"k": 1}, compute, namespace="t")
    (path,) = _entries(cache_root)
    entry = json.loads(path.read_text())
    if damage == "garbage":
        path.write_text("{not json")
    elif damage == "checksum":
        entry["payload"] = json.dumps({"v": 666.0})  # checksum no longer matches
        path.write_text(json.dumps(entry))
    elif damage == "ident":
        entry["ident"]["key"] = {"k": 2}
        path.write_text(json.dumps(entry))
    else:
        entry["payload"] = "{"
        entry["checksum"] = cache._checksum("{")
        path.write_text(json.dumps(entry))
    before = cache.STATS["corrupt"]
    assert cache.cached({"k": 1}, compute, namespace="t") == {"v": 1.0}
    assert compute.calls == 2
    assert cache.STATS["corrupt"] == before + 1
    assert cache.cached({"k": 1}, compute, namespace="t") == {"v": 1.0}  # repaired: a hit now
    assert compute.calls == 2


def test_bypass_recomputes_and_writes_nothing(cache_root):
    compute = Counter(7)
    with cache.disabled():
        assert cache.cached({"k": 1}, compute) == 7
        assert cache.cached({"k": 1}, compute) == 7
    assert compute.calls == 2
    assert not cache_root.exists()
    cache.set_enabled(False)
    cache.cached({"k": 1}, compute)
    assert compute.calls == 3 and not cache_root.exists()


def test_unserialisable_key_is_refused(cache_root):
    with pytest.raises(TypeError):
        cache.cached({"k": object()}, Counter(1))


def test_cached_wstar_equals_wstar_and_hits_without_computing(cache_root, monkeypatch):
    problem = make_problem("affine", 3, 100, 1.0, 0.5)
    direct = optimum.wstar(problem, "exact")
    first = memo.cached_wstar(problem, "exact")
    assert first.w_star.value == direct.w_star.value
    assert (first.ci_low, first.ci_high) == (direct.ci_low, direct.ci_high)
    assert first.loss == direct.loss

    def boom(*args, **kwargs):
        raise AssertionError("a cache hit must not recompute")

    monkeypatch.setattr(optimum, "wstar", boom)
    second = memo.cached_wstar(problem, "exact")
    assert second.w_star == first.w_star and second.loss == first.loss
    other = make_problem("affine", 3, 100, 1.0, 0.25)
    with pytest.raises(AssertionError, match="must not recompute"):
        memo.cached_wstar(other, "exact")


def test_cached_loss_equals_icl_loss(cache_root):
    from lipschitz_icl.loss.estimators import icl_loss

    problem = make_problem("relu", 3, 1000, 1.0, 0.5)
    direct = icl_loss(problem, 5.0, method="exact")
    for _ in range(2):
        got = memo.cached_loss(problem, 5.0, "exact")
        assert (got.loss, got.bias, got.noise) == (direct.loss, direct.bias, direct.noise)


def test_check_no_cache_flag_leaves_the_cache_empty(cache_root, capsys):
    from pathlib import Path

    from lipschitz_icl.cli import main

    example = Path(__file__).resolve().parents[2] / "variants" / "examples" / "wstar_affine_upper.toml"
    assert main(["check", str(example), "--no-cache", "--json"]) == 0
    assert not cache_root.exists()
    assert cache.enabled()  # restored after the command
    assert main(["check", str(example), "--json"]) == 0
    assert _entries(cache_root)
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["cache"]["misses"] > 0


def test_cached_together_computes_only_the_missing_entries_at_once(cache_root):
    asked = []

    def together(keys):
        def compute(indices):
            asked.append(list(indices))
            return [{"v": 10 * keys[i]["k"]} for i in indices]

        return cache.cached_together(keys, compute, namespace="t")

    first = together([{"k": 0}, {"k": 1}])
    both = together([{"k": 2}, {"k": 1}, {"k": 0}])
    assert first == [{"v": 0}, {"v": 10}] and both == [{"v": 20}, {"v": 10}, {"v": 0}]
    assert asked == [[0, 1], [0]]  # the second call computed only {"k": 2}, at its position 0
    assert not any(p.suffix == ".json" and p.name.startswith(".tmp") for p in cache_root.rglob("*"))


def test_cached_together_validates_each_entry_against_its_key(cache_root):
    cache.cached_together([{"k": 1}], lambda idx: [{"v": -1}], namespace="t")
    calls = []

    def compute(indices):
        calls.append(indices)
        return [{"v": 1}]

    value = cache.cached_together([{"k": 1}], compute, namespace="t", validate=lambda v, key: v["v"] == key["k"])
    assert value == [{"v": 1}] and calls == [[0]]  # the stored -1 does not fit its key: recomputed


def test_cached_together_waits_for_another_process_s_lock_and_reads_its_entry(cache_root):
    """While one caller holds the lock of an entry and computes it, a second caller waits, then reads it."""
    import threading
    import time

    started, calls = threading.Event(), []

    def slow(indices):
        calls.append("slow")
        started.set()
        time.sleep(0.3)
        return [{"v": 1}]

    def fast(indices):
        calls.append("fast")
        return [{"v": 2}]

    first = threading.Thread(target=lambda: cache.cached_together([{"k": 1}], slow, namespace="t"))
    first.start()
    started.wait(5)
    assert cache.cached_together([{"k": 1}], fast, namespace="t") == [{"v": 1}]
    first.join()
    assert calls == ["slow"]


def test_cached_together_computes_when_the_lock_cannot_be_taken(cache_root, monkeypatch):
    """A lock path that is not a regular file, or a lock held past the wait: computed anyway, never an error."""
    path = cache.entry_path({"k": 1}, "t")
    path.parent.mkdir(parents=True)
    (path.parent / (path.name + ".lock")).mkdir()  # a directory where the lock file should be
    assert cache.cached_together([{"k": 1}], lambda idx: [{"v": 3}], namespace="t") == [{"v": 3}]
    path = cache.entry_path({"k": 2}, "t")
    monkeypatch.setattr(cache, "LOCK_WAIT_SECONDS", 0.05)
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / (path.name + ".lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert cache.cached_together([{"k": 2}], lambda idx: [{"v": 4}], namespace="t") == [{"v": 4}]


def test_cached_together_without_the_cache_computes_everything(cache_root):
    with cache.disabled():
        assert cache.cached_together([{"k": 1}, {"k": 2}], lambda idx: [{"i": i} for i in idx]) == [{"i": 0}, {"i": 1}]
    assert not list(cache_root.rglob("*.json"))
