"""One error boundary for everything the Action reads from the workspace: every input
that names a file or a directory, the retriever configuration each side reads, and the runner's
files (the event payload, the workspace), crossed with every kind of hostile file a pull request
or an earlier step can leave where the input points.

A cell ends in a configuration error whose message names the input (exit 2) — never an
internal error (exit 70), never a block — unless the input documents another outcome for that
content, which the table names with its reason (`DOCUMENTED`), or the case cannot happen for the
input's kind (`NOT_APPLICABLE`, with the reason).

The cells call what the Action reads the input with, in this process and under an alarm (a read
that blocks fails its cell instead of hanging the suite): `read_inputs` first, then the input's
reader — `score_sides` on a real repository for what is read from the head commit (fixtures,
golden, `cce-relevance.toml`), `prepare_cache_dir`, `check_history` and the history stores,
`read_shards`. What git cannot commit (a FIFO, a device, a file over GitHub's 100 MB) never
reaches a side: those cells call the side's file reader on the file itself (`reader alone`).
`test_one_cell_per_input_end_to_end` then runs the entry point as a real process for one cell of
each input, to prove the boundary turns it into one `::error` line and exit 2.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import pytest

from cce_relevance import api
from cce_relevance.action.config.inputs import MAX_EVENT_BYTES, ActionInputs, read_inputs
from cce_relevance.action.saved.shards import read_shards
from cce_relevance.action.scoring.sides import score_sides
from cce_relevance.action.trend.branch_store import HistoryBranch
from cce_relevance.action.trend.history import MAX_BYTES as MAX_HISTORY_BYTES
from cce_relevance.action.trend.history import HistoryError
from cce_relevance.action.trend.record import check_history, history_store
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.action.workspace.output_dir import prepare_cache_dir
from cce_relevance.errors import CceError
from cce_relevance.evaluation.fixtures import load_fixtures
from cce_relevance.evaluation.golden import GoldenFile
from cce_relevance.input_files import MAX_INPUT_BYTES
from cce_relevance.project_config import MAX_CONFIG_BYTES
from tests.action.scenario import FIXTURE, GOLDEN, PullRequest
from tests.hostile.action_runs import ZERO, refused, run_action
from tests.hostile.conftest import CORPUS, FIXTURES
from tests.retrieval.corpora import write_corpus
from tests.special_files import device_node

CASES = (
    "huge",  # a sparse file one byte over the reader's limit
    "deep",  # 100,000 `[`
    "not-utf8",  # a 0xff byte
    "wrong-type",  # an array where an object (a table) is expected
    "link-outside",  # a symlink to a file (a directory) outside the workspace
    "fifo",
    "char-device",  # a node with /dev/zero's numbers
    "wrong-kind",  # a directory where a file is expected, a regular file where a directory is
    "dangling-link",
    "output-dir",  # the input names a path in `.cce-relevance/`, the Action's output directory
)
CONTENT = ("huge", "deep", "not-utf8", "wrong-type")
KINDS = ("link-outside", "fifo", "char-device", "wrong-kind", "dangling-link")

WORKSPACE_FILE = "git cannot commit a FIFO or a device, and GitHub refuses a file over 100 MB"
NOT_A_FILE = "a directory has no content of its own: what is read below it is another row's"
RUNNER_FILE = "the runner's own file, outside the workspace by design (nothing measures it against it)"
TEXT = "a value, never a path"
HISTORY_DAMAGED = "action.yml: 'A damaged file is a warning: a push starts a new history'"
GOLDEN_BYTES = (
    "action.yml: the check fails on any byte difference; a golden that is no report is a drift whose "
    "raw diff and update command say so (golden.py: 'then only the raw diff can tell')"
)


@dataclass(frozen=True)
class Row:
    """One input: how its cells are planted and read (`read(cell, case)`), the words its errors
    must hold, and the cases it answers otherwise (`documented`) or cannot meet (`not_applicable`)."""

    name: str
    named: str
    read: Callable[[Cell, str], object]
    not_applicable: dict[str, str] = field(default_factory=dict)
    documented: dict[str, tuple[str, str]] = field(default_factory=dict)
    text: bool = False  # a value, not a path: `huge` is a long value, not a large file


class Timeout(Exception):
    """A read blocked past the cell's alarm."""


@contextlib.contextmanager
def alarm(seconds: float = 30.0) -> Iterator[None]:
    """Fail a blocking read (a FIFO waits for a writer forever) instead of hanging the suite."""

    def ring(_signum: int, _frame: FrameType | None) -> None:
        raise Timeout(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


GIT = [
    "git",
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "safe.directory=*",
]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed repository with the hostile suite's corpus and fixture set, copied per cell."""
    repo = tmp_path_factory.mktemp("template") / "workspace"
    write_corpus(repo / "corpus", CORPUS)
    (repo / "set.jsonl").write_text(FIXTURES, encoding="utf-8")
    (repo / "set.golden.json").write_text("{}\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "c1")
    return repo


@dataclass
class Cell:
    """A copy of the template in `root / "workspace"`, a file outside it to link to, and the
    environment `read_inputs` is given."""

    root: Path
    workspace: Path
    outside: Path
    env: dict[str, str]

    def commit(self) -> str:
        git(self.workspace, "add", "-A")
        git(self.workspace, "commit", "-q", "--allow-empty", "-m", "hostile")
        return git(self.workspace, "rev-parse", "HEAD")

    def inputs(self, **inputs: str) -> ActionInputs:
        return read_inputs({**self.env, **inputs})


@pytest.fixture
def cell(template: Path, tmp_path: Path) -> Cell:
    workspace = tmp_path / "workspace"
    shutil.copytree(template, workspace, symlinks=True)
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "file.json").write_text('{"schema": "x"}\n', encoding="utf-8")
    env = {
        "GITHUB_WORKSPACE": str(workspace.resolve()),
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "INPUT_FIXTURES": "set.jsonl",
        "INPUT_BACKENDS": "bm25",
    }
    return Cell(tmp_path, workspace.resolve(), outside, env)


def plant(case: str, path: Path, cell: Cell, *, limit: int = 0, wrong_type: bytes = b"[1, 2, 3]\n") -> None:
    """Put `case` at `path` (a file input's place; for a directory input, `wrong-kind` is a file)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if case == "huge":
        with open(path, "wb") as handle:
            handle.truncate(limit + 1)  # sparse: costs no disk
    elif case == "deep":
        path.write_bytes(b"[" * 100_000)
    elif case == "not-utf8":
        path.write_bytes(b'{"schema": "\xff"}\n')
    elif case == "wrong-type":
        path.write_bytes(wrong_type)
    elif case == "link-outside":
        path.symlink_to(cell.outside / "file.json")
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "char-device":
        device_node(path, ZERO)
    elif case == "wrong-kind":
        (path / "inside").mkdir(parents=True)
        (path / "inside" / "x").write_text("x\n")
    elif case == "dangling-link":
        path.symlink_to("nowhere")  # relative: it dangles in a checkout of the commit too
    else:
        raise AssertionError(case)


def plant_directory(case: str, path: Path, cell: Cell) -> None:
    """Put `case` where a directory input points."""
    if case == "link-outside":
        path.symlink_to(cell.outside / "dir")
    elif case == "wrong-kind":
        path.write_text("not a directory\n")
    else:
        plant(case, path, cell)


def _head_side(cell: Cell, **inputs: str) -> object:
    """The Action's reading of the workspace's inputs, then the head side scored from the commit."""
    read = cell.inputs(**inputs)
    head = cell.commit()
    sides = score_sides(cell.workspace, CommitPair(None, head), read)
    return {fixture: golden.check(sides.head[fixture].report) for fixture, golden in sides.goldens.items()}


def read_fixtures(cell: Cell, case: str) -> object:
    path = cell.workspace / "set.jsonl"
    if case == "huge":  # reader alone
        plant(case, path, cell, limit=MAX_INPUT_BYTES)
        return load_fixtures(str(path))
    if case == "output-dir":
        (cell.workspace / ".cce-relevance").mkdir()
        shutil.copy(path, cell.workspace / ".cce-relevance" / "set.jsonl")
        return _head_side(cell, INPUT_FIXTURES=".cce-relevance/set.jsonl")
    plant(case, path, cell, wrong_type=b'[{"schema": "cce.relevance/v1"}]\n')
    return _head_side(cell)


def read_golden(cell: Cell, case: str) -> object:
    path = cell.workspace / "set.golden.json"
    if case in ("huge", "fifo", "char-device"):  # reader alone
        plant(case, path, cell, limit=MAX_INPUT_BYTES)
        return GoldenFile.read(str(path), "set.jsonl", "set.golden.json", ("bm25",), None)
    if case == "output-dir":
        return _head_side(cell, INPUT_GOLDEN="set.jsonl=.cce-relevance/set.golden.json")
    plant(case, path, cell)
    return _head_side(cell, INPUT_GOLDEN="set.jsonl=set.golden.json")


def read_config(cell: Cell, case: str) -> object:
    path = cell.workspace / "cce-relevance.toml"
    plant(case, path, cell, limit=MAX_CONFIG_BYTES, wrong_type=b"backends = [1, 2]\n")
    if case in ("fifo", "char-device"):  # reader alone
        return api.load_config(None, str(cell.workspace), top=str(cell.workspace))
    if case == "deep":
        path.write_bytes(b"a = " + b"[" * 100_000)
    return _head_side(cell)


def read_working_directory(cell: Cell, case: str) -> object:
    if case == "output-dir":  # left by an earlier run
        (cell.workspace / ".cce-relevance").mkdir()
        return cell.inputs(**{"INPUT_WORKING-DIRECTORY": ".cce-relevance"})
    plant_directory(case, cell.workspace / "sub", cell)
    return cell.inputs(**{"INPUT_WORKING-DIRECTORY": "sub"})


def read_cache_dir(cell: Cell, case: str) -> object:
    value = ".cce-relevance" if case == "output-dir" else "cache"
    if case != "output-dir":
        plant_directory(case, cell.workspace / "cache", cell)
    read = cell.inputs(**{"INPUT_CACHE-DIR": value})
    return prepare_cache_dir(cell.workspace, cell.workspace, read.cache_dir)


def read_shards_dir(cell: Cell, case: str) -> object:
    value = ".cce-relevance/shard" if case == "output-dir" else "shards"
    if case in CONTENT:
        plant(case, cell.workspace / "shards" / "shard-1-of-2.json", cell, limit=MAX_INPUT_BYTES)
    elif case == "output-dir":
        (cell.workspace / value).mkdir(parents=True)
    else:
        plant_directory(case, cell.workspace / "shards", cell)
    read = cell.inputs(INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": value})
    assert read.shards_dir is not None
    return read_shards(read.shards_dir)


def read_history(cell: Cell, case: str) -> object:
    value = ".cce-relevance/history.json" if case == "output-dir" else "h/history.json"
    if case != "output-dir":
        plant(case, cell.workspace / value, cell, limit=MAX_HISTORY_BYTES)
    read = cell.inputs(INPUT_HISTORY=value)
    check_history(cell.workspace, read)
    store = history_store(read, cell.workspace)
    assert store is not None
    return store.read(None)


def read_history_branch(cell: Cell, case: str) -> object:
    """The file on the data branch, read from a commit of it (what `fetch` leaves in the private ref)."""
    git(cell.workspace, "checkout", "-q", "--orphan", "data")
    git(cell.workspace, "rm", "-q", "-r", "--cached", ".")
    plant(case, cell.workspace / "history.json", cell, limit=MAX_HISTORY_BYTES)
    git(cell.workspace, "add", "history.json")
    git(cell.workspace, "commit", "-q", "-m", "data")
    tip = git(cell.workspace, "rev-parse", "HEAD")
    git(cell.workspace, "checkout", "-q", "-f", "main")
    read = cell.inputs(**{"INPUT_HISTORY-BRANCH": "data"})
    store = history_store(read, cell.workspace)
    assert isinstance(store, HistoryBranch)
    return store.read(tip)


def read_event(cell: Cell, case: str) -> object:
    path = cell.root / "runner" / "event.json"
    plant(case, path, cell, limit=MAX_EVENT_BYTES)
    return cell.inputs(GITHUB_EVENT_PATH=str(path))


def read_workspace(cell: Cell, case: str) -> object:
    path = cell.root / "elsewhere"
    plant_directory(case, path, cell)
    return cell.inputs(GITHUB_WORKSPACE=str(path))


TEXTS = {"huge": "x" * 100_000, "deep": "[" * 100_000, "not-utf8": "\udcff", "wrong-type": "[1, 2]"}


def read_matrix(cell: Cell, case: str) -> object:
    read = cell.inputs(INPUT_MATRIX=TEXTS[case], GITHUB_WORKFLOW="w", GITHUB_JOB="j")
    assert read.comment_key is not None and read.comment_key.startswith("auto-")
    return read


def read_comment_key(cell: Cell, case: str) -> object:
    return cell.inputs(**{"INPUT_COMMENT-KEY": TEXTS[case]})


ROWS = (
    Row(
        "fixtures",
        "input 'fixtures'",
        read_fixtures,
        documented={"huge": ("reader alone", WORKSPACE_FILE)},
    ),
    Row(
        "golden",
        "input 'golden'",
        read_golden,
        documented={
            "huge": ("reader alone", WORKSPACE_FILE),
            "fifo": ("reader alone", WORKSPACE_FILE + "; the workspace's copy is never read"),
            "char-device": ("reader alone", WORKSPACE_FILE + "; the workspace's copy is never read"),
            "deep": ("drift", GOLDEN_BYTES),
            "wrong-type": ("drift", GOLDEN_BYTES),
        },
    ),
    Row(
        "cce-relevance.toml",  # the retriever config each side reads: no input names it
        "cce-relevance.toml",
        read_config,
        not_applicable={"output-dir": "not an input: the file is found in the working directory or above"},
        documented={
            "fifo": ("reader alone", WORKSPACE_FILE),
            "char-device": ("reader alone", WORKSPACE_FILE),
        },
    ),
    Row(
        "working-directory",
        "input 'working-directory'",
        read_working_directory,
        not_applicable=dict.fromkeys(CONTENT, NOT_A_FILE),
    ),
    Row(
        "cache-dir",
        "input 'cache-dir'",
        read_cache_dir,
        not_applicable=dict.fromkeys(
            CONTENT,
            "the cache's files are the Action's own records: an unreadable one is a miss (index) or a "
            "warning and a re-scored base (saved side), never an input error "
            "(tests/action/test_untrusted_states.py)",
        ),
    ),
    Row(
        "shards-dir",
        "input 'shards-dir'",
        read_shards_dir,
        documented=dict.fromkeys(
            CONTENT,
            (
                "named by its file",
                "read_shards words a state's content by its file and field; `mode: merge` puts "
                "input 'shards-dir' before it (tests/action/test_untrusted_artifacts_e2e.py)",
            ),
        ),
    ),
    Row(
        "history",
        "input 'history'",
        read_history,
        documented=dict.fromkeys(CONTENT, ("warning", HISTORY_DAMAGED)),
    ),
    Row(
        "history-branch",  # `history` as a file on the data branch
        "input 'history-branch'",
        read_history_branch,
        not_applicable={
            "fifo": "a git tree holds files, symlinks and submodules only",
            "char-device": "a git tree holds files, symlinks and submodules only",
            "output-dir": "a path on the data branch, not in the workspace",
        },
        documented=dict.fromkeys(
            ("huge", "deep", "not-utf8", "wrong-type", "link-outside", "wrong-kind", "dangling-link"),
            ("warning", f"{HISTORY_DAMAGED}; docs/action.md: a symlink on the branch is refused"),
        ),
    ),
    Row(
        "GITHUB_EVENT_PATH",
        "GITHUB_EVENT_PATH",
        read_event,
        not_applicable={"link-outside": RUNNER_FILE, "output-dir": RUNNER_FILE},
    ),
    Row(
        "GITHUB_WORKSPACE",
        "GITHUB_WORKSPACE",
        read_workspace,
        not_applicable={
            **dict.fromkeys(CONTENT, NOT_A_FILE),
            "link-outside": "the workspace is what 'inside' is measured from: a link to it is resolved",
            "output-dir": "the output directory is inside the workspace",
        },
    ),
    Row(
        "matrix",
        "",
        read_matrix,
        not_applicable=dict.fromkeys(KINDS + ("output-dir",), TEXT),
        documented=dict.fromkeys(
            CONTENT,
            ("accepted", "action.yml: only its digest is kept, for the derived comment-key; any text does"),
        ),
        text=True,
    ),
    Row(
        "comment-key",
        "input 'comment-key'",
        read_comment_key,
        not_applicable=dict.fromkeys(KINDS + ("output-dir",), TEXT),
        text=True,
    ),
)

CELLS = [
    pytest.param(row, case, id=f"{row.name}-{case}")
    for row in ROWS
    for case in CASES
    if case not in row.not_applicable
]


@pytest.mark.parametrize(("row", "case"), CELLS)
def test_each_input_refuses_each_hostile_file_by_name(row: Row, case: str, cell: Cell) -> None:
    outcome = row.documented.get(case, ("error", ""))[0]
    with alarm():
        if outcome == "accepted":
            row.read(cell, case)
            return
        if outcome == "warning":
            with pytest.raises(HistoryError):  # which the Action words as a warning naming the input
                row.read(cell, case)
            return
        if outcome == "drift":
            checks = row.read(cell, case)
            assert isinstance(checks, dict)
            (check,) = checks.values()
            assert check.diff, "a golden that is no report drifts"
            return
        with pytest.raises(CceError) as raised:
            row.read(cell, case)
    error = raised.value
    assert error.exit_code == 2, error
    if outcome == "error":
        assert row.named in error.message, error.message
    elif outcome == "named by its file":
        assert "shard-1-of-2.json" in error.message, error.message
    else:  # the file's reader on its own
        assert outcome == "reader alone" and "could not read" in error.message, error.message
    assert len(error.message) < 1_000, "the error quotes a cut of what it names, not all of it"
    if case == "huge" and not row.text:
        assert "bytes, more than the" in error.message or "larger than the" in error.message, error.message


UNDER_A_FILE = (  # (input, its value, with `x` a regular file in the workspace)
    ("history", {"INPUT_HISTORY": "x/history.json"}),
    ("cache-dir", {"INPUT_CACHE-DIR": "x/cache"}),
    ("working-directory", {"INPUT_WORKING-DIRECTORY": "x/sub"}),
    ("fixtures", {"INPUT_FIXTURES": "x/set.jsonl"}),
    ("golden", {"INPUT_GOLDEN": "set.jsonl=x/set.golden.json"}),
    ("shards-dir", {"INPUT_MODE": "merge", "INPUT_SHARDS-DIR": "x/shards"}),
)


@pytest.mark.parametrize(("name", "inputs"), UNDER_A_FILE, ids=[name for name, _ in UNDER_A_FILE])
def test_a_path_below_a_regular_file_is_refused_by_name(
    name: str, inputs: dict[str, str], cell: Cell
) -> None:
    """A parent that is a file: nothing can be read there, and a push could never write its history
    (it warned twice and went on)."""
    (cell.workspace / "x").write_text("a file\n")
    with alarm(), pytest.raises(CceError) as raised:
        read = cell.inputs(**inputs)
        check_history(cell.workspace, read)
        prepare_cache_dir(cell.workspace, cell.workspace, read.cache_dir)
        score_sides(cell.workspace, CommitPair(None, cell.commit()), read)
    assert f"input '{name}'" in raised.value.message, raised.value.message


def test_the_table_covers_every_case_of_every_row() -> None:
    """Each cell is run, or says why not: a case a row neither runs nor explains would test nothing."""
    for row in ROWS:
        assert set(row.not_applicable) <= set(CASES) and set(row.documented) <= set(CASES), row.name
        assert not set(row.not_applicable) & set(row.documented), row.name
    assert len(CELLS) == sum(len(CASES) - len(row.not_applicable) for row in ROWS)


# End to end: one cell of each input, the entry point as a real process (exit code, ::error line).


def _pushed(pr: PullRequest, files: dict[str, bytes | str]) -> None:
    """Commit `files` (bytes as they are, str a symlink's target) on the feature branch."""
    pr._git("checkout", "-q", "feature")
    for name, content in files.items():
        path = pr.workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.symlink_to(content)
    pr._commit("hostile")


def _fixtures_not_utf8(pr: PullRequest, root: Path) -> dict[str, str]:
    _pushed(pr, {FIXTURE: FIXTURES.replace('"hash"', '"h\xff"').encode("latin-1")})
    return {}


def _golden_not_utf8(pr: PullRequest, root: Path) -> dict[str, str]:
    _pushed(pr, {GOLDEN: b'{"schema": "\xff"}\n'})
    return {}


def _config_dangling(pr: PullRequest, root: Path) -> dict[str, str]:
    _pushed(pr, {"cce-relevance.toml": "nowhere.toml"})
    return {}


def _working_directory_in_output(pr: PullRequest, root: Path) -> dict[str, str]:
    (pr.workspace / ".cce-relevance" / "eval").mkdir(parents=True)
    return {"INPUT_WORKING-DIRECTORY": ".cce-relevance/eval"}


def _cache_dir_in_output(pr: PullRequest, root: Path) -> dict[str, str]:
    return {"INPUT_CACHE-DIR": ".cce-relevance"}


def _shard_state_outside(pr: PullRequest, root: Path) -> dict[str, str]:
    (root / "secret.json").write_text('{"schema": "cce.relevance.action.shard/v1"}\n')
    (pr.workspace / "shards").mkdir()
    (pr.workspace / "shards" / "shard-1-of-2.json").symlink_to(root / "secret.json")
    return {"INPUT_MODE": "merge", "INPUT_SHARDS-DIR": "shards"}


def _history_deep(pr: PullRequest, root: Path) -> dict[str, str]:
    (pr.workspace / "h").mkdir()
    (pr.workspace / "h" / "history.json").write_bytes(b"[" * 100_000)
    return {"INPUT_HISTORY": "h/history.json", "INPUT_GOLDEN": ""}


def _event_deep(pr: PullRequest, root: Path) -> dict[str, str]:
    (root / "deep-event.json").write_bytes(b"[" * 100_000)
    return {"GITHUB_EVENT_PATH": str(root / "deep-event.json")}


def _workspace_fifo(pr: PullRequest, root: Path) -> dict[str, str]:
    os.mkfifo(root / "fifo-workspace")
    return {"GITHUB_WORKSPACE": str(root / "fifo-workspace")}


def _matrix_deep(pr: PullRequest, root: Path) -> dict[str, str]:
    return {"INPUT_MATRIX": "[" * 100_000, "GITHUB_WORKFLOW": "w", "GITHUB_JOB": "j", "INPUT_GOLDEN": ""}


def _comment_key_huge(pr: PullRequest, root: Path) -> dict[str, str]:
    return {"INPUT_COMMENT-KEY": "k" * 100_000}


END_TO_END = (  # (input, how its cell is made, what the run ends with, the words of its annotation)
    ("fixtures", _fixtures_not_utf8, "error", "input 'fixtures': could not read fixtures eval/search.jsonl"),
    ("golden", _golden_not_utf8, "error", "input 'golden': could not read golden report"),
    ("cce-relevance.toml", _config_dangling, "error", "cce-relevance.toml: is a symbolic link to nowhere"),
    ("working-directory", _working_directory_in_output, "error", "input 'working-directory'"),
    ("cache-dir", _cache_dir_in_output, "error", "input 'cache-dir'"),
    ("shards-dir", _shard_state_outside, "error", "input 'shards-dir': shards/shard-1-of-2.json resolves"),
    ("history", _history_deep, "warning", "input 'history': the trend history h/history.json"),
    ("GITHUB_EVENT_PATH", _event_deep, "error", "nested 100000 levels deep"),
    ("GITHUB_WORKSPACE", _workspace_fifo, "error", "GITHUB_WORKSPACE="),
    ("matrix", _matrix_deep, "passes", ""),
    ("comment-key", _comment_key_huge, "error", "input 'comment-key'"),
)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "make", "ends", "words"), END_TO_END, ids=[e[0] for e in END_TO_END])
def test_one_cell_per_input_end_to_end(
    tmp_path: Path, name: str, make: Callable[[PullRequest, Path], dict[str, str]], ends: str, words: str
) -> None:
    pr = PullRequest(tmp_path)
    run = run_action(pr, tmp_path, INPUT_BACKENDS="bm25", **make(pr, tmp_path))
    if ends == "error":
        line = refused(run).replace("%3A", ":")
        assert words in line, line
        return
    assert run.code == 0, run.stdout + run.stderr
    assert "::error" not in run.stdout and "Traceback" not in run.stderr
    if ends == "warning":
        assert any(line.startswith("::warning::" + words) for line in run.stdout.splitlines()), run.stdout
