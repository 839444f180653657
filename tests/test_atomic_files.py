"""The output writers: atomic for regular files, in place for special files, all-or-nothing for a set.

Special files are made in a temporary directory (`mkfifo`, `os.mknod`, a pseudo-terminal), never the
system's own `/dev/null`.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cce_relevance.atomic_files import OutputSet, write_output
from cce_relevance.errors import CceError
from tests.special_files import FULL, NULL, device_node


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".cce-relevance-"))


def test_a_new_file_is_written_with_the_usual_permissions(tmp_path: Path) -> None:
    write_output(str(tmp_path / "out.json"), "{}\n")
    assert (tmp_path / "out.json").read_bytes() == b"{}\n"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o666 & ~mask
    assert _leftovers(tmp_path) == []


def test_a_replaced_file_keeps_its_permission_bits_and_is_a_new_inode(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    before = target.stat().st_ino
    write_output(str(target), "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != before  # renamed over, not rewritten: readers never see half a file


def test_a_character_device_is_written_in_place_and_survives(tmp_path: Path) -> None:
    null = device_node(tmp_path / "null", NULL)
    write_output(str(null), "report\n")
    assert stat.S_ISCHR(null.stat().st_mode)
    assert _leftovers(tmp_path) == []


def test_a_full_device_is_a_clear_error_and_is_not_replaced(tmp_path: Path) -> None:
    full = device_node(tmp_path / "full", FULL)
    with pytest.raises(CceError, match=r"could not write .*full: No space left on device"):
        write_output(str(full), "report\n")
    assert stat.S_ISCHR(full.stat().st_mode)


def test_a_terminal_is_written_in_place(tmp_path: Path) -> None:
    """A pseudo-terminal is a character device any user can open: no root needed."""
    leader, follower = os.openpty()
    try:
        name = os.ttyname(follower)
        write_output(name, "to the terminal\n")
        assert b"to the terminal" in os.read(leader, 1000)
        assert stat.S_ISCHR(os.stat(name).st_mode)
    finally:
        os.close(leader)
        os.close(follower)


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def reader() -> None:
        with open(path, "rb") as handle:
            into.append(handle.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_written_in_place_for_its_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    thread = _read_fifo(fifo, got)
    write_output(str(fifo), "through the pipe\n")
    thread.join(timeout=30)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_pipe_closed_early_fails_before_any_regular_file_changes(tmp_path: Path) -> None:
    """In-place writes are committed first: when one fails, the renames have not happened."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    kept = tmp_path / "kept.json"
    kept.write_text("old\n")

    def reader() -> None:  # opens the pipe and closes it without reading
        os.close(os.open(fifo, os.O_RDONLY))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    with pytest.raises(CceError, match="could not write .*pipe: Broken pipe"), OutputSet() as outputs:
        outputs.stage(str(kept), "new\n")
        outputs.stage(str(fifo), "x" * (1 << 20))  # more than a pipe buffer: the write must meet the close
        outputs.commit()
    thread.join(timeout=30)
    assert kept.read_text() == "old\n"
    assert _leftovers(tmp_path) == []


def test_a_symbolic_link_is_followed_and_its_target_replaced(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "report.json"
    target.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_output(str(link), "new\n")
    assert link.is_symlink()
    assert target.read_text() == "new\n"
    assert _leftovers(tmp_path / "real") == [] and _leftovers(tmp_path) == []


def test_a_dangling_link_creates_the_file_it_names(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "made" / "report.json")
    write_output(str(link), "new\n")
    assert link.is_symlink() and (tmp_path / "made" / "report.json").read_text() == "new\n"


def test_a_link_loop_and_a_directory_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(CceError, match="symbolic link loops"):
        write_output(str(tmp_path / "a"), "x")
    with pytest.raises(CceError, match="Is a directory"):
        write_output(str(tmp_path), "x")


def test_missing_parent_directories_are_created(tmp_path: Path) -> None:
    write_output(str(tmp_path / "runs" / "deep" / "bm25.run"), "q 0 d 1 1 r\n")
    assert (tmp_path / "runs" / "deep" / "bm25.run").read_text() == "q 0 d 1 1 r\n"


def test_a_parent_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("a file\n")
    with pytest.raises(CceError, match="could not write .*runs/bm25.run: a parent of it is not a directory"):
        write_output(str(tmp_path / "runs" / "bm25.run"), "x")


def test_a_failed_set_changes_no_file_and_removes_the_directories_it_made(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("old qrels\n")
    (tmp_path / "store.json.fingerprint.json").mkdir()
    with pytest.raises(CceError, match="Is a directory"), OutputSet() as outputs:
        outputs.stage(str(qrels), "new qrels\n")
        outputs.stage(str(tmp_path / "nodir" / "deeper" / "bm25.run"), "run\n")
        outputs.stage(str(tmp_path / "store.json.fingerprint.json"), "{}")
        outputs.commit()
    assert qrels.read_text() == "old qrels\n"
    assert not (tmp_path / "nodir").exists()
    assert _leftovers(tmp_path) == []


def test_a_set_left_without_commit_writes_nothing(tmp_path: Path) -> None:
    with OutputSet() as outputs:
        outputs.stage(str(tmp_path / "a.json"), "a")
    assert list(tmp_path.iterdir()) == []


def test_the_same_file_named_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "out.json")
    with pytest.raises(CceError, match="named as two outputs"), OutputSet() as outputs:
        outputs.stage(str(tmp_path / "out.json"), "a")
        outputs.stage(str(tmp_path / "link"), "b")


def test_text_that_utf8_cannot_encode_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CceError, match="lone surrogate"):
        write_output(str(tmp_path / "out.json"), "id \ud800")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_directory_names_the_temporary_file(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into any directory")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        with pytest.raises(CceError, match="cannot create a temporary file in"):
            write_output(str(locked / "out.json"), "x")
    finally:
        locked.chmod(0o755)


@pytest.mark.parametrize("redirect", ["file", "append", "pipe"])
def test_dev_stdout_writes_to_the_open_descriptor(tmp_path: Path, redirect: str) -> None:
    """`/dev/stdout` is whatever the caller opened: a redirected file is appended to, never replaced."""
    script = "from cce_relevance.atomic_files import write_output; write_output('/dev/stdout', 'report\\n')"
    out = tmp_path / "stdout.txt"
    if redirect == "pipe":
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, check=True)
        assert done.stdout == b"report\n"
        return
    out.write_text("earlier\n" if redirect == "append" else "")
    inode = out.stat().st_ino
    with open(out, "a" if redirect == "append" else "w") as handle:
        subprocess.run([sys.executable, "-c", script], stdout=handle, timeout=120, check=True)
    assert out.read_text() == ("earlier\n" if redirect == "append" else "") + "report\n"
    assert out.stat().st_ino == inode
