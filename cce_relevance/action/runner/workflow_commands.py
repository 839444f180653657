"""Talk to the Actions runner: output and summary files, and workflow commands on stdout.

The formats follow the runner's own parsers (actions/runner ``FileCommandManager.cs`` and
``ActionCommand.cs``) and the toolkit's escaping (actions/toolkit ``core/src/command.ts``):

* ``GITHUB_OUTPUT`` takes ``name<<DELIMITER`` / value lines / ``DELIMITER``. The value ends at the
  first line that *equals* the delimiter, so a predictable delimiter lets a value that contains
  it inject further outputs; ours is random and is regenerated if the value contains it.
* A workflow command is ``::name key=value,key=value::data``, recognised on any output line whose
  text *after leading whitespace* starts with ``::``, and the legacy ``##[name]data`` anywhere
  in a line. Data escapes ``%``, CR and LF; property values also escape ``:`` and ``,``.

Everything the Action prints goes through `log`, the one printer: a `WorkflowCommand` (what
`annotation` builds, or a block of untrusted text that `neutralize_untrusted` fences off) is
printed as built; any other line may carry data from a pull request, a shard state or a saved
side, so `plain` escapes it first (``%``, CR and LF encoded as in command data, a ``::`` that
would start the line and every ``##[`` broken), and no such line can be read as a command.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from typing import Literal

from cce_relevance.errors import CceError

# The runner refuses a step summary larger than this (bytes) and then shows none of it.
STEP_SUMMARY_LIMIT = 1024 * 1024

AnnotationKind = Literal["error", "warning", "notice"]

_OUTPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_COMMAND_START = re.compile(r"^(\s*):")  # the runner strips leading whitespace, then looks for `::`
_LEGACY_COMMAND = re.compile(r"##\[")


class WorkflowCommand(str):
    """A log line (or fenced block) this program built to be read by the runner as a command."""


def _unique_token(prefix: str, *avoid: str) -> str:
    """A random token that occurs in none of `avoid` (128 bits: a collision is astronomically rare,
    but untrusted text could contain a token we printed earlier, so we check anyway)."""
    while True:
        token = f"{prefix}{secrets.token_hex(16)}"
        if not any(token in text for text in avoid):
            return token


def set_outputs(path: str | os.PathLike[str], mapping: Mapping[str, str]) -> None:
    """Append step outputs to the ``GITHUB_OUTPUT`` file, each in heredoc form.

    The runner recovers each value byte for byte, multi-line or not (see the tests, which parse
    the file back the way the runner does). Names are restricted to what an output id may be.
    Keep values small: outputs share a 1 MB per-job budget, so large reports go in a file whose
    path is the output.
    """
    chunks = []
    for name, value in mapping.items():
        if not _OUTPUT_NAME.fullmatch(name):
            raise ValueError(f"invalid output name {name!r}: use letters, digits, '-' and '_'")
        delimiter = _unique_token("ghadelimiter_", value)
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write("".join(chunks))


def write_step_outputs(path: str | os.PathLike[str], mapping: Mapping[str, str]) -> None:
    """`set_outputs` for the Action's outputs: later steps read them, so a ``GITHUB_OUTPUT`` that
    cannot be written (a directory, a missing directory, a full disk) is a configuration error."""
    try:
        set_outputs(path, mapping)
    except OSError as exc:
        raise CceError(
            f"could not write the step outputs to GITHUB_OUTPUT={path}: {exc.strerror or exc}",
            hint="GITHUB_OUTPUT must name a writable file (the runner sets it)",
        ) from None


def append_step_summary(path: str | os.PathLike[str], markdown: str) -> None:
    """Append Markdown to the ``GITHUB_STEP_SUMMARY`` file, refusing to break the summary.

    Past `STEP_SUMMARY_LIMIT` the runner discards the *whole* summary, so an append that would
    cross it raises ValueError and writes nothing; budget the Markdown first, for example with
    ``report.fit.fit_body(..., limit=STEP_SUMMARY_LIMIT, measure=lambda s: len(s.encode()))``.
    """
    if not markdown.endswith("\n"):
        markdown += "\n"
    data = markdown.encode("utf-8")
    existing = os.path.getsize(path) if os.path.exists(path) else 0
    if existing + len(data) > STEP_SUMMARY_LIMIT:
        raise ValueError(
            f"the step summary would grow to {existing + len(data)} bytes, over the runner's "
            f"{STEP_SUMMARY_LIMIT}-byte limit (past it the whole summary is dropped)"
        )
    with open(path, "ab") as handle:
        handle.write(data)


def escape_data(text: str) -> str:
    """Escape a workflow command's data (the message after the second ``::``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property value; ``:`` and ``,`` would end it early."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    kind: AnnotationKind,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> WorkflowCommand:
    """One annotation command line (print it with `log`).

    `file` must be relative to the repository root for GitHub to attach the annotation to the
    diff; a container path such as ``/github/workspace/...`` is not. The runner shows at most
    10 annotations of each kind per step, so callers should pick the important ones.
    Empty properties are left out: the runner drops ``key=`` with no value anyway.
    """
    if line is not None and line < 1:
        raise ValueError(f"annotation line must be 1 or more, not {line}")
    properties = [
        f"{key}={escape_property(value)}"
        for key, value in (("file", file), ("line", None if line is None else str(line)), ("title", title))
        if value
    ]
    head = f"{kind} {','.join(properties)}" if properties else kind
    return WorkflowCommand(f"::{head}::{escape_data(message)}")


def error_annotation(
    message: str, file: str | None = None, line: int | None = None, title: str | None = None
) -> WorkflowCommand:
    """An ``::error`` annotation; see `annotation`."""
    return annotation("error", message, file=file, line=line, title=title)


def neutralize_untrusted(text: str) -> WorkflowCommand:
    """Wrap untrusted text so that printing it to the log cannot run a workflow command.

    Technique: ``::stop-commands::<token>`` before the text and ``::<token>::`` after it. While
    stopped, the runner processes no command at all (v2 ``::x::`` lines, with or without
    leading whitespace, and legacy ``##[x]`` anywhere in a line) until it sees the token as a
    command, so the text is printed exactly as it is. The token is random, so the text cannot
    contain the resume line; it is regenerated in the vanishing case that it does. Prefixing
    lines instead would have to anticipate every trigger (leading spaces, ``##[``, a bare CR
    that the log reader treats as a line break), and would alter the text.

    Print the returned block as one unit, with `log`.
    """
    token = _unique_token("cce-", text)
    return WorkflowCommand(f"::stop-commands::{token}\n{text}\n::{token}::")


def plain(text: str) -> str:
    """`text` as one log line the runner shows and never runs: CR, LF and ``%`` encoded as in a
    command's data, a ``:`` that could start a ``::`` command (after any leading whitespace)
    encoded as ``%3A``, and every legacy ``##[`` broken into ``##%5B``."""
    return _LEGACY_COMMAND.sub("##%5B", _COMMAND_START.sub(r"\1%3A", escape_data(text)))


def log(line: str) -> None:
    """Print one line (or a `WorkflowCommand` block) to the job's log, flushed so it interleaves
    with git's and the retrievers' output in order: our commands as built, anything else `plain`."""
    print(line if isinstance(line, WorkflowCommand) else plain(line), flush=True)
