"""The `cce-relevance` command line: parse arguments, call `api`, render, map errors to exit codes.

Expected failures are `CceError`s: printed as one `error: …` line on stderr with the error's
exit code (2 for usage and input errors, 1 for a failed gate). Argument-parser errors are
click's, also exit 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from cce_relevance import __version__, schemas
from cce_relevance.errors import CceError, GateFailed
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRIC_KEYS
from cce_relevance.files import write_atomically
from cce_relevance.lazy_import import lazy_module
from cce_relevance.memory_pages import prefer_small_pages
from cce_relevance.progress import progress_bar
from cce_relevance.reference import BUILTIN_BACKENDS, EMBEDDERS, listed
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.retrieval.chunking.languages import EXTRA_LANGUAGES
from cce_relevance.stats.stats_level import STATS_LEVELS, StatsLevel
from cce_relevance.strings import rust_trim

# The library (numpy, tree-sitter grammars, requests) loads when a command first uses it, and the
# renderers are imported inside the commands that print them: `--help` starts fast.
if TYPE_CHECKING:
    from cce_relevance import api
else:
    api = lazy_module("cce_relevance.api")


class _Group(click.Group):
    """Turns `CceError` into `error: <message>` and its exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CceError as exc:
            click.echo(f"error: {exc.message}", err=True)
            if exc.hint:
                click.echo(f"hint: {exc.hint}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cce-relevance")
def main() -> None:
    """Score retrieval ranking against labeled fixtures, query by query, with honest statistics."""
    prefer_small_pages()


_CONFIG_HELP = ("Backend variants, external retrievers and extra languages (default: cce-relevance.toml in the "
                "working directory or the nearest one above it, up to the repository root).")


def _languages_option(command: Callable[..., None]) -> Callable[..., None]:
    """`--languages`, shared by every command that indexes a directory."""
    return click.option("--languages", "languages_flag", metavar="LIST",
                        help=f"Also chunk these languages: any of {','.join(EXTRA_LANGUAGES)} (replaces the "
                             "config file's `languages`; '' for none). Default: the reference's six only.")(command)


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
    command = click.option("--no-cache", is_flag=True, help="Index every file again; do not read or write the "
                           "index cache.")(command)
    return click.option("--cache", "cache_dir", metavar="DIR",
                        help="Index cache directory: unchanged files are not indexed again (default: "
                             "$XDG_CACHE_HOME/cce-relevance, else ~/.cache/cce-relevance).")(command)


def _indexing(cache_dir: str | None, no_cache: bool, quiet: bool) -> api.BuildOptions:
    """How to index: the cache flags, and a progress bar on stderr unless `quiet` (JSON output)."""
    if cache_dir is not None and no_cache:
        raise click.UsageError("--cache and --no-cache cannot be used together")
    if cache_dir == "":
        raise click.UsageError("a value is required for '--cache' but none was supplied")
    return api.build_options(cache_dir, use_cache=not no_cache, progress=progress_bar(sys.stderr, quiet=quiet))


@main.command()
@click.argument("directory", metavar="DIR")
@click.option("--json", "as_json", is_flag=True, help="Print the conformance.json document.")
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def chunks(directory: str, as_json: bool, languages_flag: str | None, config_path: str | None,
           cache_dir: str | None, no_cache: bool) -> None:
    """List every chunk of DIR with its symbol (the conformance listing)."""
    from cce_relevance.reporting import search_view

    config = api.load_config(config_path)
    languages = _languages(languages_flag, config)
    found = api.chunks(api.require_directory(directory), languages, _indexing(cache_dir, no_cache, as_json), config)
    if as_json:
        click.echo(search_view.conformance_document(found), nl=False)
    else:
        symbols = api.corpus_symbols(directory, languages)
        click.echo(search_view.conformance_table(found, symbols.of_chunk), nl=False)


@main.command()
@click.argument("directory", metavar="DIR")
@click.argument("query")
@click.option("--backend", metavar="NAME", default="hybrid", show_default=True,
              help=f"Ranking backend: {listed(BUILTIN_BACKENDS)}, or one of the config file's backends.")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Number of results.")
@click.option("--json", "as_json", is_flag=True, help="Print result records as JSON.")
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_languages_option
@_cache_options
def search(directory: str, query: str, backend: str, k: int, as_json: bool, config_path: str | None,
           languages_flag: str | None, cache_dir: str | None, no_cache: bool) -> None:
    """Run QUERY over DIR through one backend and show ranks, scores, spans and kinds."""
    from cce_relevance.reporting import search_view

    config = api.load_config(config_path)
    corpus = api.require_directory(directory)
    results = api.search(corpus, query, backend, k, config, _languages(languages_flag, config),
                         _indexing(cache_dir, no_cache, as_json))
    hits = [h for h, _ in results]
    if as_json:
        click.echo(search_view.hits_json(hits), nl=False)
    else:
        click.echo(search_view.hits_text(hits, [line for _, line in results]), nl=False)


@main.command()
@click.argument("directory", metavar="DIR")
@click.option("--out", metavar="PATH", help="Store file to write (default DIR/.cce/index.json).")
@click.option("--embedder", type=click.Choice(list(EMBEDDERS)), default="hash", show_default=True,
              help="Chunk embedder; ollama reads CCE_OLLAMA_URL and CCE_OLLAMA_MODEL.")
@click.option("--allow-secrets", is_flag=True,
              help="Turn secret protection off: index sensitive files and unredacted text.")
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def index(directory: str, out: str | None, embedder: str, allow_secrets: bool, languages_flag: str | None,
          config_path: str | None, cache_dir: str | None, no_cache: bool) -> None:
    """Index DIR and write the reference's persisted store (index.json) with a fingerprint beside it."""
    if out == "":
        raise click.UsageError("a value is required for '--out' but none was supplied")
    config = api.load_config(config_path)
    if allow_secrets:
        click.echo("warning: --allow-secrets: secret protection is off; files are indexed verbatim", err=True)
    written = api.index_corpus(directory, out=out, embedder=embedder, allow_secrets=allow_secrets,
                               languages=_languages(languages_flag, config), indexing=_indexing(cache_dir, no_cache, False),
                               config=config)
    click.echo(f"wrote {written.path}: {written.chunks} chunks from {written.files} files, "
               f"embedder {written.embedder}, {written.size} bytes")
    click.echo(f"wrote {written.fingerprint}")


def _check_golden(golden: str, report: str) -> None:
    """A drifted golden: its diff on stderr and exit 1; a matching one: one line on stderr."""
    diff = api.golden_diff(golden, report, missing_hint="run again with --update-golden to create it")
    if not diff:
        click.echo(f"golden report {golden} matches", err=True)
        return
    sys.stderr.write(diff)
    raise GateFailed(f"report drifted from golden {golden}",
                     hint="review the diff; if the change is intended, rerun with --update-golden")


def _update_golden(golden: str, report: str) -> None:
    """Write the golden, and say on stderr in one line whether it was created, changed or kept."""
    try:
        with open(golden, encoding="utf-8", newline="") as handle:
            before: str | None = handle.read()
    except (OSError, UnicodeDecodeError):
        before = None
    write_atomically(golden, report)
    what = "created" if before is None else "unchanged" if before == report else "updated"
    click.echo(f"golden report {golden} {what}", err=True)


_STATS_HELP = ("reference: the paired t-test the reference prints (default). full: also wins/losses/ties, d_z, "
               "a permutation p, a bootstrap CI, Holm-adjusted p and the MDE (docs/statistics.md).")


def _stats_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--stats` and `--primary-metric`, shared by `run` and `compare`."""
    command = click.option("--primary-metric", type=click.Choice(METRIC_KEYS),
                           help=f"With --stats full: the metric named primary (default {DEFAULT_PRIMARY}).")(command)
    return click.option("--stats", "stats_level", type=click.Choice(STATS_LEVELS), default="reference",
                        show_default=True, help=_STATS_HELP)(command)


def _primary(stats_level: str, primary: str | None) -> str:
    if primary is not None and stats_level != "full":
        raise click.UsageError("--primary-metric needs --stats full")
    return DEFAULT_PRIMARY if primary is None else primary


def _chart_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--chart` and `--chart-metric`, shared by `run --compare` and `compare`."""
    command = click.option("--chart-metric", metavar="KEY",
                           help=f"Metric to chart (default {DEFAULT_PRIMARY}): {', '.join(METRIC_KEYS)} "
                                "(run: also a --metrics key such as ndcg_at_k).")(command)
    return click.option("--chart", metavar="FILE",
                        help="Also write per-query deltas as a chart: FILE.md (Mermaid block), FILE.mmd "
                             "(Mermaid diagram) or FILE.svg.")(command)


def _chart_metric(chart: str | None, metric: str | None) -> str:
    if metric is not None and chart is None:
        raise click.UsageError("--chart-metric needs --chart FILE")
    return DEFAULT_PRIMARY if metric is None else metric


def _write_side_files(files: dict[str, str]) -> None:
    """Write extra outputs (TREC files, charts) atomically, before the report is printed."""
    for path, text in files.items():
        write_atomically(path, text)


def _trec_files(result: api.RunResult, run_path: str | None, qrels_path: str | None) -> dict[str, str]:
    """`--trec-qrels` and `--trec-run` contents; `{backend}` in the run path names one file per backend."""
    from cce_relevance.reporting.trec import run_files, run_qrels

    files = {}
    if qrels_path is not None:
        files[qrels_path] = run_qrels(result)
    if run_path is not None:
        runs = run_files(result)
        if len(runs) > 1 and "{backend}" not in run_path:
            raise click.UsageError("--trec-run needs a {backend} placeholder when more than one backend is scored "
                                   "(trec_eval reads one run per file), e.g. --trec-run 'runs/{backend}.run'")
        for name, text in runs.items():
            files[run_path.replace("{backend}", name)] = text
    return files


@main.command()
@click.argument("fixtures")
@click.option("--dir", "corpus_dir", metavar="DIR", help="Corpus directory to index (overrides the fixture header).")
@click.option("--store", metavar="STORE", help="Evaluate an existing persisted index file instead of a directory.")
@click.option("--backend", "backends", metavar="LIST",
              help=f"Comma-separated backends (default {','.join(BUILTIN_BACKENDS)}).")
@click.option("--compare", metavar="A,B", help="Score exactly two backends, with per-query deltas and a paired t-test.")
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.REPORT} JSON.")
@click.option("--output", metavar="FILE", help="Write the report to FILE (atomically) instead of stdout.")
@click.option("--golden", metavar="FILE", help="Fail (exit 1) with a diff when the JSON report differs from FILE.")
@click.option("--update-golden", is_flag=True, help="Rewrite the --golden file with this run's JSON report.")
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_languages_option
@_stats_options
@click.option("--metrics", metavar="LIST",
              help="Also report rank metrics: any of ndcg,ap,hit,rprec (docs/metrics.md).")
@click.option("--trec-run", metavar="FILE", help="Write each backend's TREC run; {backend} in FILE is its name.")
@click.option("--trec-qrels", metavar="FILE", help="Write the TREC qrels (relevant chunk ids) the evaluation used.")
@_chart_options
@_cache_options
def run(fixtures: str, corpus_dir: str | None, store: str | None, backends: str | None, compare: str | None,
        as_json: bool, output: str | None, golden: str | None, update_golden: bool, config_path: str | None,
        languages_flag: str | None, stats_level: StatsLevel, primary_metric: str | None, metrics: str | None, trec_run: str | None,
        trec_qrels: str | None, chart: str | None, chart_metric: str | None, cache_dir: str | None,
        no_cache: bool) -> None:
    """Score the FIXTURES set (cce.relevance/v1 NDJSON) at each backend."""
    from cce_relevance.reporting.chart import chart_renderer, run_chart
    from cce_relevance.reporting.run_report import run_report_json, run_report_text

    if chart is not None and compare is None:
        raise click.UsageError("--chart needs --compare A,B")
    chart_metric = _chart_metric(chart, chart_metric)
    render_chart = chart_renderer(chart) if chart else None
    if stats_level == "full" and compare is None:
        raise click.UsageError("--stats full needs --compare A,B")
    primary = _primary(stats_level, primary_metric)
    if store is not None and corpus_dir is not None:
        raise click.UsageError("the argument '--store <STORE>' cannot be used with '--dir <DIR>'")
    if store is not None and languages_flag is not None:
        raise click.UsageError("--languages applies to a directory; a store's chunks were made when it was indexed")
    if compare is not None and backends is not None:
        raise click.UsageError("the argument '--compare <A,B>' cannot be used with '--backend <LIST>'")
    if update_golden and golden is None:
        raise click.UsageError("--update-golden needs --golden FILE")
    for name, value in (("--dir", corpus_dir), ("--store", store), ("--output", output), ("--golden", golden),
                        ("--config", config_path), ("--metrics", metrics), ("--trec-run", trec_run),
                        ("--trec-qrels", trec_qrels), ("--chart", chart)):
        if value == "":
            raise click.UsageError(f"a value is required for '{name}' but none was supplied")
    config = api.load_config(config_path)
    result = api.run(fixtures, dir=corpus_dir, store=store, config=config,
                     backends=None if backends is None else comma_list(backends),
                     compare=None if compare is None else comma_list(compare),
                     stats_level=stats_level, primary=primary,
                     metrics=None if metrics is None else comma_list(metrics, str.strip),
                     trec=trec_run is not None or trec_qrels is not None,
                     languages=_languages(languages_flag, config), indexing=_indexing(cache_dir, no_cache, as_json),
                     outputs=api.own_outputs([output, golden, trec_run, trec_qrels, chart], config))
    side_files = _trec_files(result, trec_run, trec_qrels)
    if chart is not None and render_chart is not None:
        side_files[chart] = render_chart(run_chart(result, chart_metric))
    _write_side_files(side_files)
    report_json = run_report_json(result)
    if golden is not None and update_golden:
        _update_golden(golden, report_json)
    rendered = report_json if as_json else run_report_text(result)
    if output is not None:
        write_atomically(output, rendered)
    else:
        click.echo(rendered, nl=False)
    if golden is not None and not update_golden:
        _check_golden(golden, report_json)


@main.command()
@click.argument("base_report", metavar="BASE.json")
@click.argument("head_report", metavar="HEAD.json")
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.COMPARE} JSON.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Emit GitHub-flavoured Markdown.")
@_stats_options
@_chart_options
@click.option("--chart-backend", metavar="NAME", help="Backend to chart (default: the last one in both reports, as the Action charts).")
def compare(base_report: str, head_report: str, as_json: bool, as_markdown: bool, stats_level: StatsLevel,
            primary_metric: str | None, chart: str | None, chart_metric: str | None, chart_backend: str | None
            ) -> None:
    """Compare two saved `run --json` reports, pairing backends and queries by name (head − base)."""
    from cce_relevance.reporting.chart import chart_renderer, compare_chart
    from cce_relevance.reporting.compare_report import comparison_document, comparison_text
    from cce_relevance.reporting.markdown import comparison_markdown

    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown cannot be used together")
    if chart_backend is not None and chart is None:
        raise click.UsageError("--chart-backend needs --chart FILE")
    chart_metric = _chart_metric(chart, chart_metric)
    render_chart = chart_renderer(chart) if chart else None
    primary = _primary(stats_level, primary_metric)
    comparisons = api.compare_saved(api.load_report(base_report), api.load_report(head_report),
                                    base_report, head_report, stats_level=stats_level, primary=primary)
    if chart and render_chart is not None:
        _write_side_files({chart: render_chart(compare_chart(comparisons, chart_metric, chart_backend))})
    if as_json:
        text = dumps_report(comparison_document(base_report, head_report, comparisons))
    elif as_markdown:
        text = comparison_markdown(comparisons)
    else:
        text = comparison_text(base_report, head_report, comparisons)
    click.echo(text, nl=False)


@main.command()
@click.argument("fixtures")
@click.option("--dir", "corpus_dir", metavar="DIR", help="Corpus directory to check against (overrides the header).")
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.VALIDATE} JSON.")
@click.option("--suggest", is_flag=True,
              help="Print fixes for stale and moved anchors as a unified diff on stdout (apply with "
                   "`git apply` or `patch -p1`); the findings go to stderr.")
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def validate(fixtures: str, corpus_dir: str | None, as_json: bool, suggest: bool, languages_flag: str | None,
             config_path: str | None, cache_dir: str | None, no_cache: bool) -> None:
    """Check that every anchor of FIXTURES resolves to a chunk of the corpus (a gate: exit 1 on problems).

    Reports anchors whose file, kind or line range is not in the corpus, cases no backend can
    satisfy, and duplicate case ids. Exit 0 when clean, 1 when problems were found, 2 on bad input.
    With --suggest, stdout is a patch that points stale and moved anchors at where their definitions
    most likely are now.
    """
    from cce_relevance.reporting.validation_report import fixes_text, validation_document, validation_text

    if corpus_dir == "":
        raise click.UsageError("a value is required for '--dir' but none was supplied")
    if suggest and as_json:
        raise click.UsageError("--suggest prints a patch; it cannot be used with --json")
    config = api.load_config(config_path)
    languages = _languages(languages_flag, config)
    indexing = _indexing(cache_dir, no_cache, as_json)
    if suggest:
        suggestions = api.suggest(fixtures, dir=corpus_dir, languages=languages, indexing=indexing, config=config)
        result = suggestions.validation
        explained = validation_text(result) + fixes_text(suggestions.fixes, len(result.stale_anchors()))
        click.echo(explained, err=True, nl=False)
        click.echo(suggestions.patch, nl=False)
    else:
        result = api.validate(fixtures, dir=corpus_dir, languages=languages, indexing=indexing, config=config)
        text = dumps_report(validation_document(result)) if as_json else validation_text(result)
        click.echo(text, nl=False)
    if not result.ok:
        raise GateFailed(f"{len(result.findings)} problem(s) in {fixtures}: anchors that resolve to nothing "
                         "in the corpus, unsatisfiable cases or duplicate ids")


@main.command()
@click.argument("directory", metavar="DIR")
@click.option("--queries", type=click.IntRange(min=1), default=50, show_default=True,
              help="Cases to propose.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the draw: the same seed, the same set.")
@click.option("--out", metavar="FILE",
              help="Write the set to FILE (default: stdout); its header's corpus is DIR relative to FILE.")
@click.option("--force", is_flag=True,
              help="Replace --out FILE when it exists (a reviewed set is not overwritten by accident).")
@click.option("--forms", metavar="LIST",
              help="Query forms to draw: any of name,doc (easy), doc-unnamed,callers (hard); default all.")
@click.option("--include-tests", is_flag=True, help="Also draw from test files (left out by default).")
@click.option("--include-vendored", is_flag=True, help="Also draw from vendored code (left out by default).")
@click.option("--include-generated", is_flag=True,
              help="Also draw from generated files (left out by default).")
@click.option("--skip", multiple=True, metavar="PATTERN",
              help="Draw no case from paths PATTERN matches (a gitignore line, relative to DIR; they stay in "
                   "the corpus). Repeatable.")
@click.option("--backend", "backends", metavar="LIST",
              help=f"Backends to score the set at (default {','.join(BUILTIN_BACKENDS)}).")
@click.option("--no-score", is_flag=True, help="Only propose; do not score the set.")
@click.option("--report", metavar="FILE", help="Write the summary and scores to FILE instead of stderr.")
@_languages_option
@click.option("--config", "config_path", metavar="FILE", help=_CONFIG_HELP)
@_cache_options
def bootstrap(directory: str, queries: int, seed: int, out: str | None, force: bool, forms: str | None,
              include_tests: bool, include_vendored: bool, include_generated: bool, skip: tuple[str, ...],
              backends: str | None, no_score: bool, report: str | None, languages_flag: str | None,
              config_path: str | None, cache_dir: str | None, no_cache: bool) -> None:
    """Propose a fixture set drawn from DIR for a person to review: queries from definitions'
    names and doc lines (easy) and paraphrases (hard), each anchored to its definition, with a
    note saying where it came from; then report how each backend scores it."""
    from cce_relevance.reporting.proposal_report import proposal_text

    for name, value in (("--out", out), ("--report", report)):
        if value == "":
            raise click.UsageError(f"a value is required for '{name}' but none was supplied")
    if out is not None and os.path.exists(out) and not force:
        raise CceError(f"{out} exists; a proposed set would replace it",
                       hint="pass --force to replace it, or choose another --out")
    if no_score and backends is not None:
        raise click.UsageError("--backend needs scoring; it cannot be used with --no-score")
    config = api.load_config(config_path)
    rules = api.FileRules(tests=not include_tests, vendored=not include_vendored,
                          generated=not include_generated, skip=skip)
    result = api.bootstrap(api.require_directory(directory), queries=queries, seed=seed, out=out, rules=rules,
                           forms=comma_list(forms) if forms is not None else api.FORMS,
                           backends=comma_list(backends) if backends is not None else None,
                           score=not no_score, config=config,
                           languages=_languages(languages_flag, config),
                           indexing=_indexing(cache_dir, no_cache, False))
    if out is not None:
        write_atomically(out, result.text)
    else:
        click.echo(result.text, nl=False)
    p = result.proposal
    summary = proposal_text(out or "stdout", len(p.cases), queries, p.candidates, p.files, p.skipped,
                            result.form_counts(), api.HARD_FORMS, result.discrimination())
    if report is not None:
        write_atomically(report, summary)
    else:
        click.echo(summary, err=True, nl=False)


@main.command()
@click.argument("source", metavar="REPORT_OR_COMPARE.json")
@click.option("--delta", type=float, required=True, help="The smallest mean delta worth detecting, e.g. 0.05.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Two-sided significance level.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Chance of detecting a real delta.")
@click.option("--metric", type=click.Choice(METRIC_KEYS), help="Plan for this metric only (default: all).")
@click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.POWER} JSON.")
def power(source: str, delta: float, alpha: float, power: float, metric: str | None, as_json: bool) -> None:
    """Queries needed to detect --delta, from the per-query deltas of a `run --compare` report, a
    `compare --json` document or the Action's compare.json (the paired t-test's power analysis;
    docs/statistics.md)."""
    from cce_relevance.reporting.power_report import power_document, power_text

    analysis = api.power_analysis(source, delta, alpha=alpha, power=power, metric=metric)
    text = dumps_report(power_document(analysis)) if as_json else power_text(analysis)
    click.echo(text, nl=False)


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
