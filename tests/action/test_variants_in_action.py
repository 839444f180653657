"""The Action's `backends` input with variants from each side's `cce-relevance.toml`, end to end.

The variants a change adds exist at head only, so at base they are left out and the comparison
lists them as head-only; external retrievers are refused unless `allow-repository-retrievers`
asks for them (test_repository_retrievers.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.action.scenario import FIXTURE, Act, ActionRun, PullRequest
from tests.action.test_workflow_commands import runner_commands

VARIANT = '[backends.bm25-flat]\nbase = "bm25"\nbm25_b = 0\n'
QUIET = {"INPUT_GOLDEN": "", "INPUT_COMMENT": "false"}  # no golden to drift, no comment to post


def saved_report(pr: PullRequest, run: ActionRun, side: str) -> dict:
    [entry] = json.loads((pr.workspace / run.outputs["compare"]).read_text(encoding="utf-8"))["sets"]
    assert entry["fixtures"] == FIXTURE
    return json.loads((pr.workspace / entry["reports"][side]).read_text(encoding="utf-8"))


def errors(run: ActionRun) -> list[str]:
    return [data for name, _, data in runner_commands(run.stdout) if name == "error"]


def test_a_variant_added_by_the_change_is_scored_at_head_only(pr: PullRequest, act: Act) -> None:
    pr.push({"cce-relevance.toml": VARIANT}, "h1: a BM25 variant without length normalisation")

    run = act(**QUIET, INPUT_BACKENDS="bm25,bm25-flat")

    assert run.code == 0, run.stdout + run.stderr
    head = saved_report(pr, run, "head")
    base = saved_report(pr, run, "base")
    assert [b["backend"] for b in head["backends"]] == ["bm25", "bm25-flat"]
    assert [b["backend"] for b in base["backends"]] == ["bm25"]
    local = subprocess.run(
        [sys.executable, "-m", "cce_relevance", "run", FIXTURE, "--backend", "bm25,bm25-flat", "--json"],
        cwd=pr.workspace,
        check=True,
        capture_output=True,
        text=True,
    )
    assert head["backends"] == json.loads(local.stdout)["backends"]  # what the CLI scores in that checkout


def test_an_unknown_backend_at_head_is_a_configuration_error(pr: PullRequest, act: Act) -> None:
    pr.push({"cce-relevance.toml": VARIANT}, "h1: a variant")

    run = act(**QUIET, INPUT_BACKENDS="bm25,bm25-flt")

    assert run.code == 2
    [message] = errors(run)
    assert (
        'unknown backend "bm25-flt" (expected bm25, vector, hybrid, or a backend of cce-relevance.toml: '
        "bm25-flat)" in message
    )


def test_external_retrievers_are_not_run_by_default(pr: PullRequest, act: Act, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    pr.push({"cce-relevance.toml": f'[backends.mine]\ncommand = ["touch", "{marker}"]\n'}, "h1: a retriever")

    run = act(**QUIET, INPUT_BACKENDS="bm25,mine")

    assert run.code == 2
    [message] = errors(run)
    assert (
        'backend "mine" is an external retriever: the Action runs repository retrievers only when asked'
        in message
    )
    assert not marker.exists()


def test_a_config_file_outside_the_repository_is_refused(pr: PullRequest, act: Act, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(VARIANT, encoding="utf-8")
    os.symlink(outside, pr.workspace / "cce-relevance.toml")
    pr.push({}, "h1: a config file that points outside")

    run = act(**QUIET, INPUT_BACKENDS="bm25")

    assert run.code == 2
    [message] = errors(run)
    assert "cce-relevance.toml resolves outside the repository" in message


WORDLLAMA = '[backends.vector-wl]\nbase = "vector"\nembedder = "wordllama"\n'


def test_a_wordllama_variant_runs_and_cost_adds_a_latency_column(pr: PullRequest, act: Act) -> None:
    """WordLlama runs on the runner without network or a key, so the Action runs it by default;
    `cost: true` adds each backend's query p50 (base → head) to the means in report.md."""
    pr.push({"cce-relevance.toml": WORDLLAMA}, "h1: a WordLlama variant")

    plain = act(**QUIET, INPUT_BACKENDS="vector,vector-wl")
    assert plain.code == 0, plain.stdout + plain.stderr
    report = (pr.workspace / ".cce-relevance/report.md").read_text(encoding="utf-8")
    assert "p50 ms" not in report
    assert [b["backend"] for b in saved_report(pr, plain, "head")["backends"]] == ["vector", "vector-wl"]

    timed = act(**QUIET, INPUT_BACKENDS="vector,vector-wl", INPUT_COST="true")
    assert timed.code == 0, timed.stdout + timed.stderr
    report = (pr.workspace / ".cce-relevance/report.md").read_text(encoding="utf-8")
    header = next(line for line in report.splitlines() if line.startswith("| backend |") and "p50 ms" in line)
    assert header.endswith("| p50 ms |")
    vector = next(line for line in report.splitlines() if line.startswith("| `vector` |"))
    assert re.search(r"\| \d+\.\d\d → \d+\.\d\d \|$", vector), vector  # timed at both sides
    assert "| `vector-wl` | only in head |" in report
    assert saved_report(pr, timed, "head") == saved_report(pr, plain, "head")  # the reports never carry it


def test_an_openai_variant_is_refused_without_allow_repository_retrievers(pr: PullRequest, act: Act) -> None:
    config = (
        '[embedders.e5]\ntype = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
        'api_key_env = "GITHUB_TOKEN"\n\n[backends.vector-e5]\nbase = "vector"\nembedder = "e5"\n'
    )
    pr.push({"cce-relevance.toml": config}, "h1: a variant that would send the token away")

    run = act(**QUIET, INPUT_BACKENDS="vector,vector-e5")

    assert run.code == 2
    [message] = errors(run)
    assert 'backend "vector-e5" ranks with embedder "e5", which sends the repository\'s text' in message
