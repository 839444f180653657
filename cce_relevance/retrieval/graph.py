"""The file import graph used by graph expansion (pipeline.md §11.11).

Module names are resolved to files the way the reference does it: first an exact file-stem
match anywhere in the corpus, then a plain `name.py`/`name.js` suffix match, ignoring language
and directory. The looseness is the reference's (pipeline.md §17.5) and is kept for parity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


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
        linked: dict[str, set[str]] = {}
        resolved: dict[str, str | None] = {}  # corpora import the same modules many times over
        for source in sorted(file_imports):
            for module in file_imports[source]:
                if module not in resolved:
                    resolved[module] = first_by_stem.get(module) or self._suffix_match(module)
                target = resolved[module]
                if target is not None and target != source:
                    linked.setdefault(source, set()).add(target)
                    linked.setdefault(target, set()).add(source)
        self._neighbors = {f: sorted(others) for f, others in linked.items()}

    def _suffix_match(self, module: str) -> str | None:
        py, js = module + ".py", module + ".js"
        return next((f for f in self.files if f.endswith(py) or f.endswith(js)), None)

    def neighbors(self, path: str) -> list[str]:
        """Sorted union of the files `path` imports and the files that import it."""
        return list(self._neighbors.get(path, ()))
