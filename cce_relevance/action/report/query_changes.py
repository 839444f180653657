"""Which queries changed between base and head, on every backend at once, and why.

A reviewer asks three things of a ranking change: which queries moved, by how much, and what now
ranks above the answer. This module answers them as data (`QueryChange`) and as the cells of one
table across backends: the first relevant rank at base → head per backend, the gated metric's
delta as a number and as a bar that starts at zero and grows left (worse) or right (better), and
a **why** cell naming what ranks above the expected chunk at head, linked to those lines at the
head commit (and to what ranked first at base, at the base commit), and saying when no anchor
labels it: a hit nobody judged, which may be as good an answer as the expected one.

Everything that came from the tree (query ids, file paths, kinds) is untrusted: ids are shortened
and put in code spans, paths are percent-encoded in links and code-spanned in their text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.api import BackendComparison, TopHit
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.metrics import METRIC_KEYS
from cce_relevance.reporting.markdown_safe import code_span, shorten
from cce_relevance.reporting.numbers import SIX, Digits, format6

ID_LIMIT = 40  # characters of a query id shown in a table cell
BAR_HALF = 8  # cells of the diverging bar on each side of zero (a delta of 1 fills one side)
STALE_MARK = "⚠️ stale anchor"
MOVE_MARKS = {"moved": "↕️ anchor's lines moved", "changed": "✏️ anchor's lines changed"}


@dataclass(frozen=True)
class BackendMove:
    """One query on one backend: first relevant rank at each side (None: not in the top k) and
    the delta of the gated metric (head − base, of the values the reports show)."""

    backend: str
    base_rank: int | None
    head_rank: int | None
    delta: float


@dataclass(frozen=True)
class QueryChange:
    """A query that changed on at least one backend (any metric, or its first relevant rank)."""

    id: str
    moves: tuple[BackendMove, ...]

    def delta(self, backend: str) -> float:
        return next((m.delta for m in self.moves if m.backend == backend), 0.0)

    @property
    def worst(self) -> BackendMove:
        return min(self.moves, key=lambda m: m.delta)


@dataclass(frozen=True)
class Links:
    """Where the comment links code: `GITHUB_SERVER_URL/GITHUB_REPOSITORY/blob/SHA/PATH#Lx-Ly`."""

    server_url: str
    repository: str
    base: str | None
    head: str

    def blob(self, sha: str, path: str, start: int | None = None, end: int | None = None) -> str:
        url = f"{self.server_url}/{self.repository}/blob/{sha}/{quote(path, safe='/')}"
        if start is None:
            return url
        return url + (f"#L{start}" if end is None or end == start else f"#L{start}-L{end}")


def _ranks(document: Any) -> dict[str, dict[str, int | None]]:
    """backend → query id → first relevant rank, from a saved run report."""
    return {
        b["backend"]: {q["id"]: q.get("first_relevant_rank") for q in b["per_query"]}
        for b in document["backends"]
    }


def changed_queries(
    s: ComparedSet, comparisons: Sequence[BackendComparison], metric: str, featured: str
) -> tuple[list[QueryChange], int]:
    """The paired queries that changed on any backend, worst first (by the `featured` backend's
    delta of `metric`, then the worst delta on any backend, then id; queries with a stale anchor
    last: their change is the label's), and how many did not."""
    base_ranks, head_ranks = _ranks(s.document("base")), _ranks(s.document("head"))
    ids = [q.id for q in comparisons[0].pair.paired] if comparisons else []
    moves: dict[str, list[BackendMove]] = {qid: [] for qid in ids}
    changed: set[str] = set()
    for c in comparisons:
        name = c.pair.backend
        for q in c.pair.paired:
            before, after = base_ranks[name].get(q.id), head_ranks[name].get(q.id)
            deltas = [q.delta(key) or 0.0 for key in METRIC_KEYS]
            # A zero delta prints as zero: only the others need printing to be told apart.
            if before != after or any(
                d != 0.0 and format6(d) not in ("0.000000", "-0.000000") for d in deltas
            ):
                changed.add(q.id)
            moves.setdefault(q.id, []).append(BackendMove(name, before, after, q.delta(metric) or 0.0))
    rows = [QueryChange(qid, tuple(moves[qid])) for qid in moves if qid in changed]
    rows.sort(key=lambda r: (r.id in s.left_out_queries, r.delta(featured), r.worst.delta, r.id))
    return rows, len(moves) - len(rows)


def query_cell(qid: str, notes: dict[str, str]) -> str:
    """A query id, shortened, in a code span, with its stale mark."""
    note = f" {notes[qid]}" if qid in notes else ""
    return code_span(shorten(qid, ID_LIMIT), in_table=True) + note


def rank_cell(move: BackendMove | None) -> str:
    """`1 → 3` (first relevant rank at base → head), `—` for not in the top k, `2` when unchanged."""
    if move is None:
        return ""
    before = "—" if move.base_rank is None else str(move.base_rank)
    after = "—" if move.head_rank is None else str(move.head_rank)
    return before if before == after else f"{before} → {after}"


def bar(delta: float) -> str:
    """A diverging bar in a code span: zero in the middle, worse to the left, better to the
    right, one cell per 1/`BAR_HALF` of the metric's [−1, 1] range (any non-zero change shows)."""
    cells = (
        0
        if format6(delta) in ("0.000000", "-0.000000")
        else max(1, min(BAR_HALF, round(abs(delta) * BAR_HALF)))
    )
    left = "·" * (BAR_HALF - cells) + "█" * cells if delta < 0 else "·" * BAR_HALF
    right = "█" * cells + "·" * (BAR_HALF - cells) if delta > 0 else "·" * BAR_HALF
    return f"`{left}│{right}`"


def delta_cell(delta: float, digits: Digits = SIX) -> str:
    text = digits.signed(delta)
    if format6(delta) in ("0.000000", "-0.000000"):
        return text
    return f"**{text}** {'🟢' if delta > 0 else '🔴'}"


def _hit_text(hit: TopHit) -> str:
    return f"{hit.file}:{hit.start}-{hit.end}" if hit.end != hit.start else f"{hit.file}:{hit.start}"


def _hit(hit: TopHit, corpus: str, links: Links | None, sha: str | None) -> str:
    text = code_span(shorten(_hit_text(hit), 60), in_table=True)
    if links is None or sha is None:
        return text
    return f"[{text}]({links.blob(sha, _repo_path(corpus, hit.file), hit.start, hit.end)})"


def _what(hit: TopHit) -> str:
    """The hit's kind, and its symbol when the chunker named one: `function_definition` `Client.send`."""
    kind = code_span(hit.kind, in_table=True)
    return kind if hit.symbol is None else f"{kind} {code_span(shorten(hit.symbol, 40), in_table=True)}"


def _anchor(anchor: Anchor, corpus: str, links: Links | None) -> str:
    shown = (anchor.path or "") + (f"#{anchor.kind}" if anchor.kind else "")
    if anchor.symbol is not None:
        shown += f"::{anchor.symbol}"
    if anchor.range is not None:
        shown += f"@{anchor.range[0]}-{anchor.range[1]}"
    text = code_span(shorten(shown, 60), in_table=True)
    if links is None or anchor.path is None:
        return text
    start, end = anchor.range if anchor.range is not None else (None, None)
    return f"[{text}]({links.blob(links.head, _repo_path(corpus, anchor.path), start, end)})"


def _repo_path(corpus: str, file: str) -> str:
    return file if corpus in ("", ".") else f"{corpus}/{file}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


UNLABELED = "unlabeled: no anchor names it"


def _unlabeled(above: list[TopHit]) -> str:
    """How many of the hits above the expected chunk no anchor labels, relevant or not: a drop
    behind hits nobody judged may be no drop at all."""
    n = sum(h.unlabeled for h in above)
    if not n:
        return ""
    if len(above) == 1:
        return f" ({UNLABELED}, it may be a right answer)"
    if n == len(above):
        return " (all unlabeled: no anchor names them, they may be right answers)"
    return f" ({n} of {len(above)} unlabeled)"


def why_cell(s: ComparedSet, change: QueryChange, featured: str, links: Links | None) -> str:
    """What ranks above the expected chunk at head on the backend that explains the row (the
    featured one when it moved, else the one that lost most), with links; '' when unknown."""
    move = next(
        (m for m in change.moves if m.backend == featured and (m.base_rank != m.head_rank or m.delta != 0.0)),
        change.worst,
    )
    head_hits = (s.head_rankings or {}).get(move.backend, {}).get(change.id, ())
    base_hits = (s.base_rankings or {}).get(move.backend, {}).get(change.id, ())
    head_sha, base_sha = (links.head, links.base) if links is not None else (None, None)
    prefix = "" if move.backend == featured else f"{code_span(move.backend, in_table=True)}: "
    above = [h for h in head_hits if not h.relevant and (move.head_rank is None or h.rank < move.head_rank)]
    stale = {f.case_id: f"{f.code} at base" for f in s.stale_findings("base")}
    stale.update({f.case_id: f.code for f in s.stale_findings("head")})
    parts = [f"⚠️ stale anchor ({stale[change.id]}): the label, not the ranking"] if change.id in stale else []
    if above:
        first = above[0]
        more = f" (+{len(above) - 1} more)" if len(above) > 1 else ""
        if move.head_rank is None:
            tag = f" ({UNLABELED})" if first.unlabeled else ""
            parts.append(
                f"now 1st: {_hit(first, s.corpus, links, head_sha)} {_what(first)}{tag}; "
                "expected not in the top k"
            )
        else:
            parts.append(
                f"{_hit(first, s.corpus, links, head_sha)} {_what(first)}{more} above it{_unlabeled(above)}"
            )
    elif move.head_rank is not None:
        parts.append(f"expected now {_ordinal(move.head_rank)}")
    base_top = next(iter(base_hits), None)
    if base_top is not None and (
        not above or base_top.file != above[0].file or base_top.start != above[0].start
    ):
        parts.append(f"1st at base: {_hit(base_top, s.corpus, links, base_sha)}")
    expected = [a for a in (s.anchors or {}).get(change.id, ()) if a.path is not None or a.kind is not None]
    if expected:
        parts.append(
            "expected "
            + _anchor(expected[0], s.corpus, links)
            + (f" (+{len(expected) - 1})" if len(expected) > 1 else "")
        )
    return prefix + "; ".join(parts)


def changes_table(
    s: ComparedSet,
    rows: list[QueryChange],
    backends: list[str],
    metric_label: str,
    featured: str,
    notes: dict[str, str],
    links: Links | None,
    digits: Digits,
) -> str:
    """One row per changed query: rank per backend, the featured backend's delta and bar, why."""
    header = [
        "query",
        *(code_span(b, in_table=True) for b in backends),
        f"Δ{metric_label} {code_span(featured, in_table=True)}",
        "",
        "why (at head)",
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "| --- | " + " | ".join(":-:" for _ in backends) + " | ---: | :-: | --- |",
    ]
    for row in rows:
        by_backend = {m.backend: m for m in row.moves}
        cells = [
            query_cell(row.id, notes),
            *(rank_cell(by_backend.get(b)) for b in backends),
            delta_cell(row.delta(featured), digits),
            bar(row.delta(featured)),
            why_cell(s, row, featured, links),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def stale_notes(s: ComparedSet) -> dict[str, str]:
    """The mark after a query id: stale at head, or stale at base only, or a range anchor whose
    lines moved or changed (action/scoring/range_anchors.py)."""
    notes = {m.case_id: MOVE_MARKS[m.status] for m in s.moves}
    notes.update({qid: f"{STALE_MARK} at base" for qid in s.stale("base")})
    notes.update({qid: STALE_MARK for qid in s.stale("head")})
    return notes
