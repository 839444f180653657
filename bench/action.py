"""Whole-check benchmark: `cce-relevance action` on a repository built from a corpus.

    python bench/action.py CORPUS [--queries N] [--edits M] [--runs R] [--reuse-runs K] [--seed S]
                           [--p-repeats R] [--checkout DIR] [--json]

A git repository is made in a scratch directory: the corpus under `corpus/` and a fixture set of
N queries generated from it as bench/run.py makes them (`eval/bench.jsonl`) in the base commit;
the head commit edits M of the corpus's Python files (a comment line inserted after each one's
first line, which moves every chunk below it, and a function appended). The Action then compares
base and head exactly as a workflow runs it — `cce-relevance action` in a fresh process, a
`workflow_dispatch` event with `base-ref` and `head-ref`, no comment, `fail-on: none` — first
with an empty index cache (cold), then R times with the cache as the cold run left it (as a
workflow restores it), and then — after one `push` run on the base commit, which saves the base
side in the cache directory as the push run on a default branch does — K times reusing that
saved base side (`--reuse-runs`). Each run's stage times (wall and CPU) come from the Action's own timings
log line (commits; materialise, index, score, validate, hits per side; report); the process's wall
time, its CPU time with its children's, and its peak RSS are measured here. P (the raw
tree-sitter parse of the corpus's bytes, bench/run.py) is measured before the first run and
after each, and each run is divided by the mean of the two around it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import run as bench_run  # bench/run.py: P and the query generator

from cce_relevance.action.scoring.timings import TIMINGS_PREFIX, parse_line
from cce_relevance.retrieval.corpus.walk import walk

FIXTURE = "eval/bench.jsonl"
_TIMINGS = re.compile(f"^{re.escape(TIMINGS_PREFIX)}.*$", re.MULTILINE)
_REUSED = "reusing the side an earlier run saved"  # the Action's log line (saved/base_reuse.py)
_PEAK_RSS = re.compile(r"^bench-peak-rss-kb (\d+) (\d+)$", re.MULTILINE)
_STAGE_MEMORY = re.compile(r"^bench-stage-memory-kb (\d+) (\d+) (.+)$", re.MULTILINE)
# `cce-relevance action`, reporting the process's peak RSS and its largest child's on the way out,
# and its VmRSS and VmHWM each time a stage of its clock ends (versions without that clock: none).
_ACTION = """
import resource, sys
try:
    from cce_relevance.action.scoring.timings import Stopwatch
    _add = Stopwatch._add
except (ImportError, AttributeError):
    Stopwatch = None
if Stopwatch is not None:
    def _noted(self, name, took):
        _add(self, name, took)
        with open("/proc/self/status", encoding="ascii") as status:
            kb = dict(line.split(":", 1) for line in status if line.startswith(("VmRSS", "VmHWM")))
        rss, hwm = kb["VmRSS"].split()[0], kb["VmHWM"].split()[0]
        sys.stderr.write("bench-stage-memory-kb %s %s %s\\n" % (rss, hwm, name))
    Stopwatch._add = _noted
from cce_relevance.cli import main
try:
    main(["action"])
finally:
    peaks = [resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    sys.stderr.write("\\nbench-peak-rss-kb %d %d\\n" % tuple(peaks))
"""
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **_GIT_ENV}, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def fixture_lines(corpus: str, n_queries: int, seed: int) -> str:
    """The fixture set: a header naming the corpus, then bench/run.py's queries over it."""
    result = bench_run.in_fresh_process(_fixture_text, corpus, n_queries, seed)
    return result["text"]


def _fixture_text(corpus: str, n_queries: int, seed: int) -> dict:
    from cce_relevance.retrieval.index.build import build_index

    index = build_index(corpus)
    lines = [json.dumps({"schema": "cce.relevance/v1", "corpus": "../corpus"})]
    for i, (query, chunk) in enumerate(bench_run.corpus_queries(index, n_queries, seed)):
        anchor = f"{chunk.file_path}#{chunk.kind}@{chunk.start_line}-{chunk.end_line}"
        lines.append(json.dumps({"id": f"q{i}", "query": query, "expected": [anchor], "k": 10}))
    return {"text": "\n".join(lines) + "\n"}


def edit(text: str, i: int) -> str:
    """A change a pull request could make: a comment line after the first line (every chunk below
    moves down one line) and a new function at the end."""
    first, newline, rest = text.partition("\n")
    ending = "" if text.endswith("\n") or not text else "\n"
    return (
        f"{first}{newline}# edited by the benchmark\n{rest}{ending}\n\n"
        f"def bench_added_function_{i}(value):\n    return value + {i}\n"
    )


def make_repository(
    workspace: Path, corpus: str, n_queries: int, edits: int, seed: int
) -> tuple[str, str, list[str]]:
    """The base and head commits of the repository at `workspace`, and the files the head edits."""
    shutil.copytree(corpus, workspace / "corpus", symlinks=True)
    (workspace / "eval").mkdir()
    (workspace / FIXTURE).write_text(fixture_lines(corpus, n_queries, seed), encoding="utf-8")
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base: corpus and fixture set")
    base = git(workspace, "rev-parse", "HEAD")
    candidates = sorted(f.path for f in walk(workspace / "corpus").files if f.path.endswith(".py"))
    edited = sorted(random.Random(seed).sample(candidates, min(edits, len(candidates))))
    for i, path in enumerate(edited):
        target = workspace / "corpus" / path
        target.write_text(
            edit(target.read_text(encoding="utf-8", errors="surrogateescape"), i),
            encoding="utf-8",
            errors="surrogateescape",
        )
    git(workspace, "commit", "-q", "-am", f"head: {len(edited)} files edited")
    return base, git(workspace, "rev-parse", "HEAD"), edited


def action_env(
    workspace: Path, scratch: Path, base: str, head: str, checkout: str | None = None
) -> dict[str, str]:
    """A `workflow_dispatch` step's variables, built from scratch (PATH only from this process);
    `checkout` (another copy of cce-relevance, to compare) goes first on the Action's PYTHONPATH."""
    runner = scratch / "runner"
    for name in ("home", "temp", "file_commands"):
        (runner / name).mkdir(parents=True, exist_ok=True)
    for name in ("output", "summary"):
        (runner / "file_commands" / name).write_text("", encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **({"PYTHONPATH": checkout} if checkout else {}),
        "HOME": str(runner / "home"),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(runner / "file_commands" / "output"),
        "GITHUB_STEP_SUMMARY": str(runner / "file_commands" / "summary"),
        "RUNNER_TEMP": str(runner / "temp"),
        "INPUT_FIXTURES": FIXTURE,
        "INPUT_BASE-REF": base,
        "INPUT_HEAD-REF": head,
        "INPUT_COMMENT": "false",
        "INPUT_FAIL-ON": "none",
    }


def push_env(env: dict[str, str], scratch: Path, commit: str) -> dict[str, str]:
    """`env` as a `push` to the default branch that made `commit` (a root commit: scored alone),
    the run that saves its side for later runs whose base it is."""
    event = scratch / "runner" / "push.json"
    payload = {"before": "0" * 40, "after": commit, "ref": "refs/heads/main"}
    event.write_text(json.dumps({**payload, "repository": {"default_branch": "main"}}), encoding="utf-8")
    pushed = {k: v for k, v in env.items() if k not in ("INPUT_BASE-REF", "INPUT_HEAD-REF")}
    return {**pushed, "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event)}


def run_action(workspace: Path, env: dict[str, str]) -> dict:
    """One `cce-relevance action` process: its wall and CPU time (its children's included: git,
    worker processes) and the stage times it logged."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _ACTION], cwd=workspace, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"the Action failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    match = _TIMINGS.search(done.stdout)  # versions before the timings line log none
    Path(env["GITHUB_STEP_SUMMARY"]).write_text("", encoding="utf-8")  # a new step's summary
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    rss = _PEAK_RSS.search(done.stderr)
    peaks = (int(rss.group(1)) / 1024, int(rss.group(2)) / 1024) if rss else (0.0, 0.0)
    stages = [[name, w, c] for name, (w, c) in parse_line(match.group(0)).items()] if match else []
    memory = [
        [name, int(rss) / 1024, int(hwm) / 1024] for rss, hwm, name in _STAGE_MEMORY.findall(done.stderr)
    ]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "stages": stages,
        "stage_memory": memory,  # (stage, VmRSS MiB, VmHWM MiB) as each stage ends, in order
        "peak_rss_mb": peaks[0],
        "child_peak_rss_mb": peaks[1],
        "base_reused": _REUSED in done.stdout,
    }


def benchmark(
    corpus: str,
    n_queries: int,
    edits: int,
    runs: int,
    seed: int,
    p_repeats: int,
    checkout: str | None = None,
    reuse_runs: int = 0,
) -> dict:
    """The repository made, then P, and after each Action run P again: each run is divided by
    the mean of the P measured just before and just after it (the load of a shared machine
    drifts within minutes). The push run that saves the base side is not a check: not measured."""
    with tempfile.TemporaryDirectory(prefix="cce-bench-action-") as scratch_name:
        scratch = Path(scratch_name)
        workspace = scratch / "workspace"
        workspace.mkdir()
        base, head, edited = make_repository(workspace, corpus, n_queries, edits, seed)
        env = action_env(workspace, scratch, base, head, checkout)
        ps = [bench_run.measure_p(corpus, p_repeats)]
        done = []
        labels = ["cold", *(f"cached {i + 1}" for i in range(runs))]
        labels += [f"base reused {i + 1}" for i in range(reuse_runs)]
        for label in labels:
            if label == "base reused 1":
                run_action(workspace, push_env(env, scratch, base))
            result = run_action(workspace, env)
            ps.append(bench_run.measure_p(corpus, p_repeats))
            result["label"] = label
            result["p_s"] = (ps[-2]["p_s"] + ps[-1]["p_s"]) / 2
            result["p_cpu_s"] = (ps[-2]["p_cpu_s"] + ps[-1]["p_cpu_s"]) / 2
            done.append(result)
    return {
        "corpus": corpus,
        "machine": bench_run.machine(),
        "p": ps,
        "queries": n_queries,
        "edits": edited,
        "runs": done,
        "checkout": checkout,
    }


def _row(label: str, seconds: float, p: float, extra: str = "") -> str:
    return f"  {label:<40} {seconds:8.3f} s  {seconds / p:6.3f} P  {extra}".rstrip()


def render(figures: dict) -> str:
    m, ps = figures["machine"], figures["p"]
    out = [
        f"corpus {figures['corpus']}: {ps[0]['files']:,} files, {figures['queries']:,} queries, "
        f"head edits {len(figures['edits'])} files"
        + (f"; the Action of {figures['checkout']}" if figures.get("checkout") else ""),
        f"machine: {m['cpu']}, {m['nproc']} CPUs, Python {m['python']}, load average at the end "
        f"{', '.join(f'{x:.2f}' for x in m['load_average'] or ())}",
        "P (tree-sitter parse, median of each measurement): "
        + ", ".join(f"{p['p_s']:.3f} s" for p in ps)
        + " wall; "
        + ", ".join(f"{p['p_cpu_s']:.3f} s" for p in ps)
        + " CPU",
    ]
    for r in figures["runs"]:
        p = r["p_s"]
        out.append(f"{r['label']}: P {p:.3f} s (the mean of the P before and after)")
        out.append(_row("whole Action process, wall", r["wall_s"], p))
        out.append(
            _row(
                "whole Action process, CPU (with children)",
                r["cpu_s"],
                r["p_cpu_s"],
                f"(CPU P {r['p_cpu_s']:.3f} s)",
            )
        )
        for stage, wall, cpu in r["stages"]:
            out.append(_row(f"  {stage}", wall, p, f"CPU {cpu:6.3f} s  {cpu / r['p_cpu_s']:6.3f} P"))
        rest_wall = r["wall_s"] - sum(wall for _, wall, _ in r["stages"])
        rest_cpu = r["cpu_s"] - sum(cpu for _, _, cpu in r["stages"])
        out.append(
            _row(
                "  the rest (start-up, imports, output)",
                rest_wall,
                p,
                f"CPU {rest_cpu:6.3f} s  {rest_cpu / r['p_cpu_s']:6.3f} P",
            )
        )
    for prefix, what in (("cached", "cache restored"), ("base reused", "cache restored, base side reused")):
        some = [r for r in figures["runs"] if r["label"].startswith(prefix)]
        if some:
            out.append(
                f"{what}, median of the runs: "
                f"{statistics.median(r['wall_s'] / r['p_s'] for r in some):.3f} P wall, "
                f"{statistics.median(r['cpu_s'] / r['p_cpu_s'] for r in some):.3f} P CPU"
                + (
                    ""
                    if all(r["base_reused"] == (prefix == "base reused") for r in some)
                    else " (NOT AS LABELLED)"
                )
            )
    out.append(
        "peak RSS of the Action process / its largest child (a worker, git): "
        + ", ".join(f"{r['peak_rss_mb']:,.0f} / {r['child_peak_rss_mb']:,.0f} MB" for r in figures["runs"])
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", metavar="CORPUS", help="directory to commit as the repository's corpus")
    parser.add_argument("--queries", type=int, default=1000, help="generated queries (default 1000)")
    parser.add_argument("--edits", type=int, default=20, help="files the head commit edits (default 20)")
    parser.add_argument("--runs", type=int, default=2, help="runs with the cache restored (default 2)")
    parser.add_argument(
        "--reuse-runs",
        type=int,
        default=2,
        help="runs reusing the base side a push run saved, after the cached runs (default 2)",
    )
    parser.add_argument("--seed", type=int, default=0, help="query and edit sampling seed (default 0)")
    parser.add_argument("--p-repeats", type=int, default=3, help="P is the median of this many parses")
    parser.add_argument(
        "--checkout",
        metavar="DIR",
        help="measure the Action of another checkout of cce-relevance (put first on its PYTHONPATH)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.corpus):
        parser.error(f"not a directory: {args.corpus}")
    figures = benchmark(
        os.path.abspath(args.corpus),
        max(1, args.queries),
        max(0, args.edits),
        max(0, args.runs),
        args.seed,
        max(1, args.p_repeats),
        args.checkout and os.path.abspath(args.checkout),
        max(0, args.reuse_runs),
    )
    print(json.dumps(figures, indent=2, sort_keys=True) if args.json else render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
