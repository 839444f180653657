"""A run split across jobs (`--shard I/N`) and put back together (`merge`), byte for byte.

A slow retriever (an embedding service, a reranker) makes one job too slow for a large fixture
set, and a CI matrix is the parallel machine a team already has. Each shard scores the queries
whose id hashes to it, the same split on every machine and for every side of a comparison
(SHA-256 of the UTF-8 id, so no `PYTHONHASHSEED` and no fixture order matter), and saves
each query's values as exact floats (JSON numbers are written with `repr`, which round-trips).

`merge` checks that the shards are one run — the same fixture file (by digest), corpus,
embedder and backends, shard numbers 1..N each once, every query scored exactly once and by the
shard its id hashes to — then rebuilds the per-query results in fixture order and hands them
to the same aggregation (`harness.backend_report`) and rendering the unsharded run uses. The
report is therefore the unsharded run's, not an approximation of it: a mean of rounded
six-decimal strings would not be.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from cce_relevance import schemas, untrusted_json
from cce_relevance.errors import CceError
from cce_relevance.evaluation.fixtures import Case, FixtureSet, parse_fixtures, read_fixture_text
from cce_relevance.evaluation.harness import CaseResult, backend_report
from cce_relevance.evaluation.metrics import QueryMetrics
from cce_relevance.evaluation.rank_metrics import FIRST_TOKENS
from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.evaluation.selection import first_tokens_asked, rank_metric_specs
from cce_relevance.evaluation.spans import TokenScore
from cce_relevance.untrusted_json import Field

_SHARD = re.compile(r"([0-9]+)/([0-9]+)\Z")
_NAMED = 10  # missing shards a refusal names
_METRICS = ("precision", "recall", "mrr", "f1")
_TOKENS = ("precision", "recall", "iou")


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as a matrix lists them: 1/3, 2/3, 3/3)."""

    index: int
    count: int

    def holds(self, case_id: str) -> bool:
        """Whether the query `case_id` belongs to this shard."""
        digest = hashlib.sha256(case_id.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def cases(self, fixtures: FixtureSet) -> FixtureSet:
        """`fixtures` with this shard's queries only, in file order."""
        return replace(fixtures, cases=tuple(c for c in fixtures.cases if self.holds(c.id)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @classmethod
    def parse(cls, text: str, source: str) -> Shard:
        """`I/N` with 1 <= I <= N; a `CceError` naming `source` (where the text came from) otherwise."""
        match = _SHARD.match(text.strip())
        index, count = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
        if not 1 <= index <= count:
            raise CceError(
                f"{source}: {text!r} is not a shard: expected I/N with 1 <= I <= N, for example 2/3"
            )
        return cls(index, count)


def shard_state(result: RunResult, fixtures_path: str, shard: Shard) -> str:
    """The state file of one shard's run (`run` with `RunOptions(shard=shard)`) of the set at
    `fixtures_path`, whose text it holds as stored."""
    return dumps_shard(shard_document(result, read_fixture_text(fixtures_path), shard))


def merge_shard_states(paths: Sequence[str]) -> RunResult:
    """The whole run rebuilt from its shards' state files (or directories of them: every `*.json`
    inside, sorted), checked to be one run split once; renders as the unsharded run does."""
    documents = []
    for path in paths:
        files = (
            sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".json"))
            if os.path.isdir(path)
            else [path]
        )
        if not files:
            raise CceError(f"merge: no shard state (*.json) in the directory {path}")
        documents += [(name, untrusted_json.read_document(name, "shard state")) for name in files]
    return merge_shards(documents)


def shard_document(result: RunResult, fixture_text: str, shard: Shard) -> dict[str, Any]:
    """What one shard saves: the whole fixture file (so `merge` knows every query and its order),
    and each of its queries' values per backend, as exact floats; with rank metrics (`--metrics`),
    their names and each query's values of them."""
    if result.comparison is not None:
        raise CceError("a sharded run scores backends only: they are compared once the shards are merged")
    names = [spec.name for spec in result.rank_metrics] + ([FIRST_TOKENS] if _first_tokens(result) else [])
    ranked = {"metrics": names} if names else {}
    return {
        "schema": schemas.SHARD,
        **ranked,
        "shard": {"index": shard.index, "count": shard.count},
        "fixtures": {
            "path": result.fixtures.path,
            "text": fixture_text,
            "sha256": hashlib.sha256(fixture_text.encode("utf-8")).hexdigest(),
        },
        "corpus": result.corpus,
        "embedder": result.embedder,
        "backends": [
            {
                "backend": report.backend,
                "cases": [_case_values(r, report.first_relevant_tokens is not None) for r in report.cases],
            }
            for report in result.reports
        ],
    }


def shard_part(result: RunResult, shard: Shard) -> RunResult:
    """The whole run `result` cut down to `shard`'s queries: what scoring only them (`run(...,
    shard=shard)`) gives, for a caller that holds the whole run already (the Action reuses a
    whole side saved earlier as one shard's side). Each backend's report keeps that shard's
    per-query results, in fixture order, and takes its macro means from them
    (`harness.backend_report`, where the live run takes them), so `shard_document` of the part is
    the live shard's, byte for byte."""
    if result.comparison is not None or result.systems:
        raise CceError("a sharded run scores backends only: they are compared once the shards are merged")
    fixtures = shard.cases(result.fixtures)
    judged = [spec.key for spec in result.rank_metrics] if result.rank_metrics else None
    kept = [shard.holds(case.id) for case in result.fixtures.cases]
    reports = tuple(
        backend_report(
            report.backend,
            [r for r in report.cases if shard.holds(r.case.id)],
            judged,
            first_tokens=report.first_relevant_tokens is not None,
        )
        for report in result.reports
    )
    judgments = (
        None
        if result.judgments is None
        else tuple(j for j, keep in zip(result.judgments, kept, strict=True) if keep)
    )
    return replace(result, fixtures=fixtures, reports=reports, judgments=judgments)


def dumps_shard(document: dict[str, Any]) -> str:
    """The shard document as text; floats as `repr`, which `json.loads` reads back exactly."""
    return json.dumps(document, ensure_ascii=False, allow_nan=False, sort_keys=True, indent=1) + "\n"


def _case_values(result: CaseResult, counted: bool = False) -> dict[str, Any]:
    """One query's exact values; `counted`: with its tokens to the first relevant hit (null: none)."""
    m, t = result.metrics, result.tokens
    return {
        "line": result.case.line,
        "id": result.case.id,
        **{name: getattr(m, name) for name in _METRICS},
        "first_relevant_rank": m.first_relevant_rank,
        "tokens": None if t is None else {name: getattr(t, name) for name in _TOKENS},
        **({} if result.ranking is None else {"ranking": result.ranking}),
        **({"first_relevant_tokens": result.first_relevant_tokens} if counted else {}),
    }


def _first_tokens(result: RunResult) -> bool:
    """Whether the run counted the tokens to each query's first relevant hit (`--metrics ttfr`)."""
    return any(r.first_relevant_tokens is not None for r in result.reports)


def merge_shards(documents: Sequence[tuple[str, Any]]) -> RunResult:
    """The unsharded run rebuilt from its shards' documents, given as (source name, parsed JSON);
    each document is read by its schema first (`read_shard_document`)."""
    if not documents:
        raise CceError("merge: no shard given: expected the state files of shards 1..N")
    for source, document in documents:
        if not isinstance(document, dict) or document.get("schema") != schemas.SHARD:
            raise CceError(f'{source}: not a shard state (expected "schema": "{schemas.SHARD}")')
        read_shard_document(Field(document, source))
    first_source, first = documents[0]
    count = _check_numbering(documents)
    for source, document in documents[1:]:
        for key in ("fixtures", "corpus", "embedder", "metrics"):
            if document.get(key) != first.get(key):
                raise CceError(
                    f"{source}: its {key} differ from {first_source}'s: the shards are not one run"
                )
        if [b["backend"] for b in document["backends"]] != [b["backend"] for b in first["backends"]]:
            raise CceError(f"{source}: its backends differ from {first_source}'s: the shards are not one run")
    try:
        fixtures = parse_fixtures(first["fixtures"]["text"], first["fixtures"]["path"])
    except CceError as exc:
        Field(first, first_source).key("fixtures").key("text").refuse(exc.message)
    specs = rank_metric_specs(first["metrics"]) if "metrics" in first else ()
    counted = "metrics" in first and first_tokens_asked(first["metrics"])
    judged = [spec.key for spec in specs] if specs else None
    reports = []
    for position, block in enumerate(first["backends"]):
        name = block["backend"]
        scored: dict[int, tuple[str, dict[str, Any]]] = {}
        for source, document in documents:
            shard = Shard(document["shard"]["index"], count)
            for values in document["backends"][position]["cases"]:
                line = values["line"]
                if line in scored:
                    raise CceError(
                        f"{source}: query {values['id']!r} on {name} is also in {scored[line][0]}: "
                        "every query must be scored exactly once"
                    )
                if not shard.holds(values["id"]):
                    raise CceError(f"{source}: query {values['id']!r} does not belong to shard {shard}")
                scored[line] = (source, values)
        owners = {document["shard"]["index"]: source for source, document in documents}
        results = [_case_result(case, scored, name, owners) for case in fixtures.cases]
        for result in results:
            if judged and (result.ranking is None or not set(judged) <= result.ranking.keys()):
                raise CceError(
                    f"{scored[result.case.line][0]}: query {result.case.id!r} on {name} "
                    "lacks a rank metric's value"
                )
        if counted and any("first_relevant_tokens" not in scored[c.line][1] for c in fixtures.cases):
            raise CceError(f"merge: a query on {name} lacks its tokens to the first relevant hit")
        reports.append(backend_report(name, results, judged, first_tokens=counted))
    return RunResult(first["corpus"], first["embedder"], fixtures, tuple(reports), None, specs)


def read_shard_document(field: Field) -> dict[str, Any]:
    """The `cce.relevance.shard/v1` document at `field`, every field checked to be what
    `shard_document` writes: the shard numbers (whole numbers from 1), the fixture file (its path
    and corpus one line each, its `sha256` the digest of its text), the embedder, the rank metric
    names, each backend's name and each query's values (line from 1, precision, recall, MRR, F1
    and token scores from 0 to 1, the rank of the first relevant hit from 1 or null, rank metrics
    finite numbers, tokens to the first relevant hit from 1 or null); else a `CceError` naming the
    file and the field. Returned as read (the merge reads it as plain data)."""
    f = field.object(("schema", "shard", "fixtures", "corpus", "embedder", "backends"), ("metrics",))
    f["schema"].const(schemas.SHARD)
    if "metrics" in f:
        try:
            rank_metric_specs(f["metrics"].list_of(Field.name))
        except CceError as exc:
            f["metrics"].refuse(exc.message)
    shard = f["shard"].object(("index", "count"))  # 1 <= I <= N: checked against the other shards
    shard["index"].integer(1)
    shard["count"].integer(1)
    fixtures = f["fixtures"].object(("path", "text", "sha256"))
    fixtures["path"].line()
    digest = hashlib.sha256(fixtures["text"].text().encode("utf-8")).hexdigest()
    if fixtures["sha256"].sha256() != digest:
        fixtures["sha256"].refuse("is not the SHA-256 of the saved fixture text")
    f["corpus"].line()
    f["embedder"].line()
    for block in f["backends"].items():
        backend = block.object(("backend", "cases"))
        backend["backend"].name()
        for case in backend["cases"].items():
            _check_case_values(case)
    return dict(field.value)


def _check_case_values(field: Field) -> None:
    """One query's values as `_case_values` writes them."""
    f = field.object(
        ("line", "id", *_METRICS, "first_relevant_rank", "tokens"), ("ranking", "first_relevant_tokens")
    )
    f["line"].integer(1)
    f["id"].text()
    for name in _METRICS:
        f[name].fraction()
    rank = f["first_relevant_rank"].optional(lambda rank: rank.integer(1))
    if f["mrr"].value != (0.0 if rank is None else 1.0 / rank):  # what `score_query` computes
        f["mrr"].expected("1 / first_relevant_rank, or 0 when no hit is relevant")
    if f["tokens"].value is not None:
        tokens = f["tokens"].object(_TOKENS)
        for name in _TOKENS:
            tokens[name].fraction()
    if "ranking" in f:
        for _, value in f["ranking"].entries(Field.name):
            value.number()
    if "first_relevant_tokens" in f:
        f["first_relevant_tokens"].optional(lambda count: count.integer(1))


def _check_numbering(documents: Sequence[tuple[str, Any]]) -> int:
    """N, when the shards are numbered 1..N of the same N, each once."""
    counts = {d["shard"]["count"] for _, d in documents}
    if len(counts) != 1:
        raise CceError(
            f"merge: the shards split the queries {len(counts)} ways ({sorted(counts)}): expected one N"
        )
    [count] = counts
    seen: dict[int, str] = {}
    for source, document in documents:
        index = document["shard"]["index"]
        if not 1 <= index <= count:
            raise CceError(f"{source}: shard {index}/{count} is not one of 1..{count}")
        if index in seen:
            raise CceError(f"{source}: shard {index}/{count} is also {seen[index]}")
        seen[index] = source
    if len(seen) < count:  # named from the first, a few: N comes from the files, it may be huge
        missing = itertools.islice((i for i in range(1, count + 1) if i not in seen), _NAMED)
        more = count - len(seen) - _NAMED
        named = ", ".join(f"{i}/{count}" for i in missing) + (f" and {more} more" if more > 0 else "")
        raise CceError(f"merge: shard {named} is missing: expected all {count}")
    return count


def _case_result(
    case: Case, scored: dict[int, tuple[str, dict[str, Any]]], backend: str, owners: dict[int, str]
) -> CaseResult:
    """One query's result from the values its shard saved; `owners`: each shard's file, to name
    the one that should have scored a query no shard did."""
    if case.line not in scored or scored[case.line][1]["id"] != case.id:
        shard = next(Shard(i, len(owners)) for i in owners if Shard(i, len(owners)).holds(case.id))
        raise CceError(
            f"merge: query {case.id!r} (line {case.line}) was scored by no shard on {backend}: "
            f"it is shard {shard}'s, {owners[shard.index]}"
        )
    source, values = scored[case.line]
    rank = values["first_relevant_rank"]
    if rank is not None and rank > case.k:  # `score_query` looks at the first k hits only
        raise CceError(
            f"{source}: query {case.id!r} on {backend}: its first relevant rank {rank} "
            f"is past its k ({case.k})"
        )
    tokens = values["tokens"]
    return CaseResult(
        case,
        QueryMetrics(
            float(values["precision"]),
            float(values["recall"]),
            float(values["mrr"]),
            float(values["f1"]),
            values["first_relevant_rank"],
        ),
        None
        if tokens is None
        else TokenScore(float(tokens["precision"]), float(tokens["recall"]), float(tokens["iou"])),
        hits=(),
        ranking=None if "ranking" not in values else {k: float(v) for k, v in values["ranking"].items()},
        first_relevant_tokens=values.get("first_relevant_tokens"),
    )
