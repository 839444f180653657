#!/usr/bin/env python3
"""Fetch and verify the reference implementation's published data, which the parity tests read.

    fetch_upstream.py fetch DEST [--base-url URL]
        Download every file listed in scripts/upstream-cce.sha256 from the reference's public
        repository at the pinned commit into DEST, and check each one's SHA-256. A DEST that
        already verifies is left as it is (so a cached copy costs nothing). On any mismatch or
        failed download DEST is left untouched and the exit code is 1.
    fetch_upstream.py verify DIR
        Check the files of DIR against the same list (exit 1 naming each missing or changed one).

Then point the tests at it: `CCE_UPSTREAM_DIR=DEST python -m pytest`. ci.yml does exactly this;
`.ci/run` verifies ../shared/upstream-cce instead, offline. The files are the reference's (MIT,
its LICENSE is among them) and are never committed here: only their names and digests are.
Standard library only, so it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MANIFEST = Path(__file__).resolve().with_name("upstream-cce.sha256")
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
ATTEMPTS = 3


@dataclass(frozen=True)
class Manifest:
    repository: str
    commit: str
    files: dict[str, str]  # repository path -> SHA-256


def read_manifest(path: Path = MANIFEST) -> Manifest:
    headers: dict[str, str] = {}
    files: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if sep and key.strip() in ("repository", "commit"):
                headers[key.strip()] = value.strip()
            continue
        digest, sep, name = line.partition("  ")
        posix = PurePosixPath(name)
        if not sep or len(digest) != 64 or posix.is_absolute() or ".." in posix.parts:
            raise ValueError(f"{path.name} line {number}: expected '<sha256>  <relative path>', got {line!r}")
        files[name] = digest
    if set(headers) != {"repository", "commit"} or not files:
        raise ValueError(f"{path.name}: expected '# repository:' and '# commit:' lines and at least one file")
    return Manifest(headers["repository"], headers["commit"], files)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def problems(directory: Path, manifest: Manifest) -> list[str]:
    """One line per listed file that is missing from `directory` or differs; empty when all match."""
    found = []
    for name, expected in manifest.files.items():
        path = directory / name
        if not path.is_file():
            found.append(f"{name}: missing")
        elif (actual := sha256(path)) != expected:
            found.append(f"{name}: SHA-256 {actual}, expected {expected}")
    return found


def _download(url: str) -> bytes:
    """The body of `url`; transient failures (5xx, resets) are retried with a short back-off."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            if exc.code < 500 or attempt == ATTEMPTS:
                raise
        except (urllib.error.URLError, TimeoutError, ConnectionError):
            if attempt == ATTEMPTS:
                raise
        time.sleep(attempt)
    raise AssertionError("unreachable")


def fetch(dest: Path, manifest: Manifest, base_url: str) -> list[str]:
    """Download into a sibling temporary directory, verify, then move it to `dest`."""
    if dest.is_dir() and not problems(dest, manifest):
        print(f"fetch_upstream: {dest} already holds the {len(manifest.files)} files "
              f"at {manifest.commit[:12]}")
        return []
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        for name in manifest.files:
            url = f"{base_url.rstrip('/')}/{manifest.repository}/{manifest.commit}/{name}"
            try:
                body = _download(url)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                return [f"{name}: cannot download {url}: {exc}"]
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
        found = problems(staging, manifest)
        if found:
            return found
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(staging, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"fetch_upstream: {len(manifest.files)} files of {manifest.repository}@{manifest.commit[:12]} "
          f"verified in {dest}")
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p_fetch = commands.add_parser("fetch", help="download and verify into DEST")
    p_fetch.add_argument("dest", type=Path)
    p_fetch.add_argument("--base-url", default=DEFAULT_BASE_URL, help=f"default {DEFAULT_BASE_URL}")
    p_verify = commands.add_parser("verify", help="check a directory against the digests")
    p_verify.add_argument("dir", type=Path)
    args = parser.parse_args(argv)
    manifest = read_manifest()
    if args.command == "fetch":
        found = fetch(args.dest, manifest, args.base_url)
        where = f"{manifest.repository}@{manifest.commit[:12]} into {args.dest}"
    else:
        found = problems(args.dir, manifest)
        where = str(args.dir)
        if not found:
            print(f"fetch_upstream: {args.dir} holds the {len(manifest.files)} files "
                  f"at {manifest.commit[:12]}")
    for line in found:
        print(f"fetch_upstream: {line}", file=sys.stderr)
    if found:
        print(f"fetch_upstream: error: the reference data does not verify ({where})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
