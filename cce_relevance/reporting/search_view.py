"""Renderings for `chunks` (the conformance listing) and `search` (one query's ranked hits)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from cce_relevance.reference import CONFORMANCE_SPEC_VERSION
from cce_relevance.reporting.numbers import format6
from cce_relevance.reporting.terminal import terminal_safe
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.hit import Hit


def _span(c: Chunk | Hit) -> dict[str, object]:
    """Where a chunk or hit lies and what it is, in the order both documents list these keys."""
    return {
        "file_path": c.file_path,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "chunk_type": c.chunk_type,
        "kind": c.kind,
    }


def conformance_document(chunks: Sequence[Chunk], impl_language: str = "python") -> str:
    """`conformance.json` v2: chunks sorted by (path, start line, id), keys in the reference's order."""
    rows = sorted(chunks, key=lambda c: (c.file_path, c.start_line, c.chunk_id))
    doc = {
        "spec_version": CONFORMANCE_SPEC_VERSION,
        "impl_language": impl_language,
        "chunks": [{**_span(c), "chunk_id": c.chunk_id, "token_count": c.token_count} for c in rows],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def conformance_table(chunks: Sequence[Chunk], symbol_of: Callable[[Chunk], str | None]) -> str:
    """The chunks as a table sorted like the document, each with its symbol last (what a
    `path::Name` anchor names it by; `-` for a chunk without one)."""
    rows = sorted(chunks, key=lambda c: (c.file_path, c.start_line, c.chunk_id))
    width = max([len("file"), *(len(c.file_path) for c in rows)])
    out = [
        f"{'file'.ljust(width)}  {'lines':>11}  {'type':<8}  {'kind':<24}  {'chunk_id':<16}  tokens  symbol\n"
    ]
    for c in rows:
        lines = f"{c.start_line}-{c.end_line}"
        out.append(
            f"{terminal_safe(c.file_path).ljust(width)}  {lines:>11}  {c.chunk_type:<8}  {c.kind:<24}  "
            f"{c.chunk_id:<16}  {c.token_count:>6}  {terminal_safe(symbol_of(c) or '-')}\n"
        )
    out.append(f"{len(rows)} chunks\n")
    return "".join(out)


def hits_json(hits: Sequence[Hit]) -> str:
    records = [{"rank": h.rank, "score": format6(h.score), "chunk_id": h.chunk_id, **_span(h)} for h in hits]
    return json.dumps(records, indent=2, ensure_ascii=False) + "\n"


def hits_text(hits: Sequence[Hit], first_lines: Sequence[str]) -> str:
    """` 1. [0.825000] auth.py:1-2 (function/function_definition)` and the chunk's first line."""
    out = []
    width = len(str(len(hits)))
    for h, line in zip(hits, first_lines, strict=True):
        out.append(
            f"{str(h.rank).rjust(max(width, 2))}. [{format6(h.score)}] {terminal_safe(h.file_path)}:"
            f"{h.start_line}-{h.end_line} ({h.chunk_type}/{h.kind})\n"
        )
        out.append(f"      {terminal_safe(line)}\n")
    if not hits:
        out.append("no results\n")
    return "".join(out)
