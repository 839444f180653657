"""Start-up stays light: the CLI module and `--help` load no numpy, scipy or requests.

The Action starts the CLI twice per pull request; those libraries are most of a full import's
cost (docs/dev/performance.md, bench/startup.py measures it). Wall times are not asserted — what
is imported is, in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "scipy", "requests", "cce_relevance.api", "cce_relevance.retrieval.index.build")

_PROBE = """
import sys
{setup}
loaded = [m for m in {heavy!r} if m in sys.modules and type(sys.modules[m]).__name__ != "_LazyModule"]
print("loaded:" + ",".join(loaded))
"""


def _loaded_after(setup: str) -> list[str]:
    code = _PROBE.format(setup=setup, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    last = out.strip().splitlines()[-1]  # after any help text the commands printed
    assert last.startswith("loaded:"), out
    return [m for m in last.removeprefix("loaded:").split(",") if m]


def test_importing_the_cli_loads_nothing_heavy():
    assert _loaded_after("import cce_relevance.cli") == []


def test_help_loads_nothing_heavy():
    setup = (
        "from cce_relevance.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass"
    )
    assert _loaded_after(setup) == []


def test_a_command_still_loads_the_library():
    setup = (
        "from cce_relevance.cli import main\n"
        "try:\n    main(['chunks', 'test/fixture/samples'])\nexcept SystemExit:\n    pass"
    )
    assert "cce_relevance.api" in _loaded_after(setup)
