"""The chunker: tree walk (§chunk-walk), chunk_id (§chunk-id), fallback (§module-chunk), the
§sample-chunks table, §pack-table consequences."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.chunking.chunk import chunk_file, chunk_id
from cce_relevance.retrieval.chunking.packs import pack_for_path
from cce_relevance.retrieval.tokens import estimate_tokens
from tests.retrieval.corpora import SAMPLES, read_tree, ref_chunk_id

# ---------------------------------------------------------------- §sample-chunks worked example

# (file, start, end, chunk_type, kind, chunk_id, tokens), in index order — copied from the spec.
TABLE_6_6 = [
    ("c.c", 3, 5, "class", "struct_specifier", "ebd4df588b8ce225", 7),
    ("c.c", 7, 9, "function", "function_definition", "bd2d22d0219c51fc", 13),
    ("c.c", 7, 7, "class", "struct_specifier", "2e676e753a19fde1", 2),
    ("javascript.js", 3, 5, "function", "function_declaration", "f4489b3ebdbda008", 15),
    ("javascript.js", 7, 11, "class", "class_declaration", "7a9ab68a9b7e83ca", 14),
    ("javascript.js", 8, 10, "function", "method_definition", "9db72353b886e6ab", 10),
    ("notes.md", 1, 3, "module", "module", "43bceef453598295", 11),
    ("python.py", 3, 4, "function", "function_definition", "be153275c6843f6d", 16),
    ("python.py", 6, 8, "class", "class_definition", "a6b1b4c6f840bd31", 16),
    ("python.py", 7, 8, "function", "function_definition", "ecbe3170743462d4", 11),
    ("ruby.rb", 3, 5, "function", "method", "d834029f4cbe3888", 11),
    ("ruby.rb", 7, 11, "class", "class", "5843ab577fefbd05", 18),
    ("ruby.rb", 8, 10, "function", "method", "69dc8697dc5b3397", 13),
    ("rust.rs", 3, 5, "function", "function_item", "57ccc3b7778f6eb5", 16),
    ("rust.rs", 7, 9, "class", "struct_item", "fb85f1570be695fd", 13),
    ("rust.rs", 11, 15, "class", "impl_item", "bc67a7b411040508", 18),
    ("rust.rs", 12, 14, "function", "function_item", "36ce4add58213d5c", 13),
    ("typescript.ts", 3, 5, "function", "function_declaration", "66da5aa8411dca94", 17),
    ("typescript.ts", 7, 9, "class", "interface_declaration", "d01f3257cc9cbe88", 9),
    ("typescript.ts", 11, 15, "class", "class_declaration", "45c58c3454407492", 19),
    ("typescript.ts", 12, 14, "function", "method_definition", "4bb316f09f9cb1cf", 14),
]
LANGUAGE = {
    "c.c": "c",
    "javascript.js": "javascript",
    "notes.md": "plaintext",
    "python.py": "python",
    "ruby.rb": "ruby",
    "rust.rs": "rust",
    "typescript.ts": "typescript",
}
SAMPLE_IMPORTS = {
    "c.c": ["stdlib"],
    "javascript.js": ["fs"],
    "notes.md": [],
    "python.py": ["os"],
    "ruby.rb": ["json"],
    "rust.rs": ["std"],
    "typescript.ts": ["fs"],
}


@pytest.fixture(scope="module")
def sample_files(upstream):
    return read_tree(upstream / SAMPLES)


@pytest.fixture(scope="module")
def sample_chunks(sample_files):
    return [c for path in sorted(sample_files) for c in chunk_file(path, sample_files[path]).chunks]


def test_table_6_6_index_order(sample_chunks):
    got = [
        (c.file_path, c.start_line, c.end_line, c.chunk_type, c.kind, c.chunk_id, c.token_count)
        for c in sample_chunks
    ]
    assert got == TABLE_6_6


def test_table_6_6_languages_and_content(sample_chunks, sample_files):
    for c in sample_chunks:
        assert c.language == LANGUAGE[c.file_path]
        assert c.content in sample_files[c.file_path]
        assert c.token_count == max(1, len(c.content.encode()) // 4)
        assert c.chunk_id == ref_chunk_id(c.file_path, c.start_line, c.end_line, c.content.encode())


def test_sample_imports(sample_files):
    # §imports [golden]: python os, javascript fs, ruby json, rust std, typescript fs, c stdlib.
    assert {p: chunk_file(p, t).imports for p, t in sample_files.items()} == SAMPLE_IMPORTS


def test_conformance_json_chunk_set(upstream, sample_chunks):
    # §conformance: conformance.json lists the same chunks sorted by (file_path, start_line, chunk_id).
    doc = json.loads((upstream / "conformance.json").read_text())
    assert doc["spec_version"] == "2.0" and doc["impl_language"] == "rust"
    mine = sorted(
        (
            {
                "file_path": c.file_path,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "chunk_type": c.chunk_type,
                "kind": c.kind,
                "chunk_id": c.chunk_id,
                "token_count": c.token_count,
            }
            for c in sample_chunks
        ),
        key=lambda d: (d["file_path"], d["start_line"], d["chunk_id"]),
    )
    assert mine == doc["chunks"]


def test_preorder_function_before_struct_reference(sample_chunks):
    # §sample-chunks rows 1-2 / §pack-table: `struct Node` inside `int sum_node(struct Node *n)` is
    # the chunk c.c 7-7 (2 tokens), emitted after the enclosing function in pre-order.
    c1, c2 = sample_chunks[1], sample_chunks[2]
    assert (c1.kind, c2.kind, c2.content) == ("function_definition", "struct_specifier", "struct Node")


def test_definition_boundaries_in_samples(sample_chunks):
    by_id = {c.chunk_id: c for c in sample_chunks}
    assert by_id["66da5aa8411dca94"].content.startswith("function loadConfig")  # `export` outside
    assert by_id["57ccc3b7778f6eb5"].content.startswith("pub fn build_index")  # `pub` inside
    assert by_id["fb85f1570be695fd"].content.startswith("pub struct Store")
    assert by_id["ecbe3170743462d4"].content.startswith("def load(self):")  # no leading indentation
    assert by_id["43bceef453598295"].content == "# Notes\nFixture for the module-fallback path.\n"


# ---------------------------------------------------------------- §chunk-id chunk_id


def test_chunk_id_function_by_hand():
    want = hashlib.sha256(b"a.py:3:4:def f(): pass").hexdigest()[:16]
    assert chunk_id("a.py", 3, 4, b"def f(): pass") == want
    assert re.fullmatch(r"[0-9a-f]{16}", want)


def test_chunk_id_uses_first_100_bytes_raw_cut_mid_character():
    # "a" + 60 x "é" is 121 bytes; the 100-byte prefix cuts the 50th é in half (§chunk-id: raw slice).
    text = "a" + "é" * 60
    raw = text.encode()
    assert len(raw) == 121
    want = hashlib.sha256(b"f.txt:1:1:" + raw[:100]).hexdigest()[:16]
    assert chunk_file("f.txt", text).chunks[0].chunk_id == want
    # bytes beyond the first 100 do not matter; location does
    assert chunk_file("f.txt", text + "zzz").chunks[0].chunk_id == want
    assert chunk_file("g.txt", text).chunks[0].chunk_id != want


def test_chunk_id_ignores_kind_type_language():
    # Same path, lines and content in two packs' files would hash identically; check via the
    # function: only path, lines and content bytes enter the hash.
    a = chunk_file("x.py", "def f(): pass").chunks[0]
    assert a.chunk_id == ref_chunk_id("x.py", 1, 1, b"def f(): pass")


def test_duplicate_chunk_ids_are_possible():
    # §edge-cases: two `struct A` references on one line share file, span and first bytes -> same id.
    chunks = chunk_file("d.c", "struct A *f(struct B b) { return (struct A*)0; }\n").chunks
    assert [(c.kind, c.content) for c in chunks] == [
        ("function_definition", "struct A *f(struct B b) { return (struct A*)0; }"),
        ("struct_specifier", "struct A"),
        ("struct_specifier", "struct B"),
        ("struct_specifier", "struct A"),
    ]
    assert chunks[1].chunk_id == chunks[3].chunk_id != chunks[2].chunk_id
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)


# ---------------------------------------------------------------- §module-chunk fallback module chunk


def test_empty_file_is_one_module_chunk():
    # §edge-cases: empty file -> one module chunk, lines 1-1, token_count 1.
    (c,) = chunk_file("empty.txt", "").chunks
    assert (c.start_line, c.end_line, c.chunk_type, c.kind, c.language, c.content, c.token_count) == (
        1,
        1,
        "module",
        "module",
        "plaintext",
        "",
        1,
    )
    assert c.chunk_id == hashlib.sha256(b"empty.txt:1:1:").hexdigest()[:16]


def test_empty_file_with_a_pack():
    cf = chunk_file("empty.py", "")
    (c,) = cf.chunks
    assert (c.start_line, c.end_line, c.kind, c.language, c.token_count) == (1, 1, "module", "python", 1)
    assert cf.imports == []


@pytest.mark.parametrize(
    ("text", "end"),
    [("a", 1), ("a\n", 2), ("a\nb\n", 3), ("a\nb", 2), ("\n\n\n", 4), ("a\r\nb\r\n", 3), ("x\ry", 1)],
)
def test_module_end_line_is_newline_count_plus_one(text, end):
    # §module-chunk: end_line = number of 0x0A bytes + 1 (a trailing newline counts an extra line).
    (c,) = chunk_file("notes.md", text).chunks
    assert (c.start_line, c.end_line) == (1, end)
    assert c.content == text


def test_pack_without_definitions_keeps_language_and_imports():
    # §module-chunk (b) / §edge-cases: module chunk with the pack's language; imports still extracted.
    cf = chunk_file("script.py", "import os\nfrom lib import x\nprint(os.sep)\n")
    (c,) = cf.chunks
    assert (c.kind, c.chunk_type, c.language, c.start_line, c.end_line) == (
        "module",
        "module",
        "python",
        1,
        4,
    )
    assert cf.imports == ["os", "lib"]
    cf = chunk_file("lib.rs", "use std::io;\nconst X: u32 = 1;\n")
    assert [(c.kind, c.language) for c in cf.chunks] == [("module", "rust")]
    assert cf.imports == ["std"]


@pytest.mark.parametrize(
    "path", ["Makefile", ".gitignore", "a.json", "Cargo.lock", "a.", "x.yml", "README.MD"]
)
def test_unclaimed_files_are_plaintext_module_chunks(path):
    text = "def f():\n    pass\n"  # python text, but no pack claims the path
    cf = chunk_file(path, text)
    assert [(c.kind, c.language, c.content) for c in cf.chunks] == [("module", "plaintext", text)]
    assert cf.imports == []


# ---------------------------------------------------------------- §pack-table / §chunk-walk consequences


def _spans(path, text):
    return [
        (c.start_line, c.end_line, c.chunk_type, c.kind, c.content) for c in chunk_file(path, text).chunks
    ]


def test_nested_definitions_outer_first():
    text = "class A:\n    def m(self):\n        def inner():\n            pass\n"
    assert [(s, e, k) for s, e, _, k, _ in _spans("n.py", text)] == [
        (1, 4, "class_definition"),
        (2, 4, "function_definition"),
        (3, 4, "function_definition"),
    ]


def test_python_decorator_and_lambda_outside():
    assert _spans("d.py", "@dec\ndef f():\n    pass\n") == [
        (2, 3, "function", "function_definition", "def f():\n    pass")
    ]
    assert [k for *_, k, _ in _spans("l.py", "f = lambda x: x\n")] == ["module"]


def test_export_function_starts_at_function():
    for ext in (".js", ".ts"):
        assert _spans("e" + ext, "export function f() {}\n") == [
            (1, 1, "function", "function_declaration", "function f() {}")
        ]


def test_rust_pub_fn_includes_pub_but_not_attributes_or_docs():
    assert _spans("r.rs", "/// doc\n#[inline]\npub fn f() {}\n") == [
        (3, 3, "function", "function_item", "pub fn f() {}")
    ]


def test_rust_kinds():
    text = (
        "mod m { fn f() {} }\ntrait T { fn sig(&self); fn body(&self) {} }\nenum E { A }\n"
        "union U { a: u32 }\nconst C: u32 = 1;\nmacro_rules! mm { () => {} }\n"
    )
    assert [(s, k, c) for s, _, _, k, c in _spans("k.rs", text)] == [
        (1, "function_item", "fn f() {}"),  # mod_item itself is not a chunk
        (2, "trait_item", "trait T { fn sig(&self); fn body(&self) {} }"),
        (2, "function_item", "fn body(&self) {}"),  # the signature without body is not
        (3, "enum_item", "enum E { A }"),
        (4, "union_item", "union U { a: u32 }"),
    ]


def test_ecmascript_kinds():
    text = (
        "function* g() { yield 1; }\nconst C = class { m() {} };\n[1].map(x => x);\n"
        "const f = function () {};\n"
    )
    assert [(s, t, k, c) for s, _, t, k, c in _spans("k.js", text)] == [
        (2, "function", "method_definition", "m() {}"),  # generator and class expression are not chunks
        (3, "function", "arrow_function", "x => x"),  # inline callbacks are chunks
        (4, "function", "function_expression", "function () {}"),
    ]


def test_typescript_kinds():
    text = (
        "abstract class A { m(): void {} }\ntype T = { a: string };\ninterface I { m(): void; }\n"
        "enum E { X }\nnamespace N { }\n"
    )
    assert [(s, t, k) for s, _, t, k, _ in _spans("k.ts", text)] == [
        (1, "function", "method_definition"),  # abstract class itself is not a chunk
        (3, "class", "interface_declaration"),  # its method signature is not
        (4, "class", "enum_declaration"),
    ]
    assert [k for *_, k, _ in _spans("t.ts", "type T = { a: string };\n")] == ["module"]


def test_ruby_kinds():
    text = "module M\n  class << self\n    def x; end\n  end\n  def self.y; end\nend\n[1].each { |v| v }\n"
    assert [(s, e, t, k) for s, e, t, k, _ in _spans("k.rb", text)] == [
        (1, 6, "class", "module"),  # the anonymous `module` keyword token is not counted
        (3, 3, "function", "method"),  # singleton_class is not a chunk
        (5, 5, "function", "singleton_method"),
    ]


def test_c_type_references_become_class_chunks():
    text = "union U { int a; };\nenum E { X };\nstruct S;\n"
    for path in ("k.c", "k.h"):
        assert [(s, t, k, c) for s, _, t, k, c in _spans(path, text)] == [
            (1, "class", "union_specifier", "union U { int a; }"),
            (2, "class", "enum_specifier", "enum E { X }"),
            (3, "class", "struct_specifier", "struct S"),
        ]
        assert all(c.language == "c" for c in chunk_file(path, text).chunks)


def test_tsx_parsed_as_typescript():
    # §pack-table: under the TypeScript grammar the JSX arrow does not parse as a chunk (error nodes),
    # whereas `.jsx` (javascript grammar) finds it; `.tsx` and `.ts` chunk identically.
    src = "const a = () => <div>{x}</div>;\n"
    tsx = [(c.start_line, c.end_line, c.kind, c.content, c.language) for c in chunk_file("a.tsx", src).chunks]
    ts = [(c.start_line, c.end_line, c.kind, c.content, c.language) for c in chunk_file("a.ts", src).chunks]
    assert tsx == ts == [(1, 2, "module", src, "typescript")]
    assert [c.kind for c in chunk_file("a.jsx", src).chunks] == ["arrow_function"]
    both = "function f(): number { return 1; }\nconst g = () => 2;\n"
    assert (
        [(c.kind, c.content) for c in chunk_file("b.tsx", both).chunks]
        == [(c.kind, c.content) for c in chunk_file("b.ts", both).chunks]
        == [("function_declaration", "function f(): number { return 1; }"), ("arrow_function", "() => 2")]
    )


def test_multibyte_and_crlf_content_is_the_exact_source_slice():
    assert _spans("u.py", "# é\ndef f():\n    return 'ü'\n") == [
        (2, 3, "function", "function_definition", "def f():\n    return 'ü'")
    ]
    assert _spans("w.py", "def f():\r\n    pass\r\n") == [
        (1, 2, "function", "function_definition", "def f():\r\n    pass")
    ]


def test_end_position_at_column_zero_is_not_adjusted():
    # §chunk-walk: end_line = end row + 1 even when the node ends at column 0 of the next line. Error
    # recovery on an unclosed C function makes the node swallow the `#endif` line and its newline.
    (c,) = chunk_file("u.c", "int f() {\n#endif\n").chunks
    assert (c.kind, c.start_line, c.end_line, c.content) == (
        "function_definition",
        1,
        3,
        "int f() {\n#endif\n",
    )


def test_deep_nesting_does_not_overflow():
    # §chunk-walk: the walk is iterative; 1500 nested arrows exceed Python's default recursion limit.
    n = 1500
    src = "const f = " + "a => " * n + "1;\n"
    chunks = chunk_file("deep.js", src).chunks
    assert len(chunks) == n
    assert all(c.kind == "arrow_function" for c in chunks)
    assert [len(c.content) for c in chunks] == sorted((len(c.content) for c in chunks), reverse=True)


# ---------------------------------------------------------------- property tests

_EXTS = [".py", ".js", ".rb", ".rs", ".ts", ".tsx", ".c", ".h", ".md", ""]
_SNIPPETS = [
    "def f(x):\n    return x\n",
    "class A:\n    pass\n",
    "function g() { return 1; }\n",
    "x => x",
    "class B { m() {} }\n",
    "def h\nend\n",
    "module M\nend\n",
    "fn k() {}\n",
    "struct S { int a; };\n",
    "impl T { fn z(&self) {} }\n",
    "interface I { a: string }\n",
    "int main(void) { return 0; }\n",
    "import os\n",
    "use std::io;\n",
    "#include <a.h>\n",
    "require 'x'\n",
    "{",
    "}",
    "(",
    ")",
    "\n",
    "    ",
    "é",
    "日本",
    "\r\n",
    "\t",
    '"',
    "'",
    "`",
    "/*",
    "*/",
    "#",
    "//",
    ";",
    "=>",
    "<div>",
    "\x00",
]
_SOURCES = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(_SNIPPETS), max_size=25).map("".join),
    st.binary(max_size=200).map(lambda b: b.decode("utf-8", "replace")),
)


def _check_invariants(path: str, text: str):
    cf = chunk_file(path, text)
    assert cf.chunks, "every file yields at least one chunk"
    raw = text.encode("utf-8")
    n_lines = raw.count(b"\n") + 1
    pack = pack_for_path(path)
    for c in cf.chunks:
        assert 1 <= c.start_line <= c.end_line <= n_lines
        assert re.fullmatch(r"[0-9a-f]{16}", c.chunk_id)
        assert c.chunk_id == ref_chunk_id(path, c.start_line, c.end_line, c.content.encode("utf-8"))
        assert c.token_count == estimate_tokens(c.content)
        assert c.file_path == path
        if c.chunk_type == "module":  # the fallback (a Ruby `module` node is a class chunk)
            assert (c.kind, c.start_line, c.end_line, c.content) == ("module", 1, n_lines, text)
            assert len(cf.chunks) == 1
        else:
            assert pack is not None and c.language == pack.name
            assert c.chunk_type == ("class" if c.kind in pack.class_kinds else "function")
            # content is the source slice spanning exactly rows start..end
            lines = text.split("\n")
            window = "\n".join(lines[c.start_line - 1 : c.end_line])
            assert c.content in window
            assert c.content.count("\n") == c.end_line - c.start_line
    if pack is None:
        assert cf.chunks[0].language == "plaintext" and cf.imports == []
    assert len(cf.imports) == len(set(cf.imports)) and "" not in cf.imports
    return cf


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ext=st.sampled_from(_EXTS), text=_SOURCES)
def test_chunker_invariants(ext, text):
    path = "dir/file" + ext
    first = _check_invariants(path, text)
    second = chunk_file(path, text)
    assert [(c.chunk_id, c.start_line, c.end_line, c.kind, c.content) for c in first.chunks] == [
        (c.chunk_id, c.start_line, c.end_line, c.kind, c.content) for c in second.chunks
    ]
    assert first.imports == second.imports


@settings(max_examples=25, deadline=None)
@given(text=_SOURCES)
def test_chunker_never_raises_on_any_extension(text):
    for ext in _EXTS:
        _check_invariants("f" + ext, text)
