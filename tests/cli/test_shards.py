"""`run --shard I/N --shard-state FILE` and `merge`: a split run put back together byte for byte.

The starter set is scored whole and in three shards, by the built-in backends and by an external
retriever (docs/examples/retriever.py, a real process); the merged report must be the unsharded
one, text and JSON, and the committed golden. `merge` refuses shards that are not one run split
once, naming the file and what is wrong.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance import api
from cce_relevance.errors import CceError
from cce_relevance.evaluation.shards import Shard, merge_shards, shard_document, shard_part
from tests.cli.helpers import cli

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = "eval/relevance/code.jsonl"
GOLDEN = ROOT / "test" / "fixture" / "relevance" / "code.golden.json"
GREP = (
    f"[backends.grep]\ncommand = [{json.dumps(sys.executable)}, "
    '"docs/examples/retriever.py", "test/fixture/samples"]\n'
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the starter set, its corpus and the example retriever, with a config naming it."""
    for part in ("eval/relevance", "test/fixture/samples", "docs/examples"):
        shutil.copytree(ROOT / part, tmp_path / part)
    (tmp_path / "cce-relevance.toml").write_text(GREP, encoding="utf-8")
    (tmp_path / ".git").mkdir()  # the config lookup stops here
    return tmp_path


def sharded(project: Path, count: int, *options: str) -> list[Path]:
    states = []
    for index in range(1, count + 1):
        state = project / "shards" / f"{index}.json"
        state.parent.mkdir(exist_ok=True)
        done = cli(
            "run",
            FIXTURE,
            *options,
            "--shard",
            f"{index}/{count}",
            "--shard-state",
            str(state),
            "--no-cache",
            cwd=project,
        )
        assert done.code == 0, done.err
        states.append(state)
    return states


@pytest.mark.parametrize("backends", ["bm25,vector,hybrid", "bm25,grep"])
def test_three_shards_merge_into_the_unsharded_report_byte_for_byte(project: Path, backends: str) -> None:
    options = ("--backend", backends)
    whole_json = cli("run", FIXTURE, *options, "--json", "--no-cache", cwd=project)
    whole_text = cli("run", FIXTURE, *options, "--no-cache", cwd=project)
    states = sharded(project, 3, *options)
    sizes = [sum(len(b["cases"]) for b in json.loads(s.read_text())["backends"]) for s in states]
    assert all(sizes) and sum(sizes) == 10 * len(backends.split(","))  # a real split: every shard has queries

    merged_json = cli("merge", *map(str, states), "--json", cwd=project)
    merged_text = cli("merge", str(project / "shards"), cwd=project)  # a directory of states works too

    assert (merged_json.code, merged_text.code) == (0, 0), merged_json.err + merged_text.err
    assert merged_json.out == whole_json.out
    assert merged_text.out == whole_text.out
    if backends == "bm25,vector,hybrid":
        assert merged_json.out == GOLDEN.read_text(encoding="utf-8")
        assert cli("merge", *map(str, states), "--golden", str(GOLDEN), cwd=project).code == 0


@pytest.mark.parametrize(
    ("metrics", "names", "key"),
    [
        ("ndcg@5,ap", ["ndcg@5", "ap"], '"ndcg_at_5"'),
        ("judged,recall@budget=300,ttfr", ["judged", "recall@budget=300", "ttfr"], '"first_relevant_tokens"'),
    ],
)
def test_rank_metrics_are_saved_per_query_and_merge_into_the_unsharded_report(
    project: Path, metrics: str, names: list[str], key: str
) -> None:
    options = ("--metrics", metrics)
    whole = cli("run", FIXTURE, *options, "--json", "--no-cache", cwd=project)
    states = sharded(project, 3, *options)
    assert json.loads(states[0].read_text())["metrics"] == names

    merged = cli("merge", *map(str, states), "--json", cwd=project)

    assert merged.code == 0, merged.err
    assert key in whole.out and merged.out == whole.out


@pytest.mark.parametrize("metrics", [None, ["ndcg@5", "ap"]], ids=["metrics", "rank metrics"])
def test_a_whole_run_cut_to_a_shard_is_the_shard_scored_alone(
    project: Path, metrics: list[str] | None
) -> None:
    """`shard_part` of the whole run, live or rebuilt from a saved whole state (what the
    Action reuses as a shard's base), saves the state the shard scored alone saves, byte for byte."""
    with contextlib.chdir(project):
        whole = api.run(FIXTURE, api.RunOptions(metrics=metrics))
        rebuilt = merge_shards([("whole", json.loads(api.shard_state(whole, FIXTURE, Shard(1, 1))))])
        for index in range(1, 4):
            shard = Shard(index, 3)
            alone = api.shard_state(
                api.run(FIXTURE, api.RunOptions(metrics=metrics, shard=shard)), FIXTURE, shard
            )
            assert json.loads(alone)["backends"][0]["cases"]  # the shard holds queries
            for run in (whole, rebuilt):
                assert api.shard_state(shard_part(run, shard), FIXTURE, shard) == alone


@pytest.fixture(scope="module")
def whole_run() -> api.RunResult:
    """The starter set scored whole, with rank metrics (so judgments are cut too)."""
    with contextlib.chdir(ROOT):
        return api.run(FIXTURE, api.RunOptions(metrics=["ndcg@5"]))


@given(st.integers(1, 12))
def test_the_parts_of_a_whole_run_merge_back_into_it(whole_run: api.RunResult, count: int) -> None:
    whole = Shard(1, 1)
    parts = [shard_part(whole_run, Shard(i, count)) for i in range(1, count + 1)]
    assert sum(len(p.fixtures.cases) for p in parts) == len(whole_run.fixtures.cases)
    assert all(len(p.judgments or ()) == len(p.fixtures.cases) for p in parts)
    text = (ROOT / FIXTURE).read_text(encoding="utf-8")
    merged = merge_shards(
        [
            (str(i), json.loads(json.dumps(shard_document(p, text, Shard(i, count)))))
            for i, p in enumerate(parts, 1)
        ]
    )
    assert shard_document(merged, text, whole) == shard_document(whole_run, text, whole)


def test_a_comparison_is_not_cut_to_a_shard() -> None:
    with contextlib.chdir(ROOT), pytest.raises(CceError, match="a sharded run scores backends only"):
        shard_part(api.run(FIXTURE, api.RunOptions(compare=["bm25", "hybrid"])), Shard(1, 2))


def test_merge_fails_the_gate_when_the_merged_report_drifts_from_the_golden(project: Path) -> None:
    states = sharded(project, 2, "--backend", "bm25")
    done = cli("merge", *map(str, states), "--golden", str(GOLDEN), cwd=project)
    assert done.code == 1 and "report drifted from golden" in done.err


def merge_error(*paths: Path) -> str:
    done = cli("merge", *map(str, paths))
    assert done.code == 2 and done.out == ""
    return done.err


def test_a_missing_or_repeated_shard_is_refused(project: Path) -> None:
    one, two, three = sharded(project, 3, "--backend", "bm25")
    assert "shard 2/3 is missing: expected all 3" in merge_error(one, three)
    copy = project / "copy.json"
    shutil.copy(two, copy)
    assert f"{copy}: shard 2/3 is also {two}" in merge_error(one, two, copy, three)


def test_shards_of_different_runs_are_refused(project: Path) -> None:
    sharded(project, 2, "--backend", "bm25")
    bm25 = project / "bm25"
    shutil.move(project / "shards", bm25)
    [_, grep_2] = sharded(project, 2, "--backend", "grep")
    assert "its backends differ" in merge_error(bm25 / "1.json", grep_2)
    assert "split the queries 2 ways ([2, 3])" in merge_error(
        bm25 / "1.json", *sharded(project, 3, "--backend", "bm25")
    )


def test_a_query_scored_twice_by_the_wrong_shard_or_not_at_all_is_refused(project: Path) -> None:
    one, two = sharded(project, 2, "--backend", "bm25")
    first, second = json.loads(one.read_text()), json.loads(two.read_text())
    moved = first["backends"][0]["cases"].pop()
    second["backends"][0]["cases"].append(moved)
    two.write_text(json.dumps(second))
    assert f"{two}: query {moved['id']!r} on bm25 is also in {one}" in merge_error(one, two)
    one.write_text(json.dumps(first))
    assert f"query {moved['id']!r} does not belong to shard 2/2" in merge_error(one, two)
    second["backends"][0]["cases"].pop()
    two.write_text(json.dumps(second))
    assert f"query {moved['id']!r} (line {moved['line']}) was scored by no shard on bm25" in merge_error(
        one, two
    )


def test_a_file_that_is_not_a_shard_state_is_refused(project: Path, tmp_path: Path) -> None:
    [one, two] = sharded(project, 2, "--backend", "bm25")
    assert "not a shard state" in merge_error(one, GOLDEN)
    broken = json.loads(two.read_text())
    del broken["backends"][0]["cases"][0]["mrr"]
    two.write_text(json.dumps(broken))
    assert '2.json: field "backends[0].cases[0]": lacks mrr: expected exactly' in merge_error(one, two)
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    assert "could not read shard state" in merge_error(tmp_path / "bad.json")


def test_a_query_whose_mrr_is_not_one_over_its_first_relevant_rank_is_refused(project: Path) -> None:
    """MRR is 1/rank of the first relevant hit (0 with none): a state that says otherwise was
    merged (and a saved side holding it reused) as if it had been scored."""
    [one, two] = sharded(project, 2, "--backend", "bm25")
    state = json.loads(two.read_text())
    case = state["backends"][0]["cases"][0]
    case["first_relevant_rank"] = (
        10**12 if case["first_relevant_rank"] is None else case["first_relevant_rank"] + 1
    )
    two.write_text(json.dumps(state))
    expected = "expected 1 / first_relevant_rank, or 0 when no hit is relevant"
    assert f'2.json: field "backends[0].cases[0].mrr": {expected}' in merge_error(one, two)


def test_a_first_relevant_rank_past_the_query_k_is_refused(project: Path) -> None:
    """Only the first k hits are scored; a rank past k (with its MRR to match) was merged."""
    [one, two] = sharded(project, 2, "--backend", "bm25")
    state = json.loads(two.read_text())
    case = state["backends"][0]["cases"][0]
    case.update(first_relevant_rank=10**6, mrr=1 / 10**6)
    two.write_text(json.dumps(state))
    assert f"query {case['id']!r} on bm25: its first relevant rank 1000000 is past its k (" in merge_error(
        one, two
    )


@pytest.mark.parametrize("args", [("--shard", "1/2"), ("--shard-state", "x.json")])
def test_shard_and_shard_state_go_together(args: tuple[str, str]) -> None:
    done = cli("run", FIXTURE, *args, cwd=ROOT)
    assert done.code == 2 and "--shard I/N and --shard-state FILE go together" in done.err


def test_a_sharded_run_scores_backends_only(tmp_path: Path) -> None:
    done = cli(
        "run",
        FIXTURE,
        "--compare",
        "bm25,hybrid",
        "--shard",
        "1/2",
        "--shard-state",
        str(tmp_path / "s"),
        cwd=ROOT,
    )
    assert done.code == 2 and "--shard cannot be used with --compare" in done.err


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/3", ""])
def test_a_shard_is_i_of_n(text: str) -> None:
    with pytest.raises(CceError, match="expected I/N with 1 <= I <= N"):
        Shard.parse(text, "--shard")


@given(st.lists(st.text(min_size=1), min_size=1, max_size=30, unique=True), st.integers(1, 9))
def test_every_query_falls_in_exactly_one_shard(ids: list[str], count: int) -> None:
    for case_id in ids:
        assert sum(Shard(i, count).holds(case_id) for i in range(1, count + 1)) == 1
    assert all(Shard(1, 1).holds(case_id) for case_id in ids)


def test_a_huge_split_names_a_few_missing_shards_and_an_impossible_one_is_refused(project: Path) -> None:
    """N comes from the files: a state of shard 1/10^12 must not make `merge` list (or build) every
    other shard, and a shard numbered past N is named, not taken for a missing one."""
    state = project / "huge.json"
    shard = ("--shard", f"1/{10**12}", "--shard-state", str(state))
    done = cli("run", FIXTURE, "--backend", "bm25", *shard, "--no-cache", cwd=project)
    assert done.code == 0, done.err
    named = ", ".join(f"{i}/{10**12}" for i in range(2, 12))
    assert f"merge: shard {named} and {10**12 - 11} more is missing: expected all {10**12}" in merge_error(
        state
    )
    document = json.loads(state.read_text(encoding="utf-8"))
    document["shard"] = {"index": 5, "count": 3}
    state.write_text(json.dumps(document), encoding="utf-8")
    assert f"{state}: shard 5/3 is not one of 1..3" in merge_error(state)
