"""The Action end to end: a real repository, a real event file, the entry point as a real process,
and the loopback GitHub. See scenario.py for the history every test starts from.

What the runner would do with the step's stdout is checked with the port of its command parser
(test_workflow_commands.runner_commands), and the outputs with the port of its file reader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.fake_github import FakeGitHub
from tests.action.scenario import (
    BILLING_FIXTURE,
    BILLING_FIXTURES,
    FIXTURE,
    FIXTURES,
    GOLDEN,
    PR_NUMBER,
    RANKING_CHANGE,
    REPO,
    Act,
    ActionRun,
    PullRequest,
    RunnerDirs,
    action_env,
    run_entrypoint,
)
from tests.action.test_schemas import validator
from tests.action.test_workflow_commands import runner_commands


def annotations(run: ActionRun, kind: str) -> list[tuple[dict[str, str], str]]:
    return [(props, data) for name, props, data in runner_commands(run.stdout) if name == kind]


def compare_document(pr: PullRequest, run: ActionRun) -> dict:
    return json.loads((pr.workspace / run.outputs["compare"]).read_text(encoding="utf-8"))


@pytest.mark.slow
def test_drift_fails_then_the_updated_golden_passes_and_one_comment_is_updated(
    pr: PullRequest, act: Act, fake_github: FakeGitHub
) -> None:
    pr.push(RANKING_CHANGE, "h1: a reports module that also talks about invoice totals")

    first = act(token_input="INPUT_GITHUB-TOKEN")

    assert first.code == 1, first.stdout + first.stderr
    assert first.outputs["drift"] == "true"
    assert first.outputs["verdict"] == (
        "❌ Golden drift in 1 report; MRR on bm25 -0.167 (paired t-test, n = 4: p = 0.391, not significant)"
    )
    [(props, message)] = annotations(first, "error")
    assert props["file"] == GOLDEN and FIXTURE in message
    comments = fake_github.comments(REPO, PR_NUMBER)
    assert len(comments) == 1 and first.outputs["comment-url"] == comments[0]["html_url"]
    body = comments[0]["body"]
    assert body.startswith("<!-- cce-relevance:v1 -->\n## Retrieval relevance\n\n**❌ Golden drift")
    assert "1 fixture set · 4 queries × 3 backends · 1 changed, 3 unchanged · `fail-on: drift`" in body
    # the one changed query, across backends: bm25 and hybrid rank billing.py 3rd instead of 1st;
    # vector loses it from the top 3; why: the new reports.py ranks above it, linked at head
    row = next(line for line in body.splitlines() if line.startswith("| `invoice-total` |"))
    assert row.startswith(
        "| `invoice-total` | 1 → 3 | 3 → — | 1 → 3 | **-0.667** 🔴 | `···█████│········` | "
    )
    head_link = f"https://github.example/{REPO}/blob/{pr.head_sha}/corpus/reports.py#L1-L3"
    assert (
        f"[`reports.py:1-3`]({head_link}) `function_definition` `invoice_total_report`" in row
    )  # its symbol
    assert f"https://github.example/{REPO}/blob/{pr.merge_base()}/corpus/billing.py#L1-L4" in row  # before
    assert "3 queries unchanged on every backend are not listed." in body
    assert f"```sh\ncce-relevance run {FIXTURE} --golden {GOLDEN} --update-golden\n```" in body
    assert "| `invoice-total` | `mrr` | 1\\.000000 → 0\\.333333 | 0\\.333333 → 0\\.000000 |" in body
    assert "| 4 | -0.167 | [-0.697, +0.364] | 0.391 | 0/1/3 |" in body  # the verdict's test, in full
    assert f"head `{pr.head_sha[:7]}`" in body
    report = (pr.workspace / first.outputs["report"]).read_text(encoding="utf-8")
    assert first.summary == report  # the full report, six decimals
    assert "| MRR | -0.166667 | -1.000000 | 0.391002 |" in report
    saved = (pr.workspace / ".cce-relevance" / "comment.md").read_text(encoding="utf-8")
    assert saved.rstrip("\n") == body
    document = compare_document(pr, first)
    validator("cce.relevance.action.v1").validate(document)  # docs/schemas/ describes what we wrote
    # the merge-base, not the event's moved-on base.sha; the head, not the workspace's merge commit
    assert (document["base"], document["head"]) == (pr.merge_base(), pr.head_sha)
    assert document["base"] != pr.base_sha

    pr.update_golden("h2: accept the new ranking")
    second = act(token_input="INPUT_GITHUB_TOKEN")

    assert second.code == 0, second.stdout + second.stderr
    assert second.outputs["drift"] == "false"
    assert second.outputs["verdict"] == (
        "✅ MRR on bm25 -0.167 (paired t-test, n = 4: p = 0.391, not significant); goldens match"
    )
    assert annotations(second, "error") == []
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    assert (
        comment["id"] == comments[0]["id"] and second.outputs["comment-url"] == first.outputs["comment-url"]
    )
    assert "**-0.667** 🔴" in comment["body"] and "Golden drift" not in comment["body"]
    assert "✏️ This pull request edits `eval/search.golden.json`" in comment["body"]
    assert [len(fake_github.requests_for(m)) for m in ("POST", "PATCH")] == [1, 1]


def test_a_read_only_token_is_a_warning_and_the_gate_still_decides(
    pr: PullRequest, act: Act, fake_github: FakeGitHub
) -> None:
    fake_github.read_only = True
    pr.push(RANKING_CHANGE, "h1")

    run = act()

    assert run.code == 1
    [(_, warning)] = annotations(run, "warning")
    assert "403" in warning and "workflow_run" in warning
    assert run.outputs["comment-url"] == "" and run.outputs["drift"] == "true"
    assert fake_github.comments(REPO, PR_NUMBER) == []
    assert fake_github.token not in run.stdout + run.stderr


def test_a_rank_metric_can_be_the_regression_metric(pr: PullRequest, act: Act) -> None:
    """`regression-metric: ndcg_at_k` scores both sides with `--metrics ndcg`, tests nDCG@k as the
    primary metric, and the golden's update command says `--metrics ndcg`."""
    pr.push(RANKING_CHANGE, "h1")

    run = act(**{"INPUT_FAIL-ON": "none", "INPUT_COMMENT": "false", "INPUT_REGRESSION-METRIC": "ndcg_at_k"})

    assert run.code == 0, run.stderr
    doc = compare_document(pr, run)
    backend = doc["sets"][0]["compare"]["backends"][0]
    assert "ndcg_at_k" in backend["metrics"] and backend["full"]["primary"] == "ndcg_at_k"
    report = (pr.workspace / ".cce-relevance/report.md").read_text(encoding="utf-8")
    assert "--metrics ndcg --golden" in report and "nDCG@&#8203;k" in report


def test_fail_on_none_reports_drift_but_passes(pr: PullRequest, act: Act) -> None:
    pr.push(RANKING_CHANGE, "h1")

    run = act(**{"INPUT_FAIL-ON": "none", "INPUT_COMMENT": "false"})

    assert run.code == 0 and run.outputs["drift"] == "true"
    assert run.outputs["comment-url"] == ""


@pytest.mark.parametrize(
    "files",
    [
        {"eval/escape.jsonl": FIXTURES.replace('"../corpus"', '"../../.."')},
        {"eval/escape.jsonl": FIXTURES.replace('"../corpus"', '"../corpus-link"'), "corpus-link": None},
    ],
    ids=["dot-dot", "symlink"],
)
def test_a_corpus_outside_the_repository_is_a_configuration_error(
    pr: PullRequest, act: Act, fake_github: FakeGitHub, files: dict[str, str | None]
) -> None:
    if "corpus-link" in files:
        del files["corpus-link"]
        os.symlink("/", pr.workspace / "corpus-link")
    pr.push({name: text for name, text in files.items() if text is not None}, "h1: a set reading outside")

    run = act(INPUT_FIXTURES="eval/*.jsonl")

    assert run.code == 2 and run.stderr == ""
    [(props, message)] = annotations(run, "error")
    assert props["title"] == "cce-relevance: configuration error"
    assert "eval/escape.jsonl" in message and "outside the repository" in message
    assert "Configuration error" in run.summary
    assert fake_github.requests == [] and run.outputs == {}


def test_a_set_added_by_the_pull_request_is_scored_at_head_and_labelled(
    pr: PullRequest, act: Act, fake_github: FakeGitHub
) -> None:
    added = FIXTURES.splitlines()[0] + '\n{"id":"new-q","query":"format a price","expected":["billing.py"]}\n'
    pr.push({"eval/added.jsonl": added}, "h1: a new fixture set")

    run = act(INPUT_FIXTURES="eval/*.jsonl")

    assert run.code == 0, run.stdout + run.stderr
    body = fake_github.comments(REPO, PR_NUMBER)[0]["body"]
    assert "### `eval/added.jsonl`: scored at head only (new in this change)" in body
    assert "✏️ This pull request edits `eval/added.jsonl`" in body
    sets = {s["fixtures"]: s for s in compare_document(pr, run)["sets"]}
    assert sets["eval/added.jsonl"]["status"] == "head-only" and sets["eval/added.jsonl"]["compare"] is None
    assert set(sets["eval/added.jsonl"]["reports"]) == {"head"}
    assert sets[FIXTURE]["status"] == "paired"


def test_a_missing_golden_is_a_configuration_error_that_says_how_to_create_it(
    pr: PullRequest, act: Act
) -> None:
    run = act(INPUT_GOLDEN=f"{FIXTURE}=eval/absent.golden.json")

    assert run.code == 2
    [(_, message)] = annotations(run, "error")
    assert "golden report not found: eval/absent.golden.json" in message
    assert "--update-golden" in message


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, as in the container")
def test_as_root_on_a_workspace_owned_by_the_runner_user(pr: PullRequest, act: Act) -> None:
    """GitHub's situation: root in the container, the workspace owned by uid 1001 (§runner-file-owner,
    §runner-safe-directory)."""
    run = act(owner="1001:1001", INPUT_COMMENT="false")

    assert run.code == 0, run.stdout + run.stderr  # git accepted the repository: safe.directory
    not_owned = subprocess.run(
        ["find", str(pr.workspace), "!", "-uid", "1001"], check=True, capture_output=True, text=True
    ).stdout
    assert not_owned == ""  # reports handed back, no root-owned worktree metadata left behind


def test_the_cli_subcommand_is_the_same_entry_point(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "GITHUB_WORKSPACE": str(tmp_path), "INPUT_FIXTURES": ""}
    done = subprocess.run(
        [sys.executable, "-m", "cce_relevance", "action"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 2 and done.stderr == ""
    [(name, _, message)] = runner_commands(done.stdout)
    assert name == "error" and message.startswith("input 'fixtures' is empty")


@pytest.mark.parametrize("pr", [{BILLING_FIXTURE: BILLING_FIXTURES}], indirect=True, ids=["billing-set"])
def test_a_renamed_file_leaves_stale_anchors_that_are_not_counted_as_a_regression(
    pr: PullRequest, act: Act, fake_github: FakeGitHub
) -> None:
    pr.rename("corpus/billing.py", "corpus/invoices.py", "h1: billing.py is now invoices.py")

    run = act(INPUT_FIXTURES=BILLING_FIXTURE, INPUT_GOLDEN="", **{"INPUT_FAIL-ON": "regression"})

    # Every backend loses the four billing queries, significantly when all queries are tested...
    [entry] = compare_document(pr, run)["sets"]
    assert [float(b["metrics"]["mrr"]["p"]) < 0.05 for b in entry["compare"]["backends"]] == [True] * 3
    # ...but the loss is four stale anchors, so the gate passes and the verdict says why
    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["verdict"] == (
        "⚠️ MRR unchanged on every backend (n = 2, 4 queries with a stale anchor left out); "
        "4 stale anchors at head"
    )
    assert entry["stale_queries"] == ["format-price", "invoice-lines", "invoice-total", "price-format"]
    assert entry["validate"]["base"]["ok"] and not entry["validate"]["head"]["ok"]
    warnings = annotations(run, "warning")
    assert [(props["file"], props["line"]) for props, _ in warnings] == [
        (BILLING_FIXTURE, str(n)) for n in (2, 3, 4, 5)
    ]
    assert warnings[0][1].startswith(
        'Query "invoice-total": anchor "billing.py#function_definition@1-4" is stale at head (missing-file: '
    )
    body = fake_github.comments(REPO, PR_NUMBER)[0]["body"]
    assert "| `invoice-total` | `billing.py#function_definition@1-4` | — | missing-file |" in body
    assert "| `invoice-lines` | `billing.py` | — | missing-file |" in body
    row = next(line for line in body.splitlines() if line.startswith("| `invoice-total` ⚠️ | 1 → — | "))
    assert "⚠️ stale anchor (missing-file): the label, not the ranking; now 1st: [`invoices.py:1-4`]" in row
    assert "`compute_invoice_total`" in row  # the renamed file's function took its place
    assert "the regression test leaves out the 4 with a stale anchor" in body
    assert (
        "The regression test of MRR without them: `bm25` +0.000 (n=2, p=1), `vector` +0.000 (n=2, p=1), "
        "`hybrid` +0.000 (n=2, p=1)." in body
    )
    assert "```mermaid" not in body


@pytest.mark.slow
def test_a_run_for_an_older_head_leaves_the_comment_to_the_newer_run(
    pr: PullRequest, act: Act, fake_github: FakeGitHub
) -> None:
    pr.push(RANKING_CHANGE, "h1")
    newer = "f" * 40  # pushed while this run was scoring
    fake_github.pull_heads[(REPO, PR_NUMBER)] = newer

    stale = act()

    assert stale.code == 1 and stale.outputs["drift"] == "true"  # the gate still decides
    [(_, notice)] = annotations(stale, "notice")
    assert pr.head_sha[:12] in notice and newer[:12] in notice
    assert stale.outputs["comment-url"] == "" and fake_github.comments(REPO, PR_NUMBER) == []
    assert fake_github.requests_for("POST") == [] and fake_github.requests_for("PATCH") == []

    fake_github.pull_heads[(REPO, PR_NUMBER)] = pr.head_sha  # the run for the current head
    current = act()
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    assert current.outputs["comment-url"] == comment["html_url"]


ROOT_FIXTURE = "eval/root.jsonl"
ROOT_GOLDEN = "eval/root.golden.json"
# A set whose corpus is the whole repository, the common layout: the checkout's `.git`, the
# golden and the fixture file all lie inside it.
ROOT_FIXTURES = (
    FIXTURES.replace('"../corpus"', '".."')
    .replace('["billing.py"]', '["corpus/billing.py"]')
    .replace('["shipping.py"]', '["corpus/shipping.py"]')
    .replace('["auth.py"]', '["corpus/auth.py"]')
    .replace('["cache.py#class_definition"]', '["corpus/cache.py#class_definition"]')
    + '{"id":"whole-corpus","query":"invoice total","expected":["corpus/billing.py@1-4"],"k":50}\n'
)
# k above the number of chunks: every chunk is retrieved, so any file scored besides the commit's
# own (a worktree's `.git` file, a leftover, the golden) changes this query's token precision.


@pytest.mark.parametrize("pr", [{ROOT_FIXTURE: ROOT_FIXTURES}], indirect=True, ids=["root-corpus"])
def test_a_golden_made_in_a_fresh_clone_is_the_actions_report_byte_for_byte(
    pr: PullRequest, act: Act, tmp_path: Path
) -> None:
    """The golden is refreshed exactly as the comment says, in a plain clone of the head; the
    Action, scoring that head, reports the same bytes and finds no drift."""
    head = pr.push(RANKING_CHANGE, "h1: a ranking change")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(pr.workspace), str(clone)], check=True)
    subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", head], cwd=clone, check=True)
    update = [
        sys.executable,
        "-m",
        "cce_relevance",
        "run",
        ROOT_FIXTURE,
        "--golden",
        ROOT_GOLDEN,
        "--update-golden",
    ]
    subprocess.run(update, cwd=clone, check=True, capture_output=True)
    golden = (clone / ROOT_GOLDEN).read_bytes()
    pr.push({ROOT_GOLDEN: golden.decode("utf-8")}, "h2: the golden, refreshed in a clone")
    (pr.workspace / "untracked-notes.md").write_text("left over in the workspace: not in the commit\n")

    run = act(
        INPUT_FIXTURES=ROOT_FIXTURE, INPUT_GOLDEN=f"{ROOT_FIXTURE}={ROOT_GOLDEN}", INPUT_COMMENT="false"
    )

    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["drift"] == "false"
    [head_report] = [
        p for p in compare_document(pr, run)["sets"][0]["reports"].values() if p.endswith("head.json")
    ]
    assert (pr.workspace / head_report).read_bytes() == golden
    assert json.loads(golden)["corpus"] == "eval/.."  # the whole repository: `.git` and golden within
    assert run.stderr == f"warning: not scoring this run's own files found in the corpus: {ROOT_GOLDEN}\n"


@pytest.mark.parametrize("home", ["missing", "unset"])
def test_the_action_needs_no_home_and_never_writes_a_global_git_config(
    pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub, home: str
) -> None:
    """Run locally (`cce-relevance action`), it must not add `safe.directory` to the user's
    ~/.gitconfig; as root on a workspace another uid owns, git must still accept it."""
    pr.push(RANKING_CHANGE, "h1")
    pr.check_out_merge()
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "1001:1001", str(pr.workspace)], check=True)
    dirs = RunnerDirs(tmp_path / "runner")
    dirs.prepare(pr.event())
    env = action_env(
        dirs.places(pr.workspace),
        fake_github.url,
        fake_github.token,
        inputs={"INPUT_COMMENT": "false", "INPUT_FAIL-ON": "none"},
    )
    missing = tmp_path / "no-such-home"
    if home == "missing":
        env["HOME"] = str(missing)
    else:
        del env["HOME"]

    run = run_entrypoint(pr.workspace, dirs, env)

    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["drift"] == "true"
    assert not missing.exists()


@pytest.mark.parametrize("pr", [{BILLING_FIXTURE: BILLING_FIXTURES}], indirect=True, ids=["billing-set"])
def test_range_anchors_whose_lines_moved_are_reported_and_left_out_of_the_regression_test(
    pr: PullRequest, act: Act, fake_github: FakeGitHub
) -> None:
    """A function added above billing.py's: `@1-4` and `@7-8` still resolve at head (validate passes
    them), but they label other functions there; the diff says where their lines went."""
    billing = (pr.workspace / "corpus/billing.py").read_text(encoding="utf-8")
    added = 'def tax_rate():\n    """The tax rate."""\n    return 0.2\n\n\n'  # five lines, a function first
    pr.push(
        {
            "corpus/billing.py": added
            + billing.replace("    return f", "    cents = int(cents)\n    return f")
        },
        "h1: a constant above, format_price edited",
    )

    run = act(INPUT_FIXTURES=BILLING_FIXTURE, INPUT_GOLDEN="", **{"INPUT_FAIL-ON": "regression"})

    assert run.code == 0, run.stdout + run.stderr
    [entry] = compare_document(pr, run)["sets"]
    assert entry["validate"]["head"]["problems"] == [], entry["validate"]["head"]
    line2 = BILLING_FIXTURES.splitlines()[1]
    assert entry["anchor_moves"] == [
        {
            "id": "invoice-total",
            "line": 2,
            "anchor": "billing.py#function_definition@1-4",
            "status": "moved",
            "path": "corpus/billing.py",
            "base_lines": [1, 4],
            "head_lines": [6, 9],
            "fixture_line": line2.replace("@1-4", "@6-9"),
        },
        {
            "id": "format-price",
            "line": 3,
            "anchor": "billing.py@7-8",
            "status": "changed",
            "path": "corpus/billing.py",
            "base_lines": [7, 8],
            "head_lines": None,
            "fixture_line": None,
        },
    ]
    assert entry["stale_queries"] == [] and entry["left_out_queries"] == ["format-price", "invoice-total"]
    assert run.outputs["verdict"] == (
        "⚠️ MRR unchanged on every backend (n = 4, 2 queries with a range anchor whose lines moved or changed "
        "left out); 2 line-range anchors whose lines moved or changed"
    )
    warnings = annotations(run, "warning")
    assert [(props["file"], props["line"], props["title"]) for props, _ in warnings] == [
        (BILLING_FIXTURE, "2", "cce-relevance: line-range anchor moved"),
        (BILLING_FIXTURE, "3", "cce-relevance: line-range anchor changed"),
    ]
    assert line2.replace("@1-4", "@6-9") in warnings[0][1]
    body = fake_github.comments(REPO, PR_NUMBER)[0]["body"]
    assert "#### ↕️ Line-range anchors that moved or changed" in body
    assert (
        "| `invoice-total` | `billing.py#function_definition@1-4` | `corpus/billing.py` 1-4 | moved to 6-9 |"
        in body
    )
    assert "| `format-price` | `billing.py@7-8` | `corpus/billing.py` 7-8 | changed |" in body
    assert f"```\n{BILLING_FIXTURE}:2: {line2.replace('@1-4', '@6-9')}\n```" in body
    report = (pr.workspace / run.outputs["report"]).read_text(encoding="utf-8")
    assert "#### ↕️ Line-range anchors that moved or changed" in report
    assert "| `invoice-total` ↕️ anchor's lines moved |" in report


def test_an_underpowered_change_is_inconclusive_and_fails_only_when_asked(pr: PullRequest, act: Act) -> None:
    """The ranking change moves one query of four: not significant, and a set this small detects
    only large changes. With `min-detectable-effect` the verdict says so; `fail-on: inconclusive`
    fails on it, `regression` warns."""
    pr.push(RANKING_CHANGE, "h1")
    inputs = {"INPUT_GOLDEN": "", "INPUT_COMMENT": "false", "INPUT_MIN-DETECTABLE-EFFECT": "0.05"}

    plain = act(**{"INPUT_GOLDEN": "", "INPUT_COMMENT": "false", "INPUT_FAIL-ON": "regression"})
    warned = act(**inputs, **{"INPUT_FAIL-ON": "regression"})
    failed = act(**inputs, **{"INPUT_FAIL-ON": "inconclusive"})

    assert (warned.code, failed.code, plain.code) == (0, 1, 0), failed.stderr
    assert (
        warned.outputs["verdict"].startswith("⚠️") and "inconclusive: with n = 4" in warned.outputs["verdict"]
    )
    assert (
        failed.outputs["verdict"].startswith("❌")
        and "at 80% power (min-detectable-effect 0.05)" in failed.outputs["verdict"]
    )
    assert "inconclusive" not in plain.outputs["verdict"]
    found = [
        m for props, m in annotations(failed, "error") if props.get("title") == "cce-relevance: inconclusive"
    ]
    assert found and all("label more queries to tell" in m for m in found)  # one per inconclusive backend
    report = (pr.workspace / ".cce-relevance/report.md").read_text(encoding="utf-8")  # the last run's
    assert "⚖️ **Inconclusive**: no significant change of MRR on `bm25`" in report


def test_a_budget_metric_can_be_the_regression_metric_and_the_why_cell_names_unlabeled_hits(
    pr: PullRequest, act: Act
) -> None:
    pr.push(RANKING_CHANGE, "h1")

    run = act(**{"INPUT_FAIL-ON": "none", "INPUT_REGRESSION-METRIC": "recall_at_budget_200"})

    assert run.code == 0, run.stderr
    backend = compare_document(pr, run)["sets"][0]["compare"]["backends"][0]
    assert (
        "recall_at_budget_200" in backend["metrics"] and backend["full"]["primary"] == "recall_at_budget_200"
    )
    comment = (pr.workspace / ".cce-relevance/comment.md").read_text(encoding="utf-8")
    # reports.py's functions now rank above billing.py; no anchor of the case names them
    assert "above it (all unlabeled: no anchor names them, they may be right answers)" in comment
