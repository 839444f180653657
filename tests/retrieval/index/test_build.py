"""`build_index` end to end: the same index however it is built — in one process or several, cold,
from the index cache, after a change, from a damaged cache, by two runs at once.

The reference is the straightforward pipeline of §build, written here without any of the
machinery under test: walk, redact, `chunk_file` and `hash_embed` chunk by chunk. Indexes are
compared through the bytes of the store they would write (every chunk field, each embedding
component in its shortest round-trip form, imports and token weights).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from cce_relevance.retrieval.cache import index_cache
from cce_relevance.retrieval.cache.index_cache import CORPORA_DIR, DB_FILE
from cce_relevance.retrieval.chunking.chunk import chunk_file, set_embedding
from cce_relevance.retrieval.chunking.languages import EXTRA_PACKS
from cce_relevance.retrieval.chunking.packs import PACKS, REFERENCE_PACKS, PackSet
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.corpus.walk import walk
from cce_relevance.retrieval.embedding.embed import DocumentEmbedder, hash_embed
from cce_relevance.retrieval.file_indexing import workers
from cce_relevance.retrieval.index import build
from cce_relevance.retrieval.index import record_sources as records
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.store.store import dumps_store
from cce_relevance.retrieval.tokens import estimate_tokens
from tests.retrieval.corpora import DOCS_CORPUS
from tests.retrieval.file_indexing.test_file_record import first_format, narrow_enough

ALL_PACKS = PackSet(PACKS + EXTRA_PACKS)
SECRET_FILE = 'def token():\n    return "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"\n'


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every language's samples, the docs corpus, a secret, non-ASCII text and a slice of the
    standard library (two whole packages): about 120 files."""
    root = tmp_path_factory.mktemp("corpus")
    for source, target in (
        (Path("test/fixture/samples"), "samples"),
        (Path(__file__).parents[1] / "language_samples", "more"),
        (Path(DOCS_CORPUS), "docs"),
    ):
        shutil.copytree(source, root / target)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for package in ("json", "email"):
        shutil.copytree(
            stdlib / package, root / "lib" / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    (root / "secret.py").write_text(SECRET_FILE, encoding="utf-8")
    (root / "unicode.rs").write_text(
        '// é漢\U0001f600\nfn f() -> &\'static str { "ünï" }\n', encoding="utf-8"
    )
    return root


def reference_index(root: Path, packs: PackSet = REFERENCE_PACKS, protect_secrets: bool = True) -> Index:
    walked = walk(root, protect_secrets=protect_secrets)
    chunks, imports, tokens = [], {}, {}
    for f in walked.files:
        text = redact(f.text) if protect_secrets else f.text
        tokens[f.path] = estimate_tokens(text)
        chunked = chunk_file(f.path, text, packs)
        if chunked.imports:
            imports[f.path] = chunked.imports
        chunks.extend(chunked.chunks)
    for c in chunks:
        set_embedding(c, hash_embed(c.content))
    return Index(chunks, imports, tokens)


def snapshot(index: Index) -> str:
    return dumps_store(index)


@pytest.fixture(scope="module")
def expected(corpus: Path) -> str:
    return snapshot(reference_index(corpus))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths this process indexes by itself (cache hits and what a pool of processes indexes,
    this process's share included, do not show up here)."""
    return paths_indexed_through(records, monkeypatch)


def paths_indexed_through(module, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths `module`'s `index_files` is called with in this process, from now on."""
    seen: list[str] = []
    real = module.index_files

    def counting(files, *args, **kwargs):
        seen.extend(path for path, _ in files)
        return real(files, *args, **kwargs)

    monkeypatch.setattr(module, "index_files", counting)
    return seen


# ---------------------------------------------------------------- one process, several, any packs


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_same_index_in_one_process_or_several(corpus, expected, processes):
    index = build_index(corpus, workers=processes)
    assert snapshot(index) == expected
    assert index.matrix.shape == (len(index.chunks), 256) and index.matrix.flags.f_contiguous
    for row, chunk in zip(index.matrix, index.chunks, strict=True):
        assert np.shares_memory(chunk.embedding, index.matrix) and np.array_equal(row, chunk.embedding)


@pytest.mark.parametrize("protect_secrets", [True, False])
def test_all_packs_and_no_redaction(corpus, protect_secrets):
    want = snapshot(reference_index(corpus, ALL_PACKS, protect_secrets))
    for processes in (1, 2):
        assert snapshot(build_index(corpus, protect_secrets, languages=ALL_PACKS, workers=processes)) == want


def test_another_embedder_embeds_the_chunk_contents_and_skips_the_cache(corpus, tmp_path):
    def embed_all(texts):
        return [np.array([len(t), t.count("def")], dtype=np.float64) for t in texts]

    index = build_index(corpus, embedder=DocumentEmbedder("stub", embed_all), cache=str(tmp_path / "c"))
    assert index.embedder == "stub"
    assert index.postings is None  # no term counts without the hash embedder: BM25 tokenizes
    assert [list(c.embedding) for c in index.chunks] == [
        [len(c.content), c.content.count("def")] for c in index.chunks
    ]
    assert not (tmp_path / "c" / DB_FILE).exists()


def test_progress_reports_every_file_and_ends_at_the_total(corpus, tmp_path):
    files = len(walk(corpus).files)
    for kwargs in (
        {"workers": 1},
        {"workers": 2},
        {"workers": 1, "cache": str(tmp_path)},
        {"workers": 1, "cache": str(tmp_path)},
    ):
        seen: list[tuple[int, int]] = []
        build_index(corpus, progress=lambda done, total, seen=seen: seen.append((done, total)), **kwargs)
        assert seen[0] == (0, files) and seen[-1] == (files, files)
        done = [d for d, _ in seen]
        assert done == sorted(done) and {t for _, t in seen} == {files}


# ---------------------------------------------------------------- the index cache


def test_warm_run_indexes_nothing_and_one_change_indexes_one_file(corpus, expected, tmp_path, calls):
    cache = str(tmp_path / "cache")
    files = len(walk(corpus).files)
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert len(calls) == files
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert calls == []
    changed = corpus / "lib" / "json" / "decoder.py"
    original = changed.read_bytes()
    try:
        changed.write_bytes(original.replace(b"def ", b"def  ", 1))
        assert snapshot(build_index(corpus, cache=cache, workers=1)) == snapshot(reference_index(corpus))
        assert calls == ["lib/json/decoder.py"]
    finally:
        changed.write_bytes(original)
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert calls == []  # the old version is still cached


def test_a_cold_run_in_workers_fills_the_cache_for_a_warm_one(corpus, expected, tmp_path, calls):
    cache = str(tmp_path / "cache")
    assert snapshot(build_index(corpus, cache=cache, workers=2)) == expected
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert calls == []


@pytest.mark.parametrize("processes", [1, 2])
def test_records_stored_a_few_at_a_time_fill_the_cache_as_at_once(
    corpus, expected, tmp_path, calls, monkeypatch, processes
):
    """A large corpus's new records are stored whenever FLUSH_BYTES of them wait: every file's
    record is stored (here one transaction per record) and a warm run indexes nothing."""
    monkeypatch.setattr(records, "FLUSH_BYTES", 1)
    cache = str(tmp_path / "cache")
    assert snapshot(build_index(corpus, cache=cache, workers=processes)) == expected
    assert _rows(Path(cache) / DB_FILE) == len(walk(corpus).files)
    _forget_corpora(cache)
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert calls == []


def test_records_are_keyed_by_everything_that_shapes_them(corpus, tmp_path, calls):
    """Redaction, the packs and the path are part of the key: no run sees another's records."""
    cache = str(tmp_path / "cache")
    build_index(corpus, cache=cache, workers=1)
    files = len(calls)
    calls.clear()
    unredacted = build_index(corpus, False, cache=cache, workers=1)
    assert snapshot(unredacted) == snapshot(reference_index(corpus, protect_secrets=False))
    assert "ghp_" in next(c.content for c in unredacted.chunks if c.file_path == "secret.py")
    assert len(calls) == files
    calls.clear()
    assert snapshot(build_index(corpus, languages=ALL_PACKS, cache=cache, workers=1)) == snapshot(
        reference_index(corpus, ALL_PACKS)
    )
    assert len(calls) == files
    moved = tmp_path / "moved"
    shutil.copytree(corpus / "samples", moved / "elsewhere")
    calls.clear()
    assert snapshot(build_index(moved, cache=cache, workers=1)) == snapshot(reference_index(moved))
    assert len(calls) == len(walk(moved).files)  # same bytes, other paths: other chunk ids


def _filled(corpus: Path, tmp_path: Path) -> tuple[str, Path]:
    cache = tmp_path / "cache"
    build_index(corpus, cache=str(cache), workers=1)
    return str(cache), cache / DB_FILE


def _forget_corpora(cache: str) -> None:
    """Drop the assembled corpora, so that the next run reads the files' records."""
    shutil.rmtree(Path(cache) / CORPORA_DIR)


def _rows(db_path: Path) -> int:
    with sqlite3.connect(db_path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return db.execute("SELECT count(*) FROM entries").fetchone()[0]


def _execute(db_path: Path, *statements: str) -> None:
    db = sqlite3.connect(db_path)
    try:
        with db:
            for statement in statements:
                db.execute(statement)
    finally:
        db.close()


def test_a_file_that_is_not_a_database_is_replaced(corpus, expected, tmp_path):
    cache, db_path = _filled(corpus, tmp_path)
    _forget_corpora(cache)
    db_path.write_bytes(os.urandom(8192))
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert _rows(db_path) == len(walk(corpus).files)


def test_a_truncated_database_never_gives_a_wrong_index(corpus, expected, tmp_path, calls):
    cache, db_path = _filled(corpus, tmp_path)
    _execute(db_path, "PRAGMA wal_checkpoint(TRUNCATE)")
    data = db_path.read_bytes()
    db_path.write_bytes(data[: len(data) // 2])
    for suffix in ("-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert calls == []  # the damaged file was discarded and the cache filled again


def test_records_whose_checksum_fails_are_made_again(corpus, expected, tmp_path, calls):
    cache, db_path = _filled(corpus, tmp_path)
    _forget_corpora(cache)
    _execute(db_path, "UPDATE entries SET data = substr(data, 1, length(data) - 7) WHERE rowid % 3 = 0")
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert 0 < len(calls) < len(walk(corpus).files)
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert calls == []  # replaced by good ones


def test_records_that_do_not_decode_are_made_again(corpus, expected, tmp_path, calls):
    """A record with a valid checksum that is not a record (a format bug, a foreign writer)."""
    cache, db_path = _filled(corpus, tmp_path)
    junk = b"CCEf\x02\x00\x00\x00{}"
    _forget_corpora(cache)
    _execute(
        db_path,
        f"UPDATE entries SET data = x'{junk.hex()}', checksum = x'{hashlib.sha256(junk).hexdigest()}'"
        " WHERE rowid % 2 = 0",
    )
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert 0 < len(calls) < len(walk(corpus).files)


@pytest.mark.parametrize(
    "older",
    [
        first_format,  # no BM25 term counts
        lambda data: b"CCEg" + data[4:],  # the format before narrow widths and raw chunk ids
    ],
)
def test_records_of_older_formats_are_made_again(corpus, expected, tmp_path, calls, older):
    """A record of an older format (under a key the current code would use) is a miss, and is
    replaced by a record of this format."""
    cache, db_path = _filled(corpus, tmp_path)
    _forget_corpora(cache)
    with sqlite3.connect(db_path) as db:
        old = [(older(data), key) for key, data in db.execute("SELECT key, data FROM entries")]
        db.executemany(
            "UPDATE entries SET data = ?, checksum = ? WHERE key = ?",
            [(data, hashlib.sha256(data).digest(), key) for data, key in old],
        )
    db.close()
    calls.clear()
    index = build_index(corpus, cache=cache, workers=1)
    assert snapshot(index) == expected and index.postings is not None
    assert len(calls) == len(walk(corpus).files)
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert calls == []  # replaced by records with term counts


def test_indexes_built_cold_warm_and_in_workers_have_the_same_postings(corpus, tmp_path):
    cache = str(tmp_path / "cache")
    indexes = [
        build_index(corpus, workers=1),
        build_index(corpus, workers=2),
        build_index(corpus, cache=cache),
        build_index(corpus, cache=cache),
    ]
    first = indexes[0].postings
    assert first is not None
    for index in indexes[1:]:
        assert index.postings is not None and list(index.postings.term_id.items()) == list(
            first.term_id.items()
        )
        for name in ("indptr", "docs", "tfs", "doc_len"):
            x, y = getattr(index.postings, name), getattr(first, name)
            assert np.array_equal(x, y), name
            # a kept corpus's frequencies are read in the narrowest width that holds them
            assert x.dtype == y.dtype or name == "tfs" and narrow_enough(x, y), name


def test_the_files_counts_are_let_go_before_the_corpus_record_is_made(
    corpus, expected, tmp_path, monkeypatch
):
    """The files' term and bucket counts are merged into the postings and the embeddings once;
    the entries that live on until the corpus record is made no longer hold them."""
    held: list[bool] = []
    real = build.arrays_from_entries

    def recording(keys, files, entries, *args, **kwargs):
        held.extend(entry.terms is not None or entry.counts is not None for entry in entries)
        return real(keys, files, entries, *args, **kwargs)

    monkeypatch.setattr(build, "arrays_from_entries", recording)
    assert snapshot(build_index(corpus, cache=str(tmp_path / "cache"), workers=1)) == expected
    assert held and not any(held)


@pytest.mark.parametrize("swept_today", [True, False])
def test_records_unused_for_a_month_are_dropped_on_the_first_open_of_a_day(
    corpus, expected, tmp_path, calls, swept_today
):
    cache, db_path = _filled(corpus, tmp_path)
    _forget_corpora(cache)
    today = index_cache._today()
    _execute(
        db_path,
        f"UPDATE entries SET used = {today - index_cache._KEEP_DAYS - 1}",
        "INSERT OR REPLACE INTO meta (name, value) "
        f"VALUES ('swept', '{today if swept_today else today - 1}')",
    )
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    # Swept already today: the stale records stay and are used; else they were dropped and made again.
    assert len(calls) == (0 if swept_today else len(walk(corpus).files))
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM entries WHERE used < ?", (today,)).fetchone() == (0,)
        assert db.execute("SELECT value FROM meta WHERE name = 'swept'").fetchone() == (str(today),)


@pytest.mark.parametrize(
    "statements",
    [
        (
            "UPDATE meta SET value = 'cce-relevance.index-cache/0' WHERE name = 'schema'",
        ),  # another layout version
        ("DROP TABLE entries", "CREATE TABLE entries (key BLOB PRIMARY KEY, data BLOB)"),  # another shape
        ("DELETE FROM meta",),
    ],
)
def test_another_schema_is_dropped_and_rebuilt(corpus, expected, tmp_path, calls, statements):
    cache, db_path = _filled(corpus, tmp_path)
    _forget_corpora(cache)
    _execute(db_path, *statements)
    calls.clear()
    assert snapshot(build_index(corpus, cache=cache, workers=1)) == expected
    assert len(calls) == len(walk(corpus).files)
    assert _rows(db_path) == len(calls)


def test_an_unusable_cache_directory_means_no_cache(corpus, expected, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert snapshot(build_index(corpus, cache=str(blocker / "cache"), workers=1)) == expected


_BUILD = """
import hashlib, sys
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.store.store import dumps_store
for _ in range(3):
    index = build_index(sys.argv[1], cache=sys.argv[2], workers=1)
    print(hashlib.sha256(dumps_store(index).encode()).hexdigest())
"""


def test_two_runs_at_once_share_a_cache(corpus, expected, tmp_path):
    cache = tmp_path / "cache"
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _BUILD, str(corpus), str(cache)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    want = hashlib.sha256(expected.encode()).hexdigest()
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
        assert out.split() == [want] * 3
    assert _rows(cache / DB_FILE) == len(walk(corpus).files)


def test_the_key_covers_code_grammar_versions_packs_redaction_and_embedder(monkeypatch):
    base = index_cache.cache_context(REFERENCE_PACKS, True, "hash")
    assert (
        len(
            {
                base,
                index_cache.cache_context(REFERENCE_PACKS, False, "hash"),
                index_cache.cache_context(ALL_PACKS, True, "hash"),
                index_cache.cache_context(REFERENCE_PACKS, True, "ollama"),
            }
        )
        == 4
    )
    real_version = index_cache._version
    monkeypatch.setattr(
        index_cache, "_version", lambda name: "0.0.1" if name == "tree-sitter-python" else real_version(name)
    )
    assert index_cache.cache_context(REFERENCE_PACKS, True, "hash") != base
    monkeypatch.setattr(index_cache, "_code_digest", lambda: "another chunker")
    assert index_cache.cache_context(REFERENCE_PACKS, True, "hash") not in (base, None)


def test_without_readable_sources_there_is_no_cache(corpus, expected, tmp_path, monkeypatch):
    monkeypatch.setattr(index_cache, "RECORD_STAGES", (*index_cache.RECORD_STAGES, "no_such"))
    index_cache._code_digest.cache_clear()
    try:
        assert index_cache.cache_context(REFERENCE_PACKS, True, "hash") is None
        assert snapshot(build_index(corpus, cache=str(tmp_path), workers=1)) == expected
        assert not (tmp_path / DB_FILE).exists()
    finally:
        index_cache._code_digest.cache_clear()


@pytest.mark.slow
def test_spawned_workers_give_the_same_index(corpus, expected, monkeypatch):
    """Where fork is not used (macOS, Windows) workers are spawned: everything they get pickles."""
    monkeypatch.setattr(workers, "_START_METHOD", "spawn")
    assert snapshot(build_index(corpus, workers=2)) == expected
    assert snapshot(build_index(corpus, languages=ALL_PACKS, workers=2)) == snapshot(
        reference_index(corpus, ALL_PACKS)
    )


def test_without_a_process_pool_the_files_are_indexed_here(corpus, expected, monkeypatch, calls):
    def no_pool(*args, **kwargs):
        raise OSError("no semaphores here")

    monkeypatch.setattr(workers, "ProcessPoolExecutor", no_pool)
    assert snapshot(build_index(corpus, workers=2)) == expected
    assert len(calls) == len(walk(corpus).files)


def test_a_single_batch_is_indexed_here_without_a_pool(tmp_path, monkeypatch, calls):
    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started for one batch")

    small = tmp_path / "small"
    shutil.copytree(Path("test/fixture/samples"), small)
    want = snapshot(reference_index(small))
    monkeypatch.setattr(workers, "ProcessPoolExecutor", no_pool)
    assert snapshot(build_index(small, workers=2)) == want
    assert calls == []  # indexed as the pool's share, not by the fallback


def test_the_parent_and_the_workers_share_the_batches(corpus, expected, monkeypatch):
    """With N processes the parent indexes batches too (from the small end), the workers the
    rest (from the large end): every file once, the same index."""
    monkeypatch.setattr(workers, "BATCH_BYTES", 4096)
    here = paths_indexed_through(workers, monkeypatch)  # a forked worker's calls stay in the worker
    assert snapshot(build_index(corpus, workers=2)) == expected
    paths = [f.path for f in walk(corpus).files]
    assert here and len(here) < len(paths) and len(set(here)) == len(here)
    sizes = {f.path: len(f.text) for f in walk(corpus).files}
    assert min(sizes[p] for p in paths if p not in here) >= min(sizes[p] for p in here)


def test_how_many_workers():
    assert workers.choose_workers(3, 0) == 3 and workers.choose_workers(0, 10**9) == 1
    assert workers.choose_workers(None, workers.MIN_PARALLEL_BYTES - 1) == 1
    assert workers.choose_workers(None, 10**9) == min(workers.available_cpus(), workers.MAX_AUTO_WORKERS)


_REAL_BATCH = workers._index_batch


def _dying_batch(batch):
    """A worker that dies on one file, as an out-of-memory kill would take it."""
    if any(workers._FILES[p][0] == "lib/json/decoder.py" for p in batch):
        os._exit(3)
    return _REAL_BATCH(batch)


def test_a_pool_that_breaks_leaves_its_remaining_files_to_this_process(corpus, expected, monkeypatch, calls):
    monkeypatch.setattr(workers, "_index_batch", _dying_batch)
    assert snapshot(build_index(corpus, workers=2)) == expected
    assert "lib/json/decoder.py" in calls
