"""The trend history (`cce.relevance.history/v1`): the means of every push to the default branch.

One entry per commit scored by a `push` run on the default branch: the commit, its committer
date (from git, so the same commit always gives the same entry), the tool's version, and the head
means per fixture set, backend and metric. Pull request runs read it to draw the trend line.

The file lives where the workflow keeps it between runs (actions/cache or an artifact), so it is
input from an earlier run, not from us: `parse_history` checks every field and says which one is
wrong (`HistoryError`). The document is written with sorted keys and two-space indent by the one
canonical writer, so the same entries give the same bytes; the entries keep their push order
(oldest first), a commit scored again replaces its own entry where it stands, and only the last
`size` entries are kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from cce_relevance import schemas, untrusted_json
from cce_relevance.action.config.inputs import MAX_HISTORY_SIZE
from cce_relevance.atomic_files import write_output
from cce_relevance.reporting.canonical_json import dumps_report

MAX_BYTES = 32 * 1024 * 1024  # far above MAX_HISTORY_SIZE entries of a few sets; refused before parsing

Means = Mapping[str, Mapping[str, Mapping[str, float]]]
"""Fixture set (as configured) → backend → metric key → mean."""

_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$")  # a backend or a metric key
_TEXT_LIMIT = 1000  # a fixture path, a branch name, a version: no longer than this
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ENTRY_KEYS = ("commit", "date", "sets", "version")


class HistoryError(ValueError):
    """The bytes are not a history this version reads; the message says which field and why."""


@dataclass(frozen=True)
class Entry:
    """One push: the commit scored, its committer date (UTC), the tool's version, its means."""

    commit: str
    date: str
    version: str
    sets: Means = field(repr=False)

    def value(self, fixture: str, backend: str, metric: str) -> float | None:
        return self.sets.get(fixture, {}).get(backend, {}).get(metric)

    def document(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "date": self.date,
            "version": self.version,
            "sets": {f: {b: dict(m) for b, m in by.items()} for f, by in self.sets.items()},
        }


@dataclass(frozen=True)
class History:
    """The default branch's name (as of the last push recorded) and its entries, oldest first."""

    branch: str
    entries: tuple[Entry, ...] = ()

    def with_entry(self, entry: Entry, branch: str, size: int) -> History:
        """This history with `entry` recorded: in place of the same commit's entry, else last;
        then only the last `size` entries."""
        entries = list(self.entries)
        same = next((i for i, e in enumerate(entries) if e.commit == entry.commit), None)
        if same is None:
            entries.append(entry)
        else:
            entries[same] = entry
        return History(branch, tuple(entries[-size:]))

    def series(self, fixture: str, backend: str, metric: str) -> list[tuple[Entry, float]]:
        """The entries that hold a value for (`fixture`, `backend`, `metric`), with it, oldest first."""
        found = ((e, e.value(fixture, backend, metric)) for e in self.entries)
        return [(e, v) for e, v in found if v is not None]

    def document(self) -> dict[str, Any]:
        return {
            "schema": schemas.HISTORY,
            "branch": self.branch,
            "entries": [e.document() for e in self.entries],
        }


def commit_date(seconds: int) -> str:
    """A committer timestamp (seconds since the epoch) as the history writes it: UTC, to the second."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def dumps_history(history: History) -> str:
    return dumps_report(history.document())


def write_history(path: Path, history: History) -> None:
    """Write atomically (a reader sees the old file or the new one); a `CceError` names the path."""
    write_output(str(path), dumps_history(history))


def read_history(path: Path) -> History | None:
    """The history at `path`, or None when there is no file yet (the first push starts it).
    Anything else that is not a history we read is a `HistoryError` saying why."""
    try:
        check_size(path.stat().st_size)
        return parse_history(path.read_bytes())
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise HistoryError("is a directory, not a file") from None
    except OSError as exc:
        raise HistoryError(f"cannot be read: {exc.strerror or exc}") from None


def check_size(size: int) -> None:
    """Refuse a file of `size` bytes before reading it: no history we write is that large."""
    if size > MAX_BYTES:
        raise HistoryError(
            f"{size} bytes, more than the {MAX_BYTES} a history of {MAX_HISTORY_SIZE} entries needs"
        )


def parse_history(data: bytes) -> History:
    """The history in `data`, every field checked; a `HistoryError` names the first bad one."""
    try:
        doc = untrusted_json.loads(data)
    except ValueError as exc:
        raise HistoryError(f"cannot be parsed: {exc}") from None
    top = _mapping(doc, "the document", keys=("branch", "entries", "schema"))
    if top["schema"] != schemas.HISTORY:
        raise HistoryError(f"has schema {_shown(top['schema'])}: expected {schemas.HISTORY!r}")
    entries = untrusted_json.expect_array(top["entries"], "entries", error=HistoryError)
    if len(entries) > MAX_HISTORY_SIZE:
        raise HistoryError(
            f"entries: {len(entries)} entries, more than the {MAX_HISTORY_SIZE} a history keeps"
        )
    parsed = tuple(_entry(e, f"entries[{i}]") for i, e in enumerate(entries))
    commits = [e.commit for e in parsed]
    duplicate = next((c for c in commits if commits.count(c) > 1), None)
    if duplicate is not None:
        raise HistoryError(f"entries: commit {duplicate} has more than one entry")
    return History(_text(top["branch"], "branch"), parsed)


def _entry(value: Any, where: str) -> Entry:
    obj = _mapping(value, where, keys=_ENTRY_KEYS)
    commit, date = obj["commit"], obj["date"]
    if not isinstance(commit, str) or not _SHA.match(commit):
        raise HistoryError(f"{where}.commit is {_shown(commit)}: expected a commit SHA (40 or 64 hex digits)")
    if not isinstance(date, str) or not _DATE.match(date):
        raise HistoryError(f"{where}.date is {_shown(date)}: expected a UTC date like 2024-01-31T12:00:00Z")
    sets = _mapping(obj["sets"], f"{where}.sets")
    means = {
        _text(fixture, f"{where}.sets key"): {
            _name(backend, f"{where}.sets[{fixture!r}] key"): {
                _name(metric, f"{where}.sets[{fixture!r}][{backend!r}] key"): _mean(
                    v, f"{where}.sets[{fixture!r}][{backend!r}][{metric!r}]"
                )
                for metric, v in _mapping(metrics, f"{where}.sets[{fixture!r}][{backend!r}]").items()
            }
            for backend, metrics in _mapping(by_backend, f"{where}.sets[{fixture!r}]").items()
        }
        for fixture, by_backend in sets.items()
    }
    return Entry(commit, date, _text(obj["version"], f"{where}.version"), means)


_mapping = partial(untrusted_json.expect_object, error=HistoryError)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or len(value) > _TEXT_LIMIT or _CONTROL.search(value):
        raise HistoryError(
            f"{where} is {_shown(value)}: expected a non-empty string of at most {_TEXT_LIMIT} "
            "characters without control characters"
        )
    return value


def _name(value: str, where: str) -> str:
    if not _NAME.match(value):
        raise HistoryError(f"{where} {_shown(value)}: expected a backend name or metric key")
    return value


def _mean(value: Any, where: str) -> float:
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    if not 0.0 <= number <= 1.0:  # also false for NaN: not a number at all
        raise HistoryError(f"{where} is {_shown(value)}: expected a mean between 0 and 1")
    return float(number)


def _shown(value: Any) -> str:
    """A value as a message quotes it: a string in quotes (cut at 60 characters), a number as
    written, anything else by its JSON type."""
    if isinstance(value, str):
        return repr(value[:60] + ("…" if len(value) > 60 else ""))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return f"a JSON {untrusted_json.describe_type(value)}"
