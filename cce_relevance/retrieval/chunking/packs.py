"""Language packs: which files tree-sitter parses, which nodes become chunks, and imports.

Six packs, as in the reference (§packs–§pack-table, §imports), each pinned to the grammar wheel
version the spec names. A pack claims lowercase extensions; a file no pack claims becomes one
whole-file `module` chunk. Import extraction only feeds the import graph (§import-graph). An index chunks
with a `PackSet`: these six by default, so default output stays the reference's; more languages
are opt-in (retrieval/chunking/languages.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property

from tree_sitter import Language, Node, Parser

from cce_relevance.retrieval.tokens import ascii_lower
from cce_relevance.unicode_rust import rust_is_alphanumeric

ImportNames = Callable[[Node], list[str]]


@dataclass(frozen=True)
class Pruning:
    """Where a grammar can put definitions and imports, proven from its rules for one version.

    In a subtree without syntax errors a definition or import node can only lie below nodes of
    `containers` (its chain of ancestors consists of them alone), so a walk that descends only
    into those — and into anything holding an error, which may hold anything — finds them all.
    """

    grammar_version: str  # of the pack's first distribution; any other version is not pruned
    containers: frozenset[str]
    bodies: frozenset[str] = frozenset()
    """Containers that hold definitions and imports only in their `body` field (never in their
    name, parameters or bases, say): the walk visits just that child of theirs."""


@dataclass(frozen=True)
class Pack:
    """One language: its name, extensions, chunk kinds, import nodes and grammar.

    A file's imports are found node by node: every node whose type is one of `import_kinds`, in
    pre-order, gives `import_names(node)` (names may be empty), and `unique_names` of all of them
    is the file's list (§imports). `distributions` name the installed packages whose versions decide
    the parse (the index cache keys on them).
    """

    name: str
    extensions: tuple[str, ...]
    function_kinds: frozenset[str]
    class_kinds: frozenset[str]
    load_language: Callable[[], object]
    import_kinds: frozenset[str]
    import_names: ImportNames
    distributions: tuple[str, ...]
    pruning: Pruning | None = None

    @property
    def chunk_kinds(self) -> frozenset[str]:
        return self.function_kinds | self.class_kinds

    def chunk_type(self, kind: str) -> str:
        """Class membership wins, as in the reference (no kind is in both sets)."""
        return "class" if kind in self.class_kinds else "function"

    def parser(self) -> Parser:
        return _parser(self.load_language)


def node_text(node: Node) -> str:
    """A node's source text, or "" when its bytes are not valid UTF-8 (reference rule)."""
    try:
        return node.text.decode("utf-8") if node.text is not None else ""
    except UnicodeDecodeError:
        return ""


def preorder(root: Node) -> Iterator[Node]:
    """Every node (named and anonymous), depth-first pre-order, without recursion."""
    cursor = root.walk()
    while True:
        node = cursor.node
        assert node is not None  # a cursor always stands on a node
        yield node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def unique_names(names: list[str]) -> list[str]:
    """First-seen order, empty names dropped: every extractor's result (§imports)."""
    return [n for n in dict.fromkeys(names) if n]


def _first_component(dotted: str) -> str:
    return next((part for part in dotted.split(".") if part), "")


def _python_import_names(node: Node) -> list[str]:
    """`import a.b, c as d` → `a`, `c`; `from .a.b import c` → `a` (first component of the module)."""
    if node.type == "import_from_statement":
        module = node.child_by_field_name("module_name")
        return [] if module is None else [_first_component(node_text(module))]
    found: list[str] = []
    for child in node.children:
        if child.type == "dotted_name":
            found.append(_first_component(node_text(child)))
        elif child.type == "aliased_import" and child.child_count:
            found.append(_first_component(node_text(child.children[0])))
    return found


def _ecmascript_import_names(node: Node) -> list[str]:
    """The first path segment of the source (`@scope/pkg` keeps two), skipping `.`, `..` and empties."""
    source = node.child_by_field_name("source")
    if source is None:
        return []
    fragments = [c for c in source.children if c.type == "string_fragment"]
    spec = node_text(fragments[-1]) if fragments else node_text(source).strip("'\"`")
    segments = [s for s in spec.split("/") if s not in ("", ".", "..")]
    if not segments:
        return []
    name = segments[0]
    if name.startswith("@") and len(segments) > 1:
        name = f"{name}/{segments[1]}"
    return [name]


def path_stem(path: str) -> str:
    """The last `/`-segment up to its last `.`, unless that dot is its first character (`.hidden`)."""
    segment = path.split("/")[-1]
    dot = segment.rfind(".")
    return segment[:dot] if dot > 0 else segment


def first_string_stem(node: Node) -> str:
    """The file stem of the first `string_content` inside `node` (pre-order),
    "" if none (a require/include)."""
    content = next((n for n in preorder(node) if n.type == "string_content"), None)
    return path_stem(node_text(content)) if content is not None else ""


def _ruby_import_names(node: Node) -> list[str]:
    """A receiver-less `require`/`require_relative` call → the stem of its first string."""
    if not node.child_count:
        return []
    first = node.children[0]
    if first.type != "identifier" or node_text(first) not in ("require", "require_relative"):
        return []
    args = next((c for c in node.children if c.type == "argument_list"), None)
    return [] if args is None else [first_string_stem(args)]


def _rust_import_names(node: Node) -> list[str]:
    """The leading identifier after `use` (the text's literal `use` prefixes removed)."""
    text = node_text(node).strip()
    while text.startswith("use"):
        text = text[3:]
    head = text.lstrip().split("::", 1)[0]
    end = 0
    while end < len(head) and (rust_is_alphanumeric(head[end]) or head[end] == "_"):
        end += 1
    return [head[:end]]


C_INCLUDE = frozenset({"preproc_include"})


def c_include_names(node: Node) -> list[str]:
    """`#include <sys/types.h>` → `types`: the file stem the include names (C, and C++ too)."""
    return [
        path_stem(node_text(child).strip().strip('<>"'))
        for child in node.children
        if child.type in ("system_lib_string", "string_literal")
    ]


@dataclass(frozen=True)
class _Grammar:
    """A grammar wheel's language, imported when a pack first parses: a run that meets no file
    of a pack never imports its grammar. A value, not a closure, so a pack pickles to the
    indexing workers."""

    module: str
    function: str = "language"

    def __call__(self) -> object:
        return getattr(importlib.import_module(self.module), self.function)()


_ECMA_FUNCTIONS = frozenset(
    {"function_declaration", "method_definition", "arrow_function", "function_expression"}
)

_ECMA_IMPORTS = frozenset({"import_statement"})

# tree-sitter-python 0.25.0: statements (so definitions and imports) occur only in `module` and
# `block`, and a definition also as the `definition` of a `decorated_definition`; a `block` is
# only ever the suite (body, consequence, alternative) of a compound statement or clause below,
# or the body of a `match_statement`. No expression, pattern, parameter or type can contain a
# statement (a lambda's body is an expression). So a function or class definition holds them
# only in its body: its name, type parameters, parameters, return type and bases are all
# expressions, patterns or types. tests/retrieval/chunking/test_syntax.py pins the grammar's list of node
# kinds this was read against, and compares the walk with a full one.
_PYTHON_CONTAINERS = frozenset(
    {
        "module",
        "block",
        "decorated_definition",
        "function_definition",
        "class_definition",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "while_statement",
        "try_statement",
        "except_clause",
        "finally_clause",
        "with_statement",
        "match_statement",
        "case_clause",
    }
)

PACKS: tuple[Pack, ...] = (
    Pack(
        "python",
        (".py",),
        frozenset({"function_definition"}),
        frozenset({"class_definition"}),
        _Grammar("tree_sitter_python"),
        frozenset({"import_statement", "import_from_statement"}),
        _python_import_names,
        ("tree-sitter-python",),
        Pruning("0.25.0", _PYTHON_CONTAINERS, frozenset({"function_definition", "class_definition"})),
    ),
    Pack(
        "javascript",
        (".js", ".jsx", ".mjs", ".cjs"),
        _ECMA_FUNCTIONS,
        frozenset({"class_declaration"}),
        _Grammar("tree_sitter_javascript"),
        _ECMA_IMPORTS,
        _ecmascript_import_names,
        ("tree-sitter-javascript",),
    ),
    Pack(
        "ruby",
        (".rb",),
        frozenset({"method", "singleton_method"}),
        frozenset({"class", "module"}),
        _Grammar("tree_sitter_ruby"),
        frozenset({"call"}),
        _ruby_import_names,
        ("tree-sitter-ruby",),
    ),
    Pack(
        "rust",
        (".rs",),
        frozenset({"function_item"}),
        frozenset({"struct_item", "enum_item", "trait_item", "impl_item", "union_item"}),
        _Grammar("tree_sitter_rust"),
        frozenset({"use_declaration"}),
        _rust_import_names,
        ("tree-sitter-rust",),
    ),
    Pack(
        "typescript",
        (".ts", ".tsx"),
        _ECMA_FUNCTIONS,
        frozenset({"class_declaration", "interface_declaration", "enum_declaration"}),
        _Grammar("tree_sitter_typescript", "language_typescript"),  # `.tsx` too, as the reference (not TSX)
        _ECMA_IMPORTS,
        _ecmascript_import_names,
        ("tree-sitter-typescript",),
    ),
    Pack(
        "c",
        (".c", ".h"),
        frozenset({"function_definition"}),
        frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
        _Grammar("tree_sitter_c"),
        C_INCLUDE,
        c_include_names,
        ("tree-sitter-c",),
    ),
)


@dataclass(frozen=True)
class PackSet:
    """The packs one index chunks with; each extension is claimed by at most one of them."""

    packs: tuple[Pack, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.packs)

    @cached_property
    def _by_extension(self) -> dict[str, Pack]:
        return {ext: pack for pack in self.packs for ext in pack.extensions}

    def for_path(self, path: str) -> Pack | None:
        """The pack claiming the file's extension, or None for the whole-file fallback."""
        ext = file_extension(path)
        return self._by_extension.get(ext) if ext is not None else None


REFERENCE_PACKS = PackSet(PACKS)
"""The reference's six: what every index chunks with unless more languages are asked for."""


def file_extension(path: str) -> str | None:
    """Text from the last `.` of the last segment (split on `/` and `\\`), ASCII-lowercased.

    None when the segment has no dot or its only/last dot is its first character (`.gitignore`).
    """
    segment = path.replace("\\", "/").rsplit("/", 1)[-1]
    dot = segment.rfind(".")
    if dot <= 0:
        return None
    ext = segment[dot:]
    return ascii_lower(ext)


def pack_for_path(path: str) -> Pack | None:
    """The reference pack claiming the file's extension, or None for the whole-file fallback."""
    return REFERENCE_PACKS.for_path(path)


@cache
def _parser(load_language: Callable[[], object]) -> Parser:
    """One parser per grammar, made on first use (loading a grammar is not free)."""
    return Parser(Language(load_language()))
