"""Splicing the last corpus with the records of the files that changed gives the index a build
from scratch gives: over seeded sequences of random edits — files changed, added, deleted,
renamed, given a secret or non-ASCII text — every spliced index is compared with a cold build
of the same tree: store bytes (chunks, embeddings, imports, token weights), each term's
documents and frequencies, document lengths, chunk-id ranks, the embedding matrix, and BM25,
vector and hybrid rankings of queries made from the tree."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from cce_relevance.retrieval.cache.corpus_record import arrays_from_entries, materialize
from cce_relevance.retrieval.cache.corpus_splice import splice, spliced_id_ranks
from cce_relevance.retrieval.cache.index_cache import CORPORA_DIR
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
from cce_relevance.retrieval.corpus.walk import FileText, walk
from cce_relevance.retrieval.file_indexing.file import index_file
from cce_relevance.retrieval.index import build as index_module
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.ranking.postings import corpus_postings
from cce_relevance.retrieval.ranking.topk import id_ranks
from cce_relevance.retrieval.search.backends import builtin_backend
from tests.retrieval.cache.test_corpus_record import positions_by_file, replaced_by
from tests.retrieval.chunking.test_line_weights import assert_index_lines, assert_same_index_lines
from tests.retrieval.corpora import DOCS_CORPUS
from tests.retrieval.file_indexing.test_file_record import narrow_enough
from tests.retrieval.index.test_build import SECRET_FILE, snapshot

WORDS = ["alpha", "ledger", "quux", "rate_limit", "zebra42", "über", "token", "parse", "retry", "shard"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree("test/fixture/samples", root / "samples")
    shutil.copytree(DOCS_CORPUS, root / "docs")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(stdlib / "json", root / "lib" / "json", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture
def indexed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each build asked records for (the changed ones when it spliced)."""
    sizes: list[int] = []
    real = index_module.indexed_files

    def counting(files, *args, **kwargs):
        sizes.append(len(files))
        return real(files, *args, **kwargs)

    monkeypatch.setattr(index_module, "indexed_files", counting)
    return sizes


def postings_by_term(index: Index) -> dict[str, tuple[list[int], list[float]]]:
    p = index.postings
    assert p is not None
    return {
        term: (p.docs[p.indptr[t] : p.indptr[t + 1]].tolist(), p.tfs[p.indptr[t] : p.indptr[t + 1]].tolist())
        for term, t in p.term_id.items()
    }


def assert_same(spliced: Index, cold: Index, queries: list[str]) -> None:
    assert snapshot(spliced) == snapshot(cold)
    assert_same_index_lines(spliced, cold)
    assert_index_lines(spliced)
    assert list(spliced.file_imports) == list(cold.file_imports) and spliced.walk_skipped == cold.walk_skipped
    assert positions_by_file(spliced) == positions_by_file(cold) == positions_by_file(spliced, True)
    assert postings_by_term(spliced) == postings_by_term(cold)
    assert spliced.postings.docs.dtype == cold.postings.docs.dtype == np.int32
    # (frequencies kept narrow when the corpus is one a record kept unchanged)
    assert cold.postings.tfs.dtype == np.int32 and narrow_enough(spliced.postings.tfs, cold.postings.tfs)
    assert spliced.postings.indptr.dtype == cold.postings.indptr.dtype == np.int64
    assert spliced.postings.doc_len.dtype == cold.postings.doc_len.dtype == np.int64
    assert np.array_equal(spliced.postings.doc_len, cold.postings.doc_len)
    assert spliced.id_rank.dtype == cold.id_rank.dtype == np.int64
    assert np.array_equal(spliced.id_rank, cold.id_rank)
    assert np.array_equal(spliced.matrix, cold.matrix) and spliced.matrix.flags.f_contiguous
    for backend in ("bm25", "vector", "hybrid"):
        a, b = builtin_backend(backend, spliced), builtin_backend(backend, cold)
        for query in queries:
            assert a(query, 10) == b(query, 10), (backend, query)


def edit(root: Path, rng: random.Random, step: int) -> str:
    """One random change to the tree; returns what it did."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    target = rng.choice(files)
    action = rng.choice(["append", "rewrite", "add", "delete", "rename", "secret", "unicode"])
    words = " ".join(rng.choice(WORDS) for _ in range(6))
    if action == "append":
        with target.open("a", encoding="utf-8") as f:
            f.write(f"\n\ndef added_{step}():\n    return '{words}'\n")
    elif action == "rewrite":
        text = target.read_text(encoding="utf-8")
        target.write_text(text[: len(text) // 2] + f"\n# {words}\n", encoding="utf-8")
    elif action == "add":
        (root / "lib" / f"new_{step}.py").write_text(
            f"class New{step}:\n    def go(self):\n        '{words}'\n", encoding="utf-8"
        )
    elif action == "delete" and len(files) > 5:
        target.unlink()
    elif action == "rename":
        target.rename(target.with_name(f"moved_{step}_{target.name}"))
    elif action == "secret":
        (root / f"secret_{step}.py").write_text(SECRET_FILE, encoding="utf-8")
    else:
        (root / "samples" / f"unicode_{step}.rs").write_text(
            f"// é漢\U0001f600 {words}\nfn f_{step}() {{}}\n", encoding="utf-8"
        )
    return f"{action} {target.name}"


@pytest.mark.parametrize("seed", range(4))
def test_spliced_corpora_equal_cold_builds_over_random_edits(tree, tmp_path, indexed, seed):
    rng = random.Random(seed)
    cache = str(tmp_path / "cache")
    build_index(tree, cache=cache, workers=1)
    assert indexed == [len(walk(tree).files)]
    queries = [
        "parse json decoder",
        "rate limit token",
        "quux zebra42",
        "über ledger",
        "backup restore",
        "def scanstring",
        "alpha",
    ]
    for step in range(6):
        done = edit(tree, rng, step)
        cold = build_index(tree, workers=1)
        indexed.clear()
        spliced = build_index(tree, cache=cache, workers=1)
        assert len(indexed) == 1 and indexed[0] <= 2, done  # only the changed files were asked for
        assert_same(spliced, cold, queries)
        indexed.clear()
        assert_same(build_index(tree, cache=cache, workers=1), cold, queries)  # kept as spliced
        assert indexed == []


@pytest.mark.parametrize("seed", range(4, 7))
def test_spliced_corpora_equal_cold_builds_after_several_edits_at_once(tree, tmp_path, indexed, seed):
    """Files changed, added and removed together, anywhere in walk order (first and last included)."""
    rng = random.Random(seed)
    cache = str(tmp_path / "cache")
    build_index(tree, cache=cache, workers=1)
    for step in range(3):
        files = walk(tree).files
        done = [edit(tree, rng, 10 * step + k) for k in range(rng.randint(2, 4))]
        for f in (files[0], files[-1]) if step == 1 else ():
            with (tree / f.path).open("a", encoding="utf-8") as out:
                out.write(f"\n# edge {step} {rng.choice(WORDS)}\n")
        indexed.clear()
        spliced = build_index(tree, cache=cache, workers=1)
        assert len(indexed) == 1 and indexed[0] <= len(done) + 2, done
        assert_same(
            spliced, build_index(tree, workers=1), ["parse json decoder", "rate limit token", "über ledger"]
        )


def _splice_ids(rng: random.Random) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Old ids, new ids, the old-to-new chunk map (-1: gone) and the new chunks that are fresh:
    kept chunks keep their order, fresh ones come anywhere between them; ids repeat, and hold
    NUL bytes in some draws (compared as strings, not as numpy byte strings)."""
    alphabet = "ab\0" if rng.random() < 0.3 else "abc"

    def an_id() -> str:
        return "".join(rng.choice(alphabet) for _ in range(2)).ljust(16, rng.choice("az"))

    old = [an_id() for _ in range(rng.randint(0, 40))]
    new: list[str] = []
    fresh: list[int] = []
    chunk_map = np.full(len(old), -1, dtype=np.int32)
    for j, chunk_id in enumerate([*old, None]):
        for _ in range(rng.choice([0, 0, 0, 1, 3])):
            fresh.append(len(new))
            new.append(an_id())
        if chunk_id is not None and rng.random() < 0.8:
            chunk_map[j] = len(new)
            new.append(chunk_id)
    return old, new, chunk_map, np.array(fresh, dtype=np.int64)


@pytest.mark.parametrize("seed", range(300))
def test_spliced_id_ranks_are_the_ranks_of_the_new_ids(seed):
    old, new, chunk_map, fresh = _splice_ids(random.Random(seed))
    ranks = spliced_id_ranks(id_ranks(old), chunk_map, "".join(new).encode("ascii"), fresh)
    assert ranks.dtype == np.int64 and ranks.tolist() == id_ranks(new).tolist()


def test_a_term_only_a_deleted_file_had_leaves_the_postings(tree, tmp_path, indexed):
    cache = str(tmp_path / "cache")
    lonely = tree / "lonely.py"
    lonely.write_text("def xylophonequartz():\n    return 1\n", encoding="utf-8")
    assert "xylophonequartz" in build_index(tree, cache=cache, workers=1).postings.term_id
    lonely.unlink()
    spliced = build_index(tree, cache=cache, workers=1)
    assert indexed[-1] == 0  # nothing to index: only a deletion
    assert "xylophonequartz" not in spliced.postings.term_id
    assert_same(spliced, build_index(tree, workers=1), ["xylophonequartz", "parse"])


def test_when_most_files_changed_every_record_is_read(tree, tmp_path, indexed):
    cache = str(tmp_path / "cache")
    build_index(tree, cache=cache, workers=1)
    files = walk(tree).files
    for f in files[: len(files) // 2 + 1]:
        with (tree / f.path).open("a", encoding="utf-8") as out:
            out.write("\n")
    indexed.clear()
    index = build_index(tree, cache=cache, workers=1)
    assert indexed == [len(files)]
    assert_same(index, build_index(tree, workers=1), ["parse json"])


def test_another_corpus_in_the_same_cache_is_indexed_whole(tree, tmp_path, indexed):
    cache = str(tmp_path / "cache")
    build_index(tree, cache=cache, workers=1)
    other = tmp_path / "other"
    shutil.copytree("test/fixture/samples", other)
    indexed.clear()
    index = build_index(other, cache=cache, workers=1)
    assert indexed == [len(walk(other).files)]
    assert_same(index, build_index(other, workers=1), ["buffer"])


def test_a_damaged_last_corpus_is_not_spliced(tree, tmp_path, indexed):
    cache = tmp_path / "cache"
    build_index(tree, cache=str(cache), workers=1)
    (record,) = (cache / CORPORA_DIR).iterdir()
    replaced_by(record, record.read_bytes()[:-3])
    with (tree / "samples" / "python.py").open("a", encoding="utf-8") as out:
        out.write("\n# changed\n")
    indexed.clear()
    index = build_index(tree, cache=str(cache), workers=1)
    assert indexed == [len(walk(tree).files)]
    assert_same(index, build_index(tree, workers=1), ["buffer"])


def test_contents_that_are_not_slices_move_with_their_chunks(tree):
    """Such contents (never seen from real files, but the record allows them) are kept by chunk
    index; a changed file before them shifts that index."""
    files = [(f.path, f.text) for f in walk(tree).files]
    entries = [index_file(path, text, REFERENCE_PACKS, True, True) for path, text in files]
    last = len(entries) - 1
    entries[last] = dataclasses.replace(entries[last], char_spans=[None] * len(entries[last].chunks))
    keys = [hashlib.sha256(path.encode()).digest() for path, _ in files]
    old = arrays_from_entries(
        keys,
        files,
        entries,
        corpus_postings([e.terms for e in entries]),
        id_ranks([c.chunk_id for e in entries for c in e.chunks]),
    )
    at = next(i for i, (path, _) in enumerate(files) if path.endswith(".py"))
    changed_text = files[at][1] + "\ndef one_more():\n    return 2\n"
    files[at] = (files[at][0], changed_text)
    keys[at] = b"another key".ljust(32, b"\0")
    fresh = index_file(files[at][0], changed_text, REFERENCE_PACKS, True, True)
    spliced = materialize(splice(old, keys, files, {at: fresh}), files)
    assert len(fresh.chunks) == len(entries[at].chunks) + 1 and at < last  # the shift is real
    entries[at] = fresh
    want = [c for e in entries for c in e.chunks]
    assert [dataclasses.astuple(c) for c in spliced.chunks] == [dataclasses.astuple(c) for c in want]


def test_a_splice_holds_the_changed_texts_alone_and_a_failed_one_reads_them_all_again(
    tree, tmp_path, indexed, monkeypatch
):
    """The splice is given the texts of the files that changed, the others given up for the
    `FileText` that reads them; when it fails, every file is indexed from its text read again."""
    cache = tmp_path / "cache"
    build_index(tree, cache=str(cache), workers=1)
    with (tree / "samples" / "python.py").open("a", encoding="utf-8") as out:
        out.write("\n# changed again\n")
    given: list[dict[str, type]] = []

    def failing(old, keys, files, fresh):
        given.append({path: type(text) for path, text in files})
        raise ValueError("a file's record has no bucket or term counts")

    monkeypatch.setattr(index_module, "splice", failing)
    indexed.clear()
    index = build_index(tree, cache=str(cache), workers=1)
    (held,) = given
    assert {path for path, kind in held.items() if kind is str} == {"samples/python.py"}
    assert set(held.values()) == {str, FileText}
    assert indexed == [1, len(walk(tree).files)]
    assert_same(index, build_index(tree, workers=1), ["buffer"])
