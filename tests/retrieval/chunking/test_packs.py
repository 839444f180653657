"""Language packs: extension resolution (§packs), the pack table (§pack-table), import extraction
(§imports)."""

from __future__ import annotations

import pytest

from cce_relevance.retrieval.chunking.chunk import chunk_file
from cce_relevance.retrieval.chunking.packs import PACKS, file_extension, pack_for_path

# ---------------------------------------------------------------- §packs extension resolution


@pytest.mark.parametrize(
    ("path", "ext"),
    [
        (".eslintrc.js", ".js"),  # spec examples
        ("x.TSX", ".tsx"),
        ("Makefile", None),
        ("a.", "."),
        (".gitignore", None),
        ("src/app.py", ".py"),
        ("dir.d/Makefile", None),  # only the last segment counts
        ("dir.d\\Makefile", None),  # `\` splits segments too
        ("a\\b.rs", ".rs"),
        ("..py", ".py"),  # last dot is not the first character
        ("archive.tar.gz", ".gz"),
        ("x.PÝ", ".pÝ"),  # ASCII-lowercasing only (str.lower() would give .pý)
        ("x.Py", ".py"),
    ],
)
def test_file_extension(path, ext):
    assert file_extension(path) == ext


@pytest.mark.parametrize(
    ("path", "pack"),
    [
        ("a.py", "python"),
        ("A.PY", "python"),
        ("a.js", "javascript"),
        ("a.jsx", "javascript"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        (".eslintrc.js", "javascript"),
        ("a.rb", "ruby"),
        ("a.rs", "rust"),
        ("a.ts", "typescript"),
        ("a.tsx", "typescript"),
        ("x.TSX", "typescript"),
        ("a.c", "c"),
        ("a.h", "c"),
        ("a.", None),  # "." is claimed by no pack
        ("Makefile", None),
        (".gitignore", None),
        ("notes.md", None),
        ("a.json", None),
        ("a.pyi", None),
        ("a.cpp", None),
        ("a.go", None),
    ],
)
def test_pack_for_path(path, pack):
    found = pack_for_path(path)
    assert (found.name if found else None) == pack


# ---------------------------------------------------------------- §pack-table pack table

FN_ECMA = {"function_declaration", "method_definition", "arrow_function", "function_expression"}
TABLE = [
    ("python", (".py",), {"function_definition"}, {"class_definition"}),
    ("javascript", (".js", ".jsx", ".mjs", ".cjs"), FN_ECMA, {"class_declaration"}),
    ("ruby", (".rb",), {"method", "singleton_method"}, {"class", "module"}),
    (
        "rust",
        (".rs",),
        {"function_item"},
        {"struct_item", "enum_item", "trait_item", "impl_item", "union_item"},
    ),
    (
        "typescript",
        (".ts", ".tsx"),
        FN_ECMA,
        {"class_declaration", "interface_declaration", "enum_declaration"},
    ),
    ("c", (".c", ".h"), {"function_definition"}, {"struct_specifier", "union_specifier", "enum_specifier"}),
]


def test_pack_table_and_registration_order():
    assert [(p.name, set(p.extensions), set(p.function_kinds), set(p.class_kinds)) for p in PACKS] == [
        (n, set(e), f, c) for n, e, f, c in TABLE
    ]


def test_extension_claims_are_unique_and_lowercase():
    exts = [e for p in PACKS for e in p.extensions]
    assert len(exts) == len(set(exts))
    assert all(e.startswith(".") and e == e.lower() for e in exts)


def test_tsx_uses_the_typescript_dialect():
    # §pack-table: `.tsx` is parsed with language_typescript(), never language_tsx(); JSX then parses into
    # error nodes, whereas the TSX grammar would parse this line cleanly.
    import tree_sitter_typescript
    from tree_sitter import Language, Parser

    src = b"const a = () => <div>{x}</div>;\n"
    assert not Parser(Language(tree_sitter_typescript.language_tsx())).parse(src).root_node.has_error
    tsx_tree = pack_for_path("a.tsx").parser().parse(src)
    assert tsx_tree.root_node.has_error
    assert pack_for_path("a.tsx") is pack_for_path("a.ts")


# ---------------------------------------------------------------- §imports import extraction


def _imports(path: str, text: str) -> list[str]:
    return chunk_file(path, text).imports


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import os\n", ["os"]),
        ("import os.path, sys as s\n", ["os", "sys"]),  # spec example
        ("from .pkg.sub import y\n", ["pkg"]),  # spec example
        ("from . import x\n", []),  # spec example
        ("from ..a import b\n", ["a"]),
        ("from x import y\n", ["x"]),
        ("from a.b.c import d as e\n", ["a"]),
        ("import a.b as c\n", ["a"]),  # aliased_import: first component of its first child
        ("import b\nimport a\nimport b\nfrom a import z\n", ["b", "a"]),  # de-duplicated, first seen
        ("def f():\n    import json\n", ["json"]),  # the whole tree is walked
        # tree-sitter-python parses this as `future_import_statement`, a kind §imports does not visit:
        ("from __future__ import annotations\n", []),
        ("x = 1\n", []),
    ],
)
def test_python_imports(text, expected):
    assert _imports("m.py", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('import fs from "fs";\n', ["fs"]),
        ("import x from './x';\n", ["x"]),
        ("import x from './lib/x';\n", ["lib"]),  # first segment not empty, `.` or `..`
        ("import x from '../../a/b';\n", ["a"]),
        ("import a from '@scope/pkg/sub';\n", ["@scope/pkg"]),  # spec: @scope keeps the 2nd segment
        ("import a from '@scope/pkg';\n", ["@scope/pkg"]),
        ("import './side.js';\n", ["side.js"]),  # side-effect import has a source; no extension strip
        ('import * as ns from "ns";\nimport { a } from "ns";\n', ["ns"]),
        ("const x = require('y');\n", []),  # require() is not an import
        ("export { a } from './b';\n", []),  # export ... from is not an import
        ("import x from '';\n", []),  # empty name dropped
        ("import x from '../';\n", []),
        ('import x from "pkg\\x2fsub";\n', ["sub"]),  # the LAST string_fragment child is used
    ],
)
@pytest.mark.parametrize("ext", [".js", ".ts"])
def test_ecmascript_imports(text, expected, ext):
    assert _imports("m" + ext, text) == expected


def test_typescript_import_require_is_not_an_import():
    assert _imports("m.ts", "import x = require('y');\n") == []
    assert _imports("m.ts", "import type { T } from './types';\n") == ["types"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('require "json"\n', ["json"]),
        ('require "a/b.rb"\n', ["b"]),  # spec example
        ('require_relative "../lib/helper"\n', ["helper"]),
        ("require 'x.y.z'\n", ["x.y"]),  # strip from the LAST dot
        ('require ".hidden"\n', [".hidden"]),  # dot at position 0 is kept
        ('require("json")\n', ["json"]),
        ('def f\n  require "net/http"\nend\n', ["http"]),
        ('require "a#{b}c"\n', ["a"]),  # first string_content found pre-order
        ('Kernel.require "foo"\n', []),  # calls with a receiver are ignored
        ("require(name)\n", []),  # no string_content
        ('load "x"\n', []),
        ('require "json"\nrequire "json"\n', ["json"]),
    ],
)
def test_ruby_imports(text, expected):
    assert _imports("m.rb", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("use std::collections::HashMap;\n", ["std"]),
        ("pub use crate::x;\n", ["pub"]),  # spec quirk
        ("pub(crate) use x::y;\n", ["pub"]),
        ("use ::z;\n", []),  # spec: nothing
        ("use {a, b};\n", []),  # spec: nothing
        ("use crate::a::b;\n", ["crate"]),
        ("use self::m;\n", ["self"]),
        ("use foo;\n", ["foo"]),  # cut at the first non-identifier character
        ("use foo as bar;\n", ["foo"]),
        ("use user::x;\n", ["user"]),  # only the literal `use` prefix is removed
        ("use café::x;\n", ["café"]),  # Unicode alphanumerics are kept
        ("fn f() { use inner::z; }\n", ["inner"]),
        ("use std::io;\nuse std::fs;\nuse serde::Serialize;\n", ["std", "serde"]),
    ],
)
def test_rust_imports(text, expected):
    assert _imports("m.rs", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # U+093F DEVANAGARI VOWEL SIGN I (Mc) and U+0345 COMBINING YPOGEGRAMMENI (Mn) are Alphabetic
        # in Rust (checked with rustc 1.95: is_alphanumeric() == true for both); Python's
        # "\u093f".isalnum() is False, which is why the code uses unicode_rust.rust_is_alphanumeric.
        ("use \u0915\u093f::x;\n", ["\u0915\u093f"]),
        ("use a\u0345b::x;\n", ["a\u0345b"]),
    ],
)
def test_rust_imports_unicode_alphanumeric(text, expected):
    assert _imports("m.rs", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#include <stdlib.h>\n", ["stdlib"]),
        ("#include <sys/types.h>\n", ["types"]),  # spec example
        ('#include "my/util.h"\n', ["util"]),
        ('#include "x"\n', ["x"]),
        ("#include MACRO\n", []),
        ('#include <a.h>\n#include "a.h"\n', ["a"]),
        ("#include <a.b.h>\n", ["a.b"]),
    ],
)
@pytest.mark.parametrize("ext", [".c", ".h"])
def test_c_imports(text, expected, ext):
    assert _imports("m" + ext, text) == expected


def test_unclaimed_files_have_no_imports():
    assert _imports("notes.md", "import os\n#include <x.h>\n") == []
    assert _imports("Makefile", "use std::io;\n") == []
