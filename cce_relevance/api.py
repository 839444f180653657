"""The facade both front doors call: index a corpus, search it, evaluate fixtures, compare.

One function per use case, with typed parameters (sequences of names, not comma lists: the CLI
splits those); `__all__` is the whole contract, and the Action imports nothing else from the
package but the renderers in `reporting/` and `errors`. The wiring behind it lives in
`evaluation/` (corpus.py, names.py, backend_runs.py, gate.py) and rendering in `reporting/`. A run
follows the reference's processing order (§order), which decides which error wins when
several inputs are wrong.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from cce_relevance import json_input
from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchor_fixes import AnchorFix, fixed_lines, suggest_fixes
from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.anchors import Anchor, parse_anchor
from cce_relevance.evaluation.backend_runs import evaluated_backends
from cce_relevance.evaluation.budget import TokenCosts
from cce_relevance.evaluation.comparison import (
    BackendComparison,
    check_primary,
    compare_many,
    compare_pairs,
    compare_reports,
    compared,
)
from cce_relevance.evaluation.corpus import (
    OLLAMA_STORE_REFUSAL,
    Warn,
    bound_fixtures,
    corpus_exclusion,
    corpus_symbols,
    fixtures_exclusion,
    header_corpus,
    open_corpus,
    own_outputs,
    query_embedder,
    report_excluded,
    require_directory,
    resolve_index,
)
from cce_relevance.evaluation.discrimination import Discrimination, discrimination
from cce_relevance.evaluation.fixtures import Case, FixtureSet, load_fixtures, parse_fixtures
from cce_relevance.evaluation.gate import (
    detectable_effect,
    gated_comparison,
    gated_comparisons,
    gated_deltas,
    gated_test,
    is_inconclusive,
    is_significant_regression,
)
from cce_relevance.evaluation.harness import BackendReport, evaluate_backends
from cce_relevance.evaluation.history.git_log import Repository
from cce_relevance.evaluation.history.mining import (
    DEFAULT_HISTORY,
    SKIP_RULES,
    HistoryOptions,
    HistoryProposal,
    mine,
)
from cce_relevance.evaluation.judgments import Judgments, judge
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRIC_KEYS, METRICS
from cce_relevance.evaluation.names import (
    DEFAULT_BACKENDS,
    backend_names,
    backend_pair,
    check_backend,
    compared_backends,
    first_tokens_asked,
    rank_metric_specs,
)
from cce_relevance.evaluation.observed_deltas import observed_deltas
from cce_relevance.evaluation.pairing import backend_means, pair_reports
from cce_relevance.evaluation.proposals import DEFAULT_RULES, FORMS, HARD_FORMS, FileRules, Proposal, propose
from cce_relevance.evaluation.proposals import check_forms as proposal_forms
from cce_relevance.evaluation.rank_metrics import RankMetricSpec, rank_metric_for_key
from cce_relevance.evaluation.run_files import read_runs
from cce_relevance.evaluation.run_result import Comparison, RunResult
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.evaluation.shards import (
    Shard,
    dumps_shard,
    merge_shards,
    parse_shard,
    shard_document,
    shard_part,
)
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.evaluation.symbol_anchors import bind_anchor as bind_case_anchor
from cce_relevance.evaluation.symbol_anchors import bind_symbols
from cce_relevance.evaluation.unjudged import (
    LabelEdit,
    UnjudgedCase,
    edited_lines,
    parse_review,
    review_edits,
    unjudged_hits,
)
from cce_relevance.evaluation.validation import STALE_CODES, Validation, validate_cases
from cce_relevance.evaluation.validation import Finding as AnchorFinding
from cce_relevance.outputs import OutputSet, writes_in_place
from cce_relevance.project_config import NO_CONFIG, ProjectConfig, find_config, load_config
from cce_relevance.reporting.fixture_patch import unified_patch
from cce_relevance.retrieval.cache.index_cache import default_cache_dir
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.chunking.languages import check_languages, enabled_packs
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols, ParsedFiles
from cce_relevance.retrieval.corpus.exclusion import NO_EXCLUSION, Exclusion
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.corpus.walk import walk
from cce_relevance.retrieval.embedders.service import RunEmbedders
from cce_relevance.retrieval.embedding.embed import (
    HASH_DOCUMENTS,
    HASH_EMBEDDER,
    DocumentEmbedder,
)
from cce_relevance.retrieval.embedding.ollama import OLLAMA_EMBEDDER, OllamaClient, OllamaError
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.index.build import DEFAULT_BUILD, BuildOptions
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.registry import open_backend
from cce_relevance.retrieval.store.fingerprint import dumps_fingerprint, fingerprint_path
from cce_relevance.retrieval.store.store import default_store_path, dumps_store
from cce_relevance.stats.full_stats import StatsLevel
from cce_relevance.stats.paired import PairedTest
from cce_relevance.stats.power import PowerAnalysis, PowerRow, plan_from_pilot

__all__ = [
    # The use cases, one per command of the CLI (the Action calls run, validate, compare_saved).
    "run",
    "score_runs",
    "search",
    "chunks",
    "validate",
    "index_corpus",
    "compare_saved",
    "compare_many",
    "power_analysis",
    "golden_diff",
    "read_golden",
    "golden_text_diff",
    "load_report",
    "load_config",
    "fixture_corpus",
    "build_options",
    "corpus_symbols",
    "require_directory",
    "bootstrap",
    "bootstrap_history",
    "suggest",
    "unjudged",
    "accept_review",
    "own_outputs",
    "shard_state",
    "merge_shard_states",
    "shard_document",
    "merge_shards",
    "shard_part",
    # Fixture sets and anchors as written (the Action follows range anchors through a diff).
    "load_fixtures",
    "parse_anchor",
    # Pieces of run and validate, for a caller that scores a set and checks its anchors with one
    # reading of the set and one index of its corpus (the Action).
    "fixtures_exclusion",
    "open_corpus",
    "check_anchors",
    "anchor_index",
    "Exclusion",
    "ParsedFiles",
    "CorpusSymbols",
    # Names checked where the reference checks them (run checks its own; the CLI checks --languages).
    "check_languages",
    "check_backend",
    "backend_names",
    "backend_pair",
    "compared_backends",
    "rank_metric_specs",
    "rank_metric_for_key",
    "proposal_forms",
    "compare_reports",
    "parse_shard",
    "backend_means",
    # The pull-request gate's test.
    "gated_test",
    "gated_deltas",
    "detectable_effect",
    "is_inconclusive",
    "gated_comparison",
    "gated_comparisons",
    "is_significant_regression",
    # What the use cases take and give.
    "RunResult",
    "Comparison",
    "StoreWritten",
    "BuildOptions",
    "ProjectConfig",
    "NO_CONFIG",
    "find_config",
    "FixtureSet",
    "Index",
    "BackendComparison",
    "Validation",
    "AnchorFinding",
    "Anchor",
    "PairedTest",
    "PowerAnalysis",
    "Hit",
    "Chunk",
    "Bootstrapped",
    "HistoryBootstrapped",
    "HistoryOptions",
    "SKIP_RULES",
    "Discrimination",
    "FileRules",
    "Suggestions",
    "AnchorFix",
    "Unjudged",
    "Accepted",
    "Shard",
    # Defaults and fixed texts.
    "DEFAULT_BACKENDS",
    "DEFAULT_PRIMARY",
    "METRICS",
    "METRIC_KEYS",
    "STALE_CODES",
    "OLLAMA_STORE_REFUSAL",
    "warn_on_stderr",
    "FORMS",
    "HARD_FORMS",
]


def warn_on_stderr(message: str) -> None:
    """`warning: <message>` on stderr: the one thing a successful run may print there (§embedder-name)."""
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


def build_options(
    cache_dir: str | None = None,
    *,
    use_cache: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> BuildOptions:
    """How the front doors index: with the index cache in `cache_dir` (default: the user's cache
    directory, where one is known) unless `use_cache` is off, reporting to `progress`.

    A directory named explicitly must be usable (an input error otherwise); the default one is
    used when it can be, and indexing goes on uncached when it cannot.
    """
    if not use_cache:
        return BuildOptions(progress=progress)
    if cache_dir is None:
        return BuildOptions(cache=default_cache_dir(), progress=progress)
    try:
        os.makedirs(cache_dir, exist_ok=True)
    except OSError as exc:
        raise CceError(f"cannot use cache directory {cache_dir}: {exc.strerror or exc}") from None
    if not os.access(cache_dir, os.W_OK | os.X_OK):
        raise CceError(f"cannot use cache directory {cache_dir}: it is not writable")
    return BuildOptions(cache=cache_dir, progress=progress)


def fixture_corpus(fixtures_path: str, fixtures: FixtureSet | None = None) -> str:
    """The corpus `run(fixtures_path)` would index, without indexing it (`fixtures`: the set
    already read from `fixtures_path`, by `load_fixtures`).

    For a caller that must vet the directory first (the Action refuses a corpus that escapes
    the repository) and then pass it to `run` as `dir`, which yields the same report bytes.
    """
    return header_corpus(load_fixtures(fixtures_path) if fixtures is None else fixtures, fixtures_path)


def run(
    fixtures_path: str,
    *,
    dir: str | None = None,
    store: str | None = None,
    backends: Sequence[str] | None = None,
    compare: Sequence[str] | None = None,
    warn: Warn = warn_on_stderr,
    stats_level: StatsLevel = "reference",
    primary: str = DEFAULT_PRIMARY,
    config: ProjectConfig = NO_CONFIG,
    metrics: Sequence[str] | None = None,
    trec: bool = False,
    languages: Sequence[str] | None = None,
    indexing: BuildOptions = DEFAULT_BUILD,
    outputs: Sequence[str] = (),
    shard: Shard | None = None,
    index: Index | None = None,
    fixtures: FixtureSet | None = None,
    labels: bool = False,
) -> RunResult:
    """Evaluate a fixture set, in the reference's order of checks (§order).

    `backends` names the backends to score (default: the three built-ins); `compare` names two
    instead, A then B, and compares them. `metrics` (rank metric names) adds rank metrics; it
    and `trec` (TREC export wanted) make the run read each case's `grades` and judge every
    corpus chunk against every case (`RunResult.judgments`). Without them the fixtures are read
    exactly as the reference does.

    With `compare` and `stats_level="full"` the comparison also carries `full_stats`, naming
    `primary` (a metric key) the primary metric. `config` (see `load_config`) adds the project's
    backend variants and external retrievers to the names `backends` and `compare` may use.
    `languages` (extra language packs) defaults to the config's `languages`; `indexing` says how
    a corpus directory is indexed (`build_options`). A corpus directory never includes the run's
    own files: the fixture file, the config file and `outputs` (the golden and every file the
    run writes, see `own_outputs`), nor what the config's and the header's `exclude` patterns
    name; own files it held are named once through `warn`. A caller that has indexed the corpus
    directory already passes its index as `index` (`open_corpus` with the same languages and,
    as `exclude`, the `fixtures_exclusion` of the same config and outputs), and one that has read
    the set already passes it as `fixtures` (`load_fixtures`, with `grades=True` when `metrics`
    or `trec` is given): the Action scores a set and checks its anchors (`check_anchors`) with one of each.
    `shard` scores only the queries whose id hashes to it (evaluation/shards.py);
    `merge_shard_states` puts the shards back together. `labels` reads the cases' optional
    `grades` and `irrelevant` labels even without `metrics` (`--per-query text` marks the hits a
    reviewer judged not relevant); a rank metric or `trec` reads them anyway.
    """
    rank_metrics = rank_metric_specs(metrics) if metrics is not None else ()
    first_tokens = metrics is not None and first_tokens_asked(metrics)
    judged = bool(rank_metrics) or trec or first_tokens
    if fixtures is None:
        fixtures = load_fixtures(fixtures_path, grades=judged or labels)
    languages = config.languages if languages is None else languages
    exclusion = (
        NO_EXCLUSION
        if store is not None
        else fixtures_exclusion(fixtures, fixtures_path, dir, config, outputs)
    )
    started = time.perf_counter()
    corpus, index = resolve_index(fixtures, fixtures_path, dir, store, languages, indexing, exclusion, index)
    index_seconds = time.perf_counter() - started
    report_excluded(index, exclusion, warn)
    fixtures = bound_fixtures(fixtures, corpus, store, languages)
    if shard is not None:
        fixtures = shard.cases(fixtures)
    with RunEmbedders(indexing.cache) as embedders:
        embed = query_embedder(index, warn, config, embedders)
        if compare is not None:
            names = compared_backends(compare, config)
        elif backends is not None:
            names = backend_names(backends, config)
        else:
            names = list(DEFAULT_BACKENDS)
        weights = LineWeights.of_index(index)
        judgments = _judgments(fixtures.cases, index) if judged else None
        costs = _costs(index, weights, rank_metrics, first_tokens)
        reports = tuple(
            evaluated_backends(
                names,
                config,
                index,
                embed,
                fixtures.cases,
                weights,
                judgments,
                indexing,
                rank_metrics,
                costs,
                first_tokens,
                os.path.abspath(corpus),
                embedders,
            )
        )
    comparison, systems = (
        compared(reports, stats_level, primary, rank_metrics) if compare is not None else (None, ())
    )
    return RunResult(
        corpus, index.embedder, fixtures, reports, comparison, rank_metrics, judgments, systems, index_seconds
    )


def score_runs(
    fixtures_path: str,
    run_paths: Sequence[str],
    *,
    dir: str | None = None,
    store: str | None = None,
    compare: Sequence[str] | None = None,
    stats_level: StatsLevel = "reference",
    primary: str = DEFAULT_PRIMARY,
    metrics: Sequence[str] | None = None,
    trec: bool = False,
    languages: Sequence[str] = (),
    indexing: BuildOptions = DEFAULT_BUILD,
    warn: Warn = warn_on_stderr,
    config: ProjectConfig = NO_CONFIG,
    outputs: Sequence[str] = (),
    labels: bool = False,
) -> RunResult:
    """Score saved rankings (TREC run files, `cce.retriever/v1` JSON lines; evaluation/run_files.py)
    against a fixture set exactly as `run` scores a backend's results: same corpus resolution
    (`--store` > `--dir` > the header's corpus), metrics, reports and comparisons.

    `compare` names two or more of the runs. A case a run has no ranking for scores as a query with
    no results; queries a run ranks that the fixtures lack are ignored, with one warning per run.
    The corpus leaves out the command's own files as `run`'s does (`outputs`, and the run files).
    `labels` as for `run`.
    """
    rank_metrics = rank_metric_specs(metrics) if metrics is not None else ()
    first_tokens = metrics is not None and first_tokens_asked(metrics)
    judged = bool(rank_metrics) or trec or first_tokens
    fixtures = load_fixtures(fixtures_path, grades=judged or labels)
    exclusion = (
        NO_EXCLUSION
        if store is not None
        else fixtures_exclusion(fixtures, fixtures_path, dir, config, [*run_paths, *outputs])
    )
    corpus, index = resolve_index(fixtures, fixtures_path, dir, store, languages, indexing, exclusion)
    report_excluded(index, exclusion, warn)
    fixtures = bound_fixtures(fixtures, corpus, store, languages)
    runs = read_runs(run_paths, index)
    if compare is not None:
        by_name = {r.backend: r for r in runs}
        chosen = list(dict.fromkeys(compare))
        if any(n not in by_name for n in chosen) or len(chosen) < 2:
            raise CceError(
                f"--compare needs two or more runs of {', '.join(by_name)}, got "
                f"{rust_debug_str(','.join(compare))}"
            )
        runs = [by_name[n] for n in chosen]
    ids = {c.id for c in fixtures.cases}
    for r in runs:
        extra = [q for q in r.rankings if q not in ids]
        if extra:
            warn(
                f"run {r.backend}: {len(extra)} ranked quer{'y is' if len(extra) == 1 else 'ies are'} not in "
                f"{fixtures_path} and not scored (first: {rust_debug_str(extra[0])})"
            )
    weights = LineWeights.of_index(index)
    judgments = _judgments(fixtures.cases, index) if judged else None
    reports = tuple(
        evaluate_backends(
            [(r.backend, r.search()) for r in runs],
            fixtures.cases,
            weights,
            judgments,
            specs=rank_metrics,
            costs=_costs(index, weights, rank_metrics, first_tokens),
            first_tokens=first_tokens,
        )
    )
    comparison, systems = (
        compared(reports, stats_level, primary, rank_metrics) if compare is not None else (None, ())
    )
    return RunResult(corpus, index.embedder, fixtures, reports, comparison, rank_metrics, judgments, systems)


def shard_state(result: RunResult, fixtures_path: str, shard: Shard) -> str:
    """The state file of one shard's run (`run(..., shard=shard)`) of the set at `fixtures_path`."""
    with open(fixtures_path, encoding="utf-8", newline="") as handle:
        text = handle.read()
    return dumps_shard(shard_document(result, text, shard))


def merge_shard_states(paths: Sequence[str]) -> RunResult:
    """The whole run rebuilt from its shards' state files (or directories of them: every `*.json`
    inside, sorted), checked to be one run split once; renders as the unsharded run does."""
    documents = []
    for path in paths:
        files = (
            sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".json"))
            if os.path.isdir(path)
            else [path]
        )
        for name in files:
            try:
                with open(name, "rb") as handle:
                    documents.append((name, json_input.loads(handle.read())))
            except OSError as exc:
                raise CceError(f"could not read shard state {name}: {exc.strerror}") from exc
            except json_input.JsonInputError as exc:
                raise CceError(f"{name}: not a JSON shard state ({exc})") from exc
    return merge_shards(documents)


def _costs(
    index: Index, weights: LineWeights, specs: Sequence[RankMetricSpec], first_tokens: bool
) -> TokenCosts | None:
    """The results' token costs, when a budget metric or the tokens to the first relevant hit
    were asked for."""
    if first_tokens or any(s.budget is not None for s in specs):
        return TokenCosts(index.chunks, weights)
    return None


def _judgments(cases: Sequence[Case], index: Index) -> tuple[Judgments, ...]:
    """Every case's anchors resolved against `index`'s chunks, looked up through one anchor index."""
    anchors = anchor_index(index)
    return tuple(judge(c, index.chunks, anchors) for c in cases)


SEARCH_QUERY_ID = "search"  # the id an external retriever sees for `search`'s one query


def search(
    corpus: str,
    query: str,
    backend: str = "hybrid",
    k: int = 10,
    config: ProjectConfig = NO_CONFIG,
    languages: Sequence[str] | None = None,
    indexing: BuildOptions = DEFAULT_BUILD,
) -> list[tuple[Hit, str]]:
    """One query through one backend over a corpus directory, with each hit's first line.

    `languages` (extra language packs) defaults to the config's `languages`.
    """
    check_backend(backend, config)
    index = open_corpus(
        corpus,
        languages=config.languages if languages is None else languages,
        indexing=indexing,
        exclude=corpus_exclusion(corpus, config),
    )
    with (
        RunEmbedders(indexing.cache) as embedders,
        open_backend(
            backend, config.spec(backend), index, embedders=embedders, corpus=os.path.abspath(corpus)
        ) as search_fn,
    ):
        hits = search_fn(query, k, SEARCH_QUERY_ID)
    first_line = {c.chunk_id: c.content.split("\n", 1)[0] for c in index.chunks}
    return [(h, first_line[h.chunk_id] if h.chunk_id in first_line else _line_at(index, h)) for h in hits]


def _line_at(index: Index, hit: Hit) -> str:
    """The text of a hit's first line, from the first chunk that covers it: an external retriever's
    span need not be a chunk of ours."""
    for i in index.chunks_by_file.get(hit.file_path, ()):
        c = index.chunks[i]
        if c.start_line <= hit.start_line <= c.end_line:
            lines = c.content.split("\n")
            if hit.start_line - c.start_line < len(lines):
                return lines[hit.start_line - c.start_line]
    return ""


def chunks(
    corpus: str,
    languages: Sequence[str] = (),
    indexing: BuildOptions = DEFAULT_BUILD,
    config: ProjectConfig = NO_CONFIG,
) -> list[Chunk]:
    """Every chunk of a corpus directory in index order (the conformance listing's input); the
    config's `exclude` patterns and the config file itself are left out, as a run leaves them."""
    return open_corpus(
        corpus, languages=languages, indexing=indexing, exclude=corpus_exclusion(corpus, config)
    ).chunks


def validate(
    fixtures_path: str,
    *,
    dir: str | None = None,
    languages: Sequence[str] = (),
    grades: bool = True,
    indexing: BuildOptions = DEFAULT_BUILD,
    config: ProjectConfig = NO_CONFIG,
    outputs: Sequence[str] = (),
) -> Validation:
    """Anchor hygiene of a fixture set against its corpus (`--dir`, else the header's corpus).

    Grades are read and checked too, unless `grades=False`: the Action reads a set as `run` does,
    so a malformed `grades` object (which `run` ignores) cannot fail it. For the Action:
    `validate(...).stale_anchors()` maps each query id to its anchors that resolve to nothing, to
    label such a miss as stale. The corpus leaves out what `run` with the same `config` and
    `outputs` would (`corpus_exclusion`).
    """
    return _validated(fixtures_path, dir, languages, grades, indexing, config, outputs)[0]


def _validated(
    fixtures_path: str,
    dir: str | None,
    languages: Sequence[str],
    grades: bool,
    indexing: BuildOptions,
    config: ProjectConfig = NO_CONFIG,
    outputs: Sequence[str] = (),
) -> tuple[Validation, FixtureSet, Index, CorpusSymbols]:
    fixtures = load_fixtures(fixtures_path, grades=grades)
    exclusion = fixtures_exclusion(fixtures, fixtures_path, dir, config, outputs)
    corpus, index = resolve_index(fixtures, fixtures_path, dir, None, languages, indexing, exclusion)
    symbols = corpus_symbols(corpus, languages)
    return _checked(fixtures_path, fixtures, corpus, index, symbols), fixtures, index, symbols


def check_anchors(
    fixtures_path: str, fixtures: FixtureSet, corpus: str, index: Index, languages: Sequence[str] = ()
) -> Validation:
    """`validate` of a fixture set already read (`load_fixtures`) against the index already made
    of its corpus directory `corpus`: what the Action does after scoring a set, so that neither is
    read or made twice. With `index` made by `open_corpus` with `languages` and, as `exclude`, the
    `fixtures_exclusion` of a config and outputs, this is `validate` with that config and those
    outputs: the files, chunks and line counts checked against are the index's own."""
    return _checked(fixtures_path, fixtures, corpus, index, corpus_symbols(corpus, languages))


def _checked(
    fixtures_path: str, fixtures: FixtureSet, corpus: str, index: Index, symbols: CorpusSymbols
) -> Validation:
    return validate_cases(
        fixtures_path, corpus, fixtures.cases, anchor_index(index), index.line_counts or {}, symbols
    )


def anchor_index(index: Index) -> AnchorIndex:
    """Anchor lookups in `index`'s chunks, through the chunks by file that ranking keeps."""
    return AnchorIndex(index.chunks, index.chunks_by_file)


@dataclass(frozen=True)
class Suggestions:
    """`validate` with fixes: the findings, a fix for each stale or moved anchor that has a likely
    new place, and the fixes as a unified diff of the fixture file ('' when there is none)."""

    validation: Validation
    fixes: tuple[AnchorFix, ...]
    patch: str


def suggest(
    fixtures_path: str,
    *,
    dir: str | None = None,
    languages: Sequence[str] = (),
    indexing: BuildOptions = DEFAULT_BUILD,
    config: ProjectConfig = NO_CONFIG,
) -> Suggestions:
    """`validate`, and for stale and moved anchors the fixture lines they most likely should be
    (evaluation/anchor_fixes.py), as a patch to apply with `git apply` or `patch -p1` from the
    working directory."""
    validation, fixtures, index, symbols = _validated(fixtures_path, dir, languages, True, indexing, config)
    fixes = tuple(suggest_fixes(validation, fixtures.cases, index.chunks, symbols))
    if not fixes:
        return Suggestions(validation, fixes, "")
    with open(fixtures_path, encoding="utf-8", newline="") as fh:  # load_fixtures has just read it
        text = fh.read()
    before = text.splitlines(keepends=True)
    patch = unified_patch(_patch_path(fixtures_path), before, fixed_lines(text, fixes))
    return Suggestions(validation, fixes, patch)


@dataclass(frozen=True)
class Unjudged:
    """`validate --unjudged`: the anchor findings, the backends searched, how deep (None: each
    case's k), and per case the hits no anchor labels (evaluation/unjudged.py)."""

    validation: Validation
    backends: tuple[str, ...]
    top: int | None
    cases: tuple[UnjudgedCase, ...]


def unjudged(
    fixtures_path: str,
    *,
    dir: str | None = None,
    backends: Sequence[str] | None = None,
    top: int | None = None,
    languages: Sequence[str] = (),
    indexing: BuildOptions = DEFAULT_BUILD,
    config: ProjectConfig = NO_CONFIG,
) -> Unjudged:
    """`validate`, and every case's top `top` hits (default: its k) at each of `backends` (default:
    the built-in ones) that match none of its anchors, `expected` or `irrelevant`."""
    if top is not None and top < 1:
        raise CceError(f"--top must be at least 1, got {top}")
    names = backend_names(backends, config) if backends is not None else list(DEFAULT_BACKENDS)
    validation, fixtures, index, symbols = _validated(fixtures_path, dir, languages, True, indexing, config)
    cases = bind_symbols(fixtures, symbols).cases
    if top is not None:
        cases = tuple(dataclasses.replace(c, k=top) for c in cases)
    embed = query_embedder(index, warn_on_stderr)
    weights = LineWeights.of_index(index)
    reports = evaluated_backends(names, config, index, embed, cases, weights, None, indexing)
    return Unjudged(validation, tuple(names), top, unjudged_hits(reports, symbols))


@dataclass(frozen=True)
class Accepted:
    """A filled-in review form (`validate --unjudged`) as edits of the fixture file, and as a patch."""

    edits: tuple[LabelEdit, ...]
    patch: str


def accept_review(fixtures_path: str, review_path: str) -> Accepted:
    """The anchors a reviewer marked `y` (added to `expected`) and `n` (added to `irrelevant`) in the
    review form at `review_path` (`-`: standard input), as a patch of the fixture file."""
    fixtures = load_fixtures(fixtures_path, grades=True)
    try:
        if review_path == "-":
            review = sys.stdin.read()
        else:
            with open(review_path, encoding="utf-8") as fh:
                review = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CceError(
            f"could not read review {review_path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    source = "<stdin>" if review_path == "-" else review_path
    edits = tuple(review_edits(parse_review(review, source), fixtures.cases, source))
    if not edits:
        return Accepted(edits, "")
    with open(fixtures_path, encoding="utf-8", newline="") as fh:  # load_fixtures has just read it
        text = fh.read()
    patch = unified_patch(
        _patch_path(fixtures_path), text.splitlines(keepends=True), edited_lines(text, edits)
    )
    return Accepted(edits, patch)


def _patch_path(path: str) -> str:
    """`path` as a patch names it: relative to the working directory when inside it."""
    relative = os.path.relpath(os.path.abspath(path))
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


@dataclass(frozen=True)
class Bootstrapped:
    """A proposed fixture set (`text`, its header's corpus relative to where it is written),
    what it was drawn from, and each scored backend's report on it (empty when not scored)."""

    text: str
    proposal: Proposal
    reports: tuple[BackendReport, ...]

    def form_counts(self) -> dict[str, int]:
        """Chosen cases per form, in form order (forms with none left out)."""
        counts = Counter(p.candidate.form for p in self.proposal.cases)
        return {form: counts[form] for form in FORMS if counts[form]}

    def discrimination(self) -> Discrimination | None:
        """How the scored backends tell the set's cases apart, over all cases, easy and hard
        ones and each form; None when it was not scored."""
        if not self.reports:
            return None
        groups: dict[str, list[str]] = {"easy": [], "hard": []}
        for p in self.proposal.cases:
            groups["hard" if p.candidate.hard else "easy"].append(p.id)
            groups.setdefault(p.candidate.form, []).append(p.id)
        ordered = {g: groups[g] for g in ("easy", "hard", *FORMS) if groups.get(g)}
        return discrimination(self.reports, ordered)


def bootstrap(
    directory: str,
    *,
    queries: int = 50,
    seed: int = 0,
    out: str | None = None,
    rules: FileRules = DEFAULT_RULES,
    forms: Sequence[str] = FORMS,
    backends: Sequence[str] | None = None,
    score: bool = True,
    config: ProjectConfig = NO_CONFIG,
    languages: Sequence[str] | None = None,
    indexing: BuildOptions = DEFAULT_BUILD,
    outputs: Sequence[str] = (),
) -> Bootstrapped:
    """Propose `queries` labeled cases drawn from `directory` (deterministic for `seed`), and
    score them at each of `backends` (default: the built-in ones) unless `score` is off.

    The header's corpus is `directory` relative to the directory `out` will be written in (the
    working directory when `out` is None). Nothing is written here; `out` and `outputs` (the
    command's other files, such as its report) are left out of the corpus when inside it, as a
    run leaves out its own files.
    """
    if queries < 1:
        raise CceError(f"--queries must be at least 1, got {queries}")
    names = backend_names(backends, config) if backends is not None else list(DEFAULT_BACKENDS)
    languages, exclusion, index = _proposal_corpus(directory, out, outputs, config, languages, indexing)
    texts = {f.path: redact(f.text) for f in walk(directory, exclude=exclusion).files}
    proposal = propose(
        index.chunks, texts, queries, seed, rules, proposal_forms(forms), enabled_packs(languages)
    )
    nothing = CceError(
        f"nothing to propose in {directory}: no definition with a usable name or doc sentence "
        f"in {proposal.files} file(s) kept",
        hint="--include-tests, --include-vendored or --include-generated keep more files",
    )
    scoring = (names, config, index, languages, indexing, score)
    return Bootstrapped(*_scored_proposal(proposal, nothing, out, directory, *scoring))


def _proposal_corpus(
    directory: str,
    out: str | None,
    outputs: Sequence[str],
    config: ProjectConfig,
    languages: Sequence[str] | None,
    indexing: BuildOptions,
) -> tuple[Sequence[str], Exclusion, Index]:
    """The languages, the exclusion and the index a proposal is drawn from: the directory without
    the command's own files (`out`, `outputs`) and the config's `exclude` patterns."""
    languages = config.languages if languages is None else languages
    exclusion = corpus_exclusion(directory, config, [*([out] if out is not None else []), *outputs])
    return (
        languages,
        exclusion,
        open_corpus(directory, languages=languages, indexing=indexing, exclude=exclusion),
    )


P = TypeVar("P", Proposal, HistoryProposal)


def _corpus_from(directory: str, out: str | None) -> str:
    """`directory` as a header names it: relative to where `out` is written (the working
    directory when it goes to stdout)."""
    where = os.path.dirname(os.path.abspath(out)) if out is not None else os.getcwd()
    return os.path.relpath(os.path.abspath(directory), where).replace(os.sep, "/")


def _scored_proposal(
    proposal: P,
    nothing: CceError,
    out: str | None,
    directory: str,
    names: Sequence[str],
    config: ProjectConfig,
    index: Index,
    languages: Sequence[str],
    indexing: BuildOptions,
    score: bool,
) -> tuple[str, P, tuple[BackendReport, ...]]:
    """A proposed set's text (its header's corpus relative to `out`), the proposal, and each
    backend's report on it over the index made of its corpus (none unless `score`); `nothing`
    is raised for a proposal without cases."""
    if not proposal.cases:
        raise nothing
    text = proposal.fixture_text(_corpus_from(directory, out))
    if not score:
        return text, proposal, ()
    cases = bound_fixtures(parse_fixtures(text, out or "<bootstrap>"), directory, None, languages).cases
    with RunEmbedders(indexing.cache) as embedders:
        reports = evaluated_backends(
            names,
            config,
            index,
            query_embedder(index, warn_on_stderr, config, embedders),
            cases,
            LineWeights.of_index(index),
            None,
            indexing,
            corpus=os.path.abspath(directory),
            embedders=embedders,
        )
    return text, proposal, tuple(reports)


@dataclass(frozen=True)
class HistoryBootstrapped:
    """A fixture set drawn from a repository's history (`text`), the yield of the walk, and each
    scored backend's report on it (empty when not scored)."""

    text: str
    proposal: HistoryProposal
    reports: tuple[BackendReport, ...]

    def discrimination(self) -> Discrimination | None:
        """How the scored backends tell the cases apart: all of them, the merged pull requests'
        and the other commits'."""
        if not self.reports:
            return None
        groups: dict[str, list[str]] = {"merged PRs": [], "commits": []}
        for c in self.proposal.cases:
            groups["merged PRs" if c.pull_request is not None else "commits"].append(c.id)
        return discrimination(self.reports, {g: ids for g, ids in groups.items() if ids})


def bootstrap_history(
    directory: str,
    *,
    history: HistoryOptions = DEFAULT_HISTORY,
    out: str | None = None,
    rules: FileRules = DEFAULT_RULES,
    backends: Sequence[str] | None = None,
    score: bool = True,
    config: ProjectConfig = NO_CONFIG,
    languages: Sequence[str] | None = None,
    indexing: BuildOptions = DEFAULT_BUILD,
    outputs: Sequence[str] = (),
) -> HistoryBootstrapped:
    """Cases drawn from the commits of `history.revisions` in the git repository holding
    `directory` (evaluation/history/): their subjects as queries, the definitions they changed,
    read at their parents, as anchors; only anchors that resolve in `directory` as it is now (the
    tree the set is scored at: check out an earlier commit there to score the set at it). Scored
    at each of `backends` (default: the built-in ones) unless `score` is off; the header's corpus
    and the files left out of it as for `bootstrap`."""
    if history.limit < 1:
        raise CceError(f"--queries must be at least 1, got {history.limit}")
    if history.max_definitions < 1:
        raise CceError(f"--max-definitions must be at least 1, got {history.max_definitions}")
    names = backend_names(backends, config) if backends is not None else list(DEFAULT_BACKENDS)
    languages, _, index = _proposal_corpus(directory, out, outputs, config, languages, indexing)
    symbols = corpus_symbols(directory, languages)
    anchors = anchor_index(index)

    def scored(text: str) -> bool:
        anchor = parse_anchor(text)
        return anchors.resolves(bind_case_anchor(anchor, symbols))

    with Repository(directory) as repo:
        proposal = mine(repo, history, rules, enabled_packs(languages), scored)
    left_out = ", ".join(f"{n} {rule}" for rule, n in proposal.skipped.items()) or "none"
    nothing = CceError(
        f"nothing to propose from the history of {directory}: {proposal.seen} commit(s) seen, "
        f"none kept (left out: {left_out})",
        hint="widen the range or the dates, or raise --max-definitions",
    )
    scoring = (names, config, index, languages, indexing, score)
    return HistoryBootstrapped(*_scored_proposal(proposal, nothing, out, directory, *scoring))


@dataclass(frozen=True)
class StoreWritten:
    """What `index_corpus` wrote: the store, its fingerprint (None for a store written to a device
    or pipe, which has no file to describe), and what the store holds."""

    path: str
    fingerprint: str | None
    embedder: str
    files: int
    chunks: int
    size: int


def _document_embedder(
    name: str, config: ProjectConfig, embedders: RunEmbedders
) -> tuple[DocumentEmbedder, str | None]:
    """The index-time embedder called `name` (built-in or the config's), and the model it
    records in the fingerprint (None for the hash embedder)."""
    if name == HASH_EMBEDDER:
        return HASH_DOCUMENTS, None
    spec = config.embedder(name)
    if spec is None:
        raise CceError(
            f"unknown embedder {rust_debug_str(name)} (expected {', '.join(config.embedder_names)})"
        )
    if name != OLLAMA_EMBEDDER:
        service = embedders.service(spec)
        return service.documents(), service.embedder.identity
    client = OllamaClient.from_env()
    try:
        client.check_health()
    except OllamaError as exc:
        raise CceError(
            f"Ollama is not ready: {exc}",
            hint="start Ollama (or set CCE_OLLAMA_URL / CCE_OLLAMA_MODEL), or index with --embedder hash",
        ) from None
    return client.documents(), client.model


def index_corpus(
    directory: str,
    *,
    out: str | None = None,
    embedder: str = HASH_EMBEDDER,
    allow_secrets: bool = False,
    languages: Sequence[str] = (),
    indexing: BuildOptions = DEFAULT_BUILD,
    config: ProjectConfig = NO_CONFIG,
) -> StoreWritten:
    """Index `directory` and write the reference's store (§store) plus our fingerprint beside it.

    The default path is `<directory>/.cce/index.json`, whose `.cce` the walker never indexes; a
    store written elsewhere in the directory is left out of the next index, with its fingerprint,
    as are the config's `exclude` patterns. An Ollama build checks the server before walking and
    writes nothing when any batch fails.
    """
    require_directory(directory)
    packs = enabled_packs(languages)
    path = out if out is not None else default_store_path(directory)
    exclude = corpus_exclusion(directory, config, [path, fingerprint_path(path)])
    with RunEmbedders(indexing.cache) as embedders:
        documents, model = _document_embedder(embedder, config, embedders)
        try:
            index = open_corpus(
                directory,
                protect_secrets=not allow_secrets,
                embedder=documents,
                languages=languages,
                indexing=indexing,
                exclude=exclude,
            )
        except OllamaError as exc:
            raise CceError(f"embedding with Ollama failed, nothing was written: {exc}") from None
        except CceError as exc:
            raise CceError(f"{exc.message}; nothing was written", hint=exc.hint) from None
    text = dumps_store(index)
    data = text.encode("utf-8")
    fingerprint = None if writes_in_place(path) else fingerprint_path(path)
    with OutputSet() as outputs:  # both or neither: a store never sits beside another store's fingerprint
        outputs.stage(path, data)
        if fingerprint is not None:
            outputs.stage(
                fingerprint,
                dumps_fingerprint(
                    index, data, redaction=not allow_secrets, model=model, languages=packs.names
                ),
            )
        outputs.commit()
    return StoreWritten(
        path, fingerprint, index.embedder, len(index.file_token_estimates), len(index.chunks), len(data)
    )


def golden_diff(golden_path: str, report_json: str, *, label: str | None = None, missing_hint: str) -> str:
    """The unified diff from the golden report at `golden_path` to `report_json`; '' when identical.

    A missing golden is an input error whose hint (`missing_hint`) says how this front door
    creates one. `label` names the golden in the diff header (default: `golden_path`).
    """
    label = golden_path if label is None else label
    return golden_text_diff(read_golden(golden_path, label, missing_hint), report_json, label)


def read_golden(golden_path: str, label: str, missing_hint: str) -> str:
    """The golden report's text as stored: drift means the bytes differ, so the file is read
    without newline translation. Missing or unreadable, it is an input error naming `label`."""
    try:
        with open(golden_path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        raise CceError(f"golden report not found: {label}", hint=missing_hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CceError(f"could not read golden report {label}: {exc}") from None


def golden_text_diff(expected: str, report_json: str, label: str) -> str:
    """The unified diff from a golden report's text (`read_golden`) to `report_json`; '' when identical."""
    if expected == report_json:
        return ""
    return "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            report_json.splitlines(keepends=True),
            fromfile=f"{label} (golden)",
            tofile="current run",
        )
    )


def load_report(path: str) -> Any:
    """A saved run report (`run --json`), as JSON data; unreadable or invalid files are input errors."""
    try:
        with open(path, "rb") as fh:
            return json_input.loads(fh.read())
    except OSError as exc:
        raise CceError(f"could not read report {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CceError(f"could not read report {path}: {exc}") from None


def compare_saved(
    base: Any,
    head: Any,
    base_label: str = "base",
    head_label: str = "head",
    *,
    stats_level: StatsLevel = "reference",
    primary: str = DEFAULT_PRIMARY,
) -> list[BackendComparison]:
    """Pair two run reports by backend and query id, with paired statistics per metric.

    `stats_level="full"` adds each backend's `full_stats` (`BackendComparison.full`), with
    `primary` (a metric key) named the primary metric; the Markdown renderer then shows them.
    """
    pairs = pair_reports(base, head, base_label, head_label)
    if stats_level == "full":
        for p in pairs:
            if p.base_means is not None and p.head_means is not None:
                check_primary(primary, [spec.key for spec in p.specs])
    return compare_pairs(pairs, stats_level, primary)


def power_analysis(
    path: str, delta: float, *, alpha: float = 0.05, power: float = 0.8, metric: str | None = None
) -> PowerAnalysis:
    """Queries needed to detect `delta`, and the MDE now, from a saved comparison's per-query deltas.

    `path` is a run report made with `--compare` or a `compare --json` document; `metric` (a
    metric key) keeps one metric, else every metric of every comparison is planned.
    """
    if not (math.isfinite(delta) and delta > 0.0):
        raise CceError(f"--delta must be a finite number greater than 0, got {delta!r}")
    if not 0.0 < alpha < 1.0:
        raise CceError(f"--alpha must lie strictly between 0 and 1, got {alpha!r}")
    if not 0.5 <= power < 1.0:
        raise CceError(f"--power must lie in [0.5, 1), got {power!r}")
    samples = observed_deltas(load_report(path), path)
    if metric is not None and all(s.metric != metric for s in samples):
        spec = rank_metric_for_key(metric)
        raise CceError(
            f"{path} holds no metric {rust_debug_str(metric)} "
            f"(it holds {', '.join(dict.fromkeys(s.metric for s in samples))})",
            hint=f"make the reports with --metrics {spec.name}" if spec is not None else None,
        )
    rows = tuple(
        PowerRow(s.comparison, s.metric, plan_from_pilot(s.deltas, delta, alpha, power))
        for s in samples
        if metric is None or s.metric == metric
    )
    return PowerAnalysis(path, delta, alpha, power, rows)
