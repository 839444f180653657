"""The embedding cache: every vector a chosen embedder made, kept in SQLite and found by its text.

A pull request's base and head share almost every chunk, and a re-run shares all of them, so a
vector is kept under a key hashing the embedder's identity (kind, model, width: `Embedder.identity`)
and the SHA-256 of the text embedded; base, head and re-runs then embed only the chunks that
changed. The value is the vector's bytes with its dtype, exactly as the embedder gave it, so a run
that finds every vector here ranks exactly as the run that made them.

It is safe for concurrent runs (SQLite in WAL mode, a busy timeout, each write one transaction of
whole rows) and best-effort: a cache that cannot be opened or written, or a row that does not
decode, is a miss, and results never differ. It is bounded: rows record the day they were last
used; rows unused for `KEEP_DAYS` days are dropped when the cache is first opened on a day, and
when the live pages pass `max_bytes` the least recently used rows (oldest day first, within a day
the earliest written) are dropped until a tenth under it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from cce_relevance.retrieval.cache.index_cache import transaction

SCHEMA = "cce-relevance.vector-cache/1"
DB_FILE = "vectors.sqlite3"
DEFAULT_MAX_BYTES = 1 << 30
KEEP_DAYS = 30
_BUSY_MS = 30_000
_BATCH = 500  # keys per statement (SQLite's default variable limit is 999 before 3.32)
_DTYPES = ("<f4", "<f8")


def text_key(identity: str, text: str) -> bytes:
    """The key of `text`'s vector by the embedder `identity`."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return hashlib.sha256(identity.encode("utf-8") + b"\0" + digest).digest()


def _today() -> int:
    return int(time.time() // 86_400)


class VectorCache:
    """An open cache; every method degrades to "nothing cached" instead of raising."""

    def __init__(self, directory: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = os.path.join(directory, DB_FILE)
        self.max_bytes = max_bytes
        self._db: sqlite3.Connection | None = None
        self._unusable = False
        os.makedirs(directory, exist_ok=True)

    @classmethod
    def open(cls, directory: str | None, max_bytes: int = DEFAULT_MAX_BYTES) -> VectorCache | None:
        """The cache in `directory` (None: no cache), or None when it cannot be used there."""
        if directory is None:
            return None
        try:
            return cls(directory, max_bytes)
        except OSError:
            return None

    def _database(self) -> sqlite3.Connection | None:
        if self._db is None and not self._unusable:
            try:
                try:
                    self._db = self._connect()
                except sqlite3.DatabaseError:
                    with contextlib.suppress(OSError):
                        os.remove(self.path)  # not a database of ours: made again
                    self._db = self._connect()
            except (OSError, sqlite3.Error):
                self._unusable = True
        return self._db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors "
                "(key BLOB PRIMARY KEY, dtype TEXT NOT NULL, data BLOB NOT NULL, used INTEGER NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)")
            schema = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if schema is None:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA,))
            elif schema[0] != SCHEMA:
                raise sqlite3.DatabaseError(f"another schema: {schema[0]}")
            self._expire(db)
        except BaseException:
            db.close()
            raise
        return db

    def _expire(self, db: sqlite3.Connection) -> None:
        """Drop rows unused for KEEP_DAYS days, once a day."""
        today = _today()
        swept = db.execute("SELECT value FROM meta WHERE name = 'swept'").fetchone()
        if swept is not None and swept[0] == str(today):
            return
        with transaction(db):
            db.execute("DELETE FROM vectors WHERE used < ?", (today - KEEP_DAYS,))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('swept', ?)", (str(today),))

    def get_many(self, identity: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those of `texts` that have one, by text."""
        db = self._database()
        if db is None:
            return {}
        by_key = {text_key(identity, t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        today = _today()
        stale: list[bytes] = []
        try:
            for keys in _batches(list(by_key)):
                marks = ",".join("?" * len(keys))
                for key, dtype, data, used in db.execute(
                    f"SELECT key, dtype, data, used FROM vectors WHERE key IN ({marks})", keys
                ):
                    vector = _decoded(dtype, data)
                    if vector is not None and key in by_key:
                        found[by_key[key]] = vector
                        if used != today:
                            stale.append(key)
            if stale:
                with transaction(db):
                    db.executemany("UPDATE vectors SET used = ? WHERE key = ?", [(today, k) for k in stale])
        except sqlite3.Error:
            self._give_up()
        return found

    def put_many(self, identity: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Keep `vectors` (by text), then trim the cache to its bound."""
        db = self._database()
        if db is None or not vectors:
            return
        today = _today()
        rows = []
        for text, vector in vectors.items():
            dtype = vector.dtype.newbyteorder("<").str
            if dtype in _DTYPES and vector.ndim == 1:
                rows.append((text_key(identity, text), dtype, vector.astype(dtype).tobytes(), today))
        try:
            with transaction(db):
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._trim(db)
        except sqlite3.Error:
            self._give_up()

    def live_bytes(self) -> int:
        """The bytes of the database's pages in use (free pages left out)."""
        db = self._database()
        if db is None:
            return 0
        return _live_bytes(db)

    def _trim(self, db: sqlite3.Connection) -> None:
        live = _live_bytes(db)
        if live <= self.max_bytes:
            return
        (count,) = db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        drop = min(count, int(count * (1.0 - 0.9 * self.max_bytes / live)) + 1)
        with transaction(db):
            db.execute(
                "DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY used, rowid LIMIT ?)",
                (drop,),
            )

    def _give_up(self) -> None:
        self.close()
        self._unusable = True

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None


def _live_bytes(db: sqlite3.Connection) -> int:
    (pages,) = db.execute("PRAGMA page_count").fetchone()
    (free,) = db.execute("PRAGMA freelist_count").fetchone()
    (size,) = db.execute("PRAGMA page_size").fetchone()
    return int((pages - free) * size)


def _decoded(dtype: object, data: object) -> np.ndarray | None:
    """A row's vector, or None when it is not one of ours (a damaged or foreign row: a miss)."""
    if dtype not in _DTYPES or not isinstance(data, bytes):
        return None
    width = np.dtype(str(dtype)).itemsize
    if len(data) % width:
        return None
    vector = np.frombuffer(data, dtype=str(dtype)).astype(np.dtype(str(dtype)).newbyteorder("="))
    return vector if bool(np.isfinite(vector).all()) else None


def _batches(keys: Sequence[bytes]) -> Iterator[Sequence[bytes]]:
    for start in range(0, len(keys), _BATCH):
        yield keys[start : start + _BATCH]
