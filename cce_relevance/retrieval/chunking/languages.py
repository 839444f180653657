"""More languages, opt-in: packs for Go, Java, C++, C#, PHP and Kotlin, and choosing what an index chunks.

The reference chunks six languages (retrieval/chunking/packs.py) and indexes everything else as whole-file
`module` chunks; its reports are pinned byte for byte, so these packs are only used when a run
asks for them (`languages = [...]` in cce-relevance.toml, or `--languages`). They follow the
reference's chunk rules unchanged (§chunk-walk–§module-chunk) and its import-extraction contract
(§imports: names in first-seen order, de-duplicated, empty ones dropped).

Grammars come from tree-sitter-language-pack 0.13.0, the last line that ships every grammar
inside its wheel (1.x downloads grammars at run time, which fails offline and would let a
report depend on what a server served). It is the `languages` extra, so a missing or different
version is a clear error here, never a traceback or a silently different chunking.

Import names feed the import graph, which resolves a name to the first file whose stem equals
it (§import-graph). So each extractor returns what is most likely some file's stem: the class a Java,
Kotlin or PHP import names (one class per file by convention), a C++ include's file stem (as for
C), and the last path segment of a Go import or a C# `using` (the package or namespace, which by
convention names a directory and often its main file).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from importlib import metadata
from typing import cast

from tree_sitter import Node

from cce_relevance.errors import CceError
from cce_relevance.retrieval.chunking.packs import (
    C_INCLUDE,
    PACKS,
    Pack,
    PackSet,
    c_include_names,
    first_string_stem,
    node_text,
)
from cce_relevance.strings import quoted

GRAMMAR_PACKAGE = "tree-sitter-language-pack"
GRAMMAR_VERSION = "0.13.0"
_INSTALL_HINT = (
    "install the languages extra: pip install 'cce-relevance[languages]' (the Docker image has it)"
)

_GO_MAJOR_VERSION = re.compile(r"v[0-9]+")


def _go_import_names(node: Node) -> list[str]:
    """`import "net/http"` → `http`; a trailing major version is skipped (`…/yaml/v3` → `yaml`)."""
    path = node.child_by_field_name("path")
    if path is None:
        return []
    segments = [s for s in node_text(path).strip('"`').split("/") if s]
    if len(segments) > 1 and _GO_MAJOR_VERSION.fullmatch(segments[-1]):
        segments.pop()
    return [segments[-1] if segments else ""]


def _java_import_names(node: Node) -> list[str]:
    """The imported class: `import a.b.C;` and `import static a.b.C.m;` → `C`; `import a.b.*;` → nothing."""
    name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    if name is None:
        return []
    parts = node_text(name).split(".")
    is_static = any(c.type == "static" for c in node.children)
    on_demand = any(c.type == "asterisk" for c in node.children)
    if is_static and not on_demand:
        parts = parts[:-1]  # the member; its class is the part before it
    elif on_demand and not is_static:
        return []  # a whole package: no one file
    return [parts[-1].strip() if parts else ""]


_CSHARP_NAMES = ("identifier", "qualified_name", "generic_name", "alias_qualified_name")


def _csharp_import_names(node: Node) -> list[str]:
    """`using A.B;` → `B`, `using static A.Math;` → `Math`,
    `using J = A.Json<T>;` → `Json` (not the alias)."""
    alias = node.child_by_field_name("name")
    target = next((c for c in node.named_children if c.type in _CSHARP_NAMES and c != alias), None)
    if target is None:
        return []
    name = node_text(target).split("<", 1)[0].replace("::", ".")
    return [name.split(".")[-1].strip()]


_PHP_INCLUDES = frozenset(
    {"include_expression", "include_once_expression", "require_expression", "require_once_expression"}
)


def _php_import_names(node: Node) -> list[str]:
    """`use A\\B\\C;` (also grouped and aliased) → `C`; `require 'lib/db.php';` → `db`, as Ruby's require."""
    if node.type in _PHP_INCLUDES:
        return [first_string_stem(node)]
    name = next((c for c in node.named_children if c.type in ("qualified_name", "name")), None)
    return [] if name is None else [node_text(name).split("\\")[-1]]


def _kotlin_import_names(node: Node) -> list[str]:
    """`import a.b.C` and `import a.b.C as D` → `C`; `import a.b.*` (a package) → nothing."""
    if any(c.type == "wildcard_import" for c in node.children):
        return []
    name = next((c for c in node.named_children if c.type == "identifier"), None)
    return [] if name is None else [node_text(name).split(".")[-1].strip().strip("`")]


def _load_grammar(name: str) -> object:
    import tree_sitter_language_pack

    return tree_sitter_language_pack.get_binding(cast("tree_sitter_language_pack.SupportedLanguage", name))


def _grammar(name: str) -> Callable[[], object]:
    """The loader of one grammar bundled in tree-sitter-language-pack (imported only when used).

    A `partial` of a module-level function, so a pack set pickles into worker processes.
    """
    return partial(_load_grammar, name)


_PACK = (GRAMMAR_PACKAGE,)

EXTRA_PACKS: tuple[Pack, ...] = (
    Pack(
        "go",
        (".go",),
        frozenset({"function_declaration", "method_declaration"}),
        frozenset({"type_declaration"}),
        _grammar("go"),
        frozenset({"import_spec"}),
        _go_import_names,
        _PACK,
    ),
    Pack(
        "java",
        (".java",),
        frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"}),
        frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            }
        ),
        _grammar("java"),
        frozenset({"import_declaration"}),
        _java_import_names,
        _PACK,
    ),
    Pack(
        "cpp",
        (".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++"),
        frozenset({"function_definition"}),
        frozenset({"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}),
        _grammar("cpp"),
        C_INCLUDE,
        c_include_names,
        _PACK,
    ),
    Pack(
        "csharp",
        (".cs",),
        frozenset(
            {
                "method_declaration",
                "constructor_declaration",
                "destructor_declaration",
                "operator_declaration",
                "conversion_operator_declaration",
                "local_function_statement",
            }
        ),
        frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "struct_declaration",
                "enum_declaration",
                "record_declaration",
            }
        ),
        _grammar("csharp"),
        frozenset({"using_directive"}),
        _csharp_import_names,
        (GRAMMAR_PACKAGE, "tree-sitter-c-sharp"),
    ),
    Pack(
        "php",
        (".php",),
        frozenset({"function_definition", "method_declaration"}),
        frozenset({"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}),
        _grammar("php"),
        _PHP_INCLUDES | {"namespace_use_clause"},
        _php_import_names,
        _PACK,
    ),
    Pack(
        "kotlin",
        (".kt", ".kts"),
        frozenset({"function_declaration", "secondary_constructor"}),
        frozenset({"class_declaration", "object_declaration", "companion_object"}),
        _grammar("kotlin"),
        frozenset({"import_header"}),
        _kotlin_import_names,
        _PACK,
    ),
)
"""The opt-in packs, in the order they are registered after the reference's six."""

EXTRA_LANGUAGES: tuple[str, ...] = tuple(p.name for p in EXTRA_PACKS)
_REFERENCE_LANGUAGES = tuple(p.name for p in PACKS)


def check_languages(names: Iterable[str]) -> tuple[str, ...]:
    """The extra languages among `names`, in registration order, de-duplicated.

    A reference language is accepted and changes nothing (those six are always on); any other
    unknown name is an error listing what is available. Loads no grammar: a config file is
    checked this way even by commands that never chunk.
    """
    wanted = set()
    for name in names:
        if name not in EXTRA_LANGUAGES and name not in _REFERENCE_LANGUAGES:
            raise CceError(
                f"unknown language {quoted(name)} (available: {', '.join(EXTRA_LANGUAGES)}; "
                f"{', '.join(_REFERENCE_LANGUAGES)} are always on)"
            )
        wanted.add(name)
    return tuple(n for n in EXTRA_LANGUAGES if n in wanted)


def enabled_packs(names: Iterable[str]) -> PackSet:
    """The reference's six packs plus the extra languages named; the grammars are checked to load."""
    extras = check_languages(names)
    if extras:
        _require_grammar_package(extras)
    return PackSet(PACKS + tuple(p for p in EXTRA_PACKS if p.name in extras))


def _require_grammar_package(extras: tuple[str, ...]) -> None:
    """tree-sitter-language-pack at exactly the pinned version: chunk boundaries depend on the grammars."""
    need = f"{', '.join(extras)} need{'s' if len(extras) == 1 else ''} {GRAMMAR_PACKAGE}=={GRAMMAR_VERSION}"
    try:
        found = metadata.version(GRAMMAR_PACKAGE)
    except metadata.PackageNotFoundError:
        raise CceError(f"{need}, which is not installed", hint=_INSTALL_HINT) from None
    if found != GRAMMAR_VERSION:
        raise CceError(
            f"{need}, but {found} is installed (1.x downloads grammars at run time)", hint=_INSTALL_HINT
        )
