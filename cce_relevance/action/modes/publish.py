"""`mode: publish`: post the comment an evaluating run left in its artifact (fork pull requests).

A pull request from a fork runs `pull_request` workflows with a read-only token, so the
evaluating run cannot comment. It uploads `.cce-relevance/` as an artifact instead, and a
`workflow_run` job (which may write, and never checks out the fork's code) runs the Action with
`mode: publish`. That job must treat the artifact as untrusted data — a fork controls the
evaluating run entirely — so here:

* the artifact is found through the REST API by the evaluating run's id and name, and refused
  above `ARTIFACT_LIMIT` bytes; only `comment.md` and `pull-request.json` are read from the zip,
  each with its own size cap (the zip's own size claims are not trusted: reads are capped);
* the pull request number comes from the artifact, so it is accepted only if that pull request's
  head is the commit the evaluating run ran on (`workflow_run.head_sha`, from GitHub's event,
  not from the artifact), and the artifact says the same head; a pull request that moved on is
  left to the newer run's publication, with a notice;
* the comment text gets our own marker as its first line (any marker line it brings is dropped),
  every `@mention` and `#123` reference in it is broken with a zero-width space (the bot must not
  ping anyone on the fork's behalf), and it is fitted to GitHub's limit;
* the whole job (every API call, retry wait and the download) has one deadline
  (`deadline.POSTING_BUDGET`), so an API or storage host that never answers cannot hold the runner.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from cce_relevance import schemas, untrusted_json
from cce_relevance.action.config.inputs import ActionInputs
from cce_relevance.action.report.fit import fit_body
from cce_relevance.action.runner.deadline import within_deadline
from cce_relevance.action.runner.github import GitHubClient, GitHubError
from cce_relevance.action.runner.pr_comment import COMMENT_LIMIT, comment_marker, upsert_comment
from cce_relevance.action.runner.workflow_commands import annotation, write_step_outputs
from cce_relevance.errors import EXIT_OK, CceError
from cce_relevance.reporting.markdown_safe import break_pings

ARTIFACT_LIMIT = 16 * 1024 * 1024  # the zip; the two files we read are small
COMMENT_FILE_LIMIT = 4 * COMMENT_LIMIT  # bytes of comment.md (UTF-8: up to 4 bytes a character)
META_FILE_LIMIT = 4096
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def publish(inputs: ActionInputs) -> int:
    """Post the evaluating run's comment; 0 unless the configuration is wrong (exit 2 by CceError).

    Posting is best effort, as in the evaluating mode: a missing, oversized or malformed artifact,
    a pull request that moved on, an API error and junk in the API's replies are warnings, exit 0
    (a re-run of the job is the remedy, and a fork must not be able to fail the base repository's
    workflow). The whole of it — every API call, retry wait and the artifact download — gets one
    deadline, `deadline.POSTING_BUDGET` seconds; past it the job warns and exits 0 with an empty
    `comment-url`."""
    github = inputs.github
    run = github.event.get("workflow_run")
    if github.event_name != "workflow_run" or not isinstance(run, dict):
        raise CceError(
            "`mode: publish` runs in a `workflow_run` job (after the evaluating workflow), "
            f"not on {github.event_name or 'this event'!r}",
            hint="see docs/examples/fork-safe/relevance-publish.yml",
        )
    head = run.get("head_sha")
    if not isinstance(head, str) or not _SHA.match(head):
        raise CceError("the workflow_run event has no valid workflow_run.head_sha")
    if not inputs.github_token or not github.repository:
        raise CceError("`mode: publish` needs `github-token` and GITHUB_REPOSITORY")
    try:
        client = GitHubClient(github.api_url, inputs.github_token)
    except ValueError as exc:  # GITHUB_API_URL or the token's characters, refused before any request
        raise CceError(f"`mode: publish` cannot reach GitHub: {exc}") from None
    repository = github.repository

    def attempt(lines: list[str]) -> str:
        try:
            with client:
                comment, meta = _artifact_files(client, repository, inputs.run_id, inputs.artifact)
                return _post(client, repository, comment, meta, head, inputs.run_id, lines)
        except GitHubError as exc:
            lines.append(annotation("warning", f"Could not publish the pull request comment: {exc}"))
        except ArtifactError as exc:
            lines.append(annotation("warning", f"Not publishing: {exc}"))
        return ""

    url = within_deadline(
        attempt,
        "publishing the pull request comment",
        failed="Could not publish the pull request comment",
        after="Re-run this job to try again; the report is in the evaluating run's job summary.",
    )
    if github.output_path is not None:
        write_step_outputs(github.output_path, {"comment-url": url})
    return EXIT_OK


class ArtifactError(Exception):
    """The artifact is missing, too large or malformed: nothing is posted."""


def _artifact_files(client: GitHubClient, repo: str, run_id: str, name: str) -> tuple[str, dict[str, Any]]:
    listing = client.get(
        f"/repos/{repo}/actions/runs/{run_id}/artifacts", params={"name": name, "per_page": 100}
    )
    found = [
        a
        for a in (listing or {}).get("artifacts") or []
        if isinstance(a, dict) and a.get("name") == name and not a.get("expired")
    ]
    if not found:
        raise ArtifactError(
            f"run {run_id} has no artifact named {name!r} (did the evaluating run upload "
            "`.cce-relevance/` under that name?)"
        )
    artifact = found[0]
    size = artifact.get("size_in_bytes")
    if not isinstance(size, int) or size > ARTIFACT_LIMIT:
        raise ArtifactError(f"artifact {name!r} is {size} bytes, over the {ARTIFACT_LIMIT}-byte limit")
    data = client.download(f"/repos/{repo}/actions/artifacts/{int(artifact['id'])}/zip", ARTIFACT_LIMIT)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            comment = _member(archive, "comment.md", COMMENT_FILE_LIMIT).decode("utf-8")
            meta = untrusted_json.loads(_member(archive, "pull-request.json", META_FILE_LIMIT))
    except (zipfile.BadZipFile, UnicodeDecodeError, ValueError) as exc:
        raise ArtifactError(f"artifact {name!r} is not what the evaluating run writes: {exc}") from None
    try:
        return comment, read_pull_request(untrusted_json.Field(meta, "pull-request.json"))
    except CceError as exc:  # the artifact's fault, not the configuration's: nothing is posted
        raise ArtifactError(exc.message) from None


def read_pull_request(field: untrusted_json.Field) -> dict[str, Any]:
    """The artifact's `pull-request.json` (`cce.relevance.pull-request/v1`), every field checked:
    `number` a whole number from 1, `head` a commit (40 or 64 lowercase hex digits),
    `comment_key` null or a key (letters, digits, `_.-`, at most 64), `changed` and `on_change`
    booleans, and nothing else; a `CceError` naming the field otherwise."""
    f = field.object(("schema", "number", "head", "comment_key", "changed", "on_change"))
    f["schema"].const(schemas.PULL_REQUEST)
    key = f["comment_key"].optional(untrusted_json.Field.line)
    if key is not None and not _KEY.match(key):
        f["comment_key"].expected("a comment key (letters, digits, _ . -; at most 64)")
    return {
        "number": f["number"].integer(1, 2**63 - 1),
        "head": f["head"].commit(),
        "comment_key": key,
        "changed": f["changed"].boolean(),
        "on_change": f["on_change"].boolean(),
    }


def _member(archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """One file of the artifact, read at most `limit` bytes (a zip's sizes are claims)."""
    try:
        with archive.open(name) as handle:
            data = handle.read(limit + 1)
    except KeyError:
        raise ArtifactError(f"the artifact has no {name}") from None
    if len(data) > limit:
        raise ArtifactError(f"{name} in the artifact is over {limit} bytes")
    return data


def _post(
    client: GitHubClient,
    repo: str,
    comment: str,
    meta: dict[str, Any],
    head: str,
    run_id: str,
    lines: list[str],
) -> str:
    """Post `comment` on the artifact's pull request; the URL, or '' (what it says goes to `lines`)."""
    number, key = meta["number"], meta["comment_key"]
    if meta["head"] != head:
        raise ArtifactError(f"the artifact was made for another commit than the evaluating run's {head[:12]}")
    pull = client.get(f"/repos/{repo}/pulls/{number}")
    current = ((pull or {}).get("head") or {}).get("sha") if isinstance(pull, dict) else None
    if current != head:
        lines.append(
            annotation(
                "notice",
                f"Not publishing: pull request #{number} is now at "
                f"{str(current)[:12]}, not the evaluated {head[:12]}; its own run publishes.",
            )
        )
        return ""
    marker = comment_marker(key)
    body = fit_body(
        marker,
        [untrusted_comment(comment)],
        f"<sub>Published from the artifact of run {run_id} (`mode: publish`).</sub>",
        full_report="the evaluating run's job summary",
    )
    create = meta["changed"] or not meta["on_change"]
    result = upsert_comment(client, repo, number, body, marker, create=create)
    if result.warning:
        lines.append(annotation("warning", result.warning))
        return ""
    lines.append(f"Pull request comment {result.action}: {result.url or ''}")
    return result.url or ""


def untrusted_comment(text: str) -> str:
    """The artifact's comment without its marker line, with mentions and references broken."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[0].startswith("<!--"):
        lines = lines[1:]
    return break_pings("\n".join(lines).strip("\n"))
