"""The definition nodes and import nodes of one parse, each in pre-order, without visiting every node.

The reference visits every node depth-first in pre-order, keeping definition nodes as chunks
(§chunk-walk) and reading imports from import nodes (§imports). A stdlib-sized corpus has
about nine syntax nodes per line, and stepping a cursor over each of them from Python costs
more than parsing. A tree-sitter query finds the same nodes in C; what it does not promise is
pre-order, so the captures are sorted by (start byte, -end byte). That order *is* pre-order:

* tree-sitter lays a node's children out left to right: each child lies within its parent's
  byte range and begins where the one before it ends or later;
* so of two nodes where one contains the other, the outer starts first or, starting at the same
  byte, ends later — unless both have the same range;
* and of two nodes on different branches, the earlier one ends at or before the later one
  starts, so it starts strictly earlier — unless it is zero-width.

The exceptions are a captured node that is zero-width and two captured nodes with the same
range (error recovery can make either); for such a parse, and when the query cursor gives up
(its match limit), the tree is walked node by node instead, as the reference does. Either way
the result is the reference's, which tests/retrieval/chunking/test_syntax.py checks against a plain full
walk over real corpora and generated, garbled sources.

A grammar whose structure confines definitions and imports to a few node kinds (`Pack.pruning`,
proven from the grammar's rules for one version) is walked from Python instead, descending only
into those kinds (into some of them only through their body) and into any node that holds a
syntax error: that visits a few percent of the nodes, which is cheaper still than the query.

Only what the walk could ever yield goes into a query: visible kinds (a hidden or supertype
name would never be stepped on by a cursor, and a supertype in a query would match its
subtypes), named ones for definitions (the walk checks `is_named`), and for imports also an
anonymous kind of the same name if the grammar has one (the import walk does not check).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import metadata

from tree_sitter import Language, Node, Query, QueryCursor

from cce_relevance.retrieval.chunking.packs import Pack, preorder

_DEFINITION = "definition"
_IMPORT = "import"


@dataclass(frozen=True)
class SyntaxNodes:
    """A parse's definition nodes and import nodes, each list in pre-order."""

    definitions: list[Node]
    imports: list[Node]


def syntax_nodes(pack: Pack, root: Node) -> SyntaxNodes:
    """Definition nodes (named, of `pack.chunk_kinds`) and import nodes (of `pack.import_kinds`)."""
    if _prunes(pack):
        return _pruned_walk(pack, root)
    query = _query(pack)
    if query is None:
        return walk_syntax_nodes(pack, root)
    cursor = QueryCursor(query)
    captures = cursor.captures(root)
    if cursor.did_exceed_match_limit:
        return walk_syntax_nodes(pack, root)
    definitions = _in_preorder(captures.get(_DEFINITION, []))
    imports = _in_preorder(captures.get(_IMPORT, []))
    if definitions is None or imports is None:
        return walk_syntax_nodes(pack, root)
    return SyntaxNodes(definitions, imports)


def walk_syntax_nodes(pack: Pack, root: Node) -> SyntaxNodes:
    """The same lists by visiting every node in pre-order: the reference's way, and the fallback."""
    chunk_kinds, import_kinds = pack.chunk_kinds, pack.import_kinds
    definitions: list[Node] = []
    imports: list[Node] = []
    for node in preorder(root):
        kind = node.type
        if kind in chunk_kinds and node.is_named:
            definitions.append(node)
        if kind in import_kinds:
            imports.append(node)
    return SyntaxNodes(definitions, imports)


def _pruned_walk(pack: Pack, root: Node) -> SyntaxNodes:
    """Pre-order over named nodes, descending only where `pack.pruning` says targets can be.

    Kinds are compared as ids (a node's type is the name of its kind id, so the sets hold every
    id of each name), and a tree without errors is not asked about errors node by node (a node
    holds an error only if the root does). In a tree with errors every container is entered
    whole, as its body may not be where the grammar puts it."""
    ids = _pruning_ids(pack)
    chunk_kinds, import_kinds, containers = ids.chunk_kinds, ids.import_kinds, ids.containers
    errors = root.has_error
    bodies = frozenset() if errors else ids.bodies
    definitions: list[Node] = []
    imports: list[Node] = []
    pending = [root]
    while pending:
        node = pending.pop()
        kind = node.kind_id
        if kind in chunk_kinds:
            definitions.append(node)
        if kind in import_kinds:
            imports.append(node)
        if kind in bodies:
            body = node.child_by_field_id(ids.body)
            if body is not None:
                pending.append(body)
        elif kind in containers or (errors and node.has_error):
            children = node.named_children
            children.reverse()
            pending.extend(children)
    return SyntaxNodes(definitions, imports)


@dataclass(frozen=True)
class _PruningIds:
    """A pack's chunk kinds, import kinds, pruning containers and bodies as kind ids, and the id
    of the `body` field."""

    chunk_kinds: frozenset[int]
    import_kinds: frozenset[int]
    containers: frozenset[int]
    bodies: frozenset[int]
    body: int


@cache
def _pruning_ids(pack: Pack) -> _PruningIds:
    assert pack.pruning is not None
    language = pack.parser().language
    assert language is not None
    names = [language.node_kind_for_id(i) for i in range(language.node_kind_count)]

    def ids(kinds: frozenset[str]) -> frozenset[int]:
        return frozenset(i for i, name in enumerate(names) if name in kinds)

    return _PruningIds(
        ids(pack.chunk_kinds),
        ids(pack.import_kinds),
        ids(pack.pruning.containers),
        ids(pack.pruning.bodies),
        language.field_id_for_name("body") or 0,
    )


@cache
def _prunes(pack: Pack) -> bool:
    """Whether the pack's pruning applies: proven for the installed grammar, which has the `body`
    field if bodies are named, and no import kind that is also an anonymous kind (the pruned walk
    steps on named nodes only; definitions are named anyway)."""
    if pack.pruning is None or _installed(pack.distributions[0]) != pack.pruning.grammar_version:
        return False
    language = pack.parser().language
    assert language is not None
    if pack.pruning.bodies and language.field_id_for_name("body") is None:
        return False
    return not any(language.id_for_node_kind(kind, False) is not None for kind in pack.import_kinds)


def _installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _in_preorder(nodes: list[Node]) -> list[Node] | None:
    """`nodes` sorted into pre-order by range, or None when a range rules that out (see above)."""
    keys = [(n.start_byte, -n.end_byte) for n in nodes]
    order = sorted(range(len(nodes)), key=keys.__getitem__)
    previous = None
    for i in order:
        key = keys[i]
        if key[0] == -key[1] or key == previous:
            return None
        previous = key
    return [nodes[i] for i in order]


@cache
def _query(pack: Pack) -> Query | None:
    """One query capturing the pack's definition and import kinds; None when it would capture nothing."""
    language = pack.parser().language
    assert language is not None
    patterns = [
        f"({kind}) @{_DEFINITION}"
        for kind in sorted(pack.chunk_kinds)
        if _visible_kind(language, kind, named=True)
    ]
    for kind in sorted(pack.import_kinds):
        if _visible_kind(language, kind, named=True):
            patterns.append(f"({kind}) @{_IMPORT}")
        if _visible_kind(language, kind, named=False):
            patterns.append(f"{_string_literal(kind)} @{_IMPORT}")
    return Query(language, "\n".join(patterns)) if patterns else None


def _visible_kind(language: Language, kind: str, named: bool) -> bool:
    kind_id = language.id_for_node_kind(kind, named)
    # `Language.node_kind_is_supertype` answers True for every kind in py-tree-sitter 0.26.1.
    return (
        kind_id is not None and language.node_kind_is_visible(kind_id) and kind_id not in language.supertypes
    )


def _string_literal(kind: str) -> str:
    """An anonymous node name as a query string literal."""
    return '"' + kind.replace("\\", "\\\\").replace('"', '\\"') + '"'
