"""Every query a corpus could propose: one candidate per (definition, form) that yields words.

Candidates come from the indexed chunks of the files the rules keep, and from those files'
text after the pipeline's redaction (the same text the chunks were cut from), so a docstring
that held a secret reads `[REDACTED:…]` here and is never proposed. A query text that several
candidates of one form share is dropped: it could not tell its definitions apart (the same
text in two forms, a caller's name that is also a name query, is chosen at most once). A
chosen query or note that the redactor would change is dropped and another chosen instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.anchors import AnchorError, parse_anchor
from cce_relevance.evaluation.proposals.file_rules import FileRules
from cce_relevance.evaluation.proposals.symbols import Anchors, chunk_symbols
from cce_relevance.evaluation.proposals.texts import (
    callers_query,
    doc_sentence,
    name_query,
    own_identifiers,
    without_identifiers,
)
from cce_relevance.retrieval.chunking.chunk import MODULE, Chunk
from cce_relevance.retrieval.chunking.packs import PackSet
from cce_relevance.retrieval.corpus.redact import redact

FORMS = ("name", "doc", "doc-unnamed", "callers")
"""Query forms, easy ones first: the definition's name as words, its doc sentence, that
sentence without the definition's identifiers, the names of its callers."""
HARD_FORMS = frozenset({"doc-unnamed", "callers"})
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_MAX_CALLERS = 3


@dataclass(frozen=True)
class Candidate:
    """One proposable case: its form, query, the chunk it labels (whose symbol is `symbol`) and
    why (`note`)."""

    form: str
    query: str
    chunk: Chunk
    symbol: str | None
    note: str

    @property
    def hard(self) -> bool:
        return self.form in HARD_FORMS


@dataclass(frozen=True)
class CandidatePool:
    candidates: tuple[Candidate, ...]
    anchors: Anchors  # how a chosen candidate's chunk is named
    files: int  # files the rules kept
    skipped: Mapping[str, int]  # files left out, by reason


def gather(
    chunks: Sequence[Chunk], texts: Mapping[str, str], rules: FileRules, packs: PackSet
) -> CandidatePool:
    """All candidates of a corpus; `texts` maps each indexed path to its redacted text, and
    `packs` are the language packs the corpus was chunked with (for the definitions' names)."""
    skipped: Counter[str] = Counter()
    kept_files: dict[str, list[str]] = {}
    for path, text in texts.items():
        reason = rules.skip_reason(path, text) or (None if _anchorable(path) else "unanchorable path")
        if reason is None:
            kept_files[path] = text.split("\n")
        else:
            skipped[reason] += 1
    symbols = chunk_symbols(chunks, {p: texts[p] for p in kept_files}, packs)
    found: list[Candidate] = []
    for c, symbol in zip(chunks, symbols, strict=True):
        lines = kept_files.get(c.file_path)
        if lines is None:
            continue
        found.extend(_own_forms(c, symbol, lines))
    found.extend(_caller_forms(chunks, symbols, kept_files))
    return CandidatePool(
        _distinct(found), Anchors(chunks, symbols), len(kept_files), dict(sorted(skipped.items()))
    )


def _anchorable(path: str) -> bool:
    """Whether an anchor naming `path` reads back as that path (no `#`, no range-like `@`)."""
    try:
        return parse_anchor(path).path == path and "#" not in path
    except AnchorError:
        return False


def _where(c: Chunk) -> str:
    return f"{c.file_path}:{c.start_line}-{c.end_line}"


def _what(c: Chunk, symbol: str | None) -> str:
    return f"{c.kind} {symbol}" if symbol else c.kind


def _own_forms(c: Chunk, symbol: str | None, lines: list[str]) -> list[Candidate]:
    out = []
    what, where = _what(c, symbol), _where(c)
    if symbol and (q := name_query(symbol)):
        out.append(Candidate("name", q, c, symbol, f"easy: the name of {what} as words ({where})"))
    doc = doc_sentence(lines, c.start_line, c.end_line, module=c.kind == MODULE)
    if doc is None:
        return out
    out.append(Candidate("doc", doc, c, symbol, f"easy: first doc sentence of {what} ({where})"))
    if symbol:
        own = own_identifiers(symbol, c.content.split("\n", 1)[0])
        if (q := without_identifiers(doc, symbol, own)) is not None:
            out.append(
                Candidate(
                    "doc-unnamed",
                    q,
                    c,
                    symbol,
                    f"hard: first doc sentence of {what} without its own identifiers "
                    f"({', '.join(sorted(own))}) ({where})",
                )
            )
    return out


def _caller_forms(
    chunks: Sequence[Chunk],
    symbols: Sequence[str | None],
    kept_files: Mapping[str, list[str]],
) -> list[Candidate]:
    """Definitions whose name no other definition of the kept files has, described by the
    definitions that call them.

    A call is `name(` on a line of a kept file; its caller is the innermost named definition
    holding that line, other than the callee and definitions nested in it.
    """
    own_name_counts = Counter(s.split(".")[-1] for s in symbols if s)
    targets = {
        s.split(".")[-1]: i for i, s in enumerate(symbols) if s and own_name_counts[s.split(".")[-1]] == 1
    }
    innermost = _innermost_by_line(chunks, kept_files)
    callers: dict[int, list[int]] = {}
    for path, lines in kept_files.items():
        owner = innermost.get(path)
        if owner is None:
            continue
        for number, line in enumerate(lines):
            if "(" not in line:
                continue
            for name in _CALL.findall(line):
                target = targets.get(name)
                caller = owner[number] if number < len(owner) else -1
                if target is None or caller < 0 or symbols[caller] is None:
                    continue
                callee = symbols[target]
                if caller == target or str(symbols[caller]).startswith(f"{callee}."):
                    continue
                found = callers.setdefault(target, [])
                if caller not in found and len(found) < _MAX_CALLERS:
                    found.append(caller)
    out = []
    for target, caller_ids in sorted(callers.items()):
        c, symbol = chunks[target], symbols[target]
        assert symbol is not None
        names = [str(symbols[i]) for i in caller_ids]
        q = callers_query(names, symbol)
        if q is None:
            continue
        where = ", ".join(f"{symbols[i]} ({_where(chunks[i])})" for i in caller_ids)
        out.append(
            Candidate(
                "callers",
                q,
                c,
                symbol,
                f"hard: names of the definitions that call {_what(c, symbol)} ({_where(c)}): {where}",
            )
        )
    return out


def _innermost_by_line(chunks: Sequence[Chunk], kept_files: Mapping[str, list[str]]) -> dict[str, list[int]]:
    """Per kept file, the index of the innermost chunk holding each line (0-based), -1 for none."""
    owner: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):  # pre-order: a nested chunk comes after, and overwrites, its parent
        lines = kept_files.get(c.file_path)
        if lines is None or c.kind == MODULE:
            continue
        row = owner.setdefault(c.file_path, [-1] * len(lines))
        row[c.start_line - 1 : c.end_line] = [i] * (min(c.end_line, len(row)) - c.start_line + 1)
    return owner


def _distinct(found: list[Candidate]) -> tuple[Candidate, ...]:
    """Candidates whose query text no other candidate of their form has (it could not tell
    their definitions apart), and that show no redaction marker."""
    counts = Counter((c.form, c.query.lower()) for c in found)
    return tuple(
        c for c in found if counts[(c.form, c.query.lower())] == 1 and "[REDACTED" not in c.query + c.note
    )


def unredacted(c: Candidate) -> bool:
    """Whether the redactor leaves the candidate's query and note as they are. Asked of the
    chosen few only: their text was redacted already, so this is a guard, not the filter."""
    return redact(c.query) == c.query and redact(c.note) == c.note
