"""Sharded and base-reusing Action runs against the plain one, on a deliberately slow retriever.

    python bench/action_shards.py [--queries N] [--sleep S] [--shards K]

Builds the end-to-end tests' pull request (tests/action/scenario.py) with a fixture set of N
generated queries and a `command` retriever (docs/examples/retriever.py) that sleeps S seconds
before each answer, then times, each as a fresh `entrypoint.py` process as a workflow step runs it:

* the unsharded run (base and head scored);
* shards 1..K (`shard: I/K`, one after the other here: a matrix runs them side by side, so its
  wall time is the slowest shard's), then `mode: merge` on their states;
* a push run scoring the merge-base alone, then the pull request's run reusing that base side;
* shards 1..K again, each taking its queries of that saved base side (scoring only its head),
  then `mode: merge` on their states.

It checks that the merged runs and the reusing run report byte for byte what the unsharded run
reports (outputs, summary, the files in `.cce-relevance/`), that the reusing shards saved the
states the shards scoring their base saved, and prints wall and CPU seconds (CPU: the step's
process and its children, the retriever's included).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.action.scenario import BILLING_FIXTURE, MOVING_CHANGE, ActionRun, Copy, PullRequest, RunnerDirs  # noqa: E402

WORDS = ("invoice", "total", "tax", "shipment", "carrier", "password", "hash", "cache", "evict", "price")


class SlowCopy(Copy):
    """The scenario with N generated queries in the billing set and the sleeping retriever."""

    def __init__(self, root: Path, queries: int, sleep: float) -> None:
        retriever = (ROOT / "docs/examples/retriever.py").read_text(encoding="utf-8")
        slow = retriever.replace(
            "for request in map(json.loads, sys.stdin):",
            f"import time\nfor request in map(json.loads, sys.stdin):\n    time.sleep({sleep!r})",
        )
        header = '{"schema":"cce.relevance/v1","corpus":"../corpus"}\n'
        cases = "".join(
            json.dumps(
                {"id": f"q{n}", "query": f"{WORDS[n % 10]} {WORDS[n * 3 % 10]}", "expected": ["billing.py"]}
            )
            + "\n"
            for n in range(queries)
        )
        config = f'[backends.slow]\ncommand = [{json.dumps(sys.executable)}, "tools/slow.py", "corpus"]\n'
        files = {BILLING_FIXTURE: header + cases, "cce-relevance.toml": config, "tools/slow.py": slow}
        self.pr = PullRequest(root, base_files=files)
        self.pr.push(MOVING_CHANGE, "h1: a reports module, and a function above billing.py's")
        self.fake = None
        self.dirs = RunnerDirs(root / "runner")


INPUTS = {
    "INPUT_BACKENDS": "slow",
    "INPUT_GOLDEN": "",
    "INPUT_ALLOW-REPOSITORY-RETRIEVERS": "true",
    "INPUT_COMMENT": "false",
}


def timed(copy: Copy, label: str, event: dict[str, object] | None = None, **inputs: str) -> ActionRun:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    run = copy.act(event, **INPUTS, **inputs)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if run.code not in (0, 1):
        raise SystemExit(f"{label}: exit {run.code}\n{run.stdout}{run.stderr}")
    print(f"{label:<40} wall {wall:6.1f} s   cpu {cpu:5.1f} s", flush=True)
    return run


def same(run: ActionRun, copy: Copy, whole: ActionRun, whole_copy: Copy) -> bool:
    return (run.code, run.outputs, run.summary, copy.files()) == (
        whole.code,
        whole.outputs,
        whole.summary,
        whole_copy.files(),
    )


def shards_and_merge(copy: Copy, count: int, note: str) -> ActionRun:
    """Shards 1..count, their states copied to `artifacts/` as a matrix's artifacts, then the merge."""
    for index in range(1, count + 1):
        run = timed(copy, f"shard {index}/{count}{note}", INPUT_SHARD=f"{index}/{count}")
        if note and "base score" in run.stdout:
            raise SystemExit(f"shard {index}/{count} scored its base:\n{run.stdout}")
        artifact = copy.pr.workspace / "artifacts" / f"shard-{index}"
        artifact.mkdir(parents=True)
        shutil.copy(copy.pr.workspace / run.outputs["shard-state"], artifact)
    return timed(copy, f"merge{note}", None, INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": "artifacts"})


def states(copy: Copy) -> dict[str, bytes]:
    root = copy.pr.workspace / "artifacts"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.json"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=90)
    parser.add_argument("--sleep", type=float, default=0.1)
    parser.add_argument("--shards", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="cce-bench-shards-"))
    try:
        whole_copy, sharded, reusing = (SlowCopy(scratch / name, args.queries, args.sleep) for name in "wsr")
        whole = timed(whole_copy, "unsharded")
        merged = shards_and_merge(sharded, args.shards, "")
        push: dict[str, object] = {
            "before": "0" * 40,
            "after": reusing.pr.merge_base(),
            "ref": "refs/heads/main",
        }
        timed(reusing, "push run (the merge-base alone)", push, GITHUB_EVENT_NAME="push")
        reused = timed(reusing, "pull request, base reused")
        merged_reusing = shards_and_merge(reusing, args.shards, ", base reused")
        print(f"merged == unsharded: {same(merged, sharded, whole, whole_copy)}")
        print(f"base reused: {'reusing the side' in reused.stdout}")
        print(f"reusing == unsharded: {same(reused, reusing, whole, whole_copy)}")
        print(f"shards reusing the base saved the same states: {states(reusing) == states(sharded)}")
        print(f"merged (base reused) == unsharded: {same(merged_reusing, reusing, whole, whole_copy)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
