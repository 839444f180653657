"""The file import graph used by graph expansion (§import-graph).

Module names are resolved to files the way the reference does it: first an exact file-stem
match anywhere in the corpus, then a plain `name.py`/`name.js` suffix match, ignoring language
and directory. The looseness is the reference's (§oddity-graph-resolution) and is kept for parity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def file_stem(path: str) -> str:
    """Last `/`-segment up to its last `.` (the whole segment when it has no dot)."""
    segment = path.rsplit("/", 1)[-1]
    dot = segment.rfind(".")
    return segment[:dot] if dot >= 0 else segment


class ImportGraph:
    """Directed import edges between corpus files; neighbours ignore direction."""

    def __init__(self, file_imports: Mapping[str, Sequence[str]], files: Sequence[str]) -> None:
        self.files = list(files)
        first_by_stem: dict[str, str] = {}
        for f in self.files:
            first_by_stem.setdefault(file_stem(f), f)
        modules = {module for imports in file_imports.values() for module in imports}
        by_suffix = suffix_matches([m for m in modules if not first_by_stem.get(m)], self.files)
        resolved = {m: first_by_stem.get(m) or by_suffix.get(m) for m in modules}
        linked: dict[str, set[str]] = {}
        for source in sorted(file_imports):
            for module in file_imports[source]:
                target = resolved[module]
                if target is not None and target != source:
                    linked.setdefault(source, set()).add(target)
                    linked.setdefault(target, set()).add(source)
        self._neighbors = {f: sorted(others) for f, others in linked.items()}

    def neighbors(self, path: str) -> list[str]:
        """Sorted union of the files `path` imports and the files that import it."""
        return list(self._neighbors.get(path, ()))


_SUFFIX_EXTENSIONS = (".py", ".js")


def suffix_matches(modules: Iterable[str], files: Sequence[str]) -> dict[str, str]:
    """For each module that has one, the first of `files` whose path ends with `module.py` or
    `module.js` (the reference's fallback resolution).

    Names without a `/` can only be suffixes of a path's last segment, so each `.py`/`.js` file
    offers the few suffixes of its last segment to a dict lookup, in file order, instead of every
    module being compared with every path; a name with a `/` is compared with every path.
    """
    wanted: dict[str, str] = {}
    found: dict[str, str] = {}
    for module in modules:
        names = [module + ext for ext in _SUFFIX_EXTENSIONS]
        if any("/" in name for name in names):
            match = next((f for f in files if f.endswith(names[0]) or f.endswith(names[1])), None)
            if match is not None:
                found[module] = match
        else:
            wanted.update(dict.fromkeys(names, module))
    if not wanted:
        return found
    for f in files:
        if not f.endswith(_SUFFIX_EXTENSIONS):
            continue
        for start in range(f.rfind("/") + 1, len(f) - 2):
            named = wanted.get(f[start:])
            if named is not None and named not in found:
                found[named] = f
    return found
