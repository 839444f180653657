"""Per-query deltas of one metric as a bar chart: a Mermaid `xychart-beta` block or an SVG picture.

Both renderings are deterministic text (fixed layout, numbers in fixed notation, bars in fixture
order) and both treat query ids and backend names as untrusted:

* Mermaid: every label is a double-quoted string in which only letters, digits, space and
  `-_.,:/+=@()` are written as themselves; every other character (quotes, `#`, `;`, `%`, which
  starts comments and `%%{init}%%` directives, backticks, brackets, markup) is written as a
  Mermaid entity code `#<decimal>;`, which Mermaid decodes when it draws the text. Line breaks,
  control and bidirectional-override characters become U+FFFD first (as in `markdown_safe`).
* SVG: text is XML-escaped, and characters XML cannot hold become U+FFFD.

Long labels are cut to `LABEL_LIMIT` characters with a trailing "…" so the axis stays readable.

Mermaid's xychart draws every bar up from the bottom of the y axis, so the chart adds a line at
zero: a bar that ends above the line is a query that improved, one that ends below it got worse.
The SVG draws bars up or down from zero, green for better and red for worse.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cce_relevance.errors import CceError
from cce_relevance.evaluation.comparison import BackendComparison
from cce_relevance.evaluation.harness import BackendReport, CaseResult
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRICS, MetricSpec
from cce_relevance.evaluation.rank_metrics import RankMetricSpec, rank_metric_for_key
from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.reporting.markdown_safe import one_line, shorten
from cce_relevance.reporting.numbers import format6, signed6

LABEL_LIMIT = 24
TITLE_LIMIT = 96
_MERMAID_PLAIN = frozenset(" -_.,:/+=@()")
_AXIS_STEPS = (0.1, 0.2, 0.25, 0.5, 1.0)


@dataclass(frozen=True)
class DeltaChart:
    """What to draw: a title, the metric's label, and (query id, delta) bars in order."""

    title: str
    metric: str
    bars: tuple[tuple[str, float], ...]


def delta_chart(title: str, metric: str, bars: Sequence[tuple[str, float]]) -> DeltaChart:
    """A chart of at least one bar (an empty x axis is not a valid xychart)."""
    if not bars:
        raise CceError("no query was scored on both sides, so there are no deltas to chart")
    return DeltaChart(title, metric, tuple(bars))


def axis_limit(values: Sequence[float]) -> float:
    """The symmetric y range ±m: the smallest of 0.1, 0.2, 0.25, 0.5, 1 (then whole numbers)
    that holds every value, so the scale is the same whenever the deltas are similar."""
    largest = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    return next((s for s in _AXIS_STEPS if largest <= s), float(math.ceil(largest)))


# --- Mermaid ---------------------------------------------------------------------------------


def mermaid_string(text: str, limit: int = LABEL_LIMIT) -> str:
    """`text` as a quoted Mermaid string that reads the same and cannot change the diagram."""
    out = [
        ch if (ch.isascii() and ch.isalnum()) or ch in _MERMAID_PLAIN else f"#{ord(ch)};"
        for ch in shorten(text, limit)
    ]
    return '"' + ("".join(out) or " ") + '"'  # the grammar has no empty string: "" is a parse error


def mermaid_chart(chart: DeltaChart) -> str:
    """The diagram source (no code fence): bars of the deltas and a zero line."""
    m = axis_limit([d for _, d in chart.bars])
    values = ", ".join(format6(d) for _, d in chart.bars)
    zeros = ", ".join("0" for _ in chart.bars)
    return (
        "xychart-beta\n"
        f"    title {mermaid_string(chart.title, TITLE_LIMIT)}\n"
        f"    x-axis {mermaid_string('query')} [{', '.join(mermaid_string(q) for q, _ in chart.bars)}]\n"
        f"    y-axis {mermaid_string('delta ' + chart.metric)} {format6(-m)} --> {format6(m)}\n"
        f"    bar [{values}]\n"
        f"    line [{zeros}]\n"
    )


def mermaid_block(chart: DeltaChart) -> str:
    """The diagram as a fenced ```mermaid block, ready for a Markdown document or PR comment."""
    return "```mermaid\n" + mermaid_chart(chart) + "```\n"


# --- SVG -------------------------------------------------------------------------------------

_XML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_SLOT, _PLOT_HEIGHT, _LEFT, _TOP, _BOTTOM, _RIGHT, _MIN_WIDTH = 28, 200, 64, 40, 160, 16, 480
_BETTER, _WORSE, _SAME, _INK, _GRID = "#1a7f37", "#cf222e", "#8c959f", "#24292f", "#d0d7de"


def xml_text(text: str) -> str:
    """`text` escaped for XML content or a quoted attribute; characters XML forbids become U+FFFD."""
    out = []
    for ch in one_line(text):
        if 0xD800 <= ord(ch) <= 0xDFFF or ch in "\ufffe\uffff":
            ch = "\ufffd"
        out.append(_XML.get(ch, ch))
    return "".join(out)


def _n(x: float) -> str:
    return f"{x:.2f}"


def svg_chart(chart: DeltaChart) -> str:
    """A standalone SVG: one bar per query from the zero line, a ±m axis, vertical query labels."""
    m = axis_limit([d for _, d in chart.bars])
    width = max(_LEFT + _SLOT * len(chart.bars) + _RIGHT, _MIN_WIDTH)
    height = _TOP + _PLOT_HEIGHT + _BOTTOM
    zero = _TOP + _PLOT_HEIGHT / 2

    def y(value: float) -> float:
        return zero - max(-m, min(m, value)) / m * (_PLOT_HEIGHT / 2)

    title = xml_text(shorten(chart.title, TITLE_LIMIT))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">\n',
        f"<title>{title}</title>\n",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>\n',
        f'<text x="{_n(width / 2)}" y="20" text-anchor="middle" font-size="13" '
        f'fill="{_INK}">{title}</text>\n',
    ]
    for tick in (m, 0.0, -m):
        ty = y(tick)
        out.append(
            f'<line x1="{_LEFT}" y1="{_n(ty)}" x2="{width - _RIGHT}" y2="{_n(ty)}" '
            f'stroke="{_INK if tick == 0 else _GRID}" stroke-width="1"/>\n'
        )
        out.append(
            f'<text x="{_LEFT - 6}" y="{_n(ty + 4)}" text-anchor="end" fill="{_INK}">'
            f"{signed6(tick)[:5]}</text>\n"
        )
    out.append(
        f'<text x="14" y="{_n(zero)}" text-anchor="middle" fill="{_INK}" '
        f'transform="rotate(-90 14 {_n(zero)})">{xml_text("delta " + chart.metric)}</text>\n'
    )
    for i, (query, delta) in enumerate(chart.bars):
        x = _LEFT + _SLOT * i + 4
        top, bottom = sorted((y(delta), zero))
        shown = signed6(delta)
        colour = _SAME if shown in ("+0.000000", "-0.000000") else (_BETTER if delta > 0 else _WORSE)
        out.append(
            f'<rect x="{_n(x)}" y="{_n(top)}" width="{_SLOT - 8}" height="{_n(max(bottom - top, 1.0))}" '
            f'fill="{colour}"><title>{xml_text(query)}: {shown}</title></rect>\n'
        )
        lx, ly = x + (_SLOT - 8) / 2 + 4, _TOP + _PLOT_HEIGHT + 8
        out.append(
            f'<text x="{_n(lx)}" y="{_n(ly)}" text-anchor="end" fill="{_INK}" '
            f'transform="rotate(-90 {_n(lx)} {_n(ly)})">{xml_text(shorten(query, LABEL_LIMIT))}</text>\n'
        )
    out.append("</svg>\n")
    return "".join(out)


# --- what to chart --------------------------------------------------------------------------


def reports_chart(a: BackendReport, b: BackendReport, spec: MetricSpec) -> DeltaChart:
    """Deltas B − A of one metric between two backends of one run, in case order."""

    def value(result: CaseResult) -> float:
        if isinstance(spec, RankMetricSpec):
            assert result.ranking is not None, "a rank metric was charted from an unjudged run"
            return result.ranking[spec.key]
        return getattr(result.metrics, spec.attr)

    bars = [(ra.case.id, value(rb) - value(ra)) for ra, rb in zip(a.cases, b.cases, strict=True)]
    return delta_chart(f"{spec.label} per query, {a.backend} to {b.backend}", spec.label, bars)


def comparison_chart(comparison: BackendComparison, key: str = DEFAULT_PRIMARY) -> DeltaChart:
    """Deltas head − base of one metric (a `METRICS` key, or a rank metric key both reports carry) for
    one backend of a saved-report comparison.

    Raises `CceError` for an unknown key or when no query is paired.
    """
    spec = next((s for s in comparison.pair.specs if s.key == key), None)
    if spec is None:
        raise CceError(
            f"cannot chart {rust_debug_str(key)}: expected one of "
            f"{', '.join(m.key for m in comparison.pair.specs)}"
        )
    bars = [(q.id, q.delta(key) or 0.0) for q in comparison.pair.paired]
    return delta_chart(
        f"{spec.label} per query, base to head, backend {comparison.pair.backend}", spec.label, bars
    )


# --- files -----------------------------------------------------------------------------------

_RENDERERS = {".md": mermaid_block, ".mmd": mermaid_chart, ".svg": svg_chart}


def chart_renderer(path: str) -> Callable[[DeltaChart], str]:
    """The renderer a chart file's suffix asks for: `.md` a fenced Mermaid block, `.mmd` the bare
    diagram, `.svg` the picture. Checked before any scoring, so a typo costs nothing."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _RENDERERS:
        raise CceError(f"{path}: unknown chart format (expected a file ending in .md, .mmd or .svg)")
    return _RENDERERS[suffix]


def run_chart(result: RunResult, metric: str = DEFAULT_PRIMARY) -> DeltaChart:
    """Per-query deltas B − A of a `compare` run; `metric` is a report key (`mrr`, or a rank metric
    key such as `ndcg_at_k` when the run computed it)."""
    if result.comparison is None:
        raise CceError("a chart needs a comparison of two backends")
    specs = {s.key: s for s in (*METRICS, *result.rank_metrics)}
    if metric not in specs:
        known = rank_metric_for_key(metric)
        wanted = known.name if known is not None else None
        raise CceError(
            f"cannot chart {rust_debug_str(metric)}: "
            + (f"it needs --metrics {wanted}" if wanted else f"expected one of {', '.join(specs)}")
        )
    return reports_chart(result.reports[0], result.reports[1], specs[metric])


def charted(comparisons: Sequence[BackendComparison], backend: str | None = None) -> BackendComparison | None:
    """The comparison a chart shows: `backend`'s, or by default the last backend scored in both
    reports (the last one a run scored: `hybrid` with the default backends, the one a user ships),
    the backend the Action's comment features when none regressed. None when there is none."""
    paired = [c for c in comparisons if c.pair.base_means is not None and c.pair.head_means is not None]
    if backend is None:
        return paired[-1] if paired else None
    return next((c for c in paired if c.pair.backend == backend), None)


def compare_chart(
    comparisons: Sequence[BackendComparison], metric: str = DEFAULT_PRIMARY, backend: str | None = None
) -> DeltaChart:
    """Per-query deltas head − base of `metric` for `backend` (default: `charted`'s choice)."""
    paired = [c for c in comparisons if c.pair.base_means is not None and c.pair.head_means is not None]
    chosen = charted(comparisons, backend)
    if chosen is None:
        wanted = "no backend is" if backend is None else f"backend {rust_debug_str(backend)} is not"
        names = ", ".join(c.pair.backend for c in paired) or "none"
        raise CceError(f"{wanted} scored in both reports, nothing to chart (backends in both: {names})")
    return comparison_chart(chosen, metric)
