"""The use cases both front doors call: index a corpus, search it, evaluate fixtures, compare.

This is the one place that wires the rooms together (retrieval → evaluation → stats →
reporting). It follows the reference's processing order (harness.md §1.3), which decides which
error wins when several inputs are wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cce_relevance.errors import CceError
from cce_relevance.evaluation.fixtures import FixtureSet, corpus_dir, load_fixtures
from cce_relevance.evaluation.harness import BackendReport, evaluate_backend
from cce_relevance.evaluation.metrics import METRICS
from cce_relevance.evaluation.pairing import pair_reports
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.reporting.json_report import report_document
from cce_relevance.reporting.text import render_compare, render_summary
from cce_relevance.retrieval.backends import BUILTIN_BACKENDS, Hit, builtin_backend
from cce_relevance.retrieval.chunk import Chunk
from cce_relevance.retrieval.index import Index, build_index
from cce_relevance.retrieval.store import load_store
from cce_relevance.stats.comparison import BackendComparison, compare_pair
from cce_relevance.stats.paired import PairedTest, paired_t
from cce_relevance.strings import rust_trim

DEFAULT_BACKENDS = ("bm25", "vector", "hybrid")


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    tests: dict[str, PairedTest]


@dataclass(frozen=True)
class RunResult:
    """Everything a run measured, ready for any renderer."""

    corpus: str
    embedder: str
    fixtures: FixtureSet
    reports: tuple[BackendReport, ...]
    comparison: Comparison | None

    def to_json(self) -> str:
        compare = None
        if self.comparison is not None:
            compare = (self.comparison.a, self.comparison.b, self.comparison.tests)
        return dumps_report(report_document(self.corpus, self.embedder, len(self.fixtures.cases),
                                            self.reports, compare))

    def to_text(self) -> str:
        text = render_summary(self.corpus, self.embedder, len(self.fixtures.cases), self.reports)
        if self.comparison is not None:
            text += render_compare(self.reports[0], self.reports[1], self.comparison.tests)
        return text


def open_corpus(path: str) -> Index:
    """Index a corpus directory in memory (E18 when it is not one)."""
    if not os.path.isdir(path):
        raise CceError(f"corpus is not a directory: {path}")
    return build_index(path)


def resolve_index(fixtures: FixtureSet, fixtures_arg: str, dir: str | None, store: str | None) -> tuple[str, Index]:
    """The corpus display string and its index: `--store` > `--dir` > header `corpus` (§1.4)."""
    if store is not None:
        return store, load_store(store)
    if dir is not None:
        return dir, open_corpus(dir)
    if not fixtures.corpus:
        raise CceError('no corpus: pass --dir <corpus>, or declare "corpus" in the fixture header line')
    display = corpus_dir(fixtures_arg, fixtures.corpus)
    return display, open_corpus(display)


def parse_backend_list(value: str, known: Sequence[str] = BUILTIN_BACKENDS) -> list[str]:
    """Comma list → distinct backend names in first-occurrence order (E19, E20)."""
    names: list[str] = []
    for piece in value.split(","):
        name = rust_trim(piece)
        if not name:
            continue
        if name not in known:
            raise CceError(f"unknown backend {rust_debug_str(name)} (expected bm25, vector, or hybrid)")
        if name not in names:
            names.append(name)
    if not names:
        raise CceError("--backend requires at least one of bm25, vector, hybrid")
    return names


def parse_compare_pair(value: str) -> tuple[str, str]:
    names = parse_backend_list(value)
    if len(names) != 2:
        raise CceError("--compare requires exactly two distinct backends, e.g. bm25,hybrid")
    return names[0], names[1]


def compare_reports(a: BackendReport, b: BackendReport) -> dict[str, PairedTest]:
    """Paired t-test per metric over the per-case deltas B − A (harness.md §4.1)."""
    tests = {}
    for spec in METRICS:
        deltas = [vb - va for va, vb in zip(a.metric(spec.attr), b.metric(spec.attr), strict=True)]
        tests[spec.key] = paired_t(deltas)
    return tests


def run(fixtures_path: str, *, dir: str | None = None, store: str | None = None,
        backends: str | None = None, compare: str | None = None) -> RunResult:
    """Evaluate a fixture set, in the reference's order of checks (harness.md §1.3)."""
    fixtures = load_fixtures(fixtures_path)
    corpus, index = resolve_index(fixtures, fixtures_path, dir, store)
    if compare is not None:
        names = list(parse_compare_pair(compare))
    elif backends is not None:
        names = parse_backend_list(backends)
    else:
        names = list(DEFAULT_BACKENDS)
    weights = LineWeights(index.chunks)
    reports = tuple(evaluate_backend(n, builtin_backend(n, index), fixtures.cases, weights) for n in names)
    comparison = None
    if compare is not None:
        comparison = Comparison(names[0], names[1], compare_reports(reports[0], reports[1]))
    return RunResult(corpus, index.embedder, fixtures, reports, comparison)


def search(corpus: str, query: str, backend: str = "hybrid", k: int = 10) -> list[tuple[Hit, str]]:
    """One query through one backend over a corpus directory, with each hit's first line."""
    index = open_corpus(corpus)
    first_line = {c.chunk_id: c.content.split("\n", 1)[0] for c in index.chunks}
    return [(h, first_line[h.chunk_id]) for h in builtin_backend(backend, index)(query, k)]


def chunks(corpus: str) -> list[Chunk]:
    """Every chunk of a corpus directory in index order (the conformance listing's input)."""
    return open_corpus(corpus).chunks




def load_report(path: str) -> Any:
    """A saved run report (`run --json`), as JSON data; unreadable or invalid files are input errors."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise CceError(f"could not read report {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CceError(f"could not read report {path}: invalid JSON: {exc}") from None


def compare_saved(base: Any, head: Any, base_label: str = "base", head_label: str = "head") -> list[BackendComparison]:
    """Pair two run reports by backend and query id, with paired statistics per metric."""
    return [compare_pair(p) for p in pair_reports(base, head, base_label, head_label)]
