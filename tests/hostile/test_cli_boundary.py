"""The CLI's error boundary: bad input is exit 2 with one `error:` line and nothing on stdout; a bug is
exit 70 in one line; special output files survive; a failed run changes no pre-existing output."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

from cce_relevance import api
from cce_relevance.atomic_files import write_output
from cce_relevance.errors import EXIT_INTERNAL
from tests.cli.helpers import cli, cli_process
from tests.hostile.conftest import CORPUS, FIXTURES
from tests.retrieval.corpora import write_corpus
from tests.special_files import FULL, NULL, device_node


def _saved_report(project: Path) -> Path:
    out = cli("run", "set.jsonl", "--json", "--backend", "bm25", cwd=project)
    assert out.code == 0
    (project / "r.json").write_text(out.out, encoding="utf-8")
    return project / "r.json"


def _input_error(result, *needles: str) -> None:
    assert result.code == 2, result
    assert result.out == ""
    assert result.err.startswith("error: ") and "Traceback" not in result.err
    for needle in needles:
        assert needle in result.err


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda doc: doc["backends"][0]["per_query"][0].update(mrr=int("9" * 400)), "out of range"),
        (lambda doc: doc["backends"][0]["per_query"][0].update(mrr="1.7e308"), "expected a finite number"),
        (lambda doc: doc["backends"][0]["per_query"][0].update(mrr=None), "got null"),
        (lambda doc: doc["backends"][0].update(backend=["bm25"]), "needs a name"),
        (lambda doc: doc["backends"][0]["per_query"][0].update(id="\ud800"), "lone surrogate"),
    ],
)
def test_compare_and_power_refuse_hostile_report_values(project: Path, mutate, needle: str) -> None:
    path = _saved_report(project)
    doc = json.loads(path.read_text())
    mutate(doc)
    bad = project / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    _input_error(cli("compare", str(path), str(bad)), needle)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested 100000 levels deep"),
        ('{"schema": ' + "5" * 5000 + "}", "out of range"),
        ('{"id": "\\ud800"}', "lone surrogate"),
        ("\ufeff{}", "byte order mark"),
        ('{"x": NaN}', "NaN is not a JSON number"),
    ],
)
def test_report_readers_refuse_malformed_json(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    _input_error(cli("compare", str(path), str(path)), needle)
    _input_error(cli("power", str(path), "--delta", "0.1"), needle)


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        (f"[backends.h]\nbase = 'hybrid'\nrrf_k = {'9' * 5000}\n", "an integer with thousands of digits"),
        (f"[backends.h]\nbase = 'hybrid'\nrrf_k = {'9' * 400}\n", "an integer of more than 30 digits"),
        (
            "[backends.x]\nurl = 'http://[::1'\n",
            'url: expected an http:// or https:// URL, got "http://[::1"',
        ),
        (
            "[backends.x]\nurl = 'http://127.0.0.1:1/'\ntimeout = 1e308\n",
            "timeout: expected a number of seconds",
        ),
        ("[backends.x]\ncommand = ['true']\ntimeout = inf\n", "timeout: expected a number of seconds"),
        ("languages = " + "[" * 20_000 + "]" * 20_000 + "\n", "nested too deeply (at most 32 levels)"),
        ("x = " + "{a = " * 20_000 + "1" + "}" * 20_000 + "\n", "nested too deeply (at most 32 levels)"),
    ],
    ids=[
        "5000-digits",
        "400-digits",
        "bad-url",
        "huge-timeout",
        "infinite-timeout",
        "deep-arrays",
        "deep-tables",
    ],
)
def test_hostile_config_values_are_named_errors(project: Path, config: str, needle: str) -> None:
    (project / "hostile.toml").write_text(config, encoding="utf-8")
    result = cli("run", "set.jsonl", "--backend", "bm25", "--config", "hostile.toml", cwd=project)
    _input_error(result, "hostile.toml", needle)


def test_invalid_utf8_report_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_bytes(b'{"a": "\xff"}')
    _input_error(cli("power", str(tmp_path / "r.json"), "--delta", "0.1"), "not UTF-8")


@pytest.mark.parametrize("golden", ["missing", "directory", "not-utf8"])
def test_an_unusable_golden_prints_nothing_on_stdout(project: Path, golden: str) -> None:
    path = project / "g.json"
    if golden == "directory":
        path.mkdir()
    elif golden == "not-utf8":
        path.write_bytes(b"\xff\xfe")
    _input_error(cli("run", "set.jsonl", "--backend", "bm25", "--golden", str(path), cwd=project), "golden")


def test_a_failed_run_changes_no_pre_existing_output(project: Path) -> None:
    qrels = project / "q.qrels"
    qrels.write_text("old\n")
    (project / "blocked").write_text("a file where a directory is needed\n")
    result = cli(
        "run",
        "set.jsonl",
        "--backend",
        "bm25",
        "--trec-qrels",
        str(qrels),
        "--trec-run",
        str(project / "blocked" / "{backend}.run"),
        cwd=project,
    )
    _input_error(result, "not a directory")
    assert qrels.read_text() == "old\n"
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".cce-relevance-")) == []


def test_trec_run_creates_its_directory(project: Path) -> None:
    result = cli(
        "run", "set.jsonl", "--backend", "bm25,hybrid", "--trec-run", "runs/{backend}.run", cwd=project
    )
    assert result.code == 0
    assert sorted(p.name for p in (project / "runs").iterdir()) == ["bm25.run", "hybrid.run"]


def test_output_and_index_out_to_a_null_device_leave_it_a_device(project: Path) -> None:
    null = device_node(project / "null", NULL)
    assert cli("run", "set.jsonl", "--backend", "bm25", "--output", str(null), cwd=project).code == 0
    result = cli("index", "corpus", "--out", str(null), "--no-cache", cwd=project)
    assert result.code == 0 and "fingerprint" not in result.out  # no companion file beside a device
    assert stat.S_ISCHR(null.stat().st_mode)
    assert not (project / "null.fingerprint.json").exists()


def test_index_refuses_a_fingerprint_directory_before_touching_the_store(project: Path) -> None:
    store = project / "store.json"
    store.write_text("old store\n")
    (project / "store.json.fingerprint.json").mkdir()
    _input_error(cli("index", "corpus", "--out", str(store), "--no-cache", cwd=project), "Is a directory")
    assert store.read_text() == "old store\n"


@pytest.mark.parametrize(
    "command",
    [
        ["run", "set.jsonl", "--backend", "bm25"],
        ["--help"],
        ["validate", "set.jsonl"],
        ["compare", "r.json", "r.json"],
    ],
)
def test_a_full_stdout_is_an_error_line_not_a_traceback(project: Path, command: list[str]) -> None:
    _saved_report(project)
    full = device_node(project / "full", FULL)
    with open(full, "w") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "cce_relevance", *command],
            cwd=project,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip().splitlines()[-1]
        == "error: could not write to standard output: No space left on device"
    )
    assert "Traceback" not in done.stderr


def test_a_closed_pipe_is_an_error_line_not_a_traceback(project: Path) -> None:
    reader_gone = subprocess.Popen(
        [sys.executable, "-m", "cce_relevance", "chunks", "corpus", "--no-cache"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader_gone.stdout is not None
    reader_gone.stdout.close()  # nobody reads: the first write meets EPIPE
    _, err = reader_gone.communicate(timeout=300)
    assert reader_gone.returncode == 2
    assert b"could not write to standard output: Broken pipe" in err and b"Traceback" not in err


def test_an_unexpected_exception_is_one_line_and_exit_70(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(api, "run", broken)
    result = cli("run", "set.jsonl", cwd=project)
    assert result.code == EXIT_INTERNAL and result.out == ""
    lines = result.err.splitlines()
    assert lines[0] == "error: internal error: KeyError: 'a bug'"
    assert lines[1].startswith("hint: this is a bug in cce-relevance; please report it") and len(lines) == 2


def test_a_header_corpus_of_the_root_is_refused_but_dir_opts_in(tmp_path: Path) -> None:
    (tmp_path / "set.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"/"}\n{"query":"q","expected":["a.py"]}\n'
    )
    _input_error(cli("validate", str(tmp_path / "set.jsonl")), "the filesystem root", "--dir /")


def test_a_fixture_with_a_bom_names_it(project: Path) -> None:
    (project / "bom.jsonl").write_text("\ufeff" + (project / "set.jsonl").read_text(), encoding="utf-8")
    _input_error(cli("run", "bom.jsonl", cwd=project), "fixture line 1: invalid JSON", "byte order mark")


def test_a_runaway_gitignore_line_does_not_stall_chunks(project: Path) -> None:
    (project / "corpus" / ".gitignore").write_text("*a" * 16 + "b\n")
    (project / "corpus" / ("a" * 40 + ".py")).write_text("def f():\n    return 1\n")
    result = cli_process("chunks", "corpus", "--no-cache", cwd=project)  # cli_process times out at 120 s
    assert result.code == 0 and "a" * 40 + ".py" in result.out


def test_a_store_line_past_any_file_is_refused(project: Path) -> None:
    assert cli("index", "corpus", "--out", "s.json", "--no-cache", cwd=project).code == 0
    store = json.loads((project / "s.json").read_text())
    store["chunks"][0]["start_line"] = store["chunks"][0]["end_line"] = 2**64 - 1
    (project / "s.json").write_text(json.dumps(store))
    _input_error(
        cli("run", "set.jsonl", "--store", "s.json", cwd=project), '"start_line"', "more than any file"
    )


def test_a_command_retriever_answering_deep_nesting_is_an_error(project: Path) -> None:
    (project / "deep.py").write_text(
        "import sys\nfor line in sys.stdin:\n    print('[' * 100000, flush=True)\n"
    )
    (project / "cce-relevance.toml").write_text(
        f'[backends.deep]\ncommand = ["{sys.executable}", "deep.py"]\n'
    )
    _input_error(cli("run", "set.jsonl", "--backend", "deep", cwd=project), "nested 100000 levels deep")


def test_dev_null_style_devices_work_for_a_user_who_cannot_write_their_directory() -> None:
    """As a non-root user `--output /dev/null` used to fail: the temporary file cannot be made in
    `/dev`. Here a null device sits in a directory only root may write, and a plain user writes it."""
    if os.geteuid() != 0:
        pytest.skip("making a device and switching to another user need root")
    locked = Path(tempfile.mkdtemp(prefix="cce-hostile-"))  # not under pytest's owner-only tmp dirs
    try:
        locked.chmod(0o755)
        null = device_node(locked / "null", NULL)
        null.chmod(0o666)
        with warnings.catch_warnings():  # 3.12 warns about fork() beside live threads; the child only writes
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child becomes `nobody` and writes; its exit status is the verdict
            code = 1
            try:
                os.setuid(65534)
                write_output(str(null), "report")
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert stat.S_ISCHR(null.stat().st_mode)
        assert sorted(p.name for p in locked.iterdir()) == ["null"]
    finally:
        shutil.rmtree(locked)


def test_a_nul_in_the_header_corpus_is_no_directory(project: Path) -> None:
    """The exclusion of the run's own files resolved the corpus with `realpath`, which raised on
    the NUL: an internal error (exit 70) for what is E18."""
    (project / "nul.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"cor\\u0000pus"}\n{"query":"q","expected":["a.py"]}\n'
    )
    for command in (["run", "nul.jsonl", "--backend", "bm25"], ["validate", "nul.jsonl"]):
        _input_error(cli(*command, cwd=project), "corpus is not a directory: cor\\0pus")


@pytest.mark.parametrize("name", [["bm25"], {"a": 1}, None, 3])
def test_power_refuses_a_backend_name_that_is_not_a_string(project: Path, name: object) -> None:
    """A run report with a compare block keyed its backends by name: a list was unhashable (70)."""
    out = cli("run", "set.jsonl", "--compare", "bm25,hybrid", "--json", cwd=project)
    assert out.code == 0
    doc = json.loads(out.out)
    doc["backends"][0]["backend"] = name
    (project / "bad.json").write_text(json.dumps(doc), encoding="utf-8")
    _input_error(
        cli("power", "bad.json", "--delta", "0.1", cwd=project), "backends[0]: expected a backend name"
    )


# The streams a plain user is handed but does not own: pipes root made (a runner's step, `sudo`, a
# container's entry point), mode 0600. A test run as root hands them to `nobody`.
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize(
    ("path", "stream"),
    [
        ("/dev/stdout", 1),
        ("/dev/stderr", 2),
        ("/proc/self/fd/1", 1),
        ("/dev/fd/2", 2),
        ("/proc/self/fd/{extra}", 3),
        ("/dev/fd/{extra}", 3),
    ],
)
def test_output_to_a_stream_it_was_handed_works_for_a_user_who_does_not_own_it(
    path: str, stream: int
) -> None:
    """A plain user cannot open such a pipe again by name (EACCES), which `--output /dev/stdout`
    did (exit 2). The real CLI, as `nobody`, writes the report through the descriptor it holds."""
    wrapper: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to run the CLI as another user")
        wrapper = NOBODY
    project = Path(tempfile.mkdtemp(prefix="cce-hostile-"))  # pytest's tmp dirs are the owner's only
    extra_read, extra = os.pipe()  # a third stream, opened by this process before the CLI starts
    try:
        project.chmod(0o755)
        write_corpus(project / "corpus", CORPUS)
        (project / "set.jsonl").write_text(FIXTURES, encoding="utf-8")
        cache = project / "cache"
        cache.mkdir()
        if wrapper:
            os.chown(cache, 65534, 65534)
        env = {**os.environ, "XDG_CACHE_HOME": str(cache), "HOME": str(cache)}

        report = cli("run", "set.jsonl", "--backend", "bm25", "--json", cwd=project).out.encode()
        argv = [
            *wrapper,
            sys.executable,
            "-m",
            "cce_relevance",
            "run",
            "set.jsonl",
            "--backend",
            "bm25",
            "--json",
        ]
        done = subprocess.run(
            [*argv, "--output", path.format(extra=extra)],
            cwd=project,
            env=env,
            capture_output=True,
            pass_fds=(extra,),
            timeout=120,
        )
        os.close(extra)
        with os.fdopen(extra_read, "rb") as pipe:
            third = pipe.read()
        assert done.returncode == 0, done.stderr.decode()
        written = {1: done.stdout, 2: done.stderr, 3: third}
        assert written.pop(stream) == report
        assert written == dict.fromkeys(written, b"")  # nothing else on the other streams
    finally:
        for fd in (extra_read, extra):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(project)
