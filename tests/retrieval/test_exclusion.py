"""What a walk leaves out (retrieval/corpus/exclusion.py): patterns written relative to one directory
applied to a corpus above, below or at it, and a run's own files found by path."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.retrieval.corpus.exclusion import Exclusion, compile_patterns, own_files, pattern_set
from cce_relevance.retrieval.corpus.walk import walk
from tests.retrieval.corpora import write_corpus

_SEGMENT = st.sampled_from(["a", "b", "src", "gen", "x.py", "y.md"])
_PATTERN = st.sampled_from(["gen/", "/gen/", "*.md", "a/*.py", "src/**", "!src/x.py", "b", "/a/b/", "**/x.py",
                            "!*.md", "src/gen/"])


@given(base=st.lists(_SEGMENT, max_size=2), corpus=st.lists(_SEGMENT, max_size=2),
       below_base=st.booleans(), patterns=st.lists(_PATTERN, min_size=1, max_size=4),
       path=st.lists(_SEGMENT, min_size=1, max_size=4), is_dir=st.booleans())
def test_patterns_match_a_corpus_path_as_they_match_it_from_their_own_directory(
    base: list[str], corpus: list[str], below_base: bool, patterns: list[str], path: list[str], is_dir: bool
) -> None:
    """A corpus path is matched as the same file's path relative to the patterns' directory."""
    root = "/r"
    base_dir = os.path.join(root, *base)
    corpus_dir = os.path.join(base_dir, *corpus) if below_base else os.path.join(root, *corpus)
    compiled = compile_patterns(patterns, "test")
    applied = pattern_set(compiled, base_dir, corpus_dir)
    full = os.path.join(corpus_dir, *path)
    relative = os.path.relpath(full, base_dir)
    if relative.startswith(".."):  # the file is not below the patterns' directory: they say nothing
        assert applied is None or not applied.excludes("/".join(path).encode(), is_dir)
        return
    expected = compiled.match(relative.encode(), is_dir) is True
    if applied is None:
        assert not expected or os.path.relpath(corpus_dir, base_dir).startswith("..")
        return
    assert applied.excludes("/".join(path).encode(), is_dir) == expected


def test_own_files_are_those_inside_the_corpus_by_real_path(tmp_path: Path) -> None:
    write_corpus(tmp_path / "repo", {"src/a.py": "a = 1\n", "eval/g.json": "{}\n"})
    (tmp_path / "alias").symlink_to(tmp_path / "repo")
    own = own_files([str(tmp_path / "alias/eval/g.json"), str(tmp_path / "repo/eval/../out.json"),
                     str(tmp_path / "elsewhere.json"), str(tmp_path / "repo")], str(tmp_path / "repo"))
    assert own == frozenset({"eval/g.json", "out.json"})


def test_the_walk_leaves_out_own_files_and_pattern_matches_and_says_which(tmp_path: Path) -> None:
    write_corpus(tmp_path, {"src/a.py": "a = 1\n", "src/gen/b.py": "b = 2\n", "eval/g.json": "{}\n",
                            "eval/set.jsonl": "{}\n", "notes.md": "n\n"})
    exclusion = Exclusion(frozenset({"eval/g.json", "eval/set.jsonl"}),
                          (pattern_set(compile_patterns(["gen/", "*.md"], "test"), str(tmp_path), str(tmp_path)),))
    walked = walk(tmp_path, exclude=exclusion)
    assert [f.path for f in walked.files] == ["src/a.py"]
    # A .jsonl file is never indexed anyway: it is not reported as left out; a pruned directory's
    # files are not listed one by one.
    assert walked.excluded == ("eval/g.json", "notes.md")
    assert [f.path for f in walk(tmp_path).files] == ["eval/g.json", "notes.md", "src/a.py", "src/gen/b.py"]
