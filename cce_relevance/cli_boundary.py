"""Where the `cce-relevance` commands meet the terminal: errors become exit codes, and standard
output that cannot be written is an error, never a traceback.

Expected failures are `CceError`s: printed as one `error: …` line on stderr with the error's exit
code (2 for usage and input errors, 1 for a failed gate). Argument-parser errors are click's,
also exit 2. Standard output that cannot be written (a full disk, a closed pipe) is exit 2 with a
message; any other exception is a bug, reported in one line with exit 70
(`errors.internal_error`).
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from typing import Any

import click

from cce_relevance.errors import EXIT_USAGE, TRACEBACK_VARIABLE, CceError, internal_error


class ErrorBoundary(click.Group):
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


def emit(text: str) -> None:
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
