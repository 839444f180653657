"""Renderings of the full statistics (`--stats full`): the human text blocks and the JSON block.

Both appear only when asked for, after (text) or beside (JSON, under a new `full` key) the
reference's t-test, so the default outputs keep their bytes. Numbers use the report's
six-decimal formats; anything undefined prints `n/a` (text) or `null` (JSON).
"""

from __future__ import annotations

from typing import Any

from cce_relevance.evaluation.metrics import METRICS
from cce_relevance.evaluation.rank_metrics import rank_metric_for_key
from cce_relevance.reporting.numbers import SIX, Digits, format6, signed6
from cce_relevance.stats.full_stats import HOLM_BASIS, FullStats, MetricFullStats
from cce_relevance.stats.rank_tests import EXACT_LIMIT as RANK_EXACT_LIMIT
from cce_relevance.stats.rank_tests import RankTest
from cce_relevance.stats.resampling import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    EXACT_LIMIT,
    PERMUTATION_DRAWS,
    PERMUTATION_SEED,
)

_LABELS = {m.key: m.label for m in METRICS}

MDE_LEGEND = (
    "\n  MDE@80%: the smallest mean delta this many queries detect at alpha 0.05 with 80% power,\n"
    "  (t_{0.025,n-1} + t_{0.20,n-1}) * sd / sqrt(n) from the observed spread of the deltas.\n"
)

FULL_LEGEND = (
    "\n  reading the full statistics (docs/statistics.md has the details):\n"
    "  W/L/T    queries whose delta is positive / negative / zero\n"
    "  d_z      mean delta / sd of the deltas (Cohen's effect size for paired data)\n"
    "  perm-p   two-sided sign-flip permutation p: exact over all 2^m sign patterns of the m changed\n"
    f"           queries when m <= {EXACT_LIMIT}, else {PERMUTATION_DRAWS} draws "
    f"(PCG64 seed {PERMUTATION_SEED}), "
    "(b+1)/(B+1)\n"
    f"  boot CI  percentile bootstrap 95% CI of the mean delta ({BOOTSTRAP_RESAMPLES} resamples, "
    f"PCG64 seed {BOOTSTRAP_SEED})\n"
    "  Holm-p   perm-p adjusted by Holm's step-down method across the metrics tested\n"
    "  W        Wilcoxon signed-rank statistic min(W+, W-) over the m changed queries; sign: improved/m\n"
    f"  p        two-sided; exact when m <= {RANK_EXACT_LIMIT}, "
    "else normal with continuity (and tie) correction\n"
)


def label(key: str) -> str:
    """The human label of a metric key (`mrr` → `MRR`, `ndcg_at_5` → `nDCG@5`)."""
    if key in _LABELS:
        return _LABELS[key]
    spec = rank_metric_for_key(key)
    return spec.label if spec is not None else key


def optional6(value: float | None, signed: bool = False, digits: Digits = SIX) -> str:
    """Six decimals (or `digits`), or `n/a` for an undefined statistic."""
    if value is None:
        return "n/a"
    return digits.signed(value) if signed else digits.fixed(value)


def interval6(ci: tuple[float, float] | None, digits: Digits = SIX) -> str:
    """`[low, high]` with signs, or `n/a`."""
    return f"[{digits.signed(ci[0])}, {digits.signed(ci[1])}]" if ci is not None else "n/a"


def notes(full: FullStats, m: MetricFullStats) -> list[str]:
    """Short remarks on a row: primary, no change, sampled permutation p, or too few queries."""
    out = []
    if m.key == full.primary:
        out.append("primary")
    if m.test.n < 2:
        out.append("n < 2")
    elif m.no_change:
        out.append("no change")
    elif m.permutation is not None and m.permutation.method == "sampled":
        out.append("sampled perm-p")
    return out


def full_cells(full: FullStats, m: MetricFullStats, digits: Digits = SIX) -> list[str]:
    """W/L/T, d_z, perm-p, bootstrap CI, Holm-p, MDE@80% and notes of one metric, as text."""
    return [
        f"{m.wins}/{m.losses}/{m.ties}",
        optional6(m.d_z, signed=True, digits=digits),
        optional6(m.permutation.p if m.permutation is not None else None, digits=digits),
        interval6(m.bootstrap_ci95, digits),
        optional6(m.holm_p, digits=digits),
        optional6(m.mde80, digits=digits),
        ", ".join(notes(full, m)),
    ]


def rank_test_p_cells(m: MetricFullStats, digits: Digits = SIX) -> list[str]:
    """The Wilcoxon signed-rank p and the sign test's p of one metric, or `n/a` (n < 2)."""
    return [
        optional6(m.wilcoxon.p if m.wilcoxon is not None else None, digits=digits),
        optional6(m.sign.p if m.sign is not None else None, digits=digits),
    ]


def full_heading(full: FullStats, primary: str | None = None) -> str:
    """`primary metric: MRR; Holm over the permutation p of 4 metrics` (`primary` overrides the label)."""
    tested = sum(1 for m in full.metrics if m.holm_p is not None)
    name = label(full.primary) if primary is None else primary
    return f"primary metric: {name}; Holm over the {HOLM_BASIS} p of {tested} metrics"


def _text_row(name: str, cells: list[str], note: str = "") -> str:
    widths = (12, 12, 12, 26, 12, 12)
    row = "  " + name.ljust(10) + "".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))
    return row + (f"  {note}" if note else "") + "\n"


def full_text_block(full: FullStats) -> str:
    """The text block printed after the t-test block: one row per metric, notes at the end."""
    out = [
        f"\n  full statistics ({full_heading(full)})\n",
        _text_row("metric", ["W/L/T", "d_z", "perm-p", "boot 95% CI", "Holm-p", "MDE@80%"]),
    ]
    for m in full.metrics:
        *cells, note = full_cells(full, m)
        out.append(_text_row(label(m.key), cells, note))
    return "".join(out) + rank_tests_text_block(full)


def _rank_test_cells(test: RankTest | None, statistic: str) -> list[str]:
    if test is None:
        return ["n/a", "n/a", ""]
    return [statistic, format6(test.p), test.method]


def rank_tests_text_block(full: FullStats) -> str:
    """The Wilcoxon signed-rank and sign tests of each metric, printed after the full block."""
    widths = (10, 12, 8, 10, 12, 8)
    out = [
        "\n  rank-based tests (zero deltas dropped; m = changed queries)\n",
        "  "
        + "metric".ljust(10)
        + "".join(c.rjust(w) for c, w in zip(["W", "Wilcoxon-p", "", "sign", "sign-p"], widths, strict=False))
        + "\n",
    ]
    for m in full.metrics:
        w, s = m.wilcoxon, m.sign
        cells = _rank_test_cells(w, f"{w.statistic:g}" if w else "") + _rank_test_cells(
            s, f"{s.statistic:g}/{s.changed}" if s else ""
        )
        out.append(
            (
                "  "
                + label(m.key).ljust(10)
                + "".join(c.rjust(wd) for c, wd in zip(cells, widths, strict=True))
            ).rstrip()
            + "\n"
        )
    return "".join(out)


def _rank_test_document(test: RankTest | None) -> dict[str, Any] | None:
    if test is None:
        return None
    statistic = int(test.statistic) if test.statistic.is_integer() else test.statistic  # W may end in .5
    return {"changed": test.changed, "method": test.method, "p": format6(test.p), "statistic": statistic}


def _metric_document(m: MetricFullStats) -> dict[str, Any]:
    low, high = m.bootstrap_ci95 if m.bootstrap_ci95 is not None else (None, None)
    perm = m.permutation
    return {
        "bootstrap_ci95_high": signed6(high) if high is not None else None,
        "bootstrap_ci95_low": signed6(low) if low is not None else None,
        "changed": perm.changed if perm is not None else None,
        "d_z": signed6(m.d_z) if m.d_z is not None else None,
        "holm_p": format6(m.holm_p) if m.holm_p is not None else None,
        "losses": m.losses,
        "mde80": format6(m.mde80) if m.mde80 is not None else None,
        "no_change": m.no_change,
        "permutation_method": perm.method if perm is not None else None,
        "permutation_p": format6(perm.p) if perm is not None else None,
        "sign": _rank_test_document(m.sign),
        "ties": m.ties,
        "wilcoxon": _rank_test_document(m.wilcoxon),
        "wins": m.wins,
    }


def full_document(full: FullStats) -> dict[str, Any]:
    """The `full` JSON block: method settings once, then one object per metric."""
    return {
        "bootstrap": {"method": "percentile", "resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED},
        "holm_adjusts": f"{HOLM_BASIS}_p",
        "metrics": {m.key: _metric_document(m) for m in full.metrics},
        "permutation": {"draws": PERMUTATION_DRAWS, "exact_limit": EXACT_LIMIT, "seed": PERMUTATION_SEED},
        "primary": full.primary,
    }
