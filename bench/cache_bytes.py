"""Where an index cache's bytes go: each section of its files' records and of its kept corpora.

    python bench/cache_bytes.py CACHE_DIR [--json]

CACHE_DIR is an index cache a run filled (`cce-relevance run ... --cache CACHE_DIR`, or one of
bench/scale.py's scratch caches). It prints the database's and each kept corpus's bytes, then
every section's bytes, bytes a chunk and share: for the files' records (the rows of the
database) the JSON header's parts and each array as the record's header gives its width, and
for a corpus record the pieces `corpus_sections` writes. The chunks counted are those of the
newest kept corpus (the database's when none is kept).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from cce_relevance.retrieval.cache.corpus_record import corpus_sections, decode_corpus
from cce_relevance.retrieval.cache.index_cache import CORPORA_DIR, DB_FILE
from cce_relevance.retrieval.file_indexing.file_record import FIELDS, ID_BYTES

_CHECKSUM_BYTES = 32  # a corpus file's SHA-256 before its record
# A file record's arrays after its header, in order: (header width name, how many items).
_FILE_ARRAYS = (
    ("rows", lambda h: FIELDS * h["chunks"]),
    ("ids", lambda h: h["chunks"]),
    ("extras", lambda h: h["weighed"]),
    ("bucket_lengths", lambda h: h["chunks"] if h["counted"] is not None else 0),
    ("buckets", lambda h: h["counted"] or 0),
    ("bucket_counts", lambda h: h["counted"] or 0),
    ("term_lengths", lambda h: h["chunks"] if h["termed"] is not None else 0),
    ("terms", lambda h: h["termed"] or 0),
    ("term_counts", lambda h: h["termed"] or 0),
)
_FIXED = {"ids": ID_BYTES, "buckets": 1}


def file_record_sections(data: bytes) -> Counter[str]:
    """The bytes of each section of one file's record."""
    size = int.from_bytes(data[4:8], "little")
    header = json.loads(data[8 : 8 + size])
    out: Counter[str] = Counter()
    for key, value in header.items():
        out[f"header: {key}"] += len(json.dumps({key: value})) - 2
    out["header: framing"] += 8 + size - sum(out.values())
    widths = header.get("widths", {})
    for name, count in _FILE_ARRAYS:
        width = _FIXED.get(name) or np.dtype(widths.get(name, "<i8")).itemsize
        out[name] += width * count(header)
    return out


def measure(directory: Path) -> dict:
    db_path = directory / DB_FILE
    files: Counter[str] = Counter()
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT key, checksum, data FROM entries").fetchall()
    db.close()
    for key, checksum, data in rows:
        files += file_record_sections(data)
        files["row key and checksum"] += len(key) + len(checksum)
    files["database overhead"] = os.path.getsize(db_path) - sum(files.values())
    corpora = sorted((directory / CORPORA_DIR).glob("[!.]*"), key=lambda p: p.stat().st_mtime_ns)
    kept: Counter[str] = Counter()
    chunks = 0
    for path in corpora:
        record = path.read_bytes()[_CHECKSUM_BYTES:]
        arrays = decode_corpus(record)
        chunks = int(arrays.rows.shape[0])
        for name, part in corpus_sections(arrays):
            kept[name] += len(part)
        kept["checksum"] += _CHECKSUM_BYTES
    if not chunks:
        chunks = sum(json.loads(d[8 : 8 + int.from_bytes(d[4:8], "little")])["chunks"] for _, _, d in rows)
    return {
        "chunks": chunks,
        "files": len(rows),
        "corpora": len(corpora),
        "database": dict(files),
        "corpus records": dict(kept),
    }


def render(figures: dict) -> str:
    n = max(figures["chunks"], 1)
    total = sum(sum(figures[k].values()) for k in ("database", "corpus records"))
    lines = [
        f"{figures['chunks']:,} chunks, {figures['files']:,} files' records, {figures['corpora']} kept "
        f"corpora: {total / 1e6:,.1f} MB = {total / n:,.0f} B/chunk"
    ]
    for part in ("database", "corpus records"):
        sections = figures[part]
        size = sum(sections.values())
        lines.append(f"  {part}: {size / 1e6:,.1f} MB = {size / n:,.0f} B/chunk")
        for name, value in sorted(sections.items(), key=lambda kv: (-kv[1], kv[0])):
            share = 100 * value / total
            lines.append(f"    {name:28s} {value:>12,d} B {value / n:8.1f} B/chunk {share:5.1f} %")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cache", type=Path, help="an index cache directory a run filled")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not (args.cache / DB_FILE).is_file():
        parser.error(f"{args.cache}: no {DB_FILE} there")
    figures = measure(args.cache)
    print(json.dumps(figures, indent=2, sort_keys=True) if args.json else render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
