"""The `cce-relevance` command line: parse arguments, call `api`, render, map errors to exit codes.

Expected failures are `CceError`s: printed as one `error: …` line on stderr with the error's
exit code (2 for usage and input errors, 1 for a failed gate). Argument-parser errors are
click's, also exit 2.
"""

from __future__ import annotations

import difflib
import os
import sys
import tempfile

import click

from cce_relevance import __version__, api
from cce_relevance.errors import CceError, GateFailed
from cce_relevance.reporting import search_view
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.reporting.compare_report import comparison_document, comparison_text
from cce_relevance.reporting.markdown import comparison_markdown


class _Group(click.Group):
    """Turns `CceError` into `error: <message>` and its exit code, never a traceback."""

    def invoke(self, ctx: click.Context):
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


def _directory(path: str) -> str:
    if not os.path.isdir(path):
        raise CceError(f"corpus is not a directory: {path}")
    return path


@main.command()
@click.argument("directory", metavar="DIR")
@click.option("--json", "as_json", is_flag=True, help="Print the conformance.json document.")
def chunks(directory: str, as_json: bool) -> None:
    """List every chunk of DIR (the conformance listing)."""
    found = api.chunks(_directory(directory))
    click.echo(search_view.conformance_document(found) if as_json else search_view.conformance_table(found),
               nl=False)


@main.command()
@click.argument("directory", metavar="DIR")
@click.argument("query")
@click.option("--backend", type=click.Choice(["bm25", "vector", "hybrid"]), default="hybrid", show_default=True,
              help="Ranking backend.")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Number of results.")
@click.option("--json", "as_json", is_flag=True, help="Print result records as JSON.")
def search(directory: str, query: str, backend: str, k: int, as_json: bool) -> None:
    """Run QUERY over DIR through one backend and show ranks, scores, spans and kinds."""
    results = api.search(_directory(directory), query, backend, k)
    hits = [h for h, _ in results]
    if as_json:
        click.echo(search_view.hits_json(hits), nl=False)
    else:
        click.echo(search_view.hits_text(hits, [line for _, line in results]), nl=False)


def write_atomically(path: str, text: str) -> None:
    """Write via a temporary file in the same directory and rename: never a half-written file."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".cce-relevance-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from None


def _check_golden(golden: str, report: str) -> None:
    try:
        with open(golden, encoding="utf-8", newline="") as fh:
            expected = fh.read()
    except FileNotFoundError:
        raise CceError(f"golden report not found: {golden}",
                       hint="run again with --update-golden to create it") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CceError(f"could not read golden report {golden}: {exc}") from None
    if expected == report:
        return
    diff = difflib.unified_diff(expected.splitlines(keepends=True), report.splitlines(keepends=True),
                                fromfile=f"{golden} (golden)", tofile="current run")
    sys.stderr.write("".join(diff))
    raise GateFailed(f"report drifted from golden {golden}",
                     hint="review the diff; if the change is intended, rerun with --update-golden")


@main.command()
@click.argument("fixtures")
@click.option("--dir", "corpus_dir", metavar="DIR", help="Corpus directory to index (overrides the fixture header).")
@click.option("--store", metavar="STORE", help="Evaluate an existing persisted index file instead of a directory.")
@click.option("--backend", "backends", metavar="LIST", help="Comma-separated backends (default bm25,vector,hybrid).")
@click.option("--compare", metavar="A,B", help="Score exactly two backends, with per-query deltas and a paired t-test.")
@click.option("--json", "as_json", is_flag=True, help="Emit the cce.relevance.report/v2 JSON.")
@click.option("--output", metavar="FILE", help="Write the report to FILE (atomically) instead of stdout.")
@click.option("--golden", metavar="FILE", help="Fail (exit 1) with a diff when the JSON report differs from FILE.")
@click.option("--update-golden", is_flag=True, help="Rewrite the --golden file with this run's JSON report.")
def run(fixtures: str, corpus_dir: str | None, store: str | None, backends: str | None, compare: str | None,
        as_json: bool, output: str | None, golden: str | None, update_golden: bool) -> None:
    """Score the FIXTURES set (cce.relevance/v1 NDJSON) at each backend."""
    if store is not None and corpus_dir is not None:
        raise click.UsageError("the argument '--store <STORE>' cannot be used with '--dir <DIR>'")
    if compare is not None and backends is not None:
        raise click.UsageError("the argument '--compare <A,B>' cannot be used with '--backend <LIST>'")
    if update_golden and golden is None:
        raise click.UsageError("--update-golden needs --golden FILE")
    for name, value in (("--dir", corpus_dir), ("--store", store), ("--output", output), ("--golden", golden)):
        if value == "":
            raise click.UsageError(f"a value is required for '{name}' but none was supplied")
    result = api.run(fixtures, dir=corpus_dir, store=store, backends=backends, compare=compare)
    report_json = result.to_json()
    if golden is not None and update_golden:
        write_atomically(golden, report_json)
    rendered = report_json if as_json else result.to_text()
    if output is not None:
        write_atomically(output, rendered)
    else:
        click.echo(rendered, nl=False)
    if golden is not None and not update_golden:
        _check_golden(golden, report_json)


@main.command()
@click.argument("base_report", metavar="BASE.json")
@click.argument("head_report", metavar="HEAD.json")
@click.option("--json", "as_json", is_flag=True, help="Emit the cce.relevance.compare/v1 JSON.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Emit GitHub-flavoured Markdown.")
def compare(base_report: str, head_report: str, as_json: bool, as_markdown: bool) -> None:
    """Compare two saved `run --json` reports, pairing backends and queries by name (head − base)."""
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown cannot be used together")
    comparisons = api.compare_saved(api.load_report(base_report), api.load_report(head_report),
                                    base_report, head_report)
    if as_json:
        text = dumps_report(comparison_document(base_report, head_report, comparisons))
    elif as_markdown:
        text = comparison_markdown(comparisons)
    else:
        text = comparison_text(base_report, head_report, comparisons)
    click.echo(text, nl=False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
