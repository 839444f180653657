"""Token-budget metrics and judged@k against plain oracles, through the real harness.

The oracles below are written from the definitions in docs/metrics.md with nothing of the
package's arithmetic: explicit line sets, explicit running sums, one loop per rule. The harness
scores generated corpora, rankings and anchors with a search function that serves a fixed
ranking to whatever depth it is asked (so the deepening search for a budget is exercised), and
every budget metric, judged@k and the tokens to the first relevant hit must equal the oracle's.
"""

from __future__ import annotations

import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.budget import TokenCosts, fitting
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import evaluate_backends
from cce_relevance.evaluation.judgments import judge
from cce_relevance.evaluation.rank_metrics import judged_at, rank_metric
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.tokens import estimate_tokens

FILES = ("a.py", "b.py", "c.py")


@st.composite
def corpora(draw: st.DrawFn) -> tuple[dict[str, list[str]], list[Chunk]]:
    """Files of a few lines each, and chunks over them (index order: by file, then start)."""
    files = {
        path: draw(st.lists(st.text("abcdefgh xyz", min_size=0, max_size=60), min_size=3, max_size=14))
        for path in FILES
    }
    chunks = []
    for path, lines in files.items():
        spans = draw(
            st.lists(
                st.tuples(st.integers(1, len(lines)), st.integers(0, 6)), min_size=1, max_size=5, unique=True
            )
        )
        for start, extra in sorted(spans):
            end = min(len(lines), start + extra)
            content = "\n".join(lines[start - 1 : end])
            chunks.append(
                Chunk(
                    f"{path}:{start}-{end}",
                    path,
                    start,
                    end,
                    "function",
                    "function_definition",
                    "python",
                    content,
                    estimate_tokens(content),
                )
            )
    return files, chunks


def _hit(rank: int, c: Chunk) -> Hit:
    return Hit.of(c, rank, 1.0 / rank)


class Ranked:
    """A backend that ranks the same chunks for every query, as deep as it is asked; records depths."""

    def __init__(self, ranking: list[Chunk]) -> None:
        self.ranking = ranking
        self.asked: list[int] = []

    def __call__(self, query: str, k: int, query_id: str = "") -> list[Hit]:
        self.asked.append(k)
        return [_hit(i, c) for i, c in enumerate(self.ranking[:k], start=1)]


# --- the oracles ------------------------------------------------------------------------------


def oracle_line_weight(files: dict[str, list[str]], chunks: list[Chunk], path: str, line: int) -> int:
    """A line weighs the estimate of its text in the first chunk (index order) holding it, else 1."""
    for c in chunks:
        if c.file_path == path and c.start_line <= line <= c.end_line:
            return max(1, len(files[path][line - 1].encode("utf-8")) // 4)
    return 1


def oracle_fit(ranking: list[Chunk], budget: int) -> list[Chunk]:
    """Results in rank order while the running total of whole chunks stays within the budget."""
    taken, total = [], 0
    for c in ranking:
        if total + c.token_count > budget:
            break  # the straddling chunk and everything after it stay out
        total += c.token_count
        taken.append(c)
    return taken


def overlaps(a: Anchor, c: Chunk) -> bool:
    if a.path is not None and a.path != c.file_path:
        return False
    return a.range is None or not (c.end_line < a.range[0] or c.start_line > a.range[1])


def oracle_recall(anchors: list[Anchor], fit: list[Chunk]) -> float:
    return sum(1 for a in anchors if any(overlaps(a, c) for c in fit)) / len(anchors)


def oracle_tok_recall(
    files: dict[str, list[str]], chunks: list[Chunk], anchors: list[Anchor], fit: list[Chunk]
) -> float:
    ranged = [a for a in anchors if a.range is not None]
    if ranged:  # the anchors' own lines
        expected = {(a.path, n) for a in ranged for n in range(a.range[0], a.range[1] + 1)}  # type: ignore[index]
    else:  # the lines of every chunk the anchors make relevant
        expected = {
            (c.file_path, n)
            for c in chunks
            if any(overlaps(a, c) for a in anchors)
            for n in range(c.start_line, c.end_line + 1)
        }
    covered = {(c.file_path, n) for c in fit for n in range(c.start_line, c.end_line + 1)}

    def weight(lines: set[tuple[str | None, int]]) -> int:
        return sum(oracle_line_weight(files, chunks, str(p), n) for p, n in lines)

    total = weight(expected)
    return weight(expected & covered) / total if total else 0.0


def oracle_first_tokens(anchors: list[Anchor], ranking: list[Chunk], k: int) -> int | None:
    spent = 0
    for c in ranking[:k]:
        spent += c.token_count
        if any(overlaps(a, c) for a in anchors):
            return spent
    return None


def oracle_judged(anchors: list[Anchor], rejected: list[Anchor], ranking: list[Chunk], n: int) -> float:
    return sum(1 for c in ranking[:n] if any(overlaps(a, c) for a in anchors + rejected)) / n


# --- the properties ---------------------------------------------------------------------------


@st.composite
def scored_cases(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    files, chunks = draw(corpora())
    ranking = draw(st.permutations(chunks).map(lambda p: p[: draw(st.integers(0, len(p)))]))

    def anchor() -> Anchor:
        path = draw(st.sampled_from(FILES))
        if draw(st.booleans()):
            a = draw(st.integers(1, len(files[path])))
            return Anchor(path, None, (a, min(len(files[path]), a + draw(st.integers(0, 4)))))
        return Anchor(path, None, None)

    ranged = draw(st.booleans())
    anchors = [anchor() for _ in range(draw(st.integers(1, 3)))]
    if ranged:
        anchors = [a if a.range is not None else Anchor(a.path, None, (1, 1)) for a in anchors]
    else:
        anchors = [Anchor(a.path, None, None) for a in anchors]
    rejected = [anchor() for _ in range(draw(st.integers(0, 2)))]
    k = draw(st.integers(1, 6))
    budgets = draw(st.lists(st.integers(1, 120), min_size=1, max_size=3, unique=True))
    return files, chunks, ranking, anchors, rejected, k, budgets


@settings(max_examples=300, deadline=None)
@given(scored_cases(), st.integers(1, 8))
def test_budget_metrics_judged_and_first_tokens_equal_the_oracles(case, cutoff) -> None:  # type: ignore[no-untyped-def]
    files, chunks, ranking, anchors, rejected, k, budgets = case
    fixture = Case(1, "q", "query", tuple(anchors), k, None, tuple(rejected))
    specs = [
        rank_metric("judged"),
        rank_metric(f"judged@{cutoff}"),
        *(rank_metric(f"recall@budget={b}") for b in budgets),
        *(rank_metric(f"tok-recall@budget={b}") for b in budgets),
    ]
    by_file: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_file.setdefault(c.file_path, []).append(i)
    judgment = judge(fixture, chunks, AnchorIndex(chunks, by_file))
    weights = LineWeights(chunks)
    search = Ranked(ranking)
    (report,) = evaluate_backends(
        [("fixed", search)],
        [fixture],
        weights,
        [judgment],
        specs=specs,
        costs=TokenCosts(chunks, weights),
        first_tokens=True,
    )
    result = report.cases[0]
    assert result.ranking is not None
    assert result.ranking["judged_at_k"] == oracle_judged(anchors, rejected, ranking, k)
    assert result.ranking[f"judged_at_{cutoff}"] == oracle_judged(anchors, rejected, ranking, cutoff)
    for b in budgets:
        fit = oracle_fit(ranking, b)
        assert result.ranking[f"recall_at_budget_{b}"] == oracle_recall(anchors, fit), b
        assert (
            abs(result.ranking[f"tok_recall_at_budget_{b}"] - oracle_tok_recall(files, chunks, anchors, fit))
            < 1e-12
        )
    assert result.first_relevant_tokens == oracle_first_tokens(anchors, ranking, k)
    # deepened only as far as the largest budget needed: never past a ranking that had run out
    assert search.asked[0] == k and all(
        b == 2 * a for a, b in zip(search.asked[1:], search.asked[2:], strict=False)
    )
    assert all(depth <= max(cutoff, 2 * max(k, len(ranking))) for depth in search.asked)


def test_the_straddling_chunk_and_everything_after_it_stay_out() -> None:
    """Costs 30, 50, 10 at a budget of 60: 30 fits, 50 would make 80 and stops the packing, and the
    10 after it stays out too (the context is a prefix of the ranking)."""
    assert fitting([30, 50, 10], 60) == 1
    assert fitting([30, 30, 10], 60) == 2  # exactly the budget fits
    assert fitting([70, 1], 60) == 0  # a first chunk larger than the budget leaves nothing
    assert fitting([], 60) == 0


def test_judged_at_k_is_trec_evals_precision_with_every_judgment_counted() -> None:
    """judged@n over relevant and `irrelevant`-labelled results is trec_eval's P@n counting every
    judged document as relevant (ir_measures' Judged@n): here qrels with the rejected documents
    at grade 1 and the relevant ones above it, at relevance level 1 (pytrec_eval takes no 0)."""
    judged = [True, False, True, True, False]
    qrels = {"q": {"d0": 2, "d2": 1, "d3": 3}}
    run = {"q": {f"d{i}": float(10 - i) for i in range(5)}}
    for n in (1, 3, 5, 10):
        trec = pytrec_eval.RelevanceEvaluator(qrels, {f"P.{n}"}, relevance_level=1).evaluate(run)["q"]
        assert judged_at(judged, n) == trec[f"P_{n}"]
