"""One side of one Action run, saved as JSON and loaded back (`cce.relevance.action.side/v1`).

A side is one commit's results for every fixture set: what the comparison, the comment, the
summary, the outputs and the gate read from it. Two things read a saved side back:

* the fan-in job of a sharded run (`mode: merge`, shard_merge.py), which puts the shards' sides
  back together: each shard saved the queries whose id hashes to it;
* a later run whose base commit is a commit saved earlier (base_reuse.py): the push run on the
  default branch saves its head side, and a pull request from that commit loads it instead of
  scoring its base again.

Per fixture set the side keeps the run's per-query values as exact floats (the shard document of
`run --shard-state`, whole for an unsharded side), the anchor check of the whole set, each
scored query's top hits (with their symbols) and anchors, and the corpus; at head also each
configured golden's text. Rebuilding the sets' `SetAtCommit`s from saved sides gives the run
report the live run made, byte for byte: the macro means are taken from the same per-query
values in the same order (`evaluation/shards.py merge_shards`), and everything else is stored as it was.

What needs both sides is not here: the range anchors whose lines moved (git's diff between the
two commits) and the files the change edits. A shard computes them while it has the repository
and saves them beside its sides (shard_merge.py); a reused base needs nothing saved for them,
since the run that loads it has the repository.

Each side names its commit, the tool version and the scoring configuration (the inputs that
change what is scored) with a fingerprint of the two: a side is only ever combined with sides
of the same fingerprint. The commit pins every file the run read (fixtures, corpus,
`cce-relevance.toml`), so the fingerprint need not hash them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cce_relevance import __version__, api, schemas
from cce_relevance.action.config.inputs import MAX_SHARDS, ActionInputs
from cce_relevance.action.scoring.model import Rankings, SetAtCommit
from cce_relevance.action.scoring.range_anchors import SideFixtures
from cce_relevance.api import TopHit, Validation
from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.golden import GoldenFile
from cce_relevance.evaluation.shards import merge_shards, read_shard_document, shard_document
from cce_relevance.evaluation.validation import AnchorFinding
from cce_relevance.reporting.run_report import run_report_json
from cce_relevance.reporting.validation_report import validation_document
from cce_relevance.untrusted_json import Field


def scoring_config(inputs: ActionInputs, subdir: Path) -> dict[str, Any]:
    """The inputs that change what a side's results are (the gate's `fail-on` and `alpha` do not:
    they are applied to the saved results)."""
    return {
        "fixtures": list(inputs.fixture_patterns),
        "golden": [list(pair) for pair in inputs.golden],
        "backends": list(inputs.backends),
        "regression_metric": inputs.regression_metric,
        "working_directory": subdir.as_posix(),
        "repository_retrievers": inputs.repository_retrievers,
    }


def fingerprint(config: Mapping[str, Any], version: str = __version__) -> str:
    """SHA-256 of the tool version and the scoring configuration, as canonical JSON."""
    text = json.dumps({"version": version, "config": config}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SavedSet:
    """One fixture set as a side saved it."""

    run: dict[str, Any]  # `cce.relevance.shard/v1`: the fixture file and the scored queries' values
    anchors: Validation  # the whole set's anchor check
    rankings: Rankings  # the scored queries' top hits
    corpus: str
    expected: tuple[tuple[str, tuple[Anchor, ...]], ...]  # the scored queries' anchors, in fixture order


@dataclass(frozen=True)
class SavedSide:
    """A side read back: its commit, tool version, scoring configuration, fingerprint and shard,
    each fixture set, and (at head) the goldens."""

    commit: str
    version: str
    config: dict[str, Any]
    fingerprint: str
    shard: api.Shard
    sets: dict[str, SavedSet]
    goldens: dict[str, GoldenFile]


def side_document(
    commit: str,
    config: Mapping[str, Any],
    shard: api.Shard,
    results: Mapping[str, SetAtCommit],
    goldens: Mapping[str, GoldenFile] | None = None,
) -> dict[str, Any]:
    """A side as JSON data (written with `dumps_side`)."""
    return {
        "schema": schemas.ACTION_SIDE,
        "commit": commit,
        "version": __version__,
        "config": dict(config),
        "fingerprint": fingerprint(config),
        "shard": {"index": shard.index, "count": shard.count},
        "sets": [
            {
                "fixtures": fixture,
                "run": shard_document(r.run, r.fixtures.text, shard),
                "validate": validation_document(r.anchors),
                "top_hits": {
                    backend: {case: [h.saved() for h in hits] for case, hits in by_case.items()}
                    for backend, by_case in r.rankings.items()
                },
                "corpus": r.corpus,
                "anchors": [[case, [asdict(a) for a in anchors]] for case, anchors in r.expected.items()],
            }
            for fixture, r in sorted(results.items())
        ],
        "goldens": [
            {"fixtures": g.fixture, "path": g.path, "text": g.text, "update": g.update}
            for _, g in sorted((goldens or {}).items())
        ],
    }


def dumps_side(document: Mapping[str, Any]) -> str:
    """A side's JSON text, compact (a side of a large set holds every query's values and top hits);
    floats as `repr`, which `json.loads` reads back exactly."""
    return (
        json.dumps(document, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":"))
        + "\n"
    )


def read_side(document: Any, source: str) -> SavedSide:
    """A side document read back; anything else is an input error naming `source`."""
    return read_side_field(Field(document, source))


def read_side_field(field: Field) -> SavedSide:
    """The saved side at `field` (a file's root, or a shard state's `sides.head`), read by its
    schema, every field (`_saved_side`); anything else is an input error naming the file and the
    field."""
    if not isinstance(field.value, dict) or field.value.get("schema") != schemas.ACTION_SIDE:
        field.refuse(f'not a saved side (expected "schema": "{schemas.ACTION_SIDE}")')
    return _saved_side(field)


def rebuild(sides: Sequence[tuple[str, SavedSide]]) -> dict[str, SetAtCommit]:
    """Each fixture set's `SetAtCommit` from the saved sides of one commit: one whole side, or the
    N shards of one (checked to be one run split once: same commit, tool version, configuration,
    sets and anchor checks; every query scored exactly once)."""
    source, first = sides[0]
    for other, side in sides[1:]:
        for what, mine, theirs in (
            ("commit", first.commit, side.commit),
            ("tool version", first.version, side.version),
            ("configuration (fingerprint)", first.fingerprint, side.fingerprint),
            ("fixture sets", sorted(first.sets), sorted(side.sets)),
        ):
            if mine != theirs:
                raise CceError(f"{other}: its {what} differs from {source}'s ({theirs} != {mine})")
    results = {}
    for fixture, saved in first.sets.items():
        for other, side in sides[1:]:
            part = side.sets[fixture]
            if (part.anchors, part.corpus) != (saved.anchors, saved.corpus):
                raise CceError(f"{other}: {fixture} was read differently from {source}")
        try:
            run = merge_shards([(name, side.sets[fixture].run) for name, side in sides])
        except CceError as exc:
            raise CceError(f"{fixture} at {first.commit[:12]}: {exc.message}", exc.hint) from exc
        try:
            results[fixture] = _side_result(run, [side.sets[fixture] for _, side in sides])
        except (KeyError, StopIteration) as exc:  # hits or anchors missing for a scored query
            raise CceError(f"{source}: {fixture}: the saved top hits or anchors miss query {exc}") from exc
    return results


def _side_result(run: api.RunResult, parts: Sequence[SavedSet]) -> SetAtCommit:
    """One set's result from its merged run and the saved parts (queries in fixture order, as
    the live run lists them)."""
    rankings: Rankings = {r.backend: {} for r in run.reports}
    expected: dict[str, tuple[Anchor, ...]] = {}
    owners = [(dict(part.expected), part) for part in parts]
    for case in run.fixtures.cases:
        anchors, part = next((a, p) for a, p in owners if case.id in a)
        expected[case.id] = anchors[case.id]
        for backend, by_case in rankings.items():
            by_case[case.id] = part.rankings[backend][case.id]
    first = parts[0]
    return SetAtCommit(
        run_report_json(run),
        first.anchors,
        rankings,
        first.corpus,
        expected,
        SideFixtures(run.fixtures, first.run["fixtures"]["text"], first.corpus),
        run,
    )


_LINES = 2**64 - 1  # a line number, as far as a fixture's range can name one


def read_shard_numbers(field: Field) -> api.Shard:
    """`{"index": I, "count": N}`, whole numbers with 1 <= I; N checked against the other shards
    by the caller (a message naming both is clearer than a range)."""
    f = field.object(("index", "count"))
    return api.Shard(f["index"].integer(1), f["count"].integer(1))


def read_span(field: Field) -> tuple[int, int]:
    """Lines `[a, b]`, 1 <= a <= b (a range anchor's, a symbol's definition)."""
    a, b = (item.integer(1, _LINES) for item in field.items(length=2))
    if b < a:
        field.expected("lines [a, b] with a <= b")
    return a, b


def _saved_side(field: Field) -> SavedSide:
    f = field.object(("schema", "commit", "version", "config", "fingerprint", "shard", "sets", "goldens"))
    commit = f["commit"].commit()
    version = f["version"].name()
    config = _config(f["config"])
    if f["fingerprint"].sha256() != fingerprint(config, version):
        f["fingerprint"].refuse("does not match the side's version and configuration")
    shard = read_shard_numbers(f["shard"])
    if shard.index > shard.count or shard.count > MAX_SHARDS:
        f["shard"].expected(f"shard I/N with 1 <= I <= N <= {MAX_SHARDS}")
    sets: dict[str, SavedSet] = {}
    under = config["working_directory"]  # what `fixtures` and goldens are relative to
    for entry in f["sets"].items():
        fixture, saved = _saved_set(entry, shard, under)
        if fixture in sets:
            entry.key("fixtures").refuse(f"{fixture} is saved twice")
        sets[fixture] = saved
    goldens: dict[str, GoldenFile] = {}
    for entry in f["goldens"].items():
        g = entry.object(("fixtures", "path", "text", "update"))
        golden = GoldenFile(
            g["fixtures"].path(under=under), g["path"].path(under=under), g["text"].text(), g["update"].line()
        )
        if golden.fixture in goldens:
            g["fixtures"].refuse(f"{golden.fixture} has two goldens")
        goldens[golden.fixture] = golden
    return SavedSide(commit, version, config, f["fingerprint"].value, shard, sets, goldens)


def _config(field: Field) -> dict[str, Any]:
    """The scoring configuration (`scoring_config`), read back as it was written."""
    f = field.object(
        ("fixtures", "golden", "backends", "regression_metric", "working_directory", "repository_retrievers")
    )
    return {
        "fixtures": f["fixtures"].list_of(Field.line),
        "golden": [[part.line() for part in pair.items(length=2)] for pair in f["golden"].items()],
        "backends": f["backends"].list_of(Field.name),
        "regression_metric": f["regression_metric"].name(),
        "working_directory": f["working_directory"].path(root=True),
        "repository_retrievers": f["repository_retrievers"].boolean(),
    }


def _saved_set(field: Field, shard: api.Shard, under: str) -> tuple[str, SavedSet]:
    f = field.object(("fixtures", "run", "validate", "top_hits", "corpus", "anchors"))
    fixture = f["fixtures"].path(under=under)
    run = read_shard_document(f["run"])
    if run["shard"] != {"index": shard.index, "count": shard.count}:
        f["run"].key("shard").refuse(f"the run of {fixture} is not the side's shard {shard}")
    rankings: Rankings = {
        backend: {case: tuple(_hit(h) for h in hits.items()) for case, hits in by_case.entries()}
        for backend, by_case in f["top_hits"].entries(Field.name)
    }
    expected = []
    for pair in f["anchors"].items():
        case, anchors = pair.items(length=2)
        expected.append((case.line(), tuple(_anchor(a) for a in anchors.items())))
    return fixture, SavedSet(
        run, _validation(f["validate"]), rankings, f["corpus"].path(root=True), tuple(expected)
    )


def _hit(field: Field) -> TopHit:
    """A top hit read back from its `TopHit.saved` form (`unlabeled`: absent in sides saved before
    it was recorded)."""
    f = field.object(("rank", "file", "start", "end", "kind", "relevant", "symbol"), ("unlabeled",))
    start = f["start"].integer(0, _LINES)
    return TopHit.from_saved(
        {
            "rank": f["rank"].integer(1),
            "file": f["file"].path(),
            "start": start,
            "end": f["end"].integer(start, _LINES),  # a chunk ends where it starts or later
            "kind": f["kind"].line(),
            "relevant": f["relevant"].boolean(),
            "symbol": f["symbol"].optional(Field.line),
            "unlabeled": f["unlabeled"].boolean() if "unlabeled" in f else False,
        }
    )


def _validation(field: Field) -> Validation:
    """A `validation_document` read back."""
    f = field.object(("schema", "fixtures", "corpus", "cases", "anchors", "ok", "problems"))
    f["schema"].const(schemas.VALIDATE)
    findings = []
    for problem in f["problems"].items():
        p = problem.object(("anchor", "code", "id", "line", "message"))
        findings.append(
            AnchorFinding(
                p["code"].name(),
                p["line"].integer(0),
                p["id"].line(),
                p["anchor"].optional(Field.line),
                p["message"].line(),
            )
        )
    if f["ok"].boolean() != (not findings):
        f["ok"].expected("true exactly when there are no problems")
    return Validation(
        f["fixtures"].line(),
        f["corpus"].line(),
        f["cases"].integer(0),
        f["anchors"].integer(0),
        tuple(findings),
    )


def _anchor(field: Field) -> Anchor:
    """An anchor read back from its `asdict` form (its spans as lists)."""
    f = field.object(("path", "kind", "range", "symbol", "bound"))
    return Anchor(
        f["path"].optional(Field.line),
        f["kind"].optional(Field.line),
        f["range"].optional(read_span),
        f["symbol"].optional(Field.line),
        tuple(read_span(span) for span in f["bound"].items()),
    )
