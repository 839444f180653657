"""Human text renderings of a run: the summary table, token block and compare block
(§summary–§compare-block)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cce_relevance import schemas
from cce_relevance.evaluation.harness import BackendReport, CaseResult
from cce_relevance.evaluation.metrics import METRICS, MetricSpec
from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.retrieval.tokens import ESTIMATOR_ID
from cce_relevance.stats.paired import PairedTest

TITLE = f"CCE relevance — ranking quality vs labeled fixtures ({schemas.FIXTURES})"


def _row(label: str, cells: Sequence[str], first: int = 10, width: int = 12) -> str:
    return "  " + label.ljust(first) + "".join(c.rjust(width) for c in cells) + "\n"


def render_summary(corpus: str, embedder: str, queries: int, reports: Sequence[BackendReport]) -> str:
    """Header lines, the metric table, and the token-level table when any case is ranged."""
    out = [
        f"{TITLE}\n",
        f"  corpus  : {corpus}\n",
        f"  embedder: {embedder}\n",
        f"  queries : {queries}\n",
        "\n",
        _row("backend", [m.label for m in METRICS]),
    ]
    for r in reports:
        out.append(_row(r.backend, [format6(getattr(r, m.attr)) for m in METRICS]))
    with_tokens = [(r.backend, r.tokens) for r in reports if r.tokens is not None]
    if with_tokens:
        m = with_tokens[0][1].queries
        out += [
            "\n",
            f"  token-level span metrics ({m} of {queries} queries carry ranged anchors)\n",
            _row("backend", ["tok-P", "tok-recall", "tok-IoU"]),
        ]
        for backend, t in with_tokens:
            out.append(_row(backend, [format6(t.precision), format6(t.recall), format6(t.iou)]))
    return "".join(out)


def render_rank_metrics(reports: Sequence[BackendReport], specs: Sequence[MetricSpec]) -> str:
    """The `--metrics` table: macro means of the requested rank metrics per backend; then, with
    `--metrics ttfr`, the tokens to the first relevant hit."""
    out = []
    if specs:
        out += [
            "\n",
            "  rank metrics over corpus judgments (relevant = a chunk matching an anchor)\n",
            _row("backend", [m.label for m in specs]),
        ]
        for r in reports:
            assert r.ranking is not None, "rank metrics were requested but the run was not judged"
            out.append(_row(r.backend, [format6(r.ranking[m.key]) for m in specs]))
    first = [(r.backend, r.first_relevant_tokens) for r in reports if r.first_relevant_tokens is not None]
    if first:
        out += [
            "\n",
            f"  {ESTIMATOR_ID} tokens to the first relevant hit of the top k "
            "(median over the queries that have one)\n",
            _row("backend", ["median", "queries"]),
        ]
        for backend, (middle, found) in first:
            out.append(_row(backend, ["—" if middle is None else f"{middle:g}", str(found)]))
    return "".join(out)


def _value(holder: BackendReport | CaseResult, spec: MetricSpec, rank: bool) -> float:
    if rank:
        assert holder.ranking is not None, "a rank metric was compared in an unjudged run"
        return holder.ranking[spec.key]
    return getattr(holder.metrics if isinstance(holder, CaseResult) else holder, spec.attr)


def render_compare(
    a: BackendReport,
    b: BackendReport,
    tests: Mapping[str, PairedTest],
    rank_metrics: Sequence[MetricSpec] = (),
) -> str:
    """Per-query deltas (B − A) and the paired t-test block per metric (the reference metrics, then
    the rank metrics of `--metrics`)."""
    n = len(a.cases)
    specs = [(m, False) for m in METRICS] + [(m, True) for m in rank_metrics]
    out = [
        "\n",
        f"  per-query deltas ({a.backend} → {b.backend}; positive = {b.backend} wins)\n",
        _row("query", ["d" + m.label for m, _ in specs], first=24),
    ]
    for ra, rb in zip(a.cases, b.cases, strict=True):
        deltas = [_value(rb, m, rank) - _value(ra, m, rank) for m, rank in specs]
        out.append(_row(ra.case.id, [signed6(d) for d in deltas], first=24))
    out.append(
        _row("mean", [signed6(_value(b, m, rank) - _value(a, m, rank)) for m, rank in specs], first=24)
    )
    out += ["\n", paired_heading(n) + "\n"]
    for m, _ in specs:
        out.append(paired_row(m.label, tests[m.key]) + "\n")
    return "".join(out)


def paired_heading(n: int) -> str:
    """The title and column heads of a paired t-test table (text), without the final newline."""
    return (
        f"  paired t-test on the per-query deltas (two-sided, n={n}, df={max(n - 1, 0)})\n"
        + "  "
        + "metric".ljust(10)
        + "mean-delta".rjust(14)
        + "t".rjust(12)
        + "p".rjust(12)
        + "95% CI".rjust(26)
    )


def paired_row(label: str, test: PairedTest) -> str:
    """One metric's row of that table: mean delta, t, two-sided p and the 95% interval."""
    ci = f"[{signed6(test.ci95[0])}, {signed6(test.ci95[1])}]" if test.ci95 is not None else "n/a"
    return (
        "  "
        + label.ljust(10)
        + signed6(test.mean_delta).rjust(14)
        + (signed6(test.t) if test.t is not None else "n/a").rjust(12)
        + (format6(test.p) if test.p is not None else "n/a").rjust(12)
        + ci.rjust(26)
    )
