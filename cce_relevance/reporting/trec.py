"""TREC run and qrels files, so an evaluation can be re-scored with trec_eval, ranx or ir_measures.

Documents are chunks, named by their chunk id; queries are named by their case id.

* qrels: `qid 0 docno grade`, one line per relevant chunk of the corpus (judgments.py), cases in
  file order, chunks in index order. Only relevant chunks are listed (everything unlisted is
  non-relevant), so a case whose anchors match no chunk has no line at all.
* run: `qid Q0 docno rank score tag`, the top-k hits of one backend, tag = the backend name.
  trec_eval ignores the rank column and re-sorts by score, breaking ties by document id, so the
  backend's own scores (which often tie) could reorder the run. The score column is therefore
  `k + 1 - rank`: strictly decreasing, it makes every TREC tool see exactly our ranking.
"""

from __future__ import annotations

from collections.abc import Sequence

from cce_relevance.errors import CceError
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.judgments import Judgments
from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.evaluation.rust_debug import rust_debug_str


def _not_a_token(text: str) -> str | None:
    """Why `text` cannot be one column of a TREC file, or None when it can."""
    if not text:
        return "it is empty"
    if any(ch.isspace() or not ch.isprintable() for ch in text):
        return "it contains whitespace or a control character"
    return None


def query_ids(cases: Sequence[Case]) -> list[str]:
    """The case ids as TREC query ids, or an error naming the first case whose id cannot be one.

    A query id is one whitespace-separated column and must name one query, so an id must be
    non-empty, free of whitespace and control characters, and unique in the set.
    """
    first_line: dict[str, int] = {}
    for case in cases:
        problem = _not_a_token(case.id)
        if problem is None and case.id in first_line:
            problem = f"fixture line {first_line[case.id]} has the same id (TREC query ids must be unique)"
        if problem is not None:
            raise CceError(
                f"fixture line {case.line}: case id {rust_debug_str(case.id)} cannot be a TREC query id: "
                f"{problem}",
                hint='give every case a distinct "id" without spaces',
            )
        first_line[case.id] = case.line
    return list(first_line)


def qrels_text(judgments: Sequence[Judgments]) -> str:
    """The qrels file of the judgments the evaluation used."""
    qids = query_ids([j.case for j in judgments])
    return "".join(
        f"{qid} 0 {docno} {grade}\n"
        for qid, j in zip(qids, judgments, strict=True)
        for docno, grade in j.relevant
    )


def run_text(report: BackendReport) -> str:
    """One backend's run file: every case's top-k hits in rank order.

    A document may appear once per query in a TREC run, so a backend that returned the same chunk
    twice for one query cannot be exported (our P@k would count both, trec_eval one).
    """
    problem = _not_a_token(report.backend)
    if problem is not None:
        raise CceError(f"backend name {rust_debug_str(report.backend)} cannot be a TREC run tag: {problem}")
    qids = query_ids([r.case for r in report.cases])
    lines = []
    for qid, result in zip(qids, report.cases, strict=True):
        seen: set[str] = set()
        for rank, hit in enumerate(result.hits, start=1):
            if hit.chunk_id in seen:
                raise CceError(
                    f"backend {report.backend} returned chunk {hit.chunk_id} twice for case "
                    f"{rust_debug_str(qid)}; a TREC run lists a document once per query"
                )
            seen.add(hit.chunk_id)
            lines.append(f"{qid} Q0 {hit.chunk_id} {rank} {result.case.k + 1 - rank} {report.backend}\n")
    return "".join(lines)


def run_qrels(result: RunResult) -> str:
    """The qrels a run's rank metrics used (the run must have been judged: `run(..., trec=True)` or
    rank metrics)."""
    if result.judgments is None:
        raise ValueError("this run was not judged; pass trec=True to run()")
    return qrels_text(result.judgments)


def run_files(result: RunResult) -> dict[str, str]:
    """One TREC run file per backend of a run, by backend name, in the order scored."""
    return {r.backend: run_text(r) for r in result.reports}
