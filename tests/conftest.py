"""Shared fixtures: where the reference implementation's published data lives; Hypothesis profiles.

Hypothesis runs under the profile named by `HYPOTHESIS_PROFILE`: `ci` (what .ci/run and the
workflow use: Hypothesis' default 100 examples, and the failing example's blob printed to replay
it) or `dev` (the default: 25 examples, for a quick local loop). Neither has a deadline: on
shared 2-core runners wall time says nothing about the code. A test's own `@settings` wins.

`CCE_UPSTREAM_DIR` points at a copy of that data: `.ci/run` sets it to `../shared/upstream-cce`,
ci.yml to what `scripts/fetch_upstream.py fetch` downloaded. When the variable is set the
directory must exist, and every file in scripts/upstream-cce.sha256 must match its digest, or the
parity tests fail. Without the variable the sibling `../shared/upstream-cce` is used when
present; when there is none they are skipped, except under CI (`CI` set, as on GitHub), where
they fail: a CI run that skipped them would claim a parity it never checked.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO_ROOT = Path(__file__).resolve().parent.parent
FETCH_SCRIPT = REPO_ROOT / "scripts" / "fetch_upstream.py"
FETCH_COMMAND = "python scripts/fetch_upstream.py fetch DIR && export CCE_UPSTREAM_DIR=DIR"


def _upstream_dir() -> Path | None:
    env = os.environ.get("CCE_UPSTREAM_DIR")
    if env:
        return Path(env)
    guess = REPO_ROOT.parent / "shared" / "upstream-cce"
    return guess if guess.is_dir() else None


def _data_problems(path: Path) -> list[str]:
    """The listed files of `path` that are missing or differ (scripts/fetch_upstream.py's check)."""
    spec = importlib.util.spec_from_file_location("fetch_upstream", FETCH_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks the module up while being made
    spec.loader.exec_module(module)
    return module.problems(path, module.read_manifest())


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The verified reference data directory (see the module docstring for skip and fail)."""
    path = _upstream_dir()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(
                "reference data not found, and CI is set: parity tests fail instead of skipping. "
                f"Fetch it with `{FETCH_COMMAND}`"
            )
        pytest.skip(f"reference data not available (set CCE_UPSTREAM_DIR; to fetch it: {FETCH_COMMAND})")
    if not path.is_dir():
        pytest.fail(f"CCE_UPSTREAM_DIR={path} is set but is not a directory (to fetch it: {FETCH_COMMAND})")
    problems = _data_problems(path)
    if problems:
        pytest.fail(
            f"the reference data in {path} is not the pinned one (scripts/upstream-cce.sha256): "
            + "; ".join(problems)
        )
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session", autouse=True)
def isolated_index_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The CLI keeps an index cache under XDG_CACHE_HOME by default: point it at a temporary
    directory for the whole session (child processes inherit it), never at the user's own."""
    cache_home = tmp_path_factory.mktemp("xdg-cache")
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache_home)
    yield cache_home
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite the rendered-comment golden files under tests/action/comments/ "
                          "instead of comparing with them")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True only when the run was started with `--update-goldens`: goldens never change silently."""
    return bool(request.config.getoption("--update-goldens"))
