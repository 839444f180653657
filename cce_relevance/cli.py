"""The `cce-relevance` commands: parse arguments, call `api`, render, exit.

Each command decides everything that can fail before it prints, so an exit 2 leaves standard
output empty; files it writes are staged and committed together (`atomic_files`). The flags
several commands share are defined once, in `cli_flags`; errors become exit codes, and standard
output is written, in `cli_boundary`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from cce_relevance import __version__, schemas, untrusted_json
from cce_relevance import cli_flags as flags
from cce_relevance.atomic_files import OutputSet, write_output
from cce_relevance.cli_boundary import ErrorBoundary, emit
from cce_relevance.errors import CceError, GateFailed
from cce_relevance.evaluation.history import DEFAULT_MAX_DEFINITIONS
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRIC_KEYS
from cce_relevance.lazy_import import lazy_module
from cce_relevance.memory_pages import prefer_small_pages
from cce_relevance.reference import BUILTIN_BACKENDS, HASH_EMBEDDER
from cce_relevance.reference import listed as listed_names
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.stats.stats_level import StatsLevel

# The library (numpy, tree-sitter grammars, requests) loads when a command first uses it, and the
# renderers are imported inside the commands that print them: `--help` starts fast.
if TYPE_CHECKING:
    from cce_relevance import api
else:
    api = lazy_module("cce_relevance.api")


@click.group(cls=ErrorBoundary, context_settings={"help_option_names": ["-h", "--help"]})
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
        emit(search_view.conformance_document(found))
    else:
        emit(search_view.conformance_table(found, symbols.of_chunk))


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
    emit(
        search_view.hits_json(hits) if as_json else search_view.hits_text(hits, [line for _, line in results])
    )


@main.command()
@click.argument("directory", metavar="DIR")
@flags.path_option("--out", "Store file to write (default DIR/.cce/index.json).", metavar="PATH")
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
    emit(
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
    per_query: str | None,
    trec_qrels: str | None,
    trec_run: str | None,
    chart: str | None,
    chart_metric: str | None,
    cache_dir: str | None,
    no_cache: bool,
    shard_text: str | None,
    shard_state: str | None,
    cost: bool,
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
    _write_report(result, side_files, as_json, output, golden, update_golden, per_query, cost)


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
        emit(rendered)
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
    chart_metric = flags.chart_metric(chart, chart_metric)
    render_chart = chart_renderer(chart) if chart else None
    options = api.RunOptions(
        stats_level=stats_level, primary=flags.primary_metric(stats_level, primary_metric)
    )
    comparisons = api.compare_saved(base_report, head_report, options)
    chart_text = (
        render_chart(compare_chart(comparisons, chart_metric, chart_backend)) if render_chart else None
    )
    base_cost, head_cost = (side_costs(untrusted_json.read_document(p, "report")) for p in report_paths)
    if as_json:
        text = dumps_report(comparison_document(base_report, head_report, comparisons))
    elif as_markdown:
        text = comparison_markdown(comparisons) + cost_markdown(base_cost, head_cost)
    else:
        text = comparison_text(base_report, head_report, comparisons) + compare_cost_text(
            base_cost, head_cost, [c.pair.backend for c in comparisons]
        )
    if chart is not None and chart_text is not None:
        write_output(chart, chart_text)
    emit(text)


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
    type=flags.NON_EMPTY,
    metavar="LIST",
    help=f"With --unjudged: the backends searched (default {','.join(BUILTIN_BACKENDS)}).",
)
@flags.path_option(
    "--accept",
    "With --unjudged --suggest: the filled-in review form (- for stdin); its `y` lines are added "
    'to "expected", its `n` lines to "irrelevant".',
)
@flags.languages_option
@flags.config_option
@flags.cache_options
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
    from cce_relevance.reporting.unjudged_report import accepted_text, review_form
    from cce_relevance.reporting.validation_report import fixes_text, validation_document, validation_text

    for printed, name in (
        (suggest, "--suggest prints a patch"),
        (unjudged, "--unjudged prints a review form"),
    ):
        if printed and as_json:
            raise click.UsageError(f"{name}; it cannot be used with --json")
    for name, given in (("--top", top is not None), ("--backend", backends is not None)):
        if given and not unjudged:
            raise click.UsageError(f"{name} needs --unjudged")
    if (accept is not None) != (unjudged and suggest):
        raise click.UsageError("--unjudged --suggest and --accept FILE go together")
    if accept is not None:
        if top is not None or backends is not None:
            raise click.UsageError("--accept reads a review form: --top and --backend made it already")
        accepted = api.accept_review(fixtures, accept)
        click.echo(accepted_text(accepted), err=True, nl=False)
        emit(accepted.patch)
        return
    options = flags.run_options(as_json, backends=flags.listed(backends))
    if unjudged:
        found = api.unjudged(fixtures, options, dir=corpus_dir, top=top)
        result = found.validation
        click.echo(validation_text(result), err=True, nl=False)
        emit(review_form(fixtures, found.backends, found.top, found.cases))
    elif suggest:
        suggestions = api.suggest(fixtures, options, dir=corpus_dir)
        result = suggestions.validation
        explained = validation_text(result) + fixes_text(suggestions.fixes, len(result.stale_anchors()))
        click.echo(explained, err=True, nl=False)
        emit(suggestions.patch)
    else:
        result = api.validate(fixtures, options, dir=corpus_dir)
        emit(dumps_report(validation_document(result)) if as_json else validation_text(result))
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
@click.option(
    "--from-history",
    "from_history",
    metavar="[REV_RANGE]",
    is_flag=False,
    flag_value="HEAD",
    default=None,
    type=flags.NON_EMPTY,
    help="Draw the cases from the git history of DIR's repository instead (default range HEAD): "
    "one per commit, its subject as the query, the definitions it changed (at its parent) as anchors.",
)
@flags.path_option("--since", "With --from-history: only commits since DATE (git's dates).", metavar="DATE")
@flags.path_option("--until", "With --from-history: only commits until DATE.", metavar="DATE")
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

    _history_checks(
        from_history, since=since, until=until, with_body=with_body, max_definitions=max_definitions
    )
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
    if from_history is not None:
        definitions = max_definitions if max_definitions is not None else DEFAULT_MAX_DEFINITIONS
        history = api.HistoryOptions(from_history, since, until, queries, with_body, definitions)
        mined = api.bootstrap_history(
            directory, options, history=history, out=out, rules=rules, score=not no_score
        )
        dates = "".join(f" {flag} {value}" for flag, value in (("since", since), ("until", until)) if value)
        text = mined.text
        summary = history_text(
            out or "stdout", mined.proposal, queries, from_history, dates, mined.discrimination()
        )
    else:
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
        text, summary = result.text, proposal_text(result, out or "stdout", queries)
    with OutputSet() as outputs:
        if out is not None:
            outputs.stage(out, text)
        if report is not None:
            outputs.stage(report, summary)
        outputs.commit()
    if out is None:
        emit(text)
    if report is None:
        click.echo(summary, err=True, nl=False)


def _history_checks(from_history: str | None, **given: object) -> None:
    """The flags of `bootstrap --from-history` (`given`) need it, and those of the other way refuse it."""
    if from_history is None:
        for name, value in given.items():
            if value is not None and value is not False:
                raise click.UsageError(f"--{name.replace('_', '-')} needs --from-history")
        return
    ctx = click.get_current_context()
    for name in ("seed", "forms"):
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
            raise click.UsageError(f"--{name} draws from definitions; it cannot be used with --from-history")


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
    emit(dumps_report(power_document(analysis)) if as_json else power_text(analysis))


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
    from cce_relevance.action.trend.view import load, select, trend_document, trend_text

    loaded = load(history)
    series = select(loaded, metric, fixture, backend)
    emit(dumps_report(trend_document(loaded, series)) if as_json else trend_text(loaded, series))


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
