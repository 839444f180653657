"""How a proposal names the definition it labels: by its symbol where it can, else by its lines.

Symbols are the fixture contract's (retrieval/symbols.py reads them, evaluation/anchors.py
writes and parses the anchors). A symbol anchor survives edits above the definition, so it is
preferred: `path::Name` when no other definition of the file has that name, `path#kind::Name`
when the kind tells it apart, and the line range `path#kind@a-b` for a definition without a
name, or one whose name and kind another definition of its file shares (a property's getter
and setter). A file without definitions is one `module` chunk, named `path#module`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from cce_relevance.evaluation.anchors import Anchor, AnchorError, parse_anchor
from cce_relevance.retrieval.chunking.chunk import MODULE, Chunk
from cce_relevance.retrieval.chunking.packs import PackSet
from cce_relevance.retrieval.chunking.symbols import Definition, file_definitions


def chunk_symbols(chunks: Sequence[Chunk], texts: Mapping[str, str], packs: PackSet) -> list[str | None]:
    """Each chunk's symbol, read from the (redacted) `texts` of the files it names; None for a
    chunk of another file, a module chunk or a definition without a name."""
    by_id: dict[str, str | None] = {}
    for path, text in texts.items():
        for d in file_definitions(path, text, packs):
            by_id.setdefault(d.chunk_id, d.symbol)
    return [by_id.get(c.chunk_id) if c.file_path in texts else None for c in chunks]


class Anchors:
    """Anchors for the chunks of one corpus, given their symbols."""

    def __init__(self, chunks: Sequence[Chunk], symbols: Sequence[str | None]) -> None:
        pairs = list(zip(chunks, symbols, strict=True))
        self._named = Counter((c.file_path, s) for c, s in pairs if s is not None)
        self._named_kind = Counter((c.file_path, c.kind, s) for c, s in pairs if s is not None)

    def of(self, chunk: Chunk, symbol: str | None) -> str:
        """The anchor that names `chunk` (whose symbol is `symbol`) and nothing else."""
        if chunk.kind == MODULE:
            return f"{chunk.file_path}#{MODULE}"
        if symbol is not None:
            for kind in (None, chunk.kind):
                if self._unique(chunk, symbol, kind) and (
                    text := _symbol_anchor(chunk.file_path, kind, symbol)
                ):
                    return text
        return Anchor(chunk.file_path, chunk.kind, (chunk.start_line, chunk.end_line)).display()

    def _unique(self, chunk: Chunk, symbol: str, kind: str | None) -> bool:
        if kind is None:
            return self._named[(chunk.file_path, symbol)] == 1
        return self._named_kind[(chunk.file_path, kind, symbol)] == 1


def definition_anchor(path: str, definitions: Sequence[Definition], target: Definition) -> str | None:
    """The symbol anchor that names `target` among its file's `definitions` and nothing else:
    `path::Name` when no other definition has its name, `path#kind::Name` when the kind tells it
    apart; None for a definition without a name, or one whose name and kind another shares."""
    if target.symbol is None:
        return None
    same = [d for d in definitions if d.symbol == target.symbol]
    if len(same) == 1:
        return _symbol_anchor(path, None, target.symbol)
    if sum(d.kind == target.kind for d in same) == 1:
        return _symbol_anchor(path, target.kind, target.symbol)
    return None


def _symbol_anchor(path: str, kind: str | None, symbol: str) -> str | None:
    """`path[#kind]::symbol`, when it reads back as that anchor (a symbol with `::`, a path with
    `#`, would not)."""
    wanted = Anchor(path, kind, None, symbol)
    text = wanted.display()
    try:
        return text if parse_anchor(text) == wanted else None
    except AnchorError:
        return None
