"""Symbol names of chunks (retrieval/chunking/symbols.py) with the real grammars: the name rules per
language, qualification by enclosing definitions, and that the definitions line up with the
chunks `chunk_file` makes (same ids, same order) on real and garbled sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.evaluation.run_corpus import open_corpus
from cce_relevance.retrieval.chunking import symbols as symbols_module
from cce_relevance.retrieval.chunking.chunk import MODULE, chunk_file
from cce_relevance.retrieval.chunking.languages import EXTRA_LANGUAGES, enabled_packs
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS, PackSet
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols, Definition, ParsedFiles, file_definitions
from cce_relevance.retrieval.index.build import BuildOptions
from tests.retrieval.chunking.test_syntax import _SEEDS, _garble, _mutation
from tests.retrieval.corpora import write_corpus

ALL_PACKS = enabled_packs(EXTRA_LANGUAGES)

SOURCES = {
    "a.py": (
        "class Client:\n    def send(self):\n        def retry():\n            pass\n\n"
        "    @property\n    def x(self):\n        pass\n\n\nasync def main():\n    pass\n",
        ["Client", "Client.send", "Client.send.retry", "Client.x", "main"],
    ),
    "a.js": (
        "const f = () => 1;\nlet g = function () {};\nconst h = function named() {};\nobj.k = () => 2;\n"
        "class A { m() {} #p() {} fld = () => 3; }\nconst o = { q() {}, 'r s': () => 4 };\n"
        "export default function () {}\nfoo(() => 5);\n",
        ["f", "g", "named", "k", "A", "A.m", "A.#p", "A.fld", "q", "r s", None, None],
    ),
    "a.ts": (
        "class B { m(): void {} fld = () => 3; }\ninterface I { x: number }\nenum E { A }\n"
        "namespace N { export function f() {} }\n",
        ["B", "B.m", "B.fld", "I", "E", "N.f"],
    ),
    "a.rb": (
        "module M\n  class A::B < C\n    def m; end\n    def self.s; end\n  end\nend\n",
        ["M", "M.A.B", "M.A.B.m", "M.A.B.s"],
    ),
    "a.rs": (
        "mod tests { fn parses() {} }\nimpl<T> Foo<T> { fn new() {} }\n"
        "impl fmt::Display for a::Bar { fn fmt(&self) {} }\ntrait Tr { fn d() {} }\n",
        ["tests.parses", "Foo", "Foo.new", "Bar", "Bar.fmt", "Tr", "Tr.d"],
    ),
    "a.c": (
        "static int *foo(void) { return 0; }\nstruct S { int a; };\ntypedef struct { int b; } T;\n"
        "enum { X };\nint (*fp(void))(int) { return 0; }\n",
        ["foo", "S", "T", None, "fp"],
    ),
    "a.go": (
        "package p\nfunc F() {}\nfunc (s *Server) Serve() {}\nfunc (s *G[T]) M() {}\ntype A struct{}\n"
        "type ( B int; C string )\n",
        ["F", "Server.Serve", "G.M", "A", None],
    ),
    "A.java": (
        "class A { void m() {} A() {} record R(int x) { R {} } }\n",
        ["A", "A.m", "A.A", "A.R", "A.R.R"],
    ),
    "a.cpp": (
        "namespace n { class C { void m() {} }; }\nvoid C::out() {}\nC::~C() {}\n"
        "bool operator==(A a, A b) { return true; }\n",
        ["C", "C.m", "C.out", "C.~C", "operator=="],
    ),
    "a.cs": (
        "class C { void M() {} C() {} ~C() {} public static C operator +(C a, C b) { return a; } "
        "void Outer() { int Loc() { return 1; } } }\n",
        ["C", "C.M", "C.C", "C.~C", "C.operator +", "C.Outer", "C.Outer.Loc"],
    ),
    "a.php": ("<?php\nfunction f() {}\nclass C { function m() {} }\ntrait T {}\n", ["f", "C", "C.m", "T"]),
    "a.kt": (
        "fun f() {}\nclass C { fun m() {} }\nobject O {}\nclass D { companion object {} }\n",
        ["f", "C", "C.m", "O", "D", "D.Companion"],
    ),
}


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_symbols_per_language(path: str) -> None:
    text, expected = SOURCES[path]
    definitions = file_definitions(path, text, ALL_PACKS)
    assert [d.symbol for d in definitions] == expected
    chunks = chunk_file(path, text, ALL_PACKS).chunks
    assert [(d.chunk_id, d.kind, d.start_line, d.end_line) for d in definitions] == [
        (c.chunk_id, c.kind, c.start_line, c.end_line) for c in chunks
    ]


def test_a_whole_file_chunk_has_no_symbol() -> None:
    assert file_definitions("notes.md", "# Notes\n") == ()
    assert file_definitions("empty.py", "x = 1\n") == ()  # no definition: one `module` chunk
    assert file_definitions("a.go", "package p\nfunc F() {}\n") == ()  # Go is opt-in


def _assert_lined_up(path: str, source: bytes) -> None:
    text = source.decode("utf-8", "surrogateescape")
    chunks = [c for c in chunk_file(path, text, ALL_PACKS).chunks if c.chunk_type != MODULE]
    definitions = file_definitions(path, text, ALL_PACKS)
    assert [d.chunk_id for d in definitions] == [c.chunk_id for c in chunks]
    for d in definitions:
        assert d.symbol is None or (d.symbol and "::" not in d.symbol and "\n" not in d.symbol)


def test_definitions_line_up_with_the_chunks_of_real_sources(repo_root: Path) -> None:
    roots = [
        repo_root / "test/fixture/samples",
        repo_root / "tests/retrieval/language_samples",
        repo_root / "cce_relevance",
    ]
    files = [
        p for root in roots for p in sorted(root.rglob("*")) if p.is_file() and ALL_PACKS.for_path(p.name)
    ]
    assert len(files) > 60
    named = 0
    for path in files:
        _assert_lined_up(path.name, path.read_bytes())
        named += sum(d.symbol is not None for d in file_definitions(path.name, path.read_text(), ALL_PACKS))
    assert named > 500


EXTENSIONS = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "ruby": "rb",
    "rust": "rs",
    "c": "c",
    "go": "go",
    "java": "java",
    "cpp": "cpp",
    "csharp": "cs",
    "php": "php",
    "kotlin": "kt",
}


@given(name=st.sampled_from(sorted(_SEEDS)), mutations=st.lists(_mutation, min_size=0, max_size=12))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_definitions_line_up_with_the_chunks_of_garbled_sources(name: str, mutations: list) -> None:
    _assert_lined_up(f"f.{EXTENSIONS[name]}", _garble(_SEEDS[name], mutations))


def test_corpus_symbols_name_the_indexed_chunks_of_a_redacted_file(tmp_path: Path) -> None:
    """The text parsed is the text indexed: redaction (which changes chunk ids) is applied alike."""
    write_corpus(
        tmp_path,
        {
            "app.py": 'class Api:\n    def call(self):\n        token = "sk-live-0123456789abcdefghij"\n',
            "README.md": "read me\n",
        },
    )
    index = open_corpus(str(tmp_path), indexing=BuildOptions())
    assert "REDACTED" in index.chunks[-1].content
    symbols = CorpusSymbols(str(tmp_path))
    assert [(c.file_path, symbols.of_chunk(c)) for c in index.chunks] == [
        ("README.md", None),
        ("app.py", "Api"),
        ("app.py", "Api.call"),
    ]
    unredacted = CorpusSymbols(str(tmp_path), protect_secrets=False)
    assert [d.symbol for d in unredacted.definitions("app.py")] == ["Api", "Api.call"]
    assert [unredacted.of_chunk(c) for c in index.chunks] == [None, None, None]  # other text, other ids
    assert symbols.definitions("missing.py") == ()


def test_corpora_sharing_parsed_files_parse_an_unchanged_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two trees (the Action's base and head) with a shared `parsed`: a file of the same path and
    text is parsed once, a changed one, one of another path or under other packs again; each
    tree's answers are those of its own `CorpusSymbols`."""
    same, base_only = "def kept():\n    pass\n", "def old():\n    pass\n"
    write_corpus(tmp_path / "base", {"a.py": same, "b.py": base_only, "c.py": same})
    write_corpus(tmp_path / "head", {"a.py": same, "b.py": "def new():\n    pass\n", "c.py": same})
    parsed_paths: list[str] = []
    real = symbols_module.file_definitions

    def counting(path: str, text: str, packs: PackSet = REFERENCE_PACKS) -> tuple[Definition, ...]:
        parsed_paths.append(path)
        return real(path, text, packs)

    monkeypatch.setattr(symbols_module, "file_definitions", counting)
    parsed: ParsedFiles = {}
    trees = [CorpusSymbols(str(tmp_path / side), parsed=parsed) for side in ("base", "head")]
    trees.append(CorpusSymbols(str(tmp_path / "head"), ALL_PACKS, parsed=parsed))
    answers = [[[d.symbol for d in tree.definitions(p)] for p in ("a.py", "b.py", "c.py")] for tree in trees]
    assert parsed_paths == ["a.py", "b.py", "c.py", "b.py", "a.py", "b.py", "c.py"]
    assert answers == [
        [["kept"], ["old"], ["kept"]],
        [["kept"], ["new"], ["kept"]],
        [["kept"], ["new"], ["kept"]],
    ]
    monkeypatch.setattr(symbols_module, "file_definitions", real)
    alone = [
        [
            [d.symbol for d in CorpusSymbols(str(tmp_path / side)).definitions(p)]
            for p in ("a.py", "b.py", "c.py")
        ]
        for side in ("base", "head")
    ]
    assert answers[:2] == alone
