"""scripts/release.py, offline: the tag logic, the action.yml rewrite, and the release commit made
in a real git repository that pushes to a real (bare, local) remote."""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "release.py"
DIGEST = "sha256:" + "ab" * 32


def _load_module():
    spec = importlib.util.spec_from_file_location("release_script", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


release = _load_module()


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def git(repo: Path, *args: str) -> str:
    identity = ("-c", "user.name=t", "-c", "user.email=t@example.com")
    done = subprocess.run(["git", *identity, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def outputs(stdout: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


def set_version(repo: Path, version: str) -> None:
    """The three places a release reads its version from, as RELEASING.md has them bumped."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    current = release.tomllib.loads(pyproject)["project"]["version"]
    (repo / "pyproject.toml").write_text(
        pyproject.replace(f'version = "{current}"', f'version = "{version}"', 1), encoding="utf-8"
    )
    (repo / "cce_relevance").mkdir(exist_ok=True)
    (repo / "cce_relevance" / "__init__.py").write_text(f'"""x"""\n\n__version__ = "{version}"\n')
    (repo / "CHANGELOG.md").write_text(f"# Changelog\n\n## [Unreleased]\n\n## [{version}] - 2026-12-01\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A clone of a bare `origin` holding action.yml as main has it, at version 1.0.0."""
    origin = tmp_path / "origin.git"
    work = tmp_path / "work"
    subprocess.run(["git", "init", "--quiet", "--bare", str(origin)], check=True)
    subprocess.run(["git", "init", "--quiet", "-b", "main", str(work)], check=True)
    shutil.copy(ROOT / "action.yml", work / "action.yml")
    set_version(work, "1.0.0")
    git(work, "add", ".")
    git(work, "commit", "--quiet", "-m", "1.0.0")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "--quiet", "origin", "main")
    return work


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


def remote_tags(repo: Path) -> dict[str, str]:
    """tag -> commit on origin (annotated tags peeled)."""
    listing = git(repo, "ls-remote", "--tags", "origin")
    peeled = {}
    for line in listing.splitlines():
        sha, ref = line.split("\t")
        name = ref.removeprefix("refs/tags/")
        if name.endswith("^{}"):
            peeled[name[:-3]] = sha
        else:
            peeled.setdefault(name, sha)
    return peeled


def test_the_first_release_gets_every_tag(repo: Path) -> None:
    source = head(repo)
    done = run("plan", "--version", "1.0.0", "--source", source, "--owner", "Some-Org", "--root", str(repo))
    assert done.returncode == 0, done.stderr
    out = outputs(done.stdout)
    assert out["image"] == "ghcr.io/some-org/cce-relevance"  # GHCR wants lowercase
    assert out["git-tags"] == "v1.0.0 v1.0 v1"
    tags = [out["image-tags"]] + [line for line in done.stdout.splitlines() if "=" not in line]
    assert tags == [f"ghcr.io/some-org/cce-relevance:{t}" for t in ("1.0.0", "1.0", "1", source)]


def test_a_patch_to_an_older_line_moves_its_minor_tag_only() -> None:
    source = "a" * 40
    plan = release.plan((1, 2, 5), source, "o", {(1, 2, 4), (1, 3, 0), (0, 9, 0)})
    assert plan.git_tags == ("v1.2.5", "v1.2")
    assert plan.image_tags == (
        "ghcr.io/o/cce-relevance:1.2.5",
        "ghcr.io/o/cce-relevance:1.2",
        f"ghcr.io/o/cce-relevance:{source}",
    )
    newest = release.plan((1, 3, 1), source, "o", {(1, 2, 4), (1, 3, 0)})
    assert newest.git_tags == ("v1.3.1", "v1.3", "v1")


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)), unique=True, max_size=12))
def test_moving_tags_always_end_on_the_newest_release_of_their_line(
    order: list[tuple[int, int, int]],
) -> None:
    """Whatever order versions are released in, vX and vX.Y name the newest of their line."""
    tags: dict[str, tuple[int, int, int]] = {}
    released: set[tuple[int, int, int]] = set()
    for version in order:
        for tag in release.plan(version, "0" * 40, "o", released).git_tags:
            tags[tag] = version
        released.add(version)
    for version in released:
        major, minor, _ = version
        assert tags[f"v{major}"] == max(v for v in released if v[0] == major)
        assert tags[f"v{major}.{minor}"] == max(v for v in released if v[:2] == (major, minor))
        assert tags["v" + ".".join(map(str, version))] == version


def test_a_released_version_is_never_released_again(repo: Path) -> None:
    source = head(repo)
    git(repo, "tag", "v1.0.0")
    # the tag a maintainer pushes on the source commit is what starts a release: not "released"
    starting = run("plan", "--version", "1.0.0", "--source", source, "--owner", "o", "--root", str(repo))
    assert starting.returncode == 0, starting.stderr
    (repo / "action.yml").write_text((repo / "action.yml").read_text() + "# later\n")
    git(repo, "commit", "--quiet", "-am", "later")
    again = run("plan", "--version", "v1.0.0", "--source", head(repo), "--owner", "o", "--root", str(repo))
    assert again.returncode == 2
    assert "v1.0.0 is already released" in again.stderr and "next patch version" in again.stderr


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("1.0", "is not X.Y.Z"),
        ("01.0.0", "is not X.Y.Z"),
        ("1.0.1", "pyproject.toml says version '1.0.0'"),
    ],
)
def test_plan_refuses_a_bad_or_unprepared_version(repo: Path, version: str, message: str) -> None:
    done = run("plan", "--version", version, "--source", head(repo), "--owner", "o", "--root", str(repo))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_plan_wants_the_changelog_section(repo: Path) -> None:
    (repo / "CHANGELOG.md").write_text("# Changelog\n\n## [Unreleased]\n")
    done = run("plan", "--version", "1.0.0", "--source", head(repo), "--owner", "o", "--root", str(repo))
    assert done.returncode == 2 and "CHANGELOG.md has no '## [1.0.0] - YYYY-MM-DD' section" in done.stderr


def test_pin_action_changes_only_the_image_line(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    shutil.copy(ROOT / "action.yml", action)
    before = action.read_text(encoding="utf-8")
    done = run(
        "pin-action",
        "--version",
        "1.2.3",
        "--image",
        "ghcr.io/o/cce-relevance",
        "--digest",
        DIGEST,
        "--file",
        str(action),
    )
    assert done.returncode == 0, done.stderr
    after = action.read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [("  image: Dockerfile", f"  image: docker://ghcr.io/o/cce-relevance:1.2.3@{DIGEST}")]
    pinned = f"docker://ghcr.io/o/cce-relevance:1.2.3@{DIGEST}"
    assert yaml.safe_load(after)["runs"] == {"using": "docker", "image": pinned}
    # a release commit is never released again
    twice = run(
        "pin-action",
        "--version",
        "1.2.3",
        "--image",
        "ghcr.io/o/cce-relevance",
        "--digest",
        DIGEST,
        "--file",
        str(action),
    )
    assert twice.returncode == 2 and "exactly one '  image: Dockerfile' line" in twice.stderr


def test_pin_action_refuses_a_digest_that_is_not_one(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    shutil.copy(ROOT / "action.yml", action)
    done = run(
        "pin-action",
        "--version",
        "1.2.3",
        "--image",
        "ghcr.io/o/cce-relevance",
        "--digest",
        "latest",
        "--file",
        str(action),
    )
    assert done.returncode == 2 and "is not sha256:<64 lowercase hex digits>" in done.stderr
    assert action.read_text() == (ROOT / "action.yml").read_text()


def publish(repo: Path, version: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run(
        "publish",
        "--version",
        version,
        "--source",
        head(repo),
        "--owner",
        "o",
        "--digest",
        DIGEST,
        "--root",
        str(repo),
        *extra,
    )


def test_publish_dry_run_makes_the_release_commit_and_tags_but_pushes_nothing(repo: Path) -> None:
    source = head(repo)
    done = publish(repo, "1.0.0", "--dry-run")
    assert done.returncode == 0, done.stderr
    commit = outputs(done.stdout)["release-commit"]
    assert git(repo, "rev-parse", f"{commit}^") == source
    assert git(repo, "diff", "--name-only", source, commit) == "action.yml"
    action = yaml.safe_load(git(repo, "show", f"{commit}:action.yml"))
    assert action["runs"]["image"] == f"docker://ghcr.io/o/cce-relevance:1.0.0@{DIGEST}"
    for tag in ("v1.0.0", "v1.0", "v1"):
        assert git(repo, "rev-parse", f"{tag}^{{commit}}") == commit
    assert "dry run, not pushed: git push --force origin refs/tags/v1.0.0" in done.stderr
    assert remote_tags(repo) == {}
    assert git(repo, "rev-parse", "main") == source  # the release commit is on no branch
    assert yaml.safe_load(git(repo, "show", "origin/main:action.yml"))["runs"]["image"] == "Dockerfile"


def test_publish_pushes_and_moves_the_line_tags(repo: Path) -> None:
    first = publish(repo, "1.0.0")
    assert first.returncode == 0, first.stderr
    first_commit = outputs(first.stdout)["release-commit"]
    assert remote_tags(repo) == {"v1.0.0": first_commit, "v1.0": first_commit, "v1": first_commit}

    git(repo, "checkout", "--quiet", "main")  # the next release starts from main again
    set_version(repo, "1.1.0")
    git(repo, "commit", "--quiet", "-am", "1.1.0")
    git(repo, "tag", "v1.1.0")  # as a maintainer starts a release: the tag on the source commit
    second = publish(repo, "1.1.0")
    assert second.returncode == 0, second.stderr
    second_commit = outputs(second.stdout)["release-commit"]
    assert remote_tags(repo) == {
        "v1.0.0": first_commit,
        "v1.0": first_commit,
        "v1.1.0": second_commit,
        "v1.1": second_commit,
        "v1": second_commit,
    }


def test_publish_refuses_a_checkout_that_is_not_the_source(repo: Path) -> None:
    source = head(repo)
    (repo / "action.yml").write_text("changed\n")
    dirty = publish(repo, "1.0.0", "--dry-run")
    assert dirty.returncode == 2 and "uncommitted changes" in dirty.stderr
    git(repo, "checkout", "--quiet", "action.yml")
    other = run(
        "publish",
        "--version",
        "1.0.0",
        "--source",
        "f" * 40,
        "--owner",
        "o",
        "--digest",
        DIGEST,
        "--root",
        str(repo),
        "--dry-run",
    )
    assert other.returncode == 2 and f"not the source commit {'f' * 40}" in other.stderr
    assert head(repo) == source and git(repo, "tag") == ""


# -- the package on PyPI, and the runner-native action that installs it ----------------------


def fake_dist(directory: Path, version: str) -> tuple[str, str]:
    """An sdist and a wheel of `version` (any bytes will do for pinning); their sha256s."""
    directory.mkdir(parents=True, exist_ok=True)
    sdist = directory / f"cce_relevance-{version}.tar.gz"
    wheel = directory / f"cce_relevance-{version}-py3-none-any.whl"
    sdist.write_bytes(b"sdist " + version.encode())
    wheel.write_bytes(b"wheel " + version.encode())
    return release.sha256(sdist), release.sha256(wheel)


def test_pin_runner_changes_only_the_package_line(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    shutil.copy(ROOT / "runner" / "action.yml", action)
    before = action.read_text(encoding="utf-8")
    sdist, wheel = fake_dist(tmp_path / "dist", "1.2.3")

    done = run("pin-runner", "--version", "1.2.3", "--dist", str(tmp_path / "dist"), "--file", str(action))

    assert done.returncode == 0, done.stderr
    after = action.read_text(encoding="utf-8")
    pin = f"cce-relevance==1.2.3 --hash=sha256:{sdist} --hash=sha256:{wheel}"
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [("      CCE_PACKAGE: ''", f"      CCE_PACKAGE: '{pin}'")]
    [install] = [s for s in yaml.safe_load(after)["runs"]["steps"] if s["id"] == "install"]
    assert install["env"]["CCE_PACKAGE"] == pin
    assert "--require-hashes" in install["run"]
    twice = run("pin-runner", "--version", "1.2.3", "--dist", str(tmp_path / "dist"), "--file", str(action))
    assert twice.returncode == 2 and "exactly one empty `CCE_PACKAGE: ''` line" in twice.stderr


def test_pin_runner_wants_both_files_of_the_version(tmp_path: Path) -> None:
    fake_dist(tmp_path / "dist", "1.2.2")
    action = tmp_path / "action.yml"
    shutil.copy(ROOT / "runner" / "action.yml", action)
    done = run("pin-runner", "--version", "1.2.3", "--dist", str(tmp_path / "dist"), "--file", str(action))
    assert (
        done.returncode == 2 and "must hold one sdist and one wheel of 1.2.3 (found 0 and 0)" in done.stderr
    )
    assert action.read_text() == (ROOT / "runner" / "action.yml").read_text()


def test_publish_with_dist_pins_both_actions_in_the_release_commit(repo: Path, tmp_path: Path) -> None:
    (repo / "runner").mkdir()
    shutil.copy(ROOT / "runner" / "action.yml", repo / "runner" / "action.yml")
    git(repo, "add", "runner")
    git(repo, "commit", "--quiet", "-m", "the runner-native action")
    source = head(repo)
    sdist, wheel = fake_dist(tmp_path / "dist", "1.0.0")

    done = publish(repo, "1.0.0", "--dry-run", "--dist", str(tmp_path / "dist"))

    assert done.returncode == 0, done.stderr
    commit = outputs(done.stdout)["release-commit"]
    assert git(repo, "diff", "--name-only", source, commit).split() == ["action.yml", "runner/action.yml"]
    runner = yaml.safe_load(git(repo, "show", f"{commit}:runner/action.yml"))
    [install] = [s for s in runner["runs"]["steps"] if s["id"] == "install"]
    assert (
        install["env"]["CCE_PACKAGE"] == f"cce-relevance==1.0.0 --hash=sha256:{sdist} --hash=sha256:{wheel}"
    )
    assert "runner: cce-relevance==1.0.0" in git(repo, "log", "-1", "--format=%B", commit)


def sdist_of(path: Path, files: dict[str, bytes], *, mtime: int, reverse: bool) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name in sorted(files, reverse=reverse):
            info = tarfile.TarInfo(f"cce_relevance-1.0.0/{name}")
            info.size, info.mtime, info.uid, info.uname = len(files[name]), mtime, 1000 + mtime % 7, "builder"
            info.mode = 0o775 if name.endswith(".sh") else 0o664
            tar.addfile(info, io.BytesIO(files[name]))


def test_a_normalized_sdist_depends_on_its_files_alone(tmp_path: Path) -> None:
    files = {"PKG-INFO": b"Name: cce-relevance\n", "a/b.py": b"x = 1\n", "run.sh": b"#!/bin/sh\n"}
    first, second = tmp_path / "first.tar.gz", tmp_path / "second.tar.gz"
    sdist_of(first, files, mtime=1_700_000_000, reverse=False)
    sdist_of(second, files, mtime=1_800_000_123, reverse=True)
    assert first.read_bytes() != second.read_bytes()

    for path in (first, second):
        release.normalize_sdist(path, 1_600_000_000)

    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        members = tar.getmembers()
        assert [m.name.split("/", 1)[1] for m in members] == sorted(files)
        assert {m.mtime for m in members} == {1_600_000_000} and {m.uid for m in members} == {0}
        assert {m.name.rsplit("/", 1)[-1]: m.mode for m in members}["run.sh"] == 0o755
        assert {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in members} == files


def tracked_copy(destination: Path, mtime: int) -> Path:
    """This checkout's files as git sees them (tracked and new, not ignored), with every file's
    time set to `mtime`: a fresh checkout made at another moment."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        if (ROOT / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)
            os.utime(destination / name, (mtime, mtime))
    return destination


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="needs `build` (the test extra)")
def test_two_builds_are_the_same_bytes_and_pass_twine_check(tmp_path: Path) -> None:
    builds = []
    roots = [
        tracked_copy(tmp_path / f"checkout-{n}", mtime)
        for n, mtime in enumerate((1_700_000_000, 1_750_000_000))
    ]
    for number, root in enumerate(roots):
        done = subprocess.run(
            [
                sys.executable,
                str(SCRIPT),
                "dist",
                "--root",
                str(root),
                "--outdir",
                str(tmp_path / f"dist-{number}"),
            ],
            env={**os.environ, "SOURCE_DATE_EPOCH": "1764547200"},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stderr
        builds.append({p.name: p.read_bytes() for p in sorted((tmp_path / f"dist-{number}").iterdir())})

    version = release.tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    assert sorted(builds[0]) == [
        f"cce_relevance-{version}-py3-none-any.whl",
        f"cce_relevance-{version}.tar.gz",
    ]
    assert builds[0] == builds[1]
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, (tmp_path / "dist-0").iterdir())],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
