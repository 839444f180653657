"""A side saved (`cce.relevance.action.side/v1`) and loaded back is the side the run scored: the
same report bytes, anchor checks, top hits with symbols, anchors (symbol anchors with their bound
lines) and corpus, so the sets, the comment and compare.json built from it are the live run's."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance import api
from cce_relevance.action.config.inputs import ActionInputs, read_inputs
from cce_relevance.action.report.document import action_document
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.saved.base_reuse import shard_side
from cce_relevance.action.saved.side import (
    dumps_side,
    fingerprint,
    read_side,
    rebuild,
    scoring_config,
    side_document,
)
from cce_relevance.action.scoring.model import Rankings, ScoredSides, SetAtCommit
from cce_relevance.action.scoring.sides import anchor_moves, compared_sets, score_sides
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.errors import CceError
from tests.action.scenario import BILLING_FIXTURE, BILLING_FIXTURES, MOVING_CHANGE, PullRequest
from tests.action.test_schemas import validator

# A set with a symbol anchor (bound to its definition's lines in each side's corpus) and a
# graded query, scored with a rank regression metric: every saved field is exercised.
SYMBOLS = (
    '{"schema":"cce.relevance/v1","corpus":"../corpus"}\n'
    '{"id":"invoice-symbol","query":"compute the invoice total",'
    '"expected":["billing.py::compute_invoice_total"],'
    '"grades":{"billing.py::compute_invoice_total":2},"k":3}\n'
    '{"id":"lru","query":"evict the oldest cache entry","expected":["cache.py#class_definition"],"k":3}\n'
)
BASE_FILES = {BILLING_FIXTURE: BILLING_FIXTURES, "eval/symbols.jsonl": SYMBOLS}


def scored(pr: PullRequest, shard: api.Shard | None = None) -> tuple[ActionInputs, CommitPair, ScoredSides]:
    pr.push(MOVING_CHANGE, "h1: a reports module, and a function above billing.py's")
    env = {
        "GITHUB_WORKSPACE": str(pr.workspace),
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "INPUT_FIXTURES": "eval/*.jsonl",
        "INPUT_GOLDEN": "eval/search.jsonl=eval/search.golden.json",
        "INPUT_REGRESSION-METRIC": "ndcg_at_k",
        "INPUT_BASE-REF": pr.merge_base(),
        "INPUT_HEAD-REF": pr.head_sha,
    }
    inputs = read_inputs(env)
    commits = CommitPair(pr.merge_base(), pr.head_sha)
    return inputs, commits, score_sides(pr.workspace, commits, inputs, shard=shard)


def round_trip(document: dict[str, object], name: str = "side.json") -> dict[str, SetAtCommit]:
    return rebuild([(name, read_side(json.loads(dumps_side(document)), name))])


def saved_hits(rankings: Rankings) -> list[tuple[str, list[tuple[str, list[dict[str, object]]]]]]:
    """What a side's top hits say (their symbols named), in their order."""
    return [
        (backend, [(case, [hit.saved() for hit in hits]) for case, hits in by_case.items()])
        for backend, by_case in rankings.items()
    ]


def same(live: SetAtCommit, loaded: SetAtCommit) -> None:
    assert loaded.report == live.report  # byte for byte, from the per-query values
    assert loaded.anchors == live.anchors
    assert saved_hits(loaded.rankings) == saved_hits(live.rankings)  # symbols named, in order
    assert loaded.corpus == live.corpus
    assert loaded.expected == live.expected and list(loaded.expected) == list(live.expected)
    assert loaded.fixtures.text == live.fixtures.text


@pytest.mark.parametrize("pr", [BASE_FILES], indirect=True)
def test_a_saved_side_loads_back_as_the_side_the_run_scored(pr: PullRequest) -> None:
    inputs, commits, sides = scored(pr)
    config = scoring_config(inputs, Path("."))
    whole = api.Shard(1, 1)
    assert commits.base is not None
    head_document = side_document(commits.head, config, whole, sides.head, sides.goldens)
    validator("cce.relevance.action.side.v1").validate(json.loads(json.dumps(head_document)))
    symbols = sides.head["eval/symbols.jsonl"].expected["invoice-symbol"][0]
    assert symbols.symbol == "compute_invoice_total" and symbols.bound  # a bound symbol anchor is saved

    head = round_trip(head_document)
    base = round_trip(side_document(commits.base, config, whole, sides.base))
    for fixture, live in sides.head.items():
        same(live, head[fixture])
    for fixture, live in sides.base.items():
        same(live, base[fixture])

    goldens = read_side(json.loads(dumps_side(head_document)), "side.json").goldens
    loaded = ScoredSides(base, head, goldens)
    moves = anchor_moves(pr.workspace, commits, loaded)  # from the loaded sides' fixture sets
    assert moves == anchor_moves(pr.workspace, commits, sides) and moves[BILLING_FIXTURE]

    def compare(s: ScoredSides) -> str:
        sets = compared_sets(s, inputs.regression_metric, moves)
        outcome = Outcome(sets, inputs.regression_metric, inputs.alpha, inputs.fail_on)
        return json.dumps(action_document(outcome, outcome.verdict(), commits, {}))

    assert compare(loaded) == compare(sides)


@pytest.mark.parametrize("pr", [BASE_FILES], indirect=True)
def test_a_saved_whole_side_cut_to_a_shard_is_the_side_the_shard_scores(pr: PullRequest) -> None:
    """What a shard reuses as its base (base_reuse.py `shard_side`): the whole base side saved and
    loaded back, cut to the shard's queries, saves the side that shard scoring its base saves,
    byte for byte, and follows the same range anchors."""
    inputs, commits, sides = scored(pr)
    config = scoring_config(inputs, Path("."))
    assert commits.base is not None
    loaded = round_trip(side_document(commits.base, config, api.Shard(1, 1), sides.base))
    for index in range(1, 4):
        shard = api.Shard(index, 3)
        live = score_sides(pr.workspace, commits, inputs, shard=shard)
        part = shard_side(loaded, shard)
        assert dumps_side(side_document(commits.base, config, shard, part)) == dumps_side(
            side_document(commits.base, config, shard, live.base)
        )
        for fixture, result in live.base.items():
            assert part[fixture].report == result.report  # the shard's own means
            ids = [case.id for case in result.fixtures.fixtures.cases]
            assert [case.id for case in part[fixture].fixtures.fixtures.cases] == ids
            assert list(part[fixture].expected) == ids and part[fixture].expected == result.expected
        reused = ScoredSides(part, live.head, live.goldens)
        assert anchor_moves(pr.workspace, commits, reused) == anchor_moves(pr.workspace, commits, live)


def test_a_shard_matches_the_fingerprint_of_the_unsharded_run(tmp_path: Path) -> None:
    """The push run that saves a side is unsharded; its fingerprint must be a shard's."""
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "search.jsonl").write_text(SYMBOLS, encoding="utf-8")
    env = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_FIXTURES": "eval/*.jsonl"}
    whole, shard = read_inputs(env), read_inputs({**env, "INPUT_SHARD": "2/3"})
    assert shard.shard == api.Shard(2, 3)
    assert fingerprint(scoring_config(shard, Path("."))) == fingerprint(scoring_config(whole, Path(".")))


@pytest.mark.parametrize("pr", [BASE_FILES], indirect=True)
def test_a_side_that_contradicts_itself_or_is_not_one_is_refused(pr: PullRequest) -> None:
    inputs, commits, sides = scored(pr)
    document = json.loads(
        dumps_side(
            side_document(commits.head, scoring_config(inputs, Path(".")), api.Shard(1, 1), sides.head)
        )
    )

    with pytest.raises(CceError, match=r'x\.json: not a saved side \(expected "schema"'):
        read_side({"schema": "cce.relevance.action/v1"}, "x.json")
    broken = {**document, "sets": [{"fixtures": "eval/search.jsonl"}]}
    with pytest.raises(CceError, match=r'x\.json: field "sets\[0\]": lacks run, validate, top_hits'):
        read_side(broken, "x.json")
    other = {**document, "config": {**document["config"], "backends": ["bm25"]}}
    with pytest.raises(
        CceError, match='x.json: field "fingerprint": does not match the side\'s version and configuration'
    ):
        read_side(other, "x.json")


_SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_JSONISH = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real whole head side (the two sets of the scenario) as JSON data."""
    pr = PullRequest(tmp_path_factory.mktemp("saved"), base_files={BILLING_FIXTURE: BILLING_FIXTURES})
    inputs, commits, sides = scored(pr)
    config = scoring_config(inputs, Path("."))
    document = side_document(commits.head, config, api.Shard(1, 1), sides.head, sides.goldens)
    return dict(json.loads(dumps_side(document)))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (keys and list positions), the root's children first."""
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    found = []
    for key, child in children:
        found.append((*prefix, key))
        found += _paths(child, (*prefix, key))
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=0), st.booleans(), _JSONISH)
def test_a_damaged_saved_side_loads_or_is_refused_with_cce_error(
    saved: dict[str, Any], place: int, delete: bool, value: Any
) -> None:
    """A cache is outside input: any field replaced by any JSON (or deleted) gives a side or a
    CceError, never another exception."""
    document = copy.deepcopy(saved)
    paths = _paths(document)
    path = paths[place % len(paths)]
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    try:
        rebuild([("side.json", read_side(document, "side.json"))])
    except CceError:
        pass
