"""Hostile and corrupt cache entries (issue #11): never a traceback, never trusted.

Two kinds: entries forged by someone who can write the (shared) cache directory but cannot read this
user's key -- they fail the HMAC; and entries signed with the right key but holding impossible values
(as a bug or an older layout could) -- they fail validation.  Either way the value is recomputed."""

from __future__ import annotations

import json
import os

import pytest

from lipschitz_icl import make_problem
from lipschitz_icl.runtime import cache, memo

PROBLEM = make_problem("affine", 3, 200, 1.0, 0.5)


@pytest.fixture
def root(cache_root):
    return cache_root


def _entry(root, namespace="wstar"):
    paths = list((root / namespace).rglob("*.json"))
    assert len(paths) == 1
    return paths[0]


def _truth(root):
    """The true asymptotic w* (fresh), and its stored entry."""
    with cache.disabled():
        true = memo.cached_wstar(PROBLEM, "asymptotic")
    first = memo.cached_wstar(PROBLEM, "asymptotic")
    assert first.w_star.value == true.w_star.value
    return true, _entry(root)


def _sign(root, entry: dict) -> dict:
    """Re-sign an entry with this user's key (the attacker cannot; a bug could write such values)."""
    key = (root / cache.KEY_FILE).read_bytes()
    entry["checksum"] = cache._checksum(entry["payload"])
    entry["mac"] = cache._mac(key, entry["ident"], entry["payload"])
    return entry


def _forge(root, path, change, *, signed: bool):
    entry = json.loads(path.read_text())
    payload = json.loads(entry["payload"])
    change(payload)
    entry["payload"] = json.dumps(payload)
    if signed:
        _sign(root, entry)
    else:  # the attacker recomputes the public checksum but has no key
        entry["checksum"] = cache._checksum(entry["payload"])
    path.write_text(json.dumps(entry))


def _set(path_keys, value):
    def change(payload):
        target = payload
        for k in path_keys[:-1]:
            target = target[k]
        target[path_keys[-1]] = value

    return change


def _delete(key):
    return lambda payload: payload.pop(key)


CHANGES = [
    ("w-999", _set(["w_star", "value"], 999.0)),
    (
        "w-negative-interval-reversed",
        lambda p: (_set(["w_star", "value"], -5.0)(p), p.update(ci_low=10.0, ci_high=1.0)),
    ),
    ("value-text", _set(["w_star", "value"], "abc")),
    ("missing-key", _delete("ci_low")),
    ("w-null", _set(["w_star"], None)),
    ("w-nan", _set(["w_star", "value"], float("nan"))),
    ("w-inf", _set(["w_star", "value"], float("inf"))),
    ("ci-high-inf-not-at-bound", _set(["ci_high"], float("inf"))),
    ("loss-negative", _set(["loss", "value"], -1.0)),
    ("samples-float", _set(["w_star", "samples"], 1.5)),
    ("method-other", _set(["method"], "exact")),
    ("info-list", _set(["info"], [1, 2])),
]


@pytest.mark.parametrize("signed", [False, True], ids=["forged", "signed"])
@pytest.mark.parametrize("cid, change", CHANGES, ids=[c[0] for c in CHANGES])
def test_bad_wstar_entries_are_recomputed(root, cid, change, signed):
    true, path = _truth(root)
    _forge(root, path, change, signed=signed)
    before = cache.STATS["corrupt"]
    again = memo.cached_wstar(PROBLEM, "asymptotic")
    assert again.w_star.value == true.w_star.value and again.ci_low <= again.w_star.value <= again.ci_high
    assert cache.STATS["corrupt"] == before + 1


@pytest.mark.parametrize(
    "cid, damage",
    [
        ("flipped-byte", lambda raw: raw[:10] + bytes([raw[10] ^ 0x80]) + raw[11:]),
        ("invalid-utf8", lambda raw: b"\xff\xfe" + raw),
        ("truncated", lambda raw: raw[: len(raw) // 2]),
        ("empty", lambda raw: b""),
        ("not-an-object", lambda raw: b"[1, 2, 3]"),
        ("huge", lambda raw: b" " * (cache.MAX_ENTRY_BYTES + 10) + raw),
        ("deep", lambda raw: b"[" * 100000 + b"]" * 100000),
    ],
)
def test_damaged_entries_are_recomputed_without_traceback(root, cid, damage):
    true, path = _truth(root)
    path.write_bytes(damage(path.read_bytes()))
    again = memo.cached_wstar(PROBLEM, "asymptotic")
    assert again.w_star.value == true.w_star.value
    assert json.loads(path.read_text())["mac"]  # rewritten with a fresh, signed entry


def test_a_key_readable_by_others_disables_reading(root):
    true, _path = _truth(root)
    os.chmod(root / cache.KEY_FILE, 0o644)
    before = cache.STATS["hits"]
    again = memo.cached_wstar(PROBLEM, "asymptotic")
    assert again.w_star.value == true.w_star.value and cache.STATS["hits"] == before


def test_a_replaced_key_does_not_validate_old_entries(root):
    true, path = _truth(root)
    _forge(root, path, _set(["w_star", "value"], 999.0), signed=True)
    (root / cache.KEY_FILE).unlink()  # an attacker deletes the key so that a new one is made ...
    again = memo.cached_wstar(PROBLEM, "asymptotic")  # ... the forged entry, signed by the old key, fails
    assert again.w_star.value == true.w_star.value


def test_a_symlinked_key_is_not_trusted(root, tmp_path):
    true, _path = _truth(root)
    (root / cache.KEY_FILE).unlink()
    (tmp_path / "other-key").write_bytes(b"k" * 32)
    os.symlink(tmp_path / "other-key", root / cache.KEY_FILE)
    assert cache._key() is None
    assert memo.cached_wstar(PROBLEM, "asymptotic").w_star.value == true.w_star.value


def test_bad_loss_entry_is_recomputed(root):
    with cache.disabled():
        true = memo.cached_loss(PROBLEM, 3.0, "asymptotic")
    memo.cached_loss(PROBLEM, 3.0, "asymptotic")
    path = _entry(root, "loss")
    _forge(root, path, _set(["bias", "value"], "abc"), signed=True)
    assert memo.cached_loss(PROBLEM, 3.0, "asymptotic").loss.value == true.loss.value


def test_ctrl_c_while_writing_leaves_the_cache_intact(root, monkeypatch):
    true, path = _truth(root)
    old = path.read_bytes()
    import lipschitz_icl.runtime.cache as module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(module.json, "dump", interrupted)
    with pytest.raises(KeyboardInterrupt):
        module._write(path, json.loads(old)["ident"], {"anything": 1})
    monkeypatch.undo()
    assert path.read_bytes() == old and not list(root.rglob(".tmp-*"))
    assert memo.cached_wstar(PROBLEM, "asymptotic").w_star.value == true.w_star.value


@pytest.mark.parametrize("cid", ["fifo", "symlink", "directory"])
def test_special_files_at_an_entry_path_do_not_block_or_crash(root, tmp_path, cid):
    true, path = _truth(root)
    path.unlink()
    if cid == "fifo":
        os.mkfifo(path)
    elif cid == "symlink":
        (tmp_path / "elsewhere.json").write_text(json.dumps({"payload": "{}"}))
        os.symlink(tmp_path / "elsewhere.json", path)
    else:
        path.mkdir()
    assert memo.cached_wstar(PROBLEM, "asymptotic").w_star.value == true.w_star.value


def _tree(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.mark.parametrize("level", ["namespace", "prefix"])
@pytest.mark.parametrize("kind", ["symlink", "dangling"])
def test_a_symlinked_cache_directory_is_never_followed(root, tmp_path, level, kind):
    """A namespace (or prefix) directory replaced by a link to a directory outside the cache -- holding a
    forged entry signed with the right key -- or by a dangling link: the entry is a miss, the value is
    recomputed, and nothing is read or written through the link (issue 22)."""
    import shutil

    true, path = _truth(root)
    link = path.parent if level == "prefix" else path.parent.parent
    outside = tmp_path / "outside"
    decoy = outside / path.relative_to(link)
    decoy.parent.mkdir(parents=True)
    forged = json.loads(path.read_text())
    assert repr(true.w_star.value) in forged["payload"]
    forged["payload"] = forged["payload"].replace(repr(true.w_star.value), "123.0")
    decoy.write_text(json.dumps(_sign(root, forged)))
    before = (_tree(outside), decoy.read_text())
    shutil.rmtree(link)
    os.symlink(outside / "missing" if kind == "dangling" else outside, link)
    assert memo.cached_wstar(PROBLEM, "asymptotic").w_star.value == true.w_star.value
    assert memo.cached_wstar(PROBLEM, "asymptotic").w_star.value == true.w_star.value  # and again
    assert (_tree(outside), decoy.read_text()) == before
    assert os.path.islink(link) and not (outside / "missing").exists()
