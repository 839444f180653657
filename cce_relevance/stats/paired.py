"""The paired t-test over per-query metric deltas (§paired-t–§undefined).

Compare mode asks of each metric: is B's per-query improvement over A more than noise?
The answer is the classic one-sample t-test on the deltas d_i = B_i − A_i, with a two-sided
p-value and a 95% confidence interval on the mean delta. Every sum runs left to right with
plain float additions (not `sum()`, which is compensated in Python ≥ 3.12, nor numpy's
pairwise sum) because the reference's doubles are what the report must reproduce.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.numeric import seq_sum
from cce_relevance.stats.tdist import t_crit, t_tail2

_CONSTANCY_ULPS = 16.0
_CI_ALPHA = 0.05


def _ieee_divide(numerator: float, denominator: float) -> float:
    """numerator / denominator with IEEE-754 results (±inf, NaN) where Python would raise.

    Deltas as small as 1e-300 are distinct enough to pass the constancy guard, yet their
    squared deviations underflow to a zero variance; the reference's f64 division then
    yields t = ±inf (or NaN for a zero mean), and so must we.
    """
    if denominator == 0.0:
        if numerator == 0.0 or math.isnan(numerator):
            return math.nan
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
    return numerator / denominator


@dataclass(frozen=True)
class PairedTest:
    """One metric's paired-test result; `None` means "not defined for this input".

    `n` and `mean_delta` are always set. With n < 2 nothing else is. When the deltas are
    constant `t` is `None` (its limit is ±∞) while `p` and `ci95` take their natural
    limiting values; see `paired_t`.
    """

    n: int
    mean_delta: float
    t: float | None
    p: float | None
    ci95: tuple[float, float] | None


def sample_sd(deltas: Sequence[float], mean: float | None = None) -> float:
    """Sample standard deviation (n − 1 denominator), summed left to right; 0 for n < 2."""
    n = len(deltas)
    if n < 2:
        return 0.0
    if mean is None:
        mean = seq_sum(deltas) / n
    return math.sqrt(seq_sum((d - mean) * (d - mean) for d in deltas) / (n - 1))


def no_spread(deltas: Sequence[float]) -> bool:
    """Whether the deltas are one value for every statistic built on their spread.

    True for n < 2 (no spread exists) and when max − min ≤ 16·ε·max(|min|, |max|): deltas equal
    in value but computed from different bases (0.6 − 0.4 versus 0.3 − 0.1) differ in their last
    bits, and their ~1e-17 "standard deviation" would make t ~1e16, d_z absurd, the MDE ~1e-16
    and a power plan promise 2 queries. The t-test, d_z, the MDE and `power` all ask this one
    question, so they agree on which inputs have no noise estimate.
    """
    if len(deltas) < 2:
        return True
    lo = min(deltas)
    hi = max(deltas)
    return hi - lo <= _CONSTANCY_ULPS * sys.float_info.epsilon * max(abs(lo), abs(hi))


def paired_t(deltas: Sequence[float]) -> PairedTest:
    """Paired t-test of the deltas against zero: t, two-sided p at n − 1 df, and 95% CI.

    Degenerate inputs follow the reference (§undefined):

    * n < 2 — no variance exists; only n and the mean (0 for n = 0) are reported.
    * Constant deltas (`no_spread`) are taken as one value. Then t is undefined, mean_delta and
      both CI bounds are the *first* delta, and p is 1 when the sequential mean is exactly 0.0
      (no effect) and 0 otherwise.
    """
    n = len(deltas)
    mean = seq_sum(deltas) / n if n else 0.0
    if n < 2:
        return PairedTest(n=n, mean_delta=mean, t=None, p=None, ci95=None)

    first = deltas[0]
    if no_spread(deltas):
        p = 1.0 if mean == 0.0 else 0.0
        return PairedTest(n=n, mean_delta=first, t=None, p=p, ci95=(first, first))

    sd = sample_sd(deltas, mean)
    df = float(n - 1)
    se = sd / math.sqrt(n)
    t = _ieee_divide(mean, se)
    half = t_crit(_CI_ALPHA, df) * se
    return PairedTest(n=n, mean_delta=mean, t=t, p=t_tail2(t, df), ci95=(mean - half, mean + half))


def effect_size_dz(deltas: Sequence[float], test: PairedTest) -> float | None:
    """Cohen's d_z of the deltas `test` was computed from: mean delta / sample sd of the deltas.

    The standardised effect of a paired design (Cohen, *Statistical Power Analysis for the
    Behavioral Sciences*, 2nd ed., 1988, sec. 2.3.5; Lakens, Front. Psychol. 4:863, 2013); it
    equals t/√n, so it says how large the effect is where t says how sure we are of it.
    Cohen's rough guide calls 0.2 small, 0.5 medium and 0.8 large. None wherever `paired_t`
    has no t (n < 2, or constant deltas whose spread is zero or rounding noise) and when the
    spread underflows to zero.
    """
    if test.t is None:
        return None
    sd = sample_sd(deltas, test.mean_delta)
    return test.mean_delta / sd if sd > 0.0 else None


def win_loss_tie(deltas: Sequence[float]) -> tuple[int, int, int]:
    """Counts of queries the head improved, worsened, and left unchanged."""
    wins = sum(1 for d in deltas if d > 0)
    losses = sum(1 for d in deltas if d < 0)
    return wins, losses, len(deltas) - wins - losses
