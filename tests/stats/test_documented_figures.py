"""Figures quoted in README.md and docs/statistics.md, recomputed: a doc that drifts from the code
fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cce_relevance.reporting.numbers import format6
from cce_relevance.stats.paired import paired_t
from cce_relevance.stats.power import min_detectable_effect
from cce_relevance.stats.resampling import bootstrap_ci95, sign_flip_test

ROOT = Path(__file__).resolve().parents[2]


def _text(name: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("n", [6, 7, 12])
def test_mde_multipliers_quoted_in_the_docs(n: int) -> None:
    multiplier = f"{min_detectable_effect(1.0, n):.2f}"
    readme, statistics = _text("README.md"), _text("docs/statistics.md")
    if n == 7:
        assert (
            f"at n = 7 a paired t-test with 80% power only detects a mean delta of about {multiplier} times"
            in readme
        )
    assert re.search(rf"{multiplier} at n = {n}\b|at n = {n}\b[^.]*?{multiplier}", readme + statistics)


def test_bootstrap_example_of_one_changed_query_in_seven() -> None:
    deltas = [1 / 6] + [0.0] * 6
    low, high = bootstrap_ci95(deltas)  # type: ignore[misc]
    t_low, t_high = paired_t(deltas).ci95  # type: ignore[misc]
    quoted = (f"[{low:.0f}, {high:.3f}] where the t interval reads [{t_low:.3f}, {t_high:.3f}]").replace(
        "-", "−"
    )
    assert quoted in _text("docs/statistics.md")


def test_sampled_permutation_signs_index_only_the_changed_queries() -> None:
    """docs/statistics.md: bit j negates the j-th non-zero delta, so zeros anywhere change nothing."""
    changed = [0.1 * ((i % 5) - 2) or 0.3 for i in range(25)]
    with_zeros = [x for d in changed for x in (0.0, d)]
    assert format6(sign_flip_test(changed).p) == format6(sign_flip_test(with_zeros).p)  # type: ignore[union-attr]
    assert sign_flip_test(changed).p == sign_flip_test(with_zeros).p  # type: ignore[union-attr]
    assert "negates the j-th *non-zero* delta" in _text("docs/statistics.md")


def test_power_document_levels_are_numbers_as_documented() -> None:
    from cce_relevance.reporting.power_report import power_document
    from cce_relevance.stats.power import PowerAnalysis

    doc = power_document(PowerAnalysis("r.json", 0.05, 0.05, 0.8, ()))
    assert (doc["alpha"], doc["power"], doc["delta"]) == (0.05, 0.8, "0.050000")
    assert "`alpha` and `power` are the levels as given, JSON numbers" in _text("docs/statistics.md")
