"""The design lock: a changed confirmatory design is named and can only be re-locked with a new seed salt,
so it draws fresh data; the lock's history records every change with its reason."""

import json
import os
import shutil
import stat

import numpy as np
import pytest

from lipschitz_icl.cli import main
from lipschitz_icl.gates import lock, registry


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A copy of the package's thm34 registry file, used instead of the package registry."""
    shutil.copy(registry.REGISTRY_DIR / "thm34.toml", tmp_path)
    shutil.copy(registry.REGISTRY_DIR / "_sections.toml", tmp_path)
    monkeypatch.setenv(registry.REGISTRY_ENV, str(tmp_path))
    return tmp_path


def _spec(key):
    return next(s for s in registry.load() if s.key == key)


def _lock_all(directory):
    """Lock every confirmatory claim of the copy (the starting point of a registry under its lock)."""
    specs = [s for s in registry.load() if s.status == "confirmatory"]
    lock.relock(specs, "first lock", directory=directory, today="2026-11-24", commit="a")


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    registry._load.cache_clear()


def test_an_unlocked_claim_is_named_and_a_lock_fixes_it(copy):
    spec = _spec("thm34.trained-isotropy")
    assert lock.changes(spec) == [
        "not locked yet: run lipschitz-icl lock thm34.trained-isotropy --reason TEXT (the design is fixed before its "
        "data)"
    ]
    (entry,) = lock.relock([spec], "first lock", directory=copy, today="2026-11-24", commit="abc")
    assert entry.salt == 1 and lock.changes(spec) == [] and lock.salt_of(spec) == 1
    assert lock.entry_of(spec).fixed == "2026-11-24"


def test_a_changed_design_is_named_and_relocking_takes_a_new_salt(copy):
    spec = _spec("thm34.trained-isotropy")
    lock.relock([spec], "first lock", directory=copy, keep_data=True, today="2026-11-24", commit="abc")
    case = spec.cases("default")[0]
    before = case.seed_sequence().generate_state(4)
    assert lock.salt_of(spec) == 0
    _edit(copy / "thm34.toml", "runs = 8", "runs = 5")
    changed = _spec("thm34.trained-isotropy")
    assert lock.changes(changed) == ["design.runs: 8 -> 5"]
    (entry,) = lock.relock([changed], "fewer runs", directory=copy, today="2026-11-25", commit="def")
    assert entry.salt == 1 and lock.changes(changed) == []
    after = changed.cases("default")[0].seed_sequence().generate_state(4)
    assert not np.array_equal(before, after)  # fresh data
    history = lock.history(copy)
    assert [(h["salt"], h["reason"]) for h in history] == [(0, "first lock"), (1, "fewer runs")]
    # a second change cannot go back to an old salt
    _edit(copy / "thm34.toml", "runs = 5", "runs = 8")
    (again,) = lock.relock([_spec("thm34.trained-isotropy")], "back", directory=copy, today="2026-11-26", commit="")
    assert again.salt == 2


def test_the_alternatives_draw_their_own_stream(copy):
    case = _spec("thm34.isotropy").cases("default")[0]
    own, alt = case.seed_sequence(), case.seed_sequence("alternatives")
    assert own.spawn_key == alt.spawn_key == (0,) and own.entropy != alt.entropy


def test_a_changed_margin_decides_the_run(copy):
    """The registry's number reaches the measure function: a margin of 1e-6 on the bias and noise powers
    puts the derived next-order term above the margin (not yet in range), so the same data are
    inconclusive; the registry's 0.01 holds."""
    case = next(c for c in _spec("thm34.bias-noise").cases("default") if dict(c.params) == {"task": "affine", "d": 2})
    assert case.run().verdict == "holds"
    _edit(
        copy / "thm34.toml",
        'margin = 0.01\n[[claim.resolution]]\nparameter = "shift of the bias power"',
        'margin = 1e-6\n[[claim.resolution]]\nparameter = "shift of the bias power"',
    )
    changed = next(c for c in _spec("thm34.bias-noise").cases("default") if c.params == case.params)
    evidence = changed.run()
    assert evidence.verdict == "inconclusive" and "not yet in range" in evidence.decision


def test_lock_command_checks_and_relocks(copy, capsys):
    assert main(["lock", "--check", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert set(out["changed"]) == {s.key for s in registry.load() if s.status == "confirmatory"}
    keys = sorted(out["changed"])
    assert main(["lock", *keys, "--reason", "test lock", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)["locked"]
    assert {m["salt"] for m in made} == {1}
    assert main(["lock", "--check"]) == 0
    assert "every locked design matches" in capsys.readouterr().out
    assert main(["lock", "thm34.window-law"]) == 2  # no reason
    assert "--reason" in capsys.readouterr().err
    assert main(["lock", "no.such-claim", "--reason", "x"]) == 2
    assert "KEY: must be registry keys (unknown: no.such-claim)" in capsys.readouterr().err
    # an unknown key is named before a missing reason (fixing the reason first would only meet the key next)
    assert main(["lock", "no.such-claim"]) == 2
    assert "unknown: no.such-claim" in capsys.readouterr().err
    # --reason or --keep-data without a key names the missing keys, not --check (which was not given)
    for argv in (["lock", "--keep-data"], ["lock", "--reason", "x"]):
        assert main(argv) == 2
        assert "must be given with --" in capsys.readouterr().err
    assert main(["lock", "--check", "--keep-data"]) == 2
    assert "--check: must be given alone" in capsys.readouterr().err


def test_a_malformed_lock_is_refused(copy):
    (copy / lock.LOCK_NAME).write_text('{"format": 99}')
    with pytest.raises(lock.LockFileError, match="format"):
        lock.read(copy)


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b'{"format": 2}', "format '2'"),
        (b"[1, 2]", "a JSON list, not an object"),
        (b"not json", "not a design lock"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"format": 1, "claims": [], "history": []}', "'claims' must be an object"),
        (b'{"format": 1, "claims": {"k": {"salt": 1}}, "history": []}', "missing fields"),
        (
            b'{"format": 1, "claims": {}, "history": [{"key": "k", "design_hash": "h", "salt": -1, "fixed": "",'
            b' "commit": "", "reason": ""}]}',
            "salt = '-1'",
        ),
        (
            b'{"format": 1, "claims": {}, "history": [{"key": "k", "design_hash": "h", "salt": "1", "fixed": "",'
            b' "commit": "", "reason": "", "extra": 1}]}',
            "unknown fields",
        ),
        (b"[" * 100000 + b"]" * 100000, "not a design lock"),
    ],
)
def test_every_malformed_lock_is_one_line_and_exit_2(copy, capsys, content, fragment):
    (copy / lock.LOCK_NAME).write_bytes(content)
    for argv in (["lock", "--check"], ["lock", "thm34.window-law", "--reason", "x"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and fragment in err, err
    assert (copy / lock.LOCK_NAME).read_bytes() == content  # nothing rewritten


@pytest.mark.parametrize("dangling", [False, True])
def test_a_lock_that_is_a_symbolic_link_is_neither_read_nor_written_through(copy, tmp_path_factory, dangling):
    """`lock` wrote through a symlinked design.lock.json, and a dangling one made a fresh lock (history lost,
    salt reused): a link at the lock's name is refused, and neither it nor what it points to changes."""
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "other.lock.json"
    if not dangling:
        lock.relock([_spec("thm34.isotropy")], "first", directory=copy, today="2026-11-24", commit="a")
        (copy / lock.LOCK_NAME).rename(elsewhere)
    (copy / lock.LOCK_NAME).symlink_to(elsewhere)
    before = elsewhere.read_bytes() if not dangling else None
    for argv in (["lock", "--check"], ["lock", "thm34.isotropy", "--reason", "x"]):
        assert main(argv) == 2
    with pytest.raises(lock.LockFileError, match="symbolic link"):
        lock.relock([_spec("thm34.isotropy")], "again", directory=copy)
    assert (copy / lock.LOCK_NAME).is_symlink()
    assert (elsewhere.read_bytes() if not dangling else elsewhere.exists()) == (before if not dangling else False)


def test_keep_data_never_moves_a_locked_stochastic_claim(copy, capsys):
    """`lock KEY --keep-data` after changing a stochastic claim's contexts kept the salt (the data that prompted
    the change) and the history did not say so: refused; the first lock may keep the salt, recorded."""
    spec = _spec("thm34.isotropy")
    assert spec.stochastic
    (first,) = lock.relock([spec], "first lock", directory=copy, keep_data=True, today="2026-11-24", commit="a")
    assert first.salt == 0 and first.kept_data and lock.history(copy)[-1]["kept_data"] is True
    _edit(copy / "thm34.toml", "contexts = 20000", "contexts = 30000")
    changed = _spec("thm34.isotropy")
    with pytest.raises(lock.KeepDataError, match="stochastic"):
        lock.relock([changed], "more contexts", directory=copy, keep_data=True)
    assert main(["lock", "thm34.isotropy", "--reason", "more contexts", "--keep-data"]) == 2
    assert "--keep-data: must be left out" in capsys.readouterr().err
    assert lock.changes(changed) == ["design.contexts: 20000 -> 30000"]  # the lock did not move
    (again,) = lock.relock([changed], "more contexts", directory=copy, today="2026-11-25", commit="b")
    assert again.salt == 1 and not again.kept_data
    assert [(h["salt"], h["kept_data"]) for h in lock.history(copy)] == [(0, True), (1, False)]


def test_keep_data_of_a_deterministic_claim_is_recorded(copy):
    spec = _spec("thm34.window-law")
    assert not spec.stochastic
    lock.relock([spec], "first lock", directory=copy, today="2026-11-24", commit="a")
    (kept,) = lock.relock([spec], "reason only", directory=copy, keep_data=True, today="2026-11-25", commit="b")
    assert kept.salt == 1 and kept.kept_data
    data = json.loads((copy / lock.LOCK_NAME).read_text())
    assert [h.get("kept_data", False) for h in data["history"]] == [False, True]
    assert data["claims"]["thm34.window-law"]["kept_data"] is True


def test_a_demoted_claim_stays_under_the_lock(copy, capsys):
    """Demoting a locked claim to exploratory and changing its design passed `lock --check`: a locked claim is
    checked whatever its status; the demotion is re-locked (a new salt), then further changes are seen again."""
    _lock_all(copy)
    _edit(
        copy / "thm34.toml",
        'name = "isotropy"',
        'name = "isotropy"\nexploratory_reason = "demoted after the data"',
    )
    text = (copy / "thm34.toml").read_text()
    start = text.index('name = "isotropy"')
    end = text.index('status = "confirmatory"', start)
    (copy / "thm34.toml").write_text(
        text[:end] + 'status = "exploratory"' + text[end + len('status = "confirmatory"') :]
    )
    _edit(copy / "thm34.toml", "contexts = 20000", "contexts = 5000")
    assert main(["lock", "--check", "--json"]) == 1
    changed = json.loads(capsys.readouterr().out)["changed"]["thm34.isotropy"]
    assert 'status: "confirmatory" -> "exploratory"' in changed and "design.contexts: 20000 -> 5000" in changed
    (demoted,) = lock.relock([_spec("thm34.isotropy")], "demoted", directory=copy, today="2026-11-25", commit="b")
    assert demoted.salt == 2
    assert main(["lock", "--check"]) == 0
    capsys.readouterr()
    _edit(copy / "thm34.toml", "contexts = 5000", "contexts = 4000")
    assert main(["lock", "--check"]) == 1
    assert "design.contexts: 5000 -> 4000" in capsys.readouterr().out


def test_a_locked_claim_removed_from_the_registry_is_named_and_retired(copy, capsys):
    _lock_all(copy)
    text = (copy / "thm34.toml").read_text()
    start = text.index("[[claim]]", text.index('name = "isotropy"') - 200)
    end = text.index("[[claim]]", start + 9)
    (copy / "thm34.toml").write_text(text[:start] + text[end:])
    registry._load.cache_clear()
    assert main(["lock", "--check", "--json"]) == 1
    assert "no longer in the registry" in json.loads(capsys.readouterr().out)["changed"]["thm34.isotropy"][0]
    assert main(["lock", "thm34.isotropy", "--reason", "claim withdrawn", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["locked"][0]["retired"] is True
    assert main(["lock", "--check"]) == 0
    assert lock.history(copy)[-1]["retired"] is True


def test_the_lock_is_written_atomically_with_its_mode_kept(copy):
    spec = _spec("thm34.window-law")
    lock.relock([spec], "first lock", directory=copy, today="2026-11-24", commit="a")
    os.chmod(copy / lock.LOCK_NAME, 0o664)
    lock.relock([spec], "again", directory=copy, today="2026-11-25", commit="b")
    assert stat.S_IMODE(os.stat(copy / lock.LOCK_NAME).st_mode) == 0o664
    assert not [p for p in copy.iterdir() if p.name.startswith(".lipschitz-icl-")]


def test_an_unchanged_stochastic_design_is_not_relocked_for_new_data(copy):
    """A new salt for the same design would draw new data until one passes: refused, the lock unchanged."""
    spec = _spec("thm34.isotropy")
    lock.relock([spec], "first lock", directory=copy, today="2026-11-24", commit="a")
    before = (copy / lock.LOCK_NAME).read_bytes()
    with pytest.raises(lock.LockError, match="matches the lock"):
        lock.relock([spec], "try again", directory=copy)
    assert (copy / lock.LOCK_NAME).read_bytes() == before
    deterministic = _spec("thm34.window-law")  # no seed enters its verdict: a re-lock draws nothing
    lock.relock([deterministic], "first lock", directory=copy, today="2026-11-24", commit="a")
    (again,) = lock.relock([deterministic], "restated", directory=copy, today="2026-11-25", commit="b")
    assert again.salt == 2
