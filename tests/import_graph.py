"""The package's import graph as the source states it, read with `ast` (not by importing).

Every import statement counts, wherever it stands: at module level, under `if TYPE_CHECKING:`
and inside functions (a lazy import is still a dependency). `from a.b import c` depends on
`a.b`, and on `a.b.c` too when that is a module. Packages are named without `__init__`.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "cce_relevance"
PACKAGE = PACKAGE_DIR.name


def module_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Every module of the package by dotted name (`__init__.py` gives its package's name)."""
    files = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join(parts)] = path
    return files


def import_graph(package_dir: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    """Module → the package's modules it imports (itself excluded)."""
    files = module_files(package_dir)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, is_package, node.module, node.level)
                edges.add(base)
                edges.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {edge for edge in edges if edge in files and edge != name}
    return graph


def _absolute(module: str, is_package: bool, target: str | None, level: int) -> str:
    if not level:
        return target or ""
    parts = module.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    return ".".join(parts[:keep] + ([target] if target else []))


def closure(graph: dict[str, set[str]], roots: set[str]) -> set[str]:
    """`roots` and everything they import, directly or not, with the packages that hold them."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        pending.extend(graph.get(name, ()))
        parent = name.rpartition(".")[0]
        if parent:
            pending.append(parent)
    return seen


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
