"""What a corpus walk leaves out besides what the reference does: a run's own files and the user's
`exclude` patterns.

A run must not score its own inputs and outputs: with the corpus at the repository root (the
common case), a golden report, a `--trec-run` file, a chart or the config file would otherwise be
indexed, and the next run would measure a different corpus (a golden refreshed and then checked
at once would drift). So the fixture file, the golden, the config file and every output path of
the run are left out when they lie inside the corpus, by exact path. The walk also never enters
dot directories, so `.cce-relevance/` (the Action's output) and `.cce/` (a store) are out anyway.

Users can exclude more with gitignore patterns (`exclude = [...]` in cce-relevance.toml, read as
a `.gitignore` beside that file, and `"exclude"` in a fixture header, read as a `.gitignore` at
the corpus root). Unlike a `.gitignore`, nothing in the corpus can re-include what they exclude.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cce_relevance.errors import CceError
from cce_relevance.retrieval.corpus.gitignore import Gitignore, GlobError, NestLimitError, compile_line


@dataclass(frozen=True)
class PatternSet:
    """Gitignore patterns written relative to one directory, as they apply to one corpus.

    A corpus-relative path is matched as `prefix + path[len(strip):]`: `prefix` leads from the
    patterns' directory down to a corpus inside it, `strip` from the corpus down to a patterns'
    directory inside it (paths outside that directory are not matched).
    """

    patterns: Gitignore
    prefix: bytes = b""
    strip: bytes = b""

    def excludes(self, path: bytes, is_dir: bool) -> bool:
        if not path.startswith(self.strip):
            return False
        return self.patterns.match(self.prefix + path[len(self.strip) :], is_dir) is True


@dataclass(frozen=True)
class Exclusion:
    """A run's own files (corpus-relative POSIX paths) and the pattern sets that apply."""

    own: frozenset[str] = frozenset()
    patterns: tuple[PatternSet, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.own or self.patterns)

    def excludes_dir(self, path: bytes) -> bool:
        """Whether the walk must not enter the directory at corpus-relative `path`."""
        return any(p.excludes(path, True) for p in self.patterns)

    def excludes_file(self, path: bytes) -> bool:
        """Whether the file at corpus-relative `path` is left out (own files included)."""
        return path.decode("utf-8", "replace") in self.own or any(
            p.excludes(path, False) for p in self.patterns
        )


NO_EXCLUSION = Exclusion()


def compile_patterns(globs: Sequence[str], what: str) -> Gitignore:
    """`globs` as the lines of one `.gitignore`; `what` names them, and where they were written,
    in errors (`cce-relevance.toml: exclude pattern`)."""
    compiled = []
    for glob in globs:
        try:
            pattern = compile_line(glob)
        except (GlobError, NestLimitError) as exc:
            reason = str(exc) or "nested too deeply"
            raise CceError(f"{what} {glob!r} is not a valid gitignore pattern: {reason}") from None
        if pattern is not None:
            compiled.append(pattern)
    return Gitignore(compiled)


def pattern_set(patterns: Gitignore, base: str, corpus: str) -> PatternSet | None:
    """`patterns`, written relative to directory `base`, as they apply to the corpus at `corpus`;
    None when neither directory contains the other (they cannot match anything there)."""
    if not patterns:
        return None
    base_path, corpus_path = os.path.realpath(base), os.path.realpath(corpus)
    if base_path == corpus_path:
        return PatternSet(patterns)
    if _below(corpus_path, base_path):
        return PatternSet(patterns, prefix=_posix(os.path.relpath(corpus_path, base_path)) + b"/")
    if _below(base_path, corpus_path):
        return PatternSet(patterns, strip=_posix(os.path.relpath(base_path, corpus_path)) + b"/")
    return None


def own_files(paths: Iterable[str], corpus: str) -> frozenset[str]:
    """The corpus-relative paths of those of `paths` (as given, relative to the current directory)
    that lie inside the corpus at `corpus`; symlinked directories resolved, the file name kept."""
    root = os.path.realpath(corpus)
    inside = set()
    for path in paths:
        absolute = os.path.abspath(path)
        full = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
        if _below(full, root):
            inside.add(os.path.relpath(full, root).replace(os.sep, "/"))
    return frozenset(inside)


def _below(path: str, directory: str) -> bool:
    return path != directory and path.startswith(directory.rstrip(os.sep) + os.sep)


def _posix(path: str) -> bytes:
    return os.fsencode(path.replace(os.sep, "/"))
