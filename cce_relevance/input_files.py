"""Opening a file someone named as an input: only a regular file is read.

Every reader of a path that a user, a config file, an Action input or a workspace gives (fixtures,
config, golden reports, saved reports and comparisons, run files, stores, shard states, review
forms, trend histories) opens it with `open_input`, never with `open`. It refuses what is not a
regular file *before* reading a byte:

* a FIFO (named pipe) would block the run until a writer came — forever in a CI job;
* a character or block device (`/dev/zero`, `/dev/urandom`) never ends, or ends in an error
  that says nothing about the input; a socket cannot be opened at all;
* a symbolic link that leads nowhere is named as such, not reported as a missing file;
* a file larger than the reader's limit (`MAX_INPUT_BYTES`, 1 GiB, unless a reader passes a
  smaller one) is refused by its size, before a byte is read: a sparse file of a terabyte costs
  its maker nothing and would otherwise end in a `MemoryError`, or hours of parsing.

A directory is left to `open`, whose `Is a directory` each reader words as it always has (the
fixture reader's text matches the reference byte for byte). The refusal is a `SpecialFileError`,
an `OSError` whose `strerror` says what the path is (`is a FIFO (named pipe), not a regular
file`), so a reader's existing `except OSError` names its input and the path in one line, exit 2.

The check is made twice: `stat` before opening, and `fstat` on the descriptor opened without
blocking (`O_NONBLOCK`), so a file swapped for a FIFO between the two never blocks either.
`check_input` is the same refusal for a path handed on to code that opens it itself.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from typing import IO, Any

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


MAX_INPUT_BYTES = 1 << 30  # no file cce-relevance reads (fixtures, reports, stores) comes near


class SpecialFileError(OSError):
    """The path is not a regular file (nor a directory), or one larger than its reader takes;
    `strerror` and `str()` say what it is."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(None, why, path)

    def __str__(self) -> str:
        return str(self.strerror)


def _kind(mode: int) -> str | None:
    """What a file of `mode` is, in words, when it is neither a regular file nor a directory."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "not a regular file"


def check_input(path: str | os.PathLike[str]) -> None:
    """Raise `SpecialFileError` when `path` exists and is a FIFO, a device, a socket or a dangling
    symbolic link. A missing path or a directory passes: the caller's own open reports it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        try:
            target = os.readlink(path)
        except (OSError, ValueError):
            return
        raise SpecialFileError(
            os.fspath(path), f"is a symbolic link to {target}, which does not exist"
        ) from None
    except (OSError, ValueError):  # the caller's open meets (and words) the same error
        return
    kind = _kind(mode)
    if kind is not None:
        raise SpecialFileError(os.fspath(path), f"is {kind}, not a regular file")


def open_input(
    path: str | os.PathLike[str], mode: str = "rb", *, limit: int | None = MAX_INPUT_BYTES, **kwargs: Any
) -> IO[Any]:
    """`open(path, mode, **kwargs)` for reading, refusing a special file and a file of more than
    `limit` bytes (see the module docstring); `limit=None` is for a reader that maps the file
    instead of reading it."""
    if any(c in mode for c in "wax+"):
        raise ValueError(f"open_input reads; mode {mode!r} writes")
    check_input(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        found = info.st_mode
        if stat.S_ISDIR(found):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        kind = _kind(found)
        if kind is not None:
            raise SpecialFileError(os.fspath(path), f"is {kind}, not a regular file")
        if limit is not None and info.st_size > limit:
            raise SpecialFileError(
                os.fspath(path), f"is {info.st_size} bytes, more than the {limit} bytes this reader takes"
            )
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return open(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise
