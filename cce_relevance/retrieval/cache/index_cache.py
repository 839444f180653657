"""The index cache: each file's indexed record, kept in SQLite and found again by content.

An index is rebuilt on every run (the Action runs twice per pull request), yet between runs
most files are unchanged. Indexing a file depends only on its path and bytes and on how it is
indexed, so its record (retrieval/file_indexing/file_record.py) is stored under a key hashing exactly that:

* the cache layout version, the tool version and a digest of the source of every module that
  shapes a record (so a changed chunker never meets a stale record, even between releases);
* the tree-sitter version and the versions of the grammar packages of the pack set, and the
  packs themselves (names, extensions, kinds);
* redaction on or off, the embedder, the file path and the SHA-256 of the file's bytes.

A record is only ever used whole and checked: each row carries the SHA-256 of its bytes, and a
row that does not match, or does not decode, counts as a miss and is recomputed and replaced. A
database file that is not one, or has another schema, is deleted and made again. The cache is
best-effort: when it cannot be opened or written, indexing goes on without it, and results
never differ. SQLite in WAL mode with a busy timeout lets two runs share one cache; writes are
single transactions of whole rows, so a reader never sees half a record.

Records unused for `_KEEP_DAYS` days are dropped when the cache is first opened on a day, which
bounds its size by what was indexed recently.

Beside the database, the directory `corpora/` keeps whole corpora as assembled
(retrieval/cache/corpus_record.py), one file each, named by the context and a key hashing the keys of
all the corpus's files' records in walk order; the most recent of a context is where a run
over a changed tree starts from (retrieval/cache/corpus_splice.py). A file holds the SHA-256 of its
record and the record, is written to a temporary name and renamed into place (so a reader sees
a whole file or none), and is touched when used; only the `_KEEP_CORPORA` most recently used
are kept, as each is about as large as its files' records together. Plain files, not rows: a
record of tens of megabytes is read much faster from a file than from a chain of database
overflow pages — here it is mapped, and its arrays are used where they lie — and using one
writes nothing to the database.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path

from cce_relevance import __version__
from cce_relevance.input_files import open_input
from cce_relevance.memory_pages import release_pages
from cce_relevance.retrieval.chunking.packs import PackSet

SCHEMA = "cce-relevance.index-cache/3"  # 2: records carry BM25 term counts; 3: narrow arrays
DB_FILE = "index.sqlite3"
CORPORA_DIR = "corpora"
APP_DIR = "cce-relevance"
_KEEP_DAYS = 30
_KEEP_CORPORA = 4
_CHECKSUM_BYTES = 32  # a corpus file is the SHA-256 of its record, then the record
_CHECKSUM_WINDOW = 4 << 20  # bytes of a mapped corpus file hashed before their pages are dropped
_ABANDONED_NS = 3600 * 10**9  # a temporary corpus file this old is no run's any more
_BATCH = 500  # keys per SELECT (SQLite's default variable limit is 999 before 3.32)
_BUSY_MS = 30_000
# The retrieval stages whose code decides what a file's or a corpus's record holds: every module
# in them, and every module of this package they import, is hashed into the key (`key_sources`).
# The stages after them (search, store) only read an index, so editing them keeps the cache.
RECORD_STAGES = ("corpus", "chunking", "embedding", "ranking", "file_indexing", "cache", "index")
_PACKAGE_DIR = Path(__file__).resolve().parents[2]
_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(cce_relevance[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
    rb"|import[ \t]+(cce_relevance[\w.]*))",
    re.M,
)


def default_cache_dir() -> str | None:
    """`$XDG_CACHE_HOME/cce-relevance`, else `~/.cache/cce-relevance`; None without a home, or
    with a HOME that does not exist (a cache is not worth creating someone's home directory)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, APP_DIR)
    home = os.path.expanduser("~")
    return os.path.join(home, ".cache", APP_DIR) if os.path.isabs(home) and os.path.isdir(home) else None


def record_checksum(mapped: mmap.mmap) -> bytes:
    """The SHA-256 of the record in a mapped corpus file (all but its first `_CHECKSUM_BYTES`),
    hashed `_CHECKSUM_WINDOW` bytes at a time, each window's pages dropped once hashed
    (`release_pages`): checking a record reads every byte of it, and the pages read would stay
    resident — tens of megabytes for a large corpus — although decoding and ranking read only
    parts of them again (those are mapped again from the page cache when read)."""
    checksum = hashlib.sha256()
    with memoryview(mapped) as data:
        for start in range(0, len(data), _CHECKSUM_WINDOW):
            lo, hi = max(start, _CHECKSUM_BYTES), min(start + _CHECKSUM_WINDOW, len(data))
            with data[lo:hi] as window:
                checksum.update(window)
            release_pages(mapped, lo, hi)
    return checksum.digest()


class IndexCache:
    """An open cache; every method degrades to "nothing cached" instead of raising. The database
    is connected on first use: a run that finds its whole corpus kept never opens it."""

    def __init__(self, directory: str, context: bytes) -> None:
        self._path = os.path.join(directory, DB_FILE)
        self._context = context
        self._db: sqlite3.Connection | None = None
        self._unusable = False  # the database could not be opened, or failed mid-run
        self._background: list[threading.Thread] = []
        self._corpora = os.path.join(directory, CORPORA_DIR)
        os.makedirs(directory, exist_ok=True)

    def _database(self) -> sqlite3.Connection | None:
        """The connection, made on first use (a damaged file is replaced); None when unusable."""
        if self._db is None and not self._unusable:
            try:
                try:
                    self._db = self._connect()
                except sqlite3.DatabaseError as exc:
                    if not _is_damage(exc):
                        raise
                    self._discard()
                    self._db = self._connect()
            except (OSError, sqlite3.Error):
                self._unusable = True
        return self._db

    @classmethod
    def open(cls, directory: str, context: bytes) -> IndexCache | None:
        """The cache in `directory`, or None when it cannot be used there."""
        try:
            return cls(directory, context)
        except OSError:
            return None

    def key(self, path: str, digest: bytes) -> bytes:
        """The key of the record for the file at `path` whose bytes have the SHA-256 `digest`
        (the walk's: retrieval/corpus/walk.py `FileText`)."""
        h = hashlib.sha256(self._context)
        h.update(path.encode("utf-8", "surrogatepass") + b"\0")
        h.update(digest)
        return h.digest()

    def corpus_key(self, keys: Sequence[bytes]) -> bytes:
        """The key of the assembled corpus whose files' records have `keys`, in walk order."""
        h = hashlib.sha256(self._context + b"corpus" + len(keys).to_bytes(8, "little"))
        for key in keys:
            h.update(key)
        return h.digest()

    def get_corpus(self, key: bytes) -> memoryview | None:
        """The assembled corpus stored under `key` when its checksum holds; marks it as used now."""
        return self._read_corpus(self._corpus_name(key))

    def latest_corpus(self) -> memoryview | None:
        """The most recently used assembled corpus indexed the way this cache's keys say (the
        same context), to be spliced with the records of the files that changed since."""
        prefix = self._corpus_name(b"")
        try:
            names = [
                (entry.stat().st_mtime_ns, entry.name)
                for entry in os.scandir(self._corpora)
                if entry.name.startswith(prefix)
            ]
        except OSError:
            return None
        for _, name in sorted(names, reverse=True):
            data = self._read_corpus(name)
            if data is not None:
                return data
        return None

    def _corpus_name(self, key: bytes) -> str:
        """A corpus file's name: the context's first 16 bytes, then the corpus key (hex)."""
        return f"{self._context[:16].hex()}-{key.hex()}"

    def _read_corpus(self, name: str) -> memoryview | None:
        """The record in file `name`, mapped rather than read: its arrays are used in place
        (retrieval/cache/corpus_record.py), so the record is neither copied nor given fresh memory.
        A corpus file is only ever replaced by a rename, never rewritten, so the mapping stays
        the bytes that were checked."""
        path = os.path.join(self._corpora, name)
        try:
            with open_input(path) as f:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            os.utime(path)
        except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
            return None
        data = memoryview(mapped)
        checksum, record = data[:_CHECKSUM_BYTES], data[_CHECKSUM_BYTES:]
        return record if record_checksum(mapped) == bytes(checksum) else None

    def put_corpus(self, key: bytes, parts: Sequence[bytes | memoryview]) -> None:
        """Store an assembled corpus (atomically), keeping the `_KEEP_CORPORA` most recently used;
        its record is `parts` one after the other, which must not change until `close`.

        The writing runs in a thread — hashing and writing the parts, buffers of tens of
        megabytes, release the GIL, so it overlaps making the index's chunks and embeddings —
        and `close` waits for it.
        """
        self._in_background(self._write_corpus, key, parts)

    def _in_background(self, work: Callable[..., None], *args: object) -> None:
        """`work(*args)` in a thread that `close` waits for (here and now when no thread can start)."""
        thread = threading.Thread(target=work, args=args, name="cce-relevance-cache")
        try:
            thread.start()
        except RuntimeError:
            work(*args)
            return
        self._background.append(thread)

    def _write_corpus(self, key: bytes, parts: Sequence[bytes | memoryview]) -> None:
        checksum = hashlib.sha256()
        for part in parts:
            checksum.update(part)
        try:
            os.makedirs(self._corpora, exist_ok=True)
            # Created like the database (mode 0o666 less the umask, not mkstemp's 0o600), so that
            # a cache written by one user (root in the Action's container) serves another.
            temporary = os.path.join(self._corpora, f".tmp-{os.getpid()}-{secrets.token_hex(8)}")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(checksum.digest())
                    for part in parts:
                        f.write(part)
                os.replace(temporary, os.path.join(self._corpora, self._corpus_name(key)))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
            stamped = [(entry.stat().st_mtime_ns, entry.name) for entry in os.scandir(self._corpora)]
            others = sorted(
                (
                    (t, name)
                    for t, name in stamped
                    if name != self._corpus_name(key) and not name.startswith(".")
                ),
                reverse=True,
            )
            abandoned = [
                (t, name)
                for t, name in stamped  # left by a run that died while writing
                if name.startswith(".tmp-") and t < time.time_ns() - _ABANDONED_NS
            ]
            for _, name in others[_KEEP_CORPORA - 1 :] + abandoned:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self._corpora, name))
        except OSError:
            return  # the cache is best-effort: the next run assembles the corpus again

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The records found for `keys` whose checksum holds (a damaged one is simply absent)."""
        found: dict[bytes, bytes] = {}
        db = self._database()
        if db is None:
            return found
        try:
            for batch in _batches(keys):
                marks = ",".join("?" * len(batch))
                rows = db.execute(f"SELECT key, checksum, data FROM entries WHERE key IN ({marks})", batch)
                for key, checksum, data in rows:
                    if isinstance(data, bytes) and hashlib.sha256(data).digest() == checksum:
                        found[key] = data
            today = _today()
            with transaction(db):  # mark as used today, unless already marked (most runs write nothing)
                for batch in _batches(list(found)):
                    marks = ",".join("?" * len(batch))
                    db.execute(
                        f"UPDATE entries SET used = ? WHERE used < ? AND key IN ({marks})",
                        (today, today, *batch),
                    )
        except sqlite3.Error as exc:
            self._give_up(exc)
            return {}
        return found

    def put_many(self, records: Mapping[bytes, bytes]) -> None:
        """Store `records` (key → bytes) in one transaction; failures leave the cache as it was."""
        db = self._database() if records else None
        if db is None:
            return
        today = _today()
        rows = [(key, hashlib.sha256(data).digest(), data, today) for key, data in records.items()]
        try:
            with transaction(db):
                db.executemany(
                    "INSERT OR REPLACE INTO entries (key, checksum, data, used) VALUES (?, ?, ?, ?)", rows
                )
        except sqlite3.Error as exc:
            self._give_up(exc)
            return
        # A run stores its records once, at the end of indexing: the connection is closed now, in
        # a thread, as closing checkpoints the log into the database file and syncs it (milliseconds
        # the run need not wait for before its `close`). A later call connects again.
        self._db = None
        self._in_background(_close_quietly, db)

    def wait(self) -> None:
        """Wait for the work in threads (corpus writes, closing the database): a corpus put is
        then in its file, for `get_corpus`, or was not kept."""
        for thread in self._background:
            thread.join()
        self._background.clear()

    def close(self) -> None:
        """`wait`, then close the database."""
        self.wait()
        if self._db is not None:
            _close_quietly(self._db)
            self._db = None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self._path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            _prepare(db)
        except BaseException:
            db.close()
            raise
        return db

    def _give_up(self, exc: sqlite3.Error) -> None:
        """A database error mid-run: this run goes on uncached; a damaged file is removed for the next."""
        self.close()
        self._unusable = True
        if _is_damage(exc):
            self._discard()

    def _discard(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path + suffix)


_COLUMNS = ["key", "checksum", "data", "used"]


def _close_quietly(db: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        db.close()


def _prepare(db: sqlite3.Connection) -> None:
    """Create the tables, or recreate them when the schema is another one; drop stale rows (the
    first time the cache is opened on a day)."""
    with transaction(db):
        db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        columns = [r[1] for r in db.execute("PRAGMA table_info(entries)")]
        if row is None or row[0] != SCHEMA or columns != _COLUMNS:
            db.execute("DROP TABLE IF EXISTS entries")
            db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('schema', ?)", (SCHEMA,))
            db.execute(
                "CREATE TABLE entries (key BLOB PRIMARY KEY, checksum BLOB NOT NULL, data BLOB NOT NULL, "
                "used INTEGER NOT NULL)"
            )
        # Once a day: the sweep reads every row (`used` lies past each record's overflow pages).
        today = _today()
        if db.execute("SELECT value FROM meta WHERE name = 'swept'").fetchone() != (str(today),):
            db.execute("DELETE FROM entries WHERE used < ?", (today - _KEEP_DAYS,))
            db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('swept', ?)", (str(today),))


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at its start (so waiting for another writer happens there)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _is_damage(exc: sqlite3.Error) -> bool:
    """A file that is not a database or is corrupt (not a busy or read-only one)."""
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def _batches(keys: Sequence[bytes]) -> Iterator[Sequence[bytes]]:
    for lo in range(0, len(keys), _BATCH):
        yield keys[lo : lo + _BATCH]


def _today() -> int:
    return int(time.time() // 86400)


def cache_context(packs: PackSet, protect_secrets: bool, embedder: str) -> bytes | None:
    """Everything a record depends on besides the file: hashed into every key (None: no cache)."""
    code = _code_digest()
    if code is None:
        return None
    distributions = sorted({"tree-sitter", *(d for p in packs.packs for d in p.distributions)})
    versions = [(name, _version(name)) for name in distributions]
    packs_desc = [
        (p.name, p.extensions, sorted(p.function_kinds), sorted(p.class_kinds), sorted(p.import_kinds))
        for p in packs.packs
    ]
    described = repr((SCHEMA, __version__, code, versions, packs_desc, protect_secrets, embedder))
    return hashlib.sha256(described.encode("utf-8")).digest()


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "-"


@cache
def _code_digest() -> str | None:
    return code_digest(_PACKAGE_DIR, RECORD_STAGES)


def code_digest(package_dir: Path, stages: Sequence[str]) -> str | None:
    """SHA-256 over the source of every module that shapes a record; None when one cannot be read."""
    sources = key_sources(package_dir, stages)
    if sources is None:
        return None
    h = hashlib.sha256()
    for name, source in sorted(sources.items()):
        h.update(name.encode() + b"\0" + len(source).to_bytes(8, "little") + source)
    return h.hexdigest()


def key_sources(package_dir: Path, stages: Sequence[str]) -> dict[str, bytes] | None:
    """The source of each module that shapes a record, by module name: every module of `stages`
    (sub-packages of `retrieval` in `package_dir`), then every module of the package that one of
    those imports anywhere in its text (type-checking and function-level imports included), and
    the packages that contain them, to the end. None when a stage or an imported module cannot
    be read: without its source the key could not change when it does."""
    top = package_dir.name
    pending: list[str] = []
    for stage in stages:
        stage_dir = package_dir / "retrieval" / stage
        try:
            names = sorted(
                entry.name
                for entry in stage_dir.iterdir()
                if entry.suffix == ".py" and entry.name != "__init__.py"
            )
        except OSError:
            return None
        pending += [f"{top}.retrieval.{stage}.{name.removesuffix('.py')}" for name in names]
    sources: dict[str, bytes] = {}
    while pending:
        name = pending.pop()
        if name in sources:
            continue
        path = _module_file(package_dir, name)
        try:
            source = path.read_bytes() if path is not None else None
        except OSError:
            source = None
        if source is None:
            return None
        sources[name] = source
        parent = name.rpartition(".")[0]
        if parent:  # importing a module runs its packages' __init__ first
            pending.append(parent)
        for module, names, plain in _IMPORT.findall(source):
            if plain:
                pending.append(plain.decode())
                continue
            base = module.decode()
            pending.append(base)
            for item in re.sub(rb"#[^\n]*", b"", names).strip(b"()").split(b","):
                leaf = item.split(b" as ")[0].strip().decode()
                if leaf.isidentifier() and _module_file(package_dir, f"{base}.{leaf}") is not None:
                    pending.append(f"{base}.{leaf}")
    return sources


def _module_file(package_dir: Path, name: str) -> Path | None:
    """The file of module or package `name` (dotted, from the package's own name) under `package_dir`."""
    parts = name.split(".")
    if parts[0] != package_dir.name:
        return None
    base = package_dir.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None
