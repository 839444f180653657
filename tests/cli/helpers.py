"""Run the real `cce-relevance` CLI in-process (click's runner) and as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from cce_relevance.cli import main


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def cli(*args: str, cwd: str | Path | None = None) -> Outcome:
    """Invoke the CLI in-process with separate stdout/stderr; exceptions propagate (no masking)."""
    runner = CliRunner()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return Outcome(result.exit_code, result.stdout, result.stderr)


def cli_process(*args: str, cwd: str | Path | None = None) -> Outcome:
    """The installed console entry point in a real child process."""
    proc = subprocess.run(
        [sys.executable, "-m", "cce_relevance", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)
