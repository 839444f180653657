"""`--cache DIR` / `--no-cache` on the commands that index, and the progress bar on a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cce_relevance.retrieval.cache.index_cache import APP_DIR, DB_FILE

from .helpers import cli

COMMANDS = {
    "run": lambda p: ["run", str(p / "set.jsonl")],
    "validate": lambda p: ["validate", str(p / "set.jsonl")],
    "search": lambda p: ["search", str(p / "corpus"), "password hash"],
    "chunks": lambda p: ["chunks", str(p / "corpus")],
    "index": lambda p: ["index", str(p / "corpus"), "--out", str(p / "store.json")],
}


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_default_cache_is_under_xdg_cache_home_and_changes_nothing(small_project, cache_home, command):
    args = COMMANDS[command](small_project)
    cold = cli(*args, "--no-cache")
    assert not cache_home.exists()
    filled = cli(*args)
    warm = cli(*args)
    assert cold.code == filled.code == warm.code and cold.code in (0, 1)
    assert cold.out == filled.out == warm.out and cold.err == filled.err == warm.err
    assert (cache_home / APP_DIR / DB_FILE).is_file()


def test_cache_dir_option(small_project, cache_home, tmp_path):
    args = COMMANDS["run"](small_project)
    chosen = tmp_path / "mine" / "cache"
    first = cli(*args, "--json", "--cache", str(chosen))
    second = cli(*args, "--json", "--cache", str(chosen))
    assert first.code == second.code == 0 and first.out == second.out
    assert (chosen / DB_FILE).is_file() and not cache_home.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--cache", "x", "--no-cache"], "--cache and --no-cache cannot be used together"),
        (["--cache", ""], "a value is required for '--cache'"),
    ],
)
def test_cache_usage_errors(small_project, extra, message):
    outcome = cli(*COMMANDS["chunks"](small_project), *extra)
    assert outcome.code == 2 and message in outcome.err and outcome.out == ""


def test_a_cache_directory_that_cannot_be_made_is_an_input_error(small_project, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    outcome = cli(*COMMANDS["chunks"](small_project), "--cache", str(blocker / "cache"))
    assert outcome.code == 2 and outcome.out == ""
    assert outcome.err.startswith(f"error: cannot use cache directory {blocker / 'cache'}: ")


# ---------------------------------------------------------------- progress bar


def _run_with_terminal_stderr(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """The CLI in a child whose stderr is a pseudo-terminal (stdout a pipe): (code, stdout, terminal)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cce_relevance", *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(follower)
    seen = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out, _ = proc.communicate(timeout=60)  # reads and closes the stdout pipe
    os.close(leader)
    return proc.returncode, out.decode(), seen.decode("utf-8", "replace")


@pytest.fixture
def terminal_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    return env


def test_progress_bar_on_a_terminal_then_erased(small_project, terminal_env):
    code, out, terminal = _run_with_terminal_stderr(["chunks", str(small_project / "corpus")], terminal_env)
    assert code == 0 and "auth.py" in out
    assert "indexing [" in terminal and "/3 files" in terminal
    assert terminal.endswith("\r")  # the last thing written returns over the erased line


@pytest.mark.parametrize(("extra", "env_extra"), [(["--json"], {}), ([], {"CI": "true"})])
def test_no_progress_bar_with_json_or_in_ci(small_project, terminal_env, extra, env_extra):
    code, out, terminal = _run_with_terminal_stderr(
        ["chunks", str(small_project / "corpus"), *extra], {**terminal_env, **env_extra}
    )
    assert code == 0 and out
    assert terminal == ""


def test_no_progress_bar_when_stderr_is_not_a_terminal(small_project, terminal_env):
    proc = subprocess.run(
        [sys.executable, "-m", "cce_relevance", "chunks", str(small_project / "corpus")],
        capture_output=True,
        text=True,
        env=terminal_env,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout and proc.stderr == ""
