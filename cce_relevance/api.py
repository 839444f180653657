"""The use cases both front doors call: index a corpus, search it, evaluate fixtures, compare.

This is the one place that wires the rooms together (retrieval → evaluation → stats →
reporting). It follows the reference's processing order (harness.md §1.3), which decides which
error wins when several inputs are wrong.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cce_relevance.config import EMBEDDERS as EMBEDDERS
from cce_relevance.config_file import NO_CONFIG, ProjectConfig
from cce_relevance.config_file import load_config as load_config
from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.fixtures import Case, FixtureSet, corpus_dir
from cce_relevance.evaluation.fixtures import load_fixtures as load_fixtures
from cce_relevance.evaluation.harness import BackendReport, can_fork, evaluate_backend, evaluate_backends
from cce_relevance.evaluation.judgments import Judgments, judge
from cce_relevance.evaluation.metrics import METRIC_KEYS as METRIC_KEYS
from cce_relevance.evaluation.metrics import METRICS
from cce_relevance.evaluation.observed_deltas import observed_deltas
from cce_relevance.evaluation.pairing import pair_reports
from cce_relevance.evaluation.rank_metrics import RANK_METRICS, RankMetricSpec
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.evaluation.validation import Validation, validate_cases
from cce_relevance.files import write_atomically
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.reporting.chart import DeltaChart, comparison_chart, mermaid_block, reports_chart
from cce_relevance.reporting.full_report import FULL_LEGEND, MDE_LEGEND, full_text_block
from cce_relevance.reporting.json_report import report_document
from cce_relevance.reporting.text import render_compare, render_rank_metrics, render_summary
from cce_relevance.reporting.trec import qrels_text, run_text
from cce_relevance.retrieval.backends import Hit, builtin_backend
from cce_relevance.retrieval.chunk import Chunk
from cce_relevance.retrieval.embed import HASH_DOCUMENTS, HASH_EMBEDDER, DocumentEmbedder, hash_embed
from cce_relevance.retrieval.fingerprint import dumps_fingerprint, fingerprint_path
from cce_relevance.retrieval.hybrid import QueryEmbedder
from cce_relevance.retrieval.index import DEFAULT_BUILD, BuildOptions, Index, build_index
from cce_relevance.retrieval.index_cache import default_cache_dir
from cce_relevance.retrieval.languages import EXTRA_LANGUAGES as EXTRA_LANGUAGES
from cce_relevance.retrieval.languages import check_languages, enabled_packs
from cce_relevance.retrieval.ollama import OLLAMA_EMBEDDER, OllamaClient, OllamaError
from cce_relevance.retrieval.registry import Variant, open_backend
from cce_relevance.retrieval.store import default_store_path, dumps_store, load_store
from cce_relevance.retrieval.workers import MAX_AUTO_WORKERS, available_cpus
from cce_relevance.stats.comparison import BackendComparison, compare_pair
from cce_relevance.stats.full_stats import FullStats, StatsLevel, full_stats
from cce_relevance.stats.levels import DEFAULT_PRIMARY as DEFAULT_PRIMARY
from cce_relevance.stats.paired import PairedTest, paired_t
from cce_relevance.stats.power import PowerAnalysis, PowerRow, plan_from_pilot
from cce_relevance.strings import rust_trim

DEFAULT_BACKENDS = ("bm25", "vector", "hybrid")
OLLAMA_STORE_REFUSAL = (  # harness.md §1.9 E16, the reference's words
    "this store was built with the ollama embedder but Ollama is unreachable — refusing to score across "
    "mismatched embedding spaces. Start Ollama, or evaluate a corpus directory with the deterministic hash "
    "embedder (--dir).")

Warn = Callable[[str], None]


def warn_on_stderr(message: str) -> None:
    """`warning: <message>` on stderr: the one thing a successful run may print there (harness.md §1.6)."""
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    tests: dict[str, PairedTest]
    full: FullStats | None = None  # only with stats_level="full"


@dataclass(frozen=True)
class RunResult:
    """Everything a run measured, ready for any renderer."""

    corpus: str
    embedder: str
    fixtures: FixtureSet
    reports: tuple[BackendReport, ...]
    comparison: Comparison | None
    rank_metrics: tuple[RankMetricSpec, ...] = ()  # the `--metrics` selection, in the order asked
    judgments: tuple[Judgments, ...] | None = None  # per case; set when rank metrics or TREC files were asked

    def to_json(self) -> str:
        compare = None
        if self.comparison is not None:
            compare = (self.comparison.a, self.comparison.b, self.comparison.tests)
        full = self.comparison.full if self.comparison is not None else None
        return dumps_report(report_document(self.corpus, self.embedder, len(self.fixtures.cases),
                                            self.reports, compare, full, self.rank_metrics))

    def to_text(self) -> str:
        text = render_summary(self.corpus, self.embedder, len(self.fixtures.cases), self.reports)
        if self.rank_metrics:
            text += render_rank_metrics(self.reports, self.rank_metrics)
        if self.comparison is not None:
            text += render_compare(self.reports[0], self.reports[1], self.comparison.tests)
            if self.comparison.full is not None:
                text += full_text_block(self.comparison.full) + MDE_LEGEND + FULL_LEGEND
        return text

    def trec_qrels(self) -> str:
        """The qrels the rank metrics used (needs `run(..., trec=True)` or `metrics`)."""
        if self.judgments is None:
            raise ValueError("this run was not judged; pass trec=True to run()")
        return qrels_text(self.judgments)

    def trec_runs(self) -> dict[str, str]:
        """One TREC run file per backend, by backend name, in the order scored."""
        return {r.backend: run_text(r) for r in self.reports}


def run_chart(result: RunResult, metric: str = DEFAULT_PRIMARY) -> DeltaChart:
    """Per-query deltas B − A of a `compare` run; `metric` is a report key (`mrr`, or a rank metric
    key such as `ndcg_at_k` when the run computed it)."""
    if result.comparison is None:
        raise CceError("a chart needs a comparison: run with --compare A,B")
    specs = {s.key: s for s in (*METRICS, *result.rank_metrics)}
    if metric not in specs:
        wanted = next((s.name for s in RANK_METRICS if s.key == metric), None)
        raise CceError(f"cannot chart {rust_debug_str(metric)}: "
                       + (f"it needs --metrics {wanted}" if wanted else f"expected one of {', '.join(specs)}"))
    return reports_chart(result.reports[0], result.reports[1], specs[metric])


def compare_chart(comparisons: Sequence[BackendComparison], metric: str = DEFAULT_PRIMARY,
                  backend: str | None = None) -> DeltaChart:
    """Per-query deltas head − base of `metric` for `backend` (default: the first backend scored
    in both reports)."""
    paired = [c for c in comparisons if c.pair.base_means is not None and c.pair.head_means is not None]
    chosen = next((c for c in paired if backend is None or c.pair.backend == backend), None)
    if chosen is None:
        wanted = "no backend is" if backend is None else f"backend {rust_debug_str(backend)} is not"
        names = ", ".join(c.pair.backend for c in paired) or "none"
        raise CceError(f"{wanted} scored in both reports, nothing to chart (backends in both: {names})")
    return comparison_chart(chosen, metric)


def delta_chart_markdown(comparison: BackendComparison, metric: str = DEFAULT_PRIMARY) -> str:
    """One backend's per-query deltas head − base of `metric` as a fenced ```mermaid block (GitHub
    renders it), for the Action's comment. `CceError` when no query is paired or the key is unknown."""
    return mermaid_block(comparison_chart(comparison, metric))


def parse_metric_list(value: str) -> tuple[RankMetricSpec, ...]:
    """`--metrics` comma list (ndcg, ap, hit, rprec) → specs in first-occurrence order."""
    by_name = {spec.name: spec for spec in RANK_METRICS}
    chosen: list[RankMetricSpec] = []
    for piece in value.split(","):
        name = piece.strip()
        if not name:
            continue
        if name not in by_name:
            raise CceError(f"unknown metric {rust_debug_str(name)} (expected {', '.join(by_name)})")
        if by_name[name] not in chosen:
            chosen.append(by_name[name])
    if not chosen:
        raise CceError(f"--metrics requires at least one of {', '.join(by_name)}")
    return tuple(chosen)


def open_corpus(path: str, *, protect_secrets: bool = True, embedder: DocumentEmbedder = HASH_DOCUMENTS,
                languages: Sequence[str] = (), indexing: BuildOptions = DEFAULT_BUILD) -> Index:
    """Index a corpus directory in memory (E18 when it is not one).

    `languages` names extra language packs to chunk with (none: the reference's six only);
    `indexing` says how (cache, worker processes, progress; see `build_options`).
    """
    packs = enabled_packs(languages)
    return build_index(require_directory(path), protect_secrets, embedder, packs, cache=indexing.cache,
                       workers=indexing.workers, progress=indexing.progress)


def build_options(cache_dir: str | None = None, *, use_cache: bool = True,
                  progress: Callable[[int, int], None] | None = None) -> BuildOptions:
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


def parse_language_list(value: str) -> tuple[str, ...]:
    """`--languages go,java` → the extra languages named; an empty list turns them all off."""
    return check_languages(name for piece in value.split(",") if (name := rust_trim(piece)))


def require_directory(path: str) -> str:
    """`path` when it is a directory, else E18."""
    if not os.path.isdir(path):
        raise CceError(f"corpus is not a directory: {path}")
    return path


def query_embedder(index: Index, warn: Warn = warn_on_stderr) -> QueryEmbedder:
    """How queries are embedded for `index` (harness.md §1.5–§1.6): Ollama for an `ollama` store, else hash.

    An Ollama store is scored only after a health check passes (E16 otherwise, nothing scored);
    a later per-query failure is a warning and that query loses vector recall.
    """
    if index.embedder != OLLAMA_EMBEDDER:
        return hash_embed
    client = OllamaClient.from_env()
    try:
        client.check_health()
    except OllamaError:
        raise CceError(OLLAMA_STORE_REFUSAL) from None
    return client.forgiving_query_embedder(warn)


def resolve_index(fixtures: FixtureSet, fixtures_arg: str, dir: str | None, store: str | None,
                  languages: Sequence[str] = (), indexing: BuildOptions = DEFAULT_BUILD,
                  index: Index | None = None) -> tuple[str, Index]:
    """The corpus display string and its index: `--store` > `--dir` > header `corpus` (§1.4).

    `languages` and `indexing` apply to a directory; a store's chunks were made when it was written.
    `index`, when given, is that directory's index made already, and is not made again.
    """
    if store is not None:
        return store, load_store(store)
    display = dir if dir is not None else header_corpus(fixtures, fixtures_arg)
    return display, index if index is not None else open_corpus(display, languages=languages, indexing=indexing)


def header_corpus(fixtures: FixtureSet, fixtures_arg: str) -> str:
    """The header's `corpus` joined onto the fixture file's directory: the report's corpus string."""
    if not fixtures.corpus:
        raise CceError('no corpus: pass --dir <corpus>, or declare "corpus" in the fixture header line')
    return corpus_dir(fixtures_arg, fixtures.corpus)


def check_backend(name: str, config: ProjectConfig = NO_CONFIG) -> None:
    """E19 unless `name` is a built-in backend or one of `config`'s (or why `config` refuses it)."""
    if name in config.refused:
        raise CceError(f"backend {rust_debug_str(name)} is an external retriever: {config.refused[name]}")
    if name not in config.names:
        expected = "bm25, vector, or hybrid"
        if config.backends:
            expected = f"bm25, vector, hybrid, or a backend of {config.path}: {', '.join(config.backends)}"
        raise CceError(f"unknown backend {rust_debug_str(name)} (expected {expected})")


def parse_backend_list(value: str, config: ProjectConfig = NO_CONFIG) -> list[str]:
    """Comma list → distinct backend names in first-occurrence order (E19, E20).

    Names are the built-ins and the backends of `config`; E19 lists the configured ones only when
    there are some, so without a config file its text is the reference's.
    """
    names: list[str] = []
    for piece in value.split(","):
        name = rust_trim(piece)
        if not name:
            continue
        check_backend(name, config)
        if name not in names:
            names.append(name)
    if not names:
        raise CceError("--backend requires at least one of bm25, vector, hybrid")
    return names


def parse_compare_pair(value: str, config: ProjectConfig = NO_CONFIG) -> tuple[str, str]:
    names = parse_backend_list(value, config)
    if len(names) != 2:
        raise CceError("--compare requires exactly two distinct backends, e.g. bm25,hybrid")
    return names[0], names[1]


def metric_deltas(a: BackendReport, b: BackendReport) -> list[tuple[str, list[float]]]:
    """Per metric key, the per-case deltas B − A in case order (harness.md §4.1)."""
    return [(spec.key, [vb - va for va, vb in zip(a.metric(spec.attr), b.metric(spec.attr), strict=True)])
            for spec in METRICS]


def compare_reports(a: BackendReport, b: BackendReport) -> dict[str, PairedTest]:
    """Paired t-test per metric over the per-case deltas B − A (harness.md §4.1)."""
    return {key: paired_t(deltas) for key, deltas in metric_deltas(a, b)}


def run(fixtures_path: str, *, dir: str | None = None, store: str | None = None,
        backends: str | None = None, compare: str | None = None, warn: Warn = warn_on_stderr,
        stats_level: StatsLevel = "reference", primary: str = DEFAULT_PRIMARY,
        config: ProjectConfig = NO_CONFIG, metrics: str | None = None, trec: bool = False,
        languages: Sequence[str] | None = None, indexing: BuildOptions = DEFAULT_BUILD,
        index: Index | None = None, fixtures: FixtureSet | None = None) -> RunResult:
    """Evaluate a fixture set, in the reference's order of checks (harness.md §1.3).

    `metrics` (a `--metrics` list) adds rank metrics; it and `trec` (TREC export wanted) make the
    run read each case's `grades` and judge every corpus chunk against every case
    (`RunResult.judgments`). Without them the fixtures are read exactly as the reference does.

    With `compare` and `stats_level="full"` the comparison also carries `full_stats`, naming
    `primary` (a metric key) the primary metric. `config` (see `load_config`) adds the project's
    backend variants and external retrievers to the names `backends` and `compare` may use.
    `languages` (extra language packs) defaults to the config's `languages`; `indexing` says how
    a corpus directory is indexed (`build_options`). A caller that has made the corpus directory's
    index already (`open_corpus`, with the same languages) passes it as `index`, and one that has
    read the set already passes it as `fixtures` (`load_fixtures(fixtures_path)`, with `grades=True`
    when `metrics` or `trec` are asked): the Action scores a set and checks its anchors with one
    of each.
    """
    rank_metrics = parse_metric_list(metrics) if metrics is not None else ()
    judged = bool(rank_metrics) or trec
    if fixtures is None:
        fixtures = load_fixtures(fixtures_path, grades=judged)
    corpus, index = resolve_index(fixtures, fixtures_path, dir, store,
                                  config.languages if languages is None else languages, indexing, index)
    embed = query_embedder(index, warn)
    if compare is not None:
        names = list(parse_compare_pair(compare, config))
    elif backends is not None:
        names = parse_backend_list(backends, config)
    else:
        names = list(DEFAULT_BACKENDS)
    weights = LineWeights.of_index(index)
    judgments = None
    if judged:
        anchors = anchor_index(index)
        judgments = tuple(judge(c, index.chunks, anchors) for c in fixtures.cases)
    reports = tuple(_evaluated(names, config, index, embed, fixtures.cases, weights, judgments, indexing))
    comparison = None
    if compare is not None:
        full = None
        if stats_level == "full":
            full = full_stats(metric_deltas(reports[0], reports[1]), primary)
        comparison = Comparison(names[0], names[1], compare_reports(reports[0], reports[1]), full)
    return RunResult(corpus, index.embedder, fixtures, reports, comparison, rank_metrics, judgments)


def _evaluated(names: Sequence[str], config: ProjectConfig, index: Index, embed: QueryEmbedder,
               cases: Sequence[Case], weights: LineWeights, judgments: Sequence[Judgments] | None,
               indexing: BuildOptions) -> list[BackendReport]:
    """Every backend's report. Built-in rankings over hash embeddings score their cases in worker
    processes when there are several CPUs (`indexing.workers` caps them, as it does indexing);
    anything holding a process, a connection or a remote embedder runs here, one backend after
    the other, each opened only for its own run."""
    variants = [spec for spec in map(config.spec, names) if isinstance(spec, Variant)]
    if embed is hash_embed and len(variants) == len(names) and can_fork():
        processes = indexing.workers if indexing.workers is not None else min(available_cpus(), MAX_AUTO_WORKERS)
        searches = [(name, builtin_backend(v.base, index, v.params, embed)) for name, v in zip(names, variants, strict=True)]
        return evaluate_backends(searches, cases, weights, judgments, processes)
    evaluated = []
    for name in names:
        with open_backend(name, config.spec(name), index, embed) as search_fn:
            evaluated.append(evaluate_backend(name, search_fn, cases, weights, judgments))
    return evaluated


SEARCH_QUERY_ID = "search"  # the id an external retriever sees for `search`'s one query


def search(corpus: str, query: str, backend: str = "hybrid", k: int = 10,
           config: ProjectConfig = NO_CONFIG, languages: Sequence[str] | None = None,
           indexing: BuildOptions = DEFAULT_BUILD) -> list[tuple[Hit, str]]:
    """One query through one backend over a corpus directory, with each hit's first line.

    `languages` (extra language packs) defaults to the config's `languages`.
    """
    check_backend(backend, config)
    index = open_corpus(corpus, languages=config.languages if languages is None else languages, indexing=indexing)
    with open_backend(backend, config.spec(backend), index) as search_fn:
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


def chunks(corpus: str, languages: Sequence[str] = (), indexing: BuildOptions = DEFAULT_BUILD) -> list[Chunk]:
    """Every chunk of a corpus directory in index order (the conformance listing's input)."""
    return open_corpus(corpus, languages=languages, indexing=indexing).chunks


def validate(fixtures_path: str, *, dir: str | None = None, languages: Sequence[str] = (),
             grades: bool = True, indexing: BuildOptions = DEFAULT_BUILD) -> Validation:
    """Anchor hygiene of a fixture set against its corpus (`--dir`, else the header's corpus).

    Grades are read and checked too, unless `grades=False`: the Action reads a set as `run` does,
    so a malformed `grades` object (which `run` ignores) cannot fail it. For the Action:
    `validate(...).stale_anchors()` maps each query id to its anchors that resolve to nothing, to
    label such a miss as stale.
    """
    fixtures = load_fixtures(fixtures_path, grades=grades)
    corpus, index = resolve_index(fixtures, fixtures_path, dir, None, languages, indexing)
    return check_anchors(fixtures_path, fixtures, corpus, index)


def check_anchors(fixtures_path: str, fixtures: FixtureSet, corpus: str, index: Index) -> Validation:
    """`validate` of a fixture set already read (`RunResult.fixtures`) against an index already made
    of its corpus (`corpus` is its display string): what the Action does after scoring a set, so
    neither is read or made twice."""
    return validate_cases(fixtures_path, corpus, fixtures.cases, anchor_index(index), index.line_counts or {})


def anchor_index(index: Index) -> AnchorIndex:
    """Anchor lookups in `index`'s chunks, through the chunks by file that ranking keeps."""
    return AnchorIndex(index.chunks, index.chunks_by_file)


@dataclass(frozen=True)
class StoreWritten:
    """What `index_corpus` wrote: the store, its fingerprint, and what the store holds."""

    path: str
    fingerprint: str
    embedder: str
    files: int
    chunks: int
    size: int


def _document_embedder(name: str) -> tuple[DocumentEmbedder, str | None]:
    """The index-time embedder called `name`, and the model it records (Ollama only)."""
    if name == HASH_EMBEDDER:
        return HASH_DOCUMENTS, None
    if name != OLLAMA_EMBEDDER:
        raise CceError(f"unknown embedder {name!r} (expected hash or ollama)")
    client = OllamaClient.from_env()
    try:
        client.check_health()
    except OllamaError as exc:
        raise CceError(f"Ollama is not ready: {exc}",
                       hint="start Ollama (or set CCE_OLLAMA_URL / CCE_OLLAMA_MODEL), or index with --embedder hash"
                       ) from None
    return client.documents(), client.model


def index_corpus(directory: str, *, out: str | None = None, embedder: str = HASH_EMBEDDER,
                 allow_secrets: bool = False, languages: Sequence[str] = (),
                 indexing: BuildOptions = DEFAULT_BUILD) -> StoreWritten:
    """Index `directory` and write the reference's store (pipeline.md §14) plus our fingerprint beside it.

    The default path is `<directory>/.cce/index.json`, whose `.cce` the walker never indexes.
    An Ollama build checks the server before walking and writes nothing when any batch fails.
    """
    require_directory(directory)
    packs = enabled_packs(languages)
    documents, model = _document_embedder(embedder)
    try:
        index = build_index(directory, not allow_secrets, documents, packs, cache=indexing.cache,
                            workers=indexing.workers, progress=indexing.progress)
    except OllamaError as exc:
        raise CceError(f"embedding with Ollama failed, nothing was written: {exc}") from None
    path = out if out is not None else default_store_path(directory)
    text = dumps_store(index)
    data = text.encode("utf-8")
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    except OSError as exc:
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from None
    write_atomically(path, text)
    fingerprint = fingerprint_path(path)
    write_atomically(fingerprint, dumps_fingerprint(index, data, redaction=not allow_secrets, model=model,
                                                    languages=packs.names))
    return StoreWritten(path, fingerprint, index.embedder, len(index.file_tokens), len(index.chunks), len(data))


def golden_diff(golden_path: str, report_json: str, *, label: str | None = None, missing_hint: str) -> str:
    """The unified diff from the golden report at `golden_path` to `report_json`; '' when identical.

    Drift means the bytes differ, so the file is read without newline translation. A missing
    golden is an input error whose hint (`missing_hint`) says how this front door creates one.
    `label` names the golden in the diff header (default: `golden_path`).
    """
    label = golden_path if label is None else label
    try:
        with open(golden_path, encoding="utf-8", newline="") as fh:
            expected = fh.read()
    except FileNotFoundError:
        raise CceError(f"golden report not found: {label}", hint=missing_hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CceError(f"could not read golden report {label}: {exc}") from None
    if expected == report_json:
        return ""
    return "".join(difflib.unified_diff(expected.splitlines(keepends=True), report_json.splitlines(keepends=True),
                                        fromfile=f"{label} (golden)", tofile="current run"))


def load_report(path: str) -> Any:
    """A saved run report (`run --json`), as JSON data; unreadable or invalid files are input errors."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise CceError(f"could not read report {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CceError(f"could not read report {path}: invalid JSON: {exc}") from None


def compare_saved(base: Any, head: Any, base_label: str = "base", head_label: str = "head", *,
                  stats_level: StatsLevel = "reference", primary: str = DEFAULT_PRIMARY) -> list[BackendComparison]:
    """Pair two run reports by backend and query id, with paired statistics per metric.

    `stats_level="full"` adds each backend's `full_stats` (`BackendComparison.full`), with
    `primary` (a metric key) named the primary metric; the Markdown renderer then shows them.
    """
    return [compare_pair(p, stats_level, primary) for p in pair_reports(base, head, base_label, head_label)]


def power_analysis(path: str, delta: float, *, alpha: float = 0.05, power: float = 0.8,
                   metric: str | None = None) -> PowerAnalysis:
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
    rows = tuple(PowerRow(s.comparison, s.metric, plan_from_pilot(s.deltas, delta, alpha, power))
                 for s in samples if metric is None or s.metric == metric)
    return PowerAnalysis(path, delta, alpha, power, rows)

