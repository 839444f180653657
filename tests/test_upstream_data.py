"""The reference data the parity tests read: pinned by commit and SHA-256, fetched over HTTP and
verified (scripts/fetch_upstream.py, against a loopback server), and never silently skipped in CI
(tests/conftest.py, run in a child pytest on a copy of it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "fetch_upstream.py"
MANIFEST = ROOT / "scripts" / "upstream-cce.sha256"
COMMIT = "d5e100f543fca8d6382e9b03c95da6b376c5c47c"  # the reference commit the fetched files are pinned to


def run(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def listed_files() -> list[str]:
    return [line.split("  ", 1)[1] for line in MANIFEST.read_text().splitlines() if not line.startswith("#")]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def served(tmp_path: Path, upstream: Path) -> Iterator[tuple[str, Path]]:
    """A loopback server laid out as raw.githubusercontent.com: /OWNER/REPO/COMMIT/PATH."""
    root = tmp_path / "srv"
    tree = root / "Davidslv" / "cce-rust" / COMMIT
    for name in listed_files():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(upstream / name, tree / name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tree
    finally:
        server.shutdown()
        server.server_close()


def test_the_manifest_pins_the_specs_commit_and_every_file_of_the_local_copy(upstream: Path) -> None:
    header = MANIFEST.read_text().splitlines()[:4]
    assert "# repository: Davidslv/cce-rust" in header and f"# commit: {COMMIT}" in header
    local = sorted(p.relative_to(upstream).as_posix() for p in upstream.rglob("*") if p.is_file())
    assert listed_files() == local
    done = run(str(SCRIPT), "verify", str(upstream))
    assert done.returncode == 0, done.stderr


def test_fetch_downloads_and_verifies_then_reuses_a_verified_copy(served: tuple[str, Path], tmp_path: Path,
                                                                  upstream: Path) -> None:
    url, _ = served
    dest = tmp_path / "data" / "upstream-cce"
    done = run(str(SCRIPT), "fetch", str(dest), "--base-url", url)
    assert done.returncode == 0, done.stderr
    assert "16 files of Davidslv/cce-rust@d5e100f543fc verified" in done.stdout
    for name in listed_files():
        assert (dest / name).read_bytes() == (upstream / name).read_bytes()
    assert sorted(p.name for p in dest.parent.iterdir()) == ["upstream-cce"]  # no staging left behind
    again = run(str(SCRIPT), "fetch", str(dest), "--base-url", "http://127.0.0.1:9")  # nothing listens
    assert again.returncode == 0 and "already holds the 16 files" in again.stdout


def test_a_changed_file_is_refused_and_nothing_is_written(served: tuple[str, Path], tmp_path: Path) -> None:
    url, tree = served
    (tree / "test" / "fixture" / "relevance" / "code.golden.json").write_bytes(b"{}\n")
    dest = tmp_path / "upstream-cce"
    done = run(str(SCRIPT), "fetch", str(dest), "--base-url", url)
    assert done.returncode == 1
    assert "fetch_upstream: test/fixture/relevance/code.golden.json: SHA-256 " in done.stderr
    assert "the reference data does not verify" in done.stderr
    assert not dest.exists() and list(tmp_path.iterdir()) == [tmp_path / "srv"]


def test_a_missing_file_names_its_url(served: tuple[str, Path], tmp_path: Path) -> None:
    url, tree = served
    (tree / "conformance.json").unlink()
    done = run(str(SCRIPT), "fetch", str(tmp_path / "out"), "--base-url", url)
    assert done.returncode == 1
    address = f"{url}/Davidslv/cce-rust/{COMMIT}/conformance.json"
    assert f"conformance.json: cannot download {address}" in done.stderr
    assert "404" in done.stderr


def test_verify_names_what_is_missing_or_changed(tmp_path: Path, upstream: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(upstream, copy)
    (copy / "LICENSE").unlink()
    (copy / "eval" / "relevance" / "docs.jsonl").write_text("changed\n")
    done = run(str(SCRIPT), "verify", str(copy))
    assert done.returncode == 1
    assert "fetch_upstream: LICENSE: missing" in done.stderr
    assert "fetch_upstream: eval/relevance/docs.jsonl: SHA-256 " in done.stderr


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """tests/conftest.py and the fetch script in a tree with no ../shared beside it, and one
    test that uses the `upstream` fixture as the parity tests do."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "scripts").mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", repo / "tests" / "conftest.py")
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "test_parity_like.py").write_text(
        "def test_reads_the_reference(upstream):\n    assert (upstream / 'conformance.json').is_file()\n"
    )
    shutil.copy(SCRIPT, repo / "scripts" / SCRIPT.name)
    shutil.copy(MANIFEST, repo / "scripts" / MANIFEST.name)
    return repo


def child_pytest(repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "CCE_UPSTREAM_DIR", "PYTEST_ADDOPTS")}
    return run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", env={**base, **env}, cwd=repo)


@pytest.mark.slow
def test_without_the_data_parity_tests_skip_locally_and_fail_in_ci(project_copy: Path) -> None:
    local = child_pytest(project_copy)
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout
    ci = child_pytest(project_copy, CI="true")
    assert ci.returncode == 1, ci.stdout
    assert "reference data not found, and CI is set: parity tests fail instead of skipping" in ci.stdout
    assert "python scripts/fetch_upstream.py fetch DIR" in ci.stdout


@pytest.mark.slow
def test_data_that_is_not_the_pinned_one_fails(project_copy: Path, tmp_path: Path, upstream: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(upstream, copy)
    good = child_pytest(project_copy, CI="true", CCE_UPSTREAM_DIR=str(copy))
    assert good.returncode == 0 and "1 passed" in good.stdout, good.stdout
    (copy / "conformance.json").write_text("{}\n")
    bad = child_pytest(project_copy, CCE_UPSTREAM_DIR=str(copy))
    assert bad.returncode == 1
    assert "is not the pinned one (scripts/upstream-cce.sha256): conformance.json: SHA-256" in bad.stdout
