"""Proposed fixes for stale and moved anchors: where the labeled definition most likely is now.

`validate` says that an anchor resolves to nothing; this guesses what it should say instead, for
a person to accept or not. The definition is looked for in the anchor's file or, when that file
is gone, in the files of the same name elsewhere (a moved file), among the chunks of the
anchor's kind. The likeliest is the chunk whose content shares the most words with the case's
query, then the one nearest the anchor's old lines. A fix is proposed only when one chunk is
best and it shares at least one word with the query; it keeps the anchor's form, a line range
becoming the lines the definition spans now.

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

from cce_relevance.evaluation.anchors import Anchor, parse_anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.validation import STALE_CODES, Validation
from cce_relevance.retrieval.chunk import Chunk
from cce_relevance.retrieval.tokens import tokenize


@dataclass(frozen=True)
class AnchorFix:
    """Replace anchor `old` of the case on fixture line `line` with `new`; `why` explains it."""

    line: int
    case_id: str
    old: Anchor
    new: str
    why: str


def suggest_fixes(validation: Validation, cases: Sequence[Case], chunks: Sequence[Chunk],
                  symbols: Sequence[str | None]) -> list[AnchorFix]:
    """A fix for each stale or moved anchor that has a likely new place, in fixture order.

    `symbols` are the chunks' dotted definition names (None where a definition has none).
    """
    stale = {(f.line, f.anchor) for f in validation.findings if f.code in STALE_CODES and f.anchor is not None}
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

    def __init__(self, chunks: Sequence[Chunk], symbols: Sequence[str | None]) -> None:
        self.chunks = chunks
        self.symbols = symbols
        self.by_file: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            self.by_file.setdefault(c.file_path, []).append(i)

    def relocated(self, anchor: Anchor, query: str) -> tuple[str, str] | None:
        """Where a stale anchor's definition most likely is now."""
        assert anchor.path is not None
        paths = [anchor.path] if anchor.path in self.by_file else self._same_name(anchor.path)
        pool = [i for p in paths for i in self.by_file[p] if anchor.kind is None or self.chunks[i].kind == anchor.kind]
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
        return (_with_path(anchor, c.file_path, (c.start_line, c.end_line)),
                f"{self._what(i)} shares {shared} word(s) with the query"
                + (" and is the nearest such definition" if len(pool) > 1 else ""))

    def moved(self, anchor: Anchor, query: str) -> tuple[str, str] | None:
        """A better place for a resolving range anchor whose lines are no chunk's exactly."""
        assert anchor.path is not None and anchor.range is not None
        a, b = anchor.range
        pool = [i for i in self.by_file.get(anchor.path, ()) if anchor.kind is None or self.chunks[i].kind == anchor.kind]
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
        return (_with_path(anchor, c.file_path, (c.start_line, c.end_line)),
                f"lines {a}-{b} now hold {self._what(held)}, which shares {self._shared(held, words)} word(s) with "
                f"the query; {self._what(best[0])} shares {best[1]}")

    def _best(self, pool: Sequence[int], query: str, near: int) -> tuple[int, int] | None:
        """The one chunk sharing the most query words, nearest line `near` among equals; None
        when it shares none or two are equally good."""
        words = set(tokenize(query))
        ranked = sorted(((self._shared(i, words), -abs(self.chunks[i].start_line - near), i) for i in pool), reverse=True)
        if not ranked or ranked[0][0] == 0 or (len(ranked) > 1 and ranked[1][:2] == ranked[0][:2]):
            return None
        return ranked[0][2], ranked[0][0]

    def _shared(self, i: int, words: set[str]) -> int:
        return len(words & set(tokenize(self.chunks[i].content)))

    def _same_name(self, path: str) -> list[str]:
        name = path.rsplit("/", 1)[-1]
        return sorted(p for p in self.by_file if p.rsplit("/", 1)[-1] == name)

    def _what(self, i: int) -> str:
        c, symbol = self.chunks[i], self.symbols[i]
        return f"{c.kind} {symbol} at {c.file_path}:{c.start_line}-{c.end_line}" if symbol else \
            f"{c.kind} at {c.file_path}:{c.start_line}-{c.end_line}"


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
