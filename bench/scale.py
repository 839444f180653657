"""Scale benchmark: the CLI and the Action on corpora of ~100k, 300k and 1M chunks of real code.

    python bench/scale.py [--sizes 100000,300000,1000000] [--queries 1000] [--edits 20]
                          [--wheels DIR] [--download] [--source DIR ...] [--work DIR]
                          [--p-repeats R] [--no-action] [--baseline DIR] [--json]

The corpora are real code nobody in the project wrote: the installed standard library's `.py`
files (`site-packages` excluded) and the `.py` files of large wheels (`--wheels DIR`, default
`~/.cache/cce-relevance-bench/wheels`; `--download` fetches the pinned set of WHEELS into it with
`pip download --no-deps`; `--source DIR` replaces both with directories of your own). The files
of every source, in sorted order, make one base list; a corpus of N chunks is the longest prefix
of copy 0 of that list, then copy 1, ..., whose estimated chunks (a file's `def`/`class` lines, at
least one) reach N. Copy c lives under `copy{c}/` (distinct paths, so distinct chunk ids and
cache keys; the files are hard links to one extracted copy where the file system allows), so
each corpus is a prefix of the next: the same queries run at every size.

Every measurement is a fresh process of the real CLI — `cce-relevance run FIXTURES --dir CORPUS
--json --output FILE` with 1 CPU (its affinity set to one core: one indexing and one scoring
process) and with 2 (the default, two of each) — first with an empty index cache (cold; it fills
the cache), then with that cache (warm). Each run's wall time, CPU time (its workers' included),
peak RSS (its own and its largest child's) are taken here; the cache's bytes after the cold run;
and the four reports of a size must be byte-identical, or the benchmark fails. P (tree-sitter's
parse of the corpus's bytes in memory, bench/run.py) is measured for each corpus in the same run.
The queries (1,000 by default) are bench/run.py's, drawn from the smallest corpus, each anchored
at the chunk it came from. Per-query latency (p50, p90 per backend) is measured in a fresh process
over the warm index, each query timed alone.

At the largest size the whole Action runs too (bench/action.py's way: a git repository of the
corpus and the fixture set, the head commit editing `--edits` Python files; a `workflow_dispatch`
run cold, then with the cache it left).

With `--baseline DIR` (a checkout of another version, the directory holding its `cce_relevance`
package) every CLI run is made twice in a row, by that version's code and by this one's, each
with its own index cache, and all their reports must be byte-identical; it prints each run's
CPU time and peak RSS for both and their ratios (this version over the baseline). Interleaving
the two puts them under the same machine load, on a machine shared with other work: compare CPU
time and memory, not wall time. Latencies and the Action are this version's only.

It prints, per size: time and ×P, chunks/s, peak RSS per chunk, cache bytes per chunk, query
latencies; then each figure's slope against corpus size (the exponent of a least-squares fit of
log figure on log chunks: 1 is linear) and its per-chunk ratio, largest size over smallest.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

import action as bench_action  # bench/action.py: the repository, the Action's environment and run
import run as bench_run  # bench/run.py: P, the query generator, fresh processes

WHEELS = (
    "django==5.1.4",
    "networkx==3.4.2",
    "pandas==2.2.3",
    "scipy==1.14.1",
    "sqlalchemy==2.0.36",
    "sympy==1.13.3",
)
DEFAULT_WHEELS = Path.home() / ".cache" / "cce-relevance-bench" / "wheels"
DEFAULT_SIZES = (100_000, 300_000, 1_000_000)
_DEFINITION = re.compile(rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]", re.MULTILINE)
_PEAK_RSS = re.compile(r"^bench-peak-rss-kb (\d+) (\d+)$", re.MULTILINE)
# The CLI as `cce-relevance ARGS` runs it, on the first N CPUs it may use (N = 0: all), with the
# package found in CODE when one is given (an editable install's finder set aside), reporting the
# process's peak RSS and its largest child's on the way out.
_CLI = """
import os, resource, sys
cpus, code = int(sys.argv[1]), sys.argv[2]
if cpus:
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cpus])
if code:
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
    sys.path.insert(0, code)
import cce_relevance
if code and not os.path.abspath(cce_relevance.__file__).startswith(os.path.join(os.path.abspath(code), "")):
    sys.exit("bench: cce_relevance came from %s, not from %s" % (cce_relevance.__file__, code))
from cce_relevance.cli import main
try:
    main(sys.argv[3:])
finally:
    peaks = [resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    sys.stderr.write("\\nbench-peak-rss-kb %d %d\\n" % tuple(peaks))
"""


# --------------------------------------------------------------------------- corpora


def download_wheels(directory: Path) -> None:
    """The pinned WHEELS into `directory`, as pip downloads them (this interpreter's platform)."""
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
    subprocess.run([*command, "-d", str(directory), *WHEELS], check=True)


def extract_wheels(wheels: Path, into: Path) -> list[Path]:
    """Each wheel's `.py` files under `into/<wheel name>` (extracted once), as source roots."""
    roots = []
    for wheel in sorted(wheels.glob("*.whl")):
        root = into / wheel.name.split("-")[0].lower()
        done = root / ".extracted"
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.infolist():
                    if member.filename.endswith(".py") and ".." not in Path(member.filename).parts:
                        archive.extract(member, root)
            done.write_text(wheel.name, encoding="utf-8")
        roots.append(root)
    return roots


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def base_files(roots: list[tuple[str, Path]]) -> list[tuple[str, Path, int]]:
    """(relative path, file, estimated chunks) of every `.py` file of the sources, in order."""
    files = []
    for label, root in roots:
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).parts
            if "site-packages" in parts or any(p.startswith(".") for p in parts) or not path.is_file():
                continue
            estimate = max(1, len(_DEFINITION.findall(path.read_bytes())))
            files.append((f"{label}/{'/'.join(parts)}", path, estimate))
    return files


def corpus_plan(files: list[tuple[str, Path, int]], target: int) -> list[tuple[str, Path]]:
    """(path in the corpus, source file) of the shortest prefix of copies 0, 1, ... of `files`
    whose estimated chunks reach `target`."""
    plan, total, copy = [], 0, 0
    while total < target:
        for relative, source, estimate in files:
            plan.append((f"copy{copy}/{relative}", source))
            total += estimate
            if total >= target:
                break
        copy += 1
    return plan


def make_corpus(plan: list[tuple[str, Path]], dest: Path) -> Path:
    """The corpus of `plan` at `dest`, made unless a complete one for the same plan is there."""
    manifest = "\n".join(f"{path}\t{source}" for path, source in plan)
    marker = dest / ".corpus-manifest"
    if marker.exists() and marker.read_text(encoding="utf-8") == manifest:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    for path, source in plan:
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
    marker.write_text(manifest, encoding="utf-8")
    return dest


def copy_tree(source: Path, dest: Path) -> None:
    """`source` at `dest`, files hard-linked where possible (the Action's repository)."""
    shutil.copytree(
        source, dest, copy_function=_link_or_copy, ignore=shutil.ignore_patterns(".corpus-manifest")
    )


def _link_or_copy(source: str, dest: str) -> None:
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)


# --------------------------------------------------------------------------- measurements


def fixture_text(corpus: Path, n_queries: int, seed: int, header_corpus: str | None) -> str:
    """bench/run.py's queries over `corpus` as a fixture set (indexed in a fresh process)."""
    return bench_run.in_fresh_process(_fixture_text, str(corpus), n_queries, seed, header_corpus)["text"]


def _fixture_text(corpus: str, n_queries: int, seed: int, header_corpus: str | None) -> dict:
    from cce_relevance.retrieval.index.build import build_index

    index = build_index(corpus)
    header = {"schema": "cce.relevance/v1", **({"corpus": header_corpus} if header_corpus else {})}
    lines = [json.dumps(header)]
    for i, (query, chunk) in enumerate(bench_run.corpus_queries(index, n_queries, seed)):
        anchor = f"{chunk.file_path}#{chunk.kind}@{chunk.start_line}-{chunk.end_line}"
        lines.append(json.dumps({"id": f"q{i}", "query": query, "expected": [anchor], "k": 10}))
    return {"text": "\n".join(lines) + "\n"}


def cli_run(args: list[str], cpus: int, cwd: Path, code: str = "") -> dict:
    """One fresh `cce-relevance ARGS` process on `cpus` CPUs (0: all), of the package in `code`
    ("": the one this interpreter imports): wall and CPU seconds (its children's included) and
    peak RSS (its own, its largest child's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CLI, str(cpus), code, *args], cwd=cwd, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"cce-relevance {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr}")
    peaks = _PEAK_RSS.search(done.stderr)
    return {
        "wall_s": wall,
        "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "peak_rss_mb": int(peaks.group(1)) / 1024 if peaks else 0.0,
        "child_peak_rss_mb": int(peaks.group(2)) / 1024 if peaks else 0.0,
    }


def directory_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def query_latencies(corpus: str, fixtures: str, cache: str) -> dict:
    """Each case's search alone, per backend, over the warm index (in this fresh process)."""
    from cce_relevance.evaluation.fixtures import parse_fixtures
    from cce_relevance.memory_pages import prefer_small_pages
    from cce_relevance.retrieval.index.build import build_index
    from cce_relevance.retrieval.search.backends import BUILTIN_BACKENDS, builtin_backend

    prefer_small_pages()
    cases = parse_fixtures(Path(fixtures).read_text(encoding="utf-8"), fixtures).cases
    index = build_index(corpus, cache=cache)
    out: dict = {"chunks": len(index.chunks), "backends": {}}
    for name in BUILTIN_BACKENDS:
        search = builtin_backend(name, index)
        search(cases[0].query, cases[0].k, cases[0].id)  # what ranking derives on first use
        times = []
        for case in cases:
            start = time.perf_counter()
            search(case.query, case.k, case.id)
            times.append(time.perf_counter() - start)
        times.sort()
        out["backends"][name] = {
            "p50_ms": 1000 * statistics.median(times),
            "p90_ms": 1000 * times[int(0.9 * (len(times) - 1))],
        }
    return out


def measure_size(
    corpus: Path, fixtures: Path, scratch: Path, p_repeats: int, baseline: str | None = None
) -> dict:
    """P, then cold and warm runs with 1 and 2 CPUs (each run by the `baseline` checkout's code
    first, when given), the cache's bytes and query latencies."""
    p = bench_run.in_fresh_process(bench_run.measure_p, str(corpus), p_repeats)  # its bytes not kept here
    sides = {"baseline": baseline, "": ""} if baseline else {"": ""}
    runs: dict[str, dict[str, dict]] = {side: {} for side in sides}
    reports: dict[str, bytes] = {}
    cache_bytes: dict[str, dict[int, int]] = {side: {} for side in sides}
    for cpus in (1, 2):
        for side in sides:
            shutil.rmtree(scratch / f"cache-{side or 'this'}-{cpus}", ignore_errors=True)
        for state in ("cold", "warm"):
            label = f"{state} {cpus}"
            for side, code in sides.items():
                cache = scratch / f"cache-{side or 'this'}-{cpus}"
                output = scratch / f"report-{side or 'this'}-{cpus}-{state}.json"
                args = ["run", str(fixtures), "--dir", str(corpus), "--json", "--output", str(output)]
                args += ["--cache", str(cache)]
                runs[side][label] = cli_run(args, cpus if cpus == 1 else 0, scratch, code)
                reports[f"{side} {label}".strip()] = output.read_bytes()
                if state == "cold":
                    cache_bytes[side][cpus] = directory_bytes(cache)
    if len(set(reports.values())) != 1:
        raise RuntimeError(f"the reports of {corpus} differ between runs: {sorted(reports)}")
    report = json.loads(reports["cold 1"])
    latencies = bench_run.in_fresh_process(
        query_latencies, str(corpus), str(fixtures), str(scratch / "cache-this-1")
    )
    figures = {
        "corpus": str(corpus),
        "p": p,
        "chunks": latencies["chunks"],
        "runs": runs[""],
        "cache_bytes": cache_bytes[""][1],
        "cache_bytes_2": cache_bytes[""][2],
        "latency": latencies["backends"],
        "mrr": {b["backend"]: b["mrr"] for b in report["backends"]},
    }
    if baseline:
        figures["baseline"] = {"runs": runs["baseline"], "cache_bytes": cache_bytes["baseline"][1]}
    return figures


def measure_action(corpus: Path, fixture_body: str, scratch: Path, edits: int, seed: int) -> dict:
    """The whole Action at `corpus`: cold, then with the cache the cold run left."""
    workspace = scratch / "workspace"
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    copy_tree(corpus, workspace / "corpus")
    (workspace / "eval").mkdir()
    (workspace / bench_action.FIXTURE).write_text(fixture_body, encoding="utf-8")
    bench_action.git(workspace, "init", "-q", "-b", "main")
    bench_action.git(workspace, "add", "-A")
    bench_action.git(workspace, "commit", "-q", "-m", "base: corpus and fixture set")
    base = bench_action.git(workspace, "rev-parse", "HEAD")
    import random

    candidates = sorted(str(p.relative_to(workspace)) for p in (workspace / "corpus").rglob("*.py"))
    edited = sorted(random.Random(seed).sample(candidates, min(edits, len(candidates))))
    for i, path in enumerate(edited):
        target = workspace / path
        text = target.read_text(encoding="utf-8", errors="surrogateescape")
        target.unlink()  # a hard link: the edit must not reach the corpus it shares bytes with
        target.write_text(bench_action.edit(text, i), encoding="utf-8", errors="surrogateescape")
    bench_action.git(workspace, "commit", "-q", "-am", f"head: {len(edited)} files edited")
    head = bench_action.git(workspace, "rev-parse", "HEAD")
    # Another copy of the package measured through PYTHONPATH (as bench/action.py's --checkout).
    env = bench_action.action_env(workspace, scratch, base, head, os.environ.get("PYTHONPATH") or None)
    runs = []
    for label in ("cold", "cached"):
        result = bench_action.run_action(workspace, env)
        result["label"] = label
        runs.append(result)
    shutil.rmtree(workspace, ignore_errors=True)
    return {"edits": len(edited), "runs": runs}


def query_corpus(plan: list[tuple[str, Path]], corpus: Path, dest: Path) -> Path:
    """The corpus the queries are drawn from: the first copy of the smallest corpus's sources.
    A query is a name or docstring line found in one chunk only, and a second copy repeats every
    one of them, so a smallest corpus of more than one copy would give no query at all; the
    first copy's paths are in every corpus (each is a prefix of the copies)."""
    first = [(path, source) for path, source in plan if path.startswith("copy0/")]
    return corpus if first == plan else make_corpus(first, dest)


def benchmark(args: argparse.Namespace) -> dict:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.source:
        roots = [(Path(s).name or "source", Path(s)) for s in args.source]
    else:
        wheels = Path(args.wheels)
        if args.download:
            download_wheels(wheels)
        extracted = extract_wheels(wheels, work / "sources")
        roots = [("stdlib", stdlib_root()), *((r.name, r) for r in extracted)]
    files = base_files(roots)
    sizes = sorted(args.sizes)
    plans = [corpus_plan(files, n) for n in sizes]
    corpora = [make_corpus(plan, work / f"corpus-{n}") for n, plan in zip(sizes, plans, strict=True)]
    fixtures = work / "queries.jsonl"
    queried = query_corpus(plans[0], corpora[0], work / "corpus-queries")
    fixtures.write_text(fixture_text(queried, args.queries, args.seed, None), encoding="utf-8")
    results = []
    for n, corpus in zip(sizes, corpora, strict=True):
        with tempfile.TemporaryDirectory(prefix="cce-scale-", dir=work) as scratch:
            figures = measure_size(corpus, fixtures, Path(scratch), args.p_repeats, args.baseline)
        figures["target"] = n
        figures["machine"] = bench_run.machine()
        results.append(figures)
        print(json.dumps({"size done": figures}, sort_keys=True), file=sys.stderr, flush=True)
    action = None
    if not args.no_action:
        body = fixture_text(corpora[0], args.queries, args.seed, "../corpus")
        with tempfile.TemporaryDirectory(prefix="cce-scale-action-", dir=work) as scratch:
            action = measure_action(corpora[-1], body, Path(scratch), args.edits, args.seed)
        action["chunks"] = results[-1]["chunks"]
        action["p_s"] = results[-1]["p"]["p_s"]
    return {
        "sources": [str(r) for _, r in roots],
        "queries": args.queries,
        "baseline": args.baseline,
        "sizes": results,
        "slopes": slopes(results),
        "action": action,
        "machine": bench_run.machine(),
    }


# --------------------------------------------------------------------------- figures


def _figures(size: dict) -> dict[str, float]:
    """Every figure of one size whose growth with the corpus is of interest."""
    out = {}
    for label, run in size["runs"].items():
        out[f"{label} wall s"] = run["wall_s"]
        out[f"{label} peak RSS MB"] = max(run["peak_rss_mb"], run["child_peak_rss_mb"])
    out["cache bytes"] = size["cache_bytes"]
    out["P s"] = size["p"]["p_s"]
    for backend, lat in size["latency"].items():
        out[f"{backend} p50 ms"] = lat["p50_ms"]
    return out


def slopes(sizes: list[dict]) -> dict[str, dict[str, float]]:
    """Per figure: the exponent of a least-squares fit of log figure on log chunks, and the
    figure per chunk at the largest size over the same at the smallest."""
    if len(sizes) < 2:
        return {}
    xs = [math.log(s["chunks"]) for s in sizes]
    table = [_figures(s) for s in sizes]
    out = {}
    for key in table[0]:
        ys = [t[key] for t in table]
        if min(ys) <= 0:
            continue
        logs = [math.log(y) for y in ys]
        mx, my = statistics.fmean(xs), statistics.fmean(logs)
        sxx = sum((x - mx) ** 2 for x in xs)
        exponent = sum((x - mx) * (y - my) for x, y in zip(xs, logs, strict=True)) / sxx if sxx else 0.0
        per_chunk = (ys[-1] / sizes[-1]["chunks"]) / (ys[0] / sizes[0]["chunks"])
        out[key] = {"exponent": exponent, "per_chunk_ratio": per_chunk}
    return out


def render(figures: dict) -> str:
    m = figures["machine"]
    out = [
        f"scale benchmark: {figures['queries']:,} queries x 3 backends; "
        f"sources: {', '.join(figures['sources'])}",
        f"machine: {m['cpu']}, {m['nproc']} CPUs, Python {m['python']}, load average at the end "
        f"{', '.join(f'{x:.2f}' for x in m['load_average'] or ())}",
    ]
    for size in figures["sizes"]:
        n, p = size["chunks"], size["p"]["p_s"]
        load = ", ".join(f"{x:.2f}" for x in size["machine"]["load_average"] or ())
        out.append(
            f"{n:,} chunks ({size['p']['files']:,} files, {size['p']['bytes'] / 1e6:.0f} MB; target "
            f"{size['target']:,}): P {p:.2f} s; load average after {load}"
        )
        for label, run in size["runs"].items():
            peak = max(run["peak_rss_mb"], run["child_peak_rss_mb"])
            out.append(
                f"  {label + ' CPU' + ('' if label.endswith('1') else 's'):<12} {run['wall_s']:8.2f} s "
                f"{run['wall_s'] / p:6.2f} P  {n / run['wall_s']:9,.0f} chunks/s  CPU {run['cpu_s']:7.2f} s  "
                f"peak RSS {peak:7,.0f} MB = {peak * 1024 * 1024 / n / 1000:5.2f} KB/chunk"
            )
        out.append(
            f"  cache {size['cache_bytes'] / 1e6:,.0f} MB = {size['cache_bytes'] / n / 1000:.2f} KB/chunk"
        )
        out.append(
            "  per query (warm index, each alone): "
            + "; ".join(
                f"{b} p50 {lat['p50_ms']:.2f} ms, p90 {lat['p90_ms']:.2f} ms"
                for b, lat in size["latency"].items()
            )
        )
        if size["mrr"]:
            out.append("  MRR: " + ", ".join(f"{b} {float(v):.3f}" for b, v in size["mrr"].items()))
        if "baseline" in size:
            out.extend(_against_baseline(size, figures["baseline"]))
    if figures["slopes"]:
        out.append("slopes against chunks (exponent of a log-log fit; per-chunk ratio largest/smallest):")
        for key, s in figures["slopes"].items():
            out.append(f"  {key:<24} exponent {s['exponent']:5.2f}  per chunk x{s['per_chunk_ratio']:.2f}")
    action = figures["action"]
    if action is not None:
        out.append(f"the whole Action at {action['chunks']:,} chunks, head edits {action['edits']} files:")
        for run in action["runs"]:
            peak = max(run["peak_rss_mb"], run["child_peak_rss_mb"])
            stages = ", ".join(f"{name} {wall:.1f}" for name, wall, _ in run["stages"])
            per_chunk = peak * 1024 * 1024 / action["chunks"] / 1000
            out.append(
                f"  {run['label']:<7} {run['wall_s']:8.2f} s {run['wall_s'] / action['p_s']:6.2f} P  CPU "
                f"{run['cpu_s']:7.2f} s  peak RSS {peak:7,.0f} MB = {per_chunk:.2f} KB/chunk"
            )
            out.append(f"    stages (wall s): {stages}")
            memory = ", ".join(
                f"{name} {rss:,.0f}/{hwm:,.0f}" for name, rss, hwm in run.get("stage_memory", [])
            )
            if memory:
                out.append(f"    memory as stages end (VmRSS/VmHWM MiB): {memory}")
    return "\n".join(out)


def _against_baseline(size: dict, baseline: str) -> list[str]:
    """Each run's CPU time and peak RSS by the baseline's code and by this version's, and their
    ratios (this over the baseline), as measured one after the other."""
    n, base = size["chunks"], size["baseline"]
    out = [f"  against the baseline {baseline} (this / baseline; reports byte-identical):"]
    for label, run in size["runs"].items():
        before = base["runs"][label]
        peak = max(run["peak_rss_mb"], run["child_peak_rss_mb"])
        peak_before = max(before["peak_rss_mb"], before["child_peak_rss_mb"])
        out.append(
            f"    {label + ' CPU' + ('' if label.endswith('1') else 's'):<12} CPU {before['cpu_s']:7.2f} -> "
            f"{run['cpu_s']:7.2f} s (x{run['cpu_s'] / before['cpu_s']:.3f})  peak RSS {peak_before:7,.1f} -> "
            f"{peak:7,.1f} MB (x{peak / peak_before:.3f}; {peak_before * 1024 * 1024 / n / 1000:.2f} -> "
            f"{peak * 1024 * 1024 / n / 1000:.2f} KB/chunk)"
        )
    cache, cache_before = size["cache_bytes"], base["cache_bytes"]
    out.append(f"    cache {cache_before / 1e6:,.1f} -> {cache / 1e6:,.1f} MB (x{cache / cache_before:.3f})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        default=list(DEFAULT_SIZES),
        help="target chunk counts, comma-separated (default 100000,300000,1000000)",
    )
    parser.add_argument("--queries", type=int, default=1000, help="generated queries (default 1000)")
    parser.add_argument("--edits", type=int, default=20, help="files the Action's head edits (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="query and edit sampling seed (default 0)")
    parser.add_argument(
        "--wheels", default=str(DEFAULT_WHEELS), help="directory of the wheels whose .py files are used"
    )
    parser.add_argument(
        "--download", action="store_true", help="pip download the pinned wheels into --wheels first"
    )
    parser.add_argument(
        "--source",
        action="append",
        metavar="DIR",
        help="use these directories' .py files instead (repeatable)",
    )
    parser.add_argument(
        "--work",
        default=os.path.join(tempfile.gettempdir(), "cce-scale"),
        help="where corpora and caches are made (default $TMPDIR/cce-scale; corpora are kept for reuse)",
    )
    parser.add_argument(
        "--p-repeats", type=int, default=1, help="P is the median of this many parses (default 1)"
    )
    parser.add_argument("--no-action", action="store_true", help="skip the whole Action at the largest size")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run every CLI measurement with the cce_relevance package of this checkout, interleaved",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not args.source and not any(Path(args.wheels).glob("*.whl")) and not args.download:
        parser.error(
            f"no wheels in {args.wheels}: pass --download (pip download of {', '.join(WHEELS)}) "
            "or --source DIR"
        )
    if args.baseline is not None:
        if not (Path(args.baseline) / "cce_relevance" / "__init__.py").is_file():
            parser.error(f"--baseline {args.baseline}: no cce_relevance package there")
        args.baseline = str(Path(args.baseline).resolve())
    args.queries = max(1, args.queries)
    args.p_repeats = max(1, args.p_repeats)
    figures = benchmark(args)
    print(json.dumps(figures, indent=2, sort_keys=True) if args.json else render(figures))
    return 0


if __name__ == "__main__":
    bench_run._as_the_cli_runs()
    sys.exit(main())
