"""The workflows a team copies (docs/examples/) wire what the Action reads and writes.

actionlint checks the inputs of a local action only; `your-org/cce-relevance@v1` is a remote one,
so nothing else notices an example that passes an input the Action does not have, reads an output
it never sets, uploads a directory the shard never writes to, or saves a trend history from a
pull request. Each contract is stated twice (the YAML and the code it relies on); these tests
keep the two from drifting apart.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cce_relevance.action.workspace.output_dir import OUTPUT_DIR
from tests.action.test_packaging import OUR_ACTION, ROOT, load_yaml, triggers, workflow_files

EXAMPLES = ROOT / "docs" / "examples"
STEP_OUTPUT = re.compile(r"steps\.([\w-]+)\.outputs\.([\w-]+)")


def declared(uses: str) -> dict[str, Any]:
    """The action.yml a `uses:` of our action runs: the runner-native one or the Docker one."""
    return load_yaml(ROOT / ("runner" if "/runner@" in uses else "") / "action.yml")


def ours(workflow: dict[str, Any], job: str | None = None) -> list[dict[str, Any]]:
    jobs = [workflow["jobs"][job]] if job else workflow["jobs"].values()
    return [s for j in jobs for s in j.get("steps", []) if OUR_ACTION.match(s.get("uses", ""))]


def step_named(job: dict[str, Any], prefix: str) -> dict[str, Any]:
    [step] = [s for s in job["steps"] if s.get("uses", "").startswith(prefix)]
    return step


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_input_given_and_output_read_is_declared(path: Path) -> None:
    workflow = load_yaml(path)
    ids = {}
    for step in ours(workflow):
        action = declared(step["uses"])
        unknown = sorted(set(step.get("with", {})) - set(action["inputs"]))
        assert not unknown, f"{path.name}: {step['uses']} has no input {unknown}"
        # `mode: publish` and `merge` read no fixtures (GitHub does not enforce `required`)
        evaluates = step["with"].get("mode", "evaluate") == "evaluate"
        needed = [k for k, v in action["inputs"].items() if v.get("required")] if evaluates else []
        missing = sorted(k for k in needed if k not in step["with"])
        assert not missing, f"{path.name}: {step['uses']} needs {missing}"
        if "id" in step:
            ids[step["id"]] = action
    for step_id, output in STEP_OUTPUT.findall(path.read_text(encoding="utf-8")):
        if step_id in ids:
            assert output in ids[step_id]["outputs"], f"{path.name}: steps.{step_id}.outputs.{output}"


def test_sharded_matrix_uploads_every_shard_and_the_fan_in_merges_what_it_downloads() -> None:
    workflow = load_yaml(EXAMPLES / "sharded" / "relevance.yml")
    shard_job, merge_job = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    assert merge_job["needs"] == "shard"  # a failed shard skips the merge, which would refuse it
    [shard] = ours(workflow, "shard")
    indexes = shard_job["strategy"]["matrix"]["shard"]
    assert shard["with"]["shard"] == f"${{{{ matrix.shard }}}}/{len(indexes)}"
    assert indexes == list(range(1, len(indexes) + 1))
    assert "comment" not in shard["with"]  # a shard never comments; nothing to switch off
    upload = step_named(shard_job, "actions/upload-artifact@")
    assert upload["with"]["path"] == f"{OUTPUT_DIR}/shard/"  # main.py's `shard-state` lands there
    assert upload["with"]["name"] == "cce-relevance-shard-${{ matrix.shard }}"
    assert upload["with"]["if-no-files-found"] == "error"

    [merge] = ours(workflow, "merge")
    assert merge["with"]["mode"] == "merge" and "shard" not in merge["with"]
    [download] = [s["run"] for s in merge_job["steps"] if "run" in s]
    assert "--pattern 'cce-relevance-shard-*'" in download
    assert f"--dir {merge['with']['shards-dir']}" in download
    assert merge["with"]["regression-metric"] == shard["with"]["regression-metric"]
    assert merge["with"]["fixtures"] == shard["with"]["fixtures"]


def test_sharded_only_the_fan_in_holds_a_write_token() -> None:
    """The shard jobs run the repository's retriever: they get read access and nothing more."""
    workflow = load_yaml(EXAMPLES / "sharded" / "relevance.yml")
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["shard"]["permissions"] == {"contents": "read"}
    assert workflow["jobs"]["merge"]["permissions"] == {"actions": "read", "pull-requests": "write"}


def test_reuse_base_keeps_the_cache_directory_pull_requests_load_from() -> None:
    workflow = load_yaml(EXAMPLES / "reuse-base" / "relevance.yml")
    assert set(triggers(workflow)) == {"pull_request", "push"}
    [job] = workflow["jobs"].values()
    restore, save = step_named(job, "actions/cache/restore@"), step_named(job, "actions/cache/save@")
    [action] = ours(workflow)
    cache_dir = action["with"].get("cache-dir", declared(action["uses"])["inputs"]["cache-dir"]["default"])
    assert restore["with"]["path"] == save["with"]["path"] == cache_dir
    prefix = restore["with"]["restore-keys"]
    assert (
        restore["with"]["key"].startswith(prefix) and save["with"]["key"] == f"{prefix}${{{{ github.sha }}}}"
    )
    # base_reuse.SAVED_ON: only a push's run saves its side, so only it saves the cache; also
    # after a failed gate (the side was saved before), never after a run that scored nothing
    assert "github.event_name == 'push'" in save["if"] and "!cancelled()" in save["if"]
    assert f"steps.{action['id']}.outputs.report != ''" in save["if"]


@pytest.mark.parametrize("name", ["relevance.yml", "relevance-branch.yml"])
def test_trend_history_is_kept_outside_the_output_directory_and_recorded_by_pushes_only(name: str) -> None:
    workflow = load_yaml(EXAMPLES / "trend" / name)
    assert set(triggers(workflow)) == {"pull_request", "push"}
    env = workflow.get("env", {})
    for action in ours(workflow):
        history = action["with"].get("history", "")
        history = re.sub(r"\$\{\{ env\.(\w+) \}\}", lambda m: env[m.group(1)], history)
        assert not history.startswith(f"{OUTPUT_DIR}/"), "the Action replaces its output directory"
        if "history-branch" in action["with"]:
            assert action["with"]["history-branch"] != "main"  # refused: the default branch
            continue
        [job] = workflow["jobs"].values()
        restore, save = step_named(job, "actions/cache/restore@"), step_named(job, "actions/cache/save@")
        folder = restore["with"]["path"]
        assert save["with"]["path"] == folder and history.startswith(f"{env['HISTORY_DIR']}/")
        assert save["with"]["key"].startswith(restore["with"]["restore-keys"])
        assert "github.event_name == 'push'" in save["if"] and "default_branch" in save["if"]


def test_trend_data_branch_only_the_push_job_may_write() -> None:
    workflow = load_yaml(EXAMPLES / "trend" / "relevance-branch.yml")
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert jobs["pull-request"]["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert jobs["record"]["permissions"] == {"contents": "write"}
    assert "push" in jobs["record"]["if"] and "pull_request" in jobs["pull-request"]["if"]
    checkout = step_named(jobs["record"], "actions/checkout@")
    assert checkout["with"].get("persist-credentials", True) is True  # the Action pushes with them
    assert jobs["record"]["concurrency"]["cancel-in-progress"] is False
    branches = {a["with"]["history-branch"] for a in ours(workflow)}
    assert len(branches) == 1, "both jobs must read and write the same data branch"
