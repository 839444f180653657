"""Hash vs WordLlama embeddings: ranking quality with the paired test, and what each costs.

    python bench/embedders.py SET.jsonl [SET.jsonl ...] [--p-repeats R] [--json]

For each fixture set (its corpus from its header), in one process:

* P: the raw tree-sitter parse of the corpus's bytes (bench/run.py), the unit of every time;
* index: the corpus indexed cold (no index cache) as `run --dir` does — the hash embeddings are
  made while indexing — and then WordLlama's vectors of every chunk made on top, from an empty
  embedding cache (the model's load included), as a `vector-wl`/`hybrid-wl` variant's first run
  does; both as seconds and ×P;
* quality: `vector` vs `vector-wl` and `hybrid` vs `hybrid-wl` (`embedder = "wordllama"`), each
  pair with `--compare` and `--metrics ndcg`: the MRR and nDCG means, the paired t-test's mean
  delta, two-sided p and 95% CI;
* cost: each backend's query latency p50 (ms), queries embedded in one batch up front.

Quality figures are deterministic for a corpus and set; times are this machine's, one run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import run as bench_run  # bench/run.py: P

from cce_relevance import api
from cce_relevance.evaluation.cost import latency
from cce_relevance.evaluation.fixtures import load_fixtures
from cce_relevance.evaluation.run_corpus import header_corpus, open_corpus
from cce_relevance.project_config import parse_config
from cce_relevance.retrieval.embedders.service import RunEmbedders
from cce_relevance.retrieval.embedders.spec import BUILTIN_EMBEDDERS

VARIANTS = {
    "backends": {
        "vector-wl": {"base": "vector", "embedder": "wordllama"},
        "hybrid-wl": {"base": "hybrid", "embedder": "wordllama"},
    }
}
PAIRS = (("vector", "vector-wl"), ("hybrid", "hybrid-wl"))


def measure(set_path: str, p_repeats: int) -> dict:
    config = parse_config(VARIANTS, "bench", os.getcwd())
    fixtures = load_fixtures(set_path)
    corpus = header_corpus(fixtures, set_path)
    p = bench_run.measure_p(corpus, p_repeats)["p_s"]
    started = time.perf_counter()
    index = open_corpus(corpus, indexing=api.BuildOptions.with_cache(use_cache=False))
    hash_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as empty, RunEmbedders(empty) as embedders:
        started = time.perf_counter()
        embedders.service(BUILTIN_EMBEDDERS["wordllama"]).index(index)
        wordllama_s = time.perf_counter() - started
    out: dict = {
        "set": set_path,
        "queries": len(fixtures.cases),
        "chunks": len(index.chunks),
        "p_s": p,
        "index_hash_s": hash_s,
        "index_wordllama_s": hash_s + wordllama_s,
        "pairs": [],
    }
    with tempfile.TemporaryDirectory() as cache:
        indexing = api.BuildOptions.with_cache(cache)
        for a, b in PAIRS:  # the first pair fills the index and embedding caches, the second reads them
            options = api.RunOptions(compare=[a, b], metrics=["ndcg"], config=config, indexing=indexing)
            result = api.run(set_path, options, dir=corpus)
            assert result.comparison is not None
            pair: dict = {"a": a, "b": b, "metrics": {}, "p50_ms": {}}
            for report in result.reports:
                lat = latency(report)
                pair["p50_ms"][report.backend] = None if lat is None else lat.p50
            for key, name in (("mrr", "mrr"), ("ndcg_at_k", "ndcg")):
                test = result.comparison.tests[key]
                means = [r.mrr if key == "mrr" else (r.ranking or {})[key] for r in result.reports]
                pair["metrics"][name] = {
                    "a": means[0],
                    "b": means[1],
                    "delta": test.mean_delta,
                    "p": test.p,
                    "ci": None if test.ci95 is None else list(test.ci95),
                }
            out["pairs"].append(pair)
    return out


def _index_cell(seconds: float, p: float) -> str:
    """Seconds, and ×P where P is large enough to divide by (a corpus of a few files parses in
    microseconds, which makes any ratio noise)."""
    return f"{seconds:.2f} (×{seconds / p:.1f})" if p >= 0.01 else f"{seconds:.2f} (P < 10 ms)"


def _delta(metric: dict) -> str:
    p = "n/a" if metric["p"] is None else f"{metric['p']:.3f}"
    return f"{metric['delta']:+.3f} ({p})"


def table(rows: list[dict]) -> str:
    lines = [
        "| set (queries, chunks) | backend | MRR | nDCG | ΔMRR (p) | ΔnDCG (p) | index s (×P) "
        "| query p50 ms |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        name = f"{Path(row['set']).name} ({row['queries']}, {row['chunks']})"
        hash_p = _index_cell(row["index_hash_s"], row["p_s"])
        wl_p = _index_cell(row["index_wordllama_s"], row["p_s"])
        for pair in row["pairs"]:
            m = pair["metrics"]
            for side, index_p in (("a", hash_p), ("b", wl_p)):
                backend = pair[side]
                delta = (_delta(m["mrr"]), _delta(m["ndcg"])) if side == "b" else ("", "")
                p50 = pair["p50_ms"][backend]
                quality = f"{m['mrr'][side]:.3f} | {m['ndcg'][side]:.3f} | {delta[0]} | {delta[1]}"
                speed = f"{index_p} | {'n/a' if p50 is None else f'{p50:.2f}'}"
                lines.append(f"| {name} | {backend} | {quality} | {speed} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--p-repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(s, args.p_repeats) for s in args.sets]
    sys.stdout.write(json.dumps(rows, indent=2) + "\n" if args.json else table(rows))


if __name__ == "__main__":
    main()
