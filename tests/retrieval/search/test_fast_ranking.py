"""Differential test: the fast ranking path against the straightforward one, on real corpora.

The production backends select the first k without sorting every chunk (float32 cosine
candidates rescored exactly, numpy BM25 postings, partial selection by six-decimal key);
tests/retrieval/reference_ranking.py sorts everything with Python keys, query by query. Both
must return the same chunks in the same order with bit-identical raw scores.

Corpora: the reference's sample corpus and docs corpus, our starter corpora, this repository's
own source, and a deterministic slice of the installed Python standard library (large enough
that the float32 candidate selection is taken). Queries: definition names and docstring lines
from each corpus, seeded random mixes of its tokens, single very common tokens (massive BM25
and cosine ties), code-lookup and file-hint phrasings, tokens the corpus lacks and token-less
text, at several k and under non-default ranking parameters.
"""

from __future__ import annotations

import random
import re
import shutil
import struct
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.reference import REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.chunking.chunk import _CONTENT, SlicedChunk
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index, fast_ascii_lower, index_from_parts
from cce_relevance.retrieval.ranking.bm25 import BM25
from cce_relevance.retrieval.ranking.cosine import CosineIndex
from cce_relevance.retrieval.search.backends import builtin_backend
from cce_relevance.retrieval.search.hybrid import bm25_only_search, hybrid_search, vector_search
from cce_relevance.retrieval.tokens import ascii_lower, tokenize, unique_tokens
from tests.retrieval.corpora import DOCS_CORPUS, SAMPLES, build, read_tree
from tests.retrieval.ranking.test_postings import assert_same_bm25
from tests.retrieval.reference_ranking import ReferenceRanker

REPO_ROOT = Path(__file__).resolve().parents[3]
VARIANTS = (
    REFERENCE_PARAMS,
    RankingParams(
        bm25_k1=0.6,
        bm25_b=0.3,
        rrf_k=20.0,
        candidate_multiplier=5,
        max_chunks_per_file=1,
        graph_max_bonus_files=4,
        path_penalty=0.5,
    ),
)
_NAME = re.compile(r"\b(?:def|class|function|fn|struct|impl|module|interface)\s+([A-Za-z_]\w*)")
_DOC = re.compile(r"^\s*(?:[rub]?\"\"\"|'''|#+|//+|/\*+|\*)\s*(\S.*)$")
_FIXED_QUERIES = [
    "???",
    "日本語",
    "\x1c",
    "zzqxjv wwpqk",
    "self",
    "the",
    "return",
    "def",
    "if else",
    "where is the config defined",
    "find the parse function",
    "utils.py helper",
    "class Loader load",
    "self self self return",
    "__init__",
    "test_",
    "x",
    "0",
]


def _bits(results) -> list[tuple[int, bytes]]:
    return [(d, struct.pack("<d", s)) for d, s in results]


def _fast(results) -> list[tuple[int, bytes]]:
    return _bits([(r.index, r.score) for r in results])


def corpus_queries(index: Index, seed: int, n_derived: int, n_mixes: int) -> list[str]:
    """Names and docstring lines from the corpus, random token mixes, then the fixed edge cases."""
    names, docs = [], []
    for c in index.chunks:
        lines = c.content.split("\n")
        if match := _NAME.search(lines[0]):
            names.append(match.group(1))
        docs.extend(m.group(1) for line in lines[1:3] if (m := _DOC.match(line)))
    rng = random.Random(seed)
    vocabulary = sorted({t for c in index.chunks[:3000] for t in tokenize(c.content)})
    derived = sorted(set(names)) + sorted(set(docs))
    picked = rng.sample(derived, min(n_derived, len(derived)))
    mixes = (
        [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 6))) for _ in range(n_mixes)]
        if vocabulary
        else []
    )
    return picked + mixes + _FIXED_QUERIES


def assert_same_rankings(index: Index, queries: list[str], ks: tuple[int, ...]) -> int:
    """Compare all three backends on every query, k and variant; returns the comparisons made."""
    reference = ReferenceRanker(index)
    compared = 0
    for i, query in enumerate(queries):
        qvec = hash_embed(query)
        k = ks[i % len(ks)]
        params = VARIANTS[i % len(VARIANTS)]
        context = (
            f"query {query!r}, k={k}, {'variant' if params is not REFERENCE_PARAMS else 'reference'} params"
        )
        assert _fast(bm25_only_search(index, query, k, params)) == _bits(reference.bm25(query, k, params)), (
            context
        )
        assert _fast(vector_search(index, qvec, k)) == _bits(reference.vector(qvec, k)), context
        assert _fast(hybrid_search(index, qvec, query, k, params)) == _bits(
            reference.hybrid(qvec, query, k, params)
        ), context
        compared += 3
    return compared


def assert_bm25_from_postings_is_tokenizing(index: Index, queries: list[str]) -> None:
    """The index's BM25 (built from the postings counted while indexing) against one that
    tokenizes the chunk contents: the same arrays, and bit-identical rankings."""
    assert index.postings is not None
    for params in VARIANTS:
        fast = index.bm25(params)
        tokenizing = BM25([c.content for c in index.chunks], index.chunk_ids, params.bm25_k1, params.bm25_b)
        assert_same_bm25(fast, tokenizing)
        for query in queries:
            terms = unique_tokens(query)
            assert _fast(fast.rank(terms)) == _fast(tokenizing.rank(terms)), query


def _backend_hits_match(index: Index, queries: list[str], k: int) -> None:
    # Through the relevance backends as the harness calls them (trim guard, cut to k).
    reference = ReferenceRanker(index)
    for query in queries:
        qvec = hash_embed(query)
        want = {
            "bm25": reference.bm25(query, k),
            "vector": reference.vector(qvec, k),
            "hybrid": reference.hybrid(qvec, query, k)[:k],
        }
        for name, ranked in want.items():
            hits = builtin_backend(name, index)(query, k)
            assert [(h.chunk_id, struct.pack("<d", h.score)) for h in hits] == [
                (index.chunk_ids[d], struct.pack("<d", s)) for d, s in ranked
            ], (name, query)


# ---------------------------------------------------------------- small corpora: every query, many k


@pytest.mark.parametrize("corpus", [SAMPLES, DOCS_CORPUS])
def test_upstream_corpora(upstream, corpus):
    index = build_index(upstream / corpus)
    queries = corpus_queries(index, seed=1, n_derived=40, n_mixes=40)
    assert assert_same_rankings(index, queries, ks=(1, 2, 3, 5, 10, 50)) >= 3 * len(_FIXED_QUERIES)
    _backend_hits_match(index, queries[:20], 5)
    assert_bm25_from_postings_is_tokenizing(index, queries)


@pytest.mark.parametrize("corpus", ["test/fixture/samples", "eval/relevance/docs-corpus"])
def test_starter_corpora(corpus):
    index = build_index(REPO_ROOT / corpus)
    queries = corpus_queries(index, seed=2, n_derived=40, n_mixes=40)
    assert_same_rankings(index, queries, ks=(1, 3, 5, 10, 1000))
    assert_bm25_from_postings_is_tokenizing(index, queries)


# ---------------------------------------------------------------- larger corpora


@pytest.fixture(scope="module")
def own_source_index(tmp_path_factory) -> Index:
    """This repository's package and tests, copied so that files edited meanwhile cannot race."""
    root = tmp_path_factory.mktemp("own-source")
    for part in ("cce_relevance", "tests/retrieval", "tests/evaluation"):
        shutil.copytree(REPO_ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    return build_index(root)


def test_own_source(own_source_index):
    index = own_source_index
    assert len(index.chunks) > 1000
    queries = corpus_queries(index, seed=3, n_derived=120, n_mixes=60)
    assert_same_rankings(index, queries, ks=(1, 5, 10, 20, 10, 3))
    _backend_hits_match(index, queries[:30], 10)


def _stdlib_slice(limit_files: int = 220) -> list[Path]:
    """Every n-th .py file of the standard library (sorted paths, tests and site-packages excluded)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p
        for p in root.rglob("*.py")
        if not {"site-packages", "test", "tests", "idle_test"} & set(p.relative_to(root).parts)
    )
    step = max(1, len(files) // limit_files)
    return [p for p in files[::step] if p.stat().st_size < 400_000][:limit_files]


@pytest.fixture(scope="module")
def stdlib_index(tmp_path_factory) -> Index:
    src_root = Path(sysconfig.get_paths()["stdlib"])
    root = tmp_path_factory.mktemp("stdlib-slice")
    for p in _stdlib_slice():
        target = root / p.relative_to(src_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
    return build_index(root)


@pytest.mark.slow
def test_stdlib_slice(stdlib_index):
    index = stdlib_index
    # Large enough that hybrid's 3k vector candidates (k = 10) come from the float32 selection.
    assert len(index.chunks) >= 4 * 30 * 32
    queries = corpus_queries(index, seed=4, n_derived=240, n_mixes=80)
    assert assert_same_rankings(index, queries, ks=(10, 1, 5, 20, 3, 10, 30)) >= 900
    _backend_hits_match(index, queries[:40], 10)
    assert_bm25_from_postings_is_tokenizing(index, queries)


@pytest.mark.slow
def test_stdlib_slice_rows_scored_from_the_count_matrix(stdlib_index, monkeypatch):
    """Candidates selected from the bucket counts' float32 approximations and rescored from the
    same counts (retrieval/ranking/cosine.py `_approximations_from_counts`, `_exact_values`):
    the same rankings, and the float64 matrix is never made."""
    index = stdlib_index
    fresh = CosineIndex.of_hash_embeddings(index.embeddings, index.id_rank, lambda: index.matrix)
    monkeypatch.setitem(index.__dict__, "cosine", fresh)  # the cached property, for this test only
    queries = corpus_queries(index, seed=5, n_derived=60, n_mixes=20)
    assert assert_same_rankings(index, queries, ks=(10, 1, 5)) >= 200
    assert fresh._counts is not None and fresh._approximate is None and fresh._matrix is None


@pytest.mark.slow
def test_stdlib_slice_large_k_and_ties(stdlib_index):
    # k beyond the float32 path's range, and queries whose candidates tie massively.
    queries = ["self", "return", "the", "if", "none", "???", "import os", "def __init__ self"]
    assert_same_rankings(stdlib_index, queries, ks=(200, 1000, 5000))


# ---------------------------------------------------------------- the query side's shortcuts


@given(
    st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=60)
    | st.text(alphabet="AZaz_09 \u0130\u212a\u017f\u00c9\ud800\udfff\U0001f600", max_size=60)
)
def test_fast_ascii_lower_is_ascii_lower(text):
    """Lowercasing through UTF-8 bytes folds A–Z only, like `ascii_lower` (not `İ`, the Kelvin sign,
    `ſ`, `É`), and keeps lone surrogates."""
    assert fast_ascii_lower(text) == ascii_lower(text)


def test_lazy_lowercased_contents_are_ascii_lower(own_source_index):
    """Hybrid's keyword test reads `Index.lower_contents` lazily; every entry is `ascii_lower` of
    the content, and an unchanged content is handed back as itself."""
    index = own_source_index
    lower = index.lower_contents
    for d in [*range(0, len(index.chunks), 7), len(index.chunks) - 1, 0]:
        content = index.chunks[d].content
        assert lower[d] == ascii_lower(content)
        assert (lower[d] is content) == (ascii_lower(content) == content)
    assert index.lower_contents is lower


def test_lowercased_contents_keep_no_content_in_the_chunks(tmp_path):
    """The keyword test lowercases a content without keeping it in its chunk: an indexed or
    cached chunk whose content was not read before has none made after, and every content and
    lowercased content is the one `chunk_file` gives (the plain index of the same files)."""
    shutil.copytree(SAMPLES, tmp_path / "corpus")
    plain = build(read_tree(tmp_path / "corpus"))
    for cache in (None, tmp_path / "cache", tmp_path / "cache"):  # cold, then from the corpus record
        index = build_index(tmp_path / "corpus", protect_secrets=False, cache=cache)
        assert len(index.chunks) == len(plain.chunks) > 20
        lower = index.lower_contents
        for d, chunk in enumerate(index.chunks):
            assert isinstance(chunk, SlicedChunk)
            assert lower[d] == ascii_lower(plain.chunks[d].content)
            with pytest.raises(AttributeError):
                _CONTENT.__get__(chunk)  # still not made
        assert [c.content for c in index.chunks] == [c.content for c in plain.chunks]


def test_keyword_test_finds_tokens_only_in_uppercase_text():
    """Vector-only candidates whose query token appears only as `LOADER`/`Loader` (the plain
    search fails, the lowercased one finds it), beside ones that lack it, against the reference."""
    files = {
        f"m{i}.py": f"def f{i}():\n"
        f"    return {'LOADER' if i % 3 == 0 else 'Loader' if i % 3 == 1 else 'other'}_x{i} + cfg\n"
        for i in range(30)
    }
    files["z.py"] = "def loaderish():\n    return cfg\n"
    index = build(files)
    queries = ["loader cfg", "cfg", "loader", "Loader x1", "return cfg", "z.py loader", "x7 cfg loader"]
    assert assert_same_rankings(index, queries, ks=(1, 3, 5, 10, 40)) == 3 * len(queries)


@pytest.mark.slow
def test_graph_expansion_over_files_whose_chunks_are_not_consecutive(stdlib_index):
    """Graph expansion reads a file's chunks as one slice when they are consecutive in index order
    (every built index); an index whose files' chunks interleave takes the gathering path."""
    base = stdlib_index
    by_file = base.chunks_by_file
    files = sorted(by_file)
    # Interleave the chunks of neighbouring files: a, b, a, b, ... (each file's own order kept).
    order: list[int] = []
    for left, right in zip(files[0::2], files[1::2], strict=False):
        a, b = by_file[left], by_file[right]
        for i in range(max(len(a), len(b))):
            order.extend(x[i] for x in (a, b) if i < len(x))
    if len(files) % 2:
        order.extend(by_file[files[-1]])
    chunks = [base.chunks[d] for d in order]
    index = index_from_parts(chunks, base.file_imports, base.file_token_estimates, base.embedder)
    assert any(m[-1] - m[0] + 1 != len(m) for m in index.chunks_by_file.values())
    queries = corpus_queries(index, seed=5, n_derived=60, n_mixes=20)
    assert assert_same_rankings(index, queries, ks=(10, 3, 20)) >= 200
