"""The linear-time matcher gives `re`'s verdicts, and finishes on lines that make `re` backtrack."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.corpus.gitignore import GlobError, NestLimitError, compile_line
from cce_relevance.retrieval.corpus.glob_nfa import LinearMatcher, backtracking_risk

_GLOB = st.text(alphabet="ab./*?[]!^-{},\\é", min_size=1, max_size=14)
_PATH = st.text(alphabet="ab./é", max_size=14).map(lambda s: s.encode("utf-8"))


@settings(max_examples=400, deadline=None)
@given(_GLOB, st.lists(_PATH, min_size=1, max_size=8))
def test_the_linear_matcher_agrees_with_re(line: str, paths: list[bytes]) -> None:
    try:
        pattern = compile_line(line)
    except (GlobError, NestLimitError):
        return
    if pattern is None:
        return
    linear = LinearMatcher(pattern.regex.pattern)
    for path in paths:
        assert linear.fullmatch(path) == bool(pattern.regex.fullmatch(path)), (line, path)


def test_runaway_lines_use_the_linear_matcher() -> None:
    assert compile_line("*a" * 16 + "b").linear is not None
    assert compile_line("*.pyc").linear is None  # `**/*.pyc`: two stars, re is safe there
    assert backtracking_risk(b"[^/]*a[^/]*b[^/]*") and not backtracking_risk(b"(?:/?|.*/)[^/]*\\x2epy")


def test_an_adversarial_gitignore_finishes_with_the_right_verdicts() -> None:
    """`*a` sixteen times then `b`, against a name of forty `a`s: `re` would backtrack for hours.
    Run in a child process with a generous timeout so a regression fails instead of hanging."""
    script = (
        "from cce_relevance.retrieval.corpus.gitignore import Gitignore\n"
        "g = Gitignore.from_bytes(b'*a' * 16 + b'b\\n')\n"
        "print(g.match(b'a' * 40 + b'.py', False), g.match(b'a' * 40 + b'b', False),"
        " g.match(b'x/' + b'a' * 200 + b'b', False))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["None", "True", "True"]
