"""Hostile values in every field of the documents that cross a trust boundary into a job that
may write: a shard state (`mode: merge`), a saved side (base reuse from `cache-dir/sides/`), a
publish artifact's `pull-request.json` (`mode: publish`), and the `run --shard` document
(`cce-relevance merge`, and inside every saved side).

Each document starts as one the tool wrote for a real pull request; every field (one of each
place in its schema, list positions and map keys folded) gets each hostile value in turn —
workflow commands (`%0A::warning::X`, `\\n::error::`), options (`--output=/x`), `../../etc`, NUL,
U+2028, a very long line, and values of the wrong type. A shard state or `run --shard` document
is then refused with the one input error naming its file (exit 2), or read as the same kind of
data and reported; a saved side is a warning and the base is scored again (a cache entry never
fails a check); `pull-request.json` is refused naming the field. Never another exception; a
commit or a path field never holds one of them once read.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance import api
from cce_relevance.action.modes.publish import read_pull_request
from cce_relevance.action.report.comment_body import render_comment
from cce_relevance.action.report.document import action_document
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.report.query_changes import Links
from cce_relevance.action.report.summary import render
from cce_relevance.action.runner.pr_comment import comment_marker
from cce_relevance.action.saved.base_reuse import WHOLE, saved_base, side_path
from cce_relevance.action.saved.shards import read_shards, save_shard
from cce_relevance.action.saved.side import dumps_side, scoring_config, side_document
from cce_relevance.action.scoring.model import ScoredSides
from cce_relevance.action.scoring.range_anchors import AnchorMove
from cce_relevance.action.scoring.sides import anchor_moves, compared_sets
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.action.workspace.output_dir import OUTPUT_DIR
from cce_relevance.errors import EXIT_USAGE, CceError
from cce_relevance.evaluation.shards import merge_shards
from cce_relevance.untrusted_json import LINE_LIMIT, Field
from tests.action.scenario import PullRequest
from tests.action.test_side_state import BASE_FILES, scored

HOSTILE: list[Any] = [
    "%0A::warning::X",
    "\n::error::X",
    "--output=/x",
    "../../etc",
    "a\x00b",
    "a\u2028b",
    "x" * (LINE_LIMIT + 1),
    None,
    1,
    True,
    {},
    [None, 1, {}],
]
STATE = "cce-relevance-shard-1/shard-1-of-1.json"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_FREE_TEXT = re.compile(r"(\.text|\.id)$")  # a fixture's or golden's text, a query id: any string
_COMMIT = re.compile(r"(^|\.)(base|head|commit)$")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real shard state (one shard of one: a whole run), the pull request's base side as a
    push run saves it, and a `pull-request.json`."""
    pr = PullRequest(tmp_path_factory.mktemp("artifacts"), base_files=BASE_FILES)
    inputs, commits, sides = scored(pr, shard=WHOLE)
    assert commits.base is not None
    config = scoring_config(inputs, Path("."))
    moves = anchor_moves(pr.workspace, commits, sides)
    workspace = tmp_path_factory.mktemp("workspace")
    (workspace / OUTPUT_DIR).mkdir()
    path = save_shard(workspace, WHOLE, commits, config, sides, moves, ("eval/billing.jsonl",))
    state = json.loads(path.read_text(encoding="utf-8"))
    assert state["anchor_moves"] and state["sides"]["base"] is not None
    side = json.loads(dumps_side(side_document(commits.base, config, api.Shard(1, 1), sides.base)))
    meta = {
        "schema": "cce.relevance.pull-request/v1",
        "number": 7,
        "head": commits.head,
        "comment_key": "nightly",
        "changed": True,
        "on_change": False,
    }
    return {
        "state": state,
        "side": side,
        "meta": meta,
        "config": config,
        "commits": commits,
        "sides": sides,
        "metric": inputs.regression_metric,
    }


def places(document: Any) -> list[tuple[Any, ...]]:
    """One path to each place of `document`'s shape: list positions and the keys of maps whose
    keys are data (backends, query ids, fixture files, metrics) folded to their first."""
    seen: dict[str, tuple[Any, ...]] = {}

    def walk(value: Any, path: tuple[Any, ...], shape: str) -> None:
        seen.setdefault(shape, path)
        if isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, (*path, i), f"{shape}[*]")
        elif isinstance(value, dict):
            data_keys = path[-1:] in (("top_hits",), ("anchor_moves",), ("ranking",)) or (
                len(path) >= 2 and path[-2] == "top_hits"
            )
            for key, item in value.items():
                walk(item, (*path, key), f"{shape}.{'*' if data_keys else key}")

    walk(document, (), "")
    return [p for p in seen.values() if p]


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    parent = changed
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return changed


def shown(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _report(
    sides: ScoredSides,
    metric: str,
    moves: dict[str, tuple[AnchorMove, ...]],
    commits: CommitPair,
    edited: tuple[str, ...],
) -> None:
    """What the Action makes of two sides: the verdict, the summary, the comment (with commit
    links) and compare.json."""
    outcome = Outcome(compared_sets(sides, metric, moves), metric, 0.05)
    verdict = outcome.verdict()
    marker = comment_marker(None)
    render(outcome, verdict, commits, marker, None)
    links = Links("https://github.com", "octo/demo", commits.base, commits.head)
    render_comment(outcome, verdict, commits, marker, links=links, run_link=None, edited=edited)
    json.dumps(action_document(outcome, verdict, commits, {}))


def _merged(directory: Path, state: Any) -> CceError | None:
    """The input error merging `state` as the one shard of a run gives, or None when it is read
    and reported (the verdict, the summary, the comment and compare.json, as `mode: merge` makes
    them) without one."""
    artifact = directory / STATE
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_text(json.dumps(state), encoding="utf-8")
    try:
        merged = read_shards(directory)
    except CceError as exc:
        return exc
    _report(merged.sides, merged.regression_metric, merged.moves, merged.commits, merged.edited)
    return None


def _check_state(directory: Path, state: Any, path: tuple[Any, ...], value: Any) -> None:
    refused = _merged(directory, replaced(state, path, value))
    where = shown(path)
    if refused is not None:
        assert refused.exit_code == EXIT_USAGE and STATE in refused.message, refused.message
        assert not _CONTROL.search(refused.message), refused.message
        return
    # Accepted: then the value was one the field may hold.
    assert not (_COMMIT.search(where) and isinstance(value, str)), where
    if isinstance(value, str) and not _FREE_TEXT.search(where):
        assert not _CONTROL.search(value), (where, value)
        assert len(value) <= LINE_LIMIT or where.endswith(".fixture_line"), where  # a whole fixture line


def test_a_hostile_value_in_any_field_of_a_shard_state_is_refused_naming_the_file(
    artifacts: dict[str, Any], tmp_path: Path
) -> None:
    state = artifacts["state"]
    assert _merged(tmp_path / "intact", state) is None
    found = places(state)
    assert len(found) > 100  # both sides, every set, hit, anchor, move and value
    for number, path in enumerate(found):
        for value in HOSTILE:
            _check_state(tmp_path / f"p{number}", state, path, value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_string_in_any_field_of_a_shard_state_is_read_or_refused(
    artifacts: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    state = artifacts["state"]
    path = data.draw(st.sampled_from(places(state)))
    value = data.draw(st.text(max_size=12) | st.sampled_from([h for h in HOSTILE if isinstance(h, str)]))
    _check_state(tmp_path_factory.mktemp("any"), state, path, value)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("head", "%0A::warning::X", 'field "head": expected a commit (40 or 64 lowercase hex digits)'),
        ("head", "\n::warning::X", 'field "head": expected a commit (40 or 64 lowercase hex digits)'),
        ("base", "%0A::warning::X", 'field "base": expected a commit (40 or 64 lowercase hex digits)'),
        ("head", "--output=PATH", 'field "head": expected a commit (40 or 64 lowercase hex digits)'),
        ("base", "--output=PATH", 'field "base": expected a commit (40 or 64 lowercase hex digits)'),
        ("edited", [None, 1, {}], 'field "edited[0]": expected a path, got null'),
        ("edited", ["a.py", 1], 'field "edited[1]": expected a path, got 1'),
        ("edited", ["a.py", {}], 'field "edited[1]": expected a path, got an object'),
        ("edited", ["../../etc/passwd"], 'field "edited[0]": expected a relative path inside the workspace'),
    ],
)
def test_the_findings_of_31_are_refused_by_the_reader(
    artifacts: dict[str, Any], tmp_path: Path, field: str, value: Any, message: str
) -> None:
    """#31: a head or base that is a workflow command or a git option, and an `edited` list of
    junk, are input errors naming the file and the field (they printed a workflow command, wrote
    a file outside the workspace through git, and ended in an internal error)."""
    refused = _merged(tmp_path, {**artifacts["state"], field: value})
    assert refused is not None and refused.exit_code == EXIT_USAGE
    assert refused.message.startswith(f"{STATE}: {message}"), refused.message


def test_a_state_for_another_head_than_the_runs_is_refused(artifacts: dict[str, Any], tmp_path: Path) -> None:
    head = artifacts["commits"].head
    _merged(tmp_path, artifacts["state"])
    assert read_shards(tmp_path, head=head).commits.head == head
    other = "f" * 40
    with pytest.raises(CceError) as raised:
        read_shards(tmp_path, head=other)
    assert raised.value.message == (
        f'{STATE}: field "head": the shards are for commit {head}, but this run is for {other}'
    )


@pytest.mark.parametrize("which", ["base", "head"])
def test_a_side_of_another_commit_than_its_state_is_refused(
    artifacts: dict[str, Any], tmp_path: Path, which: str
) -> None:
    state = copy.deepcopy(artifacts["state"])
    other = "e" * 40
    state["sides"][which]["commit"] = other
    refused = _merged(tmp_path, state)
    assert refused is not None
    assert refused.message.startswith(f'{STATE}: field "sides.{which}.commit": the side is of commit {other}')


def test_a_side_without_its_base_commit_is_refused(artifacts: dict[str, Any], tmp_path: Path) -> None:
    refused = _merged(tmp_path, {**artifacts["state"], "base": None})
    assert refused is not None
    assert refused.message.startswith(f'{STATE}: field "sides.base": expected null')


def test_a_hostile_value_in_any_field_of_a_run_shard_document_is_refused_naming_the_file(
    artifacts: dict[str, Any],
) -> None:
    """The `run --shard` document (`cce-relevance merge`; each set of a saved side holds one)."""
    document = artifacts["state"]["sides"]["head"]["sets"][0]["run"]
    merge_shards([("s.json", document)])
    for path in places(document):
        for value in HOSTILE:
            try:
                merge_shards([("s.json", replaced(document, path, value))])
            except CceError as exc:
                assert exc.exit_code == EXIT_USAGE and "s.json" in exc.message, exc.message
                assert not _CONTROL.search(exc.message), exc.message
                continue
            where = shown(path)
            if isinstance(value, str) and not _FREE_TEXT.search(where):
                assert not _CONTROL.search(value) and len(value) <= LINE_LIMIT, where


def _reused(cache: Path, side: Any, artifacts: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> bool:
    """Whether `saved_base` reuses `side`; when it does not, it says so in one warning."""
    commit = artifacts["commits"].base
    path = side_path(cache, commit, artifacts["config"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(side), encoding="utf-8")
    loaded = saved_base(cache, commit, artifacts["config"])
    out = capsys.readouterr().out
    if loaded is None:
        [warning] = [line for line in out.splitlines() if line.startswith("::")]
        assert warning.startswith("::warning::Ignoring the saved base side: ") and "sides/" in warning
        assert warning.endswith("scoring the base again."), warning
        return False
    assert "reusing the side an earlier run saved" in out
    live = artifacts["sides"]
    _report(ScoredSides(loaded, live.head, live.goldens), artifacts["metric"], {}, artifacts["commits"], ())
    return True


def test_a_hostile_value_in_any_field_of_a_saved_side_is_a_warning_and_a_re_score(
    artifacts: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    side = artifacts["side"]
    assert _reused(tmp_path / "intact", side, artifacts, capsys)
    for number, path in enumerate(places(side)):
        for value in HOSTILE:
            cache = tmp_path / f"p{number}"
            if _reused(cache, replaced(side, path, value), artifacts, capsys):
                where = shown(path)
                assert not (_COMMIT.search(where) and isinstance(value, str)), where
                if isinstance(value, str) and not _FREE_TEXT.search(where):
                    assert not _CONTROL.search(value), (where, value)


@pytest.mark.parametrize(
    "change",
    [
        {"shard": {"index": 0, "count": 1}},
        {"shard": {"index": 2, "count": 1}},
        {"shard": {"index": 1, "count": 10**9}},
        {"commit": "0" * 40},
        {"fingerprint": "0" * 64},
    ],
    ids=["index-0", "index-past-count", "huge-count", "other-commit", "other-fingerprint"],
)
def test_a_saved_side_with_values_out_of_range_is_a_warning_not_an_error(
    artifacts: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any]
) -> None:
    """#29: a damaged saved side stopped the run with a configuration error; any invalid side is
    treated as unreadable."""
    assert not _reused(tmp_path, {**artifacts["side"], **change}, artifacts, capsys)


def test_a_hostile_value_in_any_field_of_pull_request_json_is_refused_naming_it(
    artifacts: dict[str, Any],
) -> None:
    meta = artifacts["meta"]
    assert read_pull_request(Field(meta, "pull-request.json"))["number"] == 7
    for key, value in ((key, value) for key in meta for value in HOSTILE):
        try:
            read = read_pull_request(Field({**meta, key: value}, "pull-request.json"))
        except CceError as exc:
            assert exc.message.startswith(f'pull-request.json: field "{key}": '), exc.message
            continue
        assert (key, value) in (("comment_key", None), ("number", 1), ("changed", True), ("on_change", True))
        assert read[key] == value
    with pytest.raises(CceError, match='^pull-request.json: has unknown fields "x"'):
        read_pull_request(Field({**meta, "x": 1}, "pull-request.json"))
