"""Top hits name their symbols lazily (evaluation/set_scoring.py `top_hits`): the files the
hits lie in are read when the side is scored and parsed only for a hit whose symbol is asked for.
The oracle is the eager naming it replaced: every hit's file parsed at once, the symbol of the
first definition with the hit's chunk id."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cce_relevance import api
from cce_relevance.evaluation.run_corpus import corpus_symbols, open_corpus
from cce_relevance.evaluation.set_scoring import TOP_HITS, TopHit, top_hits
from cce_relevance.retrieval.chunking import symbols as symbols_module
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS, PackSet
from cce_relevance.retrieval.chunking.symbols import Definition, ParsedFiles, file_definitions

REPO = Path(__file__).resolve().parents[2]


def eager_symbol(corpus: str, file: str, chunk_id: str) -> str | None:
    """The plain version: the file parsed now, the first definition with the chunk's id."""
    symbols = corpus_symbols(corpus)
    return next((d.symbol for d in symbols.definitions(file) if d.chunk_id == chunk_id), None)


def scored(tmp_path: Path, source: str) -> tuple[api.RunResult, str]:
    """A copy of a real corpus and a run over it, with a query per definition name of its files."""
    corpus = tmp_path / "corpus"
    shutil.copytree(REPO / source, corpus, ignore=shutil.ignore_patterns("__pycache__"))
    index = open_corpus(str(corpus))
    words = sorted({w for c in index.chunks for w in c.content.split()[:3] if w.isidentifier()})[:60]
    lines = [json.dumps({"schema": "cce.relevance/v1", "corpus": "corpus"})]
    lines += [json.dumps({"id": f"q{i}", "query": w, "expected": ["x.py"]}) for i, w in enumerate(words)]
    fixture = tmp_path / "set.jsonl"
    fixture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = api.run(str(fixture), api.RunOptions(backends=("bm25", "vector", "hybrid")), dir=str(corpus))
    return result, str(corpus)


@pytest.mark.parametrize("source", ["test/fixture/samples", "cce_relevance/retrieval"])
def test_lazy_symbols_are_the_eager_ones_even_after_the_tree_changed(tmp_path: Path, source: str) -> None:
    """Every hit's symbol, asked for after the corpus directory was rewritten (as the Action's
    checkout becomes the other side's), is the one the eager naming gave before."""
    result, corpus = scored(tmp_path, source)
    rankings = top_hits(result, corpus)
    expected = {
        (backend, qid, hit.rank): eager_symbol(corpus, hit.file, hit.chunk_id)
        for backend, queries in rankings.items()
        for qid, hits in queries.items()
        for hit in hits
    }
    assert len(expected) > 100 and any(expected.values()) and None in expected.values()
    for path in Path(corpus).rglob("*"):
        if path.is_file():
            path.write_text("def replaced():\n    pass\n", encoding="utf-8")
    assert {
        (backend, qid, hit.rank): hit.symbol
        for backend, queries in rankings.items()
        for qid, hits in queries.items()
        for hit in hits
    } == expected
    assert all(len(hits) <= TOP_HITS for queries in rankings.values() for hits in queries.values())


def test_only_the_files_of_hits_asked_for_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, corpus = scored(tmp_path, "cce_relevance/retrieval")
    parsed_paths: list[str] = []

    def counting(path: str, text: str, packs: PackSet = REFERENCE_PACKS) -> tuple[Definition, ...]:
        parsed_paths.append(path)
        return file_definitions(path, text, packs)

    monkeypatch.setattr(symbols_module, "file_definitions", counting)
    shared: ParsedFiles = {}
    rankings = top_hits(result, corpus, parsed=shared)
    assert parsed_paths == []
    hits = [h for queries in rankings.values() for hs in queries.values() for h in hs]
    first = hits[0]
    named = first.symbol
    assert parsed_paths == [first.file]
    same = [h for h in hits if h.file == first.file]
    assert {h.symbol for h in same if h.chunk_id == first.chunk_id} == {named}
    assert parsed_paths == [first.file]  # one parse a file, for all its hits
    again = top_hits(result, corpus, parsed=shared)  # another set or side sharing `parsed`
    assert next(iter(next(iter(again.values())).values()))[0].symbol == named
    assert parsed_paths == [first.file]


def test_a_given_symbol_is_kept_and_hits_compare_without_their_lookup() -> None:
    given = TopHit(1, "a.py", 1, 4, "function_definition", False, "Client.send")
    assert given.symbol == "Client.send"
    assert TopHit(1, "a.py", 1, 4, "function_definition", False).symbol is None
    assert TopHit(1, "a.py", 1, 4, "function_definition", True, None, "id", corpus_symbols(".")) == TopHit(
        1, "a.py", 1, 4, "function_definition", True, None, "id"
    )


def test_hits_no_anchor_labels_are_marked_unlabeled_and_saved_so(tmp_path: Path) -> None:
    """`expected` makes a hit relevant, `irrelevant` makes it judged; any other hit is unlabeled.
    The mark survives a saved side, and a side saved before it was recorded reads as unlabeled
    false."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.py").write_text("def parse_header(line):\n    return line\n", encoding="utf-8")
    (corpus / "b.py").write_text("def parse_status(line):\n    return line\n", encoding="utf-8")
    (corpus / "c.py").write_text("def parse_body(line):\n    return line\n", encoding="utf-8")
    fixture = tmp_path / "set.jsonl"
    fixture.write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"q","query":"parse line","expected":["a.py"],"irrelevant":["b.py"],"k":3}\n',
        encoding="utf-8",
    )
    scored = api.score_set(str(fixture), api.RunOptions(backends=("bm25",)))
    hits = scored.top_hits["bm25"]["q"]
    marks = {h.file: (h.relevant, h.unlabeled) for h in hits}
    assert marks == {"a.py": (True, False), "b.py": (False, False), "c.py": (False, True)}
    for h in hits:
        assert TopHit.from_saved(h.saved()).saved() == h.saved()
        old = {k: v for k, v in h.saved().items() if k != "unlabeled"}
        assert TopHit.from_saved(old).unlabeled is False
