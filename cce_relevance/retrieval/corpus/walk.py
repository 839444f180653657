"""The corpus walk: which files of a tree get indexed, and their text (§walk).

It reproduces the reference walker (ripgrep's `ignore` crate with `.gitignore` files honoured
at and below the root only, symlinks not followed, always-pruned and dot directories skipped)
and its per-file filters, in the reference's order: sensitive name, `.jsonl`, size, UTF-8.

The walk works on raw byte paths so that non-UTF-8 names are matched as bytes, as the
reference does, and only converted (lossily, U+FFFD) for the output. It never raises on a bad
tree: what cannot be read is counted and left out. Traversal is iterative and the output is
sorted, so neither deep trees nor the filesystem's listing order matter.

Each walked file also carries a `FileText`: what is needed to read its text again (its path on
disk and the SHA-256 of the bytes the walk read). The cache keys files by that digest, and a
warm run hands its chunks the `FileText`s instead of the texts: a chunk's content is sliced
from a text read again when first asked for, so the texts of files no hit is in are not held.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from cce_relevance.errors import CceError
from cce_relevance.reference import ALWAYS_PRUNED_DIRS, MAX_FILE_SIZE
from cce_relevance.retrieval.corpus.exclusion import NO_EXCLUSION, Exclusion
from cce_relevance.retrieval.corpus.gitignore import Gitignore
from cce_relevance.retrieval.corpus.sensitive import is_sensitive, path_extension

__all__ = ["FileText", "WalkResult", "WalkedFile", "text_of", "walk"]

_PRUNED_DIRS = frozenset(os.fsencode(name) for name in ALWAYS_PRUNED_DIRS)
_GITIGNORE = b".gitignore"
# Non-blocking, so opening a FIFO that replaced a file mid-walk cannot hang the walk.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC

# The `.gitignore` files in force for one directory, deepest first, each with the prefix that
# turns an entry name of this directory into a path relative to that file's directory.
_Scope = tuple[tuple[Gitignore, bytes], ...]


# Texts read again by `FileText.read`, most recently read last: a hit's file is often read for
# several of its chunks (hybrid's keyword test, then the lines a metric weighs), and a walked
# file is at most MAX_FILE_SIZE bytes, so a few of them bound what is held.
_RECENT_CHARS = 8 * MAX_FILE_SIZE  # 16 Mi characters
_recent: OrderedDict[FileText, str] = OrderedDict()
_held = [0]  # the characters `_recent` holds


class FileText:
    """A walked file's text, read again from disk when asked for (`read`). The bytes must be
    the ones the walk read (their SHA-256 is checked), so the text is the one it decoded; a file
    that changed or went away since is an error, never another text."""

    __slots__ = ("path", "digest", "shown")

    def __init__(self, path: bytes, digest: bytes, shown: str) -> None:
        self.path = path  # absolute
        self.digest = digest  # SHA-256 of the bytes the walk read
        self.shown = shown  # root-relative, for messages

    def read(self) -> str:
        """The text the walk decoded from this file; CceError if its bytes are not the same."""
        text = _recent.get(self)
        if text is not None:
            _recent.move_to_end(self)
            return text
        data = _read_regular_file(self.path, follow_symlinks=False)
        if data is None or hashlib.sha256(data).digest() != self.digest:
            raise CceError(
                f"{self.shown or os.fsdecode(self.path)}: the file changed while the corpus was "
                "being ranked; run again on a tree that does not change during the run"
            )
        text = data.decode("utf-8")  # the walk decoded these very bytes
        _recent[self] = text
        _held[0] += len(text)
        while _held[0] > _RECENT_CHARS and len(_recent) > 1:
            _held[0] -= len(_recent.popitem(last=False)[1])
        return text


def text_of(text: str | FileText) -> str:
    """A text, or the one a `FileText` reads."""
    return text if isinstance(text, str) else text.read()


@dataclass(frozen=True)
class WalkedFile:
    """One indexed file."""

    path: str  # root-relative, '/'-separated, no leading './'
    text: str  # strict UTF-8 decoded (BOM kept as U+FEFF)
    source: FileText | None = field(default=None, compare=False, repr=False)  # how to read it again


@dataclass(frozen=True)
class WalkResult:
    """The walk's output and counters (only `files` feeds ranking)."""

    files: list[WalkedFile]  # sorted by the whole path string (code point order)
    skipped: int  # .jsonl, oversize, non-UTF-8, unreadable files (§file-filters steps 2-4)
    sensitive: int  # sensitive basenames skipped (§file-filters step 1)
    errors: int  # unreadable directories
    excluded: tuple[str, ...] = ()  # files the exclusion left out (not those below an excluded directory)


def walk(
    root: str | os.PathLike[str], protect_secrets: bool = True, exclude: Exclusion = NO_EXCLUSION
) -> WalkResult:
    """Walk `root` and return the files to index with their text, sorted by path.

    With `protect_secrets` (the default) files with a sensitive name are counted, not read.
    A root that does not exist counts as one error, like a directory that cannot be read.
    `exclude` leaves out a run's own files and the user's patterns (corpus/exclusion.py),
    checked after the `.gitignore` files; without it the walk is the reference's.
    """
    return _Walk(protect_secrets, exclude).run(os.fsencode(root))


def _read_regular_file(path: bytes, follow_symlinks: bool) -> bytes | None:
    """The bytes of a regular file, or None when it is anything else or cannot be read."""
    try:
        fd = os.open(path, _OPEN_FLAGS if follow_symlinks else _OPEN_FLAGS | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with open(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _basename(path: bytes) -> bytes:
    """The name of a root that is a file, for the sensitive-name check."""
    return os.path.basename(path.rstrip(b"/")) or path


def _ignored(scope: _Scope, name: bytes, is_dir: bool) -> bool:
    """The deepest `.gitignore` with a line matching the entry decides; none means kept."""
    for gitignore, prefix in scope:
        verdict = gitignore.match(prefix + name, is_dir)
        if verdict is not None:
            return verdict
    return False


class _Walk:
    """One walk's state: the files found so far and the counters."""

    def __init__(self, protect_secrets: bool, exclude: Exclusion) -> None:
        self._protect_secrets = protect_secrets
        self._exclude = exclude
        self._excluded: list[str] = []
        self._found: list[tuple[str, bytes, str, FileText]] = []  # (path, raw path, text, source)
        self._cwd = os.getcwdb()  # FileText paths are absolute: reading one later needs no directory
        self._skipped = 0
        self._sensitive = 0
        self._errors = 0

    def run(self, root: bytes) -> WalkResult:
        self._walk_root(root)
        # The raw path only breaks ties between names that decode to the same string.
        self._found.sort()
        files = [WalkedFile(path, text, source) for path, _, text, source in self._found]
        return WalkResult(files, self._skipped, self._sensitive, self._errors, tuple(sorted(self._excluded)))

    def _walk_root(self, root: bytes) -> None:
        """The root is never pruned or ignored, and is followed if it is a symlink. A root that
        is a regular file is the only file, with the empty path, as in the reference."""
        try:
            info = os.stat(root)
        except OSError:
            self._errors += 1
            return
        if stat.S_ISDIR(info.st_mode):
            self._walk_tree(root)
        elif stat.S_ISREG(info.st_mode):
            self._take_file(os.path.realpath(root), b"", _basename(root), lambda: info)

    def _walk_tree(self, root: bytes) -> None:
        pending: list[tuple[bytes, bytes, _Scope]] = [(root, b"", ())]
        while pending:
            path, rel_dir, scope = pending.pop()
            entries = self._list_dir(path)
            gitignore = self._gitignore(entries)
            if gitignore:
                scope = ((gitignore, b""), *scope)
            for entry in entries:
                self._visit(entry, rel_dir, scope, pending)

    def _list_dir(self, path: bytes) -> list[os.DirEntry[bytes]]:
        """The directory's entries; a directory that cannot be read (or fails part way) counts
        as one walk error and yields what was read."""
        entries: list[os.DirEntry[bytes]] = []
        try:
            with os.scandir(path) as listing:
                entries.extend(listing)
        except OSError:
            self._errors += 1
        return entries

    @staticmethod
    def _gitignore(entries: list[os.DirEntry[bytes]]) -> Gitignore | None:
        """This directory's `.gitignore`, read through a symlink like the reference does."""
        for entry in entries:
            if entry.name == _GITIGNORE:
                data = _read_regular_file(entry.path, follow_symlinks=True)
                return None if data is None else Gitignore.from_bytes(data)
        return None

    def _visit(
        self,
        entry: os.DirEntry[bytes],
        rel_dir: bytes,
        scope: _Scope,
        pending: list[tuple[bytes, bytes, _Scope]],
    ) -> None:
        """Queue a directory to descend, take a regular file; drop symlinks and the rest."""
        name = entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = not is_dir and entry.is_file(follow_symlinks=False)
        except OSError:
            self._errors += 1
            return
        if is_dir:
            if name in _PRUNED_DIRS or name.startswith(b".") or _ignored(scope, name, True):
                return
            if self._exclude and self._exclude.excludes_dir(rel_dir + name):
                return
            child_scope = tuple((gitignore, prefix + name + b"/") for gitignore, prefix in scope)
            pending.append((entry.path, rel_dir + name + b"/", child_scope))
        elif is_file and not _ignored(scope, name, False):
            self._take_file(entry.path, rel_dir + name, name, partial(entry.stat, follow_symlinks=False))

    def _take_file(
        self, path: bytes, rel: bytes, name: bytes, metadata: Callable[[], os.stat_result]
    ) -> None:
        """The per-file filters, in the reference's order (§file-filters); then the exclusion, for
        a file that would be indexed."""
        lossy_name = name.decode("utf-8", "replace")
        if self._protect_secrets and is_sensitive(lossy_name):
            self._sensitive += 1
            return
        if path_extension(lossy_name) == "jsonl":
            self._skipped += 1
            return
        if rel and self._exclude and self._exclude.excludes_file(rel):
            self._excluded.append(rel.decode("utf-8", "replace"))
            return
        read = self._read_text(path, metadata)
        if read is None:
            self._skipped += 1
            return
        text, digest = read
        shown = rel.decode("utf-8", "replace")
        self._found.append((shown, rel, text, FileText(os.path.join(self._cwd, path), digest, shown)))

    @staticmethod
    def _read_text(path: bytes, metadata: Callable[[], os.stat_result]) -> tuple[str, bytes] | None:
        """The file's text and the SHA-256 of its bytes if its metadata says it is at most
        MAX_FILE_SIZE bytes and its content is valid UTF-8; None otherwise."""
        try:
            if metadata().st_size > MAX_FILE_SIZE:
                return None
        except OSError:
            return None
        data = _read_regular_file(path, follow_symlinks=False)
        if data is None:
            return None
        try:
            return data.decode("utf-8"), hashlib.sha256(data).digest()
        except UnicodeDecodeError:
            return None
