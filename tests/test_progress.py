"""lipschitz_icl.progress: a bar only on a terminal, never while silenced (the CLI's --json)."""

import io

from lipschitz_icl import progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_is_drawn_on_a_terminal_and_not_on_a_pipe():
    tty, pipe = _Terminal(), io.StringIO()
    for stream in (tty, pipe):
        for _ in progress.bar(range(3), desc="loop", stream=stream):
            pass
    assert "loop" in tty.getvalue() and "3/3" in tty.getvalue()
    assert pipe.getvalue() == ""


def test_silenced_wins_over_a_terminal_and_over_show_true_and_nests():
    tty = _Terminal()
    with progress.silenced():
        with progress.silenced(False):  # an inner inactive block does not unsilence
            assert not progress.enabled(True, tty)
        for _ in progress.bar(range(3), desc="loop", stream=tty, show=True):
            pass
    assert tty.getvalue() == ""
    assert progress.enabled(None, tty) and not progress.enabled(False, tty)


def test_train_under_json_draws_no_bar_even_when_stderr_is_a_terminal(monkeypatch, capsys):
    """The trainer asks :func:`progress.enabled`; a spy answers as if stderr were a terminal.  A long
    run (steps * batch >= 200_000) draws a bar without --json and none under --json."""
    from lipschitz_icl.cli import main

    real, answers = progress.enabled, []

    def spy(show=None, stream=None):
        answers.append(real(show, _Terminal()))
        return answers[-1]

    monkeypatch.setattr(progress, "enabled", spy)
    argv = [
        "train",
        "--task",
        "affine",
        "--d",
        "2",
        "--n",
        "4",
        "--L",
        "1",
        "--sigma",
        "0.3",
        "--steps",
        "2",
        "--batch",
        "100000",
    ]
    assert main(argv + ["--json"]) == 0
    assert answers and not any(answers)
    assert capsys.readouterr().err == ""
    answers.clear()
    assert main(argv) == 0  # the control: the same run draws a bar
    assert answers == [True] and "train" in capsys.readouterr().err
