"""Line weights worked out at index time against the ones worked out from the chunks' contents.

Indexing weighs a file's lines from the chunker's bytes (retrieval/chunking/line_weights.py
`file_weighted_lines`), and the records, the kept corpora and their splices carry the result;
a metric used to work them out from the chunks' contents, which an index made some other way (a
loaded store) still does (`weighted_lines`, checked against §token-metrics's plain definition
in tests/evaluation/test_spans.py). Both must give the same integers for every file: real
corpora, generated files with every line ending and encoding oddity, cold, warm and spliced
indexes, and the reports of the CLI.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.evaluation.spans import LineWeights, merge
from cce_relevance.reference import MAX_FILE_SIZE
from cce_relevance.retrieval.cache.corpus_record import decode_corpus, encode_corpus
from cce_relevance.retrieval.chunking.chunk import Chunk, ChunkedFile, chunk_file
from cce_relevance.retrieval.chunking.line_weights import (
    EXTRA_DTYPE,
    NO_LINES,
    FileLineWeights,
    file_weighted_lines,
    line_runs,
    lines_in_slots,
    unique_paths,
    weighted_lines,
)
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
from cce_relevance.retrieval.file_indexing.file import index_file
from cce_relevance.retrieval.file_indexing.file_record import RUN_LENGTH, decode, encode
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index
from tests.cli.helpers import cli
from tests.evaluation.test_spans import plain_line_weights
from tests.retrieval.corpora import DOCS_CORPUS, SAMPLES, write_corpus
from tests.retrieval.search.test_fast_ranking import _stdlib_slice

REPO_ROOT = Path(__file__).resolve().parents[3]


def assert_same_lines(got: FileLineWeights, expected: FileLineWeights) -> None:
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a, b)
    assert got.extras.dtype == expected.extras.dtype == EXTRA_DTYPE


def by_file(chunks: list[Chunk]) -> dict[str, list[Chunk]]:
    files: dict[str, list[Chunk]] = {}
    for c in chunks:
        files.setdefault(c.file_path, []).append(c)
    return files


def assert_index_lines(index: Index) -> None:
    """Every file's weighted lines as indexing gave them are those worked out from its chunks."""
    assert index.weighted_lines is not None
    files = by_file(index.chunks)
    assert sorted(index.weighted_lines) == sorted(files)
    for path, chunks in files.items():
        assert_same_lines(index.weighted_lines[path], weighted_lines(chunks))


# ---------------------------------------------------------------- real corpora


@pytest.mark.parametrize("corpus", [SAMPLES, DOCS_CORPUS])
def test_upstream_corpora(upstream, corpus):
    assert_index_lines(build_index(upstream / corpus))


@pytest.mark.parametrize("corpus", ["test/fixture/samples", "eval/relevance/docs-corpus"])
def test_starter_corpora(corpus):
    assert_index_lines(build_index(REPO_ROOT / corpus))


def test_own_source(tmp_path):
    for part in ("cce_relevance", "tests/retrieval", "tests/evaluation"):
        shutil.copytree(REPO_ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    index = build_index(tmp_path, workers=2)
    assert len(index.chunks) > 1000
    assert_index_lines(index)


@pytest.fixture(scope="module")
def stdlib_tree(tmp_path_factory) -> Path:
    src_root = Path(sysconfig.get_paths()["stdlib"])
    root = tmp_path_factory.mktemp("stdlib-slice") / "tree"
    for p in _stdlib_slice():
        target = root / p.relative_to(src_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
    return root


def assert_same_index_lines(got: Index, expected: Index) -> None:
    assert got.weighted_lines is not None and expected.weighted_lines is not None
    assert sorted(got.weighted_lines) == sorted(expected.weighted_lines)
    for path in expected.weighted_lines:
        assert_same_lines(got.weighted_lines[path], expected.weighted_lines[path])


@pytest.mark.slow
def test_stdlib_slice_cold_warm_and_spliced(stdlib_tree, tmp_path):
    cold = build_index(stdlib_tree, workers=1)
    assert len(by_file(cold.chunks)) > 200
    assert_index_lines(cold)
    cache = str(tmp_path / "cache")
    assert_same_index_lines(build_index(stdlib_tree, cache=cache, workers=2), cold)  # from workers' records
    assert_same_index_lines(build_index(stdlib_tree, cache=cache), cold)  # the kept corpus
    tree = tmp_path / "tree"
    shutil.copytree(stdlib_tree, tree)
    build_index(tree, cache=cache)
    changed = max(tree.rglob("*.py"), key=lambda p: p.stat().st_size)
    changed.write_text(
        "class Added:\r\n    def m(self):\r\n        return 1\r\n" + changed.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    gone = min(tree.rglob("*.py"))
    gone.unlink()
    spliced = build_index(tree, cache=cache)
    assert_same_index_lines(spliced, build_index(tree, workers=1))
    assert_index_lines(spliced)


def test_an_index_weighs_what_its_chunks_weigh(stdlib_tree):
    """Masses of the lines of every file, read from the index and worked out from the chunks."""
    index = build_index(stdlib_tree, workers=1)
    read, worked_out = LineWeights.of_index(index), LineWeights(index.chunks)
    for path, chunks in sorted(by_file(index.chunks).items())[::7]:
        last = max(c.end_line for c in chunks) + 2
        spans = {path: [(n, n) for n in range(0, last)]}
        assert [read.mass({path: [span]}) for span in spans[path]] == [
            worked_out.mass({path: [span]}) for span in spans[path]
        ]
        assert read.mass({path: [(1, last)]}) == worked_out.mass({path: [(1, last)]})


# ---------------------------------------------------------------- generated files

_PY_LINES = st.sampled_from(
    [
        "def f(x):",
        "    return x",
        "class K:",
        "    def m(self):",
        "        pass",
        "        return 'é漢😀'",
        "@decorator",
        "x = 1",
        "",
        "    ",
        "# comment é",
        "if True:",
        "    def inner(): return 2",
        'API_KEY = "sk-ant-abcdefghijklmnopqrstuvwxyz012345"',
        "token = 'ghp_" + "a" * 36 + "'",
        "s = '\udcff\udcc3'",  # bytes that are not UTF-8, as the walker never gives but callers may
        "class Ä:  # " + "long " * 30,
    ]
)
_JS_LINES = st.sampled_from(
    [
        "function a() {",
        "} function b() {",
        "}",
        "  return 1",
        "class C {",
        "  m() {",
        "  }",
        "} class D { n() {",
        "const s = '日本';",
        "",
        "function c(){}",
        "/* \udc80 */",
    ]
)
_ENDINGS = st.sampled_from(["\n", "\r\n", "\r", "\n\n"])


@st.composite
def source_files(draw) -> tuple[str, str]:
    path, lines = draw(st.sampled_from([("f.py", _PY_LINES), ("f.js", _JS_LINES), ("f.txt", _PY_LINES)]))
    parts = []
    for line in draw(st.lists(lines, max_size=25)):
        parts += [line, draw(_ENDINGS)]
    if parts and draw(st.booleans()):
        parts.pop()  # an unterminated last line
    return path, "".join(parts)


@given(source_files(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_generated_files_weigh_as_their_chunks(file, protect_secrets):
    path, text = file
    entry = index_file(path, text, REFERENCE_PACKS, protect_secrets, False)
    assert_same_lines(entry.lines, weighted_lines(entry.chunks))
    assert_same_lines(decode(encode(entry, text), path, text).lines, entry.lines)
    expected = plain_line_weights(entry.chunks)
    weights = LineWeights([], {path: entry.lines})
    last = text.count("\n") + 3
    assert [weights.mass({path: [(n, n)]}) for n in range(0, last)] == [
        expected.get(n, 1) for n in range(0, last)
    ]


@given(source_files(), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_chunks_out_of_order_weigh_as_their_contents(file, rng):
    """Chunks the parser would never give in this order (first lines decreasing) still weigh
    from their bytes as from their contents: the first chunk in index order wins."""
    path, text = file
    chunked = chunk_file(path, text)
    order = list(range(len(chunked.chunks)))
    rng.shuffle(order)
    shuffled = ChunkedFile(
        [chunked.chunks[i] for i in order], chunked.imports, chunked.source, [chunked.spans[i] for i in order]
    )
    clean = not any("\udc80" <= ch <= "\udcff" for ch in text)
    assert_same_lines(file_weighted_lines(shuffled, clean), weighted_lines(shuffled.chunks))
    expected = plain_line_weights(shuffled.chunks)
    weights = LineWeights(shuffled.chunks)
    spans = merge((path, n, n) for n in range(0, text.count("\n") + 3))
    assert weights.mass(spans) == sum(expected.get(n, 1) for n in range(0, text.count("\n") + 3))


# Every reference language, with what makes its nodes' rows and bytes hard to line up: several
# definitions on one line, one ending mid-line, heredoc bodies after their line, line
# continuations, raw strings, template literals, a BOM, tabs, trailing spaces and CR-only lines.
_LANGUAGE_LINES = {
    "rb": [
        "def a; end",
        "def b(x) = x + 1",
        "class K; def m; 1; end; end",
        "module M",
        "end",
        "x = <<~EOS",
        "  heredoc é",
        "EOS",
        "def c(<<~A, <<~B)",
        "A",
        "B",
        "=begin",
        "=end",
        "def self.s; end",
        "class << self",
    ],
    "rs": [
        "fn a() {}",
        "fn b() { 1 } fn c() {",
        "}",
        "struct S { x: i32 } impl S { fn m(&self) {} }",
        "trait T {",
        "enum E { A, B }",
        "/* é \u00a0 */",
        'let s = "a\\',
        'b";',
        "union U { a: u8 }",
        'r#"raw',
        '"#',
        "mod m {",
    ],
    "c": [
        "int f(void) { return 0; } int g(void) {",
        "}",
        "struct s { int a; };",
        "#define X \\",
        "  1",
        "enum e { A };",
        "union u { int a; } v;",
        "/* ü */",
        "static void h() {",
        "  return;",
        "#include <a.h>",
    ],
    "ts": [
        "function a() {",
        "} function b() {",
        "}",
        "class C { m() {} } interface I { x: number }",
        "enum E { A }",
        "const f = () => {",
        "};",
        "const g = function() { return 1 }",
        "`tmpl ${x}",
        "`",
        "export class D {",
    ],
    "py": [
        "def f(): pass",
        "class K:",
        "    def m(self): return 1",
        "    x = '''",
        "é'''",
        "async def g():",
        "  \tpass",
        "@d",
        "def h(",
        "):",
        "  pass",
        "if x: def q(): pass",
    ],
}


@st.composite
def files_of_every_language(draw) -> tuple[str, str]:
    ext = draw(st.sampled_from(sorted(_LANGUAGE_LINES)))
    parts = ["\ufeff"] if draw(st.integers(0, 9)) == 0 else []
    for line in draw(st.lists(st.sampled_from(_LANGUAGE_LINES[ext]), max_size=20)):
        parts += [line, draw(st.sampled_from(["\n", "\r\n", "\r", "\n\n", "\r\r\n", " \n", "\t\n", " "]))]
    if parts and draw(st.booleans()):
        parts.pop()
    return f"f.{ext}", "".join(parts)


@given(files_of_every_language(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_files_of_every_language_weigh_as_their_chunks(file, protect_secrets):
    """The byte path counts a chunk's LFs as its rows (end line - start line) and skips lines by
    LFs in the source: for every grammar, what the parser's rows and the content agree on."""
    path, text = file
    entry = index_file(path, text, REFERENCE_PACKS, protect_secrets, True)
    assert [c.end_line - c.start_line for c in entry.chunks] == [c.content.count("\n") for c in entry.chunks]
    assert_same_lines(entry.lines, weighted_lines(entry.chunks))
    assert_same_lines(decode(encode(entry, text), path, text).lines, entry.lines)


def test_an_index_is_weighed_by_the_lines_it_holds():
    """`of_index` reads the index's weighted lines (not its chunks) for the files it has them for."""
    chunks = chunk_file(
        "k.py", "class K:\n    def m(self):\n        return 'a long line, many tokens'\n"
    ).chunks
    held = FileLineWeights(
        np.array([2], dtype=np.int64), np.array([1], dtype=np.int64), np.array([41], EXTRA_DTYPE)
    )
    weights = LineWeights.of_index(Index(chunks, {}, {}, weighted_lines={"k.py": held}))
    assert [weights.mass({"k.py": [(n, n)]}) for n in range(1, 4)] == [1, 42, 1]
    assert LineWeights(chunks).mass({"k.py": [(2, 2)]}) != 42


def test_bytes_that_are_not_utf8_weigh_from_the_contents():
    """A chunk of undecodable bytes holds U+FFFD (3 bytes) for each: its bytes would weigh less."""
    text = "def f():\n    return '" + "\udcff" * 8 + "'\n"
    entry = index_file("f.py", text, REFERENCE_PACKS, False, False)
    assert "\ufffd" in entry.chunks[0].content
    assert_same_lines(entry.lines, weighted_lines(entry.chunks))
    assert int(entry.lines.extras[1]) == len(("    return '" + "\ufffd" * 8 + "'").encode()) // 4 - 1
    sliced = file_weighted_lines(chunk_file("f.py", text), True)
    assert not np.array_equal(sliced.extras, entry.lines.extras)  # the shortcut would be wrong here


# ---------------------------------------------------------------- records


def _record_of(text: str = "class K:\n    def m(self):\n        return 1\n\ndef f():\n    pass\n") -> bytes:
    return encode(index_file("k.py", text, REFERENCE_PACKS, True, True), text)


def test_decoded_lines_do_not_keep_their_record_alive():
    """A file's weighted lines outlive its record in an index assembled from records: views of
    the record's bytes would keep every record of the corpus in memory (~40 MB on the standard
    library)."""
    text = "class K:\n    def m(self):\n        return 'a long line, many tokens'\n"
    data = _record_of(text)
    lines = decode(data, "k.py", text).lines
    assert lines.extras.shape[0] == 3
    for part in lines:
        assert not np.shares_memory(part, np.frombuffer(data, dtype=np.uint8))


def test_a_record_of_the_previous_format_is_refused():
    data = _record_of()
    with pytest.raises(ValueError):
        decode(b"CCEf" + data[4:], "k.py", "x")


@pytest.mark.parametrize(
    ("starts", "lengths", "extras"),
    [
        ([1, 0, 0], [2, 0, 0], [0]),  # lengths do not add up
        ([1, 0, 0], [1, -1, 0], []),  # a negative length
        ([1, 0, 0], [1, 0, 0], [-1]),  # a line lighter than 1
        ([1, 2, 0], [2, 1, 0], [0, 0, 0]),  # overlapping runs
        ([5, 2, 0], [1, 1, 0], [0, 0]),  # runs not ascending
    ],
)
def test_slots_that_are_not_weighted_lines_are_refused(starts, lengths, extras):
    with pytest.raises(ValueError):
        lines_in_slots(np.array(starts), np.array(lengths), np.array(extras, dtype=EXTRA_DTYPE))


def test_a_file_record_with_lines_that_do_not_add_up_is_refused():
    data = _record_of()
    size = int.from_bytes(data[4:8], "little")
    header = json.loads(data[8 : 8 + size])
    header["weighed"] -= 1
    new = json.dumps(header).encode("ascii")
    with pytest.raises(ValueError):
        decode(data[:4] + len(new).to_bytes(4, "little") + new + data[8 + size :], "k.py", "x")


def test_a_corpus_record_with_lines_that_do_not_add_up_is_refused(tmp_path):
    write_corpus(tmp_path / "c", {"a.py": "def a():\n    return 1\n", "b.py": "class B:\n    x = 2\n"})
    cache = str(tmp_path / "cache")
    build_index(tmp_path / "c", cache=cache)
    (record,) = (tmp_path / "cache" / "corpora").iterdir()
    arrays = decode_corpus(record.read_bytes()[32:])
    decode_corpus(encode_corpus(arrays))
    rows = arrays.rows.copy()
    rows[0, RUN_LENGTH] += 1
    with pytest.raises(ValueError, match="weighted lines"):
        decode_corpus(encode_corpus(dataclasses.replace(arrays, rows=rows)))
    with pytest.raises(ValueError, match="weighs less"):
        decode_corpus(
            encode_corpus(dataclasses.replace(arrays, line_extras=np.full_like(arrays.line_extras, -1)))
        )


# ---------------------------------------------------------------- the CLI's reports

_PROJECT = {
    "pkg/models.py": "class Model:\r\n    def save(self):\r\n        return 'saved ünïcödé'\r\n\r\n"
    "    def load(self): return 1\r\n",
    "pkg/util.js": "function parse(text) {\n  return text.split(',')\n} function render(tree) {\n"
    "  return tree.join('')\n}\n",
    "pkg/cr.py": "def old_mac():\r    return 'cr only'\r",
    "notes.md": "Models are saved with save.\nParsing splits on commas.\n",
}


def _set(root: Path) -> Path:
    (root / "set.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"save","query":"save the model","expected":["pkg/models.py@1-3"],"k":3}\n'
        '{"id":"parse","query":"parse text split","expected":["pkg/util.js@1-4","notes.md@2-2"],"k":2}\n'
        '{"id":"cr","query":"old mac cr only","expected":["pkg/cr.py@1-1","gone.py@1-9"],"k":4}\n',
        encoding="utf-8",
    )
    return root / "set.jsonl"


def test_reports_are_the_same_cold_warm_spliced_and_from_a_store(tmp_path):
    write_corpus(tmp_path / "corpus", _PROJECT)
    fixtures = str(_set(tmp_path))
    cache = str(tmp_path / "cache")
    cold = cli("run", fixtures, "--json", "--no-cache")
    assert cold.code in (0, 1) and json.loads(cold.out)["backends"]
    assert '"tokens"' in cold.out
    assert cli("run", fixtures, "--json", "--cache", cache).out == cold.out  # fills the cache
    assert cli("run", fixtures, "--json", "--cache", cache).out == cold.out  # the kept corpus
    store = str(tmp_path / "store.json")
    assert cli("index", str(tmp_path / "corpus"), "--out", store).code == 0
    from_store = json.loads(cli("run", fixtures, "--json", "--store", store).out)
    assert from_store["backends"] == json.loads(cold.out)["backends"]  # weighed from the chunks' contents
    models = tmp_path / "corpus" / "pkg" / "models.py"
    models.write_bytes(models.read_bytes().replace(b"saved", b"saved, stored and kept for good"))
    changed = cli("run", fixtures, "--json", "--no-cache")
    assert changed.out != cold.out
    assert cli("run", fixtures, "--json", "--cache", cache).out == changed.out  # spliced


# ---------------------------------------------------------------- what indexing leaves out


def test_paths_that_come_twice_are_left_to_the_chunks():
    assert unique_paths([("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5)]) == {"b": 2, "c": 4}


def test_files_an_index_has_no_lines_for_are_weighed_from_their_chunks(tmp_path):
    """Two walked files of one path (names that decode alike) are weighed together, first chunk
    first; so is any file an index made some other way (a loaded store) holds."""
    first = chunk_file("same.py", "class A:\n    def m(self):\n        return 'first file'\n").chunks
    second = chunk_file("same.py", "x = 1\n\n\ndef f():\n    return 'second, longer file'\n").chunks
    index = Index(
        first + second, {}, {}, weighted_lines=unique_paths([("same.py", NO_LINES), ("same.py", NO_LINES)])
    )
    expected = plain_line_weights(first + second)
    weights = LineWeights.of_index(index)
    assert [weights.mass({"same.py": [(n, n)]}) for n in range(0, 8)] == [
        expected.get(n, 1) for n in range(0, 8)
    ]
    assert weights.mass({"other.py": [(1, 5)]}) == 5


def test_runs_kept_for_the_metrics_are_four_byte_numbers_and_weigh_a_largest_file_exactly():
    """A metric keeps the runs of nearly every file its hits are in, in int32: a file of
    `MAX_FILE_SIZE` bytes (every line weighty) is still weighed exactly, line by line."""
    lines = MAX_FILE_SIZE // 64
    held = FileLineWeights(
        np.array([1], dtype=np.int64), np.array([lines], dtype=np.int64), np.full(lines, 15, EXTRA_DTYPE)
    )
    runs = line_runs(held)
    assert all(view.itemsize == 4 for view in runs)
    chunks = chunk_file("big.py", "x = 1\n").chunks
    weights = LineWeights.of_index(Index(chunks, {}, {}, weighted_lines={"big.py": held}))
    assert weights.mass({"big.py": [(1, lines)]}) == 16 * lines
    assert weights.mass({"big.py": [(lines - 9, lines + 5)]}) == 16 * 10 + 5
