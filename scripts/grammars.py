#!/usr/bin/env python3
"""Every language cce-relevance chunks still parses; and the language pack pruned to what we load.

    grammars.py check   parse a small sample in every supported language (the reference's six and
                        the opt-in ones) with the grammar its pack loads; exit 1 naming each one
                        that fails to load, reports a syntax error or yields no chunk-kind node.
    grammars.py prune   load every pack's grammar, then delete the tree-sitter-language-pack
                        bindings nothing loaded (0.13.0 ships 172 grammars, 184 MB; we load five),
                        then `check`. Used by the Dockerfile's build stage.

The Docker image runs `check` while it is built (for each platform) and keeps this file as
/app/grammars.py, so `docker run --rm --entrypoint python IMAGE /app/grammars.py check` repeats it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tree_sitter import Node

from cce_relevance.retrieval.chunking.languages import EXTRA_PACKS
from cce_relevance.retrieval.chunking.packs import PACKS, Pack

BINDINGS = "tree_sitter_language_pack.bindings."

# One definition per language, of a kind its pack makes a chunk of.
SAMPLES = {
    "python": "def read_config(path):\n    return open(path).read()\n",
    "javascript": "function add(a, b) {\n  return a + b;\n}\n",
    "ruby": "class Cart\n  def total\n    1\n  end\nend\n",
    "rust": "fn main() {\n    let x = 1;\n}\n",
    "typescript": "interface Shape {\n  area(): number;\n}\n",
    "c": "int add(int a, int b) {\n  return a + b;\n}\n",
    "go": "package main\n\nfunc Add(a int, b int) int {\n\treturn a + b\n}\n",
    "java": "class Inventory {\n  int count() { return 0; }\n}\n",
    "cpp": "class Shape {\n public:\n  double area() const { return 0; }\n};\n",
    "csharp": "class OrderService {\n  int Total() { return 0; }\n}\n",
    "php": "<?php\nfunction total($items) {\n  return count($items);\n}\n",
    "kotlin": "class Scheduler {\n  fun start() {}\n}\n",
}


def supported() -> tuple[Pack, ...]:
    return (*PACKS, *EXTRA_PACKS)


def _kinds(node: Node) -> set[str]:
    found = {node.type}
    for child in node.children:
        found |= _kinds(child)
    return found


def problems() -> list[str]:
    """One line per language that does not parse its sample into a chunk; empty when all do."""
    found = []
    for pack in supported():
        sample = SAMPLES.get(pack.name)
        if sample is None:
            found.append(f"{pack.name}: no sample in {Path(__file__).name}: add one")
            continue
        try:
            tree = pack.parser().parse(sample.encode())
        except Exception as exc:  # a missing or incompatible grammar: report it, check the rest
            found.append(f"{pack.name}: grammar does not load: {type(exc).__name__}: {exc}")
            continue
        if tree.root_node.has_error:
            found.append(f"{pack.name}: the sample has a syntax error")
        elif not _kinds(tree.root_node) & pack.chunk_kinds:
            found.append(f"{pack.name}: no node of {sorted(pack.chunk_kinds)} in the sample")
    return found


def check() -> int:
    found = problems()
    for line in found:
        print(f"grammars: {line}", file=sys.stderr)
    if found:
        return 1
    print(f"grammars: {len(supported())} languages parse: {', '.join(p.name for p in supported())}")
    return 0


def prune() -> int:
    """Delete the language pack's bindings that no pack loads; the rest are what `check` loaded."""
    if problems():
        return check()
    import tree_sitter_language_pack

    used = {name.removeprefix(BINDINGS) for name in sys.modules if name.startswith(BINDINGS)}
    bindings = Path(tree_sitter_language_pack.__file__).parent / "bindings"
    removed = 0
    for path in sorted(bindings.glob("*.so")):
        if path.name.split(".", 1)[0] not in used:
            removed += path.stat().st_size
            path.unlink()
    kept = sorted(p.name for p in bindings.glob("*.so"))
    print(f"grammars: kept {', '.join(kept)}; removed {removed / 1e6:.0f} MB of unused bindings")
    return check()


def main(argv: list[str]) -> int:
    commands = {"check": check, "prune": prune}
    if len(argv) != 1 or argv[0] not in commands:
        print(f"usage: {Path(__file__).name} check|prune", file=sys.stderr)
        return 2
    return commands[argv[0]]()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
