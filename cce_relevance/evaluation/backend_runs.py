"""Scoring every named backend of a run over one index, in worker processes when that is safe."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence

from cce_relevance.evaluation.budget import TokenCosts
from cce_relevance.evaluation.cost import EmbedderCost
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import BackendReport, can_fork, evaluate_backends
from cce_relevance.evaluation.judgments import Judgments
from cce_relevance.evaluation.rank_metrics import RankMetricSpec
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.project_config import ProjectConfig
from cce_relevance.retrieval.embedders.service import RunEmbedders
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
    corpus: str = "",
    embedders: RunEmbedders | None = None,
) -> list[BackendReport]:
    """Every backend's report (`specs`, `costs` and `first_tokens` as for `evaluate_backends`).
    Built-in rankings over hash embeddings score their cases in worker
    processes when there are several CPUs (`indexing.workers` caps them, as it does indexing);
    anything holding a process, a connection, a thread or an embedder of its own runs here, one
    backend after the other, each opened only for its own run. A variant's own embedder keeps its
    vectors in the index cache's directory (`indexing.cache`), opened from `embedders` (the
    run's: default, a set of its own); `corpus` is what a Python retriever's factory is given."""
    variants = [spec for spec in map(config.spec, names) if isinstance(spec, Variant)]
    plain = all(v.own_embedder(index) is None for v in variants)
    if embed is hash_embed and plain and len(variants) == len(names) and can_fork():
        processes = (
            indexing.workers if indexing.workers is not None else min(available_cpus(), MAX_AUTO_WORKERS)
        )
        searches = [
            (name, builtin_backend(v.base, index, v.params, embed))
            for name, v in zip(names, variants, strict=True)
        ]
        return evaluate_backends(searches, cases, weights, judgments, processes, specs, costs, first_tokens)

    def evaluated(name: str, embedders: RunEmbedders) -> BackendReport:
        """One backend opened, scored and closed here; with its embedder's share of the work."""
        spec = config.spec(name)
        chosen = spec.own_embedder(index) if isinstance(spec, Variant) else None
        service = embedders.service(chosen) if chosen is not None else None
        before = service.usage.snapshot() if service is not None else None
        with open_backend(name, spec, index, embed, embedders, corpus) as search_fn:
            if service is not None:
                service.embed_queries([c.query for c in cases])
            [report] = evaluate_backends(
                [(name, search_fn)], cases, weights, judgments, 1, specs, costs, first_tokens
            )
        if service is None or before is None:
            return report
        used = service.usage.since(before)
        cost = EmbedderCost(
            service.spec.name,
            service.embedder.identity,
            used.calls,
            used.texts,
            used.tokens,
            used.cache_hits,
            used.seconds,
        )
        return dataclasses.replace(report, embedder=cost)

    with contextlib.ExitStack() as stack:
        run_embedders = embedders or stack.enter_context(RunEmbedders(indexing.cache))
        return [evaluated(name, run_embedders) for name in names]
