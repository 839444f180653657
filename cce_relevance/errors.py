"""One error type for every expected failure, and the exit codes, written down once.

Front doors (the CLI, the Action) catch `CceError`, print `error: <message>` on stderr and
exit with `exit_code`. Anything else is a bug: the front doors report it in one line with a
request to report it (`internal_error`) and exit `EXIT_INTERNAL`, never with a traceback that
exits 1 and reads as a failed gate in CI.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1  # golden drift, or a significant regression when asked to gate on one
EXIT_USAGE = 2  # bad arguments or bad input: fixture, corpus, store, configuration; an unwritable output
EXIT_INTERNAL = 70  # a bug in cce-relevance (sysexits' EX_SOFTWARE); set CCE_RELEVANCE_TRACEBACK=1 to see it

TRACEBACK_VARIABLE = "CCE_RELEVANCE_TRACEBACK"


class CceError(Exception):
    """An expected, user-facing failure with a message in the reference's wording."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class GateFailed(CceError):
    """A gate (golden drift, significant regression) failed: exit 1."""

    exit_code = EXIT_GATE_FAILED


class InternalError(CceError):
    """An unexpected exception (a bug), reported in one line: exit 70, never a traceback exiting 1."""

    exit_code = EXIT_INTERNAL


def internal_error(exc: BaseException) -> InternalError:
    """The one-line report of an unexpected exception, with the hint to report it.

    The front doors print it like any `CceError`, and the traceback too when
    `CCE_RELEVANCE_TRACEBACK` is set.
    """
    lines = str(exc).splitlines()
    detail = lines[0][:300] if lines else ""
    return InternalError(
        f"internal error: {type(exc).__name__}{': ' + detail if detail else ''}",
        hint="this is a bug in cce-relevance; please report it to its issue tracker with the command and "
        f"the inputs that caused it (set {TRACEBACK_VARIABLE}=1 to print the traceback)",
    )
