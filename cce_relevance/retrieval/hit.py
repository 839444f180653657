"""What every backend returns: a `Hit` per retrieved span, and `SearchFn`, the call that makes them.

A `Hit` is the plain record every consumer reads (the harness, `search`, reports): it carries the
location and kind of a retrieved span, never a reference into the index, so retrievers that run
outside this process can produce the same record later. Every room and the CLI's start-up read it,
so this module imports nothing heavier than the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)  # slots: a run makes one per result, and they are made faster
class Hit:
    """One retrieved span as reported: 1-based rank, location, kind and raw score."""

    rank: int
    chunk_id: str
    file_path: str
    start_line: int
    end_line: int
    chunk_type: str
    kind: str
    score: float


class SearchFn(Protocol):
    """A backend as the harness calls it: a query and its cut-off → at most `k` ranked hits.

    `query_id` names the query (a fixture case id) for retrievers that run outside this process:
    their protocol echoes it, and their errors name it. Built-in backends ignore it.
    """

    def __call__(self, query: str, k: int, query_id: str = "") -> list[Hit]: ...
