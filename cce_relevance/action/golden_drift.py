"""Golden drift in words: which queries and values moved, and a diff keyed by query id.

A golden report's `per_query` arrays are diffed by position in a plain unified diff, so one hunk
can mix unrelated queries and a reader cannot tell which query a `-`/`+` pair belongs to. Here
both reports are re-laid out with every `per_query` array turned into an object keyed by query id
(backends keyed by name), so the diff's hunks follow query ids; and the differing values are
listed as (backend, query, field, golden, head) rows for a small table.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from cce_relevance import untrusted_json


@dataclass(frozen=True)
class ValueChange:
    """One value that differs: `backend` and `query` are '' for a report-level field."""

    backend: str
    query: str
    field: str
    golden: str
    head: str


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


def value_changes(golden_text: str, head_text: str) -> list[ValueChange] | None:
    """Every value that differs between the golden and the head report, by backend and query;
    None when either is not a JSON report (then only the raw diff can tell)."""
    try:
        golden, head = _keyed(untrusted_json.loads(golden_text)), _keyed(untrusted_json.loads(head_text))
    except ValueError:
        return None
    if not isinstance(golden, dict) or not isinstance(head, dict):
        return None
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


def keyed_diff(golden_text: str, head_text: str, label: str) -> str:
    """A unified diff of the two reports re-laid out by backend name and query id; the plain
    diff of the texts when either is not JSON."""
    try:
        old, new = _laid_out(golden_text), _laid_out(head_text)
    except ValueError:
        old, new = golden_text, head_text
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{label} (golden, by query id)",
            tofile="head (by query id)",
            n=2,
        )
    )


def _laid_out(text: str) -> str:
    """A report's JSON keyed by backend and query id, pretty-printed with sorted keys."""
    return json.dumps(_keyed(untrusted_json.loads(text)), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
