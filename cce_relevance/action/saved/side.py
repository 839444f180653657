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
configured golden's text. Rebuilding the sets' `SideResult`s from saved sides gives the run
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
from cce_relevance.action.config.inputs import ActionInputs
from cce_relevance.action.scoring.model import Rankings, SideResult
from cce_relevance.action.scoring.range_anchors import SideFixtures
from cce_relevance.api import TopHit, Validation
from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.golden import GoldenFile
from cce_relevance.evaluation.shards import merge_shards, shard_document
from cce_relevance.evaluation.validation import AnchorFinding
from cce_relevance.reporting.run_report import run_report_json
from cce_relevance.reporting.validation_report import validation_document


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
    results: Mapping[str, SideResult],
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
    if not isinstance(document, dict) or document.get("schema") != schemas.ACTION_SIDE:
        raise CceError(f'{source}: not a saved side (expected "schema": "{schemas.ACTION_SIDE}")')
    try:
        return _saved_side(document)
    except _Mismatch as exc:
        raise CceError(f"{source}: {exc}") from exc
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
        raise CceError(f"{source}: a saved side is malformed ({type(exc).__name__}: {exc})") from exc


def rebuild(sides: Sequence[tuple[str, SavedSide]]) -> dict[str, SideResult]:
    """Each fixture set's `SideResult` from the saved sides of one commit: one whole side, or the
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


def _side_result(run: api.RunResult, parts: Sequence[SavedSet]) -> SideResult:
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
    return SideResult(
        run_report_json(run),
        first.anchors,
        rankings,
        first.corpus,
        expected,
        SideFixtures(run.fixtures, first.run["fixtures"]["text"], first.corpus),
        run,
    )


class _Mismatch(Exception):
    """A well-formed side that contradicts itself."""


def _saved_side(document: dict[str, Any]) -> SavedSide:
    shard = api.Shard(int(document["shard"]["index"]), int(document["shard"]["count"]))
    sets = {}
    for entry in document["sets"]:
        if entry["run"]["shard"] != document["shard"]:
            raise ValueError(f"the run of {entry['fixtures']} is not shard {shard}")
        sets[str(entry["fixtures"])] = SavedSet(
            entry["run"],
            _validation(entry["validate"]),
            {
                str(backend): {
                    str(case): tuple(TopHit.from_saved(h) for h in hits) for case, hits in by_case.items()
                }
                for backend, by_case in entry["top_hits"].items()
            },
            str(entry["corpus"]),
            tuple((str(case), tuple(_anchor(a) for a in anchors)) for case, anchors in entry["anchors"]),
        )
    goldens = {
        str(g["fixtures"]): GoldenFile(str(g["fixtures"]), str(g["path"]), str(g["text"]), str(g["update"]))
        for g in document["goldens"]
    }
    config = document["config"]
    if not all(isinstance(config[key], str) for key in ("working_directory", "regression_metric")):
        raise ValueError("config: working_directory and regression_metric must be strings")
    if document["fingerprint"] != fingerprint(config, document["version"]):
        raise _Mismatch("its fingerprint does not match its version and configuration")
    return SavedSide(
        str(document["commit"]),
        str(document["version"]),
        dict(document["config"]),
        str(document["fingerprint"]),
        shard,
        sets,
        goldens,
    )


def _validation(data: dict[str, Any]) -> Validation:
    """A `validation_document` read back."""
    return Validation(
        str(data["fixtures"]),
        str(data["corpus"]),
        int(data["cases"]),
        int(data["anchors"]),
        tuple(
            AnchorFinding(str(f["code"]), int(f["line"]), str(f["id"]), f["anchor"], str(f["message"]))
            for f in data["problems"]
        ),
    )


def _anchor(data: dict[str, Any]) -> Anchor:
    """An anchor read back from its `asdict` form (its spans as lists)."""
    span = data["range"]
    return Anchor(
        data["path"],
        data["kind"],
        None if span is None else (int(span[0]), int(span[1])),
        data["symbol"],
        tuple((int(a), int(b)) for a, b in data["bound"]),
    )
