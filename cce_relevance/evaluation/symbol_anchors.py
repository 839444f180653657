"""Symbol anchors looked up in one corpus: `path::Name` becomes the lines `Name` has there.

An anchor naming a symbol is written without lines; each corpus it is scored against (the base
and the head of a pull request, say) gives it the lines of the definitions of that name in
that file (of that kind, when it has one). Bound, it matches as a range anchor of those lines;
naming no definition it matches nothing, and `validate` says why (evaluation/validation.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import Case, FixtureSet
from cce_relevance.retrieval.chunking.symbols import Definition


class SymbolSource(Protocol):
    """Where a corpus's definitions are read from (retrieval/chunking/symbols.py `CorpusSymbols`)."""

    def definitions(self, path: str) -> Sequence[Definition]: ...


def named_definitions(anchor: Anchor, symbols: SymbolSource) -> tuple[Definition, ...]:
    """The definitions a symbol anchor names: in its file, of its kind if it has one, with its symbol."""
    if anchor.symbol is None or anchor.path is None:
        return ()
    return tuple(
        d
        for d in symbols.definitions(anchor.path)
        if d.symbol == anchor.symbol and (anchor.kind is None or d.kind == anchor.kind)
    )


def bind_case(case: Case, symbols: SymbolSource) -> Case:
    """The case with each symbol anchor (of `expected` and `irrelevant`) given the lines of the
    definitions it names."""
    if not case.has_symbols:
        return case
    return dataclasses.replace(
        case, anchors=_bound(case.anchors, symbols), irrelevant=_bound(case.irrelevant, symbols)
    )


def _bound(anchors: tuple[Anchor, ...], symbols: SymbolSource) -> tuple[Anchor, ...]:
    return tuple(bind_anchor(a, symbols) for a in anchors)


def bind_anchor(anchor: Anchor, symbols: SymbolSource) -> Anchor:
    """A symbol anchor given the lines of the definitions it names; any other anchor as it is."""
    if anchor.symbol is None:
        return anchor
    return anchor.bind(tuple((d.start_line, d.end_line) for d in named_definitions(anchor, symbols)))


def bind_symbols(fixtures: FixtureSet, symbols: SymbolSource) -> FixtureSet:
    """The fixture set with every symbol anchor bound to its lines in the corpus of `symbols`."""
    if not any(c.has_symbols for c in fixtures.cases):
        return fixtures
    return dataclasses.replace(fixtures, cases=tuple(bind_case(c, symbols) for c in fixtures.cases))
