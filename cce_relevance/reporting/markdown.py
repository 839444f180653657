"""GitHub-flavoured Markdown for a base → head comparison (used by `compare --markdown` and the Action).

Every id and name that came from a fixture file or a report is untrusted and goes through
`markdown_safe`. Tables list changed queries first; unchanged ones are folded into `<details>`
so the comment stays short on a large fixture set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cce_relevance.evaluation.comparison import BackendComparison, MetricStats
from cce_relevance.evaluation.metrics import METRICS
from cce_relevance.reporting.full_report import full_cells, full_heading, label, rank_test_p_cells
from cce_relevance.reporting.markdown_safe import code_span, details, escape_md
from cce_relevance.reporting.numbers import SIX, Digits, signed6
from cce_relevance.stats.full_stats import FullStats
from cce_relevance.stats.rank_tests import EXACT_LIMIT as RANK_EXACT_LIMIT
from cce_relevance.stats.resampling import BOOTSTRAP_RESAMPLES, EXACT_LIMIT, PERMUTATION_DRAWS


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "r") -> str:
    sep = ["---"] + [("---:" if align == "r" else "---") for _ in header[1:]]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _delta_cell(value: float) -> str:
    text = signed6(value)
    if text in ("+0.000000", "-0.000000"):
        return text
    return f"**{text}** 🟢" if value > 0 else f"**{text}** 🔴"


def means_table(
    comparisons: Sequence[BackendComparison],
    digits: Digits = SIX,
    arrow: str = " → ",
    latency: Mapping[str, tuple[float, float]] | None = None,
) -> str:
    """Mean metrics per backend, base → head, with the change (`arrow="→"` keeps a cell narrow): the
    reference metrics, then the rank metrics every backend scored at both sides carries; with
    `latency` (backend → base and head query p50 in ms) a last column of those."""
    paired = [
        c.pair.specs for c in comparisons if c.pair.base_means is not None and c.pair.head_means is not None
    ]
    specs = [m for m in paired[0] if all(m in other for other in paired[1:])] if paired else list(METRICS)
    rows = []
    for c in comparisons:
        name = code_span(c.pair.backend, in_table=True)
        if c.pair.base_means is None or c.pair.head_means is None:
            side = "head" if c.pair.base_means is None else "base"
            rows.append([name] + [f"only in {side}"] + [""] * (len(specs) - 1))
            continue
        cells = []
        for spec in specs:
            m = c.metric(spec.key)
            base, head = m.base_mean or 0.0, m.head_mean or 0.0
            cells.append(f"{digits.fixed(base)}{arrow}{digits.fixed(head)} ({digits.signed(head - base)})")
        if latency:
            times = latency.get(c.pair.backend)
            cells.append("" if times is None else f"{times[0]:.2f}{arrow}{times[1]:.2f}")
        rows.append([name, *cells])
    return _table(["backend", *(m.label for m in specs), *(["p50 ms"] if latency else [])], rows)


def report_means_table(report: Mapping[str, Any], digits: Digits = SIX) -> str:
    """Mean metrics per backend of one saved run report: a set scored on one side only."""

    def cell(value: Any) -> str:
        try:
            return digits.fixed(float(value))
        except (TypeError, ValueError):
            return escape_md(str(value))

    rows = [
        [code_span(str(b["backend"]), in_table=True), *(cell(b[m.key]) for m in METRICS)]
        for b in report["backends"]
    ]
    return _table(["backend", *(m.label for m in METRICS)], rows)


def _significance_row(m: MetricStats, digits: Digits) -> list[str]:
    t = m.test
    ci = f"[{digits.signed(t.ci95[0])}, {digits.signed(t.ci95[1])}]" if t.ci95 is not None else "n/a"
    return [
        m.label,
        digits.signed(t.mean_delta),
        digits.signed(t.t) if t.t is not None else "n/a",
        digits.fixed(t.p) if t.p is not None else "n/a",
        ci,
        f"{m.wins}/{m.losses}/{m.ties}",
        digits.fixed(m.mde) if m.mde is not None else "n/a",
    ]


def significance_table(c: BackendComparison, digits: Digits = SIX, legend: bool = True) -> str:
    """The t-test table, followed by the full-statistics table when `c.full` was computed (with
    its legend unless `legend=False`: a page that shows several gives the legend once)."""
    n = len(c.pair.paired)
    head = f"Paired t-test on per-query deltas (two-sided, n={n}, df={max(n - 1, 0)}):\n\n"
    table = head + _table(
        ["metric", "mean Δ", "t", "p", "95% CI", "W/L/T", "MDE@80%"],
        [_significance_row(m, digits) for m in c.metrics],
    )
    return table if c.full is None else table + "\n" + full_table(c.full, digits, legend)


FULL_LEGEND_MD = (
    "<sub>d_z = mean Δ / sd of Δ (effect size) · perm p = two-sided sign-flip permutation test, exact over "
    f"all 2^m sign patterns when m ≤ {EXACT_LIMIT} queries changed, else {PERMUTATION_DRAWS} seeded draws · "
    f"bootstrap = percentile 95% CI of the mean Δ, {BOOTSTRAP_RESAMPLES} seeded resamples · "
    "Holm p = perm p adjusted across the metrics tested · Wilcoxon p = signed-rank test, sign p = sign test, "
    f"both over the m changed queries, exact when m ≤ {RANK_EXACT_LIMIT}, else normal with continuity "
    "correction.</sub>\n"
)


def full_table(full: FullStats, digits: Digits = SIX, legend: bool = True) -> str:
    """Effect size, permutation p, bootstrap CI, Holm p, and the Wilcoxon signed-rank and sign
    tests' p per metric, the primary one in bold.

    The Action's comment always shows it: build the comparisons with
    `api.compare_saved(..., stats_level="full", primary=...)` and `significance_table` adds it.
    """
    rows = []
    for m in full.metrics:
        _wlt, d_z, perm, boot, holm, _mde, note = full_cells(full, m, digits)
        name = f"**{label(m.key)}**" if m.key == full.primary else label(m.key)
        rows.append([name, d_z, perm, boot, holm, *rank_test_p_cells(m, digits), note])
    head = f"Beyond the t-test ({full_heading(full, f'**{label(full.primary)}**')}):\n\n"
    table = _table(
        ["metric", "d_z", "perm p", "bootstrap 95% CI", "Holm p", "Wilcoxon p", "sign p", "note"], rows
    )
    return head + table + ("\n" + FULL_LEGEND_MD if legend else "")


def query_tables(c: BackendComparison, notes: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """Changed-query table, unchanged-query table (either may be '') and the unchanged count.

    `notes` maps a query id to Markdown shown after the id in its cell (the Action marks a
    query whose anchors went stale, so its drop does not read as a ranking loss).
    """
    header = ["query", *(f"Δ{m.label}" for m in c.pair.specs)]
    blank = [""] * (len(c.pair.specs) - 1)
    notes = notes or {}
    changed: list[list[str]] = []
    unchanged: list[list[str]] = []
    for q in c.pair.paired:
        deltas = [q.delta(m.key) or 0.0 for m in c.pair.specs]
        note = f" {notes[q.id]}" if q.id in notes else ""
        row = [code_span(q.id, in_table=True) + note, *(_delta_cell(d) for d in deltas)]
        (changed if any(signed6(d) != "+0.000000" for d in deltas) else unchanged).append(row)
    for qid in c.pair.only_base:
        changed.append([code_span(qid, in_table=True), "removed in head", *blank])
    for qid in c.pair.only_head:
        changed.append([code_span(qid, in_table=True), "new in head", *blank])
    return (
        _table(header, changed) if changed else "",
        _table(header, unchanged) if unchanged else "",
        len(unchanged),
    )


def backend_section(
    c: BackendComparison, heading_level: int = 4, notes: Mapping[str, str] | None = None, legend: bool = True
) -> str:
    """Per-query deltas (changed first, unchanged folded) and the significance block of one backend;
    `notes` as in `query_tables`."""
    title = "#" * heading_level + f" {escape_md(c.pair.backend)}\n\n"
    if c.pair.base_means is None or c.pair.head_means is None:
        side = "head" if c.pair.base_means is None else "base"
        return title + f"Scored only in {side}; nothing to pair.\n"
    changed, unchanged, n_unchanged = query_tables(c, notes)
    parts = [title]
    parts.append(changed if changed else "No query changed.\n")
    if unchanged:
        noun = "unchanged query" if n_unchanged == 1 else "unchanged queries"
        parts.append("\n" + details(f"{n_unchanged} {noun}", unchanged) + "\n")
    parts.append("\n" + significance_table(c, legend=legend))
    return "".join(parts)


def comparison_markdown(
    comparisons: Sequence[BackendComparison], title: str = "Relevance: base → head"
) -> str:
    """Means table then one section per backend; `title` is our own text, not escaped."""
    parts = [f"### {title}\n\n", means_table(comparisons)]
    for c in comparisons:
        parts.append("\n" + backend_section(c))
    return "".join(parts)


def cost_markdown(base: Mapping[str, Any], head: Mapping[str, Any]) -> str:
    """A table of every backend's query latency and embedder calls, base → head, when both saved
    reports were made with `--cost` ('' otherwise): what the change costs beside what it gains."""
    names = [name for name in head if name in base]
    if not names:
        return ""
    rows = []
    for name in names:
        a, b = base[name]["latency_ms"], head[name]["latency_ms"]
        cells = [f"{a[k]:.2f} → {b[k]:.2f}" for k in ("p50", "p95", "total")]
        embedded = [side[name].get("embedder") for side in (base, head)]
        calls = (
            " → ".join(str(e.get("calls", "")) if isinstance(e, dict) else "-" for e in embedded)
            if any(isinstance(e, dict) for e in embedded)
            else ""
        )
        rows.append([escape_md(name), *cells, calls])
    header = ["backend", "p50 ms", "p95 ms", "total ms", "embedder calls"]
    return (
        "\n" + _table(header, rows) + "\n<sub>Latency is wall time on the machine that ran each side.</sub>\n"
    )
