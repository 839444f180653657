"""The facade both front doors call: one function per use case, `__all__` the whole contract.

Each use case takes the fixture set or corpus it works on and one `RunOptions` (what to score
and how: backends, statistics, metrics, the project configuration, languages, indexing, the
command's own files), never comma lists or flag names: the CLI splits its lists and checks its
flags, and the Action reads its inputs. The wiring lives here; the work in `evaluation/` and
`retrieval/`, the bytes in `reporting/`. A run follows the reference's processing order
(§order), which decides which error wins when several inputs are wrong.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cce_relevance import untrusted_json
from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchor_fixes import AnchorFix, fixed_lines, suggest_fixes
from cce_relevance.evaluation.backend_runs import evaluated_backends
from cce_relevance.evaluation.comparison import BackendComparison, compare_documents
from cce_relevance.evaluation.comparison import compare_many as _compare_many
from cce_relevance.evaluation.fixtures import (
    FixtureSet,
    load_fixtures,
    parse_fixtures,
    read_fixture_text,
)
from cce_relevance.evaluation.gate import SetComparison, compare_sides
from cce_relevance.evaluation.golden import check_golden, golden_change
from cce_relevance.evaluation.harness import evaluate_backends
from cce_relevance.evaluation.history.mining import HistoryOptions
from cce_relevance.evaluation.observed_deltas import observed_deltas, plan_power
from cce_relevance.evaluation.prepared import prepare_check, prepare_run
from cce_relevance.evaluation.proposals.bootstrap import bootstrap, bootstrap_history
from cce_relevance.evaluation.proposals.file_rules import FileRules
from cce_relevance.evaluation.ranking_files import read_ranking_files, scored_rankings
from cce_relevance.evaluation.run_corpus import (
    Warn,
    corpus_exclusion,
    corpus_symbols,
    fixtures_exclusion,
    header_corpus,
    index_embedder,
    open_corpus,
    query_embedder,
    require_directory,
    warn_on_stderr,
)
from cce_relevance.evaluation.run_options import DEFAULT_OPTIONS, RunOptions
from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.evaluation.selection import (
    check_backend,
    compared_backends,
    selected_backends,
)
from cce_relevance.evaluation.set_scoring import SCORING_PROCESSES, ScoredSet, SharedIndexes, TopHit, top_hits
from cce_relevance.evaluation.shards import (
    Shard,
    merge_shard_states,
    shard_state,
)
from cce_relevance.evaluation.unjudged import (
    Accepted,
    edited_lines,
    parse_review,
    read_review,
    review_edits,
    unjudged,
)
from cce_relevance.evaluation.validation import Validation, check_indexed
from cce_relevance.project_config import ProjectConfig, load_config
from cce_relevance.reporting.fixture_patch import unified_patch
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.chunking.languages import check_languages, enabled_packs
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols
from cce_relevance.retrieval.embedders.service import RunEmbedders
from cce_relevance.retrieval.embedding.embed import HASH_EMBEDDER
from cce_relevance.retrieval.embedding.ollama import OllamaError
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.index.build import BuildOptions
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.hit_lines import hit_lines
from cce_relevance.retrieval.search.registry import open_backend
from cce_relevance.retrieval.store.store import default_store_path
from cce_relevance.retrieval.store.write import StoreWritten, write_store
from cce_relevance.stats.power import PowerAnalysis, check_plan

__all__ = [
    # Use cases: one per CLI command, and `score_set` and `compare_sides` for the Action.
    "run",
    "score_saved_rankings",
    "score_set",
    "search",
    "chunks",
    "validate",
    "suggest",
    "bootstrap",
    "bootstrap_history",
    "unjudged",
    "accept_review",
    "index_corpus",
    "compare_saved",
    "compare_many",
    "compare_sides",
    "power_analysis",
    "check_golden",
    "golden_change",
    "load_config",
    "shard_state",
    "merge_shard_states",
    # What they take and give. Everything else (anchors, goldens, shards, metric names) is
    # imported from the module that owns it.
    "RunOptions",
    "BuildOptions",
    "ProjectConfig",
    "FileRules",
    "HistoryOptions",
    "Shard",
    "RunResult",
    "SharedIndexes",
    "TopHit",
    "Validation",
    "BackendComparison",
    "SetComparison",
]

Stage = Callable[[str], contextlib.AbstractContextManager[None]]


def run(
    fixtures_path: str,
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    dir: str | None = None,
    store: str | None = None,
    warn: Warn = warn_on_stderr,
) -> RunResult:
    """Evaluate a fixture set at the backends `options` names, in the reference's order of checks
    (§order): its corpus is `store` (a persisted index), else the directory `dir`, else the
    header's `corpus`. A corpus directory never includes the run's own files (the fixture file,
    the config file, `options.outputs`) nor what the config's and the header's `exclude`
    patterns name; own files it held are named once through `warn`."""
    return _run(fixtures_path, options, dir, store, warn)


def _run(
    fixtures_path: str,
    options: RunOptions,
    dir: str | None,
    store: str | None,
    warn: Warn,
    index: Index | None = None,
    fixtures: FixtureSet | None = None,
) -> RunResult:
    prepared = prepare_run(fixtures_path, options, dir, store, warn, index=index, fixtures=fixtures)
    with RunEmbedders(options.indexing.cache) as embedders:
        embed = query_embedder(prepared.index, warn, options.config, embedders)  # before the names (§order)
        if options.compare is not None:
            names = compared_backends(options.compare, options.config)
        else:
            names = selected_backends(options.backends, options.config)
        reports = evaluated_backends(
            names,
            options.config,
            prepared.index,
            embed,
            prepared.fixtures.cases,
            prepared.weights,
            prepared.judgments,
            options.indexing,
            prepared.rank_metrics,
            prepared.costs,
            prepared.first_tokens,
            os.path.abspath(prepared.corpus),
            embedders,
        )
    return prepared.result(reports, options)


def score_saved_rankings(
    fixtures_path: str,
    ranking_paths: Sequence[str],
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    dir: str | None = None,
    store: str | None = None,
    warn: Warn = warn_on_stderr,
) -> RunResult:
    """Score rankings made elsewhere (TREC run files, `cce.retriever/v1` JSON lines;
    evaluation/ranking_files.py) exactly as `run` scores a backend's results: the same corpus,
    metrics, reports and comparisons; `options.compare` names two or more of the runs instead of
    backends. A case a run has no ranking for scores as a query with no results; queries a run
    ranks that the fixtures lack are ignored, with one warning per run. The corpus leaves out the
    ranking files too."""
    prepared = prepare_run(fixtures_path, options, dir, store, warn, own=ranking_paths)
    runs = read_ranking_files(ranking_paths, prepared.index)
    runs = scored_rankings(runs, options.compare, prepared.fixtures, warn)
    reports = evaluate_backends(
        [(r.backend, r.search()) for r in runs],
        prepared.fixtures.cases,
        prepared.weights,
        prepared.judgments,
        specs=prepared.rank_metrics,
        costs=prepared.costs,
        first_tokens=prepared.first_tokens,
    )
    return prepared.result(reports, options)


def score_set(
    fixtures_path: str,
    options: RunOptions = DEFAULT_OPTIONS,
    shared: SharedIndexes | None = None,
    *,
    check_corpus: Callable[[str], None] | None = None,
    stage: Stage | None = None,
    warn: Warn = warn_on_stderr,
) -> ScoredSet:
    """Score a fixture set in its header's corpus directory, check its anchors against the same
    index and take each query's top hits: what the Action does for every set at each commit.

    The set is read once, as `run` reads it (its grades only when `options` ask for rank
    metrics, so a malformed `grades` object cannot fail it otherwise; its `irrelevant` labels
    always, for the top hits' `unlabeled` mark), and its corpus indexed
    once per `shared` (with the config's languages and the run's exclusion) for the scores and
    the anchor check alike: the check can never refuse a set that scores, and a miss it calls
    stale is one of the corpus that was scored. `check_corpus` vets the corpus directory before
    a file of it is read (the Action refuses one outside the repository); `stage` times the
    steps ("index", "score", "validate", "hits") as context managers."""
    stage = stage or (lambda _name: contextlib.nullcontext())
    shared = shared or SharedIndexes()
    languages = options.chunk_languages
    with stage("index"):
        text = read_fixture_text(fixtures_path)
        fixtures = parse_fixtures(text, fixtures_path, labels=True)
        corpus = header_corpus(fixtures, fixtures_path)
    if check_corpus is not None:
        check_corpus(corpus)
    exclusion = fixtures_exclusion(fixtures, fixtures_path, corpus, options.config, options.own_files)
    with stage("index"):
        index = shared.index(corpus, exclusion, languages, options.indexing)
    with stage("score"):
        judged = options.metrics is not None or options.trec
        graded = parse_fixtures(text, fixtures_path, grades=True) if judged else fixtures
        scoring = dataclasses.replace(
            options, indexing=dataclasses.replace(options.indexing, workers=SCORING_PROCESSES)
        )
        result = _run(fixtures_path, scoring, corpus, None, warn, index=index, fixtures=graded)
    with stage("validate"):
        anchors = check_indexed(
            fixtures_path, fixtures.cases, corpus, index, corpus_symbols(corpus, languages)
        )
    with stage("hits"):
        hits = top_hits(result, corpus, languages, shared.parsed)
    return ScoredSet(result, anchors, hits, corpus, text)


SEARCH_QUERY_ID = "search"  # the id an external retriever sees for `search`'s one query


def search(
    corpus: str, query: str, backend: str = "hybrid", k: int = 10, options: RunOptions = DEFAULT_OPTIONS
) -> list[tuple[Hit, str]]:
    """One query through one backend over a corpus directory, with each hit's first line."""
    require_directory(corpus)
    check_languages(options.chunk_languages)
    check_backend(backend, options.config)
    index = _open(corpus, options)
    spec = options.config.spec(backend)
    with (
        RunEmbedders(options.indexing.cache) as embedders,
        open_backend(backend, spec, index, embedders=embedders, corpus=os.path.abspath(corpus)) as search_fn,
    ):
        hits = search_fn(query, k, SEARCH_QUERY_ID)
    return list(zip(hits, hit_lines(index, hits), strict=True))


def chunks(corpus: str, options: RunOptions = DEFAULT_OPTIONS) -> tuple[list[Chunk], CorpusSymbols]:
    """Every chunk of a corpus directory in index order (the conformance listing's input), and the
    symbols the chunker names them by; the config's `exclude` patterns and the config file itself
    are left out, as a run leaves them."""
    return list(_open(corpus, options).chunks), corpus_symbols(corpus, options.chunk_languages)


def _open(corpus: str, options: RunOptions) -> Index:
    """The index of a corpus directory with `options`' languages, indexing and exclusion."""
    languages = check_languages(options.chunk_languages)
    exclude = corpus_exclusion(require_directory(corpus), options.config, options.own_files)
    return open_corpus(corpus, languages=languages, indexing=options.indexing, exclude=exclude)


def validate(
    fixtures_path: str, options: RunOptions = DEFAULT_OPTIONS, *, dir: str | None = None, grades: bool = True
) -> Validation:
    """Anchor hygiene of a fixture set against its corpus (`dir`, else the header's corpus), which
    leaves out what `run` with the same options would. Grades are read and checked too, unless
    `grades=False`."""
    return prepare_check(fixtures_path, options, dir, grades).validation


@dataclass(frozen=True)
class Suggestions:
    """`validate` with fixes: the findings, a fix for each stale or moved anchor that has a likely
    new place, and the fixes as a unified diff of the fixture file ('' when there is none)."""

    validation: Validation
    fixes: tuple[AnchorFix, ...]
    patch: str


def suggest(
    fixtures_path: str, options: RunOptions = DEFAULT_OPTIONS, *, dir: str | None = None
) -> Suggestions:
    """`validate`, and for stale and moved anchors the fixture lines they most likely should be
    (evaluation/anchor_fixes.py), as a patch to apply with `git apply` or `patch -p1` from the
    working directory."""
    check = prepare_check(fixtures_path, options, dir, True)
    fixes = tuple(suggest_fixes(check.validation, check.fixtures.cases, check.index.chunks, check.symbols))
    patch = _patch(fixtures_path, lambda text: fixed_lines(text, fixes)) if fixes else ""
    return Suggestions(check.validation, fixes, patch)


def accept_review(fixtures_path: str, review_path: str) -> Accepted:
    """The anchors a reviewer marked `y` (added to `expected`) and `n` (added to `irrelevant`) in the
    review form at `review_path` (`-`: standard input), as a patch of the fixture file."""
    fixtures = load_fixtures(fixtures_path, grades=True)
    review, source = read_review(review_path)
    edits = tuple(review_edits(parse_review(review, source), fixtures.cases, source))
    return Accepted(edits, _patch(fixtures_path, lambda text: edited_lines(text, edits)) if edits else "")


def _patch(fixtures_path: str, edited: Callable[[str], list[str]]) -> str:
    """The unified diff of the fixture file to its `edited` lines ('' when they are the same),
    named as a patch names it: relative to the working directory when inside it."""
    text = read_fixture_text(fixtures_path)  # read just before, to find what to change
    relative = os.path.relpath(os.path.abspath(fixtures_path))
    shown = (fixtures_path if relative.startswith("..") else relative).replace(os.sep, "/")
    return unified_patch(shown, text.splitlines(keepends=True), edited(text))


def index_corpus(
    directory: str,
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    out: str | None = None,
    embedder: str = HASH_EMBEDDER,
    allow_secrets: bool = False,
) -> StoreWritten:
    """Index `directory` and write the reference's store (§store) plus our fingerprint beside it.

    The default path is `<directory>/.cce/index.json`, whose `.cce` the walker never indexes; a
    store written elsewhere in the directory is left out of the next index, with its fingerprint,
    as are the config's `exclude` patterns. An Ollama build checks the server before walking and
    writes nothing when any batch fails.
    """
    languages = check_languages(options.chunk_languages)
    require_directory(directory)
    path = out if out is not None else default_store_path(directory)
    exclude = corpus_exclusion(directory, options.config, StoreWritten.files_of(path))
    with RunEmbedders(options.indexing.cache) as embedders:
        documents, model = index_embedder(embedder, options.config, embedders)
        try:
            index = open_corpus(
                directory,
                protect_secrets=not allow_secrets,
                embedder=documents,
                languages=languages,
                indexing=options.indexing,
                exclude=exclude,
            )
        except OllamaError as exc:
            raise CceError(f"embedding with Ollama failed, nothing was written: {exc}") from None
        except CceError as exc:
            raise CceError(f"{exc.message}; nothing was written", hint=exc.hint) from None
    packs = enabled_packs(languages).names
    return write_store(path, index, redaction=not allow_secrets, model=model, languages=packs)


def compare_saved(
    base_path: str, head_path: str, options: RunOptions = DEFAULT_OPTIONS
) -> list[BackendComparison]:
    """Two saved run reports (`run --json`) paired by backend and query id, with paired statistics
    per metric (and the full statistics, naming `options.primary`, with `stats_level="full"`)."""
    return compare_documents(
        _report(base_path), _report(head_path), base_path, head_path, options.stats_level, options.primary
    )


def compare_many(paths: Sequence[str]) -> list[tuple[str, tuple[Any, ...]]]:
    """Three or more saved run reports as systems: per backend they all scored, every pair's tests
    (Holm-corrected) and a randomised Tukey HSD."""
    return _compare_many([_report(p) for p in paths], list(paths))


def _report(path: str) -> Any:
    return untrusted_json.read_document(path, "report")


def power_analysis(
    path: str, delta: float, *, alpha: float = 0.05, power: float = 0.8, metric: str | None = None
) -> PowerAnalysis:
    """Queries needed to detect `delta`, and the MDE now, from a saved comparison's per-query deltas
    (a run report made with a comparison, a `compare --json` document or the Action's
    compare.json); `metric` (a metric key) keeps one metric, else every one is planned."""
    try:
        check_plan(delta, alpha, power)  # before the file is read
    except ValueError as exc:
        raise CceError(str(exc)) from None
    return plan_power(observed_deltas(_report(path), path), path, delta, alpha, power, metric)
