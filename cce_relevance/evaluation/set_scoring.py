"""One fixture set scored in one tree, with its anchor check and each query's top hits: what the
Action does for every set at each commit (`api.score_set` wires it).

The sets of one tree that share a corpus (and what its index leaves out) share one index
(`SharedIndexes`), and the files parsed to name the top hits' symbols are shared by the trees
too: a file unchanged between base and head is parsed once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.run_corpus import corpus_symbols, open_corpus
from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.evaluation.validation import Validation
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols, ParsedFiles
from cce_relevance.retrieval.corpus.exclusion import Exclusion
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.index.build import BuildOptions
from cce_relevance.retrieval.index.model import Index

TOP_HITS = 5  # hits kept per query and backend: enough to say what ranks above the expected one
SCORING_PROCESSES = 1
"""A set's queries are scored in this process (indexing keeps its worker processes). Two forked
scoring workers cost about 0.45 s more CPU a side than one process for 1,000 queries on the
standard library (each pays its pages copied on first write and the start of a pool) and, with
the runner's second core busy, were slower in wall time too (docs/dev/performance.md, "The whole
check")."""


@dataclass(frozen=True)
class TopHit:
    """One retrieved chunk as a reviewer is shown it: rank, corpus-relative file, lines, kind,
    whether it matches one of the query's anchors, whether it is `unlabeled` (it matches none,
    nor one of the case's `irrelevant` anchors: nobody judged it, so it may be a right answer
    the set does not name), and its symbol (`Client.send`) when known.

    The symbol is `named` when given; else it is looked up by `chunk_id` in `symbols` (its
    tree's files, read when it was scored) when first asked for: a comment names a few dozen
    hits, and naming all of them parsed every file a top hit lies in."""

    rank: int
    file: str
    start: int
    end: int
    kind: str
    relevant: bool
    named: str | None = None
    chunk_id: str = ""
    symbols: CorpusSymbols | None = field(default=None, compare=False, repr=False)
    unlabeled: bool = False

    @cached_property
    def symbol(self) -> str | None:
        """The chunker's name of the chunk, or None when it has none (or is not known)."""
        if self.symbols is None:
            return self.named
        return self.symbols.symbol(self.file, self.chunk_id)

    def saved(self) -> dict[str, Any]:
        """The hit as saved (its symbol named): read back with `TopHit.from_saved`, it needs
        neither the chunk id nor the tree's files."""
        return {
            "rank": self.rank,
            "file": self.file,
            "start": self.start,
            "end": self.end,
            "kind": self.kind,
            "relevant": self.relevant,
            "symbol": self.symbol,
            "unlabeled": self.unlabeled,
        }

    @classmethod
    def from_saved(cls, data: dict[str, Any]) -> TopHit:
        """A hit read back from its `saved` form (KeyError or TypeError when it is not one)."""
        fields = dict(data)
        named = fields.pop("symbol")
        return cls(**fields, named=named)


Rankings = dict[str, dict[str, tuple[TopHit, ...]]]  # backend -> query id -> top hits


class SharedIndexes:
    """The indexes the sets of one tree share (by corpus directory, real path, and what the
    index leaves out: two sets of one corpus can exclude different files), and the files parsed
    for the top hits' symbols, shared with the other trees (`another_tree`)."""

    def __init__(self, parsed: ParsedFiles | None = None) -> None:
        self.indexes: dict[tuple[str, Exclusion], Index] = {}
        self.parsed: ParsedFiles = {} if parsed is None else parsed

    def another_tree(self) -> SharedIndexes:
        """For the sets of another tree (the other commit): no index shared, parsed files shared.
        A tree's files change under the same paths, so an index never outlives its tree."""
        return SharedIndexes(self.parsed)

    def index(
        self, corpus: str, exclusion: Exclusion, languages: Sequence[str], indexing: BuildOptions
    ) -> Index:
        """The index of the corpus directory `corpus`, made on first use."""
        key = (os.path.realpath(corpus), exclusion)
        if key not in self.indexes:
            self.indexes[key] = open_corpus(corpus, languages=languages, indexing=indexing, exclude=exclusion)
        return self.indexes[key]


@dataclass(frozen=True)
class ScoredSet:
    """One fixture set scored in one tree: the run, its anchor check against the index the set was
    scored with, each query's top hits per backend, the corpus directory as the header resolves it
    (relative to the working directory), and the fixture file's text as stored."""

    run: RunResult
    anchors: Validation
    top_hits: Rankings
    corpus: str
    text: str


def top_hits(
    result: RunResult, corpus: str, languages: Sequence[str] = (), parsed: ParsedFiles | None = None
) -> Rankings:
    """Per backend, each query's first `TOP_HITS` hits, marked relevant when they match one of its
    anchors and unlabeled when they match none of those nor of its `irrelevant` ones, with their
    symbols as the corpus's chunker names them. The files they lie in are
    read now and parsed only for a hit whose symbol is asked for, each once with `parsed` shared
    by the sets and trees."""
    symbols = corpus_symbols(corpus, languages, parsed)
    symbols.read(
        sorted({h.file_path for report in result.reports for r in report.cases for h in r.hits[:TOP_HITS]})
    )

    def matches(anchors: tuple[Anchor, ...], h: Hit) -> bool:
        return any(a.matches(h.file_path, h.kind, h.start_line, h.end_line) for a in anchors)

    return {
        report.backend: {
            r.case.id: tuple(
                TopHit(
                    h.rank,
                    h.file_path,
                    h.start_line,
                    h.end_line,
                    h.kind,
                    matches(r.case.anchors, h),
                    chunk_id=h.chunk_id,
                    symbols=symbols,
                    unlabeled=not matches((*r.case.anchors, *r.case.irrelevant), h),
                )
                for h in r.hits[:TOP_HITS]
            )
            for r in report.cases
        }
        for report in result.reports
    }
