"""Token-level span metrics (§token-metrics): line weights, masses, and huge ranges."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.spans import LineWeights, intersect, merge, score_tokens
from cce_relevance.retrieval.chunking.chunk import Chunk, chunk_file
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.tokens import estimate_tokens
from cce_relevance.strings import rust_lines

PY = (
    'import os\n\ndef read_config(path):\n    return os.path.join(path, "config.yml")\n\nclass Loader:\n'
    '    def load(self):\n        return read_config(".")\n'
)


def test_rust_lines() -> None:
    assert rust_lines("") == []
    assert rust_lines("a\nb\n") == ["a", "b"]
    assert rust_lines("a\r\nb") == ["a", "b"]
    assert rust_lines("a\nb\r") == ["a", "b\r"]  # a final unterminated line keeps its CR
    assert rust_lines("\n") == [""]


def test_python_sample_weights_match_spec() -> None:
    """§backends: python.py weights 3→5, 4→10, 6→3, 7→4 (class's indented text), 8→7."""
    weights = LineWeights(chunk_file("python.py", PY).chunks)
    masses = {n: weights.mass({"python.py": [(n, n)]}) for n in range(1, 10)}
    assert masses == {1: 1, 2: 1, 3: 5, 4: 10, 5: 1, 6: 3, 7: 4, 8: 7, 9: 1}


def test_golden_worked_check() -> None:
    """§token-metrics: relevant mass 15; recall 1 when both lines come back."""
    weights = LineWeights(chunk_file("python.py", PY).chunks)
    hits = [Hit("x", "python.py", 3, 4, "function", "function_definition", 1, 1.0)]
    score = score_tokens([parse_anchor("python.py@3-4")], hits, 5, weights)
    assert (score.precision, score.recall, score.iou) == (1.0, 1.0, 1.0)
    hits.append(Hit("y", "python.py", 6, 8, "class", "class_definition", 2, 1.0))
    score = score_tokens([parse_anchor("python.py@3-4")], hits, 5, weights)
    assert score.precision == 15 / (15 + 3 + 4 + 7)


def test_huge_ranges_are_cheap_and_exact() -> None:
    weights = LineWeights(chunk_file("python.py", PY).chunks)
    anchors = [parse_anchor("python.py@1-999999999999")]
    hits = [Hit("x", "python.py", 3, 4, "function", "function_definition", 1, 1.0)]
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


def plain_line_weights(chunks: list[Chunk]) -> dict[int, int]:
    """The definition: every chunk's lines in index order, the first weight of a line wins."""
    expected: dict[int, int] = {}
    for c in chunks:
        for i, line in enumerate(rust_lines(c.content)):
            expected.setdefault(c.start_line + i, estimate_tokens(line))
    return expected


@given(st.lists(st.tuples(st.integers(1, 12), _CHUNK_TEXT), max_size=8))
def test_line_weights_are_the_first_covering_chunks_line_weights(chunks) -> None:
    """The plain definition for chunks in any order (pre-order lets most of them be skipped)."""
    made = [
        Chunk(f"id{i}", "f.py", start, start + text.count("\n"), "t", "k", "python", text, 1)
        for i, (start, text) in enumerate(chunks)
    ]
    expected = plain_line_weights(made)
    weights = LineWeights(made)
    for n in range(0, 30):
        assert weights.mass({"f.py": [(n, n)]}) == expected.get(n, 1), n


# Long lines (weights above the floor), CRs before and away from LFs, 2-, 3- and 4-byte UTF-8,
# a lone surrogate (weighed by its surrogatepass length, as `estimate_tokens` does).
_LINE = st.lists(
    st.sampled_from(["a", "bcdefgh", "\r", "\n", "\r\n", "é", "日本", "😀", "\ud800", " "]), max_size=30
).map("".join)


@st.composite
def nested_chunks(draw) -> list[Chunk]:
    """Chunks as a parser makes them — outer first, first lines ascending, nested ones inside
    their parent's lines — with now and then one out of order."""
    made: list[Chunk] = []
    for i in range(draw(st.integers(0, 10))):
        previous = made[-1].start_line if made and draw(st.booleans()) else 1
        start = (
            draw(st.integers(previous, previous + 6)) if draw(st.integers(0, 9)) else draw(st.integers(1, 20))
        )
        text = "\n".join(draw(st.lists(_LINE, min_size=1, max_size=6)))
        if draw(st.booleans()):
            text += "\n"
        made.append(Chunk(f"id{i}", "f.py", start, start + text.count("\n"), "t", "k", "python", text, 1))
    return made


@given(nested_chunks(), st.lists(st.tuples(st.integers(0, 60), st.integers(0, 8)), max_size=6))
def test_line_weights_and_masses_match_the_definition(made, ranges) -> None:
    expected = plain_line_weights(made)
    weights = LineWeights(made)
    for n in range(0, 70):
        assert weights.mass({"f.py": [(n, n)]}) == expected.get(n, 1), n
    spans = merge(("f.py", lo, lo + width) for lo, width in ranges)
    lines = {n for lo, hi in spans.get("f.py", []) for n in range(lo, hi + 1)}
    assert weights.mass(spans) == sum(expected.get(n, 1) for n in lines)


def test_a_cr_is_dropped_only_before_an_lf() -> None:
    # 8 bytes weigh 2, 7 weigh 1: the final line keeps its CR, a terminated one loses it.
    made = [
        Chunk("a", "f.py", 1, 2, "t", "k", "python", "abcdefg\r\nabcdefg\r", 1),
        Chunk("b", "f.py", 3, 4, "t", "k", "python", "abcdefg\r\n\r\n", 1),
        Chunk("c", "f.py", 2, 5, "t", "k", "python", "x\n" * 3 + "abcdefgh\r", 1),
    ]
    weights = LineWeights(made)
    assert [weights.mass({"f.py": [(n, n)]}) for n in range(1, 7)] == [1, 2, 1, 1, 2, 1]
    assert plain_line_weights(made) == {1: 1, 2: 2, 3: 1, 4: 1, 5: 2}


def test_line_weights_of_real_files_match_the_definition() -> None:
    """Every line of this package's own files, as the chunker cuts them."""
    package = Path(__file__).resolve().parents[2] / "cce_relevance"
    files = sorted(package.rglob("*.py"))
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        chunks = chunk_file(path.name, text).chunks
        expected = plain_line_weights(chunks)
        weights = LineWeights(chunks)
        last = text.count("\n") + 2
        assert [weights.mass({path.name: [(n, n)]}) for n in range(0, last)] == [
            expected.get(n, 1) for n in range(0, last)
        ], path
        assert weights.mass({path.name: [(1, last)]}) == sum(expected.get(n, 1) for n in range(1, last + 1))


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.sampled_from(["python.py", "other.py"]), st.integers(1, 12), st.integers(0, 6)),
        min_size=1,
        max_size=4,
    ),
    st.lists(
        st.tuples(
            st.sampled_from(["python.py", "other.py", "b.py", "c.py"]), st.integers(1, 12), st.integers(-1, 6)
        ),
        max_size=6,
    ),
)
def test_expected_spans_are_kept_per_anchors_and_score_as_worked_out_afresh(anchor_spans, hit_spans) -> None:
    """`LineWeights.expected` (kept per anchors, read by every backend) gives the spans and mass
    the plain merge and mass give, and the token metrics (empty spans among the hits) are those
    of the plain formula."""
    weights = LineWeights(chunk_file("python.py", PY).chunks)
    anchors = tuple(parse_anchor(f"{p}@{a}-{a + n}") for p, a, n in anchor_spans)
    hits = [
        Hit(f"{i:016x}", p, a, a + n, "function", "function_definition", i + 1, 0.5)
        for i, (p, a, n) in enumerate(hit_spans)
    ]
    relevant = merge((a.path, *a.range) for a in anchors)
    assert weights.expected(anchors) == (relevant, weights.mass(relevant))
    assert weights.expected(anchors) is weights.expected(anchors)
    retrieved = merge((h.file_path, h.start_line, h.end_line) for h in hits[:5])
    rel, ret = weights.mass(relevant), weights.mass(retrieved)
    ov = weights.mass(intersect(relevant, retrieved))
    union = rel + ret - ov
    want = (ov / ret if ret else 0.0, ov / rel if rel else 0.0, ov / union if union else 0.0)
    got = score_tokens(anchors, hits, 5, weights)
    assert (got.precision, got.recall, got.iou) == want


@settings(max_examples=200)
@given(
    nested_chunks(),
    st.lists(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8)), max_size=4), min_size=1, max_size=8),
)
def test_masses_kept_per_interval_are_the_masses_worked_out_afresh(made, requests) -> None:
    """`LineWeights.mass` keeps each interval's weight: asked again and again, in any order, for
    spans that share intervals and spans that overlap them, it answers as a fresh instance."""
    kept = LineWeights(made)
    for ranges in requests + requests[::-1]:
        spans = merge(("f.py", lo, lo + width) for lo, width in ranges)
        assert kept.mass(spans) == LineWeights(made).mass(spans)
