"""Golden reports: a committed run report that the current run must reproduce byte for byte.

Drift means the bytes differ, so a golden is read without newline translation and compared as
text (`check_golden`, `compare_with_golden`); the unified diff of the two texts is what a front
door prints. To say which queries moved, a drifted golden is also read as a report: every
`per_query` array is keyed by query id and every backend by name (`GoldenCheck.keyed_diff`), and
the values that differ are listed as (backend, query, field, golden, head) rows
(`GoldenCheck.changes`). Both texts are parsed once, for both.

The Action reads its goldens from the head tree (`GoldenFile`) and says how to rewrite each with
the command a user would run (`update_command`).
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from cce_relevance import untrusted_json
from cce_relevance.errors import CceError
from cce_relevance.evaluation.selection import DEFAULT_BACKENDS
from cce_relevance.input_files import open_input

Change = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True)
class ValueChange:
    """One value that differs: `backend` and `query` are '' for a report-level field."""

    backend: str
    query: str
    field: str
    golden: str
    head: str


@dataclass(frozen=True)
class GoldenCheck:
    """A golden compared with a run's report; `diff` is '' when they match.

    `path` names the golden (for the Action: relative to the working directory, POSIX); `update`
    is the command that rewrites it, when the front door names one. When it drifted, `expected`
    is the golden's text as reading it as text gives (universal newlines) and `report` the
    report's, to say which queries moved.
    """

    path: str
    diff: str
    update: str = ""
    expected: str | None = None
    report: str | None = None

    @property
    def drifted(self) -> bool:
        return bool(self.diff)

    @cached_property
    def changes(self) -> list[ValueChange] | None:
        """Every value that differs, by backend and query; None when the golden did not drift or
        either text is not a JSON report (then only the raw diff can tell)."""
        documents = self._documents
        if documents is None or not all(isinstance(d, dict) for d in documents):
            return None
        return value_changes(*documents)

    @cached_property
    def keyed_diff(self) -> str:
        """The diff of the two reports laid out by backend name and query id (of the two texts
        when either is not JSON); the plain diff when the golden did not drift."""
        if self.expected is None or self.report is None:
            return self.diff
        documents = self._documents
        old, new = (self.expected, self.report) if documents is None else map(_laid_out, documents)
        return _unified(old, new, f"{self.path} (golden, by query id)", "head (by query id)", context=2)

    @cached_property
    def _documents(self) -> tuple[Any, Any] | None:
        if self.expected is None or self.report is None:
            return None
        try:
            return _keyed(untrusted_json.loads(self.expected)), _keyed(untrusted_json.loads(self.report))
        except ValueError:
            return None


@dataclass(frozen=True)
class GoldenFile:
    """A golden as read for a fixture set: the set, the golden's path as configured, its text as
    stored, and the command that rewrites it."""

    fixture: str
    path: str
    text: str
    update: str

    @classmethod
    def read(
        cls, path: str, fixture: str, shown: str, backends: Sequence[str], metrics: str | None
    ) -> GoldenFile:
        """The golden at `path` (named `shown`, as configured) of `fixture`, which the Action scores
        at `backends` (with the rank metric `metrics`); a missing one is an input error whose hint
        is the command that creates it."""
        update = update_command(fixture, shown, backends, metrics)
        missing_hint = f"create it from the working directory with `{update}`, then commit it"
        return cls(fixture, shown, read_golden(path, shown, missing_hint), update)

    def check(self, report: str) -> GoldenCheck:
        """The golden compared with the report `report`."""
        return compare_with_golden(self.path, self.text, report, self.update)


def read_golden(path: str, label: str, missing_hint: str) -> str:
    """The golden report's text as stored (no newline translation). Missing or unreadable, it is
    an input error naming `label`; `missing_hint` says how the front door creates one."""
    try:
        with open_input(path, "r", encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        raise CceError(f"golden report not found: {label}", hint=missing_hint) from None
    except OSError as exc:
        raise CceError(f"could not read golden report {label}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CceError(f"could not read golden report {label}: not UTF-8 text (byte {exc.start})") from None


def compare_with_golden(label: str, text: str, report: str, update: str = "") -> GoldenCheck:
    """The golden `text` (named `label`) compared with `report`, byte for byte."""
    if text == report:
        return GoldenCheck(label, "", update)
    diff = _unified(text, report, f"{label} (golden)", "current run")
    # what reading the file as text gives (universal newlines), to say which queries moved
    expected = text.replace("\r\n", "\n").replace("\r", "\n")
    return GoldenCheck(label, diff, update, expected, report)


def check_golden(path: str, report: str, *, missing_hint: str) -> GoldenCheck:
    """The golden report at `path` compared with `report`; missing, an input error with `missing_hint`."""
    return compare_with_golden(path, read_golden(path, path, missing_hint), report)


def golden_change(path: str, report: str) -> Change:
    """What writing `report` to the golden at `path` does to it: created, updated or unchanged."""
    try:
        with open_input(path, "r", encoding="utf-8", newline="") as handle:
            before: str | None = handle.read()
    except (OSError, UnicodeDecodeError):
        before = None
    return "created" if before is None else "unchanged" if before == report else "updated"


def update_command(fixture: str, golden: str, backends: Sequence[str], metrics: str | None = None) -> str:
    """The CLI command that writes `golden` as the Action scores `fixture`, quoted for pasting
    (the names come from a pull request); `--backend` only when `backends` are not the CLI's
    default, `--metrics` only for a rank regression metric."""
    words = ["cce-relevance", "run", fixture]
    if tuple(backends) != DEFAULT_BACKENDS:
        words += ["--backend", ",".join(backends)]
    if metrics is not None:
        words += ["--metrics", metrics]
    return shlex.join([*words, "--golden", golden, "--update-golden"])


def value_changes(golden: dict[str, Any], head: dict[str, Any]) -> list[ValueChange]:
    """Every leaf value that differs between two reports keyed by `_keyed`, golden order first."""
    changes = []
    old, new = _flat(golden), _flat(head)
    for path in [*old, *(p for p in new if p not in old)]:
        before, after = old.get(path, "—"), new.get(path, "—")
        if before == after:
            continue
        parts = path.split(".")
        if parts[0] == "backends" and len(parts) >= 3:
            if parts[2] == "per_query" and len(parts) >= 5:
                changes.append(ValueChange(parts[1], parts[3], ".".join(parts[4:]), before, after))
                continue
            changes.append(ValueChange(parts[1], "", ".".join(parts[2:]), before, after))
            continue
        changes.append(ValueChange("", "", path, before, after))
    return changes


def _unified(old: str, new: str, fromfile: str, tofile: str, context: int = 3) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile, tofile, n=context
        )
    )


def _keyed(document: Any) -> Any:
    """The report with backends keyed by name and each backend's queries keyed by id."""
    if not isinstance(document, dict) or not isinstance(document.get("backends"), list):
        return document
    backends = {}
    for b in document["backends"]:
        if not isinstance(b, dict):
            return document
        queries = b.get("per_query")
        entry = dict(b)
        if isinstance(queries, list) and all(
            isinstance(q, dict) and isinstance(q.get("id"), str) for q in queries
        ):
            entry["per_query"] = {q["id"]: {k: v for k, v in q.items() if k != "id"} for q in queries}
        backends[str(b.get("backend"))] = {k: v for k, v in entry.items() if k != "backend"}
    return {**document, "backends": backends}


def _flat(value: Any, prefix: str = "") -> dict[str, str]:
    """Leaf values by dotted path, as JSON text."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: json.dumps(value, ensure_ascii=False)}


def _laid_out(document: Any) -> str:
    """A keyed report pretty-printed with sorted keys."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
