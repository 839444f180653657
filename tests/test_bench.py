"""The benchmarks still run and measure what they claim (bench/run.py, bench/startup.py,
bench/action.py, bench/action_shards.py, bench/cold.py, bench/cold_stages.py, bench/scale.py,
bench/cache_bytes.py).

Wall times are never asserted: only that every figure is produced, that the generated queries
are deterministic and anchored at the chunk they came from, and that the metrics are real.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cce_relevance.retrieval.index.build import build_index

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "test" / "fixture" / "samples"


def _load(script: str):
    """bench/SCRIPT.py as a module (the bench directory on the path: its scripts import each other)."""
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{script}", REPO_ROOT / "bench" / f"{script}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO_ROOT / "bench"))
    return module


def _load_bench():
    return _load("run")


def bench_json(script: str, *options: str) -> dict:
    """What `bench/SCRIPT CORPUS OPTIONS --json` prints, read."""
    command = [sys.executable, str(REPO_ROOT / "bench" / script), str(CORPUS), *options, "--json"]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def test_run_prints_every_figure_as_json():
    figures = bench_json("run.py", "--queries", "8", "--p-repeats", "1")
    assert figures["p"]["p_s"] > 0 and figures["p"]["parsed_files"] == 6
    for key in ("walk_read_s", "chunk_s", "embed_s", "bm25_build_s", "term_counts_s", "bm25_postings_s"):
        assert figures["stages"][key] >= 0
    index = figures["index"]
    assert index["chunks"] == figures["stages"]["chunks"] > 0
    assert index["cold_index_s"] == index["build_index_s"] + index["derive_s"]
    queries = index["queries"]
    assert queries["n"] > 0 and set(queries["backends"]) == {"bm25", "vector", "hybrid"}
    assert queries["cpu_s"] > 0
    for backend in queries["backends"].values():
        assert 0.0 <= backend["mrr"] <= 1.0 and 0.0 <= backend["recall"] <= 1.0
    assert index["peak_rss_mb"] > 0
    if figures["parallel"] is not None:  # several CPUs: the queries were scored in as many processes too
        several = figures["parallel"]["queries"]
        assert several["processes"] == figures["parallel"]["workers"] and len(several["mrr"]) == 3
        assert (
            several["cpu_s"] == several["own_cpu_s"] + several["workers_cpu_s"] and several["own_cpu_s"] > 0
        )
    assert set(figures["machine"]) >= {"nproc", "cpu", "python"}


def test_queries_zero_indexes_only():
    out = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "bench" / "run.py"),
            str(CORPUS),
            "--queries",
            "0",
            "--p-repeats",
            "1",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "not run (--queries 0)" in out and "cold index total" in out and "queries x 3 backends" not in out


def test_queries_are_deterministic_and_anchored_at_their_source():
    bench = _load_bench()
    index = build_index(CORPUS)
    first = bench.corpus_queries(index, 6, seed=3)
    assert first == bench.corpus_queries(index, 6, seed=3)
    assert first, "the sample corpus has named definitions"
    for query, chunk in first:
        assert query in chunk.content  # a name or docstring line taken from the chunk itself
    cases = bench.corpus_cases(index, 6, seed=3)
    assert [c.query for c in cases] == [q for q, _ in first]
    for case, (_, chunk) in zip(cases, first, strict=True):
        (anchor,) = case.anchors
        assert anchor.matches(chunk.file_path, chunk.kind, chunk.start_line, chunk.end_line)
    # The sample corpus's names are unique, so BM25 finds each one's own chunk first.
    report = bench.run_queries(index, cases)
    assert report["backends"]["bm25"]["recall"] > 0.5


def test_queries_run_against_a_library_without_kept_line_weights(monkeypatch):
    """The bench also measures older versions of the library (`accepts`), whose `LineWeights`
    works every file's weights out from the chunks: no `of_index` there."""
    bench = _load_bench()
    index = build_index(CORPUS)
    cases = bench.corpus_cases(index, 6, seed=3)
    expected = bench.run_queries(index, cases)
    monkeypatch.delattr(bench.LineWeights, "of_index")
    report = bench.run_queries(index, cases)
    assert [b["mrr"] for b in report["backends"].values()] == [
        b["mrr"] for b in expected["backends"].values()
    ]
    assert bench.run_parallel_queries(index, cases, 2)["mrr"] == [
        b["mrr"] for b in expected["backends"].values()
    ]


def test_startup_benchmark_runs():
    out = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "startup.py"), "--runs", "1", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    figures = json.loads(out)
    assert set(figures["commands"]) == {"python -c pass", "cce-relevance --help"}
    assert "numpy" not in figures["cli_imports"]


def test_action_bench_runs_the_whole_check_cold_with_the_cache_restored_and_reusing_the_base():
    options = ("--queries", "6", "--edits", "2", "--runs", "1", "--reuse-runs", "1", "--p-repeats", "1")
    figures = bench_json("action.py", *options)
    assert [r["label"] for r in figures["runs"]] == ["cold", "cached 1", "base reused 1"]
    assert [r["base_reused"] for r in figures["runs"]] == [False, False, True]
    assert len(figures["p"]) == 4 and figures["edits"] == [
        "python.py"
    ]  # the one Python file: edits are Python
    side_stages = ("materialise", "index", "score", "validate", "hits")
    for run in figures["runs"]:
        stages = [name for name, _, _ in run["stages"]]
        if run["base_reused"]:  # the base side read back instead of scored
            assert stages == ["commits", "base load", *(f"head {stage}" for stage in side_stages), "report"]
        else:
            sides = [f"{side} {stage}" for side in ("head", "base") for stage in side_stages]
            assert stages == ["commits", *sides, "report"]
        assert run["wall_s"] >= sum(wall for _, wall, _ in run["stages"]) > 0
        assert run["cpu_s"] > 0 and run["p_s"] > 0 and run["peak_rss_mb"] > 0
        noted = run["stage_memory"]
        assert {name for name, _, _ in noted} == set(stages) and all(0 < rss <= hwm for _, rss, hwm in noted)


def test_cold_bench_compares_two_checkouts_by_cpu_time():
    figures = bench_json("cold.py", "--checkout", str(REPO_ROOT), "--rounds", "1")
    assert set(figures["runs"]) == {"this", "checkout"}
    for rounds in figures["runs"].values():
        assert len(rounds) == 1
        for mode in ("p", "p2", "index1", "index2"):
            assert rounds[0][mode]["cpu_s"] >= 0 and rounds[0][mode]["wall_s"] > 0


@pytest.mark.slow
def test_action_shards_bench_times_every_run_and_finds_them_byte_identical():
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "action_shards.py"), "--queries", "4", "--sleep", "0"]
        + ["--shards", "2"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    for run in ("unsharded", "shard 1/2", "shard 2/2", "merge", "push run", "shard 2/2, base reused"):
        assert any(line.startswith(run) and " wall " in line for line in lines), (run, done.stdout)
    checks = [line for line in lines if line.endswith((": True", ": False"))]
    assert len(checks) == 5 and all(line.endswith(": True") for line in checks), done.stdout


def test_scale_bench_runs_every_size_cold_and_warm_on_one_and_two_cpus_and_the_action(tmp_path):
    """bench/scale.py small: two sizes made of this repository's samples and retrieval sources
    (copied under a second path for the larger), each run's report byte-identical (the bench
    fails otherwise), every figure and slope printed, the whole Action at the larger size."""
    sources = [CORPUS, REPO_ROOT / "cce_relevance" / "retrieval"]
    scale = _load("scale")
    once = sum(estimate for _, _, estimate in scale.base_files([(s.name, s) for s in sources]))
    two_copies = once + 100  # more than one copy holds, whatever the size of the package's sources
    command = [sys.executable, str(REPO_ROOT / "bench" / "scale.py"), "--sizes", f"250,{two_copies}"]
    command += ["--queries", "6", "--edits", "2", "--work", str(tmp_path), "--json"]
    command += [arg for source in sources for arg in ("--source", str(source))]
    figures = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    small, large = figures["sizes"]
    assert 0 < small["chunks"] < large["chunks"] and small["p"]["p_s"] > 0
    assert (tmp_path / f"corpus-{two_copies}" / "copy1").is_dir()  # the sources under a second path
    for size in figures["sizes"]:
        assert sorted(size["runs"]) == ["cold 1", "cold 2", "warm 1", "warm 2"]
        for run in size["runs"].values():
            assert run["wall_s"] > 0 and run["cpu_s"] > 0 and run["peak_rss_mb"] > 0
        assert size["cache_bytes"] > 0 and set(size["latency"]) == {"bm25", "vector", "hybrid"}
        assert all(lat["p50_ms"] > 0 for lat in size["latency"].values())
    assert {"cold 1 wall s", "warm 2 peak RSS MB", "cache bytes", "vector p50 ms"} <= set(figures["slopes"])
    assert [r["label"] for r in figures["action"]["runs"]] == ["cold", "cached"]
    assert figures["action"]["edits"] == 2 and figures["action"]["chunks"] == large["chunks"]


def test_scale_bench_against_a_baseline_runs_each_measurement_by_both_checkouts(tmp_path):
    """`--baseline DIR`: every CLI run made by DIR's package too (here a copy of this one's, so
    that the run must import it from there), with its own cache; all reports byte-identical (the
    bench fails otherwise), both versions' CPU and peak RSS printed with their ratios."""
    baseline = tmp_path / "baseline"
    shutil.copytree(REPO_ROOT / "cce_relevance", baseline / "cce_relevance")
    (baseline / "cce_relevance" / "retrieval" / "index" / "build.py").write_text(
        (REPO_ROOT / "cce_relevance" / "retrieval" / "index" / "build.py").read_text(encoding="utf-8")
        + "\nraise SystemExit('the baseline copy was imported')\n",
        encoding="utf-8",
    )
    command = [sys.executable, str(REPO_ROOT / "bench" / "scale.py"), "--sizes", "250", "--queries", "4"]
    command += ["--work", str(tmp_path / "work"), "--no-action", "--source", str(CORPUS)]
    command += ["--source", str(REPO_ROOT / "cce_relevance" / "retrieval")]
    failed = subprocess.run([*command, "--baseline", str(baseline)], capture_output=True, text=True)
    assert failed.returncode != 0 and "the baseline copy was imported" in failed.stderr
    shutil.copy(
        REPO_ROOT / "cce_relevance" / "retrieval" / "index" / "build.py",
        baseline / "cce_relevance" / "retrieval" / "index" / "build.py",
    )
    figures = json.loads(
        subprocess.run(
            [*command, "--baseline", str(baseline), "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    text = _load("scale").render(figures)
    assert "against the baseline" in text and text.count(" -> ") >= 9
    (size,) = figures["sizes"]
    assert figures["baseline"] == str(baseline.resolve())
    assert (
        sorted(size["baseline"]["runs"]) == sorted(size["runs"]) == ["cold 1", "cold 2", "warm 1", "warm 2"]
    )
    assert all(run["cpu_s"] > 0 and run["peak_rss_mb"] > 0 for run in size["baseline"]["runs"].values())
    assert size["baseline"]["cache_bytes"] > 0


def test_scale_corpora_are_prefixes_of_copies_of_the_sources(tmp_path):
    scale = _load("scale")
    files = [("a/x.py", tmp_path / "x.py", 3), ("a/y.py", tmp_path / "y.py", 2)]
    assert scale.corpus_plan(files, 4) == [("copy0/a/x.py", files[0][1]), ("copy0/a/y.py", files[1][1])]
    plan = scale.corpus_plan(files, 6)
    assert [p for p, _ in plan] == ["copy0/a/x.py", "copy0/a/y.py", "copy1/a/x.py"]


def test_scale_queries_come_from_the_first_copy_when_the_smallest_corpus_repeats_its_sources(tmp_path):
    """Every name is repeated in a second copy, so queries drawn over two copies would be none."""
    scale = _load("scale")
    files = scale.base_files([("samples", CORPUS)])
    twice = scale.corpus_plan(files, 2 * sum(estimate for _, _, estimate in files))
    corpus = scale.make_corpus(twice, tmp_path / "corpus")
    assert (corpus / "copy1").is_dir()
    queried = scale.query_corpus(twice, corpus, tmp_path / "queries")
    assert not (queried / "copy1").exists() and (queried / "copy0").is_dir()
    assert scale.fixture_text(corpus, 5, 0, None).count("\n") == 1  # the header alone
    cases = scale.fixture_text(queried, 5, 0, None).splitlines()[1:]
    assert cases and all('"copy0/' in case for case in cases)
    once = scale.corpus_plan(files, 3)
    assert scale.query_corpus(once, corpus, tmp_path / "unused") == corpus


def test_cold_stages_marks_every_stage_of_a_cold_run(tmp_path):
    fixtures = tmp_path / "queries.jsonl"
    fixtures.write_text(_load("scale").fixture_text(CORPUS, 5, 0, None), encoding="utf-8")
    script = str(REPO_ROOT / "bench" / "cold_stages.py")
    for trace in ((), ("--trace", "per-file")):
        command = [sys.executable, script, str(CORPUS), str(fixtures), "--chunks", "10", *trace, "--json"]
        figures = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        assert figures["exit"] == 0
        stages = [m["stage"] for m in figures["marks"]]
        assert stages[0] == "imports" and stages[-1] == "end"
        for stage in ("walk", "per-file", "BM25 postings", "hash embeddings", "corpus record", "backends"):
            assert any(s.startswith(stage) for s in stages), stage
        assert all(0 < m["rss_mb"] <= m["hwm_mb"] for m in figures["marks"])
        hwm = [m["hwm_mb"] for m in figures["marks"]]
        assert hwm == sorted(hwm)
        assert bool(figures["holders"]) == bool(trace)
        assert all(m["traced_mb"] > 0 for m in figures["marks"]) == bool(trace)


def test_cache_bytes_accounts_for_every_byte_of_the_cache(tmp_path):
    """bench/cache_bytes.py over a cache a build filled: its sections add up to the files' sizes."""
    cache = tmp_path / "cache"
    index = build_index(CORPUS, cache=str(cache), workers=1)
    command = [sys.executable, str(REPO_ROOT / "bench" / "cache_bytes.py"), str(cache), "--json"]
    figures = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert figures["chunks"] == len(index.chunks) and figures["corpora"] == 1
    assert sum(figures["database"].values()) == (cache / "index.sqlite3").stat().st_size
    (kept,) = (cache / "corpora").iterdir()
    assert sum(figures["corpus records"].values()) == kept.stat().st_size
    assert figures["database"]["rows"] > 0 and figures["corpus records"]["postings frequencies"] > 0
