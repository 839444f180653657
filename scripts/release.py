#!/usr/bin/env python3
"""The release line's logic: which tags a version gets, and the release commit that pins the image.

`.github/workflows/release.yml` calls it; every step also runs offline, so RELEASING.md's dry run
and tests/test_release_script.py exercise exactly what the workflow does.

    release.py plan --version X.Y.Z --source SHA --owner OWNER [--github-output FILE]
        Checks the version (pyproject.toml, cce_relevance.__version__ and a CHANGELOG section
        agree) and prints the image reference, the image tags and the git tags to create or move.
    release.py pin-action --image REF --version X.Y.Z --digest sha256:HEX [--file action.yml]
        Rewrites `image: Dockerfile` to `image: docker://REF:X.Y.Z@sha256:HEX`, nothing else.
    release.py dist --outdir DIR [--root ROOT]
        Builds the sdist and the wheel reproducibly: SOURCE_DATE_EPOCH (default: the commit time
        of ROOT's HEAD) for the wheel, and the sdist rewritten with every member's time, owner
        and order fixed, so two builds of one commit are the same bytes (PyPI's files and the
        hashes pinned in runner/action.yml must be). Needs `build` installed.
    release.py pin-runner --version X.Y.Z --dist DIR [--file runner/action.yml]
        Points the runner-native action at the published package: its install step's
        `CCE_PACKAGE` becomes `cce-relevance==X.Y.Z` with the sha256 of both files in DIR, so a
        release installs exactly those bytes (`--require-hashes`) instead of building from source.
    release.py publish --version X.Y.Z --source SHA --owner OWNER --digest sha256:HEX
                       [--dist DIR] [--remote NAME] [--dry-run] [--github-output FILE]
        In a checkout of SOURCE: pins action.yml (and, with --dist, runner/action.yml), commits
        it (a child of SOURCE), points vX.Y.Z at that commit and moves vX.Y and vX when this is
        the newest release of their line, then force-pushes those tags (unless --dry-run, which
        prints the push instead).

Tag rules: vX.Y.Z is created once and never reused (users pin it, and its image is never
deleted); vX.Y and vX follow the newest release of their line, so a patch to an older line
(1.2.5 after 1.3.0) moves v1.2 but not v1. The image gets the same treatment (`:X.Y.Z`, `:<source
sha>`, and `:X.Y`/`:X` when their git tags move). Standard library only: it runs before anything
is installed.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE_NAME = "cce-relevance"
VERSION = re.compile(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
RELEASE_TAG = re.compile(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
SHA = re.compile(r"^[0-9a-f]{40}$")
# GHCR names: lowercase; an owner is letters, digits and single hyphens.
OWNER = re.compile(r"^[A-Za-z0-9](?:-?[A-Za-z0-9])*$")
SOURCE_IMAGE_LINE = re.compile(r"^(  image: )Dockerfile\s*$", re.MULTILINE)
# runner/action.yml's install step on main: an empty package pin, so it builds from its checkout
SOURCE_PACKAGE_LINE = re.compile(r"^(      CCE_PACKAGE: )''\s*$", re.MULTILINE)
PACKAGE = "cce-relevance"
DIST_NAME = "cce_relevance"  # the distributions' file names (PEP 625 / the wheel spec normalise '-')
BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")

Version = tuple[int, int, int]


class ReleaseError(Exception):
    """A release that must not go ahead; the message says why and what to do."""


@dataclass(frozen=True)
class Plan:
    version: Version
    image: str
    source: str
    moves_minor: bool
    moves_major: bool

    @property
    def text(self) -> str:
        return ".".join(map(str, self.version))

    @property
    def git_tags(self) -> tuple[str, ...]:
        major, minor, _ = self.version
        tags = [f"v{self.text}"]
        if self.moves_minor:
            tags.append(f"v{major}.{minor}")
        if self.moves_major:
            tags.append(f"v{major}")
        return tuple(tags)

    @property
    def image_tags(self) -> tuple[str, ...]:
        """Full references: `:X.Y.Z`, then `:X.Y` and `:X` when their git tags move, then `:<sha>`."""
        return tuple(f"{self.image}:{tag.removeprefix('v')}" for tag in self.git_tags) + (
            f"{self.image}:{self.source}",
        )


def parse_version(text: str) -> Version:
    match = VERSION.match(text.strip())
    if not match:
        raise ReleaseError(f"version {text!r} is not X.Y.Z (three numbers without leading zeros, e.g. 1.2.3)")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def image_for(owner: str) -> str:
    if not OWNER.match(owner):
        raise ReleaseError(f"owner {owner!r} is not a GitHub user or organisation name")
    return f"ghcr.io/{owner.lower()}/{IMAGE_NAME}"


def plan(version: Version, source: str, owner: str, released: set[Version]) -> Plan:
    """The tags of `version`, given the versions already released (their vX.Y.Z tags)."""
    if not SHA.match(source):
        raise ReleaseError(f"source {source!r} is not a full 40-character commit SHA")
    if version in released:
        raise ReleaseError(
            f"v{'.'.join(map(str, version))} is already released: a released version is never "
            "rebuilt or moved (users pin it); release the next patch version instead"
        )
    major, minor, _ = version
    same_minor = [v for v in released if v[:2] == (major, minor)]
    same_major = [v for v in released if v[0] == major]
    return Plan(
        version,
        image_for(owner),
        source,
        moves_minor=all(version > v for v in same_minor),
        moves_major=all(version > v for v in same_major),
    )


def check_sources_agree(version: Version, root: Path) -> None:
    """pyproject.toml, the package's __version__ and CHANGELOG.md all name the version."""
    text = ".".join(map(str, version))
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    init = (root / "cce_relevance" / "__init__.py").read_text(encoding="utf-8")
    package = re.search(r'^__version__ = "([^"]+)"$', init, re.M)
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    problems = []
    if project != text:
        problems.append(f"pyproject.toml says version {project!r}")
    if package is None or package.group(1) != text:
        found = package.group(1) if package else None
        problems.append(f"cce_relevance/__init__.py says __version__ {found!r}")
    if not re.search(rf"^## \[{re.escape(text)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M):
        problems.append(f"CHANGELOG.md has no '## [{text}] - YYYY-MM-DD' section")
    if problems:
        raise ReleaseError(
            f"cannot release {text}: "
            + "; ".join(problems)
            + ". Commit the version bump and the changelog section first (RELEASING.md)"
        )


def _replace_source_line(text: str, line: re.Pattern[str], what: str, value: str) -> str:
    """`text` with the one line `line` matches ending in `value` instead; the rest unchanged."""
    found = line.findall(text)
    if len(found) != 1:
        raise ReleaseError(
            f"{what} (found {len(found)}): release from a commit of main, never from a release commit"
        )
    return line.sub(lambda m: f"{m.group(1)}{value}", text, count=1)


def pin_action(text: str, reference: str) -> str:
    """action.yml with its one `image: Dockerfile` line pointing at `reference`; the rest unchanged."""
    what = "action.yml must have exactly one '  image: Dockerfile' line under runs"
    return _replace_source_line(text, SOURCE_IMAGE_LINE, what, f"docker://{reference}")


def image_reference(image: str, version: Version, digest: str) -> str:
    if not DIGEST.match(digest):
        raise ReleaseError(f"digest {digest!r} is not sha256:<64 lowercase hex digits>")
    return f"{image}:{'.'.join(map(str, version))}@{digest}"


def distributions(dist: Path, version: Version) -> tuple[Path, Path]:
    """The sdist and the wheel of `version` in `dist`, both required."""
    text = ".".join(map(str, version))
    sdists = sorted(dist.glob(f"{DIST_NAME}-{text}.tar.gz"))
    wheels = sorted(dist.glob(f"{DIST_NAME}-{text}-*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise ReleaseError(
            f"{dist} must hold one sdist and one wheel of {text} (found {len(sdists)} and {len(wheels)}): "
            "build them with `release.py dist`"
        )
    return sdists[0], wheels[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def package_pin(dist: Path, version: Version) -> str:
    """The requirement the released runner action installs: the version and both files' hashes."""
    hashes = " ".join(f"--hash=sha256:{sha256(path)}" for path in distributions(dist, version))
    return f"{PACKAGE}=={'.'.join(map(str, version))} {hashes}"


def pin_runner(text: str, pin: str) -> str:
    """runner/action.yml with its empty `CCE_PACKAGE` pin set to `pin`; the rest unchanged."""
    what = "runner/action.yml must have exactly one empty `CCE_PACKAGE: ''` line"
    return _replace_source_line(text, SOURCE_PACKAGE_LINE, what, f"'{pin}'")


def source_date_epoch(root: Path) -> int:
    """SOURCE_DATE_EPOCH when set, else the commit time of `root`'s HEAD."""
    value = os.environ.get("SOURCE_DATE_EPOCH") or git(root, "log", "-1", "--format=%ct", "HEAD")
    if not value.isdigit():
        raise ReleaseError(f"SOURCE_DATE_EPOCH={value!r} is not a number of seconds")
    return int(value)


def normalize_sdist(path: Path, epoch: int) -> None:
    """Rewrite an sdist so that its bytes depend on its files' contents alone.

    setuptools stamps the tar members with the checkout's file times (and its own build time on
    the files it writes, such as PKG-INFO) and the gzip header with the time of the build, so two
    builds of one commit differ. Here every member gets `epoch` as its time, root as its owner,
    0644 or 0755 as its mode, and the members are sorted by name; the gzip header carries `epoch`
    and no file name.
    """
    members = []
    with tarfile.open(path, "r:gz") as source:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            members.append((member, data))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as target:
        for member, data in sorted(members, key=lambda item: item[0].name):
            member.mtime, member.uid, member.gid, member.uname, member.gname = epoch, 0, 0, "", ""
            member.mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
            member.pax_headers = {}
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=epoch, compresslevel=9) as zipped:
        zipped.write(buffer.getvalue())
    path.write_bytes(packed.getvalue())


def build_dist(root: Path, outdir: Path) -> tuple[Path, Path]:
    """`python -m build` with SOURCE_DATE_EPOCH, then the sdist normalised; returns the two files."""
    epoch = source_date_epoch(root)
    outdir.mkdir(parents=True, exist_ok=True)
    if any(outdir.iterdir()):
        raise ReleaseError(f"{outdir} is not empty: build into a new directory")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(outdir), str(root)],
        env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch)},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReleaseError(f"python -m build failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    version = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    sdist, wheel = distributions(outdir, parse_version(version))
    normalize_sdist(sdist, epoch)
    return sdist, wheel


def git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def released_versions(root: Path, source: str) -> set[Version]:
    """Versions with a vX.Y.Z tag, except one that still marks `source` itself: the tag a
    maintainer pushed to start this release (it is moved to the release commit)."""
    versions = set()
    for tag in git(root, "tag", "--list", "v*.*.*").split():
        match = RELEASE_TAG.match(tag)
        if not match:
            continue
        if git(root, "rev-parse", f"{tag}^{{commit}}") == source:
            continue
        versions.add((int(match[1]), int(match[2]), int(match[3])))
    return versions


def publish(
    root: Path, release: Plan, digest: str, remote: str, dry_run: bool, dist: Path | None = None
) -> str:
    """Make the release commit and its tags; push them unless `dry_run`. Returns the commit."""
    head = git(root, "rev-parse", "HEAD")
    if head != release.source:
        raise ReleaseError(f"the checkout is at {head}, not the source commit {release.source}")
    if git(root, "status", "--porcelain", "--untracked-files=no"):
        raise ReleaseError("the checkout has uncommitted changes: release from a clean checkout")
    # the release commit is on no branch: main keeps `image: Dockerfile`
    git(root, "checkout", "--quiet", "--detach")
    action = root / "action.yml"
    reference = image_reference(release.image, release.version, digest)
    action.write_text(pin_action(action.read_text(encoding="utf-8"), reference), encoding="utf-8")
    pinned = ["action.yml"]
    notes = f"image: docker://{reference}\n"
    if dist is not None:
        pin = package_pin(dist, release.version)
        runner = root / "runner" / "action.yml"
        runner.write_text(pin_runner(runner.read_text(encoding="utf-8"), pin), encoding="utf-8")
        pinned.append("runner/action.yml")
        notes += f"runner: {pin}\n"
    name, email = BOT
    identity = ("-c", f"user.name={name}", "-c", f"user.email={email}")
    what = "the published image" + (" and package" if dist is not None else "")
    message = f"Release v{release.text}: the actions run {what}\n\n{notes}source: {release.source}\n"
    git(root, *identity, "commit", "--quiet", "--no-verify", "-m", message, "--", *pinned)
    commit = git(root, "rev-parse", "HEAD")
    for tag in release.git_tags:
        git(root, *identity, "tag", "--force", "--annotate", "-m", f"cce-relevance {tag}", tag, commit)
    push = ["push", "--force", remote, *(f"refs/tags/{tag}" for tag in release.git_tags)]
    if dry_run:
        print("dry run, not pushed: git " + " ".join(push), file=sys.stderr)
    else:
        git(root, *push)
    return commit


def write_outputs(values: dict[str, str], github_output: str | None) -> None:
    """`key=value` lines on stdout, and in $GITHUB_OUTPUT when given (lists one per line)."""
    for key, value in values.items():
        print(f"{key}={value}")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as out:
            for key, value in values.items():
                if "\n" in value:
                    out.write(f"{key}<<RELEASE_EOF\n{value}\nRELEASE_EOF\n")
                else:
                    out.write(f"{key}={value}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p_plan = commands.add_parser("plan", help="check the version and print the tags it gets")
    p_pin = commands.add_parser("pin-action", help="point action.yml at a published image")
    p_pub = commands.add_parser("publish", help="release commit and tags (pushed unless --dry-run)")
    p_dist = commands.add_parser("dist", help="build the sdist and wheel reproducibly")
    p_dist.add_argument("--outdir", type=Path, required=True, help="a new or empty directory")
    p_dist.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this repository)")
    p_runner = commands.add_parser("pin-runner", help="point runner/action.yml at the published package")
    p_runner.add_argument("--version", required=True)
    p_runner.add_argument("--dist", type=Path, required=True, help="the directory `dist` built")
    p_runner.add_argument("--file", type=Path, default=ROOT / "runner" / "action.yml")
    p_pub.add_argument("--dist", type=Path, help="also pin runner/action.yml to these distributions")
    for sub in (p_plan, p_pin, p_pub):
        sub.add_argument("--version", required=True)
        sub.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this repository)")
    for sub in (p_plan, p_pub):
        sub.add_argument("--source", required=True, help="full SHA of the commit the image is built from")
        sub.add_argument("--github-output", help="also append the outputs to this file ($GITHUB_OUTPUT)")
        sub.add_argument("--owner", required=True, help="the repository's owner (github.repository_owner)")
    p_pin.add_argument("--image", required=True, help="e.g. ghcr.io/OWNER/cce-relevance")
    for sub in (p_pin, p_pub):
        sub.add_argument("--digest", required=True, help="the pushed image index's sha256:… digest")
    p_pin.add_argument("--file", type=Path, help="default: ROOT/action.yml")
    p_pub.add_argument("--remote", default="origin")
    p_pub.add_argument("--dry-run", action="store_true", help="make the commit and tags, do not push")
    args = parser.parse_args(argv)
    try:
        if args.command == "dist":
            for path in build_dist(args.root.resolve(), args.outdir):
                print(f"{sha256(path)}  {path.name}")
            return 0
        version = parse_version(args.version)
        if args.command == "pin-runner":
            pin = package_pin(args.dist, version)
            args.file.write_text(pin_runner(args.file.read_text(encoding="utf-8"), pin), encoding="utf-8")
            print(f"CCE_PACKAGE: {pin}")
            return 0
        if args.command == "pin-action":
            path = args.file or args.root / "action.yml"
            reference = image_reference(args.image, version, args.digest)
            path.write_text(pin_action(path.read_text(encoding="utf-8"), reference), encoding="utf-8")
            print(f"image: docker://{reference}")
            return 0
        release = plan(version, args.source, args.owner, released_versions(args.root, args.source))
        if args.command == "plan":
            check_sources_agree(version, args.root)
            write_outputs(
                {
                    "version": release.text,
                    "image": release.image,
                    "image-tags": "\n".join(release.image_tags),
                    "git-tags": " ".join(release.git_tags),
                },
                args.github_output,
            )
            return 0
        commit = publish(args.root, release, args.digest, args.remote, args.dry_run, args.dist)
        write_outputs({"release-commit": commit, "git-tags": " ".join(release.git_tags)}, args.github_output)
        return 0
    except ReleaseError as exc:
        print(f"release: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
