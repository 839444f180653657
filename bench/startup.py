"""CLI start-up time: `cce-relevance --help` in fresh processes against a bare `python -c pass`.

The Action starts the CLI twice per pull request, so start-up is paid twice; the goal
(docs/dev/performance.md) is 150 ms warm. Each command runs in a new interpreter, the two commands
interleaved round-robin so that load on a shared machine hits both alike, after one warm-up run
each (which also writes any missing .pyc files). Also reports which heavy libraries merely
importing the CLI module loads: they are what start-up pays for.

    python bench/startup.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY_MODULES = ("numpy", "tree_sitter", "requests", "scipy", "hypothesis", "click")


def cli_command() -> list[str]:
    """The installed console script beside this interpreter, else `python -m cce_relevance`."""
    script = Path(sys.executable).with_name("cce-relevance")
    if script.is_file():
        return [str(script), "--help"]
    return [sys.executable, "-m", "cce_relevance", "--help"]


def time_once(command: list[str]) -> float:
    """Wall seconds for one fresh process; its output is discarded, a failure is fatal."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def imported_heavy_modules() -> list[str]:
    """Which of HEAVY_MODULES `import cce_relevance.cli` brings in, in a fresh interpreter."""
    probe = (
        f"import sys, cce_relevance.cli; print(' '.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return out.stdout.split()


def measure(runs: int) -> dict:
    commands = {"python -c pass": [sys.executable, "-c", "pass"], "cce-relevance --help": cli_command()}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():
        time_once(command)
    for _ in range(runs):
        for name, command in commands.items():
            samples[name].append(time_once(command))
    summary = {
        name: {"median_s": statistics.median(v), "min_s": min(v), "max_s": max(v)}
        for name, v in samples.items()
    }
    return {
        "runs": runs,
        "python": sys.version.split()[0],
        "nproc": os.cpu_count(),
        "commands": summary,
        "cli_over_python_s": summary["cce-relevance --help"]["median_s"]
        - summary["python -c pass"]["median_s"],
        "cli_imports": imported_heavy_modules(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per command (default 15)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = measure(max(1, args.runs))
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))
        return 0
    print(f"start-up, median of {figures['runs']} fresh processes (Python {figures['python']}):")
    for name, s in figures["commands"].items():
        print(
            f"  {name:<22} {s['median_s'] * 1000:7.1f} ms  (min {s['min_s'] * 1000:.1f}, "
            f"max {s['max_s'] * 1000:.1f})"
        )
    print(f"  CLI over bare python   {figures['cli_over_python_s'] * 1000:7.1f} ms")
    loaded = ", ".join(figures["cli_imports"]) or "none of " + ", ".join(HEAVY_MODULES)
    print(f"  importing the CLI loads: {loaded}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
