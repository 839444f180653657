"""Helpers for the retrieval tests: tiny corpora, index construction and spec-derived oracles.

The oracles here (`ref_*`) are written directly from the reference's behaviour
(docs/reference-behaviour.md), independently of the code
under test, in the plainest possible Python (byte loops, left-to-right sums). Tests compare the
implementation against them; they never copy the implementation's own output.

Indexes are built "by hand" exactly as §build prescribes (files in sorted path order,
`chunk_file` per file, imports kept when non-empty, hash embedding per chunk) but without the
walker and the redactor, which other engineers test: the corpora used here contain nothing the
walker would skip and nothing the redactor would touch.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from pathlib import Path

from cce_relevance.reporting.numbers import format6
from cce_relevance.retrieval.chunking.chunk import chunk_file, set_embedding
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.tokens import estimate_tokens

SAMPLES = Path("test/fixture/samples")
DOCS_CORPUS = Path("eval/relevance/docs-corpus")


# --------------------------------------------------------------------------- corpora / indexes


def read_tree(root: Path) -> dict[str, str]:
    """Every regular file below `root` as {relative posix path: text} (strict UTF-8)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[p.relative_to(root).as_posix()] = p.read_bytes().decode("utf-8")
    return out


def write_corpus(root: Path, files: Mapping[str, str]) -> Path:
    """Write `files` below `root` (creating directories) and return `root`."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    return root


def build(files: Mapping[str, str]) -> Index:
    """An index per §build from in-memory files (no walk, no redaction)."""
    chunks = []
    file_imports: dict[str, list[str]] = {}
    file_tokens: dict[str, int] = {}
    for path in sorted(files):
        text = files[path]
        file_tokens[path] = estimate_tokens(text)
        chunked = chunk_file(path, text)
        if chunked.imports:
            file_imports[path] = list(chunked.imports)
        chunks.extend(chunked.chunks)
    for c in chunks:
        set_embedding(c, hash_embed(c.content))
    return Index(chunks, file_imports, file_tokens)


def build_dir(root: Path) -> Index:
    return build(read_tree(root))


def rows(index: Index, results) -> list[tuple[str, int, int, str]]:
    """(file, start, end, format6(score)) of search results (anything with .index/.score)."""
    out = []
    for r in results:
        c = index.chunks[r.index]
        out.append((c.file_path, c.start_line, c.end_line, format6(r.score)))
    return out


def hit_rows(hits) -> list[tuple[str, int, int, str]]:
    """Same as `rows` for backend `Hit` records."""
    return [(h.file_path, h.start_line, h.end_line, format6(h.score)) for h in hits]


# --------------------------------------------------------------------------- spec oracles


def ref_tokenize(text: str) -> list[str]:
    """§tokenizer over UTF-8 bytes: maximal runs of [A-Za-z0-9_], ASCII-lowercased."""
    out, cur = [], bytearray()
    for b in text.encode("utf-8", "surrogatepass"):
        if 48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122 or b == 95:
            cur.append(b + 32 if 65 <= b <= 90 else b)
        elif cur:
            out.append(cur.decode("ascii"))
            cur = bytearray()
    if cur:
        out.append(cur.decode("ascii"))
    return out


def ref_fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) % (1 << 64)
    return h


def ref_bucket(token: str) -> tuple[int, float]:
    h = ref_fnv1a64(token.encode("ascii"))
    return h % 256, (-1.0 if (h >> 63) & 1 else 1.0)


def ref_embed(text: str) -> list[float]:
    """§hash-embedder literally: accumulate, sequential sum of squares over all 256, divide by the norm."""
    v = [0.0] * 256
    for t in ref_tokenize(text):
        b, s = ref_bucket(t)
        v[b] += s
    s = 0.0
    for i in range(256):
        s += v[i] * v[i]
    norm = math.sqrt(s)
    if norm > 0:
        v = [x / norm for x in v]
    return v


def ref_cosine(a, b) -> float:
    """§cosine / §numbers: plain left-to-right dot product over min(len a, len b) components."""
    s = 0.0
    for i in range(min(len(a), len(b))):
        s += float(a[i]) * float(b[i])
    return s


def ref_round_half_away(y: float) -> int:
    from decimal import ROUND_HALF_UP, Decimal

    return int(Decimal(y).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def ref_score_key(x: float) -> int:
    return ref_round_half_away(x * 1000000.0)


def ref_bm25_rank(contents: list[str], ids: list[str], query: str) -> list[tuple[int, float]]:
    """§bm25 literally: unique query terms in first-occurrence order, zero keys dropped, sorted."""
    docs = [ref_tokenize(c) for c in contents]
    n = len(docs)
    avgdl = (sum(len(d) for d in docs) / n) if n else 0.0
    df: dict[str, int] = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    terms = list(dict.fromkeys(ref_tokenize(query)))
    scored = []
    for i, d in enumerate(docs):
        s = 0.0
        for t in terms:
            f = float(d.count(t))
            if df.get(t, 0) == 0 or f == 0:
                continue
            idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
            denom = f + 1.2 * ((1.0 - 0.75) + ((0.75 * len(d)) / avgdl))
            s += (idf * (f * (1.2 + 1.0))) / denom
        if ref_score_key(s) > 0:
            scored.append((i, s))
    scored.sort(key=lambda p: (-ref_score_key(p[1]), ids[p[0]]))
    return scored


def ref_chunk_id(path: str, start: int, end: int, content: bytes) -> str:
    """§chunk-id: SHA-256 over `path:start:end:` and the first 100 content bytes, 16 hex chars."""
    data = f"{path}:{start}:{end}:".encode() + content[:100]
    return hashlib.sha256(data).hexdigest()[:16]


def buckets_distinct(tokens) -> bool:
    """True when no two of the distinct `tokens` share an embedding bucket (no hash collision)."""
    bs = [ref_bucket(t)[0] for t in set(tokens)]
    return len(bs) == len(set(bs))


def opposite_sign_pair(prefix: str = "w") -> tuple[str, str]:
    """Two tokens hashing to the same bucket with opposite signs, neither a substring of the other."""
    seen: dict[int, list[tuple[str, float]]] = {}
    for i in range(10000):
        t = f"{prefix}{i}"
        b, s = ref_bucket(t)
        for t2, s2 in seen.get(b, []):
            if s2 != s and t2 not in t and t not in t2:
                return t2, t
        seen.setdefault(b, []).append((t, s))
    raise AssertionError("no colliding pair found")
