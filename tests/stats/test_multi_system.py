"""Several systems: pairwise tests with Holm, and the randomised Tukey HSD (Carterette 2012)."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from cce_relevance.stats.multi_system import compare_systems, randomised_tukey_hsd
from cce_relevance.stats.multiplicity import holm_adjust
from cce_relevance.stats.paired import paired_t
from cce_relevance.stats.resampling import sign_flip_test


def exact_hsd(values: list[list[float]]) -> list[list[float]]:
    """Every assignment of each query's scores to the systems, enumerated: the exact HSD p."""
    s, n = len(values), len(values[0])
    columns = [[values[i][q] for i in range(s)] for q in range(n)]
    ranges = []
    for perms in itertools.product(itertools.permutations(range(s)), repeat=n):
        means = [sum(columns[q][perms[q][i]] for q in range(n)) / n for i in range(s)]
        ranges.append(max(means) - min(means))
    means = [sum(v) / n for v in values]
    return [
        [sum(1 for r in ranges if r >= abs(means[i] - means[j]) - 1e-12) / len(ranges) for j in range(s)]
        for i in range(s)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_sampled_hsd_is_within_four_standard_errors_of_the_exact_value(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.choice([0.0, 0.2, 0.25, 1 / 3, 0.5, 1.0], size=(3, 4)).tolist()
    exact, ours = exact_hsd(values), randomised_tukey_hsd(values)
    assert ours is not None
    for i, j in itertools.combinations(range(3), 2):
        se = math.sqrt(exact[i][j] * (1 - exact[i][j]) / 10_000) + 1e-4
        assert abs(ours[i][j] - exact[i][j]) <= 4 * se + 1 / 10_001, (i, j, ours[i][j], exact[i][j])
        assert ours[i][j] == ours[j][i]


def test_two_systems_reduce_to_the_sign_flip_test() -> None:
    """With two systems, shuffling a query's two scores flips the sign of its delta, and the
    range is |mean delta|: the HSD p estimates the permutation p."""
    rng = np.random.default_rng(7)
    a = rng.choice([0.0, 0.5, 1.0], size=12).tolist()
    b = rng.choice([0.0, 0.5, 1.0], size=12).tolist()
    hsd = randomised_tukey_hsd([a, b])
    perm = sign_flip_test([y - x for x, y in zip(a, b, strict=True)])
    assert hsd is not None and perm is not None
    assert abs(hsd[0][1] - perm.p) <= 4 * math.sqrt(perm.p * (1 - perm.p) / 10_000) + 2e-4


def test_pairwise_tests_and_holm() -> None:
    values = [[0.2, 0.4, 0.6, 0.0, 1.0], [0.4, 0.6, 0.6, 0.2, 1.0], [1.0, 1.0, 0.8, 0.6, 1.0]]
    result = compare_systems("mrr", ["a", "b", "c"], values)
    assert [(p.a, p.b) for p in result.pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    raw = [p.perm_p for p in result.pairs]
    assert [p.holm_p for p in result.pairs] == holm_adjust(raw)  # type: ignore[arg-type]
    ac = result.pair("a", "c")
    deltas = [c - a for a, c in zip(values[0], values[2], strict=True)]
    assert ac.t_p == paired_t(deltas).p and ac.perm_p == sign_flip_test(deltas).p  # type: ignore[union-attr]
    assert (ac.wins, ac.losses, ac.ties) == (4, 0, 1)
    assert result.means == pytest.approx((0.44, 0.56, 0.88))


def test_system_order_does_not_change_the_hsd_beyond_sampling() -> None:
    values = [[0.2, 0.4, 0.6, 0.0, 1.0, 0.5], [0.4, 0.6, 0.6, 0.2, 1.0, 0.5], [1.0, 1.0, 0.8, 0.6, 1.0, 0.25]]
    forward = compare_systems("m", ["a", "b", "c"], values)
    backward = compare_systems("m", ["c", "b", "a"], values[::-1])
    for a, b in itertools.combinations("abc", 2):
        assert abs(forward.pair(a, b).hsd_p - backward.pair(a, b).hsd_p) < 0.03  # type: ignore[operator]
        assert forward.pair(a, b).perm_p == backward.pair(a, b).perm_p


def test_identical_systems_and_degenerate_inputs() -> None:
    same = compare_systems("m", ["a", "b", "c"], [[0.5, 1.0, 0.0]] * 3)
    assert all(p.hsd_p == 1.0 and p.perm_p == 1.0 for p in same.pairs)
    one = compare_systems("m", ["a", "b"], [[0.5], [1.0]])
    assert one.pairs[0].hsd_p is None and one.pairs[0].perm_p is None and one.pairs[0].holm_p is None
    with pytest.raises(ValueError):
        compare_systems("m", ["a", "a"], [[0.5, 1.0], [0.5, 1.0]])


def test_same_bytes_in_another_process() -> None:
    code = (
        "import json; from cce_relevance.stats.multi_system import randomised_tukey_hsd as h; "
        "print(json.dumps(h([[0.1,0.5,0.9,0.3],[0.2,0.5,1.0,0.0],[0.0,0.25,0.5,0.75]])))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = randomised_tukey_hsd([[0.1, 0.5, 0.9, 0.3], [0.2, 0.5, 1.0, 0.0], [0.0, 0.25, 0.5, 0.75]])
    assert json.loads(out) == here


def test_worked_example_in_the_docs() -> None:
    from pathlib import Path

    values = [[0.0, 0.5, 1.0], [0.5, 0.5, 1.0], [1.0, 1.0, 1.0]]
    exact = exact_hsd(values)
    assert (exact[0][2], exact[1][2]) == (1 / 3, 2 / 3)
    result = compare_systems("mrr", ["A", "B", "C"], values)
    text = " ".join((Path(__file__).resolve().parents[2] / "docs/statistics.md").read_text().split())
    assert (
        f"the 10,000 trials give {result.pair('A', 'C').hsd_p:.6f} and {result.pair('B', 'C').hsd_p:.6f}"
        in text
    )
    assert result.pair("A", "C").perm_p == 0.5 and result.pair("A", "C").holm_p == 1.0
