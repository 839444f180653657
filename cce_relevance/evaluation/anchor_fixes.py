"""Proposed fixes for stale and moved anchors: where the labeled definition most likely is now.

`validate` says that an anchor resolves to nothing; this guesses what it should say instead, for
a person to accept or not. The definition is looked for in the anchor's file or, when that file
is gone, in the files of the same name elsewhere (a moved file), among the chunks of the
anchor's kind. A fix keeps the anchor's form:

* a symbol anchor (`path::Name`) goes to the one definition there with that name, else the one
  with the same last name (a method moved to another class), else the one with that name in
  the nearest other file (moved to another module: most leading directories in common), else
  the one whose content shares the most words with the case's query and whose name is most like
  the old one (a rename);
* a line-range anchor goes to the chunk sharing the most words with the query, then the one
  nearest the old lines, and takes the lines it spans now.

A fix is proposed only when one definition is best, and for a guess by words only when it
shares at least one word with the query.

An anchor can also have *moved* without going stale: an edit above a labeled function shifts
it, and its old lines now overlap another definition, so the anchor still resolves — to the
wrong one. A line-range anchor whose lines are not exactly some chunk's is checked: when another
chunk of its file shares more words with the query than every chunk its lines overlap, the fix
points it there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from cce_relevance.evaluation.anchors import Anchor, parse_anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.validation import STALE_CODES, Validation
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols
from cce_relevance.retrieval.tokens import tokenize

_SIMILAR_NAME = 0.6  # difflib ratio from which a name counts as a rename of another


@dataclass(frozen=True)
class AnchorFix:
    """Replace anchor `old` of the case on fixture line `line` with `new`; `why` explains it."""

    line: int
    case_id: str
    old: Anchor
    new: str
    why: str


def suggest_fixes(
    validation: Validation, cases: Sequence[Case], chunks: Sequence[Chunk], symbols: CorpusSymbols
) -> list[AnchorFix]:
    """A fix for each stale or moved anchor that has a likely new place, in fixture order.

    `cases` are the set's cases as parsed (symbol anchors unbound), `chunks` and `symbols` the
    corpus's.
    """
    stale = {
        (f.line, f.anchor) for f in validation.findings if f.code in STALE_CODES and f.anchor is not None
    }
    places = _Places(chunks, symbols)
    fixes = []
    for case in cases:
        for anchor in case.anchors:
            if anchor.path is None:
                continue
            if (case.line, anchor.display()) in stale:
                fix = places.relocated(anchor, case.query)
            elif anchor.range is not None:
                fix = places.moved(anchor, case.query)
            else:
                continue
            if fix is not None:
                fixes.append(AnchorFix(case.line, case.id, anchor, *fix))
    return fixes


class _Places:
    """The corpus's chunks by file, and how well each matches a query."""

    def __init__(self, chunks: Sequence[Chunk], symbols: CorpusSymbols) -> None:
        self.chunks = chunks
        self.symbols = symbols
        self.by_file: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            self.by_file.setdefault(c.file_path, []).append(i)

    def relocated(self, anchor: Anchor, query: str) -> tuple[str, str] | None:
        """Where a stale anchor's definition most likely is now."""
        assert anchor.path is not None
        paths = [anchor.path] if anchor.path in self.by_file else self._same_name(anchor.path)
        pool = [
            i
            for p in paths
            for i in self.by_file[p]
            if anchor.kind is None or self.chunks[i].kind == anchor.kind
        ]
        if anchor.symbol is not None:
            return self._renamed(anchor, query, pool)
        if not pool:
            return None
        if anchor.range is None:  # `path` or `path#kind` whose file moved: the other file is the fix
            if len(paths) != 1:
                return None
            return _with_path(anchor, paths[0]), f"{anchor.path} is gone; {paths[0]} has the same file name"
        best = self._best(pool, query, anchor.range[0])
        if best is None:
            return None
        i, shared = best
        c = self.chunks[i]
        return (
            _with_path(anchor, c.file_path, (c.start_line, c.end_line)),
            f"{self._what(i)} shares {shared} word(s) with the query"
            + (" and is the nearest such definition" if len(pool) > 1 else ""),
        )

    def _renamed(self, anchor: Anchor, query: str, pool: Sequence[int]) -> tuple[str, str] | None:
        """Where a symbol that names nothing went: the same name in its file or a moved one, the
        same last name there (another class), the same name in the nearest other file that has
        it (moved to another module), else a rename there that fits the query."""
        assert anchor.symbol is not None and anchor.path is not None
        named = [(i, s) for i in pool if (s := self._symbol(i)) is not None]
        leaf = anchor.symbol.rsplit(".", 1)[-1]
        for found, how in (
            ([p for p in named if p[1] == anchor.symbol], "has that name"),
            ([p for p in named if p[1].rsplit(".", 1)[-1] == leaf], "has that last name"),
            (self._nearest_elsewhere(anchor, {self.chunks[i].file_path for i in pool}), "has that name"),
        ):
            if len(found) == 1:
                i, symbol = found[0]
                return self._symbol_anchor(anchor, i, symbol), f"{self._what(i)} {how}"
            if found:
                return None
        words = set(tokenize(query))
        ranked = sorted(
            (
                (self._shared(i, words), SequenceMatcher(None, leaf, s.rsplit(".", 1)[-1]).ratio(), i, s)
                for i, s in named
            ),
            reverse=True,
        )
        if not ranked or (len(ranked) > 1 and ranked[1][:2] == ranked[0][:2]):
            return None
        shared, similar, i, symbol = ranked[0]
        if shared == 0 or similar < _SIMILAR_NAME:
            return None
        return self._symbol_anchor(anchor, i, symbol), (
            f"{self._what(i)} shares {shared} word(s) with the query "
            f"and its name is most like {anchor.symbol}"
        )

    def _nearest_elsewhere(self, anchor: Anchor, searched: set[str]) -> list[tuple[int, str]]:
        """Definitions with the anchor's whole symbol (and kind) in the other files whose path
        shares the most leading directories with the anchor's; only files that mention the
        name are parsed."""
        assert anchor.symbol is not None and anchor.path is not None
        leaf = anchor.symbol.rsplit(".", 1)[-1]
        found = [
            (i, anchor.symbol)
            for i, c in enumerate(self.chunks)
            if c.file_path not in searched
            and leaf in c.content
            and (anchor.kind is None or c.kind == anchor.kind)
            and self._symbol(i) == anchor.symbol
        ]
        if not found:
            return []
        here = anchor.path.split("/")[:-1]
        nearness = {i: _shared_prefix(here, self.chunks[i].file_path.split("/")[:-1]) for i, _ in found}
        best = max(nearness.values())
        return [p for p in found if nearness[p[0]] == best]

    def _symbol_anchor(self, anchor: Anchor, i: int, symbol: str) -> str:
        return Anchor(self.chunks[i].file_path, anchor.kind, None, symbol).display()

    def _symbol(self, i: int) -> str | None:
        return self.symbols.of_chunk(self.chunks[i])

    def moved(self, anchor: Anchor, query: str) -> tuple[str, str] | None:
        """A better place for a resolving range anchor whose lines are no chunk's exactly."""
        assert anchor.path is not None and anchor.range is not None
        a, b = anchor.range
        pool = [
            i
            for i in self.by_file.get(anchor.path, ())
            if anchor.kind is None or self.chunks[i].kind == anchor.kind
        ]
        if any((self.chunks[i].start_line, self.chunks[i].end_line) == (a, b) for i in pool):
            return None
        overlapped = [i for i in pool if self.chunks[i].start_line <= b and self.chunks[i].end_line >= a]
        best = self._best(pool, query, a)
        if best is None or not overlapped or best[0] in overlapped:
            return None
        words = set(tokenize(query))
        held = max(overlapped, key=lambda i: self._shared(i, words))
        if self._shared(held, words) >= best[1]:
            return None
        c = self.chunks[best[0]]
        return (
            _with_path(anchor, c.file_path, (c.start_line, c.end_line)),
            f"lines {a}-{b} now hold {self._what(held)}, which shares {self._shared(held, words)} word(s) "
            f"with the query; {self._what(best[0])} shares {best[1]}",
        )

    def _best(self, pool: Sequence[int], query: str, near: int) -> tuple[int, int] | None:
        """The one chunk sharing the most query words, nearest line `near` among equals; None
        when it shares none or two are equally good."""
        words = set(tokenize(query))
        ranked = sorted(
            ((self._shared(i, words), -abs(self.chunks[i].start_line - near), i) for i in pool), reverse=True
        )
        if not ranked or ranked[0][0] == 0 or (len(ranked) > 1 and ranked[1][:2] == ranked[0][:2]):
            return None
        return ranked[0][2], ranked[0][0]

    def _shared(self, i: int, words: set[str]) -> int:
        return len(words & set(tokenize(self.chunks[i].content)))

    def _same_name(self, path: str) -> list[str]:
        name = path.rsplit("/", 1)[-1]
        return sorted(p for p in self.by_file if p.rsplit("/", 1)[-1] == name)

    def _what(self, i: int) -> str:
        c, symbol = self.chunks[i], self._symbol(i)
        return (
            f"{c.kind} {symbol} at {c.file_path}:{c.start_line}-{c.end_line}"
            if symbol
            else f"{c.kind} at {c.file_path}:{c.start_line}-{c.end_line}"
        )


def _shared_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _with_path(anchor: Anchor, path: str, lines: tuple[int, int] | None = None) -> str:
    """`anchor` in its own form, naming `path` and, when it had a range, `lines`."""
    return Anchor(path=path, kind=anchor.kind, range=lines if anchor.range is not None else None).display()


def fixed_lines(text: str, fixes: Sequence[AnchorFix]) -> list[str]:
    """The fixture file's lines (split at `\\n`, kept ends) with each fix applied to its line.

    Only the anchor's JSON string changes; the rest of the line keeps its bytes. An anchor that
    is written in a way that cannot be found as it is (escapes, spacing inside the string) has
    its line written again as compact JSON.
    """
    lines = text.split("\n")
    ends = ["\n"] * (len(lines) - 1) + [""]
    for fix in fixes:
        number = fix.line - 1
        line = lines[number]
        body, cr = (line[:-1], "\r") if line.endswith("\r") else (line, "")
        lines[number] = _replaced(body, fix) + cr
    return [line + end for line, end in zip(lines, ends, strict=True) if line + end]


def _replaced(line: str, fix: AnchorFix) -> str:
    value = json.loads(line)
    expected = value["expected"]
    old = next(item for item in expected if isinstance(item, str) and parse_anchor(item) == fix.old)
    for literal in (json.dumps(old, ensure_ascii=False), json.dumps(old)):
        if line.count(literal) == 1:
            return line.replace(literal, json.dumps(fix.new, ensure_ascii=False))
    value["expected"] = [fix.new if item == old else item for item in expected]
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
