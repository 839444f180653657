"""What a walk leaves out (retrieval/corpus/exclusion.py): patterns written relative to one directory
applied to a corpus above, below or at it, and a run's own files found by path."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.corpus.exclusion import Exclusion, compile_patterns, own_files, pattern_set
from cce_relevance.retrieval.corpus.walk import walk
from tests.retrieval.corpora import write_corpus

_SEGMENT = st.sampled_from(["a", "b", "src", "gen", "x.py", "y.md"])
_PATTERN = st.sampled_from(
    ["gen/", "/gen/", "*.md", "a/*.py", "src/**", "!src/x.py", "b", "/a/b/", "**/x.py", "!*.md", "src/gen/"]
)


@given(
    relation=st.sampled_from(["same", "corpus below", "patterns below"]),
    common=st.lists(_SEGMENT, max_size=2),
    extra=st.lists(_SEGMENT, min_size=1, max_size=2),
    within=st.booleans(),
    rest=st.lists(_SEGMENT, min_size=1, max_size=3),
    patterns=st.lists(_PATTERN, min_size=1, max_size=4),
    is_dir=st.booleans(),
)
@settings(max_examples=500)
def test_patterns_match_a_corpus_path_as_they_match_it_from_their_own_directory(
    relation: str,
    common: list[str],
    extra: list[str],
    within: bool,
    rest: list[str],
    patterns: list[str],
    is_dir: bool,
) -> None:
    """A corpus path is matched as the same file's path relative to the patterns' directory, and
    a file outside that directory is not matched at all."""
    base = ["/r", *common, *(extra if relation == "patterns below" else [])]
    corpus = ["/r", *common, *(extra if relation == "corpus below" else [])]
    # Below a patterns' directory inside the corpus (`within`), or anywhere in the corpus.
    path = [*extra, *rest] if relation == "patterns below" and within else rest
    compiled = compile_patterns(patterns, "test")
    applied = pattern_set(compiled, os.path.join(*base), os.path.join(*corpus))
    assert applied is not None
    relative = os.path.relpath(os.path.join(*corpus, *path), os.path.join(*base))
    expected = not relative.startswith("..") and compiled.match(relative.encode(), is_dir) is True
    assert applied.excludes("/".join(path).encode(), is_dir) == expected


def test_patterns_of_an_unrelated_directory_apply_to_nothing() -> None:
    assert pattern_set(compile_patterns(["*.py"], "test"), "/r/a", "/r/b") is None
    assert pattern_set(compile_patterns([], "test"), "/r", "/r") is None


def test_own_files_are_those_inside_the_corpus_by_real_path(tmp_path: Path) -> None:
    write_corpus(tmp_path / "repo", {"src/a.py": "a = 1\n", "eval/g.json": "{}\n"})
    (tmp_path / "alias").symlink_to(tmp_path / "repo")
    own = own_files(
        [
            str(tmp_path / "alias/eval/g.json"),
            str(tmp_path / "repo/eval/../out.json"),
            str(tmp_path / "elsewhere.json"),
            str(tmp_path / "repo"),
        ],
        str(tmp_path / "repo"),
    )
    assert own == frozenset({"eval/g.json", "out.json"})


def test_the_walk_leaves_out_own_files_and_pattern_matches_and_says_which(tmp_path: Path) -> None:
    write_corpus(
        tmp_path,
        {
            "src/a.py": "a = 1\n",
            "src/gen/b.py": "b = 2\n",
            "eval/g.json": "{}\n",
            "eval/set.jsonl": "{}\n",
            "notes.md": "n\n",
        },
    )
    exclusion = Exclusion(
        frozenset({"eval/g.json", "eval/set.jsonl"}),
        (pattern_set(compile_patterns(["gen/", "*.md"], "test"), str(tmp_path), str(tmp_path)),),
    )
    walked = walk(tmp_path, exclude=exclusion)
    assert [f.path for f in walked.files] == ["src/a.py"]
    # A .jsonl file is never indexed anyway: it is not reported as left out; a pruned directory's
    # files are not listed one by one.
    assert walked.excluded == ("eval/g.json", "notes.md")
    assert [f.path for f in walk(tmp_path).files] == ["eval/g.json", "notes.md", "src/a.py", "src/gen/b.py"]
