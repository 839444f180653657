"""Hybrid search (§hybrid), BM25-only and the relevance backends (§bm25-only, §backends), edge cases
(§edge-cases), and the
worked examples of §hybrid-examples and §verified-runs.

Hand computations are written next to each expected number. Small corpora are checked for
embedding-bucket collisions first, so their cosines are plain shared-token ratios.
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.numeric import score_key
from cce_relevance.reference import REFERENCE_PARAMS, RankingParams
from cce_relevance.reporting.numbers import format6
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.search.backends import builtin_backend
from cce_relevance.retrieval.search.hybrid import (
    bm25_only_search,
    file_hints,
    hybrid_search,
    is_code_lookup,
    rank_core,
    vector_search,
)
from tests.retrieval.corpora import (
    DOCS_CORPUS,
    SAMPLES,
    buckets_distinct,
    build,
    build_dir,
    hit_rows,
    opposite_sign_pair,
    read_tree,
    ref_tokenize,
    rows,
    write_corpus,
)

NO_GRAPH = RankingParams(graph_enabled=False)


def _no_collisions(index, query):
    for c in index.chunks:
        assert buckets_distinct(ref_tokenize(c.content) + ref_tokenize(query)), c.content


def _hybrid(index, query, k, params=REFERENCE_PARAMS):
    return hybrid_search(index, hash_embed(query), query, k, params)


@pytest.fixture(scope="module")
def samples(upstream):
    return build_dir(upstream / SAMPLES)


# ---------------------------------------------------------------- §intent intent


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # 1. whole tokens function / class / method / def (after ASCII lowercasing)
        ("the function", True),
        ("Class Loader", True),
        ("METHOD", True),
        ("def read", True),
        ("functions", False),
        ("classy loader", False),
        ("my_function", False),
        ("defined", False),
        # 2. ".ext" followed by end or a non-[A-Za-z0-9_] character
        ("app.py", True),
        ("see util.ts please", True),
        ("app.tsx", False),
        ("app.tsx util.ts", True),
        ("x.jsx", True),
        ("x.javascript", False),
        ("main.go!", True),
        ("x.RS", True),
        ("x.java", True),
        ("x.py_", False),
        ("x.py2", False),
        ("x.pyé", True),
        ("x.rb.", True),
        ("x.rsx.rs", True),
        ("x.c", False),
        ("x.tsx.tsx", False),
        # 3. "where is " with the trailing space
        ("where is config", True),
        ("WHERE IS x", True),
        ("nowhere is x", True),
        ("where is", False),
        ("where-is x", False),
        # 4. " defined" with the leading space
        ("where it is defined", True),
        ("undefined value", False),
        ("defined here", False),
        # 5. "find " then " function" somewhere after it
        ("find all functions", True),
        ("all functions", False),
        ("functions to find ", False),
        ("refind x functionality", True),
        ("find functions", True),
        ("findfunction", False),
        ("all functions to find x", False),  # " function" only BEFORE the first "find "
        ("find the func", False),
        ("", False),
        ("???", False),
    ],
)
def test_is_code_lookup(query, expected):
    assert is_code_lookup(query) is expected


@pytest.mark.parametrize(
    ("query", "hints"),
    [
        ("open config.yml, please", ["config.yml,"]),  # punctuation stays
        ("README.MD", ["readme.md"]),
        ("Ä.TXT", ["Ä.txt"]),  # ASCII-lowercased only
        ("a.b\u3000c.d", ["a.b", "c.d"]),  # Unicode whitespace splits
        ("x\x1cy.z", ["x\x1cy.z"]),  # U+001C does not split (Rust)
        ("no dots here", []),
        (". .. x", [".", ".."]),
    ],
)
def test_file_hints(query, hints):
    assert file_hints(query) == hints


# ---------------------------------------------------------------- hand-computed hybrid scores

H_FILES = {"a.txt": "alpha beta", "b.txt": "gamma"}


@pytest.fixture(scope="module")
def h_index():
    idx = build(H_FILES)
    for q in ("alpha function", "alpha classy", "alpha b.txt"):
        _no_collisions(idx, q)
    return idx


def test_hybrid_by_hand_code_lookup_boost(h_index):
    # Query `alpha function`: code lookup (token `function`) -> w = 1.5.
    # cos(a) = 1/2 (one shared token of two, both norms sqrt2), cos(b) = 0 -> vranks a 0, b 1.
    # BM25: only a matches (`alpha`) -> frank a 0.
    # rrf a = 1/60 + 1.5 * (1/60) = 2.5/60 = max; rrf b = 1/61; norm b = 60/152.5 = 0.393443.
    # keyword: a contains `alpha` -> 1.0; b -> 0.6. vector_score a = 1 - 0.25 = 0.75, b = 0.5.
    # final a = 0.5 * (0.375 + 0.4) + 0.5 * 1 = 0.8875
    # final b = 0.5 * (0.25 + 0.24) + 0.5 * 0.393443 = 0.441721
    assert is_code_lookup("alpha function")
    assert rows(h_index, _hybrid(h_index, "alpha function", 2)) == [
        ("a.txt", 1, 1, "0.887500"),
        ("b.txt", 1, 1, "0.441721"),
    ]


def test_hybrid_by_hand_without_boost(h_index):
    # Query `alpha classy`: not a code lookup (`classy` is not the token `class`) -> w = 1.0.
    # Same cosines; rrf a = 2/60, norm b = (1/61)/(2/60) = 30/61 = 0.491803.
    # final b = 0.245 + 0.5 * 0.491803 = 0.490902 ; final a = 0.8875.
    assert rows(h_index, _hybrid(h_index, "alpha classy", 2)) == [
        ("a.txt", 1, 1, "0.887500"),
        ("b.txt", 1, 1, "0.490902"),
    ]


@pytest.fixture(scope="module")
def h_index_upper():
    idx = build({"a.txt": "alpha beta", "B.TXT": "gamma"})
    _no_collisions(idx, "alpha b.txt")
    return idx


def test_file_hint_matches_ascii_lowercased_path(h_index_upper):
    # As below, with the file named `B.TXT`: the hint is compared with ascii_lower(file_path).
    assert rows(h_index_upper, _hybrid(h_index_upper, "alpha b.txt", 2)) == [
        ("a.txt", 1, 1, "0.876031"),
        ("B.TXT", 1, 1, "0.570902"),
    ]


def test_hybrid_by_hand_file_hint(h_index):
    # Query `alpha b.txt`: tokens alpha, b, txt (norm sqrt3); cos a = 1/sqrt6 = 0.408248, cos b = 0.
    # w = 1 (`.txt` is not an intent extension). keyword b: no token is a substring of `gamma`,
    # but the hint `b.txt` is a substring of the path `b.txt` -> 1.0 (instead of 0.6).
    # vector_score a = 1 - (1 - 0.408248)/2 = 0.704124 -> final a = 0.5*(0.352062 + 0.4) + 0.5 = 0.876031
    # final b = 0.5 * (0.25 + 0.4) + 0.5 * 30/61 = 0.325 + 0.245902 = 0.570902
    assert file_hints("alpha b.txt") == ["b.txt"]
    assert rows(h_index, _hybrid(h_index, "alpha b.txt", 2)) == [
        ("a.txt", 1, 1, "0.876031"),
        ("b.txt", 1, 1, "0.570902"),
    ]


def test_top_k_limits_and_pool(h_index):
    assert rows(h_index, _hybrid(h_index, "alpha function", 1)) == [("a.txt", 1, 1, "0.887500")]
    assert _hybrid(h_index, "alpha function", 0) == []  # §edge-cases top_k = 0
    assert rank_core(h_index, hash_embed("alpha"), "alpha", 0) == []


@pytest.mark.parametrize(("content", "expected"), [("this thing", "0.825000"), ("that thing", "0.745000")])
def test_keyword_test_is_substring_based(content, expected):
    # Query `is` (not a token of the content): cos 0, no BM25 hit, single candidate -> norm 1,
    # vector_score 0.5. `is` is a SUBSTRING of `this` -> keyword 1.0 -> final 0.5*0.65 + 0.5 = 0.825;
    # with `that thing` keyword 0.6 -> final 0.5*0.49 + 0.5 = 0.745.
    idx = build({"x.txt": content})
    _no_collisions(idx, "is")
    assert rows(idx, _hybrid(idx, "is", 3)) == [("x.txt", 1, 1, expected)]


@pytest.mark.parametrize(
    ("path", "penalised"),
    [
        ("inspect.py", True),  # `spec` inside a word (§hybrid-candidates)
        ("planet.rs", True),  # `plan`
        ("mydocs/x.md", True),  # `docs/`
        ("docs/readme.md", True),
        ("tests/x.txt", True),
        ("Tests/X.txt", True),  # ASCII-lowercased path
        ("test_x.txt", True),
        ("contest_x.txt", True),
        ("SPEC.md", True),
        ("explanation.txt", True),
        ("test/x.txt", False),
        ("documents/x.md", False),
        ("doc/x.md", False),
        ("sp-ec.txt", False),
        ("x.txt", False),
    ],
)
def test_path_penalty_markers(path, penalised):
    # Same single-chunk setup as the substring test: unpenalised 0.825, penalised 0.825 * 0.8 = 0.66.
    idx = build({path: "this thing"})
    _no_collisions(idx, "is")
    (row,) = rows(idx, _hybrid(idx, "is", 3))
    assert row[3] == ("0.660000" if penalised else "0.825000")


def test_negative_cosine_clamps_vector_score():
    # An opposite-sign bucket collision gives cos = -1: vector_score = 1 - clamp(1, 0, 1) = 0;
    # keyword 0.6 (neither token contains the other); single candidate norm 1.
    # final = 0.5 * (0 + 0.24) + 0.5 = 0.62.
    t1, t2 = opposite_sign_pair()
    idx = build({"n.txt": t2})
    res = _hybrid(idx, t1, 3)
    assert float(idx.matrix[0] @ hash_embed(t1)) == -1.0
    assert rows(idx, res) == [("n.txt", 1, 1, "0.620000")]


RRF_FILES = {"0.txt": "beta", "1.txt": "d d d beta", "2.txt": "c d alpha c c", "3.txt": "beta beta c"}


def test_rrf_anchor_and_normalisation():
    # §hybrid-candidates anchor: vrank 0, frank 2, w 1 -> 1/60 + 1 * (1/62) = 0.032796.
    anchor = (1.0 / (60.0 + 0)) + (1.0 * (1.0 / (60.0 + 2)))
    assert format6(anchor) == "0.032796"
    # Corpus where 0.txt has exactly those ranks for `alpha beta` (w = 1):
    #   cosines: 0.txt 1/sqrt2 = .707, 3.txt 2/sqrt10 = .632, 1.txt 1/sqrt20 = .224, 2.txt 1/sqrt22 = .213
    #   BM25 (N 4, avgdl 13/4; idf alpha ln(10/3), beta ln(10/7)):
    #     2.txt 0.98664 > 3.txt 0.50127 > 0.txt 0.49760 > 1.txt 0.32591
    # rrf: 0.txt 1/60+1/62 (max), 3.txt 1/61+1/61, 2.txt 1/63+1/60, 1.txt 1/62+1/63.
    # With CONFIDENCE_WEIGHT 0 the final score is exactly norm = rrf / max_rrf.
    idx = build(RRF_FILES)
    _no_collisions(idx, "alpha beta")
    q = "alpha beta"
    assert [idx.chunks[r.index].file_path for r in vector_search(idx, hash_embed(q), 9)] == [
        "0.txt",
        "3.txt",
        "1.txt",
        "2.txt",
    ]
    assert [idx.chunks[r.index].file_path for r in bm25_only_search(idx, q, 9)] == [
        "2.txt",
        "3.txt",
        "0.txt",
        "1.txt",
    ]
    params = RankingParams(confidence_weight=0.0, graph_enabled=False)
    rrf = {"0.txt": anchor, "3.txt": 1 / 61 + 1 / 61, "2.txt": 1 / 63 + 1 / 60, "1.txt": 1 / 62 + 1 / 63}
    want = [(f, 1, 1, format6(v / anchor)) for f, v in sorted(rrf.items(), key=lambda p: -p[1])]
    assert rows(idx, _hybrid(idx, q, 4, params)) == want
    # exact rationals: (2/61)/(1/60+1/62) = 0.99973126, (1/63+1/60)/(...) = 0.99219360,
    # (1/62+1/63)/(...) = 0.97580016
    assert [w[3] for w in want] == ["1.000000", "0.999731", "0.992194", "0.975800"]


@pytest.mark.parametrize("delta", [3e-7, -3e-8])
def test_final_sort_uses_six_decimal_keys_then_chunk_id(delta):
    # §score-key/§hybrid-candidates: sorting compares score_key(final), then chunk_id — never raw doubles.
    # Query `alpha`, CONFIDENCE_WEIGHT 0 so final = norm: spec.txt `alpha` has vrank 0 and
    # frank 0 (rrf 2/60 = max, norm 1) and b.txt `alpha beta` vrank 1, frank 1 (norm 60/61 =
    # 0.98360656, key 983607). spec.txt is penalised with PATH_PENALTY = 60/61 + delta, which keeps
    # the key 983607 but moves its raw score above (delta > 0) or below (delta < 0) b.txt's. Either
    # way the two tie on the key and the smaller chunk id must come first.
    idx = build({"spec.txt": "alpha", "b.txt": "alpha beta"})
    _no_collisions(idx, "alpha")
    params = RankingParams(confidence_weight=0.0, path_penalty=60.0 / 61.0 + delta, graph_enabled=False)
    res = rank_core(idx, hash_embed("alpha"), "alpha", 2, params)
    assert [score_key(r.score) for r in res] == [983607, 983607]
    assert res[0].score != res[1].score
    assert [idx.chunk_ids[r.index] for r in res] == sorted(idx.chunk_ids)


def test_bm25_candidates_use_unique_query_tokens():
    # §hybrid-candidates: Q is the list of UNIQUE tokens. In this corpus `x y` ranks x.txt first in BM25
    # (tf 4: 1.4426 idf vs 1.2571 idf), while counting `y` three times would put y.txt first.
    # With the query vector held fixed, `x y y y` and `x y` must therefore rank identically.
    idx = build({"x.txt": "x x x x", "y.txt": "y", "z.txt": "z"})
    assert [idx.chunks[r.index].file_path for r in bm25_only_search(idx, "x y y y", 3)] == ["x.txt", "y.txt"]
    qv = hash_embed("x y y y")
    params = RankingParams(confidence_weight=0.0, graph_enabled=False)
    dup = rank_core(idx, qv, "x y y y", 3, params)
    uniq = rank_core(idx, qv, "x y", 3, params)
    assert [(r.index, r.score) for r in dup] == [(r.index, r.score) for r in uniq]


def test_empty_query_vector_uses_bm25_candidates_only(samples):
    # §hybrid-candidates: an empty qvec (Ollama failure) gives no vector candidates and cos 0.0 everywhere.
    # `loader`: BM25 candidates are the 4 chunks containing `loader` (franks 0..3, w = 1), all
    # with keyword 1.0 and vector_score 0.5 -> final = 0.325 + 0.5 * 60/(60 + frank):
    # 0.825000, 0.816803, 0.808871, 0.801190, in BM25 order.
    bm = bm25_only_search(samples, "loader", 10)
    assert len(bm) == 4
    res = rank_core(samples, np.array([], dtype=np.float64), "loader", 10)
    assert [r.index for r in res] == [r.index for r in bm]
    assert [format6(r.score) for r in res] == ["0.825000", "0.816803", "0.808871", "0.801190"]


# ---------------------------------------------------------------- §hybrid-examples worked examples

CORPUS_A = {
    "auth.py": 'def hash_password(pw):\n    return pw + "salt"\n',
    "payments.py": "import auth\n\ndef process_payment(amount):\n"
    "    return auth.hash_password(str(amount))\n",
}


def test_corpus_a():
    # §hybrid-examples / §verified-runs: 0.825000 (auth.py 1-2, 188febb74a94633e) and 0.816803
    # (payments.py 3-4).
    idx = build(CORPUS_A)
    assert [c.chunk_id for c in idx.chunks] == ["188febb74a94633e", "81ef5c5a698d2118"]
    assert sum(c.token_count for c in idx.chunks) / len(idx.chunks) == 14.0  # §verified-runs average
    q = "where is the password hashed"
    assert is_code_lookup(q)
    assert bm25_only_search(idx, q, 3) == []  # `password` is not a token of either chunk
    hits = builtin_backend("hybrid", idx)(q, 3)
    assert [(h.chunk_id, h.file_path, h.start_line, h.end_line, format6(h.score)) for h in hits] == [
        ("188febb74a94633e", "auth.py", 1, 2, "0.825000"),
        ("81ef5c5a698d2118", "payments.py", 3, 4, "0.816803"),
    ]
    assert [(h.rank, h.chunk_type, h.kind) for h in hits] == [
        (1, "function", "function_definition"),
        (2, "function", "function_definition"),
    ]


CODE_STARTER_TOP5 = {
    "where is the read_config function": [
        ("notes.md", 1, 3, "0.846129"),
        ("python.py", 7, 8, "0.843559"),
        ("javascript.js", 3, 5, "0.832397"),
        ("python.py", 6, 8, "0.824061"),
        ("typescript.ts", 3, 5, "0.817475"),
    ],
    "build index hashmap store": [
        ("rust.rs", 7, 9, "0.872246"),
        ("rust.rs", 3, 5, "0.856332"),
        ("rust.rs", 11, 15, "0.828635"),
        ("c.c", 7, 7, "0.483095"),
        ("notes.md", 1, 3, "0.475769"),
    ],
    "sum node value struct": [
        ("c.c", 3, 5, "0.918750"),
        ("c.c", 7, 7, "0.901225"),
        ("c.c", 7, 9, "0.872130"),
        ("rust.rs", 7, 9, "0.824813"),
        ("rust.rs", 12, 14, "0.479375"),
    ],
}


@pytest.mark.parametrize("query", sorted(CODE_STARTER_TOP5))
def test_code_starter_hybrid_top5(samples, query):
    assert hit_rows(builtin_backend("hybrid", samples)(query, 5)) == CODE_STARTER_TOP5[query]


def test_samples_have_no_resolvable_imports(samples):
    # Upstream goldens never exercise graph expansion on the samples (§graph-expansion).
    assert all(samples.graph.neighbors(f) == [] for f in samples.chunks_by_file)


def _matches(anchor: str, hit) -> bool:
    m = re.fullmatch(r"(.*?)(?:#([^@#]*))?(?:@(\d+)-(\d+))?", anchor)
    path, kind, a, b = m.groups()
    if hit.file_path != path or (kind is not None and hit.kind != kind):
        return False
    return a is None or not (hit.end_line < int(a) or hit.start_line > int(b))


def test_code_golden_rankings(upstream, samples):
    # Upstream's code.golden.json pins, for every backend and case, how many of the top k are
    # relevant and where the first relevant one sits; re-derive both from our rankings.
    golden = json.loads((upstream / "test/fixture/relevance/code.golden.json").read_text())
    lines = (upstream / "eval/relevance/code.jsonl").read_text().splitlines()[1:]
    cases = [json.loads(line) for line in lines]
    by_id = {c["id"]: c for c in cases}
    checked = 0
    for backend in golden["backends"]:
        search = builtin_backend(backend["backend"], samples)
        for pq in backend["per_query"]:
            case = by_id[pq["id"]]
            hits = search(case["query"], case["k"])
            rel = [i + 1 for i, h in enumerate(hits) if any(_matches(a, h) for a in case["expected"])]
            assert format6(len(rel) / case["k"]) == pq["precision_at_k"], (backend["backend"], pq["id"])
            assert (rel[0] if rel else None) == pq["first_relevant_rank"], (backend["backend"], pq["id"])
            checked += 1
    assert checked == 21


def test_diversity_cap_loader_k50(samples):
    # §diversity-cap: `loader` with k = 50 on the samples gives 19: every one of the 21 chunks is a
    # candidate, but rust.rs and typescript.ts have 4 chunks each and keep only 3.
    res = rank_core(samples, hash_embed("loader"), "loader", 50)
    assert len(res) == 19
    per_file = {}
    for r in res:
        f = samples.chunks[r.index].file_path
        per_file[f] = per_file.get(f, 0) + 1
    assert per_file == {
        "c.c": 3,
        "javascript.js": 3,
        "notes.md": 1,
        "python.py": 3,
        "ruby.rb": 3,
        "rust.rs": 3,
        "typescript.ts": 3,
    }
    assert len(builtin_backend("hybrid", samples)("loader", 50)) == 19


# ---------------------------------------------------------------- §verified-runs docs corpus

DOCS_EXPECTED = {
    "how many login attempts before lockout": ("rate-limiting.md", "3.848029", "0.853351"),
    "deployment checklist migrations rollback": ("deploy-checklist.md", "5.190266", "0.856693"),
    "webhook retry backoff jitter": ("retry-policy.md", "5.426135", "0.864311"),
    "reciprocal rank fusion weights": ("search-tuning.md", "4.914519", "0.843844"),
}


@pytest.fixture(scope="module")
def docs(upstream):
    return build_dir(upstream / DOCS_CORPUS)


def test_docs_corpus_queries_match_spec(upstream):
    lines = (upstream / "eval/relevance/docs.jsonl").read_text().splitlines()[1:]
    cases = [json.loads(line) for line in lines]
    assert {c["query"]: (c["expected"][0], c["k"]) for c in cases} == {
        q: (v[0], 3) for q, v in DOCS_EXPECTED.items()
    }


def test_docs_corpus_is_four_module_chunks(docs):
    assert [(c.kind, c.language, c.start_line) for c in docs.chunks] == [("module", "plaintext", 1)] * 4


@pytest.mark.parametrize("query", sorted(DOCS_EXPECTED))
def test_docs_corpus_top_scores(docs, query):
    expected_file, bm25_top, hybrid_top = DOCS_EXPECTED[query]
    b = builtin_backend("bm25", docs)(query, 3)
    v = builtin_backend("vector", docs)(query, 3)
    h = builtin_backend("hybrid", docs)(query, 3)
    assert (b[0].file_path, format6(b[0].score)) == (expected_file, bm25_top)
    assert (h[0].file_path, format6(h[0].score)) == (expected_file, hybrid_top)
    assert v[0].file_path == expected_file
    assert len(v) == 3 and len(h) == 3


def test_docs_corpus_bm25_single_hits(docs):
    # §verified-runs: bm25 returns only 1 result for three of the four queries.
    counts = sorted(len(builtin_backend("bm25", docs)(q, 3)) for q in DOCS_EXPECTED)
    assert counts[:3] == [1, 1, 1] and counts[3] > 1


# ------------------------------------------------------------ §backends backends and §edge-cases edge cases


def test_unknown_backend():
    with pytest.raises(CceError):
        builtin_backend("splade", build({}))


@pytest.mark.parametrize("name", ["bm25", "vector", "hybrid"])
def test_empty_corpus_and_blank_query(samples, name):
    empty = build({})
    assert builtin_backend(name, empty)("loader", 5) == []  # §edge-cases: empty corpus
    for q in ("", "   ", "\t\n", "\u3000"):  # §backends: query.trim() empty
        assert builtin_backend(name, samples)(q, 5) == []


def test_empty_corpus_direct_calls():
    empty = build({})
    q = hash_embed("loader")
    assert hybrid_search(empty, q, "loader", 5) == []
    assert vector_search(empty, q, 5) == []
    assert bm25_only_search(empty, "loader", 5) == []


@pytest.mark.parametrize("query", ["???", "日本語", "!!! ..."])
def test_tokenless_query_early_exit(samples, query):
    # §hybrid-exits / §bm25-only: no tokens -> [] for hybrid and bm25 (vector: see test_cosine.py).
    assert hybrid_search(samples, hash_embed(query), query, 5) == []
    assert bm25_only_search(samples, query, 5) == []


def test_query_tokens_absent_from_corpus(samples):
    # §edge-cases: bm25 []; vector and hybrid still return k results.
    q = "zzqqxx"
    assert builtin_backend("bm25", samples)(q, 5) == []
    assert len(builtin_backend("vector", samples)(q, 5)) == 5
    assert len(builtin_backend("hybrid", samples)(q, 5)) == 5


def test_corpus_with_an_empty_file():
    idx = build({"empty.py": "", "a.txt": "alpha"})
    assert [(c.file_path, c.start_line, c.end_line, c.token_count) for c in idx.chunks] == [
        ("a.txt", 1, 1, 1),
        ("empty.py", 1, 1, 1),
    ]
    assert not idx.matrix[1].any()  # zero embedding
    assert [idx.chunks[r.index].file_path for r in _hybrid(idx, "alpha", 5)] == ["a.txt", "empty.py"]
    assert [idx.chunks[r.index].file_path for r in bm25_only_search(idx, "alpha", 5)] == ["a.txt"]


def test_duplicate_chunk_ids_keep_index_order():
    # §edge-cases: two `struct A` references on one line share file, span and first bytes, hence id,
    # content and embedding; every ranking keeps them in index order (stable sorts).
    idx = build({"d.c": "struct A *f(struct B b) { return (struct A*)0; }\n"})
    ids = idx.chunk_ids
    assert ids[1] == ids[3] and len(set(ids)) == 3
    q = "struct a"
    for res in (
        vector_search(idx, hash_embed(q), 10),
        bm25_only_search(idx, q, 10),
        rank_core(idx, hash_embed(q), q, 10, RankingParams(max_chunks_per_file=10)),
    ):
        order = [r.index for r in res]
        assert 1 in order and 3 in order and order.index(1) < order.index(3)


def test_result_scores_are_raw_doubles(samples):
    res = rank_core(samples, hash_embed("sum node value struct"), "sum node value struct", 5)
    assert all(isinstance(r.score, float) for r in res)
    assert any(r.score != score_key(r.score) / 1e6 for r in res)  # not pre-rounded


_VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "this", "function", "where", "is"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.dictionaries(
        st.sampled_from(["a.txt", "b.md", "tests/c.txt", "d.txt", "spec.txt"]),
        st.lists(
            st.lists(st.sampled_from(_VOCAB), min_size=0, max_size=6).map(" ".join), min_size=1, max_size=3
        ).map("\n".join),
        max_size=5,
    ),
    query=st.lists(st.sampled_from(_VOCAB + ["zz", "b.md"]), min_size=1, max_size=4).map(" ".join),
    k=st.integers(0, 6),
)
def test_hybrid_invariants(files, query, k):
    idx = build(files)
    main = _hybrid(idx, query, k, NO_GRAPH)
    assert len(main) <= k
    assert len({r.index for r in main}) == len(main)
    keys = [(-score_key(r.score), idx.chunk_ids[r.index]) for r in main]
    assert keys == sorted(keys)
    per_file = {}
    for r in main:
        per_file[idx.chunks[r.index].file_path] = per_file.get(idx.chunks[r.index].file_path, 0) + 1
    assert all(v <= 3 for v in per_file.values())
    assert all(0.0 <= r.score <= 1.0 + 1e-12 for r in main)
    assert [r.rank for r in main] == list(range(1, len(main) + 1))
    full = _hybrid(idx, query, k)
    assert [(r.index, r.score) for r in full[: len(main)]] == [(r.index, r.score) for r in main]
    hits = builtin_backend("hybrid", idx)(query, max(k, 1))
    assert len(hits) <= max(k, 1)


# ---------------------------------------------------------------- §build index build


def test_build_index_matches_hand_build(upstream, tmp_path):
    from cce_relevance.retrieval.index.build import build_index

    mine = write_corpus(tmp_path / "c", {**CORPUS_A, "lib/x.rb": "require 'auth'\n"})
    for root in (upstream / SAMPLES, mine):
        real = build_index(root)
        hand = build(read_tree(root))
        assert [(c.chunk_id, c.file_path, c.start_line, c.end_line, c.kind) for c in real.chunks] == [
            (c.chunk_id, c.file_path, c.start_line, c.end_line, c.kind) for c in hand.chunks
        ]
        assert (
            real.file_imports == hand.file_imports and real.file_token_estimates == hand.file_token_estimates
        )
        assert real.matrix.tobytes() == hand.matrix.tobytes()


@pytest.mark.parametrize("name", ["bm25", "vector", "hybrid"])
def test_backend_hits_are_the_records_hit_makes(samples, name):
    """The built-in backends fill each `Hit`'s slots directly (backends.py `_hits`): every field
    is set, and each hit equals, hashes and reads as `Hit(...)` of the chunk it names."""
    by_id = {c.chunk_id: c for c in samples.chunks}
    search = builtin_backend(name, samples)
    seen = 0
    for query in ("loader", "parse config file", "class Router", "def main", "readme install"):
        for h in search(query, 20):
            c = by_id[h.chunk_id]
            plain = Hit(
                c.chunk_id, c.file_path, c.start_line, c.end_line, c.chunk_type, c.kind, h.rank, h.score
            )
            assert h == plain and hash(h) == hash(plain) and repr(h) == repr(plain)
            assert all(getattr(h, f.name) == getattr(plain, f.name) for f in dataclasses.fields(Hit))
            seen += 1
    assert seen > 20
