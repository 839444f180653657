"""A fixture set and its corpus made ready: the steps every use case that scores or checks a set
shares, up to the scoring (`prepare_run`) or the anchor check (`prepare_check`).

`api.run`, `api.score_saved_rankings` and `api.score_set` differ only in what ranks the queries
(backends, saved rankings) and in what they are handed ready (the Action's index and set); the
rest of §order, and what a result is made of, is here once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.budget import TokenCosts
from cce_relevance.evaluation.comparison import compared
from cce_relevance.evaluation.fixtures import Case, FixtureSet, load_fixtures
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.judgments import Judgments, judge
from cce_relevance.evaluation.rank_metrics import RankMetricSpec
from cce_relevance.evaluation.run_corpus import (
    Warn,
    bound_fixtures,
    corpus_symbols,
    fixtures_exclusion,
    report_excluded,
    resolve_index,
)
from cce_relevance.evaluation.run_options import RunOptions
from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.evaluation.selection import first_tokens_asked, rank_metric_specs
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.evaluation.validation import Validation, check_indexed
from cce_relevance.retrieval.chunking.languages import check_languages
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols
from cce_relevance.retrieval.corpus.exclusion import NO_EXCLUSION
from cce_relevance.retrieval.index.model import Index


@dataclass(frozen=True)
class PreparedRun:
    """A run up to scoring: the rank metrics asked for, the corpus and its index, the set as scored
    (symbol anchors bound, the shard's queries only), every case's judgments when rank metrics or
    TREC files want them, the line weights, and the results' token costs when a budget metric or
    the tokens to the first relevant hit (`ttfr`) want them."""

    rank_metrics: tuple[RankMetricSpec, ...]
    first_tokens: bool
    corpus: str
    index: Index
    fixtures: FixtureSet
    judgments: tuple[Judgments, ...] | None
    weights: LineWeights
    costs: TokenCosts | None
    index_seconds: float  # indexing or loading the corpus (wall time; `run --cost`)

    def result(self, reports: Sequence[BackendReport], options: RunOptions) -> RunResult:
        """The run's result from its backends' `reports`, compared when `options.compare` asks."""
        reports = tuple(reports)
        comparison, systems = (
            compared(reports, options.stats_level, options.primary, self.rank_metrics)
            if options.compare is not None
            else (None, ())
        )
        return RunResult(
            self.corpus,
            self.index.embedder,
            self.fixtures,
            reports,
            comparison,
            self.rank_metrics,
            self.judgments,
            systems,
            self.index_seconds,
        )


def prepare_run(
    fixtures_path: str,
    options: RunOptions,
    dir: str | None,
    store: str | None,
    warn: Warn,
    *,
    own: Sequence[str] = (),
    index: Index | None = None,
    fixtures: FixtureSet | None = None,
) -> PreparedRun:
    """§order up to the backend selection: languages, rank metrics, fixtures, corpus (`store` >
    `dir` > the header's), its index (`index` when made already, with the same exclusion), symbol
    anchors, the shard. `fixtures`, when given, is the set read already (with its grades when the
    run is judged); `own` are more of the command's own files (saved rankings)."""
    languages = check_languages(options.chunk_languages)
    rank_metrics = rank_metric_specs(options.metrics) if options.metrics is not None else ()
    first_tokens = options.metrics is not None and first_tokens_asked(options.metrics)
    judged = bool(rank_metrics) or options.trec or first_tokens
    if fixtures is None:
        fixtures = load_fixtures(fixtures_path, grades=judged, labels=options.labels)
    exclusion = (
        NO_EXCLUSION
        if store is not None
        else fixtures_exclusion(fixtures, fixtures_path, dir, options.config, [*own, *options.own_files])
    )
    started = time.perf_counter()
    corpus, index = resolve_index(
        fixtures, fixtures_path, dir, store, languages, options.indexing, exclusion, index
    )
    index_seconds = time.perf_counter() - started
    report_excluded(index, exclusion, warn)
    fixtures = bound_fixtures(fixtures, corpus, store, languages)
    if options.shard is not None:
        fixtures = options.shard.cases(fixtures)
    judgments = _judgments(fixtures.cases, index) if judged else None
    weights = LineWeights.of_index(index)
    budgeted = first_tokens or any(s.budget is not None for s in rank_metrics)
    costs = TokenCosts(index.chunks, weights) if budgeted else None
    return PreparedRun(
        rank_metrics, first_tokens, corpus, index, fixtures, judgments, weights, costs, index_seconds
    )


def _judgments(cases: Sequence[Case], index: Index) -> tuple[Judgments, ...]:
    """Every case's anchors resolved against `index`'s chunks, looked up through one anchor index."""
    anchors = AnchorIndex.of_index(index)
    return tuple(judge(c, index.chunks, anchors) for c in cases)


@dataclass(frozen=True)
class PreparedCheck:
    """A set's anchor check, with what it was made of: the set as read, its corpus's index and
    the symbols of its chunks (for the fixes and reviews made on top of it)."""

    validation: Validation
    fixtures: FixtureSet
    index: Index
    symbols: CorpusSymbols


def prepare_check(fixtures_path: str, options: RunOptions, dir: str | None, grades: bool) -> PreparedCheck:
    """The anchor check of a set against its corpus (`dir`, else the header's), which leaves out
    what a run with the same options would; grades are read and checked when `grades`."""
    languages = check_languages(options.chunk_languages)
    fixtures = load_fixtures(fixtures_path, grades=grades)
    exclusion = fixtures_exclusion(fixtures, fixtures_path, dir, options.config, options.own_files)
    corpus, index = resolve_index(fixtures, fixtures_path, dir, None, languages, options.indexing, exclusion)
    symbols = corpus_symbols(corpus, languages)
    return PreparedCheck(
        check_indexed(fixtures_path, fixtures.cases, corpus, index, symbols), fixtures, index, symbols
    )
