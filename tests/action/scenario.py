"""A pull request in a real git repository, and the Action run on it as a real process.

Shared by test_main_e2e.py (the entry point run directly) and docker_e2e.py (the same run inside
the image, compared with the direct one). Everything is deterministic: fixed commit dates and
identities give the same SHAs on every build, so two builds of the scenario produce byte-identical
reports, comments and outputs.

The history is the one GitHub hands a `pull_request` job:

    main     c1 ── c2                    c1: corpus, fixture set, golden (made by the real CLI)
               \\                             and the extra files a test asks for
    feature     h1 ── h2 ...             c2: an unrelated change on main (base.sha moved on)
                                         h1: a corpus edit that moves a query's answer down
                                         h2: the golden brought up to date (or other pushes)

and the workspace is detached at the merge of main and feature, as `actions/checkout` leaves
`refs/pull/N/merge`. The event's base.sha is c2; the Action must compare the merge-base (c1)
with the head, and never score the workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from tests.action.fake_github import FakeGitHub
from tests.action.test_workflow_commands import read_outputs

ROOT = Path(__file__).resolve().parents[2]
REPO = "octo/demo"
PR_NUMBER = 7
RUN_ID = "4242"
SERVER_URL = "https://github.example"
FIXTURE = "eval/search.jsonl"
GOLDEN = "eval/search.golden.json"

CORPUS = {
    "corpus/billing.py": '''def compute_invoice_total(lines, tax_rate):
    """Sum the invoice lines and add tax."""
    subtotal = sum(line.amount for line in lines)
    return subtotal * (1 + tax_rate)


def format_price(cents):
    return f"${cents / 100:.2f}"
''',
    "corpus/shipping.py": '''def record_shipment(order_id, carrier):
    """Store the carrier and tracking number of a shipped order."""
    return {"order": order_id, "carrier": carrier}


def estimate_delivery(days):
    return days + 2
''',
    "corpus/auth.py": '''def check_password(user, password):
    """Compare a password with the stored hash."""
    return user.password_hash == hash(password)


def rotate_session_token(session):
    session.token = None
    return session
''',
    "corpus/cache.py": '''class LruCache:
    """A least recently used cache with a fixed capacity."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.items = {}

    def evict_oldest(self):
        oldest = next(iter(self.items))
        del self.items[oldest]
''',
}

FIXTURES = """{"schema":"cce.relevance/v1","corpus":"../corpus"}
{"id":"invoice-total","query":"compute the invoice total with tax","expected":["billing.py"],"k":3}
{"id":"record-shipment","query":"record a shipment carrier","expected":["shipping.py"],"k":3}
{"id":"password-check","query":"check a user password against the hash","expected":["auth.py"],"k":3}
{"id":"lru-evict","query":"evict the oldest cache entry","expected":["cache.py#class_definition"],"k":3}
"""

# A second set whose first four queries are anchored in billing.py: renaming that file at head
# leaves their anchors stale (a drop on every backend that the regression test must not count).
BILLING_FIXTURE = "eval/billing.jsonl"
BILLING_FIXTURES = (
    '{"schema":"cce.relevance/v1","corpus":"../corpus"}\n'
    '{"id":"invoice-total","query":"compute the invoice total with tax",'
    '"expected":["billing.py#function_definition@1-4"],"k":3}\n'
    '{"id":"format-price","query":"format a price in cents as dollars","expected":["billing.py@7-8"],"k":3}\n'
    '{"id":"invoice-lines","query":"sum the invoice lines subtotal","expected":["billing.py"],"k":3}\n'
    '{"id":"price-format","query":"format_price cents","expected":["billing.py#function_definition"],"k":3}\n'
    '{"id":"record-shipment","query":"record a shipment carrier","expected":["shipping.py"],"k":3}\n'
    '{"id":"password-check","query":"check a user password against the hash","expected":["auth.py"],"k":3}\n'
)

# A new file that answers the invoice query better than billing.py: at head, bm25 ranks the
# expected file 3rd instead of 1st (MRR 1 -> 1/3 for that query, every other query unchanged).
RANKING_CHANGE = {
    "corpus/reports.py": '''def invoice_total_report(invoices, tax):
    """Compute the invoice total with tax for every invoice, for the monthly report."""
    return [compute(invoice, tax) for invoice in invoices]


def compute(invoice, tax):
    return invoice.total * tax
''',
}

# RANKING_CHANGE and a function added above billing.py's (five lines): its range anchors' lines
# move (`@1-4` is `@6-9` at head) and its `@7-8` lines then hold another function.
MOVING_CHANGE = {
    **RANKING_CHANGE,
    "corpus/billing.py": 'def tax_rate():\n    """The tax rate."""\n    return 0.2\n\n\n'
    + CORPUS["corpus/billing.py"],
}

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


class PullRequest:
    """The scenario's repository, built in `root / "workspace"` (the Action's GITHUB_WORKSPACE)."""

    def __init__(self, root: Path, base_files: dict[str, str] | None = None) -> None:
        self.workspace = root / "workspace"
        self.workspace.mkdir(parents=True)
        self._git("init", "-q", "-b", "main")
        self._write({**CORPUS, FIXTURE: FIXTURES, **(base_files or {})})
        self._write_golden()
        self._commit("c1: corpus, fixture set and golden")
        self._git("branch", "feature")
        self._write({"docs/README.md": "# demo\n"})
        self._commit("c2: unrelated change on main")
        self._git("checkout", "-q", "feature")

    @property
    def base_sha(self) -> str:
        """The event's `pull_request.base.sha`: main's tip, not the merge-base."""
        return self._git("rev-parse", "main")

    @property
    def head_sha(self) -> str:
        return self._git("rev-parse", "feature")

    def merge_base(self) -> str:
        return self._git("merge-base", "main", "feature")

    def push(self, files: dict[str, str], message: str) -> str:
        """Commit `files` on the feature branch; returns the new head."""
        self._git("checkout", "-q", "feature")
        self._write(files)
        return self._commit(message)

    def rename(self, old: str, new: str, message: str) -> str:
        """`git mv` on the feature branch and commit; returns the new head."""
        self._git("checkout", "-q", "feature")
        self._git("mv", old, new)
        return self._commit(message)

    def update_golden(self, message: str) -> str:
        """Regenerate the golden on the feature branch and commit it; returns the new head."""
        self._git("checkout", "-q", "feature")
        self._write_golden()
        return self._commit(message)

    def _write_golden(self) -> None:
        """The golden, written by the real CLI (`--update-golden`) from the checked-out tree."""
        subprocess.run(
            [sys.executable, "-m", "cce_relevance", "run", FIXTURE, "--golden", GOLDEN, "--update-golden"],
            cwd=self.workspace,
            check=True,
            capture_output=True,
        )

    def check_out_merge(self) -> None:
        """Leave the workspace where actions/checkout leaves it: detached at the PR's merge commit."""
        self._git("checkout", "-q", "--detach", "main")
        self._git("merge", "-q", "--no-ff", "--no-edit", "feature")

    def event(self) -> dict[str, object]:
        """A `pull_request` (synchronize) payload, trimmed to what GitHub sends that matters here."""
        return {
            "action": "synchronize",
            "number": PR_NUMBER,
            "pull_request": {
                "number": PR_NUMBER,
                "base": {"ref": "main", "sha": self.base_sha},
                "head": {"ref": "feature", "sha": self.head_sha},
            },
            "repository": {"full_name": REPO},
        }

    def _write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            path = self.workspace / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def _commit(self, message: str) -> str:
        self._git("add", "-A")
        self._git("commit", "-q", "-m", message)
        return self._git("rev-parse", "HEAD")

    def _git(self, *args: str) -> str:
        # safe.directory: the Docker scenario hands the workspace to another uid between runs.
        command = ["git", "-c", "safe.directory=*", *args]
        done = subprocess.run(
            command,
            cwd=self.workspace,
            env={**os.environ, **_GIT_ENV},
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()


class Places(NamedTuple):
    """Where the Action process sees the runner's directories (host paths, or the container's)."""

    workspace: str
    workflow: str  # holds event.json
    file_commands: str  # holds the GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files
    home: str


CONTAINER_PLACES = Places("/github/workspace", "/github/workflow", "/github/file_commands", "/github/home")


@dataclass(frozen=True)
class RunnerDirs:
    """The host side of the runner's per-step directories, next to (not inside) the workspace."""

    root: Path

    @property
    def workflow(self) -> Path:
        return self.root / "workflow"

    @property
    def file_commands(self) -> Path:
        return self.root / "file_commands"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def places(self, workspace: Path) -> Places:
        return Places(str(workspace), str(self.workflow), str(self.file_commands), str(self.home))

    def prepare(self, event: dict[str, object]) -> None:
        """A new step: the event payload written, empty output and summary files (as GitHub does)."""
        for directory in (self.workflow, self.file_commands, self.home):
            directory.mkdir(parents=True, exist_ok=True)
        (self.workflow / "event.json").write_text(json.dumps(event), encoding="utf-8")
        for name in ("output", "summary"):
            (self.file_commands / name).write_text("", encoding="utf-8")

    def outputs(self) -> dict[str, str]:
        return read_outputs(self.file_commands / "output")

    def summary(self) -> str:
        return (self.file_commands / "summary").read_text(encoding="utf-8")


def action_env(
    places: Places,
    api_url: str,
    token: str,
    *,
    token_input: str = "INPUT_GITHUB-TOKEN",
    inputs: dict[str, str] | None = None,
) -> dict[str, str]:
    """The variables GitHub sets for a Docker action step on a `pull_request` event.

    Built from scratch (only PATH is taken from this process) so that a CI runner's own GITHUB_*
    variables cannot leak in. `token_input` picks the token's spelling: GitHub's
    `INPUT_GITHUB-TOKEN`, or the `INPUT_GITHUB_TOKEN` that `docker run --env-file` users write.
    """
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": places.home,
        "LANG": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": f"{places.workflow}/event.json",
        "GITHUB_WORKSPACE": places.workspace,
        "GITHUB_OUTPUT": f"{places.file_commands}/output",
        "GITHUB_STEP_SUMMARY": f"{places.file_commands}/summary",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": SERVER_URL,
        "GITHUB_RUN_ID": RUN_ID,
        "INPUT_FIXTURES": FIXTURE,
        "INPUT_GOLDEN": f"{FIXTURE}={GOLDEN}",
        "INPUT_COMMENT": "true",
        token_input: token,
        **(inputs or {}),
    }


@dataclass(frozen=True)
class ActionRun:
    """What one run of the Action left behind."""

    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str


Act = Callable[..., ActionRun]  # the `act` fixture (conftest.py): run the Action with these inputs


def run_entrypoint(workspace: Path, dirs: RunnerDirs, env: dict[str, str]) -> ActionRun:
    """`python entrypoint.py` in the workspace, as the image's ENTRYPOINT runs it."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "entrypoint.py")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return ActionRun(done.returncode, done.stdout, done.stderr, dirs.outputs(), dirs.summary())


SETS = "eval/*.jsonl"  # both sets of a `Copy`


class Copy:
    """A copy of the scenario with both fixture sets and the MOVING_CHANGE pushed (the same commits
    in every copy: the history is deterministic), its loopback GitHub (or none: then nothing may be
    posted) and runner directories. Two copies run side by side give outputs to compare."""

    def __init__(self, root: Path, fake: FakeGitHub | None) -> None:
        self.pr = PullRequest(root, base_files={BILLING_FIXTURE: BILLING_FIXTURES})
        self.pr.push(MOVING_CHANGE, "h1: a reports module, and a function above billing.py's")
        self.fake = fake
        self.dirs = RunnerDirs(root / "runner")

    def act(self, event: dict[str, object] | None = None, **inputs: str) -> ActionRun:
        """The Action on the pull request (or on `event`, with GITHUB_EVENT_NAME in `inputs`)."""
        self.pr.check_out_merge()
        self.dirs.prepare(self.pr.event() if event is None else event)
        env = action_env(
            self.dirs.places(self.pr.workspace),
            self.fake.url if self.fake else "http://127.0.0.1:9",
            self.fake.token if self.fake else "ghs_unused",
            inputs={"INPUT_FIXTURES": SETS, **inputs},
        )
        return run_entrypoint(self.pr.workspace, self.dirs, env)

    def files(self) -> dict[str, bytes]:
        """The output directory's files but the cache directory's (index cache, saved sides)."""
        out = self.pr.workspace / ".cce-relevance"
        return {
            p.relative_to(out).as_posix(): p.read_bytes()
            for p in sorted(out.rglob("*"))
            if p.is_file() and not p.relative_to(out).as_posix().startswith("cache/")
        }

    def comments(self) -> list[str]:
        assert self.fake is not None
        return [c["body"] for c in self.fake.comments(REPO, PR_NUMBER)]
