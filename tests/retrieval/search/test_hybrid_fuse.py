"""`hybrid.fuse` against §intent and §hybrid-candidates–§diversity-cap written out plainly, on inputs
real corpora never give.

The differential tests (test_fast_ranking.py) compare whole rankings on real corpora, where cosines
are finite and within [-1, 1]. Here the candidate lists and cosines are drawn freely — NaN,
infinities, cosines outside [-1, 1], ties, candidates in one list or both, empty lists — with
random weights, so that every branch of the scores (RRF terms, the normalisation, the clamped
vector score, the keyword distance, the path penalty, the code-lookup boost) is compared with the
per-candidate formulas, bit for bit.
"""

from __future__ import annotations

import math
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.numeric import score_key
from cce_relevance.reference import RankingParams
from cce_relevance.retrieval.search.hybrid import file_hints, fuse, is_code_lookup
from cce_relevance.retrieval.tokens import ascii_lower, unique_tokens
from tests.retrieval.corpora import build

FILES = {
    "a.txt": "alpha beta\n",
    "B.txt": "Gamma DELTA alpha\n",
    "tests/c.txt": "beta beta\n",
    "docs/d.md": "delta\n",
    "e.txt": "omega\n",
    "spec_f.txt": "gamma omega\n",
    "g.txt": "alphabet\n",
    "h.txt": "epsilon\n",
}
INDEX = build(FILES)
N = len(INDEX.chunks)

_COSINES = st.one_of(
    st.floats(-1.0, 1.0),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, math.nan, math.inf, -math.inf, 3.0, -7.5]),
    st.floats(allow_nan=True, allow_infinity=True),
)
_QUERIES = st.lists(
    st.sampled_from(
        [
            "alpha",
            "beta",
            "gamma",
            "delta",
            "omega",
            "zeta",
            "function",
            "class",
            "a.txt",
            "spec",
            "where",
            "is",
            "defined",
            "find",
        ]
    ),
    min_size=1,
    max_size=4,
).map(" ".join)


def _formula(query, top_k, cosines, by_cosine, by_bm25, params):
    """The scores as the spec writes them, one candidate at a time, then a full sort and the cap."""
    w = params.fts_boost_code_lookup if is_code_lookup(query) else 1.0
    rrf = {}
    for pos, d in enumerate(by_cosine):
        rrf[d] = 0.0 + 1.0 / (params.rrf_k + pos)
    for pos, d in enumerate(by_bm25):
        rrf[d] = rrf.get(d, 0.0) + w * (1.0 / (params.rrf_k + pos))
    max_rrf = max([0.0, *(rrf[d] for d in sorted(rrf))])
    terms, hints = unique_tokens(query), file_hints(query)
    finals = []
    for d in sorted(rrf):
        chunk = INDEX.chunks[d]
        norm = rrf[d] / max_rrf if score_key(max_rrf) != 0 else 0.0
        cos = cosines[d] if cosines is not None else 0.0
        vector_score = 1.0 - min(max((1.0 - cos) / 2.0, 0.0), 1.0)
        content, path = ascii_lower(chunk.content), ascii_lower(chunk.file_path)
        found = d in by_bm25 or any(t in content for t in terms) or any(h in path for h in hints)
        dist = 0.0 if found else 2.0
        confidence = ((params.w_vector * vector_score) + (params.w_keyword * max(0.0, 1.0 - dist / 5.0))) + (
            params.w_recency * 0.0
        )
        final = (params.confidence_weight * confidence) + ((1.0 - params.confidence_weight) * norm)
        if any(marker in path for marker in params.path_penalty_markers):
            final *= params.path_penalty
        finals.append((d, final))
    finals.sort(key=lambda p: (-score_key(p[1]), INDEX.chunk_ids[p[0]], p[0]))
    kept, per_file = [], {}
    for d, final in finals:
        if len(kept) >= top_k:
            break
        path = INDEX.chunks[d].file_path
        if per_file.get(path, 0) < params.max_chunks_per_file:
            per_file[path] = per_file.get(path, 0) + 1
            kept.append((d, final))
    return kept


def _bits(pairs):
    return [(d, struct.pack("<d", s)) for d, s in pairs]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    by_cosine=st.lists(st.integers(0, N - 1), unique=True, max_size=N),
    by_bm25=st.lists(st.integers(0, N - 1), unique=True, max_size=N),
    cosine_values=st.lists(_COSINES, min_size=N, max_size=N),
    with_cosines=st.booleans(),
    query=_QUERIES,
    top_k=st.integers(0, N + 1),
    rrf_k=st.one_of(st.floats(1e-3, 1e3), st.just(60.0)),
    weights=st.tuples(*[st.floats(0.0, 4.0)] * 5),
    confidence_weight=st.floats(0.0, 1.0),
    max_chunks_per_file=st.integers(1, 3),
)
def test_fuse_is_the_per_candidate_formulas(
    by_cosine,
    by_bm25,
    cosine_values,
    with_cosines,
    query,
    top_k,
    rrf_k,
    weights,
    confidence_weight,
    max_chunks_per_file,
):
    boost, w_vector, w_keyword, w_recency, penalty = weights
    params = RankingParams(
        rrf_k=rrf_k,
        fts_boost_code_lookup=boost,
        w_vector=w_vector,
        w_keyword=w_keyword,
        w_recency=w_recency,
        path_penalty=penalty,
        confidence_weight=confidence_weight,
        max_chunks_per_file=max_chunks_per_file,
        graph_enabled=False,
    )
    cosines = dict(enumerate(cosine_values)) if with_cosines else None
    got = fuse(INDEX, query, top_k, cosines, by_cosine if with_cosines else [], by_bm25, params)
    want = _formula(query, top_k, cosines, by_cosine if with_cosines else [], by_bm25, params)
    assert _bits((r.index, r.score) for r in got) == _bits(want)
    assert [r.rank for r in got] == list(range(1, len(got) + 1))


def test_fuse_without_candidates_is_empty():
    assert fuse(INDEX, "alpha", 5, {}, [], []) == []
    assert fuse(INDEX, "alpha", 5, None, [], []) == []
