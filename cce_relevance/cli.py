"""The `cce-relevance` command line: parse arguments, call `api`, render, map errors to exit codes.

Expected failures are `CceError`s: printed as one `error: …` line on stderr with the error's
exit code (2 for usage and input errors, 1 for a failed gate). Argument-parser errors are
click's, also exit 2. Standard output that cannot be written (a full disk, a closed pipe) is
exit 2 with a message; any other exception is a bug, reported in one line with exit 70
(`errors.internal_error`).

Output contract: a command decides everything that can fail before it prints, so an exit 2
leaves standard output empty; files it writes are staged and committed together (`atomic_files`).
The flags several commands share are defined once, in `cli_flags`.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from typing import TYPE_CHECKING, Any

import click

from cce_relevance import __version__, schemas
from cce_relevance import cli_flags as flags
from cce_relevance.atomic_files import OutputSet, write_output
from cce_relevance.errors import EXIT_USAGE, TRACEBACK_VARIABLE, CceError, GateFailed, internal_error
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRIC_KEYS
from cce_relevance.lazy_import import lazy_module
from cce_relevance.memory_pages import prefer_small_pages
from cce_relevance.reference import BUILTIN_BACKENDS, EMBEDDERS
from cce_relevance.reference import listed as listed_names
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.stats.stats_level import StatsLevel

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


@main.command()
@click.argument("directory", metavar="DIR")
@click.option("--json", "as_json", is_flag=True, help="Print the conformance.json document.")
@flags.languages_option
@flags.config_option
@flags.cache_options
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

    found, symbols = api.chunks(directory, flags.run_options(as_json))
    if as_json:
        _emit(search_view.conformance_document(found))
    else:
        _emit(search_view.conformance_table(found, symbols.of_chunk))


@main.command()
@click.argument("directory", metavar="DIR")
@click.argument("query")
@click.option(
    "--backend",
    metavar="NAME",
    default="hybrid",
    show_default=True,
    help=f"Ranking backend: {listed_names(BUILTIN_BACKENDS)}, or one of the config file's backends.",
)
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Number of results.")
@click.option("--json", "as_json", is_flag=True, help="Print result records as JSON.")
@flags.config_option
@flags.languages_option
@flags.cache_options
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

    options = flags.run_options(as_json)
    results = api.search(directory, query, backend, k, options)
    hits = [h for h, _ in results]
    _emit(
        search_view.hits_json(hits) if as_json else search_view.hits_text(hits, [line for _, line in results])
    )


@main.command()
@click.argument("directory", metavar="DIR")
@flags.path_option("--out", "Store file to write (default DIR/.cce/index.json).", metavar="PATH")
@click.option(
    "--embedder",
    type=click.Choice(list(EMBEDDERS)),
    default="hash",
    show_default=True,
    help="Chunk embedder; ollama reads CCE_OLLAMA_URL and CCE_OLLAMA_MODEL.",
)
@click.option(
    "--allow-secrets",
    is_flag=True,
    help="Turn secret protection off: index sensitive files and unredacted text.",
)
@flags.languages_option
@flags.config_option
@flags.cache_options
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
    options = flags.run_options(False)
    if allow_secrets:
        click.echo("warning: --allow-secrets: secret protection is off; files are indexed verbatim", err=True)
    written = api.index_corpus(directory, options, out=out, embedder=embedder, allow_secrets=allow_secrets)
    fingerprint = f"wrote {written.fingerprint}\n" if written.fingerprint is not None else ""
    _emit(
        f"wrote {written.path}: {written.chunks} chunks from {written.files} files, "
        f"embedder {written.embedder}, {written.size} bytes\n{fingerprint}"
    )


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
@flags.corpus_options
@click.option("--backend", "backends", metavar="LIST", help=flags.backends_help)
@click.option(
    "--compare",
    metavar="A,B[,C...]",
    help="Two backends: per-query deltas and a paired t-test; three or "
    "more: every pair (Holm-corrected) and a randomised Tukey HSD.",
)
@flags.report_options
@flags.config_option
@flags.languages_option
@flags.stats_options
@flags.scoring_options
@flags.path_option("--trec-run", "Write each backend's TREC run; {backend} in FILE is its name.")
@flags.chart_options
@flags.cache_options
@click.option(
    "--shard",
    "shard_text",
    metavar="I/N",
    help="Score only the queries whose id hashes to shard I of N (needs --shard-state).",
)
@flags.path_option("--shard-state", "Write the shard's per-query values for `merge` to FILE.")
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
    per_query: str | None,
    trec_qrels: str | None,
    trec_run: str | None,
    chart: str | None,
    chart_metric: str | None,
    cache_dir: str | None,
    no_cache: bool,
    shard_text: str | None,
    shard_state: str | None,
) -> None:
    """Score the FIXTURES set (cce.relevance/v1 NDJSON) at each backend."""
    from cce_relevance.reporting.chart import chart_renderer, run_chart

    if chart is not None and compare is None:
        raise click.UsageError("--chart needs --compare A,B")
    charted = flags.chart_metric(chart, chart_metric)
    render_chart = chart_renderer(chart) if chart else None
    chosen = flags.report_choices()
    if store is not None and languages_flag is not None:
        raise click.UsageError(
            "--languages applies to a directory; a store's chunks were made when it was indexed"
        )
    if compare is not None and backends is not None:
        raise click.UsageError("the argument '--compare <A,B>' cannot be used with '--backend <LIST>'")
    shard = flags.shard(shard_text, shard_state, compare=compare, golden=golden, trec=trec_run or trec_qrels)
    options = flags.run_options(
        as_json,
        **chosen,
        backends=flags.listed(backends),
        trec=trec_run is not None or trec_qrels is not None,
        outputs=[p for p in (output, golden, trec_run, trec_qrels, chart) if p is not None],
        shard=shard,
    )
    result = api.run(fixtures, options, dir=corpus_dir, store=store)
    side_files = _trec_files(result, trec_run, trec_qrels)
    if shard is not None and shard_state is not None:
        side_files[shard_state] = api.shard_state(result, fixtures, shard)
    if chart is not None and render_chart is not None:
        side_files[chart] = render_chart(run_chart(result, charted))
    _write_report(result, side_files, as_json, output, golden, update_golden, per_query)


def _write_report(
    result: api.RunResult,
    side_files: dict[str, str],
    as_json: bool,
    output: str | None,
    golden: str | None,
    update_golden: bool,
    per_query: str | None,
) -> None:
    """Write the run's files and print the report (JSON, text or `--per-query`), then check the golden.

    Everything that can fail (an unreadable golden, an unwritable output) is decided before anything
    is printed, and the files (side files, golden, `--output`) are committed together or not at all.
    """
    from cce_relevance.reporting.run_report import run_report_json, run_report_per_query, run_report_text

    report_json = run_report_json(result)
    if as_json:
        rendered = report_json
    else:
        rendered = run_report_text(result) if per_query is None else run_report_per_query(result, per_query)
    change = api.golden_change(golden, report_json) if golden is not None and update_golden else ""
    check = (
        api.check_golden(golden, report_json, missing_hint="run again with --update-golden to create it")
        if golden is not None and not update_golden
        else None
    )
    with OutputSet() as outputs:
        for path, text in side_files.items():
            outputs.stage(path, text)
        if golden is not None and update_golden:
            outputs.stage(golden, report_json)
        if output is not None:
            outputs.stage(output, rendered)
        outputs.commit()
    if change:
        click.echo(f"golden report {golden} {change}", err=True)
    if output is None:
        _emit(rendered)
    if check is not None and check.drifted:
        sys.stderr.write(check.diff)
        raise GateFailed(
            f"report drifted from golden {golden}",
            hint="review the diff; if the change is intended, rerun with --update-golden",
        )
    if check is not None:
        click.echo(f"golden report {golden} matches", err=True)


@main.command()
@click.argument("states", metavar="STATE...", nargs=-1, required=True)
@flags.report_json_option
@flags.output_option
@flags.golden_option
def merge(states: tuple[str, ...], as_json: bool, output: str | None, golden: str | None) -> None:
    """Put a sharded run back together: the report of the unsharded run, byte for byte.

    Each STATE is a `run --shard I/N --shard-state FILE` file, or a directory of them. The shards
    must be 1..N of one run (same fixture file, corpus and backends), each query scored once."""
    _write_report(api.merge_shard_states(states), {}, as_json, output, golden, False, None)


@main.command()
@click.argument("runs", metavar="RUN...", nargs=-1, required=True)
@flags.path_option(
    "--fixtures", f"The {schemas.FIXTURES} fixture set to score against.", metavar="FIXTURES", required=True
)
@flags.corpus_options
@click.option("--compare", metavar="A,B[,C...]", help="Compare runs as run --compare compares backends.")
@flags.report_options
@flags.stats_options
@flags.scoring_options
@flags.config_option
@flags.languages_option
@flags.cache_options
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
    chosen = flags.report_choices()
    options = flags.run_options(
        as_json,
        **chosen,
        trec=trec_qrels is not None,
        outputs=[p for p in (output, golden, trec_qrels) if p is not None],
    )
    result = api.score_saved_rankings(fixtures, runs, options, dir=corpus_dir, store=store)
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
@flags.stats_options
@flags.chart_options
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
    from cce_relevance.reporting.markdown import comparison_markdown

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
    chart_metric = flags.chart_metric(chart, chart_metric)
    render_chart = chart_renderer(chart) if chart else None
    options = api.RunOptions(
        stats_level=stats_level, primary=flags.primary_metric(stats_level, primary_metric)
    )
    comparisons = api.compare_saved(base_report, head_report, options)
    chart_text = (
        render_chart(compare_chart(comparisons, chart_metric, chart_backend)) if render_chart else None
    )
    if as_json:
        text = dumps_report(comparison_document(base_report, head_report, comparisons))
    elif as_markdown:
        text = comparison_markdown(comparisons)
    else:
        text = comparison_text(base_report, head_report, comparisons)
    if chart is not None and chart_text is not None:
        write_output(chart, chart_text)
    _emit(text)


def _compare_systems(
    paths: tuple[str, ...], as_json: bool, as_markdown: bool, stats_level: StatsLevel, chart: str | None
) -> None:
    """`compare R1 R2 R3…`: the reports as systems, per backend they all scored."""
    from cce_relevance.reporting import systems_report

    if stats_level == "full":
        raise click.UsageError(
            "--stats full compares two reports; with three or more every pair is tested (Holm) "
            "beside a randomised Tukey HSD already"
        )
    if chart is not None:
        raise click.UsageError("--chart draws base → head deltas and needs exactly two reports")
    if len(set(paths)) != len(paths):
        raise click.UsageError("every report may be named once")
    results = api.compare_many(paths)
    if as_json:
        text = dumps_report(systems_report.saved_reports_document(paths, results))
    elif as_markdown:
        text = systems_report.saved_reports_markdown(paths, results)
    else:
        text = systems_report.saved_reports_text(paths, results)
    click.echo(text, nl=False)


@main.command()
@click.argument("fixtures")
@flags.path_option("--dir", "Corpus directory to check against (overrides the header).", "corpus_dir", "DIR")
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.VALIDATE} JSON.")
@click.option(
    "--suggest",
    is_flag=True,
    help="Print fixes for stale and moved anchors as a unified diff on stdout (apply with "
    "`git apply` or `patch -p1`); the findings go to stderr.",
)
@flags.languages_option
@flags.config_option
@flags.cache_options
def validate(
    fixtures: str,
    corpus_dir: str | None,
    as_json: bool,
    suggest: bool,
    languages_flag: str | None,
    config_path: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Check that every anchor of FIXTURES resolves to a chunk of the corpus (a gate: exit 1 on problems).

    Reports anchors whose file, kind or line range is not in the corpus, cases no backend can
    satisfy, and duplicate case ids. Exit 0 when clean, 1 when problems were found, 2 on bad input.
    With --suggest, stdout is a patch that points stale and moved anchors at where their definitions
    most likely are now.
    """
    from cce_relevance.reporting.validation_report import fixes_text, validation_document, validation_text

    if suggest and as_json:
        raise click.UsageError("--suggest prints a patch; it cannot be used with --json")
    options = flags.run_options(as_json)
    if suggest:
        suggestions = api.suggest(fixtures, options, dir=corpus_dir)
        result = suggestions.validation
        explained = validation_text(result) + fixes_text(suggestions.fixes, len(result.stale_anchors()))
        click.echo(explained, err=True, nl=False)
        _emit(suggestions.patch)
    else:
        result = api.validate(fixtures, options, dir=corpus_dir)
        _emit(dumps_report(validation_document(result)) if as_json else validation_text(result))
    if not result.ok:
        raise GateFailed(
            f"{len(result.findings)} problem(s) in {fixtures}: anchors that resolve to nothing "
            "in the corpus, unsatisfiable cases or duplicate ids"
        )


@main.command()
@click.argument("directory", metavar="DIR")
@click.option(
    "--queries", type=click.IntRange(min=1), default=50, show_default=True, help="Cases to propose."
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the draw: the same seed, the same set."
)
@flags.path_option(
    "--out", "Write the set to FILE (default: stdout); its header's corpus is DIR relative to FILE."
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
@click.option("--backend", "backends", metavar="LIST", help=flags.backends_help)
@click.option("--no-score", is_flag=True, help="Only propose; do not score the set.")
@flags.path_option("--report", "Write the summary and scores to FILE instead of stderr.")
@flags.languages_option
@flags.config_option
@flags.cache_options
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
    languages_flag: str | None,
    config_path: str | None,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Propose a fixture set drawn from DIR for a person to review: queries from definitions'
    names and doc lines (easy) and paraphrases (hard), each anchored to its definition, with a
    note saying where it came from; then report how each backend scores it."""
    from cce_relevance.reporting.proposal_report import proposal_text

    if out is not None and os.path.exists(out) and not force:
        raise CceError(
            f"{out} exists; a proposed set would replace it",
            hint="pass --force to replace it, or choose another --out",
        )
    if no_score and backends is not None:
        raise click.UsageError("--backend needs scoring; it cannot be used with --no-score")
    options = flags.run_options(
        False,
        backends=flags.listed(backends),
        outputs=[report] if report is not None else [],
    )
    rules = api.FileRules(
        tests=not include_tests, vendored=not include_vendored, generated=not include_generated, skip=skip
    )
    result = api.bootstrap(
        directory,
        options,
        queries=queries,
        seed=seed,
        out=out,
        rules=rules,
        forms=None if forms is None else tuple(flags.comma_list(forms)),
        score=not no_score,
    )
    summary = proposal_text(result, out or "stdout", queries)
    with OutputSet() as outputs:
        if out is not None:
            outputs.stage(out, result.text)
        if report is not None:
            outputs.stage(report, summary)
        outputs.commit()
    if out is None:
        _emit(result.text)
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
