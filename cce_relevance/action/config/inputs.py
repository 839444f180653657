"""The Action's configuration: `INPUT_*` and `GITHUB_*` read once, validated, frozen.

This is the only module that reads the Action's environment (ARCHITECTURE: the action package is
the only reader of INPUT_* and GITHUB_*). Everything downstream receives an `ActionInputs`, so a
bad value fails here, before any git or network work, with a `CceError` (exit 2) that names the
input, the value and what was expected.

Inputs arrive as `INPUT_<NAME>` with the name upper-cased and hyphens kept (`INPUT_GITHUB-TOKEN`);
some runners and local `docker run --env-file` setups cannot carry a hyphen in a variable name, so
the underscore spelling is accepted too (pypa/gh-action-pypi-publish does the same). An empty value
means "not given": GitHub passes every declared input, empty when it has no default.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from cce_relevance import untrusted_json
from cce_relevance.action.config.paths import OUTPUT_DIR, in_output_dir, is_within
from cce_relevance.action.config.retriever_policy import INPUT as RETRIEVERS_INPUT
from cce_relevance.action.config.retriever_policy import check_repository_retrievers
from cce_relevance.action.runner.github import DEFAULT_API_URL, DEFAULT_SERVER_URL
from cce_relevance.api import Shard
from cce_relevance.errors import CceError
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRIC_KEYS
from cce_relevance.evaluation.rank_metrics import rank_metric_name
from cce_relevance.evaluation.selection import DEFAULT_BACKENDS
from cce_relevance.input_files import SpecialFileError, check_input

FailOn = Literal["drift", "regression", "inconclusive", "none"]
MAX_SHARDS = 256  # GitHub runs at most 256 jobs of one matrix
Mode = Literal["evaluate", "publish", "merge"]

FAIL_ON_CHOICES: tuple[FailOn, ...] = ("drift", "regression", "inconclusive", "none")
DEFAULT_POWER = 0.8
DEFAULT_ARTIFACT = "cce-relevance"
MODE_CHOICES: tuple[Mode, ...] = ("evaluate", "publish", "merge")
DEFAULT_CACHE_DIR = ".cce-relevance/cache"

# YAML 1.2 core-schema booleans only: `yes`/`on`/`1` are YAML 1.1 and mean different things to
# different parsers, so a value outside this table is rejected rather than guessed.
_BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
# A backend name is passed to the harness, which owns the list of valid backends; here we only
# refuse what cannot be a name at all (so a typo like `bm25 vector` fails with a clear message).
_BACKEND_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# The comment key ends up inside the hidden HTML marker of the PR comment; `-->` or spaces there
# would break the marker, so it is limited to a slug.
_COMMENT_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_GLOB_CHARS = re.compile(r"[*?\[]")
_ARTIFACT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
# A data branch's name and a file's path on it: slash-separated parts that git accepts in a ref
# and in a tree (no '..', no part starting with '.', no '.lock' ending), and that no option or
# shell could misread.
_BRANCH_PART = r"[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*"
_HISTORY_BRANCH = re.compile(rf"^{_BRANCH_PART}(?:/{_BRANCH_PART}){{0,9}}$")
DEFAULT_HISTORY_SIZE = 100  # `history-size`: the entries a push keeps when the input is not given
MAX_HISTORY_SIZE = 1000  # and at most (trend/history.py refuses a longer history)
DEFAULT_HISTORY_FILE = "history.json"  # the file on `history-branch` when `history` is not given
# GitHub caps a webhook's payload at 25 MB: a larger event file is not one it wrote
MAX_EVENT_BYTES = 64 << 20
SHOWN_CHARS = 200  # of a bad input's value in its error message


@dataclass(frozen=True)
class GitHubContext:
    """The `GITHUB_*` variables the Action uses; all optional so `docker run` works without them."""

    event_name: str
    event_path: Path | None
    # The payload can be large and holds user-controlled text: kept out of the repr.
    event: Mapping[str, Any] = field(repr=False)
    workspace: Path
    repository: str
    api_url: str
    server_url: str
    sha: str
    output_path: Path | None
    step_summary_path: Path | None
    run_id: str
    workflow: str = ""
    job: str = ""
    action: str = ""  # the step's id (or the runner's name for a step without one)
    run_attempt: str = ""


@dataclass(frozen=True)
class ActionInputs:
    """Validated Action inputs.

    Paths: `working_directory` is absolute and inside `github.workspace`; `fixtures` and the two
    sides of `golden` are POSIX paths relative to `working_directory`, so the same relative path
    can be looked up in a base or head checkout (the workspace is neither: for pull requests it
    is GitHub's ephemeral merge commit).
    """

    fixture_patterns: tuple[str, ...]
    fixtures: tuple[str, ...]
    golden: tuple[tuple[str, str], ...]
    backends: tuple[str, ...]
    github_token: str = field(repr=False)
    comment: bool
    fail_on: FailOn
    regression_metric: str  # a metric key (METRIC_KEYS), or a rank metric key (then scored with --metrics)
    alpha: float
    base_ref: str | None
    head_ref: str
    working_directory: Path
    comment_key: str | None
    github: GitHubContext
    cache_dir: Path  # the index cache (evaluate mode): absolute, inside `github.workspace`
    comment_on_change: bool = False  # `comment: on-change`: create only when something changed
    mode: Mode = "evaluate"
    run_id: str = ""  # `mode: publish`: the evaluating run whose artifact to post
    artifact: str = DEFAULT_ARTIFACT
    # `allow-repository-retrievers`, checked against the event: `command`/`url` backends may run
    repository_retrievers: bool = False
    # `shard: I/N`: score only the queries whose id hashes to shard I, save both sides, no comment
    # and no gate (the fan-in job's `mode: merge` has them)
    shard: Shard | None = None
    # `cost`: each backend's query latency (p50 ms, base → head) beside its means; off by default,
    # as wall time makes every run's comment and report differ
    cost: bool = False
    shards_dir: Path | None = None  # `mode: merge`: the shards' downloaded artifacts, inside the workspace
    # `history`: the trend history file (absolute, inside `github.workspace`), or None for no trend
    history: Path | None = None
    history_size: int = DEFAULT_HISTORY_SIZE  # `history-size`: the entries a push keeps
    # `history-branch`: the history is the file `history_file` on this branch of origin instead
    history_branch: str | None = None
    history_file: str = DEFAULT_HISTORY_FILE
    # `min-detectable-effect`: the smallest change of the gated metric worth detecting; a change the
    # test finds not significant while it could only detect larger ones is inconclusive (None: off)
    min_effect: float | None = None
    power: float = DEFAULT_POWER  # `power`: the chance of detecting that change, for the same test

    def golden_for(self, fixture: str) -> str | None:
        """The golden report configured for `fixture` (a path as in `fixtures`), if any."""
        return dict(self.golden).get(fixture)


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """Parse and validate the Action's inputs and GitHub context from `env` (usually os.environ)."""
    github = _read_context(env)
    mode = _choice("mode", _input(env, "mode"), MODE_CHOICES, "evaluate")
    comment = _input(env, "comment")
    key = _comment_key(_input(env, "comment-key")) or derived_comment_key(github, _input(env, "matrix"))
    run_id, artifact = _input(env, "run-id"), _input(env, "artifact")
    shards_dir = _input(env, "shards-dir")
    if mode == "publish":
        return _publish_inputs(env, github, key, run_id, artifact)
    shard_text = _input(env, "shard")
    if mode == "merge":
        if shard_text:
            raise CceError(
                "input 'shard' is for the matrix jobs that score the shards; `mode: merge` puts "
                "their artifacts together: leave 'shard' out of the fan-in job"
            )
        return _merge_inputs(env, github, key, comment, shards_dir)
    if shards_dir:
        raise CceError("input 'shards-dir' is read by `mode: merge` only: add `mode: merge`, or leave it out")
    shard = Shard.parse(shard_text, "input 'shard'") if shard_text else None
    if shard is not None and shard.count > MAX_SHARDS:
        raise CceError(
            f"input 'shard': {_shown(shard_text)} splits the queries {shard.count} ways: expected N of "
            "at most "
            f"{MAX_SHARDS}, the jobs one matrix can run (the merge needs every shard's artifact)"
        )
    working_directory = _working_directory(_input(env, "working-directory") or ".", github.workspace)
    patterns = _split_list(_input(env, "fixtures"))
    if not patterns:
        raise CceError(
            "input 'fixtures' is empty: expected one or more fixture files or glob patterns, "
            "newline- or comma-separated (for example 'eval/relevance/*.jsonl')"
        )
    fixtures = expand_fixtures(patterns, working_directory, github.workspace)
    return ActionInputs(
        fixture_patterns=patterns,
        fixtures=fixtures,
        golden=_golden(_input(env, "golden"), fixtures, working_directory, github.workspace),
        backends=_backends(_input(env, "backends")),
        github_token=_input(env, "github-token"),
        comment=shard is None and (comment == "on-change" or _boolean("comment", comment, default=True)),
        comment_on_change=comment == "on-change",
        fail_on=_choice("fail-on", _input(env, "fail-on"), FAIL_ON_CHOICES, "drift"),
        regression_metric=_regression_metric(_input(env, "regression-metric")),
        alpha=_alpha(_input(env, "alpha")),
        **_effect(env),
        base_ref=_ref("base-ref", _input(env, "base-ref")),
        head_ref=_ref("head-ref", _input(env, "head-ref")) or "HEAD",
        working_directory=working_directory,
        comment_key=key,
        github=github,
        repository_retrievers=check_repository_retrievers(
            _boolean(RETRIEVERS_INPUT, _input(env, RETRIEVERS_INPUT), default=False), github.event_name
        ),
        cache_dir=_cache_dir(_input(env, "cache-dir") or DEFAULT_CACHE_DIR, github.workspace),
        shard=shard,
        cost=_boolean("cost", _input(env, "cost"), default=False),
        history_size=_history_size(_input(env, "history-size")),
        **_history_place(_input(env, "history"), _input(env, "history-branch"), github.workspace),
    )


def _merge_inputs(
    env: Mapping[str, str], github: GitHubContext, key: str | None, comment: str, value: str
) -> ActionInputs:
    """`mode: merge` reads no fixtures and no repository: the shards saved what was scored and how;
    the gate (`fail-on`, `alpha`, and `regression-metric`, which must be the one the shards were
    scored for), the comment and the trend history are its own."""
    if not value:
        raise CceError(
            "input 'shards-dir' is empty: `mode: merge` needs the directory the shards' artifacts "
            "were downloaded to (actions/download-artifact's `path`)"
        )
    shards_dir = github.workspace / value
    if not is_within(github.workspace, shards_dir):
        raise CceError(
            f"input 'shards-dir': {_shown(value)} resolves outside the workspace {github.workspace}"
        )
    if not shards_dir.is_dir():
        raise CceError(
            f"input 'shards-dir': {_shown(value)} is not a directory under {github.workspace}: "
            "expected the shards' downloaded artifacts"
        )
    _outside_output_dir("shards-dir", value, shards_dir, github.workspace)
    _check_shard_states(shards_dir, github.workspace)
    return _without_fixtures(
        env,
        github,
        key,
        comment=comment == "on-change" or _boolean("comment", comment, default=True),
        comment_on_change=comment == "on-change",
        fail_on=_choice("fail-on", _input(env, "fail-on"), FAIL_ON_CHOICES, "drift"),
        regression_metric=_regression_metric(_input(env, "regression-metric")),
        alpha=_alpha(_input(env, "alpha")),
        **_effect(env),
        cache_dir=_cache_dir(_input(env, "cache-dir") or DEFAULT_CACHE_DIR, github.workspace),
        mode="merge",
        shards_dir=shards_dir.resolve(),
        history_size=_history_size(_input(env, "history-size")),
        **_history_place(_input(env, "history"), _input(env, "history-branch"), github.workspace),
    )


def _check_shard_states(shards_dir: Path, workspace: Path) -> None:
    """Every `*.json` below `shards-dir` is read as a shard state: each must be a regular file
    inside the workspace (a symlink in a downloaded artifact could point anywhere on the runner,
    a FIFO would block the merge). Directories reached through a symlink are not walked."""
    for state in sorted(shards_dir.rglob("*.json")):
        shown = _relative_posix(state, workspace)
        if not is_within(workspace, state):
            raise CceError(
                f"input 'shards-dir': {shown} resolves outside the workspace {workspace}: expected "
                "the shard states the `shard: I/N` jobs uploaded, as actions/download-artifact wrote them"
            )
        try:
            check_input(state)
        except SpecialFileError as exc:
            raise CceError(f"input 'shards-dir': {shown} {exc}") from None


def _publish_inputs(
    env: Mapping[str, str], github: GitHubContext, key: str | None, run_id: str, artifact: str
) -> ActionInputs:
    """`mode: publish` reads no fixtures: it posts what an evaluating run left in its artifact."""
    if not run_id.isdigit():
        raise CceError(
            f"input 'run-id': {_shown(run_id)} is not a workflow run id: "
            "`mode: publish` needs the evaluating run's id, "
            "for example `run-id: ${{ github.event.workflow_run.id }}`"
        )
    artifact = artifact or DEFAULT_ARTIFACT
    if not _ARTIFACT_NAME.match(artifact):
        raise CceError(
            f"input 'artifact': {_shown(artifact)} is not an artifact name: expected letters, digits, "
            "'.', '_', '-'"
        )
    return _without_fixtures(
        env,
        github,
        key,
        comment=True,
        fail_on="none",
        regression_metric="mrr",
        alpha=0.05,
        cache_dir=github.workspace / DEFAULT_CACHE_DIR,
        mode="publish",
        run_id=run_id,
        artifact=artifact,
    )


def _without_fixtures(
    env: Mapping[str, str], github: GitHubContext, key: str | None, **chosen: Any
) -> ActionInputs:
    """The inputs of a mode that reads no fixtures and no repository (`publish`, `merge`): what
    selects and scores sets left at their defaults, the rest `chosen`."""
    return ActionInputs(
        fixture_patterns=(),
        fixtures=(),
        golden=(),
        backends=DEFAULT_BACKENDS,
        github_token=_input(env, "github-token"),
        base_ref=None,
        head_ref="HEAD",
        working_directory=github.workspace,
        comment_key=key,
        github=github,
        **chosen,
    )


def derived_comment_key(github: GitHubContext, matrix: str) -> str | None:
    """The default `comment-key`: a digest of the workflow, the job, the step and the job's matrix
    values, so two steps or two matrix jobs never share (and fight over) one comment, while every
    run of the same step finds its own. None outside a workflow (a local `docker run`)."""
    if not github.workflow and not github.job:
        return None
    try:
        values = untrusted_json.loads(matrix) if matrix else None
    except ValueError:  # not JSON, or JSON we refuse to read (too deep, huge numbers): the text itself
        values = matrix
    identity = json.dumps([github.workflow, github.job, github.action, values or None], sort_keys=True)
    return "auto-" + hashlib.sha256(identity.encode()).hexdigest()[:12]


def expand_fixtures(
    patterns: tuple[str, ...], working_directory: Path, workspace: Path, *, required: bool = True
) -> tuple[str, ...]:
    """Expand fixture paths and globs against `working_directory`: sorted, deduplicated, relative.

    Public so the same expansion can be repeated inside a base checkout. With `required` a pattern
    that matches no file is an error (a typo must not silently score nothing); `required=False` is
    for the other side of a comparison, where a set the pull request adds does not exist yet. A
    match that resolves outside `workspace` through `..` or a symlink is always an error.
    """
    found: set[str] = set()
    for pattern in patterns:
        literal = not _GLOB_CHARS.search(pattern)
        matches = [pattern] if literal else glob.glob(pattern, root_dir=working_directory, recursive=True)
        files = [m for m in matches if (working_directory / m).is_file()]
        if not files and required:
            raise CceError(
                f"input 'fixtures': {_shown(pattern)} matches no file under {working_directory}: expected a "
                "fixture file or a glob relative to 'working-directory' (is the repository checked out?)"
            )
        for match in files:
            if not is_within(workspace, working_directory / match):
                raise CceError(
                    f"input 'fixtures': {_shown(match)} (from {_shown(pattern)}) resolves outside the "
                    "workspace "
                    f"{workspace}: expected files inside the checked-out repository"
                )
            _outside_output_dir("fixtures", match, working_directory / match, workspace)
            found.add(_relative_posix(working_directory / match, working_directory))
    return tuple(sorted(found))


def _input(env: Mapping[str, str], name: str) -> str:
    """One input by its action.yml name, under either spelling, stripped; '' when absent."""
    upper = name.upper()
    value = env.get(f"INPUT_{upper}") or env.get(f"INPUT_{upper.replace('-', '_')}") or ""
    return value.strip()


def step_summary_path(env: Mapping[str, str]) -> Path | None:
    """`GITHUB_STEP_SUMMARY`, the file the step summary is appended to; None when unset.

    Read on its own as well as in `GitHubContext`, so that an error found before the inputs are
    read (a bad input, an unreadable event file or workspace) still reaches the summary."""
    return _optional_path(env.get("GITHUB_STEP_SUMMARY"))


def _read_context(env: Mapping[str, str]) -> GitHubContext:
    workspace = _workspace(env.get("GITHUB_WORKSPACE"))
    event_path = _optional_path(env.get("GITHUB_EVENT_PATH"))
    return GitHubContext(
        event_name=env.get("GITHUB_EVENT_NAME", ""),
        event_path=event_path,
        event=_read_event(event_path),
        workspace=workspace,
        repository=env.get("GITHUB_REPOSITORY", ""),
        api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
        server_url=(env.get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
        sha=env.get("GITHUB_SHA", ""),
        output_path=_optional_path(env.get("GITHUB_OUTPUT")),
        step_summary_path=step_summary_path(env),
        run_id=env.get("GITHUB_RUN_ID", ""),
        workflow=env.get("GITHUB_WORKFLOW", ""),
        job=env.get("GITHUB_JOB", ""),
        action=env.get("GITHUB_ACTION", ""),
        run_attempt=env.get("GITHUB_RUN_ATTEMPT", ""),
    )


def _workspace(value: str | None) -> Path:
    """GITHUB_WORKSPACE (the current directory without it), which must be a directory this
    process can list: every path the Action reads or writes is inside it."""
    name = "GITHUB_WORKSPACE" if value else "the current directory"
    hint = (
        "the workspace is the directory actions/checkout fills; the step's user must be able to "
        "read it (check it out before this step, as the user the job runs as)"
    )
    try:
        workspace = Path(value or os.getcwd()).resolve()
        with os.scandir(workspace):
            pass
    except OSError as exc:
        shown = f"{name}={value}" if value else name
        raise CceError(f"{shown} cannot be read: {exc.strerror or exc}", hint=hint) from None
    return workspace


def _optional_path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _read_event(path: Path | None) -> Mapping[str, Any]:
    """The event payload; empty when there is none (a local `docker run`)."""
    if path is None:
        return MappingProxyType({})
    name = f"GITHUB_EVENT_PATH={path}"
    payload = untrusted_json.read_document(path, "the event payload", name=name, limit=MAX_EVENT_BYTES)
    return MappingProxyType(untrusted_json.expect_object(payload, name, error=CceError))


def _working_directory(value: str, workspace: Path) -> Path:
    candidate = workspace / value
    if not is_within(workspace, candidate):
        raise CceError(
            f"input 'working-directory': {_shown(value)} resolves outside the workspace {workspace}: "
            "expected a directory inside the checked-out repository"
        )
    if not candidate.is_dir():
        raise CceError(f"input 'working-directory': {_shown(value)} is not a directory under {workspace}")
    _outside_output_dir("working-directory", value, candidate, workspace)
    return candidate.resolve()


def _outside_output_dir(name: str, value: str, path: Path, workspace: Path) -> None:
    """Refuse a path an input names inside the output directory: it is replaced on every run
    (and holds the index cache's files, which no input may be read as)."""
    if in_output_dir(workspace, path):
        raise CceError(
            f"input '{name}': {_shown(value)} is inside {OUTPUT_DIR}/, the Action's output directory, "
            "which it "
            "replaces on every run",
            hint=f"keep what the input names outside {OUTPUT_DIR}/",
        )


def _cache_dir(value: str, workspace: Path) -> Path:
    """The index cache's directory: inside the workspace, the one place that outlives the step's
    container and that actions/cache on the host can save and restore."""
    candidate = workspace / value
    if not is_within(workspace, candidate):
        raise CceError(
            f"input 'cache-dir': {_shown(value)} resolves outside the workspace {workspace}: expected a "
            f"directory inside it, such as {DEFAULT_CACHE_DIR!r} (the default)"
        )
    return Path(os.path.normpath(candidate))  # symlinks unresolved: the Action refuses any on the way


def _history_place(value: str, branch: str, workspace: Path) -> dict[str, Any]:
    """`history` is a file in the workspace, or with `history-branch` a file's path on that branch."""
    if not branch:
        return {"history": _history(value, workspace)}
    if not _HISTORY_BRANCH.match(branch) or branch.endswith(".lock") or len(branch) > 200:
        raise CceError(
            f"input 'history-branch': {_shown(branch)} is not a branch name for the history: expected "
            "letters, digits, '_', '-', '.' and '/' between parts, such as 'cce-relevance-data'"
        )
    if value and (not _HISTORY_BRANCH.match(value) or len(value) > 200):
        raise CceError(
            f"input 'history': {_shown(value)} is not a file path on branch {_shown(branch)}: expected a "
            "relative "
            f"path of letters, digits, '_', '-', '.' and '/' without '..', such as {DEFAULT_HISTORY_FILE!r}"
        )
    return {"history_branch": branch, "history_file": value or DEFAULT_HISTORY_FILE}


def _history(value: str, workspace: Path) -> Path | None:
    """The trend history's file: inside the workspace, where actions/cache or an artifact step on
    the host can restore it before the run and save it after."""
    if not value:
        return None
    candidate = workspace / value
    if not is_within(workspace, candidate):
        raise CceError(
            f"input 'history': {_shown(value)} resolves outside the workspace {workspace}: expected a file "
            "path inside it, such as '.cce-relevance-history/history.json'"
        )
    return Path(os.path.normpath(candidate))  # symlinks unresolved: trend.check_history refuses any


def _history_size(value: str) -> int:
    if not value:
        return DEFAULT_HISTORY_SIZE
    if not re.fullmatch(r"[0-9]{1,6}", value) or not 1 <= int(value) <= MAX_HISTORY_SIZE:
        raise CceError(
            f"input 'history-size': {_shown(value)} is not a number of entries: expected a whole number "
            f"from 1 to {MAX_HISTORY_SIZE} (default {DEFAULT_HISTORY_SIZE})"
        )
    return int(value)


def _split_list(value: str) -> tuple[str, ...]:
    """Items separated by newlines or commas, stripped, empty ones dropped, order kept."""
    return tuple(item.strip() for item in re.split(r"[\n,]", value) if item.strip())


def _golden(
    value: str, fixtures: tuple[str, ...], working_directory: Path, workspace: Path
) -> tuple[tuple[str, str], ...]:
    """`FIXTURE=GOLDEN` lines. The golden file need not exist here: it is read from the head tree."""
    pairs: dict[str, str] = {}
    for line in value.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fixture, sep, golden = (part.strip() for part in line.partition("="))
        if not sep or not fixture or not golden:
            raise CceError(
                f"input 'golden': line {_shown(line)} is not of the form FIXTURE=GOLDEN "
                "(for example 'eval/relevance/code.jsonl=test/fixture/relevance/code.golden.json')"
            )
        key = _relative_posix(working_directory / fixture, working_directory)
        if key not in fixtures:
            raise CceError(
                f"input 'golden': fixture {_shown(fixture)} is not one of the configured fixtures "
                f"({', '.join(fixtures)}): expected a path as listed in 'fixtures'"
            )
        if key in pairs:
            raise CceError(
                f"input 'golden': fixture {_shown(fixture)} is given more than once: expected one golden each"
            )
        if not is_within(workspace, working_directory / golden):
            raise CceError(
                f"input 'golden': {_shown(golden)} resolves outside the workspace {workspace}: "
                "expected a path inside the repository"
            )
        _outside_output_dir("golden", golden, working_directory / golden, workspace)
        pairs[key] = _relative_posix(working_directory / golden, working_directory)
    return tuple(sorted(pairs.items()))


def _backends(value: str) -> tuple[str, ...]:
    names = _split_list(value) or DEFAULT_BACKENDS
    for name in names:
        if not _BACKEND_NAME.match(name):
            raise CceError(
                f"input 'backends': {_shown(name)} is not a backend name: expected a comma-separated list "
                f"such as {','.join(DEFAULT_BACKENDS)!r}"
            )
    return tuple(dict.fromkeys(names))


def _boolean(name: str, value: str, *, default: bool) -> bool:
    if not value:
        return default
    if value not in _BOOLEANS:
        also = " or on-change" if name == "comment" else ""
        raise CceError(f"input '{name}': {_shown(value)} is not a boolean: expected true or false{also}")
    return _BOOLEANS[value]


def _choice(name: str, value: str, choices: tuple[Any, ...], default: Any) -> Any:
    if not value:
        return default
    if value not in choices:
        raise CceError(
            f"input '{name}': {_shown(value)} is not supported: expected one of {', '.join(choices)}"
        )
    return value


def _regression_metric(value: str) -> str:
    """A reference metric key, or a rank metric key (`ndcg_at_k`, `average_precision`, `hit_at_5`,
    …): then both sides are scored with `--metrics` for it."""
    if not value or value in METRIC_KEYS or rank_metric_name(value) is not None:
        return value or DEFAULT_PRIMARY
    raise CceError(
        f"input 'regression-metric': {_shown(value)} is not supported: expected one of "
        f"{', '.join(METRIC_KEYS)}, or a rank metric key such as ndcg_at_k, average_precision, "
        "hit_at_5, r_precision"
    )


def _alpha(value: str) -> float:
    if not value:
        return 0.05
    try:
        alpha = float(value)
    except ValueError:
        alpha = math.nan
    if not 0.0 < alpha < 1.0:  # also false for NaN
        raise CceError(
            f"input 'alpha': {_shown(value)} is not a significance level: expected a number in (0, 1), "
            "e.g. 0.05"
        )
    return alpha


def _effect(env: Mapping[str, str]) -> dict[str, Any]:
    """`min-detectable-effect` (a positive number, or empty for off) and `power` (in [0.5, 1)),
    and `fail-on: inconclusive`, which needs the first."""
    value, power_text = _input(env, "min-detectable-effect"), _input(env, "power")
    effect = None
    if value:
        try:
            effect = float(value)
        except ValueError:
            effect = math.nan
        if not (math.isfinite(effect) and effect > 0.0):
            raise CceError(
                f"input 'min-detectable-effect': {_shown(value)} is not a change of the gated metric: "
                "expected "
                "a positive number such as 0.05 (empty: no inconclusive verdict)"
            )
    try:
        power = float(power_text) if power_text else DEFAULT_POWER
    except ValueError:
        power = math.nan
    if not 0.5 <= power < 1.0:  # also false for NaN
        raise CceError(
            f"input 'power': {_shown(power_text)} is not a power: expected a number in [0.5, 1), e.g. 0.8"
        )
    if effect is None and _input(env, "fail-on") == "inconclusive":
        raise CceError(
            "input 'fail-on': `inconclusive` needs 'min-detectable-effect', the smallest change of "
            "'regression-metric' the set must be able to detect (for example 0.05)"
        )
    return {"min_effect": effect, "power": power}


def _ref(name: str, value: str) -> str | None:
    """A git revision; a leading '-' would be read by git as an option, so it is refused."""
    if not value:
        return None
    if value.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in value):
        raise CceError(
            f"input '{name}': {_shown(value)} is not a git revision: expected a branch, tag or commit SHA"
        )
    return value


def _comment_key(value: str) -> str | None:
    if not value:
        return None
    if not _COMMENT_KEY.match(value):
        raise CceError(
            f"input 'comment-key': {_shown(value)} is not a key: expected 1-64 letters, digits, '.', '_' "
            "or '-'"
        )
    return value


def _shown(value: str) -> str:
    """`value` quoted for an error message, cut to `SHOWN_CHARS`: an input can be 128 KiB long,
    and the annotation that names it must stay one readable line."""
    if len(value) <= SHOWN_CHARS:
        return repr(value)
    return f"{value[:SHOWN_CHARS]!r}… ({len(value)} characters)"


def _relative_posix(path: Path, base: Path) -> str:
    """`path` relative to `base` as a normalised POSIX string, without resolving symlinks."""
    return Path(os.path.relpath(os.path.normpath(path), base)).as_posix()
