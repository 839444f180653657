"""Symbol names of chunks: which definition a chunk is, by name rather than by line numbers.

A definition chunk's symbol is the name of the definition it is (the tree-sitter `name` field,
or where the grammar keeps the name elsewhere, below), qualified with dots by the names of the
definitions enclosing it, outermost first: `Client.send` for a method `send` of a class
`Client`, `outer.inner` for a function nested in a function, `Server.Serve` for a Go method
with receiver `*Server`, `tests.parses` for a function in a Rust `mod tests`. Enclosing
definitions are the chunk kinds of the file's language plus the module scopes that hold
definitions (Rust `mod`, TypeScript `namespace`); an enclosing definition without a name (a
callback) adds nothing. A name never contains `::` (Ruby's `A::B`, C++'s `Foo::bar` are
written `A.B`, `Foo.bar`), so a fixture anchor can use `::` to introduce one. A whole-file
`module` chunk, and a definition whose name cannot be told (an anonymous callback, an
anonymous C `enum`), has no symbol.

Symbols are read off a fresh parse of the text the index chunked (redacted as indexing
redacts it), never stored in the index: only the files an anchor names, or a listing, need
them. `file_definitions` gives them with each definition's chunk id, lines and kind, in the
order `chunk.chunk_file` makes the chunks, so chunk ids tie the two together.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tree_sitter import Node

from cce_relevance.retrieval.chunking.chunk import Chunk, chunk_id
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS, PackSet, node_text
from cce_relevance.retrieval.chunking.syntax import syntax_nodes
from cce_relevance.retrieval.corpus.redact import redact


@dataclass(frozen=True)
class Definition:
    """One definition chunk of a file: its chunk id, kind, lines and symbol (None: no name)."""

    chunk_id: str
    kind: str
    start_line: int
    end_line: int
    symbol: str | None


def file_definitions(path: str, text: str, packs: PackSet = REFERENCE_PACKS) -> tuple[Definition, ...]:
    """The definition chunks `chunk_file(path, text, packs)` makes, in its order, with their symbols.

    Empty when the file is one whole-file `module` chunk (no pack claims it, or it has no
    definition), which has no symbol.
    """
    pack = packs.for_path(path)
    if pack is None:
        return ()
    source = text.encode("utf-8", "surrogateescape")
    tree = pack.parser().parse(source)
    if tree is None:
        return ()
    definitions = syntax_nodes(pack, tree.root_node).definitions
    scopes = pack.chunk_kinds | _MODULE_SCOPES
    return tuple(
        Definition(
            chunk_id(
                path,
                node.start_point.row + 1,
                node.end_point.row + 1,
                source[node.start_byte : node.end_byte],
            ),
            node.type,
            node.start_point.row + 1,
            node.end_point.row + 1,
            qualified_name(node, pack.name, scopes),
        )
        for node in definitions
    )


def qualified_name(node: Node, language: str, scopes: frozenset[str]) -> str | None:
    """The dotted name of a definition node of `language` (a pack name): the names of its
    enclosing `scopes` (node kinds), outermost first, then its own; None when it has no name."""
    own = definition_name(node, language)
    if own is None:
        return None
    parts = [own]
    ancestor = node.parent
    while ancestor is not None:
        if ancestor.type in scopes and ancestor.is_named:
            name = definition_name(ancestor, language)
            if name is not None:
                parts.append(name)
        ancestor = ancestor.parent
    return ".".join(reversed(parts))


def definition_name(node: Node, language: str) -> str | None:
    """A definition node's own name, `::` written as `.`; None when it has none."""
    rule = _NAME_RULES.get((language, node.type))
    name = rule(node) if rule is not None else _field_text(node, "name")
    if not name:
        return None
    name = " ".join(name.split())  # a name spread over lines (C++ `operator ()`) reads as one line
    return name.replace("::", ".") or None


# --- where each grammar keeps a definition's name --------------------------------------------

_MODULE_SCOPES = frozenset({"mod_item", "internal_module"})
"""Non-chunk kinds that enclose definitions under a name: Rust `mod`, TypeScript `namespace`."""


def _field_text(node: Node | None, field: str) -> str | None:
    child = node.child_by_field_name(field) if node is not None else None
    return node_text(child) if child is not None else None


def _ecmascript_function_name(node: Node) -> str | None:
    """A function expression's own name, else what it is assigned to: `const f = () => …`,
    `{ f: () => … }`, `obj.f = function () …`, `class A { f = () => … }`."""
    own = _field_text(node, "name")
    parent = node.parent
    if own is not None or parent is None:
        return own
    if parent.type == "variable_declarator" and parent.child_by_field_name("value") == node:
        target = parent.child_by_field_name("name")
        return node_text(target) if target is not None and target.type == "identifier" else None
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "member_expression":
            return _field_text(left, "property")
        return node_text(left) if left is not None and left.type == "identifier" else None
    if (
        parent.type in ("pair", "field_definition", "public_field_definition")
        and parent.child_by_field_name("value") == node
    ):
        key = (
            parent.child_by_field_name("key")
            or parent.child_by_field_name("property")
            or parent.child_by_field_name("name")
        )
        return _property_key(key) if key is not None else None
    return None


def _property_key(key: Node) -> str:
    """An object or class key as written, a string key without its quotes."""
    text = node_text(key)
    return text[1:-1] if key.type == "string" and len(text) >= 2 else text


_DECLARATOR_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
    }
)


def _c_function_name(node: Node) -> str | None:
    """C/C++ `function_definition`: the identifier at the end of its chain of declarators."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in _DECLARATOR_NAMES:
        inner = declarator.child_by_field_name("declarator")
        if inner is None and declarator.type == "parenthesized_declarator":
            inner = next(iter(declarator.named_children), None)
        declarator = inner
    return node_text(declarator) if declarator is not None else None


def _c_type_name(node: Node) -> str | None:
    """A C/C++ `struct`/`union`/`enum`/`class` by its tag, or the typedef that names an anonymous one."""
    tag = _field_text(node, "name")
    parent = node.parent
    if tag is None and parent is not None and parent.type == "type_definition":
        return _field_text(parent, "declarator")
    return tag


def _base_type_name(node: Node | None) -> str | None:
    """`Foo` of `Foo`, `Foo<T>`, `&Foo`, `*Foo`, `a::Foo`, `G[T]`: the type a Rust impl or Go method is of."""
    while node is not None:
        if node.type in ("type_identifier", "identifier", "primitive_type"):
            return node_text(node)
        if node.type in ("scoped_type_identifier", "qualified_type"):
            node = node.child_by_field_name("name")
        elif node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type") or next(iter(node.named_children), None)
        else:
            return None
    return None


def _rust_impl_name(node: Node) -> str | None:
    """`impl Foo<T>` and `impl Display for Foo` are both named `Foo`."""
    return _base_type_name(node.child_by_field_name("type"))


def _go_method_name(node: Node) -> str | None:
    """`func (s *Server) Serve()` → `Server.Serve`: Go methods live outside their type."""
    name = _field_text(node, "name")
    receiver = node.child_by_field_name("receiver")
    parameter = next(iter(receiver.named_children), None) if receiver is not None else None
    owner = _base_type_name(parameter.child_by_field_name("type")) if parameter is not None else None
    return f"{owner}.{name}" if owner and name else name


def _go_type_name(node: Node) -> str | None:
    """`type Foo struct{…}` → `Foo`; a grouped `type ( A …; B … )` names no one type."""
    specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
    return _field_text(specs[0], "name") if len(specs) == 1 else None


def _csharp_operator_name(node: Node) -> str | None:
    """`operator +` for an operator, `operator int` for a conversion operator."""
    symbol = node.child_by_field_name("operator") or node.child_by_field_name("type")
    return f"operator {node_text(symbol)}" if symbol is not None else None


def _kotlin_name(node: Node) -> str | None:
    """Kotlin keeps names in unlabelled children; a companion object without one is `Companion`."""
    child = next((c for c in node.named_children if c.type in ("type_identifier", "simple_identifier")), None)
    if child is not None:
        return node_text(child)
    return "Companion" if node.type == "companion_object" else None


_NameRule = Callable[[Node], str | None]
_NAME_RULES: dict[tuple[str, str], _NameRule] = {
    **{
        (lang, kind): _ecmascript_function_name
        for lang in ("javascript", "typescript")
        for kind in ("arrow_function", "function_expression")
    },
    **{(lang, "function_definition"): _c_function_name for lang in ("c", "cpp")},
    **{
        (lang, kind): _c_type_name
        for lang in ("c", "cpp")
        for kind in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier")
    },
    ("rust", "impl_item"): _rust_impl_name,
    ("go", "method_declaration"): _go_method_name,
    ("go", "type_declaration"): _go_type_name,
    ("csharp", "operator_declaration"): _csharp_operator_name,
    ("csharp", "conversion_operator_declaration"): _csharp_operator_name,
    ("csharp", "destructor_declaration"): lambda node: f"~{_field_text(node, 'name')}",
    **{
        ("kotlin", kind): _kotlin_name
        for kind in ("class_declaration", "function_declaration", "object_declaration", "companion_object")
    },
    ("kotlin", "secondary_constructor"): lambda node: "constructor",
}
"""(language, kind) pairs whose name is not their `name` field; every other definition's is."""


# --- a corpus's symbols ----------------------------------------------------------------------


ParsedFiles = dict[tuple[tuple[str, ...], str, str], tuple[Definition, ...]]
"""Files' definitions by (pack names, path, text), for `CorpusSymbols` of several trees that hold
many of the same files (the Action's base and head): a file unchanged between them is parsed once."""


class CorpusSymbols:
    """The symbols of a corpus directory's files, read file by file as they are asked for.

    `packs` and `protect_secrets` must be the ones the corpus was indexed with, so that the text
    parsed here is the text that was chunked (same chunk ids, same lines). `parsed`, when given,
    holds what was parsed and is looked in first (it may be shared with other `CorpusSymbols`).
    """

    def __init__(
        self,
        root: str,
        packs: PackSet = REFERENCE_PACKS,
        protect_secrets: bool = True,
        parsed: ParsedFiles | None = None,
    ) -> None:
        self._root = root
        self._packs = packs
        self._protect = protect_secrets
        self._parsed = parsed
        self._files: dict[str, tuple[Definition, ...]] = {}
        self._by_id: dict[str, dict[str, str | None]] = {}
        self._read: dict[str, str | None] = {}

    def read(self, paths: Iterable[str]) -> None:
        """Read these files now and parse them only when first asked for: the answers are then
        those of the directory as it is now, even once it holds other files or is gone (the
        Action names a side's hits after its checkout has become the other side's). Reading
        is cheap; the parse is what most of these files are never asked for."""
        for path in paths:
            if path not in self._files and path not in self._read:
                self._read[path] = _read_text(os.path.join(self._root, *path.split("/")))

    def definitions(self, path: str) -> tuple[Definition, ...]:
        """The definition chunks of the file at corpus-relative `path` (empty: unreadable, or
        one whole-file chunk)."""
        found = self._files.get(path)
        if found is None:
            if path in self._read:
                text = self._read.pop(path)
            else:
                text = _read_text(os.path.join(self._root, *path.split("/")))
            if text is not None and self._protect:
                text = redact(text)
            self._files[path] = found = () if text is None else self._parse(path, text)
        return found

    def _parse(self, path: str, text: str) -> tuple[Definition, ...]:
        if self._parsed is None:
            return file_definitions(path, text, self._packs)
        key = (self._packs.names, path, text)
        found = self._parsed.get(key)
        if found is None:
            self._parsed[key] = found = file_definitions(path, text, self._packs)
        return found

    def of_chunk(self, chunk: Chunk) -> str | None:
        """The symbol of an indexed chunk of this corpus; None for a chunk without one."""
        return self.symbol(chunk.file_path, chunk.chunk_id)

    def symbol(self, path: str, chunk_id: str) -> str | None:
        """The symbol of the chunk `chunk_id` of the file at `path` (the first definition with
        that id); None for a chunk without one."""
        by_id = self._by_id.get(path)
        if by_id is None:
            by_id = {}
            for d in self.definitions(path):
                by_id.setdefault(d.chunk_id, d.symbol)
            self._by_id[path] = by_id
        return by_id.get(chunk_id)


def _read_text(path: str) -> str | None:
    """A file's text as the walk reads it (strict UTF-8, nothing translated); None if it cannot be."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
