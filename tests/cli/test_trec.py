"""`run --trec-run/--trec-qrels`: the exported files, re-scored by trec_eval (pytrec_eval), give our
P@k and reciprocal rank exactly, and our rank metrics to rounding.

Recall is the one metric whose unit differs by construction: ours counts matched *anchors*
(an anchor is satisfied by any one of the chunks it matches), trec_eval's counts relevant
*documents* (chunks). So recall is checked two ways: exactly on the exported files for cases
where every anchor resolves to exactly one chunk and no chunk matches two anchors (there the
units coincide), and for every case as trec_eval's `set_recall` on the anchor-level projection
of the exported run (each anchor one document, retrieved where its first matching chunk is).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
import pytrec_eval

from cce_relevance import api
from cce_relevance.evaluation.fixtures import Case, load_fixtures
from cce_relevance.reporting.numbers import format6
from cce_relevance.reporting.trec import run_files, run_qrels
from cce_relevance.retrieval.chunking.chunk import Chunk
from tests.cli.helpers import cli
from tests.evaluation.generated import generated_project

ALL_METRICS = "ndcg,ap,hit,rprec"
TREC_NAMES = {
    "ndcg_at_k": "ndcg_cut_{k}",
    "average_precision": "map",
    "hit_at_k": "success_{k}",
    "r_precision": "Rprec",
}


def read_qrels(text: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in text.splitlines():
        qid, zero, docno, grade = line.split(" ")
        assert zero == "0" and int(grade) >= 1
        qrels[qid][docno] = int(grade)
    return dict(qrels)


def read_run(text: str, tag: str) -> dict[str, list[tuple[str, float]]]:
    """(docno, score) per query in file order; checks the six columns and consecutive ranks.

    The scores are what trec_eval ranks by, so they are handed to it as written.
    """
    run: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for line in text.splitlines():
        qid, q0, docno, rank, score, run_tag = line.split(" ")
        assert q0 == "Q0" and run_tag == tag and int(rank) == len(run[qid]) + 1
        run[qid].append((docno, float(score)))
    return dict(run)


def ranked_docs(run: dict[str, list[tuple[str, float]]], qid: str) -> list[str]:
    return [doc for doc, _ in run.get(qid, [])]


def trec_eval(
    qrels: dict[str, dict[str, int]], run: dict[str, list[tuple[str, float]]], k: int, qid: str
) -> dict[str, float]:
    """trec_eval's measures for one query at cut-off k ({} when trec_eval does not score it)."""
    if qid not in qrels or qid not in run:
        return {}
    scored = {qid: dict(run[qid])}
    measures = {f"P.{k}", "recip_rank", "set_recall", "map", "Rprec", f"ndcg_cut.{k}", f"success.{k}"}
    return pytrec_eval.RelevanceEvaluator({qid: qrels[qid]}, measures).evaluate(scored)[qid]


def anchor_level_recall(case: Case, ranked: list[str], chunks: dict[str, Chunk]) -> float:
    """trec_eval's set_recall when the documents are the case's anchors (0 when nothing is retrieved)."""
    retrieved: list[str] = []
    for docno in ranked:
        c = chunks[docno]
        for i, a in enumerate(case.anchors):
            if a.matches(c.file_path, c.kind, c.start_line, c.end_line) and f"a{i}" not in retrieved:
                retrieved.append(f"a{i}")
    if not retrieved:
        return 0.0
    qrels = {"q": {f"a{i}": 1 for i in range(len(case.anchors))}}
    run = {"q": {doc: float(len(retrieved) - i) for i, doc in enumerate(retrieved)}}
    return pytrec_eval.RelevanceEvaluator(qrels, {"set_recall"}).evaluate(run)["q"]["set_recall"]


def one_chunk_per_anchor(case: Case, chunks: list[Chunk]) -> bool:
    """Every anchor matches exactly one chunk and no chunk matches two anchors."""
    matched = [
        [c.chunk_id for c in chunks if a.matches(c.file_path, c.kind, c.start_line, c.end_line)]
        for a in case.anchors
    ]
    flat = [cid for ids in matched for cid in ids]
    return all(len(ids) == 1 for ids in matched) and len(set(flat)) == len(flat)


class Tally:
    """How many comparisons of each kind ran, so a test cannot pass by comparing nothing."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, what: str) -> None:
        self.counts[what] += 1


def check_case(
    case: Case,
    ours: dict[str, float],
    trec: dict[str, float],
    ranked: list[str],
    chunks: list[Chunk],
    tally: Tally,
    same: Callable[[float, float], bool],
    tolerance: float,
) -> None:
    """Compare one case's scores with trec_eval's: P@k, RR and recall by `same` (exact, or equal at six
    decimals for a JSON report), the rank metrics within `tolerance` (summation order and log2 may
    differ in the last bits)."""
    by_id = {c.chunk_id: c for c in chunks}
    k = case.k
    assert same(ours["recall"], anchor_level_recall(case, ranked, by_id)), case.id
    tally.add("recall (anchor-level)")
    if not trec:  # no judged chunk or nothing retrieved: trec_eval skips the query, we score 0
        assert same(ours["precision_at_k"], 0.0) and same(ours["mrr"], 0.0), case.id
        tally.add("skipped by trec_eval")
        return
    assert same(ours["precision_at_k"], trec[f"P_{k}"]), case.id
    assert same(ours["mrr"], trec["recip_rank"]), case.id
    tally.add("P@k and RR")
    if one_chunk_per_anchor(case, chunks):
        assert same(ours["recall"], trec["set_recall"]), case.id
        tally.add("recall (chunk-level)")
    for key, name in TREC_NAMES.items():
        assert ours[key] == pytest.approx(trec[name.format(k=k)], rel=0, abs=tolerance), (case.id, key)
    tally.add("rank metrics")


# --- the starter sets, through the real CLI and the files it writes ---------------------------


@pytest.mark.parametrize("fixtures", ["eval/relevance/code.jsonl", "eval/relevance/docs.jsonl"])
def test_starter_sets_rescored_by_trec_eval(fixtures: str, repo_root: Path, tmp_path: Path) -> None:
    result = cli(
        "run",
        fixtures,
        "--json",
        "--metrics",
        ALL_METRICS,
        "--trec-run",
        str(tmp_path / "{backend}.run"),
        "--trec-qrels",
        str(tmp_path / "set.qrels"),
        cwd=repo_root,
    )
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    cases = load_fixtures(str(repo_root / fixtures)).cases
    chunks, _ = api.chunks(str(repo_root / doc["corpus"]))
    qrels = read_qrels((tmp_path / "set.qrels").read_text(encoding="utf-8"))
    tally = Tally()
    for backend in doc["backends"]:
        run = read_run(
            (tmp_path / f"{backend['backend']}.run").read_text(encoding="utf-8"), backend["backend"]
        )
        for case, entry in zip(cases, backend["per_query"], strict=True):
            ours = {key: float(entry[key]) for key in ("precision_at_k", "recall", "mrr")}
            ours.update({key: float(v) for key, v in entry["extra"].items()})
            trec = trec_eval(qrels, run, case.k, case.id)
            check_case(
                case,
                ours,
                trec,
                ranked_docs(run, case.id),
                chunks,
                tally,
                same=lambda a, b: format6(a) == format6(b),
                tolerance=5e-7,
            )
    assert tally.counts["P@k and RR"] == 3 * len(cases)


# --- hundreds of generated cases, exact floats through the api --------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_generated_sets_rescored_by_trec_eval(seed: int, tmp_path: Path) -> None:
    fixtures = generated_project(seed, tmp_path)
    result = api.run(str(fixtures), api.RunOptions(metrics=ALL_METRICS.split(","), trec=True))
    chunks, _ = api.chunks(str(tmp_path / "corpus"))
    qrels = read_qrels(run_qrels(result))
    tally = Tally()
    for report in result.reports:
        run = read_run(run_files(result)[report.backend], report.backend)
        for r in report.cases:
            ours = {"precision_at_k": r.metrics.precision, "recall": r.metrics.recall, "mrr": r.metrics.mrr}
            assert r.ranking is not None
            ours.update(r.ranking)
            check_case(
                r.case,
                ours,
                trec_eval(qrels, run, r.case.k, r.case.id),
                ranked_docs(run, r.case.id),
                chunks,
                tally,
                same=lambda a, b: a == b,
                tolerance=1e-12,
            )
    # the generator must exercise every branch, or the comparisons above prove little
    assert tally.counts["P@k and RR"] >= 90, tally.counts
    assert tally.counts["recall (chunk-level)"] >= 5, tally.counts
    assert tally.counts["skipped by trec_eval"] >= 3, tally.counts
    assert any(g > 1 for grades in qrels.values() for g in grades.values())


def test_export_is_deterministic_and_written_atomically(tmp_path: Path) -> None:
    fixtures = generated_project(11, tmp_path)
    outputs = []
    for attempt in ("a", "b"):
        out = tmp_path / attempt
        out.mkdir()
        result = cli(
            "run",
            str(fixtures),
            "--compare",
            "bm25,hybrid",
            "--trec-run",
            str(out / "{backend}.run"),
            "--trec-qrels",
            str(out / "q.qrels"),
        )
        assert result.code == 0, result.err
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1]
    assert sorted(outputs[0]) == ["bm25.run", "hybrid.run", "q.qrels"]  # no temporary file left behind


def test_one_backend_needs_no_placeholder_and_several_do(small_project: Path) -> None:
    one = cli("run", "set.jsonl", "--backend", "bm25", "--trec-run", "bm25.run", cwd=small_project)
    assert one.code == 0, one.err
    assert (small_project / "bm25.run").read_text().split(" ")[-1] == "bm25\n"
    several = cli("run", "set.jsonl", "--trec-run", "all.run", cwd=small_project)
    assert several.code == 2 and several.out == "" and "{backend} placeholder" in several.err
    assert not (small_project / "all.run").exists()


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (['"a b"', '"c"'], 'fixture line 2: case id "a b" cannot be a TREC query id: it contains whitespace'),
        (
            ['"x"', '"x"'],
            'fixture line 3: case id "x" cannot be a TREC query id: fixture line 2 has the same id',
        ),
        (['""', '"c"'], 'fixture line 2: case id "" cannot be a TREC query id: it is empty'),
    ],
)
def test_ids_that_cannot_be_trec_query_ids_are_input_errors(
    small_project: Path, ids: list[str], message: str
) -> None:
    cases = "".join(f'{{"id":{i},"query":"password","expected":["auth.py"]}}\n' for i in ids)
    (small_project / "bad.jsonl").write_text('{"schema":"cce.relevance/v1","corpus":"corpus"}\n' + cases)
    result = cli("run", "bad.jsonl", "--backend", "bm25", "--trec-qrels", "q.qrels", cwd=small_project)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: " + message)
    assert not (small_project / "q.qrels").exists()
