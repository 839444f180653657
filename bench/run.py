"""Whole-corpus benchmark: P, the index stages, and N corpus-derived queries × 3 backends.

    python bench/run.py CORPUS [--queries N] [--json] [--workers N] [--seed S] [--p-repeats R]

Every figure is printed in seconds and as a ratio to P, measured in the same run: P is the time
tree-sitter needs to parse the corpus's files (the ones the walker keeps, with the parser of
the pack that claims each file) when their bytes are already in memory — no harness can chunk
faster on one core, so goals are written as multiples of P (docs/dev/performance.md).

Measurements that warm memo caches (the embedder memoises token hashes, for one) each run in a
fresh forked process, so that no stage profits from work an earlier stage did:
  * stages: walk + read, chunk (redact, parse, chunk), embed, BM25 build — the library's building
    blocks timed one after the other (`build_index` may fuse some of them). BM25 is timed both
    ways: tokenizing every chunk's content (what a loaded store does), and from the term counts
    indexing takes per file (what a built index does: counting, then merging the postings);
  * cold index, one process: `build_index(workers=1)` plus the derived data ranking needs (the
    embedding matrix and its float32 copy, chunk-id ranks, BM25, the import graph, lowercased
    contents); then N queries made from the corpus itself, scored against the chunk each came
    from, through the three built-in backends with all metrics and a paired t-test;
  * cold index with `--workers` processes (default: the CPU count), when more than one, then the
    same queries scored in that many forked processes (as the CLI does on several CPUs). The
    one-process queries run in a process that never forked: after a fork, a parent pays a page
    fault on its first write to every page it shared, which no single CLI run does;
  * warm index, on a copy of the corpus: fill a fresh cache, index the unchanged tree again, then
    again after one file changed ("n/a" when `build_index` has no `cache`).
Peak RSS is each process's `ru_maxrss` (worker processes reported apart).

Queries (deterministic for a corpus and a seed): names of definitions (`def name`, `class Name`,
`function name`, `fn name`, ...) made of at least two words, and first docstring or comment
lines of at least three tokens, each used only when its text is unique among the candidates;
half of each kind, drawn with `random.Random(seed)`. Each query's one anchor is its source
chunk (`path#kind@start-end`), so the metrics are real: the query should find where it came from.
"""

from __future__ import annotations

import argparse
import inspect
import json
import multiprocessing
import os
import platform
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

from cce_relevance.evaluation.comparison import compare_reports
from cce_relevance.evaluation.fixtures import Case, parse_fixtures
from cce_relevance.evaluation.harness import evaluate_backend, evaluate_backends
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.retrieval.chunking.chunk import Chunk, ChunkedFile, chunk_file
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.corpus.walk import walk
from cce_relevance.retrieval.embedding.buckets import chunk_tokens
from cce_relevance.retrieval.embedding.embed import HASH_DOCUMENTS
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.ranking.bm25 import BM25
from cce_relevance.retrieval.ranking.postings import corpus_postings, term_counts
from cce_relevance.retrieval.search.backends import BUILTIN_BACKENDS, builtin_backend
from cce_relevance.retrieval.tokens import tokenize

_NAME_RE = re.compile(
    r"\b(?:def|class|function|fn|func|fun|struct|enum|trait|interface|module)\s+"
    r"([A-Za-z_][A-Za-z0-9_]*)"
)
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_DOC_RE = re.compile(
    r"""^\s*(?:[rRuUbB]{0,2}(?:\"\"\"|''')|#+|//+!?|/\*+|\*)\s*(.*?)\s*(?:\"\"\"|'''|\*/)?\s*$"""
)
_K = 10


# --------------------------------------------------------------------------- measurement helpers


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def peak_rss_mb() -> float:
    """This process's peak resident set size so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_fresh_process(fn: Callable[..., dict], *args: Any) -> dict:
    """`fn(*args)` in a forked child (cold memo caches, its own peak RSS); inline without fork."""
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return fn(*args)
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child_main, args=(send, fn, args))
    child.start()
    send.close()
    result = receive.recv()
    child.join()
    if "error" in result:
        raise RuntimeError(f"{fn.__name__} failed in the child process:\n{result['error']}")
    return result


def _child_main(send, fn: Callable[..., dict], args: tuple) -> None:
    import traceback

    try:
        result = fn(*args)
    except BaseException:  # report any failure to the parent instead of hanging it
        result = {"error": traceback.format_exc()}
    send.send(result)
    send.close()


def accepts(fn: Callable, parameter: str) -> bool:
    return parameter in inspect.signature(fn).parameters


def line_weights(index: Index) -> LineWeights:
    """The weights a run reads: as indexing worked them out, where this version keeps them
    (older versions work every file's out from the chunks)."""
    of_index = getattr(LineWeights, "of_index", None)
    return of_index(index) if of_index is not None else LineWeights(index.chunks)


# --------------------------------------------------------------------------- P and the stages


def measure_p(root: str, repeats: int) -> dict:
    """Median wall time of parsing every walked file's bytes (already in memory) with its pack's parser."""
    walked = walk(root)
    jobs = []
    for f in walked.files:
        pack = REFERENCE_PACKS.for_path(f.path)
        if pack is not None:
            jobs.append((pack.parser(), f.text.encode("utf-8", "surrogateescape")))

    def parse_all() -> None:
        for parser, source in jobs:
            parser.parse(source)

    parse_all()  # warm-up: grammars loaded, pages touched
    times, cpu = [], []
    for _ in range(repeats):
        start = time.process_time()
        times.append(timed(parse_all)[0])
        cpu.append(time.process_time() - start)
    return {
        "p_s": statistics.median(times),
        "p_runs_s": times,
        "p_cpu_s": statistics.median(cpu),
        "files": len(walked.files),
        "parsed_files": len(jobs),
        "bytes": sum(len(source) for _, source in jobs),
    }


def measure_stages(root: str) -> dict:
    """The index's building blocks one after the other, as `build_index` chains them."""
    walk_s, walked = timed(lambda: walk(root))

    def chunk_all() -> list[ChunkedFile]:
        return [chunk_file(f.path, redact(f.text)) for f in walked.files]

    chunk_s, chunked = timed(chunk_all)
    chunks = [c for f in chunked for c in f.chunks]
    contents = [c.content for c in chunks]
    ids = [c.chunk_id for c in chunks]
    embed_s, _ = timed(lambda: HASH_DOCUMENTS.embed_all(contents))
    bm25_s, _ = timed(lambda: BM25(contents, ids))
    count_s, parts = timed(lambda: [term_counts(chunk_tokens(f.source, f.spans)) for f in chunked])

    def from_postings() -> BM25:
        p = corpus_postings(parts)
        return BM25.from_postings(p.term_id, p.indptr, p.docs, p.tfs, p.doc_len, ids)

    merge_s, _ = timed(from_postings)
    return {
        "walk_read_s": walk_s,
        "chunk_s": chunk_s,
        "embed_s": embed_s,
        "bm25_build_s": bm25_s,
        "term_counts_s": count_s,
        "bm25_postings_s": merge_s,
        "chunks": len(chunks),
        "peak_rss_mb": peak_rss_mb(),
    }


def index_options(**wanted: Any) -> dict:
    """The keyword arguments of `wanted` that `build_index` accepts (older versions lack some)."""
    return {name: value for name, value in wanted.items() if value is not None and accepts(build_index, name)}


def ready_index(root: str, options: dict) -> tuple[Index, float, float, float]:
    """`build_index`, then everything ranking derives from it on first use (BM25 postings, the
    float32 embedding copy and chunk-id ranks, the import graph, lowercased contents); returns
    the index, the seconds each part took and the CPU seconds of both, worker processes
    included (a busy machine stretches wall time far more than CPU time)."""
    cpu_start = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    build_s, index = timed(lambda: build_index(root, **options))

    def derive() -> None:
        index.bm25()
        index.cosine  # noqa: B018 - each of these builds and caches derived data
        index.graph  # noqa: B018
        index.lower_contents  # noqa: B018

    derive_s, _ = timed(derive)
    cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - cpu_start
    return index, build_s, derive_s, cpu


def _index_figures(index: Index, build_s: float, derive_s: float, cpu_s: float) -> dict:
    return {
        "cold_index_s": build_s + derive_s,
        "cold_index_cpu_s": cpu_s,
        "build_index_s": build_s,
        "derive_s": derive_s,
        "chunks": len(index.chunks),
    }


def measure_index_and_queries(root: str, n_queries: int, seed: int) -> dict:
    """Cold index in one process, then the queries over it in this process."""
    options = index_options(workers=1)
    index, build_s, derive_s, cpu_s = ready_index(root, options)
    index_rss = peak_rss_mb()
    queries = run_queries(index, corpus_cases(index, n_queries, seed)) if n_queries > 0 else None
    return {
        **_index_figures(index, build_s, derive_s, cpu_s),
        "index_peak_rss_mb": index_rss,
        "queries": queries,
        "peak_rss_mb": peak_rss_mb(),
        "one_process": "workers" in options,
    }


def measure_parallel_index(root: str, workers: int, n_queries: int = 0, seed: int = 0) -> dict:
    """Cold index with `workers` processes, then the queries over it scored in as many forked
    processes, as the CLI scores them on several CPUs."""
    index, build_s, derive_s, cpu_s = ready_index(root, index_options(workers=workers))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    queries = (
        run_parallel_queries(index, corpus_cases(index, n_queries, seed), workers) if n_queries > 0 else None
    )
    if queries is not None:  # the largest child so far: a scoring worker counts the parent's pages it reads
        queries["worker_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        **_index_figures(index, build_s, derive_s, cpu_s),
        "workers": workers,
        "peak_rss_mb": peak_rss_mb(),
        "worker_peak_rss_mb": children,
        "queries": queries,
    }


def measure_warm_index(root: str, workers: int | None) -> dict:
    """Fill a fresh cache, index the unchanged tree again, then again after one file changed —
    each run in its own fresh process, as each CLI run is.

    The corpus is copied first, so that the changed file is a copy's: the one with the most
    bytes gets a newline appended (a change in every language, not a syntax error).
    """
    with tempfile.TemporaryDirectory(prefix="cce-bench-") as scratch:
        tree = os.path.join(scratch, "corpus")
        shutil.copytree(root, tree, symlinks=True)
        options = index_options(cache=os.path.join(scratch, "cache"), workers=workers)
        fill = in_fresh_process(_cached_run, tree, options)
        warm = in_fresh_process(_cached_run, tree, options)
        largest = max(walk(tree).files, key=lambda f: len(f.text))
        with open(os.path.join(tree, largest.path), "a", encoding="utf-8") as f:
            f.write("\n")
        changed = in_fresh_process(_cached_run, tree, options)
    return {
        "cache_fill_s": fill["total_s"],
        "warm_index_s": warm["total_s"],
        "warm_build_index_s": warm["build_s"],
        "one_changed_s": changed["total_s"],
        "one_changed_build_index_s": changed["build_s"],
        "changed_file": largest.path,
        "peak_rss_mb": max(r["peak_rss_mb"] for r in (fill, warm, changed)),
    }


def _cached_run(tree: str, options: dict) -> dict:
    _, build_s, derive_s, _ = ready_index(tree, options)
    return {"total_s": build_s + derive_s, "build_s": build_s, "peak_rss_mb": peak_rss_mb()}


# --------------------------------------------------------------------------- queries


def name_query(chunk: Chunk) -> str | None:
    """The defined name on the chunk's first line when it has at least two words (`read_config`)."""
    match = _NAME_RE.search(chunk.content.split("\n", 1)[0])
    if match is None or match.group(1).startswith("__"):
        return None
    name = match.group(1)
    return name if len(_WORD_RE.findall(name)) >= 2 else None


def doc_query(chunk: Chunk) -> str | None:
    """The first non-empty docstring or comment line in the chunk's first lines after the header."""
    for line in chunk.content.split("\n")[1:4]:
        match = _DOC_RE.match(line)
        if match and match.group(1):
            text = match.group(1)
            return text if len(tokenize(text)) >= 3 else None
    return None


def _unique_texts(pairs: list[tuple[str, Chunk]]) -> list[tuple[str, Chunk]]:
    seen: dict[str, int] = {}
    for text, _ in pairs:
        seen[text] = seen.get(text, 0) + 1
    return [(text, chunk) for text, chunk in pairs if seen[text] == 1]


def corpus_queries(index: Index, n: int, seed: int) -> list[tuple[str, Chunk]]:
    """`n` (query, source chunk) pairs, half names and half docstring lines, drawn with the seed."""
    usable = [c for c in index.chunks if "#" not in c.file_path and "@" not in c.file_path]
    names = _unique_texts([(q, c) for c in usable if (q := name_query(c))])
    docs = _unique_texts([(q, c) for c in usable if (q := doc_query(c))])
    rng = random.Random(seed)
    take_docs = min(len(docs), n - min(len(names), n // 2))
    take_names = min(len(names), n - take_docs)
    return rng.sample(names, take_names) + rng.sample(docs, take_docs)


def corpus_cases(index: Index, n: int, seed: int) -> tuple[Case, ...]:
    """The queries as a fixture set, read by the real fixture parser."""
    lines = []
    for i, (query, chunk) in enumerate(corpus_queries(index, n, seed)):
        anchor = f"{chunk.file_path}#{chunk.kind}@{chunk.start_line}-{chunk.end_line}"
        lines.append(json.dumps({"id": f"q{i}", "query": query, "expected": [anchor], "k": _K}))
    return parse_fixtures("\n".join(lines) + "\n", "<bench>").cases


def run_queries(index: Index, cases: tuple[Case, ...]) -> dict:
    """Every case through each built-in backend with all metrics, then bm25 vs hybrid t-tests, in
    this process (one that has not forked: a parent whose pages its children shared pays a page
    fault on the first write to each, which no CLI run does)."""
    backends = [(name, builtin_backend(name, index)) for name in BUILTIN_BACKENDS]
    start, start_cpu = time.perf_counter(), time.process_time()
    weights = line_weights(index)
    per_backend = {}
    reports = []
    for name, search in backends:
        seconds, report = timed(
            lambda name=name, search=search: evaluate_backend(name, search, cases, weights)
        )
        reports.append(report)
        per_backend[name] = {
            "seconds": seconds,
            "mrr": report.mrr,
            "recall": report.recall,
            "precision": report.precision,
        }
    t_tests = compare_reports(reports[0], reports[-1])
    total = time.perf_counter() - start
    return {
        "n": len(cases),
        "total_s": total,
        "cpu_s": time.process_time() - start_cpu,
        "backends": per_backend,
        "t_bm25_to_hybrid_mrr": t_tests["mrr"].t,
    }


def run_parallel_queries(index: Index, cases: tuple[Case, ...], workers: int) -> dict:
    """The cases of `run_queries` scored in `workers` forked processes (metrics, no t-tests)."""
    backends = [(name, builtin_backend(name, index)) for name in BUILTIN_BACKENDS]
    own, children = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
    seconds, reports = timed(lambda: evaluate_backends(backends, cases, line_weights(index), None, workers))
    own = cpu_seconds(resource.RUSAGE_SELF) - own
    children = cpu_seconds(resource.RUSAGE_CHILDREN) - children
    return {
        "processes": workers,
        "seconds": seconds,
        "cpu_s": own + children,
        "own_cpu_s": own,
        "workers_cpu_s": children,
        "mrr": [r.mrr for r in reports],
    }


def cpu_seconds(who: int) -> float:
    """User + system CPU seconds of this process (`RUSAGE_SELF`), or of the children it has
    waited for (`RUSAGE_CHILDREN`: a pool's workers are waited for when it shuts down)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def machine() -> dict:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    versions = {}
    for package in ("numpy", "tree-sitter", "tree-sitter-python"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "numpy_huge_pages": os.environ.get("NUMPY_MADVISE_HUGEPAGE", "1") != "0",
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def benchmark(root: str, n_queries: int, seed: int, workers: int, p_repeats: int) -> dict:
    p = measure_p(root, p_repeats)
    stages = in_fresh_process(measure_stages, root)
    cold = in_fresh_process(measure_index_and_queries, root, n_queries, seed)
    parallel = None
    if workers > 1 and accepts(build_index, "workers"):
        parallel = in_fresh_process(measure_parallel_index, root, workers, n_queries, seed)
        one, several = cold["queries"], parallel["queries"]
        if one is not None and several["mrr"] != [b["mrr"] for b in one["backends"].values()]:
            raise RuntimeError("the queries scored in worker processes gave other metrics")
    warm = measure_warm_index(root, workers) if accepts(build_index, "cache") else None
    return {
        "corpus": root,
        "machine": machine(),
        "p": p,
        "stages": stages,
        "index": cold,
        "parallel": parallel,
        "warm": warm,
    }


def _row(label: str, seconds: float | None, p: float, extra: str = "") -> str:
    if seconds is None:
        return f"  {label:<44} {extra or 'n/a':>10}"
    return f"  {label:<44} {seconds:8.3f} s  {seconds / p:6.3f} P  {extra}".rstrip()


def _cpu_note(cpu: float | None, p_cpu: float | None) -> str:
    """CPU seconds and their ratio to P's CPU time (which a busy machine disturbs far less than
    wall time), when both are known."""
    if cpu is None or not p_cpu:
        return ""
    return f"; CPU {cpu:.3f} s = {cpu / p_cpu:.3f} P CPU"


def render(figures: dict) -> str:
    m, p_fig, st, ix = figures["machine"], figures["p"], figures["stages"], figures["index"]
    par, warm = figures["parallel"], figures["warm"]
    p = p_fig["p_s"]
    q = ix["queries"]
    chunks = ix["chunks"]
    cold_label = "cold index total, 1 process" if ix["one_process"] else "cold index total"
    out = [
        f"corpus {figures['corpus']}: {p_fig['files']:,} files ({p_fig['parsed_files']:,} parsed, "
        f"{p_fig['bytes'] / 1e6:.1f} MB), {chunks:,} chunks",
        f"machine: {m['cpu']}, {m['nproc']} CPUs, Python {m['python']}, load average "
        f"{', '.join(f'{x:.2f}' for x in m['load_average'] or ())}; numpy huge-page advice "
        f"{'on' if m['numpy_huge_pages'] else 'off (as in the CLI)'}",
        _row(f"P: tree-sitter parse (median of {len(p_fig['p_runs_s'])})", p, p),
        _row("walk + read", st["walk_read_s"], p),
        _row("chunk (redact, parse, chunk)", st["chunk_s"], p),
        _row("embed (hash embedder)", st["embed_s"], p),
        _row("BM25 build, tokenizing contents (a loaded store)", st["bm25_build_s"], p),
        _row("BM25 term counts, per file (in indexing, cached)", st["term_counts_s"], p),
        _row("BM25 build from the term counts (every build)", st["bm25_postings_s"], p),
        _row(
            cold_label,
            ix["cold_index_s"],
            p,
            f"{chunks / ix['cold_index_s']:,.0f} chunks/s"
            + _cpu_note(ix.get("cold_index_cpu_s"), p_fig.get("p_cpu_s")),
        ),
        _row("  build_index", ix["build_index_s"], p),
        _row("  derived: BM25, cosine index, graph", ix["derive_s"], p),
    ]
    if par is not None:
        out.append(
            _row(
                f"cold index total, {par['workers']} processes",
                par["cold_index_s"],
                p,
                f"{par['chunks'] / par['cold_index_s']:,.0f} chunks/s"
                + _cpu_note(par.get("cold_index_cpu_s"), p_fig.get("p_cpu_s")),
            )
        )
    if warm is None:
        out.append(_row("warm index total (cached)", None, p, "n/a (no cache yet)"))
    else:
        out.append(
            _row(
                "warm index total (cached, unchanged tree)",
                warm["warm_index_s"],
                p,
                f"build_index {warm['warm_build_index_s']:.3f} s; cache fill {warm['cache_fill_s']:.3f} s",
            )
        )
        out.append(
            _row(
                "warm index, one file changed",
                warm["one_changed_s"],
                p,
                f"build_index {warm['one_changed_build_index_s']:.3f} s",
            )
        )
    if q is None:
        out.append(_row("queries", None, p, "not run (--queries 0)"))
    else:
        out.append(
            _row(
                f"{q['n']:,} queries x 3 backends with metrics",
                q["total_s"],
                p,
                "1 process" + _cpu_note(q.get("cpu_s"), p_fig.get("p_cpu_s")),
            )
        )
        for name, b in q["backends"].items():
            out.append(
                _row(
                    f"  {name}",
                    b["seconds"],
                    p,
                    f"{b['seconds'] / q['n'] * 1000:.3f} ms/query  "
                    f"MRR@10 {b['mrr']:.3f}  R@10 {b['recall']:.3f}",
                )
            )
    if q is not None and par is not None and par.get("queries"):
        out.append(
            _row(
                f"{q['n']:,} queries x 3 backends, {par['queries']['processes']} processes",
                par["queries"]["seconds"],
                p,
                "as the CLI scores them on several CPUs; same metrics"
                + _cpu_note(par["queries"].get("cpu_s"), p_fig.get("p_cpu_s")),
            )
        )
        if "own_cpu_s" in par["queries"]:
            pq = par["queries"]
            own_p = pq["own_cpu_s"] / p_fig["p_cpu_s"]
            out.append(
                f"  CPU of the scoring process {pq['own_cpu_s']:.3f} s = {own_p:.3f} P CPU, "
                f"of its {pq['processes'] - 1} worker(s) {pq['workers_cpu_s']:.3f} s (with a core each, "
                "the wall time is about the largest process's CPU time)"
            )
        if "worker_peak_rss_mb" in par["queries"]:
            out.append(
                f"  peak RSS of a scoring worker: {par['queries']['worker_peak_rss_mb']:,.0f} MB (pages "
                "shared with the parent included)"
            )
    out.append(
        f"  peak RSS: {ix['peak_rss_mb']:,.0f} MB cold index (1 process) + queries "
        f"({ix['index_peak_rss_mb']:,.0f} MB after indexing), {st['peak_rss_mb']:,.0f} MB stages"
        + (
            f", {par['peak_rss_mb']:,.0f} MB parent + {par['worker_peak_rss_mb']:,.0f} MB largest worker "
            f"with {par['workers']} processes"
            if par is not None
            else ""
        )
    )
    return "\n".join(out)


def _as_the_cli_runs() -> None:
    """The process settings the CLI makes (cce_relevance/memory_pages.py), where this version has them."""
    try:
        from cce_relevance.memory_pages import prefer_small_pages
    except ImportError:
        return
    prefer_small_pages()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", metavar="CORPUS", help="directory to index")
    parser.add_argument(
        "--queries", type=int, default=1000, help="generated queries (default 1000; 0 indexes only)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes for the parallel cold index and the warm runs (default: CPUs)",
    )
    parser.add_argument("--seed", type=int, default=0, help="query sampling seed (default 0)")
    parser.add_argument("--p-repeats", type=int, default=3, help="P is the median of this many parses")
    args = parser.parse_args(argv)
    _as_the_cli_runs()
    if not os.path.isdir(args.corpus):
        parser.error(f"not a directory: {args.corpus}")
    figures = benchmark(
        args.corpus, max(0, args.queries), args.seed, max(1, args.workers), max(1, args.p_repeats)
    )
    print(json.dumps(figures, indent=2, sort_keys=True) if args.json else render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
