"""Where a cold run's memory goes: VmRSS and VmHWM after each stage of one `cce-relevance run`.

    python bench/cold_stages.py CORPUS FIXTURES [--chunks N] [--cpus 1] [--trace STAGE] [--json]

Runs `cce-relevance run FIXTURES --dir CORPUS --json` in this process, with an empty index cache
in a scratch directory (cold: every file is walked, parsed, chunked, counted and its record
stored, the index assembled and the corpus record written, then every query scored), on the
first `--cpus` CPUs (default 1: indexing and scoring in this process). After each stage — the
walk, the per-file indexing, BM25's postings, the hash embeddings, the corpus arrays and record,
the index returned, the backends scored — it reads `/proc/self/status`: the resident set
(VmRSS) and its high-water mark so far (VmHWM), in MiB, and the CPU seconds spent. With
`--chunks N` (the corpus's chunks) it prints the high-water mark per chunk too.

`--trace STAGE` runs under tracemalloc (about four times slower, and its own bookkeeping adds to
the RSS): each stage also gets the Python heap traced then and its peak since the stage before,
and at the first stage whose name contains STAGE the 25 largest holders by line are printed.
The stages are marked by wrapping the functions that end them, so the run is the CLI's own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any


def _status() -> tuple[int, int]:
    """This process's VmRSS and VmHWM, in MiB."""
    values = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(value.split()[0]) // 1024
    return values["VmRSS"], values["VmHWM"]


class Stages:
    """The marks of one run: (stage, VmRSS, VmHWM, traced MiB, traced peak MiB, CPU s)."""

    def __init__(self, trace: str | None) -> None:
        self.trace = trace
        self.marks: list[dict[str, Any]] = []
        self.holders: list[str] = []

    def mark(self, stage: str) -> None:
        rss, hwm = _status()
        # The kernel counts resident pages per CPU and folds them in lazily, so a VmHWM read
        # can come out a MiB below one read earlier; the high-water mark so far is the largest
        # seen, and it is never below the resident size read with it.
        hwm = max([hwm, rss] + [m["hwm_mb"] for m in self.marks[-1:]])
        traced, peak = tracemalloc.get_traced_memory() if self.trace else (0, 0)
        self.marks.append(
            {
                "stage": stage,
                "rss_mb": rss,
                "hwm_mb": hwm,
                "traced_mb": traced >> 20,
                "traced_peak_mb": peak >> 20,
                "cpu_s": time.process_time(),
            }
        )
        if self.trace:
            tracemalloc.reset_peak()
            if not self.holders and self.trace in stage:
                for stat in tracemalloc.take_snapshot().statistics("lineno")[:25]:
                    self.holders.append(f"{stat.size >> 20:6d} MB {stat.count:9d}  {stat.traceback}")

    def after(self, owner: Any, name: str, stage: str) -> None:
        """Mark `stage` whenever `owner.name` returns."""
        function: Callable[..., Any] = getattr(owner, name)

        def marked(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            self.mark(stage)
            return result

        setattr(owner, name, marked)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("fixtures")
    parser.add_argument("--chunks", type=int, default=0, help="the corpus's chunks: HWM per chunk")
    parser.add_argument("--cpus", type=int, default=1, help="CPUs the run may use (default 1; 0: all)")
    parser.add_argument("--trace", metavar="STAGE", help="tracemalloc; the largest holders at STAGE")
    parser.add_argument("--json", action="store_true", help="print the marks as JSON")
    args = parser.parse_args(argv)
    if args.cpus:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpus])
    if args.trace:
        tracemalloc.start(1)
    stages = Stages(args.trace)

    import cce_relevance.evaluation.backend_runs as backend_runs
    import cce_relevance.retrieval.index.build as build
    from cce_relevance.cli import main as cli
    from cce_relevance.retrieval.cache.index_cache import IndexCache

    stages.after(build, "walk", "walk")
    stages.after(build, "indexed_files", "per-file indexing (parse, chunk, count, records stored)")
    stages.after(build, "corpus_postings", "BM25 postings merged")
    stages.after(build.HashEmbeddings, "of", "hash embeddings")
    stages.after(build, "_assembled", "assembled index")
    stages.after(build, "arrays_from_entries", "corpus arrays")
    stages.after(IndexCache, "put_corpus", "corpus record stored")
    stages.after(IndexCache, "wait", "corpus record written")
    stages.after(build, "_kept", "corpus record looked up and decoded")
    stages.after(build, "_given_up", "walked texts given up")
    stages.after(build, "build_index", "index returned")
    stages.after(backend_runs, "evaluate_backends", "backends scored")
    stages.mark("imports")
    code: Any = 0
    with tempfile.TemporaryDirectory(prefix="cce-cold-stages-") as scratch:
        output = os.path.join(scratch, "report.json")
        run = ["run", args.fixtures, "--dir", args.corpus, "--json", "--output", output]
        try:
            cli([*run, "--cache", os.path.join(scratch, "cache")])
        except SystemExit as exit_:  # click's way of returning
            code = exit_.code
    stages.mark("end")
    if args.json:
        print(json.dumps({"exit": code, "marks": stages.marks, "holders": stages.holders}, indent=2))
        return 0 if not code else 1
    print(
        f"{'stage':58s} {'VmRSS':>6s} {'VmHWM':>6s} {'traced':>6s} {'peak':>6s} {'CPU s':>6s} {'B/chunk':>8s}"
    )
    for m in stages.marks:
        per_chunk = f"{(m['hwm_mb'] << 20) // args.chunks:8d}" if args.chunks else ""
        figures = f"{m['rss_mb']:6d} {m['hwm_mb']:6d} {m['traced_mb']:6d} {m['traced_peak_mb']:6d}"
        print(f"{m['stage']:58s} {figures} {m['cpu_s']:6.1f} {per_chunk}")
    for line in stages.holders:
        print(line)
    return 0 if not code else 1


if __name__ == "__main__":
    sys.exit(main())
