"""A base side saved by an earlier run, reused instead of scoring the base again (saved/base_reuse.py).

A push run on the default branch scores the commit the pull request branched from and saves its
side in the cache directory; the pull request's run then loads it for its base. Everything it
reports must be what re-scoring the base gives, byte for byte: the comment, the report files,
the outputs, the summary and the exit code. A side saved with other inputs or by another tool
version is not reused (a notice says so), and an unreadable one is ignored with a warning.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cce_relevance.action.saved.base_reuse import KEPT, prune
from cce_relevance.action.saved.side import fingerprint
from tests.action.fake_github import FakeGitHub
from tests.action.scenario import ActionRun, Copy
from tests.action.test_shards_e2e import shard_runs
from tests.action.test_workflow_commands import runner_commands

SIDES = Path(".cce-relevance/cache/sides")


def push_run(copy: Copy, **inputs: str) -> ActionRun:
    """The push to the default branch that made the pull request's merge-base (the root commit:
    scored alone), which saves its side."""
    event = {"before": "0" * 40, "after": copy.pr.merge_base(), "ref": "refs/heads/main"}
    run = copy.act(event, GITHUB_EVENT_NAME="push", **inputs)
    assert run.code == 0, run.stdout + run.stderr
    return run


def reused(run: ActionRun, copy: Copy) -> bool:
    return f"Base {copy.pr.merge_base()[:12]}: reusing the side an earlier run saved" in run.stdout


def same_as(run: ActionRun, copy: Copy, fresh: ActionRun, fresh_copy: Copy) -> None:
    assert run.code == fresh.code == 1, run.stdout + run.stderr  # the golden drifted
    assert run.outputs == fresh.outputs
    assert run.summary == fresh.summary
    assert copy.files() == fresh_copy.files()
    assert copy.comments() == fresh_copy.comments() and len(copy.comments()) == 1


@pytest.fixture
def copies(tmp_path: Path, make_fake_github: Callable[..., FakeGitHub]) -> tuple[Copy, Copy]:
    """A copy scored from scratch, and one with a cache directory to fill."""
    return Copy(tmp_path / "fresh", make_fake_github()), Copy(tmp_path / "cached", make_fake_github())


@pytest.mark.slow
def test_a_base_saved_by_the_push_run_gives_the_comment_re_scoring_gives(copies: tuple[Copy, Copy]) -> None:
    fresh_copy, copy = copies
    fresh = fresh_copy.act()
    assert not reused(fresh, fresh_copy)

    push_run(copy)
    [saved] = (copy.pr.workspace / SIDES).glob(f"{copy.pr.merge_base()}-*.json")
    run = copy.act()

    assert reused(run, copy), run.stdout
    assert "base score" not in run.stdout and "head score" in run.stdout  # the timings: base not scored
    same_as(run, copy, fresh, fresh_copy)
    assert json.loads(saved.read_text(encoding="utf-8"))["commit"] == copy.pr.merge_base()
    # A pull request's run saves no side: its head is seldom a later run's base.
    assert [p.name for p in (copy.pr.workspace / SIDES).iterdir()] == [saved.name]


def _other_version(path: Path) -> None:
    """The saved side as another release of the Action wrote it: under that release's fingerprint."""
    document = json.loads(path.read_text(encoding="utf-8"))
    document["version"] = "0.0.1"
    document["fingerprint"] = fingerprint(document["config"], "0.0.1")
    path.unlink()
    (path.parent / f"{document['commit']}-{document['fingerprint'][:16]}.json").write_text(
        json.dumps(document), encoding="utf-8"
    )


def _set(path: Path, where: list[str | int], value: object) -> None:
    """The saved side with one field replaced (a cache entry is data: restored, it may hold anything)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    *parents, last = where
    holder = document
    for step in parents:
        holder = holder[step]
    holder[last] = value
    path.write_text(json.dumps(document), encoding="utf-8")


def _get(path: Path, where: list[str | int]) -> Any:
    """The saved side's value at `where`."""
    value = json.loads(path.read_text(encoding="utf-8"))
    for step in where:
        value = value[step]
    return value


CASE = ["sets", 0, "run", "backends", 0, "cases", 0]  # a query's values in the side's first set


CASES: dict[str, tuple[dict[str, str], Callable[[Path], None], str]] = {
    "other inputs": (
        {"INPUT_GOLDEN": ""},  # no golden: another fingerprint (a golden is left out of its corpus)
        lambda path: None,
        "was scored with another tool version or other inputs",
    ),
    "another version": ({}, _other_version, "was scored with another tool version or other inputs"),
    "unreadable": (
        {},
        lambda path: path.write_text('{"schema": "cce.relevance.action.side/v1"}', encoding="utf-8"),
        "Ignoring the saved base side: ",
    ),
    # #29: read back, a mean of 1e308 reached the comparison, which stopped the run (exit 2) ...
    "values out of range": (
        {},
        lambda path: _set(path, [*CASE, "recall"], 1e308),
        "Ignoring the saved base side: ",
    ),
    # ... and one past 1, or a rank below 1, was reused as if scored
    "a metric past 1": ({}, lambda path: _set(path, [*CASE, "mrr"], 2.0), "Ignoring the saved base side: "),
    "a rank below 1": (
        {},
        lambda path: _set(path, [*CASE, "first_relevant_rank"], -1),
        "Ignoring the saved base side: ",
    ),
    "a first relevant rank its MRR does not match": (
        {},
        lambda path: _set(path, [*CASE, "first_relevant_rank"], 10**12),
        "Ignoring the saved base side: ",
    ),
    "a first relevant rank past k": (
        {},
        lambda path: _set(path, CASE, {**_get(path, CASE), "first_relevant_rank": 10**6, "mrr": 1 / 10**6}),
        "Ignoring the saved base side: ",
    ),
    "a top hit that ends before it starts": (
        {},
        lambda path: _set(path, ["sets", 0, "top_hits", "bm25", "format-price", 0, "start"], 9),
        "Ignoring the saved base side: ",
    ),
    "a workflow command for its commit": (
        {},
        lambda path: _set(path, ["commit"], "%0A::warning::pwned"),
        "Ignoring the saved base side: ",
    ),
    "a corpus out of the workspace": (
        {},
        lambda path: _set(path, ["sets", 0, "corpus"], "../../../../etc"),
        "Ignoring the saved base side: ",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_a_base_saved_otherwise_is_scored_again(copies: tuple[Copy, Copy], case: str) -> None:
    inputs, spoil, message = CASES[case]
    fresh_copy, copy = copies
    fresh = fresh_copy.act()
    push_run(copy, **inputs)
    [saved] = (copy.pr.workspace / SIDES).glob(f"{copy.pr.merge_base()}-*.json")
    spoil(saved)

    run = copy.act()

    assert run.code == fresh.code, run.stdout + run.stderr  # a cache entry never fails a check
    assert not reused(run, copy) and "base score" in run.stdout
    assert message in run.stdout
    assert not [c for c in runner_commands(run.stdout) if "pwned" in c[2] and not c[2].startswith("Ignoring")]
    same_as(run, copy, fresh, fresh_copy)


def artifacts(copy: Copy) -> dict[str, bytes]:
    """The shard states `shard_runs` left, as a matrix's artifacts, by name."""
    root = copy.pr.workspace / "artifacts"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_shards_take_their_base_from_the_side_the_push_run_saved(copies: tuple[Copy, Copy]) -> None:
    """Each shard cuts the saved whole base side to its queries and scores only its head: its
    state is the one a shard scoring its base saves, so the merge is the unsharded run's."""
    fresh_copy, copy = copies
    for run, _ in shard_runs(fresh_copy, 3):  # no side saved: each shard scores its base
        assert not reused(run, fresh_copy) and "base score" in run.stdout
    fresh = fresh_copy.act()
    push_run(copy)

    runs = shard_runs(copy, 3)
    merged = copy.act(INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": "artifacts"})

    for index, (run, _) in enumerate(runs, 1):
        assert reused(run, copy) and f"shard {index}/3's queries of it" in run.stdout, run.stdout
        assert "base score" not in run.stdout and "head score" in run.stdout  # the timings
    assert artifacts(copy) == artifacts(fresh_copy)  # the shard states, byte for byte
    assert "3 shards merged" in merged.stdout
    same_as(merged, copy, fresh, fresh_copy)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_a_shard_scores_its_base_when_the_saved_side_does_not_fit(
    copies: tuple[Copy, Copy], case: str
) -> None:
    inputs, spoil, message = CASES[case]
    fresh_copy, copy = copies
    shard_runs(fresh_copy, 3, only=(2,))
    push_run(copy, **inputs)
    [saved] = (copy.pr.workspace / SIDES).glob(f"{copy.pr.merge_base()}-*.json")
    spoil(saved)

    [(run, _)] = shard_runs(copy, 3, only=(2,))

    assert not reused(run, copy) and "base score" in run.stdout
    assert message in run.stdout
    assert artifacts(copy) == artifacts(fresh_copy)


def test_the_newest_saved_sides_are_kept(tmp_path: Path) -> None:
    for age in range(KEPT + 3):
        path = tmp_path / f"{age:040x}-0123456789abcdef.json"
        path.write_text("{}", encoding="utf-8")
        os.utime(path, ns=(0, (1000 - age) * 10**9))  # age 0 is the newest

    prune(tmp_path)

    assert sorted(int(p.name[:40], 16) for p in tmp_path.iterdir()) == list(range(KEPT))


def test_a_side_that_cannot_be_saved_is_a_warning(copies: tuple[Copy, Copy]) -> None:
    _, copy = copies
    blocked = copy.pr.workspace / SIDES
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file where the saved sides go\n", encoding="utf-8")

    run = push_run(copy)

    assert "::warning::Could not save the head side for later runs: " in run.stdout
    assert blocked.read_text(encoding="utf-8") == "a file where the saved sides go\n"
