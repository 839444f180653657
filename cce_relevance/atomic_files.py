"""Output files that are never half-written, never destroy a special file, and change nothing on failure.

Every file a command writes (`--output`, `--update-golden`, `--trec-run`, `--trec-qrels`, `--chart`,
`index --out` and its fingerprint, `bootstrap --out` and `--report`, the Action's report files) goes
through this module:

* `write_output(path, content)` writes one file;
* `OutputSet` stages several: `stage()` each, then `commit()` once the run has succeeded. Leaving
  its `with` block without committing (an error, a failed check) discards everything staged, so a
  failed run leaves every pre-existing output as it was.

What happens at the target, decided when it is staged:

* **A regular file, or nothing yet**: the content goes to a temporary file in the same directory,
  renamed over the target at commit (atomic: a reader sees the old file or the new one). A file
  that existed keeps its permission bits; a new one gets what `open(path, "w")` would give.
* **A symbolic link** is followed: the file it points to is replaced atomically and the link
  stays a link (as a shell's `>` writes through a link). A link loop is refused.
* **A character or block device, a FIFO or a socket** (`/dev/null`, a terminal, a pipe) is written
  in place, never replaced: `--output /dev/null` works for any user and leaves the device alone.
  A FIFO waits for its reader, as with any writer. The content is held in memory until commit.
* **`/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and paths under `/proc`** name a file this process
  already has open: written in place too (appended when it is a regular file), never renamed over.
* **A directory** is refused.
* **Missing parent directories are created** (`--trec-run 'runs/{backend}.run'` with no `runs/`
  yet). Directories created for a set that is then discarded are removed again when still empty.

Every failure is a `CceError` naming the path (exit 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from types import TracebackType

from cce_relevance.errors import CceError

Content = str | bytes

# Paths that name a descriptor this process already holds: replacing them by name would write
# somewhere else than the caller's open file (a shell redirection, a pipe).
_DESCRIPTOR_PATHS = ("/proc/", "/dev/fd/", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, at import (single-threaded): `os.umask` can only be read by setting it.
_UMASK = _current_umask()


@dataclass
class _Staged:
    """One staged output: a temporary file to rename (`temp`), or bytes to write in place."""

    path: str  # as the caller named it (for messages)
    target: str  # where the bytes go: the real path of a regular file, else `path`
    data: bytes
    temp: str | None  # the temporary file holding `data`, for an atomic replace
    append: bool = False  # in place: append (a regular file reached through a descriptor path)


class OutputSet:
    """Several outputs written together: all of them at `commit()`, or none.

    ```python
    with OutputSet() as outputs:
        outputs.stage("report.json", text)
        outputs.stage("runs/bm25.run", run)
        check_something()  # raising here discards both, and changes no file
        outputs.commit()
    ```
    """

    def __init__(self) -> None:
        self._staged: list[_Staged] = []
        self._created_dirs: list[str] = []
        self._done = False

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if not self._done:
            self.discard()

    def stage(self, path: str, content: Content) -> None:
        """Check `path` and prepare `content` for it (a temporary file beside a regular target).

        Raises `CceError` when the target cannot be written: a directory, a link loop, a parent
        that cannot be created, a directory where no temporary file can be made, a full disk.
        Naming the same regular file twice in one set is refused (one would silently win).
        """
        if self._done:
            raise RuntimeError("OutputSet already committed or discarded")
        data = _encode(path, content)
        target, mode = _target(path)
        if mode is not None and stat.S_ISDIR(mode):
            raise CceError(f"could not write {path}: Is a directory")
        if target is None:
            if not os.access(path, os.W_OK):
                raise CceError(f"could not write {path}: {os.strerror(errno.EACCES)}")
            self._staged.append(
                _Staged(path, path, data, None, append=mode is not None and stat.S_ISREG(mode))
            )
            return
        if any(s.temp is not None and s.target == target for s in self._staged):
            raise CceError(
                f"{path} is named as two outputs of this run", hint="give each output its own file"
            )
        self._make_parents(path, target)
        self._staged.append(_Staged(path, target, data, _write_temp(path, target, data, mode)))

    def commit(self) -> None:
        """Write everything staged: first in place (devices, pipes), then each rename.

        In-place writes go first because they are the ones that can fail (a full device, a closed
        pipe); when one fails, nothing has been renamed yet and the regular files stay as they were.
        """
        if self._done:
            raise RuntimeError("OutputSet already committed or discarded")
        try:
            for item in self._staged:
                if item.temp is None:
                    _write_in_place(item)
            for item in self._staged:
                if item.temp is not None:
                    try:
                        os.replace(item.temp, item.target)
                    except OSError as exc:
                        raise _write_error(item.path, exc) from None
                    item.temp = None
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove every temporary file and every directory this set created that is still empty."""
        self._done = True
        for item in self._staged:
            if item.temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(item.temp)
                item.temp = None
        self._staged.clear()
        for directory in reversed(self._created_dirs):
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        self._created_dirs.clear()

    def _make_parents(self, path: str, target: str) -> None:
        directory = os.path.dirname(target)
        missing = []
        while directory and not os.path.lexists(directory):
            missing.append(directory)
            directory = os.path.dirname(directory)
        for directory in reversed(missing):
            try:
                os.mkdir(directory)
            except FileExistsError:
                continue
            except OSError as exc:
                raise CceError(
                    f"could not write {path}: cannot create directory {directory}: {exc.strerror or exc}"
                ) from None
            self._created_dirs.append(directory)
        parent = os.path.dirname(target) or "."
        if not os.path.isdir(parent):
            raise CceError(f"could not write {path}: {parent} is not a directory")


def write_output(path: str, content: Content) -> None:
    """Write one output file by the rules of this module (atomic for regular files, in place for
    devices and pipes, parents created); a `CceError` naming `path` when it cannot be written."""
    with OutputSet() as outputs:
        outputs.stage(path, content)
        outputs.commit()


def writes_in_place(path: str) -> bool:
    """Whether `path` is written in place (a device, a pipe, a descriptor path) rather than as a file
    of its own: such a target has no file beside which to put a companion (a store's fingerprint)."""
    try:
        return _target(path)[0] is None
    except CceError:
        return False


def _encode(path: str, content: Content) -> bytes:
    if isinstance(content, bytes):
        return content
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CceError(
            f"could not write {path}: the text holds {exc.object[exc.start : exc.end]!r}, "
            "which UTF-8 cannot encode (a lone surrogate)"
        ) from None


def _target(path: str) -> tuple[str | None, int | None]:
    """Where `path` leads and that file's mode (None: missing).

    The target is the real path of a regular or missing file, to be replaced atomically; None
    for a file written in place (a device, a pipe, a descriptor path).
    """
    if path == "":
        raise CceError("an output path is empty")
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CceError(f"could not write {path}: the symbolic link loops") from None
        if exc.errno == errno.ENOTDIR:
            raise CceError(f"could not write {path}: a parent of it is not a directory") from None
        raise _write_error(path, exc) from None
    if mode is not None and not stat.S_ISREG(mode):
        return None, mode
    target = os.path.realpath(path)
    if os.path.abspath(path).startswith(_DESCRIPTOR_PATHS) or target.startswith("/proc/"):
        if mode is None:
            raise CceError(f"could not write {path}: no such open file")
        return None, mode
    return target, mode


def _write_temp(path: str, target: str, data: bytes, mode: int | None) -> str:
    """`data` in a new temporary file beside `target`, with the permissions the target will have."""
    directory = os.path.dirname(target) or "."
    try:
        fd, temp = tempfile.mkstemp(prefix=".cce-relevance-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise CceError(
            f"could not write {path}: cannot create a temporary file in {directory}: {exc.strerror or exc}"
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), stat.S_IMODE(mode) if mode is not None else 0o666 & ~_UMASK)
            handle.write(data)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise _write_error(path, exc) from None
    return temp


def _write_in_place(item: _Staged) -> None:
    """Open the existing special file (or descriptor path) and write to it; never create or rename."""
    flags = os.O_WRONLY | os.O_NOCTTY | (os.O_APPEND if item.append else 0)
    try:
        fd = os.open(item.target, flags)
    except OSError as exc:
        raise _write_error(item.path, exc) from None
    try:
        view = memoryview(item.data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        raise _write_error(item.path, exc) from None
    finally:
        os.close(fd)


def _write_error(path: str, exc: OSError) -> CceError:
    return CceError(f"could not write {path}: {exc.strerror or exc}")
