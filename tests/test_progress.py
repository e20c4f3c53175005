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
        with progress.silenced(False):          # an inner inactive block does not unsilence
            assert not progress.enabled(True, tty)
        for _ in progress.bar(range(3), desc="loop", stream=tty, show=True):
            pass
    assert tty.getvalue() == ""
    assert progress.enabled(None, tty) and not progress.enabled(False, tty)
