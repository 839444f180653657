"""Definition and import nodes found in C (query) or by a pruned walk, against a plain full walk.

The reference visits every node in pre-order (§chunk-walk, §imports). `reference_nodes` below
does exactly that in the plainest way (a stack over `Node.children`), and every test compares
`syntax_nodes` with it node for node: over real corpora (the upstream samples, our language
samples, the evaluation corpora, a slice of the installed standard library including its files
with syntax errors) and over generated, garbled sources in every language, where error
recovery puts nodes anywhere.
"""

from __future__ import annotations

import dataclasses
import os
import sysconfig
from functools import cache
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.chunking import syntax
from cce_relevance.retrieval.chunking.languages import EXTRA_PACKS
from cce_relevance.retrieval.chunking.packs import PACKS, Pack, PackSet
from cce_relevance.retrieval.chunking.syntax import syntax_nodes, walk_syntax_nodes
from tests.retrieval.corpora import DOCS_CORPUS, SAMPLES

ALL_PACKS = PackSet(PACKS + EXTRA_PACKS)
LANGUAGE_SAMPLES = Path(__file__).parents[1] / "language_samples"
PYTHON = PACKS[0]


def reference_nodes(pack: Pack, root) -> tuple[list, list]:
    """Every node in pre-order (children left to right), filtered as §chunk-walk and §imports say."""
    definitions, imports = [], []
    pending = [root]
    while pending:
        node = pending.pop()
        if node.type in pack.chunk_kinds and node.is_named:
            definitions.append(node)
        if node.type in pack.import_kinds:
            imports.append(node)
        pending.extend(reversed(node.children))
    return definitions, imports


def _keys(nodes) -> list[tuple[str, int, int, bool]]:
    return [(n.type, n.start_byte, n.end_byte, n.is_named) for n in nodes]


def assert_same_as_reference(pack: Pack, source: bytes) -> bool:
    """`syntax_nodes` equals the full walk on `source`; returns whether the parse had errors."""
    root = pack.parser().parse(source).root_node
    found = syntax_nodes(pack, root)
    definitions, imports = reference_nodes(pack, root)
    assert _keys(found.definitions) == _keys(definitions)
    assert _keys(found.imports) == _keys(imports)
    return root.has_error


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and ALL_PACKS.for_path(p.name) is not None)


@cache
def _stdlib_slice() -> list[Path]:
    """Whole packages (json, email, importlib, lib2to3 with its Python 2 test data), the test files
    that do not parse, and every 40th other module: a few hundred files."""
    root = Path(sysconfig.get_paths()["stdlib"])
    whole = ("json/", "email/", "importlib/", "lib2to3/", "test/tokenizedata/", "test/test_future_stmt/")
    chosen, others = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = Path(dirpath, name)
                rel = path.relative_to(root).as_posix()
                (chosen if rel.startswith(whole) or rel == "test/test_compile.py" else others).append(path)
    return chosen + others[::40]


# ---------------------------------------------------------------- real corpora


def test_upstream_samples(upstream):
    files = _files(upstream / SAMPLES)
    assert len(files) == 6
    for path in files:
        assert_same_as_reference(ALL_PACKS.for_path(path.name), path.read_bytes())


def test_language_samples_and_evaluation_corpora():
    files = _files(LANGUAGE_SAMPLES) + _files(Path(DOCS_CORPUS)) + _files(Path("test/fixture/samples"))
    assert {ALL_PACKS.for_path(p.name).name for p in files} >= {p.name for p in EXTRA_PACKS}
    for path in files:
        assert_same_as_reference(ALL_PACKS.for_path(path.name), path.read_bytes())


@pytest.mark.slow
def test_standard_library_slice_including_files_that_do_not_parse():
    files = _stdlib_slice()
    assert len(files) > 200
    with_errors = sum(assert_same_as_reference(PYTHON, path.read_bytes()) for path in files)
    assert with_errors >= 3  # lib2to3's Python 2 data and the stdlib's bad-syntax test files


# ---------------------------------------------------------------- garbled sources, every language

# Seeds and fragments per pack: real text to start from, and pieces that open and close the
# constructs each grammar chunks, so that mutations land error recovery in interesting places.
_SEEDS = {
    "python": "import os\nfrom .a import b\n\n@dec\nclass A(B):\n    def f(self, x):\n        if x:\n"
    "            import json\n        return lambda y: y\n\nasync def g():\n    pass\n",
    "javascript": "import fs from 'fs';\nclass A { m() { return () => 1; } }\nfunction f(a) {\n"
    "  const g = function () {};\n  return a;\n}\n",
    "typescript": "import { T } from './t';\ninterface I { x: number }\nenum E { A }\n"
    "class C implements I { x = 1; m(): void {} }\nfunction f<T>(a: T): T { return a; }\n",
    "ruby": "require 'json'\nmodule M\n  class C < B\n    def m(x)\n      require_relative \"x\"\n    end\n"
    "    def self.s; end\n  end\nend\n",
    "rust": "use std::io;\nstruct S { a: u8 }\nenum E { A, B }\ntrait T { fn t(&self); }\n"
    "impl T for S { fn t(&self) { fn inner() {} } }\nunion U { a: u32 }\n",
    "c": '#include <stdio.h>\n#include "x.h"\nstruct s { int a; };\ntypedef union u { int b; } u_t;\n'
    "enum e { A };\nint f(struct s *p) { return sizeof(struct s) + (int)(struct t *)0; }\n",
    "go": 'package p\nimport (\n  "fmt"\n  y "a/yaml/v3"\n)\ntype T struct{}\nfunc (t T) M() {}\n'
    "func F() { g := func() {}; g() }\n",
    "java": "import a.b.C;\nimport static a.b.C.m;\n"
    "class A { A() {} void m() { new Object() { void n() {} }; } }\n"
    "interface I {}\nenum E { X }\nrecord R(int a) {}\n",
    "cpp": "#include <vector>\nclass A { public: void m() {} };\nstruct S { int a; };\n"
    "namespace n { void f() { auto l = [](){}; } }\nenum class E { X };\n",
    "csharp": "using System;\nusing static A.Math;\nclass A { A() {} ~A() {} void M() { int L() => 1; } }\n"
    "struct S {}\ninterface I {}\nrecord R(int X);\n",
    "php": "<?php\nuse A\\B\\C;\nrequire 'lib/db.php';\nclass A { function m() {} }\nfunction f() {}\n"
    "trait T {}\ninterface I {}\n",
    "kotlin": "import a.b.C\nimport a.b.*\nclass A { fun m() {} constructor(x: Int) : this() }\n"
    "object O { fun f() = 1 }\nfun top() {}\n",
}
_FRAGMENTS = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ":",
    ",",
    "\n",
    "    ",
    "\t",
    "'",
    '"',
    "`",
    "\\",
    "/*",
    "*/",
    "//",
    "#",
    "<",
    ">",
    "=>",
    "->",
    "::",
    "=",
    "@",
    "$",
    "def ",
    "class ",
    "struct ",
    "union ",
    "enum ",
    "fn ",
    "impl ",
    "function ",
    "func ",
    "fun ",
    "end\n",
    "import ",
    "from ",
    "use ",
    "require ",
    "#include ",
    "#define X(",
    "#if 0\n",
    "#endif\n",
    "lambda: ",
    "async ",
    "\x00",
    "é",
    "\u2028",
    "if x:\n",
    "else:\n",
    "try:\n",
    "except* E:\n",
    "match x:\n  case 1:\n",
]

_mutation = st.one_of(
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(0, 60)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.sampled_from(_FRAGMENTS)),
    st.tuples(st.just("copy"), st.floats(0, 1), st.floats(0, 1)),
)


def _garble(text: str, mutations) -> bytes:
    data = bytearray(text.encode("utf-8"))
    for op, where, arg in mutations:
        at = int(where * len(data))
        if op == "delete":
            del data[at : at + arg]
        elif op == "insert":
            data[at:at] = arg.encode("utf-8")
        else:
            start = int(arg * len(data))
            data[at:at] = data[start : start + 40]
    return bytes(data)


@pytest.mark.slow
@given(name=st.sampled_from(sorted(_SEEDS)), mutations=st.lists(_mutation, min_size=1, max_size=12))
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_garbled_sources_in_every_language(name, mutations):
    pack = next(p for p in ALL_PACKS.packs if p.name == name)
    assert_same_as_reference(pack, _garble(_SEEDS[name], mutations))


@given(mutations=st.lists(_mutation, min_size=1, max_size=12), seed=st.sampled_from(range(40)))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_garbled_standard_library_through_query_and_pruned_walk(mutations, seed):
    """Python takes the pruned walk; the same pack without pruning takes the query. Both must
    match the full walk on real modules garbled into error recovery."""
    path = _stdlib_slice()[seed * 5]
    source = _garble(path.read_text(encoding="utf-8", errors="replace")[:3000], mutations)
    assert_same_as_reference(PYTHON, source)
    assert_same_as_reference(dataclasses.replace(PYTHON, pruning=None), source)


_EXPRESSIONS = (
    "x",
    "lambda a=lambda: 1: a",
    "[i for i in (lambda: y)()]",
    "{k: v for k, v in z}",
    "(x := 1)",
    "'def s(): import t'",
    "await y",
    "(yield)",
    "...",
)
_SIMPLE = (
    "pass",
    "import os",
    "from . import a as b",
    "from x import (y, z)",
    "x = 1",
    "print(1); import re",
    "type T = int",
    "type G[T] = list[T]",
    "# import no",
    "x: int = 3",
)
# Header templates: {0}… are expressions. Definitions put them in every place a header has.
_HEADERS = (
    "def f(a={0}, *b, c: {1} = {2}, **d) -> {3}:",
    "async def g[T, *Ts, **P](p: T = {0}):",
    "class C({0}, metaclass={1}, **{{'k': {2}}}):",
    "class D[T: ({0}, int)]({1}):",
    "if {0}:",
    "elif_",
    "while {0}:",
    "for i in {0}:",
    "async for i in {0}:",
    "with {0} as y, z:",
    "async with ({0} as y):",
    "try:",
    "match {0}:",
)


def _python_block(depth: int) -> st.SearchStrategy[list]:
    """Statements as (header, decorators, body, on one line) or simple strings, nested `depth` deep."""
    if depth == 0:
        return st.lists(st.sampled_from(_SIMPLE), min_size=1, max_size=3)
    compound = st.tuples(
        st.sampled_from(_HEADERS),
        st.lists(st.sampled_from(_EXPRESSIONS), min_size=4, max_size=4),
        st.lists(st.sampled_from(_EXPRESSIONS), max_size=2),
        _python_block(depth - 1),
        st.booleans(),
    )
    return st.lists(st.one_of(st.sampled_from(_SIMPLE), compound), min_size=1, max_size=4)


def _render_python(block: list, indent: str = "") -> str:
    """Valid Python for a `_python_block`: decorators on definitions only, `match` with cases,
    `if` with `elif`/`else`, `try` with `except*`/`finally`, suites on one line or indented."""
    lines = []
    for statement in block:
        if isinstance(statement, str):
            lines.append(indent + statement)
            continue
        header, expressions, decorators, body, one_line = statement
        if header.startswith(("def", "async def", "class")):
            lines.extend(f"{indent}@{decorator}" for decorator in decorators)
        header = "if x:" if header == "elif_" else header.format(*expressions)
        inner = indent + "    "
        if header.startswith("match"):
            lines += [
                indent + header,
                inner + "case [a, *_] | {'k': a} if a:",
                _render_python(body, inner + "    "),
                inner + "case _: import m",
            ]
            continue
        simple_body = all(isinstance(s, str) and not s.startswith("#") for s in body)
        lines.append(indent + header + (" " + "; ".join(body) if one_line and simple_body else ""))
        if not (one_line and simple_body):
            lines.append(_render_python(body, inner))
        if header.startswith("if"):
            lines += [indent + "elif y:", inner + "def el(): import e", indent + "else: import f"]
        if header.startswith("try"):
            lines += [
                indent + "except* E as e:",
                _render_python(body, inner),
                indent + "finally:",
                inner + "class Fin: import q",
            ]
    return "\n".join(lines)


@pytest.mark.slow
@given(block=_python_block(4), newline=st.sampled_from(["\n", "\r\n"]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_error_free_python_with_definitions_and_imports_in_every_suite_and_header(block, newline):
    """The pruned walk enters error-free definitions through their body only: generated sources put
    definitions and imports in every kind of suite, and lambdas, comprehensions and strings in every
    part of a definition's header, under decorators, at module, class and function level."""
    source = (_render_python(block) + "\n").replace("\n", newline).encode("utf-8")
    assert not assert_same_as_reference(PYTHON, source), source


# ---------------------------------------------------------------- the pieces


def test_python_is_pruned_and_its_grammar_is_the_one_the_pruning_was_read_against():
    """The pruning of the Python pack is an argument about tree-sitter-python 0.25.0's rules. If
    the grammar's list of node kinds changes, the argument must be made again (and this list
    updated); another version is simply not pruned."""
    assert PYTHON.pruning is not None
    assert syntax._prunes(PYTHON) == (
        metadata.version("tree-sitter-python") == PYTHON.pruning.grammar_version
    )
    language = PYTHON.parser().language
    named = {
        language.node_kind_for_id(i)
        for i in range(language.node_kind_count)
        if language.node_kind_is_named(i) and language.node_kind_is_visible(i)
    }
    assert named == PYTHON_0_25_0_NAMED_KINDS
    assert PYTHON.pruning.containers <= named
    # Definitions hold statements only in their body (the other fields are names, parameters, types, bases).
    assert PYTHON.pruning.bodies == {"function_definition", "class_definition"} <= PYTHON.pruning.containers
    assert language.field_id_for_name("body") is not None
    statements = {k for k in named if k.endswith(("_statement", "_definition", "_clause"))}
    # Every compound statement and clause either has a suite (so is a container) or cannot hold one.
    assert statements - PYTHON.pruning.containers == SIMPLE_STATEMENTS_AND_EXPRESSION_CLAUSES


PYTHON_0_25_0_NAMED_KINDS = frozenset(
    """
aliased_import argument_list as_pattern as_pattern_target assert_statement assignment attribute
augmented_assignment await binary_operator block boolean_operator break_statement call case_clause
case_pattern chevron class_definition class_pattern comment comparison_operator complex_pattern
concatenated_string conditional_expression constrained_type continue_statement decorated_definition
decorator default_parameter delete_statement dict_pattern dictionary dictionary_comprehension
dictionary_splat dictionary_splat_pattern dotted_name elif_clause ellipsis else_clause
escape_interpolation escape_sequence except_clause exec_statement expression_list expression_statement
false finally_clause float for_in_clause for_statement format_expression format_specifier
function_definition future_import_statement generator_expression generic_type global_statement
identifier if_clause if_statement import_from_statement import_prefix import_statement integer
interpolation keyword_argument keyword_pattern keyword_separator lambda lambda_parameters
line_continuation list list_comprehension list_pattern list_splat list_splat_pattern match_statement
member_type module named_expression none nonlocal_statement not_operator pair parameters
parenthesized_expression parenthesized_list_splat pass_statement pattern_list positional_separator
print_statement raise_statement relative_import return_statement set set_comprehension slice
splat_pattern splat_type string string_content string_end string_start subscript true try_statement
tuple tuple_pattern type type_alias_statement type_conversion type_parameter typed_default_parameter
typed_parameter unary_operator union_pattern union_type while_statement wildcard_import with_clause
with_item with_statement yield
""".split()
)

SIMPLE_STATEMENTS_AND_EXPRESSION_CLAUSES = frozenset(
    {
        "assert_statement",
        "break_statement",
        "continue_statement",
        "delete_statement",
        "exec_statement",
        "expression_statement",
        "future_import_statement",
        "global_statement",
        "import_from_statement",
        "import_statement",
        "nonlocal_statement",
        "pass_statement",
        "print_statement",
        "raise_statement",
        "return_statement",
        "type_alias_statement",
        "for_in_clause",
        "if_clause",
        "with_clause",
    }
)


def _fake(start: int, end: int) -> SimpleNamespace:
    return SimpleNamespace(start_byte=start, end_byte=end)


def test_captures_are_ordered_outer_first_then_left_to_right():
    inner, outer, later = _fake(5, 9), _fake(5, 20), _fake(20, 30)
    assert syntax._in_preorder([later, inner, outer]) == [outer, inner, later]
    assert syntax._in_preorder([]) == []


@pytest.mark.parametrize(
    "nodes",
    [
        [_fake(3, 3)],  # zero-width: cannot be placed by its range
        [_fake(0, 10), _fake(4, 4)],
        [_fake(2, 8), _fake(2, 8)],  # the same range twice: which is the parent is not known
    ],
)
def test_ranges_that_do_not_decide_the_order_are_refused(nodes):
    assert syntax._in_preorder(nodes) is None


def test_a_refused_order_falls_back_to_the_full_walk(monkeypatch):
    monkeypatch.setattr(syntax, "_in_preorder", lambda nodes: None)
    for path in _files(Path("test/fixture/samples")) + _files(LANGUAGE_SAMPLES):
        pack = ALL_PACKS.for_path(path.name)
        assert_same_as_reference(dataclasses.replace(pack, pruning=None), path.read_bytes())


def test_walk_syntax_nodes_is_the_full_walk():
    for path in _files(Path("test/fixture/samples")) + _files(LANGUAGE_SAMPLES):
        pack = ALL_PACKS.for_path(path.name)
        root = pack.parser().parse(path.read_bytes()).root_node
        walked = walk_syntax_nodes(pack, root)
        definitions, imports = reference_nodes(pack, root)
        assert (_keys(walked.definitions), _keys(walked.imports)) == (_keys(definitions), _keys(imports))
