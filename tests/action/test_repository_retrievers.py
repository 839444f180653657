"""The repository's own retriever in the Action (`allow-repository-retrievers`), end to end.

The scenario's repository gets a `command` retriever, a small Python script committed with the
corpus. The change rewrites the script so it ranks worse: the comparison must show base's
script scoring base and head's script scoring head, each run inside its own side's tree. Under
`pull_request_target` and `workflow_run` the same input is refused before anything runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cce_relevance.action.config.inputs import read_inputs
from cce_relevance.action.config.retriever_policy import check_repository_retrievers, withhold_token
from cce_relevance.errors import CceError
from tests.action.scenario import Act, ActionRun, PullRequest
from tests.action.test_variants_in_action import QUIET, errors, saved_report

ALLOW = {"INPUT_ALLOW-REPOSITORY-RETRIEVERS": "true"}

# Ranks whole corpus files by how many query words they hold (base); `ORDER` flips the ranking.
# Each answer also names the tree it ran in, through the stderr log, to show where it ran.
RETRIEVER = """import json, os, re, sys
ORDER = {order}
words = re.compile(r"[a-z0-9]+")
root = sys.argv[1]
files = {{}}
for name in sorted(os.listdir(root)):
    with open(os.path.join(root, name), encoding="utf-8") as fh:
        text = fh.read()
    files[name] = (set(words.findall(text.lower())), len(text.splitlines()))
with open(os.path.join(os.environ["RETRIEVER_LOG"], "calls"), "a", encoding="utf-8") as log:
    log.write(os.getcwd() + " " + str(ORDER) + " " + str(os.environ.get("INPUT_GITHUB-TOKEN")) + "\\n")
for request in map(json.loads, sys.stdin):
    query = set(words.findall(request["query"].lower()))
    ranked = sorted(files, key=lambda n: (ORDER * -len(query & files[n][0]), n))[: request["k"]]
    results = [{{"file_path": n, "start_line": 1, "end_line": files[n][1]}} for n in ranked]
    print(json.dumps({{"id": request["id"], "results": results}}), flush=True)
"""
CONFIG = f'[backends.mine]\ncommand = [{json.dumps(sys.executable)}, "tools/retriever.py", "corpus"]\n'
WITH_RETRIEVER = {"cce-relevance.toml": CONFIG, "tools/retriever.py": RETRIEVER.format(order=1)}


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the retriever records each start (its directory, its version, the token it saw)."""
    folder = tmp_path / "retriever-log"
    folder.mkdir()
    return folder


def run_with_log(act: Act, log: Path, **inputs: str) -> ActionRun:
    return act(**QUIET, RETRIEVER_LOG=str(log), INPUT_BACKENDS="bm25,mine", **inputs)


@pytest.mark.parametrize("pr", [WITH_RETRIEVER], indirect=True)
def test_each_side_runs_its_own_retriever_in_its_own_tree(pr: PullRequest, act: Act, log: Path) -> None:
    pr.push(
        {"tools/retriever.py": RETRIEVER.format(order=-1)}, "h1: the retriever ranks the worst match first"
    )

    run = run_with_log(act, log, **ALLOW)

    assert run.code == 0, run.stdout + run.stderr
    base, head = saved_report(pr, run, "base"), saved_report(pr, run, "head")
    [base_mine] = [b for b in base["backends"] if b["backend"] == "mine"]
    [head_mine] = [b for b in head["backends"] if b["backend"] == "mine"]
    assert base_mine["mrr"] == "1.000000"  # every expected file holds the most query words
    assert head_mine["mrr"] == "0.000000"  # the reversed ranking puts it below k
    calls = (log / "calls").read_text(encoding="utf-8").splitlines()
    # head is scored first, by head's script, then base by base's: each in that side's tree (a
    # checkout of the commit's files), never in the workspace; the token input is not inherited
    assert [line.split()[1:] for line in calls] == [["-1", "None"], ["1", "None"]]
    assert all(
        pr.workspace not in Path(line.split()[0]).parents and Path(line.split()[0]) != pr.workspace
        for line in calls
    )
    comment = (pr.workspace / ".cce-relevance" / "comment.md").read_text(encoding="utf-8")
    assert "| `mine` | 0.333→0.000 (-0.333) | 1.000→0.000 (-1.000) |" in comment


@pytest.mark.parametrize("pr", [WITH_RETRIEVER], indirect=True)
def test_without_the_input_the_retriever_is_refused_and_never_started(
    pr: PullRequest, act: Act, log: Path
) -> None:
    run = run_with_log(act, log)

    assert run.code == 2
    [message] = errors(run)
    assert 'backend "mine" is an external retriever' in message
    assert "allow-repository-retrievers: true" in message
    assert not (log / "calls").exists()


@pytest.mark.parametrize("pr", [WITH_RETRIEVER], indirect=True)
@pytest.mark.parametrize("event", ["pull_request_target", "workflow_run"])
def test_privileged_events_refuse_repository_retrievers(
    pr: PullRequest, act: Act, log: Path, event: str
) -> None:
    run = run_with_log(act, log, GITHUB_EVENT_NAME=event, **ALLOW)

    assert run.code == 2
    [message] = errors(run)
    assert f"repository retrievers never run under {event}" in message
    assert "secrets" in message and "write token" in message
    assert not (log / "calls").exists()


@pytest.mark.parametrize("event", ["pull_request", "push", "workflow_dispatch", "schedule", ""])
def test_the_policy_allows_the_unprivileged_events(event: str) -> None:
    assert check_repository_retrievers(True, event) is True
    assert check_repository_retrievers(False, event) is False


@pytest.mark.parametrize("event", ["pull_request_target", "workflow_run", "issue_comment", "merge_group"])
def test_the_policy_refuses_other_events_only_when_asked(event: str) -> None:
    assert check_repository_retrievers(False, event) is False
    with pytest.raises(CceError, match=f"input 'allow-repository-retrievers'.*{event}"):
        check_repository_retrievers(True, event)


def test_the_token_is_withheld_from_what_retrievers_inherit() -> None:
    environ = {"INPUT_GITHUB-TOKEN": "t1", "INPUT_GITHUB_TOKEN": "t2", "PATH": "/bin"}
    withhold_token(environ)
    assert environ == {"PATH": "/bin"}


def test_the_input_is_a_strict_boolean(tmp_path: Path) -> None:
    (tmp_path / "f.jsonl").write_text("{}\n")
    env = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_FIXTURES": "f.jsonl", "GITHUB_EVENT_NAME": "push"}
    assert read_inputs({**env, "INPUT_ALLOW_REPOSITORY_RETRIEVERS": "true"}).repository_retrievers
    assert not read_inputs(env).repository_retrievers
    with pytest.raises(CceError, match="'allow-repository-retrievers': 'yes' is not a boolean"):
        read_inputs({**env, "INPUT_ALLOW-REPOSITORY-RETRIEVERS": "yes"})
