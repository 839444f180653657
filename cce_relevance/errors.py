"""One error type for every expected failure, and the exit codes, written down once.

Front doors (the CLI, the Action) catch `CceError`, print `error: <message>` on stderr and
exit with `exit_code`; anything else is a bug and is allowed to surface as a traceback.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1  # golden drift, or a significant regression when asked to gate on one
EXIT_USAGE = 2  # bad arguments or bad input: fixture, corpus, store, configuration


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
