"""What `cce-relevance search` shows of each hit: the first line of the span it names."""

from __future__ import annotations

from collections.abc import Sequence

from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.index.model import Index


def hit_lines(index: Index, hits: Sequence[Hit]) -> list[str]:
    """Each hit's first line: its chunk's, or for a span that is no chunk of ours (an external
    retriever's), the line in the first chunk that covers it ('' when none does)."""
    first_line = {c.chunk_id: c.content.split("\n", 1)[0] for c in index.chunks}
    return [first_line[h.chunk_id] if h.chunk_id in first_line else _line_at(index, h) for h in hits]


def _line_at(index: Index, hit: Hit) -> str:
    for i in index.chunks_by_file.get(hit.file_path, ()):
        c = index.chunks[i]
        if c.start_line <= hit.start_line <= c.end_line:
            lines = c.content.split("\n")
            if hit.start_line - c.start_line < len(lines):
                return lines[hit.start_line - c.start_line]
    return ""
