"""Cold indexing by CPU time: this package against another checkout, in alternating fresh processes.

    python bench/cold.py CORPUS [--checkout DIR] [--rounds 3] [--json]

On a machine other jobs share, wall time swings from run to run far more than CPU time does, and
a change of a few percent is only visible as CPU time measured beside P, alternating with the
version it is compared with. Each round runs, each in a fresh process and for each side in turn
(this package, then the one in `--checkout DIR`, e.g. `git worktree add DIR COMMIT`):

  * P: tree-sitter's parse of every walked file (bytes in memory, one process);
  * P in two processes: the same parses split by bytes between this process and one forked
    child (largest files in the child) — the floor of any two-process build on this machine;
  * the cold index in one process: `build_index(CORPUS, workers=1)`;
  * the cold index in two processes: `build_index(CORPUS, workers=2)`.

Each measurement gives its wall seconds and its CPU seconds (the process and the children it
waited for); figures are printed as ratios to the P of the same side and round, by CPU and by
wall, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

_MODES = ("p", "p2", "index1", "index2")
_HERE = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _parse_jobs(corpus: str) -> list:
    from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
    from cce_relevance.retrieval.corpus.walk import walk

    jobs = []
    for f in walk(corpus).files:
        pack = REFERENCE_PACKS.for_path(f.path)
        if pack is not None:
            jobs.append((pack.parser(), f.text.encode("utf-8", "surrogateescape")))
    return jobs


def _parse_in_two(jobs: list) -> None:
    """Half the bytes, largest files first, parsed in a forked child; the rest here."""
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1]))
    total, taken, child = sum(len(source) for _, source in jobs), 0, []
    for i in order:
        if 2 * taken >= total:
            break
        child.append(i)
        taken += len(jobs[i][1])
    pid = os.fork()
    if pid == 0:
        for i in child:
            jobs[i][0].parse(jobs[i][1])
        os._exit(0)
    for i in order[len(child) :]:
        jobs[i][0].parse(jobs[i][1])
    os.waitpid(pid, 0)


def measure(mode: str, corpus: str) -> dict:
    """One measurement in this process (run by `--child`)."""
    if mode in ("p", "p2"):
        jobs = _parse_jobs(corpus)

        def work() -> None:
            if mode == "p":
                for parser, source in jobs:
                    parser.parse(source)
            else:
                _parse_in_two(jobs)

    else:
        from cce_relevance.retrieval.index.build import build_index

        def work() -> None:
            build_index(corpus, workers=1 if mode == "index1" else 2)

    cpu, wall = _cpu(), time.perf_counter()
    work()
    return {"wall_s": time.perf_counter() - wall, "cpu_s": _cpu() - cpu, "load": os.getloadavg()[0]}


def _in_fresh_process(package_root: Path, mode: str, corpus: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), corpus, "--child", mode],
        env=env,
        cwd=package_root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def compare(corpus: str, checkout: str | None, rounds: int) -> dict:
    corpus = str(Path(corpus).resolve())
    sides = {"this": _HERE, **({"checkout": Path(checkout).resolve()} if checkout else {})}
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, root in sides.items():
            runs[name].append({mode: _in_fresh_process(root, mode, corpus) for mode in _MODES})
    return {"corpus": corpus, "sides": {name: str(root) for name, root in sides.items()}, "runs": runs}


def render(figures: dict) -> str:
    out = [f"corpus {figures['corpus']}; ratios to P of the same side and round (CPU | wall)"]
    for name, rounds in figures["runs"].items():
        out.append(f"{name}: {figures['sides'][name]}")
        for mode in _MODES[1:]:
            cpu = [r[mode]["cpu_s"] / r["p"]["cpu_s"] for r in rounds]
            wall = [r[mode]["wall_s"] / r["p"]["wall_s"] for r in rounds]
            seconds = [r[mode]["cpu_s"] for r in rounds]
            out.append(
                f"  {mode:<7} {min(cpu):.3f}-{max(cpu):.3f} P by CPU "
                f"({min(seconds):.2f}-{max(seconds):.2f} s) | {min(wall):.3f}-{max(wall):.3f} P wall"
            )
        loads = [r[mode]["load"] for r in rounds for mode in _MODES]
        p_cpu = [r["p"]["cpu_s"] for r in rounds]
        out.append(
            f"  P {min(p_cpu):.2f}-{max(p_cpu):.2f} s CPU; load average {min(loads):.2f}-{max(loads):.2f}"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus")
    parser.add_argument("--checkout", help="another copy of the package to compare with (its root)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=_MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.corpus)))
        return
    figures = compare(args.corpus, args.checkout, max(1, args.rounds))
    print(json.dumps(figures, indent=2) if args.json else render(figures))


if __name__ == "__main__":
    main()
