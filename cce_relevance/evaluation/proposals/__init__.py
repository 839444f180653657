"""Proposed fixture sets: labeled queries drawn from a corpus, for a person to review.

`propose` turns an indexed corpus into N cases of a `cce.relevance/v1` set: queries made from
definitions' names and doc sentences (easy) and from the same sentences without the
definitions' own identifiers or from their callers' names (hard), each anchored to the
definition it came from (by its symbol, `path::Name`, where it has one) and carrying a `note`
that says where it came from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cce_relevance import schemas
from cce_relevance.errors import CceError
from cce_relevance.evaluation.proposals.candidates import FORMS, HARD_FORMS, Candidate, gather, unredacted
from cce_relevance.evaluation.proposals.file_rules import DEFAULT_RULES, FileRules
from cce_relevance.evaluation.proposals.spread import choose
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS, PackSet

__all__ = [
    "DEFAULT_RULES",
    "FORMS",
    "HARD_FORMS",
    "Candidate",
    "FileRules",
    "Proposal",
    "ProposedCase",
    "propose",
]

_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class ProposedCase:
    """A chosen candidate with its fixture id and the anchor that names its definition."""

    id: str
    anchor: str
    candidate: Candidate


@dataclass(frozen=True)
class Proposal:
    """The chosen cases and what they were chosen from."""

    cases: tuple[ProposedCase, ...]
    candidates: int
    files: int
    skipped: Mapping[str, int]

    def fixture_text(self, corpus: str) -> str:
        """The NDJSON set: a header naming `corpus` (relative to the file), then one line per case."""
        lines = [_json({"schema": schemas.FIXTURES, "corpus": corpus})]
        lines += [
            _json({"id": p.id, "query": p.candidate.query, "expected": [p.anchor], "note": p.candidate.note})
            for p in self.cases
        ]
        return "\n".join(lines) + "\n"


def propose(
    chunks: Sequence[Chunk],
    texts: Mapping[str, str],
    n: int,
    seed: int,
    rules: FileRules = DEFAULT_RULES,
    forms: Sequence[str] = FORMS,
    packs: PackSet = REFERENCE_PACKS,
) -> Proposal:
    """`n` cases from `chunks` (an index's, in index order); `texts` are the indexed files'
    redacted texts by path, `packs` the language packs they were chunked with."""
    pool = gather(chunks, texts, rules, packs)
    candidates = pool.candidates
    while True:  # the redactor is asked about the chosen only; a refused one is replaced
        picked = choose(candidates, n, seed, forms)
        refused = {id(c) for c in picked if not unredacted(c)}
        if not refused:
            break
        candidates = tuple(c for c in candidates if id(c) not in refused)
    cases = tuple(
        ProposedCase(case_id, pool.anchors.of(c.chunk, c.symbol), c)
        for case_id, c in zip(_ids(picked), picked, strict=True)
    )
    return Proposal(cases, len(pool.candidates), pool.files, pool.skipped)


def check_forms(names: Sequence[str]) -> tuple[str, ...]:
    """Proposal form names → the forms, in canonical order (easy first); an unknown one, or none,
    is an input error."""
    unknown = [name for name in names if name not in FORMS]
    if unknown:
        raise CceError(
            f"unknown query form {rust_debug_str(unknown[0])} (expected any of {', '.join(FORMS)})"
        )
    if not names:
        raise CceError(f"--forms requires at least one of {', '.join(FORMS)}")
    return tuple(form for form in FORMS if form in names)


def _ids(picked: Sequence[Candidate]) -> list[str]:
    """`<form>-<name>` (the definition's own name, else the file's stem), numbered when repeated."""
    ids: list[str] = []
    seen: set[str] = set()
    for c in picked:
        base_name = c.symbol.split(".")[-1] if c.symbol else _module_name(c.chunk.file_path)
        base = f"{c.form}-{_SLUG.sub('-', base_name.lower()).strip('-')[:40] or 'def'}"
        case_id, n = base, 2
        while case_id in seen:
            case_id, n = f"{base}-{n}", n + 1
        seen.add(case_id)
        ids.append(case_id)
    return ids


def _module_name(path: str) -> str:
    """`pkg/util.py` → util; `pkg/__init__.py` → pkg."""
    *dirs, name = path.split("/")
    stem = name.split(".")[0]
    return dirs[-1] if stem.startswith("__") and dirs else stem


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
