"""A sharded Action run end to end: three `shard: I/N` runs, their states moved as a matrix's
artifacts would be, then a `mode: merge` run, against the unsharded run of the same pull request.

Two copies of the scenario's repository (the same commits: the history is deterministic), each
with its own loopback GitHub and runner directories: one runs unsharded, the other sharded then
merged. Everything a user sees must be byte for byte the same: the report files, compare.json,
the comment posted, the step outputs, the summary and the exit code. The change drifts a golden,
moves a query's answer down and moves a range anchor's lines, so the gate fails and the comment
has something in every section.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cce_relevance.action.saved.side import fingerprint
from tests.action.fake_github import FakeGitHub
from tests.action.scenario import ActionRun, Copy
from tests.action.test_schemas import validator


@pytest.fixture
def copies(tmp_path: Path, make_fake_github: Callable[..., FakeGitHub]) -> tuple[Copy, Copy]:
    whole, sharded = (
        Copy(tmp_path / "whole", make_fake_github()),
        Copy(tmp_path / "sharded", make_fake_github()),
    )
    assert whole.pr.head_sha == sharded.pr.head_sha and whole.pr.merge_base() == sharded.pr.merge_base()
    return whole, sharded


def shard_runs(
    side: Copy, count: int, into: str = "artifacts", only: tuple[int, ...] = (), **inputs: str
) -> list[tuple[ActionRun, dict[str, Any]]]:
    """Run shards 1..count (or `only` those), each state copied to `INTO/cce-relevance-shard-I/`
    as actions/download-artifact leaves a matrix's artifacts; returns each run and its state."""
    states = []
    for index in only or range(1, count + 1):
        run = side.act(INPUT_SHARD=f"{index}/{count}", **inputs)
        assert run.code == 0, run.stdout + run.stderr
        assert set(run.outputs) == {"shard-state"} and run.summary == ""
        state = side.pr.workspace / run.outputs["shard-state"]
        artifact = side.pr.workspace / into / f"cce-relevance-shard-{index}"
        artifact.mkdir(parents=True, exist_ok=True)
        shutil.copy(state, artifact)
        states.append((run, json.loads(state.read_text(encoding="utf-8"))))
    return states


@pytest.mark.slow
@pytest.mark.parametrize(
    ("count", "inputs"),
    [
        (3, {}),
        (3, {"INPUT_REGRESSION-METRIC": "ndcg_at_k", "INPUT_FAIL-ON": "regression"}),
        (8, {}),  # more shards than a set has queries: some score none of it
    ],
    ids=["3 shards, mrr, fail-on drift", "3 shards, ndcg_at_k, fail-on regression", "8 shards"],
)
def test_shards_merged_are_the_unsharded_run_byte_for_byte(
    copies: tuple[Copy, Copy], count: int, inputs: dict[str, str]
) -> None:
    whole, sharded = copies
    expected = whole.act(**inputs)

    states = [state for _, state in shard_runs(sharded, count, **inputs)]
    assert sharded.comments() == []  # a shard never comments
    scored = [
        [len(s["run"]["backends"][0]["cases"]) for s in state["sides"]["head"]["sets"]] for state in states
    ]
    assert sum(map(sum, scored)) == 10  # the two sets' 4 + 6 queries, each once
    assert all(map(sum, scored)) if count == 3 else not all(map(all, scored))
    for state in states:
        validator("cce.relevance.action.shard.v1").validate(state)  # docs/schemas/ describes it
    merged = sharded.act(INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": "artifacts", **inputs})

    assert expected.code == 1, expected.stdout + expected.stderr  # the golden drifted
    assert merged.code == expected.code, merged.stdout + merged.stderr
    assert merged.outputs == expected.outputs
    assert merged.summary == expected.summary
    assert sharded.comments() == whole.comments() and len(whole.comments()) == 1
    assert sharded.files() == whole.files()
    body = whole.comments()[0]
    assert "🔴" in body and "#### ↕️ Line-range anchors that moved or changed" in body  # a query lost
    assert f"{count} shards merged" in merged.stdout


@pytest.fixture(scope="module")
def three_shards(tmp_path_factory: pytest.TempPathFactory) -> Copy:
    """The sharded copy with its three shards' artifacts in `artifacts/`, made once for the
    refusals below (each merges a tampered copy of them)."""
    side = Copy(tmp_path_factory.mktemp("refusals"), None)
    shard_runs(side, 3)
    return side


def tampered(side: Copy, name: str, change: Callable[[Path], None], **inputs: str) -> ActionRun:
    """`mode: merge` of a copy of the artifacts that `change` edited (given the copy's root)."""
    root = side.pr.workspace / name
    shutil.copytree(side.pr.workspace / "artifacts", root)
    change(root)
    return side.act(INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": name, **inputs})


def edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


STATE = "cce-relevance-shard-{0}/shard-{0}-of-3.json"


def _move_a_query(root: Path) -> None:
    """Shard 2's first scored query of the first set, also put in shard 1's values."""
    moved: list[Any] = []
    edit(root / STATE.format(2), lambda d: moved.extend(d["sides"]["head"]["sets"][0]["run"]["backends"]))
    edit(
        root / STATE.format(1),
        lambda d: [
            block["cases"].append(other["cases"][0])
            for block, other in zip(d["sides"]["head"]["sets"][0]["run"]["backends"], moved, strict=True)
        ],
    )


def _drop_a_query(document: dict[str, Any]) -> None:
    for block in document["sides"]["head"]["sets"][0]["run"]["backends"]:
        del block["cases"][0]


def _other_version(document: dict[str, Any]) -> None:
    """As another release of the Action would have saved it."""
    for side in document["sides"].values():
        side["version"] = "0.0.1"
        side["fingerprint"] = fingerprint(side["config"], side["version"])


def _other_backends(document: dict[str, Any]) -> None:
    """As a shard run with `backends: bm25` would have saved it (its fingerprint follows)."""
    for side in document["sides"].values():
        side["config"]["backends"] = ["bm25"]
        side["fingerprint"] = fingerprint(side["config"], side["version"])


def _set(key: str, value: Any, side: str | None = None) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        (document if side is None else document["sides"][side])[key] = value

    return change


REFUSALS: dict[str, tuple[Callable[[Path], None], str]] = {
    "missing": (lambda root: shutil.rmtree(root / "cce-relevance-shard-2"), "shard 2/3 is missing"),
    "twice": (
        lambda root: shutil.copytree(root / "cce-relevance-shard-1", root / "cce-relevance-shard-1-again"),
        "cce-relevance-shard-1-again/shard-1-of-3.json: shard 1/3 is also cce-relevance-shard-1/",
    ),
    "other N": (
        lambda root: edit(root / STATE.format(3), _set("shard", {"index": 3, "count": 4})),
        f"{STATE.format(3)}: shard 3/4, but {STATE.format(1)} is one of 3",
    ),
    "a huge N": (  # every state says so: the missing shards are not listed one by one
        lambda root: [
            edit(root / STATE.format(i), _set("shard", {"index": i, "count": 10**9})) for i in (1, 2, 3)
        ],
        f"{STATE.format(1)}: shard count 1000000000 is not one of 1..256",
    ),
    "a shard past N": (
        lambda root: edit(root / STATE.format(3), _set("shard", {"index": 4, "count": 3})),
        f"{STATE.format(3)}: shard 4/3 is not one of 1..3",
    ),
    "other head": (  # the merge job knows the head from its event: the shard is not this run's
        lambda root: edit(root / STATE.format(2), _set("head", "f" * 40)),
        f'{STATE.format(2)}: field "head": the shards are for commit {"f" * 40}, but this run is for',
    ),
    "other version": (
        lambda root: edit(root / STATE.format(3), _other_version),
        f"{STATE.format(3)}: scored by cce-relevance 0.0.1, {STATE.format(1)} by",
    ),
    "other inputs": (
        lambda root: edit(root / STATE.format(2), _other_backends),
        f"{STATE.format(2)}: scored with other inputs than {STATE.format(1)} (backends differ)",
    ),
    "a query by the wrong shard": (
        _move_a_query,
        "eval/billing.jsonl at {head}: "
        f"{STATE.format(1)}: query 'invoice-total' does not belong to shard 1/3",
    ),
    "a query by none": (
        lambda root: edit(root / STATE.format(2), _drop_a_query),
        "eval/billing.jsonl at {head}: merge: query 'invoice-total' (line 2) was scored by no shard on bm25",
    ),
    "a tampered fingerprint": (
        lambda root: edit(root / STATE.format(2), _set("fingerprint", "0" * 64, "head")),
        f'{STATE.format(2)}: field "sides.head.fingerprint": '
        "does not match the side's version and configuration",
    ),
    "not a shard": (
        lambda root: (root / "notes.json").write_text("{}", encoding="utf-8"),
        'notes.json: not an Action shard state (expected "schema": "cce.relevance.action.shard/v1")',
    ),
    "another regression metric": (
        lambda root: None,  # the merge job is given another one
        "input 'regression-metric': ndcg_at_k, but the shards were scored for mrr",
    ),
    "empty": (lambda root: [shutil.rmtree(p) for p in list(root.iterdir())], "no shard state (*.json) under"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(REFUSALS))
def test_merge_refuses_shards_that_are_not_one_run_naming_the_artifact(three_shards: Copy, case: str) -> None:
    change, message = REFUSALS[case]

    metric = {"INPUT_REGRESSION-METRIC": "ndcg_at_k"} if case == "another regression metric" else {}
    run = tampered(three_shards, f"tampered-{case.replace(' ', '-')}", change, **metric)

    assert run.code == 2, run.stdout + run.stderr
    [line] = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    expected = message.format(head=three_shards.pr.head_sha[:12])
    assert "configuration error" in line and expected in line.replace("%3A", ":"), line
    assert "Traceback" not in run.stderr


@pytest.mark.slow
def test_a_merge_shows_the_trend_line_the_unsharded_run_shows(copies: tuple[Copy, Copy]) -> None:
    """With a `history` recorded by a push to the default branch, the merge job (which then needs
    the checkout the history's store reads) comments the unsharded run's trend line."""
    history = {"INPUT_HISTORY": ".cce-relevance-history/history.json"}
    whole, sharded = copies
    for copy in copies:
        event = {
            "before": "0" * 40,
            "after": copy.pr.merge_base(),
            "ref": "refs/heads/main",
            "repository": {"default_branch": "main", "full_name": "octo/demo"},
        }
        push = copy.act(event, GITHUB_EVENT_NAME="push", **history)
        assert push.code == 0 and "Trend history .cce-relevance-history/history.json: recorded" in push.stdout
    expected = whole.act(**history)

    shard_runs(sharded, 3, **history)
    merged = sharded.act(INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": "artifacts", **history})

    assert "📈 Trend of MRR" in whole.comments()[0]
    assert (merged.code, merged.outputs, merged.summary) == (
        expected.code,
        expected.outputs,
        expected.summary,
    )
    assert sharded.comments() == whole.comments()
    assert sharded.files() == whole.files()
