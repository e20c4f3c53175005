"""One error path at the CLI boundary (issue 22): OSError, MemoryError, RecursionError and UnicodeError
become one line (exit 2; a failure to write stdout exit 1), Ctrl-C at any point -- the imports and the
final print included -- is one line and exit 130, and a full disk leaves no partial file."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lipschitz_icl import cli

SRC = str(Path(__file__).resolve().parents[1] / "src")
LOSS = [
    "loss",
    "--task",
    "affine",
    "--d",
    "3",
    "--n",
    "100",
    "--L",
    "1",
    "--sigma",
    "0.5",
    "--w",
    "3",
    "--method",
    "exact",
]
TRAIN = [
    "train",
    "--task",
    "affine",
    "--d",
    "3",
    "--n",
    "20",
    "--L",
    "1",
    "--sigma",
    "0.5",
    "--steps",
    "2",
    "--batch",
    "4",
]


def _env(tmp_path):
    return dict(
        os.environ,
        PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        LIPSCHITZ_ICL_CACHE=str(tmp_path / "cache"),
    )


def _one_line(err: str, fragment: str):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in err, err[-2000:]


def test_ctrl_c_while_the_cli_is_importing(tmp_path):
    """A real SIGINT while the entry point imports NumPy (it printed a 27-line KeyboardInterrupt traceback and
    died by the signal).  The signal is sent when the import of NumPy begins (an import hook), not after a
    fixed delay: on a loaded machine a 50 ms timer let the whole command finish first."""
    code = (
        "import os, signal, sys\n"
        "from lipschitz_icl import _entry\n"
        "assert 'numpy' not in sys.modules  # the package and the entry point import nothing heavy\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy':\n"
        "            sys.meta_path.remove(self)\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        f"sys.argv = ['lipschitz-icl', *{LOSS!r}]\n"
        "sys.exit(_entry.main())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 130 and proc.stderr == "lipschitz-icl: interrupted\n" and proc.stdout == ""


def test_ctrl_c_during_the_final_print(monkeypatch, capsys):
    class Interrupting:
        encoding = "utf-8"

        def write(self, text):
            raise KeyboardInterrupt

        def flush(self):
            pass

    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", Interrupting())
    assert cli.main(LOSS) == 130
    monkeypatch.undo()
    _one_line(capsys.readouterr().err, "interrupted")


def test_stdout_on_a_full_device_is_one_line_and_exit_1(monkeypatch, capsys):
    """claims --json > /dev/full: stdout is the full device itself (its writes fail with ENOSPC)."""
    capsys.readouterr()
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = cli.main(["claims", "--json"])
        monkeypatch.undo()
    assert code == 1
    _one_line(capsys.readouterr().err, "could not be written to stdout (No space left on device)")


@pytest.mark.parametrize(
    "exc,fragment",
    [
        (OSError(errno.EIO, "Input/output error", "/some/file"), "Input/output error: '/some/file'"),
        (MemoryError(), "out of memory"),
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "not valid UTF-8"),
    ],
    ids=["OSError", "MemoryError", "RecursionError", "UnicodeError"],
)
def test_boundary_errors_are_one_line_and_exit_2(monkeypatch, capsys, exc, fragment):
    from lipschitz_icl.commands import loss

    def failing(args):
        raise exc

    monkeypatch.setattr(loss, "run", failing)
    assert cli.main(LOSS) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    _one_line(captured.err, fragment)


@pytest.mark.parametrize("where", ["savez", "mkstemp"])
def test_train_out_on_a_full_disk_or_read_only_directory(monkeypatch, capsys, tmp_path, where):
    """A full disk while writing (ENOSPC) or a directory that refuses the file (EROFS): one line naming
    --out, exit 2, and no file left behind -- neither the output nor its temporary."""
    from lipschitz_icl import writefile
    from lipschitz_icl.commands import train

    def full(*args, **kwargs):
        raise OSError(
            errno.ENOSPC if where == "savez" else errno.EROFS,
            os.strerror(errno.ENOSPC if where == "savez" else errno.EROFS),
        )

    if where == "savez":
        monkeypatch.setattr(train.np, "savez", full)
    else:
        monkeypatch.setattr(writefile.tempfile, "mkstemp", full)  # every file is written through writefile
    out = tmp_path / "model.npz"
    assert cli.main([*TRAIN, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    _one_line(captured.err, "--out")
    assert captured.out == "" and list(tmp_path.iterdir()) == []
