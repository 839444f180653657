"""Fitting a report to a size budget: the head (the verdict) and the tail whole, the detail
sections in order while they fit, the first that does not cut at a line boundary that leaves
valid Markdown, and a note saying where the full report is.

Both the pull-request comment (GitHub counts characters) and the job summary (bytes) are
budgeted this way, so the verdict always survives however large a change's tables grow.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cce_relevance.action.runner.pr_comment import COMMENT_LIMIT

DEFAULT_FULL_REPORT = "the job summary and the workflow run's artifacts"


def fit_body(
    head: str,
    detail_sections: list[str],
    tail: str,
    limit: int = COMMENT_LIMIT,
    *,
    full_report: str = DEFAULT_FULL_REPORT,
    measure: Callable[[str], int] = len,
) -> str:
    """Join ``head``, the detail sections and ``tail`` (blank-line separated) within `limit`.

    When everything fits it is returned whole. Otherwise the head (the verdict: put the marker
    there) and the tail are kept intact, detail sections are kept in order while they fit, the
    first that does not is cut at a line boundary (a table keeps its first rows, and any code
    fence or ``<details>`` left open is closed; a Mermaid diagram is kept whole or not at all, as
    half a diagram is a render error), the rest are dropped, and a visible note says
    the detail was truncated and that the full report is in `full_report` (Markdown; pass a link
    to the run when you have one). A head and tail too big to fit with the note raise ValueError.

    `measure` is ``len`` for comments (GitHub counts characters); pass
    ``lambda s: len(s.encode())`` to budget the step summary in bytes. It must be additive over
    concatenation, as both are.
    """
    full = _join([head, *detail_sections, tail])
    if measure(full) <= limit:
        return full
    note = f"> **Detail truncated** to fit GitHub's size limit. The full report is in {full_report}."
    separator = measure("\n\n")
    budget = limit - measure(_join([head, note, tail]))
    if budget < 0:
        raise ValueError(f"the head and tail alone exceed the {limit} limit; shorten the verdict")
    kept: list[str] = []
    for section in detail_sections:
        if not section:
            continue
        cost = measure(section) + separator
        if cost <= budget:
            kept.append(section)
            budget -= cost
            continue
        cut = _cut_section(section, budget - separator, measure)
        if cut:
            kept.append(cut)
        break
    return _join([head, *kept, note, tail])


def _join(parts: list[str]) -> str:
    return "\n\n".join(part for part in parts if part)


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


_DETAILS_OPEN = re.compile(r"<details[\s>]", re.IGNORECASE)


_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)


_DETAILS_END = "\n\n</details>"


# A GFM table's delimiter row: a cut just before it would leave the header as a paragraph of pipes.
_TABLE_DELIMITER = re.compile(r" {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _cut_section(section: str, budget: int, measure: Callable[[str], int]) -> str:
    """The longest prefix of whole lines that, with its open constructs closed, fits `budget` and
    does not end on a table's header row (its delimiter row must follow it)."""
    best_count, best_closers = 0, ""
    fence: str | None = None  # the open code fence's marker run, if inside one
    diagram = False  # the open fence is a ```mermaid block
    depth = 0  # unclosed <details> outside code fences
    size = -measure("\n")  # the first line has no newline before it
    lines = section.split("\n")
    for count, line in enumerate(lines, start=1):
        size += measure("\n") + measure(line)
        opened = fence is None
        fence, depth = _track(line, fence, depth)
        if opened and fence is not None:
            diagram = line.strip().lstrip(fence[0]).strip().startswith("mermaid")
        closers = ("\n" + fence if fence else "") + _DETAILS_END * depth
        if size + measure(closers) > budget:
            break
        splits_table = (
            count < len(lines) and fence is None and _TABLE_DELIMITER.match(lines[count]) is not None
        )
        if (fence is None or not diagram) and not splits_table:
            best_count, best_closers = count, closers
    return "\n".join(lines[:best_count]) + best_closers if best_count else ""


def _track(line: str, fence: str | None, depth: int) -> tuple[str | None, int]:
    """Follow code fences (CommonMark: a closer uses the same character, at least as many, and
    nothing after it) and ``<details>`` nesting through one more line."""
    match = _FENCE.match(line)
    if fence is None:
        if match:
            return match.group(1), depth
        opened = len(_DETAILS_OPEN.findall(line)) - len(_DETAILS_CLOSE.findall(line))
        return None, max(depth + opened, 0)
    if match is None:
        return fence, depth
    run = match.group(1)
    if run[0] == fence[0] and len(run) >= len(fence) and not line[match.end() :].strip():
        return None, depth
    return fence, depth
