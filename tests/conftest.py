"""Shared fixtures: where the reference implementation's published data lives; Hypothesis profiles.

Hypothesis runs under the profile named by `HYPOTHESIS_PROFILE`: `ci` (what .ci/run and the
workflow use: Hypothesis' default 100 examples, and the failing example's blob printed to replay
it) or `dev` (the default: 25 examples, for a quick local loop). Neither has a deadline: on
shared 2-core runners wall time says nothing about the code. A test's own `@settings` wins.

`CCE_UPSTREAM_DIR` (set by `.ci/run`) points at `../shared/upstream-cce`. When the variable is
set the directory must exist: a missing directory fails the parity tests instead of skipping
them. Without the variable, the sibling `../shared/upstream-cce` is used when present.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO_ROOT = Path(__file__).resolve().parent.parent


def _upstream_dir() -> Path | None:
    env = os.environ.get("CCE_UPSTREAM_DIR")
    if env:
        return Path(env)
    guess = REPO_ROOT.parent / "shared" / "upstream-cce"
    return guess if guess.is_dir() else None


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The reference data directory; fails when CCE_UPSTREAM_DIR names a missing directory."""
    path = _upstream_dir()
    if path is None:
        pytest.skip("reference data not available (set CCE_UPSTREAM_DIR)")
    if not path.is_dir():
        pytest.fail(f"CCE_UPSTREAM_DIR={path} is set but is not a directory")
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
