"""The names a run is asked for — backends, rank metrics — checked, in first-occurrence order.

The front doors pass sequences of names (the CLI splits its comma lists); a name is checked here,
at the point of the run where the reference checks it, so the error that wins when several
inputs are wrong is the reference's (E19 an unknown backend, E20 none at all).
"""

from __future__ import annotations

from collections.abc import Sequence

from cce_relevance.errors import CceError
from cce_relevance.evaluation.rank_metrics import FIRST_TOKENS, RANK_METRICS, RankMetricSpec, rank_metric
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.project_config import NO_CONFIG, ProjectConfig
from cce_relevance.reference import BUILTIN_BACKENDS, listed

DEFAULT_BACKENDS = BUILTIN_BACKENDS  # what a run scores unless told otherwise


def check_backend(name: str, config: ProjectConfig = NO_CONFIG) -> None:
    """E19 unless `name` is a built-in backend or one of `config`'s (or why `config` refuses it)."""
    if name in config.refused:
        raise CceError(f"backend {rust_debug_str(name)} {config.refused[name]}")
    if name not in config.names:
        expected = listed(BUILTIN_BACKENDS, "or")
        if config.backends:
            expected = (
                f"{listed(BUILTIN_BACKENDS)}, or a backend of {config.path}: {', '.join(config.backends)}"
            )
        raise CceError(f"unknown backend {rust_debug_str(name)} (expected {expected})")


def backend_names(names: Sequence[str], config: ProjectConfig = NO_CONFIG) -> list[str]:
    """Distinct backend names in first-occurrence order (E19 for an unknown one, E20 for none).

    Names are the built-ins and the backends of `config`; E19 lists the configured ones only when
    there are some, so without a config file its text is the reference's.
    """
    _refuse_one_string(names, "backends")
    chosen: list[str] = []
    for name in names:
        check_backend(name, config)
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise CceError(f"--backend requires at least one of {listed(BUILTIN_BACKENDS)}")
    return chosen


def selected_backends(names: Sequence[str] | None, config: ProjectConfig = NO_CONFIG) -> list[str]:
    """`backend_names` of `names`, or the built-in backends when none are named."""
    return list(DEFAULT_BACKENDS) if names is None else backend_names(names, config)


def backend_pair(names: Sequence[str], config: ProjectConfig = NO_CONFIG) -> tuple[str, str]:
    """The two distinct backends a comparison names (A, then B)."""
    chosen = backend_names(names, config)
    if len(chosen) != 2:
        raise CceError("--compare requires exactly two distinct backends, e.g. bm25,hybrid")
    return chosen[0], chosen[1]


def compared_backends(names: Sequence[str], config: ProjectConfig = NO_CONFIG) -> list[str]:
    """The backends a comparison names: two (A, then B: a paired comparison) or more (systems)."""
    chosen = backend_names(names, config)
    if len(chosen) < 2:  # one distinct backend (none is E20): E21 keeps the reference's bytes, §errors
        raise CceError("--compare requires exactly two distinct backends, e.g. bm25,hybrid")
    return chosen


def rank_metric_specs(names: Sequence[str]) -> tuple[RankMetricSpec, ...]:
    """Rank metric names (ndcg, ap, hit, rprec, judged; cut-offs ndcg@5, p@1, recall@20 …; budgets
    recall@budget=2000 …) → their specs in first-occurrence order. `ttfr` (tokens to the first
    relevant hit, `first_tokens_asked`) is no rank metric and has no spec."""
    _refuse_one_string(names, "metrics")
    chosen: list[RankMetricSpec] = []
    for name in names:
        if name == FIRST_TOKENS:
            continue
        try:
            spec = rank_metric(name)
        except ValueError as exc:
            raise CceError(str(exc)) from None
        if spec not in chosen:
            chosen.append(spec)
    if not chosen and FIRST_TOKENS not in names:
        raise CceError(
            f"--metrics requires at least one of {', '.join(s.name for s in RANK_METRICS)}, judged, "
            f"{FIRST_TOKENS}, a cut-off such as ndcg@10 or a budget such as recall@budget=2000"
        )
    return tuple(chosen)


def first_tokens_asked(names: Sequence[str]) -> bool:
    """Whether `--metrics` asks for `ttfr`, the tokens to each case's first relevant hit."""
    return FIRST_TOKENS in names


def _refuse_one_string(names: Sequence[str], what: str) -> None:
    """A string is a sequence of characters: refuse one where names are expected (a comma list is
    the CLI's to split, `cli.py`)."""
    if isinstance(names, str):
        raise TypeError(f"{what} takes a sequence of names, not one string: {names!r}")
