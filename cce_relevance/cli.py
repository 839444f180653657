"""The `cce-relevance` command line: parse arguments, call `api`, render, map errors to exit codes.

Expected failures are `CceError`s: printed as one `error: …` line on stderr with the error's
exit code (2 for usage and input errors, 1 for a failed gate). Argument-parser errors are
click's, also exit 2. Standard output that cannot be written (a full disk, a closed pipe) is
exit 2 with a message; any other exception is a bug, reported in one line with exit 70
(`errors.internal_error`).

Output contract: a command decides everything that can fail before it prints, so an exit 2
leaves standard output empty; files it writes are staged and committed together (`outputs`).
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from cce_relevance import __version__, schemas
from cce_relevance.errors import EXIT_USAGE, TRACEBACK_VARIABLE, CceError, GateFailed, internal_error
from cce_relevance.evaluation.history import DEFAULT_MAX_DEFINITIONS
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRIC_KEYS
from cce_relevance.lazy_import import lazy_module
from cce_relevance.memory_pages import prefer_small_pages
from cce_relevance.outputs import OutputSet, write_output
from cce_relevance.progress import progress_bar
from cce_relevance.reference import BUILTIN_BACKENDS, HASH_EMBEDDER, listed
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.retrieval.chunking.languages import EXTRA_LANGUAGES
from cce_relevance.stats.stats_level import STATS_LEVELS, StatsLevel
from cce_relevance.strings import rust_trim

PER_QUERY_FORMATS = ("text", "csv", "tsv")  # reporting/per_query.py renders them

# The library (numpy, tree-sitter grammars, requests) loads when a command first uses it, and the
# renderers are imported inside the commands that print them: `--help` starts fast.
if TYPE_CHECKING:
    from cce_relevance import api
else:
    api = lazy_module("cce_relevance.api")


class _Group(click.Group):
    """Turns `CceError` into `error: <message>` and its exit code, and anything else into the
    one-line internal error (exit 70); never a traceback."""

    def main(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return super().main(*args, **kwargs)
        except OSError as exc:  # click's own text (help, usage) met a full or closed stdout
            _report(_stdout_error(exc))
            sys.exit(EXIT_USAGE)
        except SystemExit:
            if type(sys.stdout).__name__ == "_PacifyFlushWrapper":  # click swallowed a broken pipe
                _report(_stdout_error(OSError(errno.EPIPE, os.strerror(errno.EPIPE))))
                sys.exit(EXIT_USAGE)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except CceError as exc:
            _report(exc)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            if exc.errno in (errno.EPIPE, errno.ENOSPC):  # click's text (a subcommand's --help)
                _report(_stdout_error(exc))
                ctx.exit(EXIT_USAGE)
            _report_bug(exc)
        except Exception as exc:  # noqa: BLE001 - the boundary: a bug is reported, not a traceback
            _report_bug(exc)


def _report(exc: CceError) -> None:
    click.echo(f"error: {exc.message}", err=True)
    if exc.hint:
        click.echo(f"hint: {exc.hint}", err=True)


def _report_bug(exc: Exception) -> None:
    """Print the one-line internal error (and the traceback when asked for) and exit 70."""
    if os.environ.get(TRACEBACK_VARIABLE):
        traceback.print_exception(exc, file=sys.stderr)
    error = internal_error(exc)
    _report(error)
    sys.exit(error.exit_code)


def _stdout_error(exc: OSError) -> CceError:
    """Standard output failed: point it at /dev/null so the exit's own flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return CceError(f"could not write to standard output: {exc.strerror or exc}")


def _emit(text: str) -> None:
    """Print a command's result on stdout and flush it, so a full disk or a closed pipe is an
    `error:` (exit 2) here rather than a traceback at exit."""
    try:
        click.echo(text, nl=False)
        sys.stdout.flush()
    except UnicodeEncodeError as exc:
        raise CceError(
            f"standard output ({exc.encoding}) cannot show {exc.object[exc.start : exc.end]!r}",
            hint="set PYTHONIOENCODING=utf-8, or write the report to a file with --output",
        ) from None
    except OSError as exc:
        raise _stdout_error(exc) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cce-relevance")
def main() -> None:
    """Score retrieval ranking against labeled fixtures, query by query, with honest statistics."""
    prefer_small_pages()


_CONFIG_HELP = (
    "Backend variants, external retrievers and extra languages (default: cce-relevance.toml in the "
    "working directory or the nearest one above it, up to the repository root)."
)


def _languages_option(command: Callable[..., None]) -> Callable[..., None]:
    """`--languages`, shared by every command that indexes a directory."""
    return click.option(
        "--languages",
        "languages_flag",
        metavar="LIST",
        help=f"Also chunk these languages: any of {','.join(EXTRA_LANGUAGES)} (replaces the "
        "config file's `languages`; '' for none). Default: the reference's six only.",
    )(command)


def comma_list(value: str, trim: Callable[[str], str] = rust_trim) -> list[str]:
    """A comma-separated flag value (`--backend`, `--compare`, `--metrics`, `--languages`) → its
    pieces, trimmed (as the reference trims: Rust's `str::trim`), empty ones dropped. Names are
    checked by `api`, at the point of the run where the reference checks them."""
    return [name for piece in value.split(",") if (name := trim(piece))]


def _languages(flag: str | None, config: api.ProjectConfig) -> tuple[str, ...]:
    """The extra languages to chunk: `--languages` when given, else the config file's `languages`."""
    return config.languages if flag is None else api.check_languages(comma_list(flag))


def _cache_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--cache DIR` and `--no-cache`, shared by every command that indexes a directory."""
    command = click.option(
        "--no-cache",
        is_flag=True,
        help="Index every file (and embed every text) again; do not read or write the caches.",
    )(command)
    return click.option(
        "--cache",
        "cache_dir",
        metavar="DIR",
        help="Cache directory: unchanged files are not indexed again, unchanged texts not embedded again "
        "(default: $XDG_CACHE_HOME/cce-relevance, else ~/.cache/cce-relevance).",
    )(command)


def _indexing(cache_dir: str | None, no_cache: bool, quiet: bool) -> api.BuildOptions:
    """How to index: the cache flags, and a progress bar on stderr unless `quiet` (JSON output)."""
    if cache_dir is not None and no_cache:
        raise click.UsageError("--cache and --no-cache cannot be used together")
    if cache_dir == "":
        raise click.UsageError("a value is required for '--cache' but none was supplied")
    return api.build_options(
        cache_dir, use_cache=not no_cache, progress=progress_bar(sys.stderr, quiet=quiet)
    )


@main.command()
@click.argument("directory", metavar="DIR")
@click.option("--json", "as_json", is_flag=True, help="Print the conformance.json document.")
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def chunks(
    directory: str,
    as_json: bool,
    languages_flag: str | None,
    config_path: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """List every chunk of DIR with its symbol (the conformance listing)."""
    from cce_relevance.reporting import search_view

    config = api.load_config(config_path)
    languages = _languages(languages_flag, config)
    found = api.chunks(
        api.require_directory(directory), languages, _indexing(cache_dir, no_cache, as_json), config
    )
    if as_json:
        _emit(search_view.conformance_document(found))
    else:
        symbols = api.corpus_symbols(directory, languages)
        _emit(search_view.conformance_table(found, symbols.of_chunk))


@main.command()
@click.argument("directory", metavar="DIR")
@click.argument("query")
@click.option(
    "--backend",
    metavar="NAME",
    default="hybrid",
    show_default=True,
    help=f"Ranking backend: {listed(BUILTIN_BACKENDS)}, or one of the config file's backends.",
)
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Number of results.")
@click.option("--json", "as_json", is_flag=True, help="Print result records as JSON.")
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_languages_option
@_cache_options
def search(
    directory: str,
    query: str,
    backend: str,
    k: int,
    as_json: bool,
    config_path: str | None,
    languages_flag: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Run QUERY over DIR through one backend and show ranks, scores, spans and kinds."""
    from cce_relevance.reporting import search_view

    config = api.load_config(config_path)
    corpus = api.require_directory(directory)
    results = api.search(
        corpus,
        query,
        backend,
        k,
        config,
        _languages(languages_flag, config),
        _indexing(cache_dir, no_cache, as_json),
    )
    hits = [h for h, _ in results]
    _emit(
        search_view.hits_json(hits) if as_json else search_view.hits_text(hits, [line for _, line in results])
    )


@main.command()
@click.argument("directory", metavar="DIR")
@click.option("--out", metavar="PATH", help="Store file to write (default DIR/.cce/index.json).")
@click.option(
    "--embedder",
    metavar="NAME",
    default=HASH_EMBEDDER,
    show_default=True,
    help="Chunk embedder: hash, ollama (reads CCE_OLLAMA_URL and CCE_OLLAMA_MODEL), wordllama (the "
    "semantic extra), openai (OPENAI_API_KEY), or an [embedders.NAME] table of the config.",
)
@click.option(
    "--allow-secrets",
    is_flag=True,
    help="Turn secret protection off: index sensitive files and unredacted text.",
)
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def index(
    directory: str,
    out: str | None,
    embedder: str,
    allow_secrets: bool,
    languages_flag: str | None,
    config_path: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Index DIR and write the reference's persisted store (index.json) with a fingerprint beside it."""
    if out == "":
        raise click.UsageError("a value is required for '--out' but none was supplied")
    config = api.load_config(config_path)
    if allow_secrets:
        click.echo("warning: --allow-secrets: secret protection is off; files are indexed verbatim", err=True)
    written = api.index_corpus(
        directory,
        out=out,
        embedder=embedder,
        allow_secrets=allow_secrets,
        languages=_languages(languages_flag, config),
        indexing=_indexing(cache_dir, no_cache, False),
        config=config,
    )
    fingerprint = f"wrote {written.fingerprint}\n" if written.fingerprint is not None else ""
    _emit(
        f"wrote {written.path}: {written.chunks} chunks from {written.files} files, "
        f"embedder {written.embedder}, {written.size} bytes\n{fingerprint}"
    )


def _golden_drift(golden: str, report: str) -> str:
    """The diff from `golden` to `report` ('' when identical); a missing or unreadable golden is
    an input error, raised before anything is printed or written."""
    return api.golden_diff(golden, report, missing_hint="run again with --update-golden to create it")


def _fail_on_drift(golden: str, diff: str) -> None:
    """A drifted golden: its diff on stderr and exit 1; a matching one: one line on stderr."""
    if not diff:
        click.echo(f"golden report {golden} matches", err=True)
        return
    sys.stderr.write(diff)
    raise GateFailed(
        f"report drifted from golden {golden}",
        hint="review the diff; if the change is intended, rerun with --update-golden",
    )


def _golden_change(golden: str, report: str) -> str:
    """What `--update-golden` will do to `golden` (created, updated or unchanged), read before the
    run's outputs are committed; said on stderr in one line once they are."""
    try:
        with open(golden, encoding="utf-8", newline="") as handle:
            before: str | None = handle.read()
    except (OSError, UnicodeDecodeError):
        before = None
    return "created" if before is None else "unchanged" if before == report else "updated"


_STATS_HELP = (
    "reference: the paired t-test the reference prints (default). full: also wins/losses/ties, d_z, "
    "a permutation p, a bootstrap CI, Holm-adjusted p and the MDE (docs/statistics.md)."
)


def _stats_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--stats` and `--primary-metric`, shared by `run` and `compare`."""
    command = click.option(
        "--primary-metric",
        metavar="KEY",
        help=f"With --stats full: the metric named primary (default {DEFAULT_PRIMARY}): "
        f"{', '.join(METRIC_KEYS)}, or a --metrics key such as ndcg_at_k.",
    )(command)
    return click.option(
        "--stats",
        "stats_level",
        type=click.Choice(STATS_LEVELS),
        default="reference",
        show_default=True,
        help=_STATS_HELP,
    )(command)


def _primary(stats_level: str, primary: str | None) -> str:
    if primary is not None and stats_level != "full":
        raise click.UsageError("--primary-metric needs --stats full")
    return DEFAULT_PRIMARY if primary is None else primary


def _chart_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--chart` and `--chart-metric`, shared by `run --compare` and `compare`."""
    command = click.option(
        "--chart-metric",
        metavar="KEY",
        help=f"Metric to chart (default {DEFAULT_PRIMARY}): {', '.join(METRIC_KEYS)}, "
        "or a --metrics key the run or both reports carry, such as ndcg_at_k.",
    )(command)
    return click.option(
        "--chart",
        metavar="FILE",
        help="Also write per-query deltas as a chart: FILE.md (Mermaid block), FILE.mmd "
        "(Mermaid diagram) or FILE.svg.",
    )(command)


def _chart_metric(chart: str | None, metric: str | None) -> str:
    if metric is not None and chart is None:
        raise click.UsageError("--chart-metric needs --chart FILE")
    return DEFAULT_PRIMARY if metric is None else metric


def _trec_files(result: api.RunResult, run_path: str | None, qrels_path: str | None) -> dict[str, str]:
    """`--trec-qrels` and `--trec-run` contents; `{backend}` in the run path names one file per backend."""
    from cce_relevance.reporting.trec import run_files, run_qrels

    files = {}
    if qrels_path is not None:
        files[qrels_path] = run_qrels(result)
    if run_path is not None:
        runs = run_files(result)
        if len(runs) > 1 and "{backend}" not in run_path:
            raise click.UsageError(
                "--trec-run needs a {backend} placeholder when more than one backend is scored "
                "(trec_eval reads one run per file), e.g. --trec-run 'runs/{backend}.run'"
            )
        for name, text in runs.items():
            files[run_path.replace("{backend}", name)] = text
    return files


@main.command()
@click.argument("fixtures")
@click.option(
    "--dir", "corpus_dir", metavar="DIR", help="Corpus directory to index (overrides the fixture header)."
)
@click.option(
    "--store", metavar="STORE", help="Evaluate an existing persisted index file instead of a directory."
)
@click.option(
    "--backend",
    "backends",
    metavar="LIST",
    help=f"Comma-separated backends (default {','.join(BUILTIN_BACKENDS)}).",
)
@click.option(
    "--compare",
    metavar="A,B[,C...]",
    help="Two backends: per-query deltas and a paired t-test; three or "
    "more: every pair (Holm-corrected) and a randomised Tukey HSD.",
)
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.REPORT} JSON.")
@click.option("--output", metavar="FILE", help="Write the report to FILE (atomically) instead of stdout.")
@click.option(
    "--golden", metavar="FILE", help="Fail (exit 1) with a diff when the JSON report differs from FILE."
)
@click.option("--update-golden", is_flag=True, help="Rewrite the --golden file with this run's JSON report.")
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_languages_option
@_stats_options
@click.option(
    "--metrics",
    metavar="LIST",
    help="Also report rank metrics: any of ndcg,ap,hit,rprec,judged, cut-offs such as "
    "ndcg@10,p@1,recall@20, token budgets such as recall@budget=2000,tok-recall@budget=2000, and "
    "ttfr, the tokens to the first relevant hit (docs/metrics.md).",
)
@click.option(
    "--per-query",
    "per_query",
    type=click.Choice(PER_QUERY_FORMATS),
    help="Print per-query results instead of the report: text (each query's first relevant rank and "
    "top hits, relevant ones marked *, ones no anchor labels ?), or csv/tsv (one row per query x "
    "backend x metric, like trec_eval -q).",
)
@click.option(
    "--trec-run", metavar="FILE", help="Write each backend's TREC run; {backend} in FILE is its name."
)
@click.option(
    "--trec-qrels", metavar="FILE", help="Write the TREC qrels (relevant chunk ids) the evaluation used."
)
@_chart_options
@_cache_options
@click.option(
    "--shard",
    "shard_text",
    metavar="I/N",
    help="Score only the queries whose id hashes to shard I of N (needs --shard-state).",
)
@click.option("--shard-state", metavar="FILE", help="Write the shard's per-query values for `merge` to FILE.")
@click.option(
    "--cost",
    is_flag=True,
    help="Also report each backend's query latency (p50/p95/max/total) and its embedder's calls, texts, "
    "tokens and cache hits; in JSON under a `cost` key that --golden never compares or writes.",
)
def run(
    fixtures: str,
    corpus_dir: str | None,
    store: str | None,
    backends: str | None,
    compare: str | None,
    as_json: bool,
    output: str | None,
    golden: str | None,
    update_golden: bool,
    config_path: str | None,
    languages_flag: str | None,
    stats_level: StatsLevel,
    primary_metric: str | None,
    metrics: str | None,
    trec_run: str | None,
    trec_qrels: str | None,
    chart: str | None,
    chart_metric: str | None,
    cache_dir: str | None,
    no_cache: bool,
    per_query: str | None,
    shard_text: str | None,
    shard_state: str | None,
    cost: bool,
) -> None:
    """Score the FIXTURES set (cce.relevance/v1 NDJSON) at each backend."""
    from cce_relevance.reporting.chart import chart_renderer, run_chart

    if chart is not None and compare is None:
        raise click.UsageError("--chart needs --compare A,B")
    chart_metric = _chart_metric(chart, chart_metric)
    render_chart = chart_renderer(chart) if chart else None
    primary = _report_checks(
        stats_level, primary_metric, compare, store, corpus_dir, update_golden, golden, per_query, as_json
    )
    if store is not None and languages_flag is not None:
        raise click.UsageError(
            "--languages applies to a directory; a store's chunks were made when it was indexed"
        )
    if compare is not None and backends is not None:
        raise click.UsageError("the argument '--compare <A,B>' cannot be used with '--backend <LIST>'")
    _require_values(
        ("--dir", corpus_dir),
        ("--store", store),
        ("--output", output),
        ("--golden", golden),
        ("--config", config_path),
        ("--metrics", metrics),
        ("--trec-run", trec_run),
        ("--trec-qrels", trec_qrels),
        ("--chart", chart),
    )
    shard = _shard(shard_text, shard_state, compare=compare, golden=golden, trec=trec_run or trec_qrels)
    config = api.load_config(config_path)
    result = api.run(
        fixtures,
        dir=corpus_dir,
        store=store,
        config=config,
        shard=shard,
        backends=None if backends is None else comma_list(backends),
        compare=None if compare is None else comma_list(compare),
        stats_level=stats_level,
        primary=primary,
        metrics=None if metrics is None else comma_list(metrics, str.strip),
        trec=trec_run is not None or trec_qrels is not None,
        languages=_languages(languages_flag, config),
        indexing=_indexing(cache_dir, no_cache, as_json),
        outputs=api.own_outputs([output, golden, trec_run, trec_qrels, chart], config),
        labels=per_query == "text",
    )
    side_files = _trec_files(result, trec_run, trec_qrels)
    if shard is not None and shard_state is not None:
        side_files[shard_state] = api.shard_state(result, fixtures, shard)
    if chart is not None and render_chart is not None:
        side_files[chart] = render_chart(run_chart(result, chart_metric))
    _write_report(result, side_files, as_json, output, golden, update_golden, per_query, cost)


def _report_checks(
    stats_level: StatsLevel,
    primary_metric: str | None,
    compare: str | None,
    store: str | None,
    corpus_dir: str | None,
    update_golden: bool,
    golden: str | None,
    per_query: str | None,
    as_json: bool,
) -> str:
    """The usage checks `run` and `score` share; returns the primary metric."""
    if stats_level == "full" and compare is None:
        raise click.UsageError("--stats full needs --compare A,B")
    primary = _primary(stats_level, primary_metric)
    if store is not None and corpus_dir is not None:
        raise click.UsageError("the argument '--store <STORE>' cannot be used with '--dir <DIR>'")
    if update_golden and golden is None:
        raise click.UsageError("--update-golden needs --golden FILE")
    if per_query is not None and as_json:
        raise click.UsageError(
            "--per-query and --json cannot be used together (the JSON report has per_query)"
        )
    return primary


def _require_values(*options: tuple[str, str | None]) -> None:
    """A usage error for the first option given an empty value."""
    for name, value in options:
        if value == "":
            raise click.UsageError(f"a value is required for '{name}' but none was supplied")


def _write_report(
    result: api.RunResult,
    side_files: dict[str, str],
    as_json: bool,
    output: str | None,
    golden: str | None,
    update_golden: bool,
    per_query: str | None,
    cost: bool = False,
) -> None:
    """Write the run's files and print the report (JSON, text or `--per-query`), then check the golden.

    Everything that can fail (an unreadable golden, an unwritable output) is decided before anything
    is printed, and the files (side files, golden, `--output`) are committed together or not at all.
    The golden is the report without `cost`, whether or not `--cost` was given.
    """
    from cce_relevance.reporting.run_report import run_report_json, run_report_per_query, run_report_text

    report_json = run_report_json(result)
    if as_json:
        rendered = run_report_json(result, cost=True) if cost else report_json
    elif per_query is None:
        rendered = run_report_text(result, cost)
    else:
        rendered = run_report_per_query(result, per_query, cost)
    golden_change = _golden_change(golden, report_json) if golden is not None and update_golden else ""
    drift = _golden_drift(golden, report_json) if golden is not None and not update_golden else ""
    with OutputSet() as outputs:
        for path, text in side_files.items():
            outputs.stage(path, text)
        if golden is not None and update_golden:
            outputs.stage(golden, report_json)
        if output is not None:
            outputs.stage(output, rendered)
        outputs.commit()
    if golden_change:
        click.echo(f"golden report {golden} {golden_change}", err=True)
    if output is None:
        _emit(rendered)
    if golden is not None and not update_golden:
        _fail_on_drift(golden, drift)


def _shard(text: str | None, state: str | None, **refused: str | None) -> api.Shard | None:
    """The `--shard` of a run, which needs `--shard-state` and scores backends only."""
    if (text is None) != (state is None):
        raise click.UsageError("--shard I/N and --shard-state FILE go together")
    if text is None:
        return None
    for name, value in refused.items():
        if value:
            raise click.UsageError(f"--shard cannot be used with --{name}: merge the shards, then compare")
    try:
        return api.parse_shard(text)
    except CceError as exc:
        raise click.UsageError(exc.message) from None


@main.command()
@click.argument("states", metavar="STATE...", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.REPORT} JSON.")
@click.option("--output", metavar="FILE", help="Write the report to FILE (atomically) instead of stdout.")
@click.option(
    "--golden", metavar="FILE", help="Fail (exit 1) with a diff when the JSON report differs from FILE."
)
def merge(states: tuple[str, ...], as_json: bool, output: str | None, golden: str | None) -> None:
    """Put a sharded run back together: the report of the unsharded run, byte for byte.

    Each STATE is a `run --shard I/N --shard-state FILE` file, or a directory of them. The shards
    must be 1..N of one run (same fixture file, corpus and backends), each query scored once."""
    _write_report(api.merge_shard_states(states), {}, as_json, output, golden, False, None)


@main.command()
@click.argument("runs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "--fixtures",
    required=True,
    metavar="FIXTURES",
    help=f"The {schemas.FIXTURES} fixture set to score against.",
)
@click.option("--dir", "corpus_dir", metavar="DIR", help="Corpus directory (overrides the fixture header).")
@click.option("--store", metavar="STORE", help="Use an existing persisted index file instead of a directory.")
@click.option("--compare", metavar="A,B[,C...]", help="Compare runs as run --compare compares backends.")
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.REPORT} JSON.")
@click.option("--output", metavar="FILE", help="Write the report to FILE (atomically) instead of stdout.")
@click.option(
    "--golden", metavar="FILE", help="Fail (exit 1) with a diff when the JSON report differs from FILE."
)
@click.option("--update-golden", is_flag=True, help="Rewrite the --golden file with this report.")
@_stats_options
@click.option(
    "--metrics",
    metavar="LIST",
    help="Also report rank metrics, e.g. ndcg,ap,hit@1,p@5,judged,recall@budget=2000,ttfr (docs/metrics.md).",
)
@click.option(
    "--per-query",
    "per_query",
    type=click.Choice(PER_QUERY_FORMATS),
    help="Print per-query results instead of the report (as for run).",
)
@click.option(
    "--trec-qrels", metavar="FILE", help="Write the TREC qrels (relevant chunk ids) the scoring used."
)
@click.option("--config", "config_path", metavar="FILE", help="Extra languages to chunk with (as for run).")
@_languages_option
@_cache_options
def score(
    runs: tuple[str, ...],
    fixtures: str,
    corpus_dir: str | None,
    store: str | None,
    compare: str | None,
    as_json: bool,
    output: str | None,
    golden: str | None,
    update_golden: bool,
    stats_level: StatsLevel,
    primary_metric: str | None,
    metrics: str | None,
    per_query: str | None,
    trec_qrels: str | None,
    config_path: str | None,
    languages_flag: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Score rankings made elsewhere: TREC run files (`qid Q0 docno rank score tag`, docno a chunk id
    or path:start-end) or cce.retriever/v1 JSON lines, exactly as a backend's results are scored."""
    primary = _report_checks(
        stats_level, primary_metric, compare, store, corpus_dir, update_golden, golden, per_query, as_json
    )
    _require_values(
        ("--fixtures", fixtures),
        ("--dir", corpus_dir),
        ("--store", store),
        ("--output", output),
        ("--golden", golden),
        ("--config", config_path),
        ("--metrics", metrics),
        ("--trec-qrels", trec_qrels),
    )
    config = api.load_config(config_path)
    result = api.score_runs(
        fixtures,
        runs,
        dir=corpus_dir,
        store=store,
        compare=None if compare is None else comma_list(compare),
        stats_level=stats_level,
        primary=primary,
        metrics=None if metrics is None else comma_list(metrics, str.strip),
        trec=trec_qrels is not None,
        languages=_languages(languages_flag, config),
        indexing=_indexing(cache_dir, no_cache, as_json),
        config=config,
        outputs=api.own_outputs([output, golden, trec_qrels], config),
        labels=per_query == "text",
    )
    _write_report(
        result, _trec_files(result, None, trec_qrels), as_json, output, golden, update_golden, per_query
    )


@main.command()
@click.argument("report_paths", metavar="BASE.json HEAD.json [MORE.json...]", nargs=-1, required=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=f"Emit the {schemas.COMPARE} JSON ({schemas.SYSTEMS} for three or more reports).",
)
@click.option("--markdown", "as_markdown", is_flag=True, help="Emit GitHub-flavoured Markdown.")
@_stats_options
@_chart_options
@click.option(
    "--chart-backend",
    metavar="NAME",
    help="Backend to chart (default: the last one in both reports, as the Action charts).",
)
def compare(
    report_paths: tuple[str, ...],
    as_json: bool,
    as_markdown: bool,
    stats_level: StatsLevel,
    primary_metric: str | None,
    chart: str | None,
    chart_metric: str | None,
    chart_backend: str | None,
) -> None:
    """Compare saved `run --json` reports, pairing backends and queries by name: two as base → head
    (head − base), three or more as systems (every pair Holm-corrected, and a randomised Tukey HSD)."""
    from cce_relevance.reporting.chart import chart_renderer, compare_chart
    from cce_relevance.reporting.compare_report import comparison_document, comparison_text
    from cce_relevance.reporting.cost_report import compare_cost_text, side_costs
    from cce_relevance.reporting.markdown import comparison_markdown, cost_markdown

    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown cannot be used together")
    if len(report_paths) < 2:
        raise click.UsageError("compare needs at least two reports: BASE.json HEAD.json [MORE.json...]")
    if len(report_paths) > 2:
        _compare_systems(report_paths, as_json, as_markdown, stats_level, chart)
        return
    base_report, head_report = report_paths
    if chart_backend is not None and chart is None:
        raise click.UsageError("--chart-backend needs --chart FILE")
    chart_metric = _chart_metric(chart, chart_metric)
    render_chart = chart_renderer(chart) if chart else None
    primary = _primary(stats_level, primary_metric)
    base_doc, head_doc = api.load_report(base_report), api.load_report(head_report)
    comparisons = api.compare_saved(
        base_doc, head_doc, base_report, head_report, stats_level=stats_level, primary=primary
    )
    chart_text = (
        render_chart(compare_chart(comparisons, chart_metric, chart_backend)) if render_chart else None
    )
    if as_json:
        text = dumps_report(comparison_document(base_report, head_report, comparisons))
    elif as_markdown:
        text = comparison_markdown(comparisons) + cost_markdown(side_costs(base_doc), side_costs(head_doc))
    else:
        text = comparison_text(base_report, head_report, comparisons) + compare_cost_text(
            side_costs(base_doc), side_costs(head_doc), [c.pair.backend for c in comparisons]
        )
    if chart is not None and chart_text is not None:
        write_output(chart, chart_text)
    _emit(text)


def _compare_systems(
    paths: tuple[str, ...], as_json: bool, as_markdown: bool, stats_level: StatsLevel, chart: str | None
) -> None:
    """`compare R1 R2 R3…`: the reports as systems, per backend they all scored."""
    from cce_relevance.reporting.systems_report import systems_document, systems_markdown, systems_text
    from cce_relevance.reporting.terminal import terminal_safe

    if stats_level == "full":
        raise click.UsageError(
            "--stats full compares two reports; with three or more every pair is tested (Holm) "
            "beside a randomised Tukey HSD already"
        )
    if chart is not None:
        raise click.UsageError("--chart draws base → head deltas and needs exactly two reports")
    if len(set(paths)) != len(paths):
        raise click.UsageError("every report may be named once")
    results = api.compare_many([api.load_report(p) for p in paths], list(paths))
    if as_json:
        text = dumps_report(
            {
                "backends": [{"backend": name, **systems_document(tests)} for name, tests in results],
                "reports": list(paths),
                "schema": schemas.SYSTEMS,
            }
        )
    elif as_markdown:
        text = "".join(
            systems_markdown(f"Relevance of {len(paths)} reports, backend {name}", tests)
            for name, tests in results
        )
    else:
        text = (
            "CCE relevance — comparison of saved reports\n"
            + "".join(f"  {i}: {terminal_safe(p)}\n" for i, p in enumerate(paths, 1))
            + "".join(systems_text(f"backend {terminal_safe(name)}", tests) for name, tests in results)
        )
    click.echo(text, nl=False)


@main.command()
@click.argument("fixtures")
@click.option(
    "--dir", "corpus_dir", metavar="DIR", help="Corpus directory to check against (overrides the header)."
)
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.VALIDATE} JSON.")
@click.option(
    "--suggest",
    is_flag=True,
    help="Print fixes for stale and moved anchors as a unified diff on stdout (apply with "
    "`git apply` or `patch -p1`); the findings go to stderr. With --unjudged --accept FILE: the "
    "reviewed hits as a patch instead.",
)
@click.option(
    "--unjudged",
    is_flag=True,
    help="Also search every case and print, as a review form on stdout, its top hits that match no "
    "anchor (nobody labeled them), most-retrieved first; the findings go to stderr.",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    help="With --unjudged: how deep each backend's hits are listed (default: each case's k).",
)
@click.option(
    "--backend",
    "backends",
    metavar="LIST",
    help=f"With --unjudged: the backends searched (default {','.join(BUILTIN_BACKENDS)}).",
)
@click.option(
    "--accept",
    metavar="FILE",
    help="With --unjudged --suggest: the filled-in review form (- for stdin); its `y` lines are added "
    'to "expected", its `n` lines to "irrelevant".',
)
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def validate(
    fixtures: str,
    corpus_dir: str | None,
    as_json: bool,
    suggest: bool,
    unjudged: bool,
    top: int | None,
    backends: str | None,
    accept: str | None,
    languages_flag: str | None,
    config_path: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Check that every anchor of FIXTURES resolves to a chunk of the corpus (a gate: exit 1 on problems).

    Reports anchors whose file, kind or line range is not in the corpus, cases no backend can
    satisfy, and duplicate case ids. Exit 0 when clean, 1 when problems were found, 2 on bad input.
    With --suggest, stdout is a patch that points stale and moved anchors at where their definitions
    most likely are now. With --unjudged, stdout is a review form of the hits no anchor labels;
    marked and passed back with --unjudged --suggest --accept FILE, it becomes a patch adding them.
    """
    from cce_relevance.reporting.validation_report import fixes_text, validation_document, validation_text

    _require_values(("--dir", corpus_dir), ("--accept", accept), ("--backend", backends))
    if suggest and as_json:
        raise click.UsageError("--suggest prints a patch; it cannot be used with --json")
    if unjudged and as_json:
        raise click.UsageError("--unjudged prints a review form; it cannot be used with --json")
    for name, given in (("--top", top is not None), ("--backend", backends is not None)):
        if given and not unjudged:
            raise click.UsageError(f"{name} needs --unjudged")
    if (accept is not None) != (unjudged and suggest):
        raise click.UsageError("--unjudged --suggest and --accept FILE go together")
    if accept is not None:
        if top is not None or backends is not None:
            raise click.UsageError("--accept reads a review form: --top and --backend made it already")
        _accept(fixtures, accept)
        return
    config = api.load_config(config_path)
    languages = _languages(languages_flag, config)
    indexing = _indexing(cache_dir, no_cache, as_json)
    if unjudged:
        from cce_relevance.reporting.unjudged_report import review_form

        found = api.unjudged(
            fixtures,
            dir=corpus_dir,
            backends=comma_list(backends) if backends is not None else None,
            top=top,
            languages=languages,
            indexing=indexing,
            config=config,
        )
        result = found.validation
        click.echo(validation_text(result), err=True, nl=False)
        _emit(review_form(fixtures, found.backends, found.top, found.cases))
    elif suggest:
        suggestions = api.suggest(
            fixtures, dir=corpus_dir, languages=languages, indexing=indexing, config=config
        )
        result = suggestions.validation
        explained = validation_text(result) + fixes_text(suggestions.fixes, len(result.stale_anchors()))
        click.echo(explained, err=True, nl=False)
        _emit(suggestions.patch)
    else:
        result = api.validate(fixtures, dir=corpus_dir, languages=languages, indexing=indexing, config=config)
        _emit(dumps_report(validation_document(result)) if as_json else validation_text(result))
    if not result.ok:
        raise GateFailed(
            f"{len(result.findings)} problem(s) in {fixtures}: anchors that resolve to nothing "
            "in the corpus, unsatisfiable cases or duplicate ids"
        )


def _accept(fixtures: str, review: str) -> None:
    """`validate --unjudged --suggest --accept FILE`: the reviewed hits as a patch on stdout, what
    it adds on stderr."""
    accepted = api.accept_review(fixtures, review)
    added = [(len(e.expected), len(e.irrelevant)) for e in accepted.edits]
    click.echo(
        f"cce-relevance validate --accept: {sum(a for a, _ in added)} anchor(s) added to expected, "
        f"{sum(b for _, b in added)} to irrelevant, in {len(added)} case(s)"
        + (
            "; review the patch on stdout, then apply it: git apply FILE (or patch -p1 < FILE)"
            if added
            else ""
        )
        + "\n",
        err=True,
        nl=False,
    )
    _emit(accepted.patch)


@main.command()
@click.argument("directory", metavar="DIR")
@click.option(
    "--queries", type=click.IntRange(min=1), default=50, show_default=True, help="Cases to propose."
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the draw: the same seed, the same set."
)
@click.option(
    "--out",
    metavar="FILE",
    help="Write the set to FILE (default: stdout); its header's corpus is DIR relative to FILE.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace --out FILE when it exists (a reviewed set is not overwritten by accident).",
)
@click.option(
    "--forms",
    metavar="LIST",
    help="Query forms to draw: any of name,doc (easy), doc-unnamed,callers (hard); default all.",
)
@click.option("--include-tests", is_flag=True, help="Also draw from test files (left out by default).")
@click.option("--include-vendored", is_flag=True, help="Also draw from vendored code (left out by default).")
@click.option(
    "--include-generated", is_flag=True, help="Also draw from generated files (left out by default)."
)
@click.option(
    "--skip",
    multiple=True,
    metavar="PATTERN",
    help="Draw no case from paths PATTERN matches (a gitignore line, relative to DIR; they stay in "
    "the corpus). Repeatable.",
)
@click.option(
    "--backend",
    "backends",
    metavar="LIST",
    help=f"Backends to score the set at (default {','.join(BUILTIN_BACKENDS)}).",
)
@click.option("--no-score", is_flag=True, help="Only propose; do not score the set.")
@click.option("--report", metavar="FILE", help="Write the summary and scores to FILE instead of stderr.")
@click.option(
    "--from-history",
    "from_history",
    metavar="[REV_RANGE]",
    is_flag=False,
    flag_value="HEAD",
    default=None,
    help="Draw the cases from the git history of DIR's repository instead (default range HEAD): "
    "one per commit, its subject as the query, the definitions it changed (at its parent) as anchors.",
)
@click.option("--since", metavar="DATE", help="With --from-history: only commits since DATE (git's dates).")
@click.option("--until", metavar="DATE", help="With --from-history: only commits until DATE.")
@click.option(
    "--with-body",
    is_flag=True,
    help="With --from-history: add the first paragraph of the commit message's body to the query.",
)
@click.option(
    "--max-definitions",
    type=click.IntRange(min=1),
    help="With --from-history: leave out commits changing more definitions "
    f"(default {DEFAULT_MAX_DEFINITIONS}).",
)
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def bootstrap(
    directory: str,
    queries: int,
    seed: int,
    out: str | None,
    force: bool,
    forms: str | None,
    include_tests: bool,
    include_vendored: bool,
    include_generated: bool,
    skip: tuple[str, ...],
    backends: str | None,
    no_score: bool,
    report: str | None,
    from_history: str | None,
    since: str | None,
    until: str | None,
    with_body: bool,
    max_definitions: int | None,
    languages_flag: str | None,
    config_path: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Propose a fixture set drawn from DIR for a person to review: queries from definitions'
    names and doc lines (easy) and paraphrases (hard), each anchored to its definition, with a
    note saying where it came from; then report how each backend scores it.

    With --from-history, the queries are the subjects of the commits of DIR's git history (a
    person's words for what was wanted) and the anchors the definitions each commit changed, as
    they were before it; the report gives the yield (commits seen, kept, left out per rule)."""
    from cce_relevance.reporting.proposal_report import history_text, proposal_text

    _require_values(("--out", out), ("--report", report), ("--from-history", from_history))
    _require_values(("--since", since), ("--until", until))
    if from_history is None:
        for name, given in (
            ("--since", since is not None),
            ("--until", until is not None),
            ("--with-body", with_body),
            ("--max-definitions", max_definitions is not None),
        ):
            if given:
                raise click.UsageError(f"{name} needs --from-history")
    else:
        ctx = click.get_current_context()
        for name in ("seed", "forms"):
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
                raise click.UsageError(
                    f"--{name} draws from definitions; it cannot be used with --from-history"
                )
    if out is not None and os.path.exists(out) and not force:
        raise CceError(
            f"{out} exists; a proposed set would replace it",
            hint="pass --force to replace it, or choose another --out",
        )
    if no_score and backends is not None:
        raise click.UsageError("--backend needs scoring; it cannot be used with --no-score")
    config = api.load_config(config_path)
    rules = api.FileRules(
        tests=not include_tests, vendored=not include_vendored, generated=not include_generated, skip=skip
    )
    common: dict[str, Any] = {
        "out": out,
        "rules": rules,
        "backends": comma_list(backends) if backends is not None else None,
        "score": not no_score,
        "config": config,
        "languages": _languages(languages_flag, config),
        "indexing": _indexing(cache_dir, no_cache, False),
        "outputs": [report] if report is not None else [],
    }
    if from_history is not None:
        history = api.HistoryOptions(
            from_history,
            since,
            until,
            queries,
            with_body,
            max_definitions if max_definitions is not None else DEFAULT_MAX_DEFINITIONS,
        )
        mined = api.bootstrap_history(api.require_directory(directory), history=history, **common)
        dates = "".join(f" {flag} {value}" for flag, value in (("since", since), ("until", until)) if value)
        summary = history_text(
            out or "stdout", mined.proposal, queries, from_history, dates, mined.discrimination()
        )
        _write_proposal(mined.text, summary, out, report)
        return
    result = api.bootstrap(
        api.require_directory(directory),
        queries=queries,
        seed=seed,
        forms=comma_list(forms) if forms is not None else api.FORMS,
        **common,
    )
    p = result.proposal
    summary = proposal_text(
        out or "stdout",
        len(p.cases),
        queries,
        p.candidates,
        p.files,
        p.skipped,
        result.form_counts(),
        api.HARD_FORMS,
        result.discrimination(),
    )
    _write_proposal(result.text, summary, out, report)


def _write_proposal(text: str, summary: str, out: str | None, report: str | None) -> None:
    """A proposed set to `out` (else stdout) and its summary to `report` (else stderr), the files
    committed together."""
    with OutputSet() as outputs:
        if out is not None:
            outputs.stage(out, text)
        if report is not None:
            outputs.stage(report, summary)
        outputs.commit()
    if out is None:
        _emit(text)
    if report is None:
        click.echo(summary, err=True, nl=False)


@main.command()
@click.argument("source", metavar="REPORT_OR_COMPARE.json")
@click.option(
    "--delta", type=float, required=True, help="The smallest mean delta worth detecting, e.g. 0.05."
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Two-sided significance level.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Chance of detecting a real delta.")
@click.option(
    "--metric",
    metavar="KEY",
    help=f"Plan for this metric only (default: all): {', '.join(METRIC_KEYS)}, "
    "or a rank metric key the reports carry, such as ndcg_at_k.",
)
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.POWER} JSON.")
def power(source: str, delta: float, alpha: float, power: float, metric: str | None, as_json: bool) -> None:
    """Queries needed to detect --delta, from the per-query deltas of a `run --compare` report, a
    `compare --json` document or the Action's compare.json (the paired t-test's power analysis;
    docs/statistics.md)."""
    from cce_relevance.reporting.power_report import power_document, power_text

    analysis = api.power_analysis(source, delta, alpha=alpha, power=power, metric=metric)
    _emit(dumps_report(power_document(analysis)) if as_json else power_text(analysis))


@main.command()
@click.argument("history", metavar="HISTORY.json")
@click.option(
    "--set", "fixture", metavar="FIXTURES", help="The fixture set, as the Action's `fixtures` named it."
)
@click.option("--backend", metavar="NAME", help="One backend (default: every backend the history holds).")
@click.option(
    "--metric",
    metavar="KEY",
    default=DEFAULT_PRIMARY,
    show_default=True,
    help=f"The metric key: {', '.join(METRIC_KEYS)}, or a rank metric key the history holds.",
)
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.TREND} JSON.")
def trend(history: str, fixture: str | None, backend: str | None, metric: str, as_json: bool) -> None:
    """The series of an Action trend history (input `history`): per fixture set and backend, the
    metric at every push to the default branch, with its commit and date, and a sparkline."""
    from cce_relevance.action.history_view import load, select, trend_document, trend_text

    loaded = load(history)
    series = select(loaded, metric, fixture, backend)
    _emit(dumps_report(trend_document(loaded, series)) if as_json else trend_text(loaded, series))


@main.command("action")
def action() -> None:
    """Run as the GitHub Action: read INPUT_* and GITHUB_*, score base and head, report, gate.

    Exits 0, 1 when a gate fails (fail-on), 2 on a configuration error. This is what the
    container's entrypoint.py runs; `docker run` of the image reproduces a workflow run.
    """
    # Imported here: the Action's HTTP and git layers are not needed by the other commands.
    from cce_relevance.action.main import main as run_action

    sys.exit(run_action())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
