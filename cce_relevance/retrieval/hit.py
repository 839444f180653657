"""What every backend returns: a `Hit` per retrieved span, and `SearchFn`, the call that makes them.

A `Hit` is the plain record every consumer reads (the harness, `search`, reports): it carries the
location and kind of a retrieved span, never a reference into the index, so retrievers that run
outside this process can produce the same record later. Every room and the CLI's start-up read it,
so this module imports nothing heavier than the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Span:
    """Where a retrievable unit lies and what it is: the fields a chunk and a hit on it share.

    A hit copies them from the chunk it names (`Hit.of`); anchors and metrics read only these.
    """

    chunk_id: str
    file_path: str
    start_line: int
    end_line: int
    chunk_type: str
    kind: str


@dataclass(frozen=True, slots=True)  # slots: a run makes one per result, and they are made faster
class Hit(Span):
    """One retrieved span as reported: its location and kind, its 1-based rank and raw score."""

    rank: int
    score: float

    @classmethod
    def of(cls, span: Span, rank: int, score: float) -> Hit:
        """The hit at `rank` on `span` (a chunk, or another hit's span)."""
        return cls(
            span.chunk_id,
            span.file_path,
            span.start_line,
            span.end_line,
            span.chunk_type,
            span.kind,
            rank,
            score,
        )


class SearchFn(Protocol):
    """A backend as the harness calls it: a query and its cut-off → at most `k` ranked hits.

    `query_id` names the query (a fixture case id) for retrievers that run outside this process:
    their protocol echoes it, and their errors name it. Built-in backends ignore it.
    """

    def __call__(self, query: str, k: int, query_id: str = "") -> list[Hit]: ...
