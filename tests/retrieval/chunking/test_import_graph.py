"""Import graph (§import-graph) and graph expansion (§graph-expansion), with corpora whose imports resolve.

Every expected bonus list below is derived by hand from §import-graph–§graph-expansion; the
cosines are simple because each corpus is checked (precondition asserts) to have no
embedding-bucket collisions among the tokens involved, so a cosine is just shared-token counts
over the two norms.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.reporting.numbers import format6
from cce_relevance.retrieval.chunking.import_graph import ImportGraph, file_stem, suffix_matches
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.search.backends import builtin_backend
from cce_relevance.retrieval.search.hybrid import SearchResult, expand_graph, hybrid_search
from tests.retrieval.corpora import buckets_distinct, build, hit_rows, opposite_sign_pair, ref_tokenize, rows


def _find(index, path, start, end, kind=None):
    hits = [
        i
        for i, c in enumerate(index.chunks)
        if (c.file_path, c.start_line, c.end_line) == (path, start, end) and (kind is None or c.kind == kind)
    ]
    assert len(hits) == 1, (path, start, end, kind, hits)
    return hits[0]


def _results(index, *spans, score=0.1):
    return [SearchResult(i + 1, _find(index, *s), score) for i, s in enumerate(spans)]


def _no_collisions(index, query):
    for c in index.chunks:
        assert buckets_distinct(ref_tokenize(c.content) + ref_tokenize(query)), c.content


# ---------------------------------------------------------------- §import-graph stems and resolution


@pytest.mark.parametrize(
    ("path", "stem"),
    [
        ("a/b.c.py", "b.c"),
        ("Makefile", "Makefile"),
        ("src/auth.py", "auth"),
        (".gitignore", ""),
        ("dir.x/file", "file"),
        ("a\\b.py", "a\\b"),
        ("x.", "x"),
    ],
)
def test_file_stem(path, stem):
    # last `/`-segment (split on `/` only) up to its last `.`; whole segment without a dot
    assert file_stem(path) == stem


def test_stem_match_is_first_in_sorted_files_regardless_of_language():
    g = ImportGraph({"main.py": ["util"]}, ["a/util.rb", "b/util.py", "main.py"])
    assert g.neighbors("main.py") == ["a/util.rb"]
    assert g.neighbors("a/util.rb") == ["main.py"]
    assert g.neighbors("b/util.py") == []


def test_stem_match_wins_over_suffix_match():
    # `auth` has a stem match (z/auth.txt) and a suffix match (oauth.py): the stem wins.
    g = ImportGraph({"main.py": ["auth"]}, ["main.py", "oauth.py", "z/auth.txt"])
    assert g.neighbors("main.py") == ["z/auth.txt"]


def test_suffix_rule_auth_to_oauth():
    g = ImportGraph({"main.py": ["auth"]}, ["main.py", "oauth.py"])
    assert g.neighbors("main.py") == ["oauth.py"]
    g = ImportGraph({"main.py": ["ient"]}, ["client.js", "main.py"])  # `.js` suffix too
    assert g.neighbors("main.py") == ["client.js"]
    g = ImportGraph({"main.py": ["auth"]}, ["main.py", "oauth.rb", "xauth.ts"])  # only .py / .js
    assert g.neighbors("main.py") == []
    g = ImportGraph({"m.py": ["th"]}, ["lib/oauth.js", "m.py", "zz/auth.py"])  # first in sorted order
    assert g.neighbors("m.py") == ["lib/oauth.js"]


def test_self_import_is_ignored_even_if_a_suffix_match_exists():
    # `auth.py` imports `auth`: resolves (stem) to itself -> no edge, no fallback to oauth.py.
    g = ImportGraph({"auth.py": ["auth"]}, ["auth.py", "oauth.py"])
    assert g.neighbors("auth.py") == [] and g.neighbors("oauth.py") == []


def test_neighbors_are_sorted_union_of_both_directions():
    g = ImportGraph({"m.py": ["z", "b"], "c.py": ["m"], "b.py": ["m"]}, ["b.py", "c.py", "m.py", "z.py"])
    assert g.neighbors("m.py") == ["b.py", "c.py", "z.py"]
    assert g.neighbors("z.py") == ["m.py"]
    assert g.neighbors("nope.py") == []


def test_unresolved_modules_add_nothing():
    g = ImportGraph({"m.py": ["os", "sys"]}, ["m.py", "other.py"])
    assert g.neighbors("m.py") == []


def test_language_import_forms_resolve_in_an_index():
    idx = build(
        {
            "app.rb": 'require "util/helpers.rb"\ndef run\nend\n',  # -> helpers -> helpers.rb
            "helpers.rb": "def help\nend\n",
            "main.c": '#include "list.h"\nint main(void) { return 0; }\n',  # -> list -> list.c (sorted first)
            "list.c": "int len(void) { return 0; }\n",
            "list.h": "int len(void);\n",
            "main.rs": "use config::Settings;\npub use crate::x;\nfn main() {}\n",  # -> config, pub
            "config.rs": "pub struct Settings {}\n",
            "pub.rs": "fn p() {}\n",
            "web.js": "import util from './lib/util.js';\nfunction w() {}\n",  # -> lib -> lib.py (stem)
            "lib.py": "def f():\n    pass\n",
            "page.ts": "import { x } from '@scope/pkg';\nfunction t() {}\n",  # unresolvable
        }
    )
    assert idx.file_imports["main.rs"] == ["config", "pub"]
    g = idx.graph
    assert g.neighbors("app.rb") == ["helpers.rb"]
    assert g.neighbors("main.c") == ["list.c"]
    assert g.neighbors("list.h") == []
    assert g.neighbors("main.rs") == ["config.rs", "pub.rs"]
    assert g.neighbors("web.js") == ["lib.py"]
    assert g.neighbors("page.ts") == []


# ---------------------------------------------------------------- §graph-expansion expansion

PY_CORPUS = {
    "main.py": "import helpers\nfrom models import User\n\ndef main():\n    return helpers.run()\n",
    "helpers.py": "def run():\n    return 1\n\ndef walk():\n    return 2\n\ndef swim():\n    return 3\n",
    "models.py": "class User:\n    pass\n",
    "other.py": "def unrelated():\n    pass\n",
}


@pytest.fixture(scope="module")
def py_index():
    idx = build(PY_CORPUS)
    _no_collisions(idx, "swim swim walk")
    return idx


def test_python_expansion_by_hand(py_index):
    # main.py -> helpers.py, models.py (`import helpers`, `from models import User`).
    # q = (2 swim + walk)/sqrt5. helpers chunks have 4 distinct tokens each (norm 2):
    #   swim: 2/(sqrt5*2) = 0.447214 ; walk: 1/(2 sqrt5) = 0.223607 ; run: 0.
    # Take the first 2 (swim, walk) * 0.85 -> 0.380132, 0.190066. models.py: User, cosine 0 -> 0.0.
    # Bonus chunks are appended after the main result and not re-sorted (they exceed its 0.1).
    assert py_index.graph.neighbors("main.py") == ["helpers.py", "models.py"]
    q = hash_embed("swim swim walk")
    out = expand_graph(py_index, q, _results(py_index, ("main.py", 4, 5)))
    assert rows(py_index, out) == [
        ("main.py", 4, 5, "0.100000"),
        ("helpers.py", 7, 8, format6(0.85 / math.sqrt(5.0))),
        ("helpers.py", 4, 5, format6(0.85 / (2 * math.sqrt(5.0)))),
        ("models.py", 1, 2, "0.000000"),
    ]
    assert [format6(r.score) for r in out[1:]] == ["0.380132", "0.190066", "0.000000"]
    assert [r.rank for r in out] == [1, 2, 3, 4]


def test_expansion_skips_neighbours_already_in_results(py_index):
    # helpers.py is present (even at position 2), so only models.py contributes.
    q = hash_embed("swim swim walk")
    out = expand_graph(py_index, q, _results(py_index, ("main.py", 4, 5), ("helpers.py", 1, 2)))
    assert rows(py_index, out)[2:] == [("models.py", 1, 2, "0.000000")]


def test_expansion_of_a_file_whose_only_neighbour_is_present(py_index):
    res = _results(py_index, ("helpers.py", 7, 8), ("main.py", 4, 5))
    out = expand_graph(py_index, hash_embed("swim"), res)
    # helpers' neighbour main.py is present; main's neighbours: helpers (present), models.py.
    assert rows(py_index, out)[2:] == [("models.py", 1, 2, "0.000000")]


def test_expansion_no_neighbours_and_empty_results(py_index):
    q = hash_embed("swim")
    res = _results(py_index, ("other.py", 1, 2))
    assert expand_graph(py_index, q, res) == res
    assert expand_graph(py_index, q, []) == []


def test_expansion_with_empty_query_vector(py_index):
    # Empty qvec (Ollama failure): every cosine is 0.0, so the chunk-id order decides the 2 taken.
    out = expand_graph(py_index, np.array([], dtype=np.float64), _results(py_index, ("main.py", 4, 5)))
    helper_ids = sorted(c.chunk_id for c in py_index.chunks if c.file_path == "helpers.py")[:2]
    assert [py_index.chunks[r.index].chunk_id for r in out[1:3]] == helper_ids
    assert [r.score for r in out[1:]] == [0.0, 0.0, 0.0]


TOPFILES_CORPUS = {
    "x.py": "import b\ndef x1():\n    pass\ndef x2():\n    pass\n",
    "y.py": "import c\nimport a\ndef y1():\n    pass\n",
    "z.py": "def z1():\n    pass\n",
    "w.py": "import d\ndef w1():\n    pass\n",
    "a.py": "def a1():\n    pass\n",
    "b.py": "def b1():\n    pass\n",
    "c.py": "def c1():\n    pass\n",
    "d.py": "def d1():\n    pass\n",
}


def test_neighbour_files_order_and_limit_of_two():
    # results: x, x, y, w. top_files = distinct files of the first 3 results = [x.py, y.py]
    # (w.py is 4th: its neighbour d.py is never considered).
    # neighbour_files: x -> [b.py]; y -> sorted [a.py, c.py] -> [b.py, a.py, c.py]; only the first
    # 2 (b.py, a.py) give bonus chunks — in that order, not globally sorted.
    idx = build(TOPFILES_CORPUS)
    res = _results(idx, ("x.py", 2, 3), ("x.py", 4, 5), ("y.py", 3, 4), ("w.py", 2, 3))
    out = expand_graph(idx, hash_embed("nothing"), res)
    assert [idx.chunks[r.index].file_path for r in out[4:]] == ["b.py", "a.py"]


def test_neighbour_present_beyond_top_three_is_skipped():
    # results x, x, y, b: top_files [x.py, y.py]; x's neighbour b.py is present at position 4
    # ("anywhere in the results"), so neighbour_files = [a.py, c.py] (y's, sorted).
    idx = build(TOPFILES_CORPUS)
    res = _results(idx, ("x.py", 2, 3), ("x.py", 4, 5), ("y.py", 3, 4), ("b.py", 1, 2))
    out = expand_graph(idx, hash_embed("nothing"), res)
    assert [idx.chunks[r.index].file_path for r in out[4:]] == ["a.py", "c.py"]


def test_only_first_two_neighbours_of_a_single_top_file():
    idx = build(
        {
            "m.py": "import c\nimport a\nimport b\ndef m():\n    pass\n",
            "a.py": "def a():\n    pass\n",
            "b.py": "def b():\n    pass\n",
            "c.py": "def c():\n    pass\n",
        }
    )
    out = expand_graph(idx, hash_embed("q"), _results(idx, ("m.py", 4, 5)))
    assert [idx.chunks[r.index].file_path for r in out[1:]] == ["a.py", "b.py"]  # sorted; c.py dropped


def test_take_two_then_skip_duplicate_span_without_replacement():
    # n.js line 1 yields a function_expression and an arrow_function, both spanning n.js 1-1.
    # Query `zebra`: arrow `() => zebra` cos 1; `function () { return () => zebra; }` 1/sqrt3;
    # g (line 2) 1/2. Take the first 2 (arrow, function_expression): the arrow is appended
    # (0.85); the function_expression repeats the span (n.js, 1, 1) -> skipped, and g is NOT
    # taken in its place.
    idx = build(
        {
            "main.js": "import n from './n';\nfunction main() { return n; }\n",
            "n.js": "const f = function () { return () => zebra; };\nfunction g() { return zebra; }\n",
        }
    )
    _no_collisions(idx, "zebra")
    assert [(c.start_line, c.kind) for c in idx.chunks if c.file_path == "n.js"] == [
        (1, "function_expression"),
        (1, "arrow_function"),
        (2, "function_declaration"),
    ]
    out = expand_graph(idx, hash_embed("zebra"), _results(idx, ("main.js", 2, 2)))
    assert [(idx.chunks[r.index].kind, format6(r.score)) for r in out[1:]] == [("arrow_function", "0.850000")]


def test_negative_cosine_bonus_clamps_to_zero():
    t1, t2 = opposite_sign_pair()
    idx = build({"main.py": "import dep\ndef main():\n    pass\n", "dep.txt": t2})
    out = expand_graph(idx, hash_embed(t1), _results(idx, ("main.py", 2, 3)))
    assert rows(idx, out)[1:] == [("dep.txt", 1, 1, "0.000000")]
    assert out[1].score == 0.0 and math.copysign(1.0, out[1].score) == 1.0


# ---------------------------------------------------------------- expansion through hybrid and backends


def _hub_corpus():
    hub = "import dep\n" + "".join(f"def f{i}():\n    return zebra\n" for i in range(13))
    return {"hub.py": hub, "dep.py": "def other(a, b, c):\n    return zebra\n"}


@pytest.fixture(scope="module")
def hub_index():
    idx = build(_hub_corpus())
    _no_collisions(idx, "zebra")
    return idx


def test_bonus_survives_when_cap_leaves_main_list_short(hub_index):
    # 13 hub chunks have cosine 1/2 with `zebra` (4 tokens), dep's chunk 1/sqrt7 (7 tokens) ranks
    # 14th, so with k = 4 the pool (12 vector + 12 BM25 candidates) holds only hub chunks; the
    # per-file cap keeps 3 and the main list is short (3 < 4). hub -> dep is a neighbour not in
    # the results: its only chunk is appended with 0.85/sqrt7 = 0.321270 and survives the k cut.
    res = hybrid_search(hub_index, hash_embed("zebra"), "zebra", 4)
    assert [hub_index.chunks[r.index].file_path for r in res] == ["hub.py"] * 3 + ["dep.py"]
    assert format6(res[3].score) == format6(0.85 / math.sqrt(7.0)) == "0.321270"
    hits = builtin_backend("hybrid", hub_index)("zebra", 4)
    assert hit_rows(hits)[3] == ("dep.py", 1, 2, "0.321270")
    assert [h.rank for h in hits] == [1, 2, 3, 4]


def test_bonus_is_cut_by_k_in_the_relevance_backend(hub_index):
    # k = 3: the main list is full (3), graph expansion still appends dep.py (hybrid_search
    # returns 4), and the relevance backend keeps only the first k (§backends).
    res = hybrid_search(hub_index, hash_embed("zebra"), "zebra", 3)
    assert [hub_index.chunks[r.index].file_path for r in res] == ["hub.py"] * 3 + ["dep.py"]
    hits = builtin_backend("hybrid", hub_index)("zebra", 3)
    assert [h.file_path for h in hits] == ["hub.py"] * 3


def test_corpus_a_graph_adds_nothing():
    # §hybrid-examples: payments.py -> auth.py, but both files are already present.
    idx = build(
        {
            "auth.py": 'def hash_password(pw):\n    return pw + "salt"\n',
            "payments.py": "import auth\n\ndef process_payment(amount):\n"
            "    return auth.hash_password(str(amount))\n",
        }
    )
    assert idx.graph.neighbors("payments.py") == ["auth.py"]
    res = hybrid_search(idx, hash_embed("where is the password hashed"), "where is the password hashed", 3)
    assert len(res) == 2


# ---------------------------------------------------------------- resolution against the plain definition


def reference_neighbors(file_imports, files) -> dict[str, list[str]]:
    """§import-graph as plainly as possible (the implementation before suffix lookups were indexed):
    stem match first, else the first file in order that ends with `module.py` or `module.js`."""
    files = list(files)

    def resolve(module):
        by_stem = next((f for f in files if file_stem(f) == module), None)
        if by_stem:
            return by_stem
        return next((f for f in files if f.endswith(module + ".py") or f.endswith(module + ".js")), None)

    linked: dict[str, set[str]] = {}
    for source in sorted(file_imports):
        for module in file_imports[source]:
            target = resolve(module)
            if target is not None and target != source:
                linked.setdefault(source, set()).add(target)
                linked.setdefault(target, set()).add(source)
    return {f: sorted(others) for f, others in linked.items()}


def _assert_same_graph(file_imports, files):
    graph = ImportGraph(file_imports, files)
    want = reference_neighbors(file_imports, files)
    for f in sorted({*files, *file_imports, *want}):
        assert graph.neighbors(f) == want.get(f, []), f


_PIECES = st.sampled_from(["a", "b", "ab", ".", "/", "py", "js", ".py", ".js", "_", "x.y", "", "é"])
_NAMES = st.lists(_PIECES, max_size=6).map("".join)


@pytest.mark.slow
@settings(max_examples=400)
@given(st.lists(_NAMES, max_size=12, unique=True), st.data())
def test_resolution_matches_the_plain_definition(files, data):
    files = sorted(files)  # the index passes its files sorted; order is what "first" means
    sources = data.draw(st.lists(st.sampled_from(files), unique=True)) if files else []
    file_imports = {s: data.draw(st.lists(_NAMES, max_size=5)) for s in sources}
    _assert_same_graph(file_imports, files)
    _assert_same_graph(file_imports, list(reversed(files)))  # any order: the first in it wins


def test_suffix_matches_pick_the_first_file_of_either_extension():
    files = ["b/xclient.js", "c/client.py", "d/a/b.py"]
    assert suffix_matches(["ient", "client", "a/b", "b", "nothing", "/b"], files) == {
        "ient": "b/xclient.js",
        "client": "b/xclient.js",
        "a/b": "d/a/b.py",
        "b": "d/a/b.py",
        "/b": "d/a/b.py",
    }


def test_real_corpus_graph_matches_the_plain_definition():
    """This package's own imports (stems, dotted modules and misses) over its own file list."""
    from cce_relevance.retrieval.index.build import build_index

    root = Path(__file__).resolve().parents[3] / "cce_relevance"
    index = build_index(root)
    assert sum(len(v) for v in index.file_imports.values()) > 100
    files = sorted(index.chunks_by_file)
    _assert_same_graph(index.file_imports, files)
    # and with every import also spelled as a path suffix (`retrieval/graph`, `graph.py`)
    spelled = {src: [*mods, *(m.replace(".", "/") for m in mods)] for src, mods in index.file_imports.items()}
    _assert_same_graph(spelled, files)
