"""`read_inputs`: the Action's INPUT_* / GITHUB_* environment into a validated ActionInputs.

Each test builds a real workspace directory with fixture files and passes an environment
mapping shaped like the one the runner gives a Docker action.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cce_relevance.action.config.inputs import MAX_SHARDS, ActionInputs, expand_fixtures, read_inputs
from cce_relevance.api import Shard
from cce_relevance.errors import EXIT_USAGE, CceError

TOKEN = "ghs_notARealTokenButLongEnough0123456789"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    for name in (
        "eval/relevance/code.jsonl",
        "eval/relevance/docs.jsonl",
        "eval/extra/deep/more.jsonl",
        "eval/relevance/README.md",
        "sub/eval/local.jsonl",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("{}\n")
    (root / "eval/relevance/folder.jsonl").mkdir()  # a directory is never a fixture
    return root


def env_for(workspace: Path, **inputs: str) -> dict[str, str]:
    env = {"GITHUB_WORKSPACE": str(workspace), "INPUT_FIXTURES": "eval/relevance/code.jsonl"}
    env.update({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
    return env


def read(workspace: Path, **inputs: str) -> ActionInputs:
    return read_inputs(env_for(workspace, **inputs))


def test_defaults(workspace: Path) -> None:
    got = read_inputs({"GITHUB_WORKSPACE": str(workspace), "INPUT_FIXTURES": "eval/relevance/code.jsonl"})
    assert got.fixtures == ("eval/relevance/code.jsonl",)
    assert got.golden == ()
    assert got.backends == ("bm25", "vector", "hybrid")
    assert got.github_token == ""
    assert got.comment is True
    assert got.fail_on == "drift"
    assert got.regression_metric == "mrr"
    assert got.alpha == 0.05
    assert got.base_ref is None
    assert got.head_ref == "HEAD"
    assert got.working_directory == workspace.resolve()
    assert got.comment_key is None
    assert got.github.api_url == "https://api.github.com"
    assert got.github.server_url == "https://github.com"
    assert got.github.event == {}
    assert got.github.event_path is None


def test_empty_inputs_mean_defaults(workspace: Path) -> None:
    """GitHub passes every declared input, empty when it has no default."""
    empty = {
        name: "" for name in ("golden", "backends", "comment", "fail-on", "alpha", "base-ref", "head-ref")
    }
    assert read(workspace, **empty) == read(workspace)


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"INPUT_GITHUB-TOKEN": TOKEN}, TOKEN),
        ({"INPUT_GITHUB_TOKEN": TOKEN}, TOKEN),
        ({"INPUT_GITHUB-TOKEN": TOKEN, "INPUT_GITHUB_TOKEN": "other"}, TOKEN),
        ({"INPUT_GITHUB-TOKEN": "", "INPUT_GITHUB_TOKEN": TOKEN}, TOKEN),
    ],
)
def test_token_under_either_spelling(workspace: Path, variables: dict[str, str], expected: str) -> None:
    assert read_inputs({**env_for(workspace), **variables}).github_token == expected


def test_token_never_in_repr(workspace: Path) -> None:
    got = read_inputs({**env_for(workspace), "INPUT_GITHUB-TOKEN": TOKEN})
    assert TOKEN not in repr(got)
    assert TOKEN not in str(got)


def test_token_never_in_an_error_message(workspace: Path) -> None:
    with pytest.raises(CceError) as info:
        read_inputs({**env_for(workspace, comment="maybe"), "INPUT_GITHUB-TOKEN": TOKEN})
    assert TOKEN not in str(info.value)


def test_other_inputs_accept_the_underscore_spelling(workspace: Path) -> None:
    env = {
        **env_for(workspace),
        "INPUT_FAIL_ON": "none",
        "INPUT_REGRESSION_METRIC": "f1",
        "INPUT_COMMENT_KEY": "docs",
    }
    got = read_inputs(env)
    assert (got.fail_on, got.regression_metric, got.comment_key) == ("none", "f1", "docs")


@pytest.mark.parametrize(("value", "name"), [("ndcg_at_k", "ndcg"), ("hit_at_5", "hit@5"), ("mrr", None)])
def test_a_rank_regression_metric_is_scored_with_metrics(
    workspace: Path, value: str, name: str | None
) -> None:
    from cce_relevance.evaluation.rank_metrics import rank_metric_name

    got = read(workspace, **{"regression-metric": value})
    assert got.regression_metric == value and rank_metric_name(value) == name


def test_fixtures_newline_and_comma_separated_sorted_and_deduplicated(workspace: Path) -> None:
    got = read(
        workspace,
        fixtures="eval/relevance/docs.jsonl, eval/relevance/code.jsonl\n\n"
        "  eval/relevance/*.jsonl\n./eval/relevance/code.jsonl",
    )
    assert got.fixtures == ("eval/relevance/code.jsonl", "eval/relevance/docs.jsonl")
    assert got.fixture_patterns == (
        "eval/relevance/docs.jsonl",
        "eval/relevance/code.jsonl",
        "eval/relevance/*.jsonl",
        "./eval/relevance/code.jsonl",
    )


def test_recursive_globs(workspace: Path) -> None:
    got = read(workspace, fixtures="eval/**/*.jsonl")
    assert got.fixtures == (
        "eval/extra/deep/more.jsonl",
        "eval/relevance/code.jsonl",
        "eval/relevance/docs.jsonl",
    )


def test_pattern_matching_nothing_is_an_error(workspace: Path) -> None:
    with pytest.raises(CceError, match=r"input 'fixtures': 'eval/\*\.ndjson' matches no file") as info:
        read(workspace, fixtures="eval/relevance/code.jsonl,eval/*.ndjson")
    assert info.value.exit_code == EXIT_USAGE


def test_missing_literal_fixture_is_an_error(workspace: Path) -> None:
    with pytest.raises(CceError, match=r"'eval/relevance/nope\.jsonl' matches no file"):
        read(workspace, fixtures="eval/relevance/nope.jsonl")


def test_no_fixtures_is_an_error(workspace: Path) -> None:
    env = env_for(workspace)
    del env["INPUT_FIXTURES"]
    with pytest.raises(CceError, match="input 'fixtures' is empty"):
        read_inputs(env)
    with pytest.raises(CceError, match="input 'fixtures' is empty"):
        read(workspace, fixtures=" , \n")


def test_fixture_escaping_the_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.jsonl").write_text("{}\n")
    (workspace / "eval" / "linked.jsonl").symlink_to(tmp_path / "outside.jsonl")
    with pytest.raises(CceError, match=r"'eval/linked\.jsonl'.*resolves outside the workspace"):
        read(workspace, fixtures="eval/*.jsonl")
    with pytest.raises(CceError, match="resolves outside the workspace"):
        read(workspace, fixtures="../outside.jsonl")


def test_working_directory_makes_paths_relative_to_it(workspace: Path) -> None:
    got = read(workspace, fixtures="eval/*.jsonl", **{"working-directory": "sub"})
    assert got.working_directory == (workspace / "sub").resolve()
    assert got.fixtures == ("eval/local.jsonl",)
    # a fixture may sit above the working directory as long as it stays in the workspace
    assert read(
        workspace, fixtures="../eval/relevance/code.jsonl", **{"working-directory": "sub"}
    ).fixtures == ("../eval/relevance/code.jsonl",)


@pytest.mark.parametrize(
    ("value", "message"), [("..", "outside the workspace"), ("nope", "is not a directory")]
)
def test_bad_working_directory(workspace: Path, value: str, message: str) -> None:
    with pytest.raises(CceError, match=f"input 'working-directory': '{value}'.*{message}"):
        read(workspace, **{"working-directory": value})


def test_expand_fixtures_in_another_tree(workspace: Path, tmp_path: Path) -> None:
    """The same patterns can be expanded again inside a base worktree, where new sets are absent."""
    other = tmp_path / "other-tree"
    (other / "eval" / "relevance").mkdir(parents=True)
    (other / "eval" / "relevance" / "docs.jsonl").write_text("{}\n")
    assert expand_fixtures(("eval/relevance/*.jsonl",), other, other) == ("eval/relevance/docs.jsonl",)
    patterns = ("eval/relevance/docs.jsonl", "eval/relevance/added-by-the-pr.jsonl")
    with pytest.raises(CceError, match="added-by-the-pr"):
        expand_fixtures(patterns, other, other)
    assert expand_fixtures(patterns, other, other, required=False) == ("eval/relevance/docs.jsonl",)


def test_golden_lines(workspace: Path) -> None:
    got = read(
        workspace,
        fixtures="eval/relevance/*.jsonl",
        golden=(
            "\n# the code set is locked\n"
            "  eval/relevance/docs.jsonl = golden/docs.json\n"
            "./eval/relevance/code.jsonl=test/fixture/relevance/code.golden.json\n"
        ),
    )
    assert got.golden == (
        ("eval/relevance/code.jsonl", "test/fixture/relevance/code.golden.json"),
        ("eval/relevance/docs.jsonl", "golden/docs.json"),
    )
    assert got.golden_for("eval/relevance/docs.jsonl") == "golden/docs.json"
    assert got.golden_for("eval/extra/deep/more.jsonl") is None


@pytest.mark.parametrize(
    ("golden", "message"),
    [
        ("eval/relevance/code.jsonl", r"line 'eval/relevance/code\.jsonl' is not of the form FIXTURE=GOLDEN"),
        ("=g.json", "is not of the form FIXTURE=GOLDEN"),
        ("eval/relevance/code.jsonl=", "is not of the form FIXTURE=GOLDEN"),
        (
            "eval/relevance/docs.jsonl=g.json",
            r"fixture 'eval/relevance/docs\.jsonl' is not one of the configured",
        ),
        ("eval/relevance/code.jsonl=a.json\neval/relevance/code.jsonl=b.json", "given more than once"),
        ("eval/relevance/code.jsonl=../../g.json", r"'\.\./\.\./g\.json' resolves outside the workspace"),
    ],
)
def test_bad_golden(workspace: Path, golden: str, message: str) -> None:
    with pytest.raises(CceError, match=f"input 'golden': .*{message}"):
        read(workspace, golden=golden)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False), ("FALSE", False)],
)
def test_comment_accepts_yaml_1_2_booleans(workspace: Path, value: str, expected: bool) -> None:
    assert read(workspace, comment=value).comment is expected


def test_backends(workspace: Path) -> None:
    assert read(workspace, backends=" bm25 , hybrid,bm25").backends == ("bm25", "hybrid")


def test_alpha(workspace: Path) -> None:
    assert read(workspace, alpha="0.01").alpha == 0.01


def test_refs_and_comment_key(workspace: Path) -> None:
    got = read(workspace, **{"base-ref": "origin/main", "head-ref": "v1.2", "comment-key": "docs-set_2"})
    assert (got.base_ref, got.head_ref, got.comment_key) == ("origin/main", "v1.2", "docs-set_2")


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("comment", "yes", "expected true or false"),
        ("comment", "on", "expected true or false"),
        ("comment", "1", "expected true or false"),
        ("fail-on", "always", "expected one of drift, regression, inconclusive, none"),
        (
            "regression-metric",
            "ndcg",
            "expected one of precision_at_k, recall, mrr, f1, or a rank metric key",
        ),
        (
            "regression-metric",
            "ndcg_at_0",
            "expected one of precision_at_k, recall, mrr, f1, or a rank metric key",
        ),
        ("alpha", "0", r"expected a number in \(0, 1\)"),
        ("alpha", "1", r"expected a number in \(0, 1\)"),
        ("alpha", "-0.1", r"expected a number in \(0, 1\)"),
        ("alpha", "nan", r"expected a number in \(0, 1\)"),
        ("alpha", "five percent", r"expected a number in \(0, 1\)"),
        ("backends", "bm25 vector", "expected a comma-separated list"),
        ("base-ref", "--upload-pack=evil", "expected a branch, tag or commit SHA"),
        ("head-ref", "main branch", "expected a branch, tag or commit SHA"),
        ("comment-key", "a -->", "expected 1-64 letters"),
    ],
)
def test_bad_values_name_the_input_the_value_and_the_expectation(
    workspace: Path, name: str, value: str, expected: str
) -> None:
    with pytest.raises(CceError, match=f"input '{name}': .*{expected}") as info:
        read(workspace, **{name: value})
    assert repr(value) in str(info.value)
    assert info.value.exit_code == EXIT_USAGE


def test_github_context(workspace: Path, tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 3}}))
    env = {
        **env_for(workspace),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "octo/repo",
        "GITHUB_API_URL": "https://ghe.example.invalid/api/v3/",
        "GITHUB_SERVER_URL": "https://ghe.example.invalid",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "GITHUB_RUN_ID": "42",
    }
    github = read_inputs(env).github
    assert github.event_name == "pull_request"
    assert github.event["pull_request"]["number"] == 3
    assert github.repository == "octo/repo"
    assert github.api_url == "https://ghe.example.invalid/api/v3"
    assert github.server_url == "https://ghe.example.invalid"
    assert github.sha == "a" * 40
    assert github.output_path == tmp_path / "output"
    assert github.step_summary_path == tmp_path / "summary"
    assert github.run_id == "42"
    assert github.workspace == workspace.resolve()


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "invalid JSON"), ("[1, 2]", ": expected an object, got a JSON array")],
)
def test_bad_event_payload(workspace: Path, tmp_path: Path, content: str, message: str) -> None:
    event = tmp_path / "event.json"
    event.write_text(content)
    with pytest.raises(CceError, match=f"GITHUB_EVENT_PATH=.*{message}"):
        read_inputs({**env_for(workspace), "GITHUB_EVENT_PATH": str(event)})


def test_missing_event_payload(workspace: Path, tmp_path: Path) -> None:
    with pytest.raises(CceError, match="could not read the event payload GITHUB_EVENT_PATH="):
        read_inputs({**env_for(workspace), "GITHUB_EVENT_PATH": str(tmp_path / "gone.json")})


def test_workspace_defaults_to_the_current_directory(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`docker run -w /repo` without any GITHUB_* variable."""
    monkeypatch.chdir(workspace)
    got = read_inputs({"INPUT_FIXTURES": "eval/relevance/code.jsonl"})
    assert got.github.workspace == workspace.resolve()
    assert got.fixtures == ("eval/relevance/code.jsonl",)


def test_the_default_comment_key_tells_steps_and_matrix_jobs_apart(workspace: Path) -> None:
    def key(**env: str) -> str | None:
        return read_inputs({**env_for(workspace), **env}).comment_key

    job = {"GITHUB_WORKFLOW": "Relevance", "GITHUB_JOB": "relevance", "GITHUB_ACTION": "score"}
    python311, python312 = (
        key(**job, INPUT_MATRIX='{"python": "3.11"}'),
        key(**job, INPUT_MATRIX='{"python": "3.12"}'),
    )
    assert python311 is not None and python311.startswith("auto-") and python311 != python312
    assert python311 == key(**job, INPUT_MATRIX='{ "python" : "3.11" }')  # the same job on the next run
    assert key(**job, INPUT_MATRIX="null") == key(**job) != python311  # no matrix
    assert key(**{**job, "GITHUB_ACTION": "score-docs"}) != key(**job)  # two steps of one job
    assert key(**job, **{"INPUT_COMMENT-KEY": "docs"}) == "docs"  # an explicit key wins
    assert key() is None  # outside a workflow: the plain marker


def test_comment_on_change(workspace: Path) -> None:
    got = read(workspace, comment="on-change")
    assert got.comment and got.comment_on_change
    assert not read(workspace, comment="true").comment_on_change
    with pytest.raises(CceError, match="expected true or false or on-change"):
        read(workspace, comment="sometimes")


def test_publish_mode_needs_the_evaluating_run(workspace: Path) -> None:
    env = {"GITHUB_WORKSPACE": str(workspace), "INPUT_MODE": "publish"}
    with pytest.raises(CceError, match="run-id"):
        read_inputs(env)
    got = read_inputs({**env, "INPUT_RUN-ID": "123"})
    assert (got.mode, got.run_id, got.artifact, got.fixtures) == ("publish", "123", "cce-relevance", ())
    with pytest.raises(CceError, match="artifact"):
        read_inputs({**env, "INPUT_RUN-ID": "123", "INPUT_ARTIFACT": "../x"})


def test_a_shard_scores_its_queries_without_comment_or_gate_input(workspace: Path) -> None:
    inputs = read(workspace, shard=" 2/3 ", comment="true")
    assert inputs.shard == Shard(2, 3) and inputs.comment is False  # the merge job comments
    assert read(workspace).shard is None


@pytest.mark.parametrize("value", ["0/3", "4/3", "3", "1/0", "a/b", "1/2/3"])
def test_a_shard_is_i_of_n(workspace: Path, value: str) -> None:
    with pytest.raises(CceError, match=r"input 'shard': .* expected I/N with 1 <= I <= N"):
        read(workspace, shard=value)


def test_a_shard_is_one_of_at_most_a_matrixs_jobs(workspace: Path) -> None:
    """More shards than one matrix runs cannot all be merged (and a typo such as 1/30000 would
    have the merge job wait for artifacts that never come)."""
    assert read(workspace, shard=f"{MAX_SHARDS}/{MAX_SHARDS}").shard == Shard(MAX_SHARDS, MAX_SHARDS)
    with pytest.raises(CceError) as caught:
        read(workspace, shard=f"1/{MAX_SHARDS + 1}")
    assert caught.value.message == (
        f"input 'shard': '1/{MAX_SHARDS + 1}' splits the queries {MAX_SHARDS + 1} ways: expected N of at "
        f"most {MAX_SHARDS}, the jobs one matrix can run (the merge needs every shard's artifact)"
    )


def test_merge_reads_the_shards_directory_and_its_own_gate_but_no_fixtures(workspace: Path) -> None:
    (workspace / "shards").mkdir()
    env = env_for(
        workspace, mode="merge", **{"shards-dir": "shards", "fail-on": "regression", "alpha": "0.1"}
    )
    del env["INPUT_FIXTURES"]
    inputs = read_inputs(env)
    assert (inputs.mode, inputs.shards_dir, inputs.fail_on, inputs.alpha) == (
        "merge",
        workspace / "shards",
        "regression",
        0.1,
    )
    assert inputs.fixtures == () and inputs.comment


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"mode": "merge"}, "input 'shards-dir' is empty"),
        ({"mode": "merge", "shards-dir": "nowhere"}, "input 'shards-dir': 'nowhere' is not a directory"),
        (
            {"mode": "merge", "shards-dir": "../.."},
            "input 'shards-dir': '../..' resolves outside the workspace",
        ),
        ({"mode": "merge", "shards-dir": "eval", "shard": "1/2"}, "input 'shard' is for the matrix jobs"),
        ({"shards-dir": "eval"}, "input 'shards-dir' is read by `mode: merge` only"),
    ],
)
def test_bad_shard_and_merge_inputs(workspace: Path, inputs: dict[str, str], message: str) -> None:
    with pytest.raises(CceError, match=re.escape(message)):
        read(workspace, **inputs)


def test_cost_is_off_unless_asked_for(workspace: Path) -> None:
    assert read(workspace).cost is False
    assert read(workspace, cost="true").cost is True
    with pytest.raises(CceError, match="input 'cost': 'yes please' is not a boolean"):
        read(workspace, cost="yes please")


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"min-detectable-effect": "-0.1"}, "input 'min-detectable-effect': '-0.1' is not a change"),
        ({"min-detectable-effect": "nan"}, "input 'min-detectable-effect': 'nan' is not a change"),
        ({"power": "0.4"}, "input 'power': '0.4' is not a power: expected a number in [0.5, 1)"),
        ({"power": "1"}, "input 'power': '1' is not a power"),
        ({"fail-on": "inconclusive"}, "`inconclusive` needs 'min-detectable-effect'"),
    ],
)
def test_the_inconclusive_inputs_are_checked(workspace: Path, inputs: dict[str, str], message: str) -> None:
    with pytest.raises(CceError) as caught:
        read(workspace, **inputs)
    assert message in caught.value.message


def test_the_inconclusive_inputs_are_read(workspace: Path) -> None:
    got = read(workspace, **{"min-detectable-effect": "0.05", "power": "0.9", "fail-on": "inconclusive"})
    assert (got.min_effect, got.power, got.fail_on) == (0.05, 0.9, "inconclusive")
    default = read(workspace)
    assert (default.min_effect, default.power) == (None, 0.8)
