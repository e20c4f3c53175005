"""The design lock: a changed confirmatory design is named and can only be re-locked with a new seed salt,
so it draws fresh data; the lock's history records every change with its reason."""

import json
import shutil

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
    assert "every confirmatory design matches" in capsys.readouterr().out
    assert main(["lock", "thm34.window-law"]) == 2  # no reason
    assert "--reason" in capsys.readouterr().err
    assert main(["lock", "no.such-claim", "--reason", "x"]) == 2


def test_a_malformed_lock_is_refused(copy):
    (copy / lock.LOCK_NAME).write_text('{"format": 99}')
    with pytest.raises(lock.LockError, match="format"):
        lock.read(copy)
