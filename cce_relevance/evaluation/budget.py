"""Token budgets: what of a ranking fits a context window, and how much of the answer that is.

A context engine is judged by what it puts in a model's context, and the context is measured in
tokens, not in results. `--metrics recall@budget=2000,tok-recall@budget=2000` takes the results
in rank order until the next one would take the running total past 2,000 `cce.tokens/v1` tokens,
then scores what was taken:

* **cost**: each result costs its whole chunk, the estimate the index records for it
  (`max(1, ⌊UTF-8 bytes / 4⌋)` of the chunk's text, §token-estimate). A result that is not a
  chunk of the index (an external retriever's span) costs the line weights of its lines, the
  weights the token-level metrics use. Two results that overlap (a class and one of its methods)
  each cost their whole chunk, as a packer that pastes both pays for both.
* **the straddling result**: the first result whose cost would take the total past the budget is
  left out, and so is every result after it, even a smaller one that would fit: the context holds
  a prefix of the ranking, so a budget metric never reorders what the backend ranked. A first
  result larger than the budget leaves the context empty.
* **recall@budget=B**: matched anchors among the results that fit / |E| (the reference's recall,
  at a budget instead of k).
* **tok-recall@budget=B**: the share of the labeled text's token mass that the results that fit
  cover. The labeled text is the case's ranged anchors' lines (`path@a-b`, `path::Name`), as the
  token-level metrics weigh them; for a case without one, the lines of every chunk its anchors
  make relevant (its judged chunks: all of `auth.py` for the anchor `auth.py`).
* **tokens to first relevant** (`--metrics ttfr`): the cost of the results up to and including
  the first relevant one of the case's top k, MRR's count in tokens; none when the top k holds
  nothing relevant.

The results are retrieved deep enough to fill the largest budget asked: first to the case's k
(or the deepest cut-off asked), then at twice that depth, again and again, until the results fill
it, the backend returns fewer than asked, or the depth reaches the cut-off limit. docs/metrics.md
has the formulas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.spans import Intervals, LineWeights, intersect, merge
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.hit import Hit


class TokenCosts:
    """What each result costs in tokens, and where each chunk of the index lies, from its chunks."""

    def __init__(self, chunks: Iterable[Chunk], weights: LineWeights) -> None:
        self._all = chunks
        self._weights = weights
        self._by_id: dict[str, Chunk] | None = None  # made when first needed

    def _chunks(self) -> dict[str, Chunk]:
        if self._by_id is None:
            self._by_id = {}
            for c in self._all:
                self._by_id.setdefault(c.chunk_id, c)
        return self._by_id

    def cost(self, hit: Hit) -> int:
        """The whole chunk's token estimate; the line weights of its lines for a span that is not
        a chunk of the index."""
        c = self._chunks().get(hit.chunk_id)
        if c is not None and (c.file_path, c.start_line, c.end_line) == (
            hit.file_path,
            hit.start_line,
            hit.end_line,
        ):
            return c.token_count
        return self._weights.mass({hit.file_path: [(hit.start_line, max(hit.start_line, hit.end_line))]})

    def costs(self, hits: Sequence[Hit]) -> list[int]:
        return [self.cost(h) for h in hits]

    def chunk_spans(self, chunk_ids: Iterable[str]) -> Intervals:
        """The merged lines of the chunks with these ids (ids not in the index are ignored)."""
        by_id = self._chunks()
        return merge(
            (c.file_path, c.start_line, c.end_line) for i in chunk_ids if (c := by_id.get(i)) is not None
        )


def fitting(costs: Sequence[int], budget: int) -> int:
    """How many leading results fit in `budget` tokens: the longest prefix whose costs sum to at
    most the budget (the straddling result and everything after it are left out)."""
    total = 0
    for n, cost in enumerate(costs):
        total += cost
        if total > budget:
            return n
    return len(costs)


def anchor_recall(anchors: Sequence[Anchor], hits: Sequence[Hit]) -> float:
    """Matched anchors among `hits` / |anchors|: the reference's recall over these results."""
    matched = sum(
        1 for a in anchors if any(a.matches(h.file_path, h.kind, h.start_line, h.end_line) for h in hits)
    )
    return matched / len(anchors)


def token_recall(expected: Intervals, expected_mass: int, hits: Sequence[Hit], weights: LineWeights) -> float:
    """The share of the expected spans' token mass that `hits` cover (0 for no expected mass)."""
    if not expected_mass:
        return 0.0
    covered = weights.mass(intersect(expected, merge((h.file_path, h.start_line, h.end_line) for h in hits)))
    return covered / expected_mass


def first_relevant_tokens(costs: Sequence[int], gains: Sequence[int]) -> int | None:
    """The cost of the results up to and including the first relevant one; None when none is."""
    total = 0
    for cost, gain in zip(costs, gains, strict=True):
        total += cost
        if gain > 0:
            return total
    return None


def needs_deeper(costs: Sequence[int], asked: int, budget: int, limit: int) -> bool:
    """Whether a ranking retrieved `asked` deep (these `costs`) might hold more results that fit
    `budget`: it is full (the backend may have more), its results leave room, and the depth is
    below `limit`."""
    return len(costs) == asked and asked < limit and sum(costs) < budget
