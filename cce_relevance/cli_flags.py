"""The flags several `cce-relevance` commands share, and how the CLI reads them into options.

One definition per flag: its name, metavar and help are written here once and every command
that takes it uses this one (`cli.py` keeps the flags only one command has). A comma list is
split here (`comma_list`), never in the library; the names in it are checked by `api`, at the
point of a run where the reference checks them. Reading the flags needs none of the library:
`api` is imported when a command first builds its options, so `--help` starts fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from cce_relevance import schemas
from cce_relevance.errors import CceError
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRIC_KEYS
from cce_relevance.lazy_import import lazy_module
from cce_relevance.progress import progress_bar
from cce_relevance.reference import BUILTIN_BACKENDS
from cce_relevance.retrieval.chunking.languages import EXTRA_LANGUAGES
from cce_relevance.stats.stats_level import STATS_LEVELS
from cce_relevance.strings import rust_trim

if TYPE_CHECKING:
    from cce_relevance import api
else:
    api = lazy_module("cce_relevance.api")

Command = Callable[..., None]
Decorator = Callable[[Command], Command]
PER_QUERY_FORMATS = ("text", "csv", "tsv")  # reporting/per_query.py renders them


class NonEmpty(click.types.StringParamType):
    """A value that may not be empty (`--output ''` names no file): a usage error naming the flag."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = super().convert(value, param, ctx)
        if text == "":
            flag = param.opts[0] if param is not None else "option"
            raise click.UsageError(f"a value is required for '{flag}' but none was supplied", ctx)
        return text


NON_EMPTY = NonEmpty()


def options(*decorators: Decorator) -> Decorator:
    """Several click options as one decorator, listed in `--help` in the order given."""

    def apply(command: Command) -> Command:
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply


def path_option(
    flag: str, help: str, name: str | None = None, metavar: str = "FILE", **extra: Any
) -> Decorator:
    """A flag naming a file or directory (never empty)."""
    names = (flag,) if name is None else (flag, name)
    return click.option(*names, type=NON_EMPTY, metavar=metavar, help=help, **extra)


CONFIG_HELP = (
    "Backend variants, external retrievers and extra languages (default: cce-relevance.toml in the "
    "working directory or the nearest one above it, up to the repository root)."
)
config_option = path_option("--config", CONFIG_HELP, "config_path")
languages_option = click.option(
    "--languages",
    "languages_flag",
    metavar="LIST",
    help=f"Also chunk these languages: any of {','.join(EXTRA_LANGUAGES)} (replaces the "
    "config file's `languages`; '' for none). Default: the reference's six only.",
)
cache_options = options(
    path_option(
        "--cache",
        "Cache directory: unchanged files are not indexed again, unchanged texts not embedded again "
        "(default: $XDG_CACHE_HOME/cce-relevance, else ~/.cache/cce-relevance).",
        "cache_dir",
        "DIR",
    ),
    click.option(
        "--no-cache",
        is_flag=True,
        help="Index every file (and embed every text) again; do not read or write the caches.",
    ),
)
corpus_options = options(
    path_option("--dir", "Corpus directory (default: the fixture header's corpus).", "corpus_dir", "DIR"),
    path_option("--store", "Score an existing persisted index file instead of a directory.", metavar="STORE"),
)
stats_options = options(
    click.option(
        "--stats",
        "stats_level",
        type=click.Choice(STATS_LEVELS),
        default="reference",
        show_default=True,
        help="reference: the paired t-test the reference prints (default). full: also wins/losses/ties, "
        "d_z, a permutation p, a bootstrap CI, Holm-adjusted p and the MDE (docs/statistics.md).",
    ),
    click.option(
        "--primary-metric",
        metavar="KEY",
        help=f"With --stats full: the metric named primary (default {DEFAULT_PRIMARY}): "
        f"{', '.join(METRIC_KEYS)}, or a --metrics key such as ndcg_at_k.",
    ),
)
chart_options = options(
    path_option(
        "--chart",
        "Also write per-query deltas as a chart: FILE.md (Mermaid block), FILE.mmd "
        "(Mermaid diagram) or FILE.svg.",
    ),
    click.option(
        "--chart-metric",
        metavar="KEY",
        help=f"Metric to chart (default {DEFAULT_PRIMARY}): {', '.join(METRIC_KEYS)}, "
        "or a --metrics key the run or both reports carry, such as ndcg_at_k.",
    ),
)
report_json_option = click.option("--json", "as_json", is_flag=True, help=f"Emit the {schemas.REPORT} JSON.")
output_option = path_option("--output", "Write the report to FILE (atomically) instead of stdout.")
golden_option = path_option("--golden", "Fail (exit 1) with a diff when the JSON report differs from FILE.")
report_options = options(
    report_json_option,
    output_option,
    golden_option,
    click.option("--update-golden", is_flag=True, help="Rewrite the --golden file with this JSON report."),
)
scoring_options = options(
    click.option(
        "--metrics",
        type=NON_EMPTY,
        metavar="LIST",
        help="Also report rank metrics: any of ndcg,ap,hit,rprec,judged, cut-offs such as "
        "ndcg@10,p@1,recall@20, token budgets such as recall@budget=2000,tok-recall@budget=2000, and "
        "ttfr, the tokens to the first relevant hit (docs/metrics.md).",
    ),
    click.option(
        "--per-query",
        "per_query",
        type=click.Choice(PER_QUERY_FORMATS),
        help="Print per-query results instead of the report: text (each query's first relevant rank and "
        "top hits, relevant ones marked *, ones no anchor labels ?), or csv/tsv (one row per query x "
        "backend x metric, like trec_eval -q).",
    ),
    path_option("--trec-qrels", "Write the TREC qrels (relevant chunk ids) the scoring used."),
)
backends_help = f"Comma-separated backends (default {','.join(BUILTIN_BACKENDS)})."


def comma_list(value: str, trim: Callable[[str], str] = rust_trim) -> list[str]:
    """A comma-separated flag value (`--backend`, `--compare`, `--metrics`, `--languages`) → its
    pieces, trimmed (as the reference trims: Rust's `str::trim`), empty ones dropped."""
    return [name for piece in value.split(",") if (name := trim(piece))]


def listed(value: str | None, trim: Callable[[str], str] = rust_trim) -> list[str] | None:
    """`comma_list` of a flag given, None for one not given."""
    return None if value is None else comma_list(value, trim)


def indexing(cache_dir: str | None, no_cache: bool, quiet: bool) -> api.BuildOptions:
    """How to index: the cache flags, and a progress bar on stderr unless `quiet` (JSON output)."""
    if cache_dir is not None and no_cache:
        raise click.UsageError("--cache and --no-cache cannot be used together")
    return api.BuildOptions.with_cache(
        cache_dir, use_cache=not no_cache, progress=progress_bar(sys.stderr, quiet=quiet)
    )


def run_options(quiet: bool, **chosen: Any) -> api.RunOptions:
    """The options of a command that indexes, from its shared flags (`--config`, `--languages`,
    `--cache`, `--no-cache`, read by parameter name from the command being run), a progress bar
    unless `quiet` (JSON output), and what the command `chosen`."""
    flags = click.get_current_context().params
    config = api.load_config(flags["config_path"])
    return api.RunOptions(
        config=config,
        languages=listed(flags["languages_flag"]),
        indexing=indexing(flags["cache_dir"], flags["no_cache"], quiet),
        **chosen,
    )


def primary_metric(stats_level: str, primary: str | None) -> str:
    """`--primary-metric`, which only the full statistics name."""
    if primary is not None and stats_level != "full":
        raise click.UsageError("--primary-metric needs --stats full")
    return DEFAULT_PRIMARY if primary is None else primary


def chart_metric(chart: str | None, metric: str | None) -> str:
    """`--chart-metric`, which only a chart draws."""
    if metric is not None and chart is None:
        raise click.UsageError("--chart-metric needs --chart FILE")
    return DEFAULT_PRIMARY if metric is None else metric


def report_choices() -> dict[str, Any]:
    """The usage checks `run` and `score` share, made on the flags of the command being run (by
    parameter name), then the `RunOptions` fields both read from them: what is compared, the
    statistics, their primary metric, the rank metrics, whether the cases' labels are read."""
    flags = click.get_current_context().params
    stats_level, compare, golden = flags["stats_level"], flags["compare"], flags["golden"]
    if stats_level == "full" and compare is None:
        raise click.UsageError("--stats full needs --compare A,B")
    if stats_level == "full" and compare is not None and len(dict.fromkeys(comma_list(compare))) > 2:
        raise CceError(
            "--stats full compares two backends; with three or more every pair is tested "
            "(Holm) beside a randomised Tukey HSD already"
        )
    chosen = primary_metric(stats_level, flags["primary_metric"])
    if flags["store"] is not None and flags["corpus_dir"] is not None:
        raise click.UsageError("the argument '--store <STORE>' cannot be used with '--dir <DIR>'")
    if flags["update_golden"] and golden is None:
        raise click.UsageError("--update-golden needs --golden FILE")
    if flags["per_query"] is not None and flags["as_json"]:
        raise click.UsageError(
            "--per-query and --json cannot be used together (the JSON report has per_query)"
        )
    return {
        "compare": listed(compare),
        "stats_level": stats_level,
        "primary": chosen,
        "metrics": listed(flags["metrics"], str.strip),
        "labels": flags["per_query"] == "text",  # the top hits mark what a reviewer judged
    }


def shard(text: str | None, state: str | None, **refused: str | None) -> api.Shard | None:
    """The `--shard` of a run, which needs `--shard-state` and scores backends only."""
    if (text is None) != (state is None):
        raise click.UsageError("--shard I/N and --shard-state FILE go together")
    if text is None:
        return None
    for name, value in refused.items():
        if value:
            raise click.UsageError(f"--shard cannot be used with --{name}: merge the shards, then compare")
    try:
        return api.Shard.parse(text, "--shard")
    except CceError as exc:
        raise click.UsageError(exc.message) from None
