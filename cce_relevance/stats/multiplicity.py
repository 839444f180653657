"""Multiple-comparison adjustment: one comparison reports four metrics, so four chances to be lucky.

At α = 0.05 per metric, the chance that at least one of four unrelated null metrics reads
"significant" is up to 1 − 0.95⁴ ≈ 19%. Holm's step-down procedure restores the family-wise
error rate to α, is never less powerful than Bonferroni, and needs no assumption about how the
metrics depend on each other (P@k, recall, MRR and F1 are strongly correlated).
"""

from __future__ import annotations

from collections.abc import Sequence


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in input order (Holm, *A simple sequentially rejective
    multiple test procedure*, Scand. J. Statist. 6(2), 65–70, 1979; adjusted-p form as in
    Wright, *Adjusted p-values for simultaneous inference*, Biometrics 48(4), 1992).

    With the m raw p-values sorted ascending, p_(1) ≤ … ≤ p_(m), the i-th adjusted value is
    min(1, max_{j ≤ i} (m − j + 1)·p_(j)). Rejecting every hypothesis whose adjusted p is ≤ α
    keeps the chance of any false rejection among the m at most α. Tied p-values get the same
    adjusted value, so the order among ties does not matter. Raises ValueError for a p-value
    outside [0, 1] (NaN included).
    """
    for p in p_values:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
