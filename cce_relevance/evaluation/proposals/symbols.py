"""The one seam between proposals and symbol names: what a definition is called, how to anchor it.

Proposals need two things from a chunk: the name its definition has (for queries made of that
name, and to find its callers) and an anchor that names it independently of line numbers.
Both belong to the symbol-anchor feature of the fixture contract; this module only adapts it.
Until that feature exists here, names are read from a definition's first line and every anchor
is a line-range anchor (`path#kind@a-b`), which the fixture contract already has.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cce_relevance.retrieval.chunk import MODULE, Chunk

# A definition keyword followed by the defined name, on a chunk's first line.
_HEADER_NAME = re.compile(r"\b(?:def|class|function|fn|func|fun|struct|enum|trait|interface|module|impl|type)"
                          r"\s+([A-Za-z_][A-Za-z0-9_]*)")


def symbol_names(chunks: Sequence[Chunk]) -> list[str | None]:
    """Each chunk's dotted symbol name (`Client.send`), or None where its definition has none.

    Nesting comes from line containment within a file: a chunk's enclosing definitions are the
    earlier chunks of its file whose lines contain its lines (chunks are in pre-order).
    """
    names: list[str | None] = []
    open_defs: list[tuple[str, int, int, str | None]] = []  # (file, start, end, dotted name) of enclosing chunks
    for c in chunks:
        while open_defs and (open_defs[-1][0] != c.file_path or open_defs[-1][2] < c.start_line):
            open_defs.pop()
        own = _own_name(c)
        outer = open_defs[-1][3] if open_defs else None
        dotted = None if own is None else (f"{outer}.{own}" if outer else own)
        names.append(dotted)
        open_defs.append((c.file_path, c.start_line, c.end_line, dotted if own is not None else outer))
    return names


def _own_name(chunk: Chunk) -> str | None:
    if chunk.kind == MODULE:
        return None
    match = _HEADER_NAME.search(chunk.content.split("\n", 1)[0])
    return match.group(1) if match else None


def definition_anchor(chunk: Chunk, symbol: str | None, unique: bool) -> str:
    """The anchor a proposal labels `chunk` with.

    `unique` says whether `symbol` names exactly one definition of its kind in its file. A
    module chunk (a file without definitions) is named by its file and kind, which need no lines.
    """
    if chunk.kind == MODULE:
        return f"{chunk.file_path}#{MODULE}"
    return f"{chunk.file_path}#{chunk.kind}@{chunk.start_line}-{chunk.end_line}"
