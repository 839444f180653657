"""Rankings produced elsewhere, read back as hits: a TREC run file or `cce.retriever/v1` JSON lines.

`cce-relevance score RUN --fixtures F` scores them exactly as a backend's results would be scored,
so any system's output — run anywhere, at any time — gets the same metrics, reports, goldens and
comparisons as the built-in backends.

* **TREC run** (`qid Q0 docno rank score tag`, whitespace-separated): each tag is one backend.
  A docno is a chunk id of the corpus (what `--trec-run` writes) or a span `path:start-end` (a
  file of the corpus, 1-based inclusive lines). As trec_eval does, the rank column is ignored and
  each query's documents are ordered by score, highest first, ties by docno in decreasing order,
  so this reads a run exactly as trec_eval ranks it. A docno may appear once per query and tag.
* **JSON lines**: one `cce.retriever/v1` answer per line, `{"id", "results": [{"file_path",
  "start_line", "end_line", "kind"?, "score"?}]}`, results best first: what an external retriever
  answers (docs/retrievers.md), checked by the same reader. The backend is named after the file
  (its name without the extension).

A file whose first non-blank character is `{` is JSON lines, anything else a TREC run. Every
error names the file and line.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cce_relevance import untrusted_json
from cce_relevance.errors import CceError
from cce_relevance.evaluation.fixtures import FixtureSet
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.input_files import open_input
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.hit import Hit, SearchFn
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.external import AnswerFault, AnswerReader
from cce_relevance.strings import quoted

_ANY_DEPTH = 1 << 62  # a saved answer may hold more results than any case's k; the harness cuts


@dataclass(frozen=True)
class SavedRanking:
    """One backend's saved ranking per query id (hits best first, ranks 1..n)."""

    backend: str
    rankings: dict[str, tuple[Hit, ...]]

    def search(self) -> SearchFn:
        """A search function that answers each case with its saved ranking (none: no results),
        like a backend; `k` cuts it as a backend's own top k would be cut."""

        def search(query: str, k: int, query_id: str = "") -> list[Hit]:
            return list(self.rankings.get(query_id, ())[:k])

        return search


def _read_text(path: str) -> str:
    try:
        with open_input(path, "r", encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise CceError(f"could not read run file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CceError(
            f"could not read run file {path}: not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None


def read_ranking_file(path: str, index: Index) -> list[SavedRanking]:
    """The backends of one run file, in order of first appearance (see the module docstring)."""
    text = _read_text(path)
    if text.lstrip().startswith("{"):
        return [_json_lines(path, text, index)]
    return _trec_run(path, text, index)


def _json_lines(path: str, text: str, index: Index) -> SavedRanking:
    reader = AnswerReader(index)
    rankings: dict[str, tuple[Hit, ...]] = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        data = untrusted_json.parse(line, where, "not a JSON object")
        query_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(query_id, str):
            raise CceError(
                f'{where}: expected {{"id": "<query id>", "results": [...]}}, a cce.retriever/v1 answer'
            )
        if query_id in first_line:
            raise CceError(
                f"{where}: query {quoted(query_id)} was answered on line {first_line[query_id]} already"
            )
        try:
            hits = reader.read(line.encode("utf-8"), query_id, _ANY_DEPTH)
        except AnswerFault as exc:
            raise CceError(f"{where}: query {quoted(query_id)}: {exc}") from None
        first_line[query_id] = number
        rankings[query_id] = tuple(hits)
    name = os.path.splitext(os.path.basename(path))[0] or path
    return SavedRanking(name, rankings)


def _span_docno(docno: str) -> tuple[str, int, int] | None:
    """`path:start-end` → (path, start, end), or None when `docno` is not of that form."""
    path, colon, lines = docno.rpartition(":")
    start, dash, end = lines.partition("-")
    if not (
        colon and dash and path and start.isascii() and start.isdigit() and end.isascii() and end.isdigit()
    ):
        return None
    return path, int(start), int(end)


class _Documents:
    """Resolves a docno to a hit of the corpus: a chunk id, or a span of one of its files."""

    def __init__(self, index: Index) -> None:
        self.by_id: dict[str, Chunk] = {}
        for c in index.chunks:
            self.by_id.setdefault(c.chunk_id, c)
        self.reader = AnswerReader(index)

    def hit(self, docno: str, rank: int, score: float, where: str) -> Hit:
        chunk = self.by_id.get(docno)
        if chunk is not None:
            return Hit.of(chunk, rank, score)
        span = _span_docno(docno)
        if span is None:
            raise CceError(
                f"{where}: document {quoted(docno)} is neither a chunk id of the corpus nor a span "
                "path:start-end",
                hint="chunk ids are what `cce-relevance chunks DIR` and --trec-run list",
            )
        path, start, end = span
        result = {"file_path": path, "start_line": start, "end_line": end, "score": score}
        try:
            return self.reader.result_hit(rank, result)  # the external retrievers' checks and chunk lookup
        except AnswerFault as exc:
            raise CceError(
                f"{where}: document {quoted(docno)}: {str(exc).removeprefix(f'result {rank}: ')}"
            ) from None


def _trec_run(path: str, text: str, index: Index) -> list[SavedRanking]:
    documents = _Documents(index)
    lines: dict[str, dict[str, list[tuple[float, str, str]]]] = {}  # tag → qid → (score, docno, where)
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        fields = line.split()
        if not fields:
            continue
        where = f"{path} line {number}"
        if len(fields) != 6:
            raise CceError(f"{where}: expected 6 columns `qid Q0 docno rank score tag`, got {len(fields)}")
        qid, _, docno, _, score_text, tag = fields
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise CceError(f"{where}: the score {quoted(score_text)} is not a finite number")
        key = (tag, qid, docno)
        if key in seen:
            raise CceError(
                f"{where}: document {quoted(docno)} is listed for query {quoted(qid)} of run {quoted(tag)} "
                f"on line {seen[key]} already (a document appears once per query)"
            )
        seen[key] = number
        lines.setdefault(tag, {}).setdefault(qid, []).append((score, docno, where))
    runs = []
    for tag, queries in lines.items():
        rankings = {}
        for qid, entries in queries.items():
            ordered = sorted(entries, key=lambda e: (e[0], e[1]), reverse=True)  # trec_eval's order
            rankings[qid] = tuple(
                documents.hit(docno, rank, score, where)
                for rank, (score, docno, where) in enumerate(ordered, 1)
            )
        runs.append(SavedRanking(tag, rankings))
    if not runs:
        raise CceError(
            f"{path}: no run lines (expected `qid Q0 docno rank score tag`, or cce.retriever/v1 JSON lines)"
        )
    return runs


def read_ranking_files(paths: Sequence[str], index: Index) -> list[SavedRanking]:
    """Every backend of every run file, in order; two backends may not share a name."""
    runs: list[SavedRanking] = []
    origin: dict[str, str] = {}
    for path in paths:
        for run in read_ranking_file(path, index):
            if run.backend in origin:
                raise CceError(
                    f"{path}: run {quoted(run.backend)} is also in {origin[run.backend]}; "
                    "every scored run needs its own name"
                )
            origin[run.backend] = path
            runs.append(run)
    return runs


def scored_rankings(
    runs: Sequence[SavedRanking],
    compare: Sequence[str] | None,
    fixtures: FixtureSet,
    warn: Callable[[str], None],
) -> list[SavedRanking]:
    """The runs a set is scored with: the ones `compare` names (two or more, in its order), else
    all; a query a run ranks that the set lacks is ignored, with one warning per run."""
    if compare is not None:
        by_name = {r.backend: r for r in runs}
        chosen = list(dict.fromkeys(compare))
        if any(n not in by_name for n in chosen) or len(chosen) < 2:
            raise CceError(
                f"a comparison needs two or more of the runs {', '.join(by_name)}, got "
                f"{rust_debug_str(','.join(compare))}"
            )
        runs = [by_name[n] for n in chosen]
    ids = {c.id for c in fixtures.cases}
    for r in runs:
        extra = [q for q in r.rankings if q not in ids]
        if extra:
            warn(
                f"run {r.backend}: {len(extra)} ranked quer{'y is' if len(extra) == 1 else 'ies are'} not in "
                f"{fixtures.path} and not scored (first: {rust_debug_str(extra[0])})"
            )
    return list(runs)
