"""The Action's error boundary, end to end (a real repository, the entry point as a real process):
unusable runner files and odd event payloads are `::error::` lines with exit 2 or warnings, a
junk comment list never changes the result, and a bug is one line with exit 70."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cce_relevance.action import main as action_main
from cce_relevance.errors import EXIT_INTERNAL
from tests.action.scenario import PullRequest, RunnerDirs, action_env, run_entrypoint

pytestmark = pytest.mark.slow  # the Action end to end, in a real repository


class _JunkApi(BaseHTTPRequestHandler):
    """A GitHub API whose comment list holds `"x"`, whose artifact listing is a list of junk and whose
    pull request has no head."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        junk = "/comments" in self.path or "/artifacts" in self.path
        body = b'["x", 7, null, {"id": "nine", "body": 3}]' if junk else b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        body = b'"not an object"'
        self.send_response(201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def junk_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JunkApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _run(tmp_path: Path, api_url: str = "http://127.0.0.1:9", *, event: object = None, **env: str):
    pr = PullRequest(tmp_path)
    pr.check_out_merge()
    dirs = RunnerDirs(tmp_path / "runner")
    dirs.prepare(pr.event() if event is None else {})
    if event is not None:
        (dirs.workflow / "event.json").write_text(json.dumps(event), encoding="utf-8")
    variables = {**action_env(dirs.places(pr.workspace), api_url, "ghs_test"), **env}
    return run_entrypoint(pr.workspace, dirs, variables)


def _error_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("::error")]


def test_github_output_that_is_a_directory_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "outdir").mkdir()
    run = _run(tmp_path, INPUT_COMMENT="false", GITHUB_OUTPUT=str(tmp_path / "outdir"))
    assert run.code == 2 and "Traceback" not in run.stderr
    assert any("GITHUB_OUTPUT" in line and "Is a directory" in line for line in _error_lines(run.stdout))


def test_github_output_in_a_missing_directory_is_a_configuration_error(tmp_path: Path) -> None:
    run = _run(tmp_path, INPUT_COMMENT="false", GITHUB_OUTPUT=str(tmp_path / "nowhere" / "output"))
    assert run.code == 2 and "Traceback" not in run.stderr
    assert any("GITHUB_OUTPUT" in line for line in _error_lines(run.stdout))


def test_a_step_summary_that_is_a_directory_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "summary-dir").mkdir()
    run = _run(tmp_path, INPUT_COMMENT="false", GITHUB_STEP_SUMMARY=str(tmp_path / "summary-dir"))
    assert run.code == 0 and "Traceback" not in run.stderr
    assert "::warning::Could not write the job summary" in run.stdout


def test_a_junk_comment_list_never_changes_the_result(tmp_path: Path, junk_api: str) -> None:
    run = _run(tmp_path, junk_api)
    assert run.code == 0 and "Traceback" not in run.stderr
    assert "::warning::Could not post the pull request comment" in run.stdout
    assert run.outputs["comment-url"] == ""


def _publish(tmp_path: Path, api_url: str, **env: str):
    """`mode: publish` as a `workflow_run` job runs it: no checkout, the evaluating run's id."""
    (tmp_path / "workspace").mkdir()
    dirs = RunnerDirs(tmp_path / "runner")
    dirs.prepare({"workflow_run": {"id": 77, "head_sha": "b" * 40}})
    variables = {
        **action_env(
            dirs.places(tmp_path / "workspace"),
            api_url,
            "ghs_test",
            inputs={
                "GITHUB_EVENT_NAME": "workflow_run",
                "INPUT_MODE": "publish",
                "INPUT_RUN-ID": "77",
                "INPUT_FIXTURES": "",
            },
        ),
        **env,
    }
    return run_entrypoint(tmp_path / "workspace", dirs, variables)


def test_a_junk_artifact_listing_is_a_warning_for_publish(tmp_path: Path, junk_api: str) -> None:
    run = _publish(tmp_path, junk_api)
    assert run.code == 0 and "Traceback" not in run.stderr and not _error_lines(run.stdout)
    assert "::warning::Could not publish the pull request comment: AttributeError" in run.stdout
    assert run.outputs["comment-url"] == ""


def test_github_output_that_is_a_directory_is_a_configuration_error_for_publish(
    tmp_path: Path, junk_api: str
) -> None:
    (tmp_path / "outdir").mkdir()
    run = _publish(tmp_path, junk_api, GITHUB_OUTPUT=str(tmp_path / "outdir"))
    assert run.code == 2 and "Traceback" not in run.stderr
    assert any("GITHUB_OUTPUT" in line and "Is a directory" in line for line in _error_lines(run.stdout))


@pytest.mark.parametrize("pull_request", ["a string", [1, 2], 7, {"base": "main", "head": ["x"]}, {}])
def test_a_pull_request_payload_of_the_wrong_shape_is_a_named_error(
    tmp_path: Path, pull_request: object
) -> None:
    run = _run(tmp_path, event={"pull_request": pull_request}, INPUT_COMMENT="false")
    assert run.code == 2 and "Traceback" not in run.stderr
    (line,) = _error_lines(run.stdout)
    assert "pull_request.base.sha" in line and "None" not in line


def test_an_event_file_that_is_not_utf8_is_a_named_error(tmp_path: Path) -> None:
    pr = PullRequest(tmp_path)
    dirs = RunnerDirs(tmp_path / "runner")
    dirs.prepare({})
    (dirs.workflow / "event.json").write_bytes('{"a": "é"}'.encode("utf-16"))
    run = run_entrypoint(pr.workspace, dirs, action_env(dirs.places(pr.workspace), "http://127.0.0.1:9", "t"))
    assert run.code == 2 and "not UTF-8" in run.stdout and "Traceback" not in run.stderr


def test_a_bug_in_the_action_is_one_error_line_and_exit_70(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(env: object) -> None:
        raise AttributeError("'str' object has no attribute 'get'")

    monkeypatch.setattr(action_main, "read_inputs", broken)
    assert action_main.main() == EXIT_INTERNAL
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("::error title=cce-relevance%3A internal error::internal error: AttributeError")
    assert "please report it" in line
