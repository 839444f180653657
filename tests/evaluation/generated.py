"""Seeded random corpora and fixture sets for cross-checking the evaluation against trec_eval.

A corpus mixes Python and JavaScript (chunked by tree-sitter into functions, classes, methods)
with Markdown (one module chunk per file), built from a small vocabulary so that queries hit.
Fixture cases draw every anchor form, including anchors that resolve to nothing (missing file,
absent kind, range past the end), random grades, and random k.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = (
    "alpha",
    "bravo",
    "cache",
    "delta",
    "ember",
    "fetch",
    "grain",
    "harbor",
    "index",
    "jolt",
    "kernel",
    "ledger",
    "matrix",
    "nectar",
    "orbit",
    "parse",
    "quota",
    "relay",
    "signal",
    "token",
)
KINDS = (
    "function_definition",
    "class_definition",
    "function_declaration",
    "class_declaration",
    "method_definition",
    "arrow_function",
    "module",
    "enum_item",
)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _python(rng: random.Random) -> str:
    parts = []
    for i in range(rng.randint(1, 4)):
        if rng.random() < 0.3:
            parts.append(
                f"class {rng.choice(WORDS).title()}{i}:\n    def {rng.choice(WORDS)}(self):\n"
                f'        return "{_words(rng, 3)}"\n'
            )
        else:
            body = "\n".join(f"    # {_words(rng, 4)}" for _ in range(rng.randint(0, 3)))
            parts.append(f"def {rng.choice(WORDS)}_{i}(x):\n{body}\n    return x  # {_words(rng, 2)}\n")
    return "\n".join(parts)


def _javascript(rng: random.Random) -> str:
    parts = []
    for i in range(rng.randint(1, 3)):
        if rng.random() < 0.3:
            parts.append(f"const {rng.choice(WORDS)}{i} = (x) => x + 1; // {_words(rng, 3)}\n")
        else:
            parts.append(f"function {rng.choice(WORDS)}{i}(x) {{\n  // {_words(rng, 4)}\n  return x;\n}}\n")
    return "\n".join(parts)


def _markdown(rng: random.Random) -> str:
    return "".join(f"{_words(rng, rng.randint(3, 8))}\n" for _ in range(rng.randint(1, 6)))


def write_corpus(rng: random.Random, root: Path) -> dict[str, int]:
    """Write 4–9 files under `root`; returns {path: number of lines}."""
    makers = {".py": _python, ".js": _javascript, ".md": _markdown}
    lines = {}
    for i in range(rng.randint(4, 9)):
        suffix = rng.choice(sorted(makers))
        name = f"{rng.choice(WORDS)}_{i}{suffix}"
        text = makers[suffix](rng)
        (root / name).write_text(text, encoding="utf-8")
        lines[name] = text.count("\n")
    return lines


def _anchor(rng: random.Random, files: dict[str, int]) -> str:
    path = rng.choice(sorted(files)) if rng.random() < 0.9 else "missing.py"
    form = rng.randrange(5)
    if form == 0:
        return path
    if form == 1:
        return f"{path}#{rng.choice(KINDS)}"
    if form == 2:
        return f"#{rng.choice(KINDS)}"
    start = rng.randint(1, files.get(path, 10) + 3)
    span = f"@{start}-{start + rng.randint(0, 4)}"
    return f"{path}{span}" if form == 3 else f"{path}#{rng.choice(KINDS)}{span}"


def write_fixtures(rng: random.Random, path: Path, files: dict[str, int], cases: int) -> None:
    """A fixture set of `cases` cases with distinct ids, about a third of them graded."""
    lines = [json.dumps({"schema": "cce.relevance/v1", "corpus": "corpus"})]
    for i in range(cases):
        expected = list(dict.fromkeys(_anchor(rng, files) for _ in range(rng.randint(1, 3))))
        case = {
            "id": f"g{i}",
            "query": _words(rng, rng.randint(1, 4)),
            "expected": expected,
            "k": rng.randint(1, 8),
        }
        if rng.random() < 0.35:
            case["grades"] = {a: rng.randint(1, 3) for a in expected if rng.random() < 0.7}
        lines.append(json.dumps(case))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def generated_project(seed: int, root: Path, cases: int = 60) -> Path:
    """A corpus and fixture set under `root`; returns the fixture path."""
    rng = random.Random(seed)
    corpus = root / "corpus"
    corpus.mkdir()
    files = write_corpus(rng, corpus)
    fixtures = root / "set.jsonl"
    write_fixtures(rng, fixtures, files, cases)
    return fixtures
