"""Hand-built saved run reports (`cce.relevance.report/v2`) for the commands that read them back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

KEYS = ("precision_at_k", "recall", "mrr", "f1")


def _six(x: float) -> str:
    return f"{x:.6f}"


def report(
    backends: Mapping[str, Sequence[tuple[str, Sequence[float]]]], compare: tuple[str, str] | None = None
) -> dict[str, Any]:
    """A report whose backends hold the given per-query values (P@k, recall, MRR, F1) by query id.

    Means are the plain means of the rows; `compare` adds a `compare` block naming the two
    backends (its statistics are never read back, so they are left empty).
    """
    docs = []
    for name, rows in backends.items():
        per_query = [
            {
                "id": qid,
                "k": 5,
                "first_relevant_rank": None,
                **{k: _six(v) for k, v in zip(KEYS, values, strict=True)},
            }
            for qid, values in rows
        ]
        means = {
            k: _six(sum(v[i] for _, v in rows) / len(rows)) if rows else _six(0.0) for i, k in enumerate(KEYS)
        }
        docs.append({"backend": name, "per_query": per_query, **means})
    doc: dict[str, Any] = {
        "schema": "cce.relevance.report/v2",
        "corpus": "c",
        "embedder": "hash",
        "queries": max((len(r) for r in backends.values()), default=0),
        "backends": docs,
    }
    if compare is not None:
        doc["compare"] = {"a": compare[0], "b": compare[1], "metrics": {}}
    return doc


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return str(path)


def rows(values: Sequence[Sequence[float]], prefix: str = "q") -> list[tuple[str, Sequence[float]]]:
    """Rows with ids q1, q2, … in order."""
    return [(f"{prefix}{i + 1}", v) for i, v in enumerate(values)]
