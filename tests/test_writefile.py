"""Writing a file the project produces (:mod:`lipschitz_icl.writefile`): atomic, never through a symbolic link,
the mode a user expects, no silent overwrite."""

import errno
import os
import stat

import pytest

from lipschitz_icl import writefile
from lipschitz_icl.validation import ParameterError
from lipschitz_icl.writefile import check_target, new_file_mode, write_file


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _leftovers(directory) -> list:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".lipschitz-icl-"))


@pytest.fixture
def umask():
    """Set the process umask for one test, restored after it."""
    previous = os.umask(0o022)
    os.umask(previous)
    yield os.umask
    os.umask(previous)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o644), (0o027, 0o640)])
def test_a_new_file_is_0644_less_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    assert new_file_mode() == expected
    path = write_file(tmp_path / "new.txt", "text")
    assert _mode(path) == expected and path.read_text() == "text"


def test_a_replaced_file_keeps_its_mode(tmp_path, umask):
    umask(0o077)  # the umask does not decide a replaced file's mode: the file's own mode does
    target = tmp_path / "README.md"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_file(target, "new", force=True)
    assert target.read_text() == "new" and _mode(target) == 0o644
    os.chmod(target, 0o640)
    write_file(target, "newer", force=True)
    assert _mode(target) == 0o640


def test_content_is_bytes_text_or_a_writer(tmp_path):
    assert write_file(tmp_path / "a", b"\x00\x01").read_bytes() == b"\x00\x01"
    assert write_file(tmp_path / "b", "é").read_bytes() == "é".encode()
    assert write_file(tmp_path / "c", lambda handle: handle.write(b"xyz")).read_bytes() == b"xyz"


def test_an_existing_file_is_refused_without_force_and_kept(tmp_path):
    target = tmp_path / "cert.json"
    target.write_text("keep me")
    with pytest.raises(ParameterError, match=r"'certificate' must be a path where no file exists yet.*--force"):
        write_file(target, "new", option="certificate")
    assert target.read_text() == "keep me" and _leftovers(tmp_path) == []


@pytest.mark.parametrize("dangling", [False, True])
def test_a_link_is_never_followed(tmp_path, dangling):
    """Without force a link (dangling or not) counts as an existing file; with force the link itself is replaced
    by a regular file and the file it pointed to is neither written nor created."""
    pointed = tmp_path / "elsewhere.json"
    if not dangling:
        pointed.write_text("the link's target")
    link = tmp_path / "link.json"
    link.symlink_to(pointed)
    with pytest.raises(ParameterError, match="a symbolic link is there"):
        write_file(link, "new", option="certificate")
    write_file(link, "new", force=True, option="certificate")
    assert not link.is_symlink() and link.read_text() == "new" and _mode(link) == new_file_mode()
    if dangling:
        assert not pointed.exists()
    else:
        assert pointed.read_text() == "the link's target"


def test_a_directory_or_a_missing_parent_is_refused(tmp_path):
    (tmp_path / "dir").mkdir()
    with pytest.raises(ParameterError, match="not a directory"):
        write_file(tmp_path / "dir", "x", force=True)
    with pytest.raises(ParameterError, match="existing directory"):
        write_file(tmp_path / "missing" / "x.json", "x", force=True)
    with pytest.raises(ParameterError, match="empty name"):
        check_target("", force=True, option="out")


def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "report.tex"
    target.write_text("old")

    def half_then_fail(handle):
        handle.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left") as caught:
        write_file(target, half_then_fail, force=True)
    assert caught.value.filename == str(target)  # the target is named, never the temporary file
    assert target.read_text() == "old" and _leftovers(tmp_path) == []


def test_ctrl_c_while_writing_leaves_no_temporary(tmp_path):
    def interrupted(handle):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_file(tmp_path / "x", interrupted)
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_appears_while_writing_is_not_overwritten(tmp_path):
    target = tmp_path / "fig1.json"

    def racing(handle):
        target.write_text("someone else's")
        handle.write(b"ours")

    with pytest.raises(ParameterError, match="appeared while writing"):
        write_file(target, racing)
    assert target.read_text() == "someone else's" and _leftovers(tmp_path) == []


def test_without_hard_links_an_existing_name_is_still_refused(tmp_path, monkeypatch):
    target = tmp_path / "x.npz"

    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(writefile.os, "link", no_links)
    write_file(target, "first")
    assert target.read_text() == "first" and _leftovers(tmp_path) == []
    other = tmp_path / "y"
    with pytest.raises(ParameterError, match="no file exists yet"):
        write_file(other, lambda handle: other.write_text("appeared"))
    assert other.read_text() == "appeared" and _leftovers(tmp_path) == []
