"""The harness keeps the collector's full passes off the objects that exist when scoring starts."""

from __future__ import annotations

import gc

from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import evaluate_backends
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.retrieval.hit import Hit


def test_objects_older_than_the_scoring_are_frozen_while_it_runs():
    # Full collections during scoring skip what existed before it (the index, above all); the
    # freeze ends with it, and a caller's own freeze is left as it was.
    seen: list[int] = []

    def search(query: str, k: int, query_id: str = "") -> list[Hit]:
        seen.append(gc.get_freeze_count())
        return []

    case = Case(1, "q", "x", (parse_anchor("a.py"),), 1)
    assert gc.get_freeze_count() == 0
    evaluate_backends([("s", search)], [case], LineWeights([]))
    assert seen[0] > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        evaluate_backends([("s", search)], [case], LineWeights([]))
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
