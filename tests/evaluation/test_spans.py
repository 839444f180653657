"""Token-level span metrics (harness.md §3.3): line weights, masses, and huge ranges."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.spans import LineWeights, intersect, merge, score_tokens
from cce_relevance.retrieval.backends import Hit
from cce_relevance.retrieval.chunk import Chunk, chunk_file
from cce_relevance.retrieval.tokens import estimate_tokens
from cce_relevance.strings import rust_lines

PY = 'import os\n\ndef read_config(path):\n    return os.path.join(path, "config.yml")\n\nclass Loader:\n' \
     '    def load(self):\n        return read_config(".")\n'


def test_rust_lines() -> None:
    assert rust_lines("") == []
    assert rust_lines("a\nb\n") == ["a", "b"]
    assert rust_lines("a\r\nb") == ["a", "b"]
    assert rust_lines("a\nb\r") == ["a", "b\r"]  # a final unterminated line keeps its CR
    assert rust_lines("\n") == [""]


def test_python_sample_weights_match_spec() -> None:
    """pipeline.md §13: python.py weights 3→5, 4→10, 6→3, 7→4 (class's indented text), 8→7."""
    weights = LineWeights(chunk_file("python.py", PY).chunks)
    masses = {n: weights.mass({"python.py": [(n, n)]}) for n in range(1, 10)}
    assert masses == {1: 1, 2: 1, 3: 5, 4: 10, 5: 1, 6: 3, 7: 4, 8: 7, 9: 1}


def test_golden_worked_check() -> None:
    """harness.md §3.3: relevant mass 15; recall 1 when both lines come back."""
    weights = LineWeights(chunk_file("python.py", PY).chunks)
    hits = [Hit(1, "x", "python.py", 3, 4, "function", "function_definition", 1.0)]
    score = score_tokens([parse_anchor("python.py@3-4")], hits, 5, weights)
    assert (score.precision, score.recall, score.iou) == (1.0, 1.0, 1.0)
    hits.append(Hit(2, "y", "python.py", 6, 8, "class", "class_definition", 1.0))
    score = score_tokens([parse_anchor("python.py@3-4")], hits, 5, weights)
    assert score.precision == 15 / (15 + 3 + 4 + 7)


def test_huge_ranges_are_cheap_and_exact() -> None:
    weights = LineWeights(chunk_file("python.py", PY).chunks)
    anchors = [parse_anchor("python.py@1-999999999999")]
    hits = [Hit(1, "x", "python.py", 3, 4, "function", "function_definition", 1.0)]
    score = score_tokens(anchors, hits, 5, weights)
    # all weighted lines plus weight 1 for every other line of the range
    rel = 999999999999 + (5 - 1) + (10 - 1) + (3 - 1) + (4 - 1) + (7 - 1)
    assert score.recall == 15 / rel


def test_no_results_gives_zero_precision_and_iou_not_error() -> None:
    weights = LineWeights([])
    score = score_tokens([parse_anchor("a.py@1-2")], [], 3, weights)
    assert (score.precision, score.recall, score.iou) == (0.0, 0.0, 0.0)


spans = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(1, 40), st.integers(0, 12)), max_size=8)


@given(spans, spans)
def test_interval_algebra_matches_explicit_sets(xs, ys) -> None:
    def explicit(items):
        return {(f, n) for f, lo, width in items for n in range(lo, lo + width + 1)}

    a = merge((f, lo, lo + w) for f, lo, w in xs)
    b = merge((f, lo, lo + w) for f, lo, w in ys)
    flat = {(f, n) for f, iv in intersect(a, b).items() for lo, hi in iv for n in range(lo, hi + 1)}
    assert flat == explicit(xs) & explicit(ys)
    weights = LineWeights(chunk_file("a", "x = 1\n" * 20).chunks)
    assert weights.mass(a) == sum(weights.mass({f: [(n, n)]}) for f, n in explicit(xs))


_CHUNK_TEXT = st.text(alphabet="ab é\r\n\t", max_size=40)


@given(st.lists(st.tuples(st.integers(1, 12), _CHUNK_TEXT), max_size=8))
def test_line_weights_are_the_first_covering_chunks_line_weights(chunks) -> None:
    """The plain definition — every chunk's lines in index order, the first weight of a line
    wins — for chunks in any order (pre-order lets most of them be skipped)."""
    made = [Chunk(f"id{i}", "f.py", start, start + text.count("\n"), "t", "k", "python", text, 1)
            for i, (start, text) in enumerate(chunks)]
    expected: dict[int, int] = {}
    for c in made:
        for i, line in enumerate(rust_lines(c.content)):
            expected.setdefault(c.start_line + i, estimate_tokens(line))
    weights = LineWeights(made)
    for n in range(0, 30):
        assert weights.mass({"f.py": [(n, n)]}) == expected.get(n, 1), n
