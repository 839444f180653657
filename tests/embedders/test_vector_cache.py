"""The embedding cache: exact vectors back, keyed by embedder identity and text, bounded, shared."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import numpy as np

from cce_relevance.retrieval.embedders import vector_cache
from cce_relevance.retrieval.embedders.vector_cache import VectorCache, text_key


def vectors(n: int, width: int = 256, dtype=np.float32, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {f"text {seed} {i}": rng.standard_normal(width).astype(dtype) for i in range(n)}


def test_vectors_come_back_bit_for_bit_in_their_dtype(tmp_path: Path):
    cache = VectorCache(str(tmp_path))
    made = {**vectors(3), **vectors(2, 768, np.float64, seed=1)}
    cache.put_many("wordllama x", made)
    again = VectorCache(str(tmp_path)).get_many("wordllama x", [*made, "never seen"])
    assert set(again) == set(made)
    for text, vector in made.items():
        assert again[text].dtype == vector.dtype and again[text].tobytes() == vector.tobytes()


def test_another_identity_or_text_is_a_miss(tmp_path: Path):
    cache = VectorCache(str(tmp_path))
    cache.put_many("openai e5 256", vectors(2))
    assert cache.get_many("openai e5 128", list(vectors(2))) == {}
    assert text_key("a", "b") != text_key("a", "c") != text_key("b", "b")


def test_a_file_that_is_not_a_cache_is_replaced(tmp_path: Path):
    (tmp_path / vector_cache.DB_FILE).write_bytes(b"not a database" * 100)
    cache = VectorCache(str(tmp_path))
    cache.put_many("m", vectors(1))
    assert len(cache.get_many("m", list(vectors(1)))) == 1


def test_a_damaged_row_is_a_miss(tmp_path: Path):
    cache = VectorCache(str(tmp_path))
    made = vectors(2)
    cache.put_many("m", made)
    cache.close()
    db = sqlite3.connect(tmp_path / vector_cache.DB_FILE)
    first = next(iter(made))
    db.execute("UPDATE vectors SET data = ? WHERE key = ?", (b"\x00\x00\x80\x7f" * 256, text_key("m", first)))
    db.execute("UPDATE vectors SET data = ? WHERE key != ?", (b"\x01\x02\x03", text_key("m", first)))
    db.commit()
    db.close()
    assert VectorCache(str(tmp_path)).get_many("m", list(made)) == {}  # an infinity, a cut row


def test_it_stays_within_its_bound_dropping_the_least_recently_used(tmp_path: Path, monkeypatch):
    cache = VectorCache(str(tmp_path), max_bytes=400_000)
    monkeypatch.setattr(vector_cache, "_today", lambda: 100)
    old = vectors(100, seed=1)
    cache.put_many("m", old)
    monkeypatch.setattr(vector_cache, "_today", lambda: 101)
    for seed in range(2, 8):
        cache.put_many("m", vectors(100, seed=seed))
    assert cache.live_bytes() <= 400_000
    assert cache.get_many("m", list(old)) == {}  # the oldest went first
    assert len(cache.get_many("m", list(vectors(100, seed=7)))) == 100


def test_rows_unused_for_a_month_are_dropped(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(vector_cache, "_today", lambda: 100)
    VectorCache(str(tmp_path)).put_many("m", vectors(3))
    monkeypatch.setattr(vector_cache, "_today", lambda: 100 + vector_cache.KEEP_DAYS + 1)
    assert VectorCache(str(tmp_path)).get_many("m", list(vectors(3))) == {}


def _writer(directory: str, seed: int) -> None:
    cache = VectorCache(directory)
    for round_ in range(5):
        cache.put_many("m", vectors(40, seed=seed * 10 + round_))
        cache.get_many("m", list(vectors(40, seed=seed * 10 + round_)))
    cache.close()


def test_concurrent_runs_share_one_cache(tmp_path: Path):
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_writer, args=(str(tmp_path), seed)) for seed in range(3)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(120)
        assert p.exitcode == 0
    cache = VectorCache(str(tmp_path))
    for seed in range(3):
        for round_ in range(5):
            made = vectors(40, seed=seed * 10 + round_)
            found = cache.get_many("m", list(made))
            assert {t: v.tobytes() for t, v in found.items()} == {t: v.tobytes() for t, v in made.items()}


def test_an_unusable_directory_means_no_cache(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert VectorCache.open(str(blocker / "cache")) is None
    assert VectorCache.open(None) is None
