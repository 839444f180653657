"""Anchor lookups through `AnchorIndex` give exactly what the plain scan gives.

The plain versions (tests/evaluation/reference_validation.py) test every anchor against every
chunk; the lookups must agree with them on every answer: the chunks an anchor matches (in index
order), whether it resolves, each file's kinds, the whole `validate` result (codes, reasons,
order) and the judgments `--metrics` and TREC files are made from. Generated corpora stress the
interval lookups (nested, touching, duplicated and out-of-order chunks; files under one path
twice); real corpora, indexed cold and from the index cache, check what the CLI and the Action use.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance import api
from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import Case, parse_fixtures
from cce_relevance.evaluation.judgments import judge
from cce_relevance.evaluation.run_corpus import corpus_symbols
from cce_relevance.evaluation.validation import check_indexed, validate_cases
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.corpus.walk import walk
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.store.store import load_store
from cce_relevance.strings import rust_line_count, rust_lines
from tests.evaluation.reference_validation import plain_judge, plain_matching, plain_validate

PATHS = ("a.py", "b.py", "dir/c.py", "d.md")
KINDS = ("function_definition", "class_definition", "module")
REPO = Path(__file__).resolve().parents[2]


def chunk(i: int, path: str, kind: str, start: int, length: int) -> Chunk:
    return Chunk(f"id{i:04}", path, start, start + length, "function", kind, "python", "", 1)


@st.composite
def corpora(draw: st.DrawFn) -> list[Chunk]:
    """Chunks in index order: files one after the other (a path may come twice, as two files
    decoded to one name do), each file's chunks in any line order, nested, touching or equal."""
    files = draw(st.lists(st.sampled_from(PATHS), max_size=6))
    chunks: list[Chunk] = []
    for path in files:
        for _ in range(draw(st.integers(1, 8))):
            start = draw(st.integers(1, 40))
            chunks.append(
                chunk(len(chunks), path, draw(st.sampled_from(KINDS)), start, draw(st.integers(0, 12)))
            )
    return chunks


def ranges() -> st.SearchStrategy[tuple[int, int] | None]:
    return st.none() | st.tuples(st.integers(1, 60), st.integers(0, 15)).map(lambda r: (r[0], r[0] + r[1]))


any_anchors = st.builds(
    Anchor,
    st.none() | st.sampled_from((*PATHS, "gone.py")),
    st.none() | st.sampled_from((*KINDS, "enum_item")),
    ranges(),
)
# What the fixture grammar lets through: a path or a kind, and a range only with a path.
fixture_anchors = any_anchors.filter(lambda a: (a.path or a.kind) and (a.range is None or a.path))


def by_file(chunks: list[Chunk]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        out.setdefault(c.file_path, []).append(i)
    return out


@settings(max_examples=300, deadline=None)
@given(corpora(), st.lists(any_anchors, max_size=12), st.booleans())
def test_lookups_match_the_plain_scan(
    chunks: list[Chunk], anchors: list[Anchor], given_by_file: bool
) -> None:
    index = AnchorIndex(chunks, by_file(chunks) if given_by_file else None)
    for anchor in anchors * 2:  # the second pass reads the groups made by the first
        expected = plain_matching(anchor, chunks)
        assert list(index.matching(anchor)) == expected
        assert index.resolves(anchor) is bool(expected)
    for path in (*PATHS, "gone.py"):
        kinds = {c.kind for c in chunks if c.file_path == path}
        assert index.kinds_in(path) == (frozenset(kinds) if kinds else None)


@st.composite
def fixture_sets(draw: st.DrawFn) -> tuple[Case, ...]:
    """Cases as the fixture parser reads them: repeated ids, and graded anchors."""
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        anchors = list(
            dict.fromkeys(a.display() for a in draw(st.lists(fixture_anchors, min_size=1, max_size=4)))
        )
        grades = {a: draw(st.integers(1, 4)) for a in anchors if draw(st.booleans())}
        lines.append(
            json.dumps(
                {
                    "id": draw(st.sampled_from(("q1", "q2", "q3", "q4"))),
                    "query": "q",
                    "expected": anchors,
                    "grades": grades,
                }
            )
        )
    return parse_fixtures("".join(line + "\n" for line in lines), "set.jsonl", grades=True).cases


@settings(max_examples=300, deadline=None)
@given(corpora(), fixture_sets(), st.dictionaries(st.sampled_from(PATHS), st.integers(0, 50)))
def test_validate_and_judge_match_the_plain_scan(
    chunks: list[Chunk], cases: tuple[Case, ...], line_counts: dict[str, int]
) -> None:
    index = AnchorIndex(chunks)
    assert validate_cases("set.jsonl", "corpus", cases, index, line_counts) == plain_validate(
        "set.jsonl", "corpus", cases, chunks, line_counts
    )
    for case in cases:
        assert judge(case, chunks, index) == plain_judge(case, chunks)


@given(st.text(alphabet="ab\r\n", max_size=12))
def test_line_count_is_the_number_of_rust_lines(text: str) -> None:
    assert rust_line_count(text) == len(rust_lines(text))


def real_anchors(chunks: list[Chunk], lines: dict[str, int]) -> list[str]:
    """Anchors of every shape from a real corpus: each chunk's own, moved off it by a line or a
    hundred, past its file's end, of another kind, and whole files and kinds, some gone."""
    out = []
    for i, c in enumerate(chunks[::7]):
        span = f"@{c.start_line}-{c.end_line}"
        moved = i % 3 * 50 + 1
        out += [
            f"{c.file_path}#{c.kind}{span}",
            f"{c.file_path}@{c.end_line + moved}-{c.end_line + moved + 2}",
            f"{c.file_path}#{c.kind}@{max(1, c.start_line - moved)}-{max(1, c.start_line - 1)}",
            f"{c.file_path}#enum_item{span}",
            f"{c.file_path}@{lines[c.file_path] + 1}-{lines[c.file_path] + 9}",
            f"gone/{c.file_path}{span}",
            f"#{c.kind}",
            c.file_path,
        ]
    return [*out, "#no_such_kind"]


@pytest.mark.parametrize("corpus", ["test/fixture/samples", "eval/relevance/docs-corpus", "cce_relevance"])
def test_validate_on_real_corpora_matches_the_plain_scan(corpus: str, tmp_path: Path) -> None:
    root = REPO / corpus
    line_counts = {f.path: len(rust_lines(f.text)) for f in walk(root).files}
    cold = build_index(root, cache=str(tmp_path))
    cached = build_index(root, cache=str(tmp_path))  # the whole corpus, as kept by the cold build
    anchors = real_anchors(cold.chunks, line_counts)
    lines = [
        json.dumps(
            {"id": f"q{i // 3}", "query": "q", "expected": anchors[i : i + 3], "grades": {anchors[i]: 2}}
        )
        for i in range(0, len(anchors), 3)
    ]
    fixtures = parse_fixtures("".join(line + "\n" for line in lines), "set.jsonl", grades=True)
    expected = plain_validate("set.jsonl", corpus, fixtures.cases, cold.chunks, line_counts)
    assert expected.findings and not expected.ok
    for index in (cold, cached):
        assert dict(index.line_counts or {}) == line_counts
        assert check_indexed("set.jsonl", fixtures.cases, corpus, index, corpus_symbols(corpus)) == expected
        anchor_index = AnchorIndex.of_index(index)
        assert [judge(c, index.chunks, anchor_index) for c in fixtures.cases] == [
            plain_judge(c, cold.chunks) for c in fixtures.cases
        ]


def test_a_store_has_no_line_counts_and_says_no_chunk_in_range(tmp_path: Path) -> None:
    """An index loaded from a store knows no walked texts: a range past a file's end then gets the
    general reason, never a wrong count."""
    written = api.index_corpus(str(REPO / "test/fixture/samples"), out=str(tmp_path / "store.json"))
    loaded = load_store(written.path)
    assert loaded.line_counts is None
    fixtures = parse_fixtures('{"query":"q","expected":["c.c@900-901"]}\n', "s.jsonl")
    [finding, _] = check_indexed("s.jsonl", fixtures.cases, "store", loaded, None).findings
    assert (finding.code, finding.anchor) == ("no-chunk-in-range", "c.c@900-901")


def test_two_files_under_one_path_are_both_looked_in(tmp_path: Path) -> None:
    """Names that are not UTF-8 decode lossily, so two files can share a path; the cached index's
    chunks by file must hold both files' chunks, as the plain scan sees them."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, body in (
        (b"a\xffb.py", "def first():\n    return 1\n"),
        (b"a\xfeb.py", "\n\n\n\ndef second():\n    return 2\n"),
    ):
        with open(bytes(corpus) + b"/" + name, "wb") as handle:
            handle.write(body.encode())
    cold = build_index(corpus, cache=str(tmp_path / "cache"))
    cached = build_index(corpus, cache=str(tmp_path / "cache"))
    [path] = {c.file_path for c in cold.chunks}
    line_counts = {f.path: len(rust_lines(f.text)) for f in walk(corpus).files}
    fixtures = parse_fixtures(
        "".join(
            json.dumps({"query": "q", "expected": [f"{path}{span}"]}) + "\n"
            for span in ("@1-2", "@5-6", "#function_definition@9-9")
        ),
        "s.jsonl",
    )
    expected = plain_validate("s.jsonl", "corpus", fixtures.cases, cold.chunks, line_counts)
    assert [f.code for f in expected.findings] == ["range-past-end", "unsatisfiable"]
    for index in (cold, cached):
        assert len(index.chunks_by_file[path]) == 2
        assert check_indexed("s.jsonl", fixtures.cases, "corpus", index, corpus_symbols("corpus")) == expected
