"""The shared tokenizer and the `cce.tokens/v1` estimator (§token-estimate, §tokenizer).

One tokenizer feeds the hash embedder, BM25, the keyword test and the intent test, so a
query and a chunk always agree on what a "word" is: a maximal run of ASCII letters, digits
and underscores, ASCII-lowercased. Every non-ASCII character separates tokens (`cafébar` gives
`caf`, `bar`), exactly as the reference scans UTF-8 bytes.
"""

from __future__ import annotations

import re

ESTIMATOR_ID = "cce.tokens/v1"
_TOKEN_RE = re.compile(r"[A-Za-z0-9_]+", re.ASCII)


def tokenize(text: str) -> list[str]:
    """Tokens in order, with repeats; no stemming, stop words or camelCase splitting."""
    if text.isascii():  # lowercasing ASCII text first changes no token boundary, and is faster
        return _TOKEN_RE.findall(text.lower())
    return [t.lower() for t in _TOKEN_RE.findall(text)]


def unique_tokens(text: str) -> list[str]:
    """Distinct tokens in first-occurrence order: the query-term list of BM25 and RRF."""
    return list(dict.fromkeys(tokenize(text)))


def estimate_tokens(text: str) -> int:
    """`max(1, floor(utf8_len / 4))`: the one token weight used for chunks, files and lines
    (ASCII text is as many UTF-8 bytes as characters, and is not encoded to count them)."""
    n = (len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))) // 4
    return n if n > 1 else 1


def ascii_lower(text: str) -> str:
    """Lowercase A–Z only; `str.lower()` also folds non-ASCII and can change lengths."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
