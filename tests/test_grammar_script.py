"""scripts/grammars.py, which the Docker build runs: it prunes the language pack to the grammars the
packs load and fails the build when any supported language no longer parses.

The pruning runs against a shadow copy of tree-sitter-language-pack whose bindings are symlinks to
the installed ones, put first on PYTHONPATH: deleting a symlink never touches the real grammar.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "grammars.py"
# What the opt-in packs load from the pack (C# comes from its own wheel): docs/languages.md.
LOADED = {"go", "java", "cpp", "php", "kotlin"}


def run(command: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, str(SCRIPT), command], capture_output=True, text=True, env=env, check=False
    )


def shadow_pack(tmp_path: Path, keep: set[str] | None = None) -> Path:
    """A copy of the installed pack's Python files with symlinked bindings (all, or only `keep`)."""
    import tree_sitter_language_pack

    installed = Path(tree_sitter_language_pack.__file__).parent
    shadow = tmp_path / "site" / "tree_sitter_language_pack"
    (shadow / "bindings").mkdir(parents=True)
    shutil.copy(installed / "__init__.py", shadow / "__init__.py")
    shutil.copy(installed / "bindings" / "__init__.py", shadow / "bindings" / "__init__.py")
    for binding in (installed / "bindings").glob("*.so"):
        if keep is None or binding.name.split(".", 1)[0] in keep:
            (shadow / "bindings" / binding.name).symlink_to(binding)
    return shadow


def bindings(shadow: Path) -> set[str]:
    return {p.name.split(".", 1)[0] for p in (shadow / "bindings").glob("*.so")}


def test_every_supported_language_parses() -> None:
    done = run("check")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "grammars: 12 languages parse: python, javascript, ruby, rust, typescript, c, go, java, cpp, "
        "csharp, php, kotlin"
    )


def test_prune_keeps_exactly_the_grammars_the_packs_load(tmp_path: Path) -> None:
    shadow = shadow_pack(tmp_path)
    assert len(bindings(shadow)) > 100
    done = run("prune", shadow.parent)
    assert done.returncode == 0, done.stderr
    assert bindings(shadow) == LOADED
    assert "12 languages parse" in done.stdout
    assert "kept cpp.abi3.so, go.abi3.so, java.abi3.so, kotlin.abi3.so, php.abi3.so" in done.stdout


@pytest.mark.parametrize("command", ["check", "prune"])
def test_a_pack_pruned_too_far_fails_naming_the_language(tmp_path: Path, command: str) -> None:
    shadow = shadow_pack(tmp_path, keep=LOADED - {"kotlin"})
    done = run(command, shadow.parent)
    assert done.returncode == 1
    assert done.stderr.startswith("grammars: kotlin: grammar does not load: LookupError"), done.stderr
    assert bindings(shadow) == LOADED - {"kotlin"}  # nothing is removed when a grammar is missing


def test_usage_error() -> None:
    done = run("everything")
    assert done.returncode == 2 and "usage: grammars.py check|prune" in done.stderr
