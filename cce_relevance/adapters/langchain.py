"""A LangChain retriever as a Python retriever: its Documents turned into ranked results.

LangChain's `BaseRetriever.invoke(query)` returns `Document`s, best first, whose `metadata` says
where each came from: LangChain's file loaders set `source` (the file's path), and its text
splitters set `start_index` (the character offset of the piece in the file) when made with
`add_start_index=True`. A result needs a corpus-relative path and a line span, so for each
Document, in order:

* the path is `metadata[path_key]` (default `source`), made relative to the corpus directory when
  it is absolute and inside it, with `/` separators;
* the lines are `metadata["start_line"]`/`["end_line"]` when the retriever's code put them there;
  else they are worked out from `start_index` and the length of `page_content` against the file
  as it is on disk; else the span is the whole file;
* `kind` and `score` come from `metadata["kind"]` and `metadata["score"]` (or
  `["relevance_score"]`) when present.

A Document whose span repeats an earlier one's (two pieces of one file without lines) is left out,
and the first `k` are returned: configure the retriever to return at least `k` (its `search_kwargs`,
say). Anything else that is wrong (a path outside the corpus, a missing path) reaches the harness's
checks and is reported as such. Use it from the factory your `cce-relevance.toml` names:

    from cce_relevance.adapters.langchain import LangChainRetriever

    def make(corpus, table):
        return LangChainRetriever(build_my_retriever(corpus), corpus)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever


class LangChainRetriever:
    """`search(query, k)` over a LangChain `BaseRetriever` (see the module docstring)."""

    def __init__(self, retriever: BaseRetriever, corpus: str, *, path_key: str = "source") -> None:
        self.retriever = retriever
        self.corpus = os.path.abspath(corpus)
        self.path_key = path_key
        self._texts: dict[str, str | None] = {}

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        seen: set[tuple[Any, Any, Any]] = set()
        for document in self.retriever.invoke(query):
            result = self.result(document)
            span = (result.get("file_path"), result.get("start_line"), result.get("end_line"))
            if span in seen:
                continue
            seen.add(span)
            results.append(result)
            if len(results) == k:
                break
        return results

    def result(self, document: Document) -> dict[str, Any]:
        """One Document as a result (mapping of `file_path`, `start_line`, `end_line`, and `kind`
        and `score` when it carries them)."""
        metadata = document.metadata
        path = self._relative(metadata.get(self.path_key))
        result: dict[str, Any] = {"file_path": path}
        start, end = metadata.get("start_line"), metadata.get("end_line")
        if start is None or end is None:
            start, end = self._lines(path, metadata.get("start_index"), document.page_content)
        result["start_line"], result["end_line"] = start, end
        if metadata.get("kind") is not None:
            result["kind"] = metadata["kind"]
        score = metadata.get("score", metadata.get("relevance_score"))
        if score is not None:
            result["score"] = score
        return result

    def _relative(self, path: Any) -> Any:
        """A path as the corpus names its files; anything else as it is, for the checks to name."""
        if not isinstance(path, str):
            return path
        if os.path.isabs(path):
            relative = os.path.relpath(path, self.corpus)
            if not relative.startswith(".."):
                path = relative
        return path.replace(os.sep, "/")

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            full = os.path.join(self.corpus, path)
            try:
                with open(full, encoding="utf-8", errors="replace", newline="") as handle:
                    self._texts[path] = handle.read()
            except OSError:
                self._texts[path] = None
        return self._texts[path]

    def _lines(self, path: Any, start_index: Any, content: str) -> tuple[Any, Any]:
        """The 1-based lines of `content` at character `start_index` of the file (the whole file
        without an offset); (None, None) when the file cannot be read."""
        text = self._text(path) if isinstance(path, str) else None
        if text is None:
            return None, None
        if (
            not isinstance(start_index, int)
            or isinstance(start_index, bool)
            or not 0 <= start_index <= len(text)
        ):
            return 1, max(1, len(text.splitlines()))
        first = text.count("\n", 0, start_index) + 1
        return first, first + content.rstrip("\n").count("\n")
