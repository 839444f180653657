"""Scoring every named backend of a run over one index, in worker processes when that is safe."""

from __future__ import annotations

from collections.abc import Sequence

from cce_relevance.evaluation.budget import TokenCosts
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import BackendReport, can_fork, evaluate_backends
from cce_relevance.evaluation.judgments import Judgments
from cce_relevance.evaluation.rank_metrics import RankMetricSpec
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.project_config import ProjectConfig
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.file_indexing.workers import MAX_AUTO_WORKERS, available_cpus
from cce_relevance.retrieval.index.build import BuildOptions
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.backends import builtin_backend
from cce_relevance.retrieval.search.hybrid import QueryEmbedder
from cce_relevance.retrieval.search.registry import Variant, open_backend


def evaluated_backends(
    names: Sequence[str],
    config: ProjectConfig,
    index: Index,
    embed: QueryEmbedder,
    cases: Sequence[Case],
    weights: LineWeights,
    judgments: Sequence[Judgments] | None,
    indexing: BuildOptions,
    specs: Sequence[RankMetricSpec] = (),
    costs: TokenCosts | None = None,
    first_tokens: bool = False,
) -> list[BackendReport]:
    """Every backend's report (`specs`, `costs` and `first_tokens` as for `evaluate_backends`).
    Built-in rankings over hash embeddings score their cases in worker
    processes when there are several CPUs (`indexing.workers` caps them, as it does indexing);
    anything holding a process, a connection or a remote embedder runs here, one backend after
    the other, each opened only for its own run."""
    variants = [spec for spec in map(config.spec, names) if isinstance(spec, Variant)]
    if embed is hash_embed and len(variants) == len(names) and can_fork():
        processes = (
            indexing.workers if indexing.workers is not None else min(available_cpus(), MAX_AUTO_WORKERS)
        )
        searches = [
            (name, builtin_backend(v.base, index, v.params, embed))
            for name, v in zip(names, variants, strict=True)
        ]
        return evaluate_backends(searches, cases, weights, judgments, processes, specs, costs, first_tokens)
    evaluated = []
    for name in names:
        with open_backend(name, config.spec(name), index, embed) as search_fn:
            evaluated.extend(
                evaluate_backends(
                    [(name, search_fn)], cases, weights, judgments, 1, specs, costs, first_tokens
                )
            )
    return evaluated
