"""The persisted store, `index.json`: writing it byte for byte as the reference does, and loading it.

Only chunks (with their embeddings), the import lists and the file token counts are persisted;
BM25 statistics and the import graph are recomputed on load, exactly as the reference does
(§store-format–§store-loading), so a store and the directory it was built from rank identically.

The reference serialises with `serde_json`, so byte identity needs two things Python's `json`
does not do by itself: doubles in the Rust `ryu` layout (`1e-7`, `1e16`, `1.0`, where `repr`
gives `1e-07`, `1e+16`, `1.0`) and a fixed key order (§store-writing).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache, partial
from typing import Any

import numpy as np

from cce_relevance.errors import CceError
from cce_relevance.reference import SPEC_VERSION
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.embedding.embed import HASH_EMBEDDER
from cce_relevance.retrieval.index.model import Index, index_from_parts
from cce_relevance.untrusted_json import expect_object

STORE_DIR = ".cce"
STORE_FILE = "index.json"

# Beyond this many integral digits ryu switches to exponent form (`1e16`, not `10000000000000000.0`).
_MAX_PLAIN_DIGITS = 16
_USIZE_MAX = 2**64 - 1  # counts and line numbers are `usize` in the reference
# A chunk's line numbers and token count are summed and offset in 64-bit arrays; no file has more
# than 2^32 lines or tokens, so larger values (up to usize, which the JSON allows) are refused.
_COUNT_LIMIT = 2**32 - 1


def default_store_path(root: str) -> str:
    """Where `index` writes by default: `<root>/.cce/index.json` (§store-files)."""
    return os.path.join(root, STORE_DIR, STORE_FILE)


# --------------------------------------------------------------------------- writing


def _shortest_digits(x: float) -> tuple[str, int]:
    """(D, k) with |x| = D·10^k, D the shortest round-trip digits without leading/trailing zeros.

    Python's `repr` and ryu both print the shortest digit string that reads back as the same
    double (closest to the exact value on ties), so only the layout has to be redone.
    """
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    k = (int(exponent) if exponent else 0) - len(fraction)
    stripped = digits.rstrip("0")
    return stripped, k + len(digits) - len(stripped)


def format_f64_like_rust(x: float) -> str:
    """A finite double as `serde_json` writes it (ryu's layout, §store-writing)."""
    if not math.isfinite(x):
        raise ValueError(f"{x!r} has no JSON form")
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return _format_nonzero(x)


@lru_cache(maxsize=1 << 16)
def _format_nonzero(x: float) -> str:
    """Memoised: hash-embedding components repeat a few values (±n/√s) across a whole corpus.

    Zero is kept out of the cache because `0.0 == -0.0` would make them share an entry.
    """
    digits, k = _shortest_digits(x)
    n = len(digits)
    kk = n + k
    if k >= 0 and kk <= _MAX_PLAIN_DIGITS:
        text = digits + "0" * k + ".0"
    elif 0 < kk <= _MAX_PLAIN_DIGITS:
        text = digits[:kk] + "." + digits[kk:]
    elif -5 < kk <= 0:
        text = "0." + "0" * -kk + digits
    elif n == 1:
        text = f"{digits}e{kk - 1}"
    else:
        text = f"{digits[0]}.{digits[1:]}e{kk - 1}"
    return "-" + text if x < 0 else text


def json_string(text: str) -> str:
    """A JSON string as `serde_json` writes it: only `"`, `\\` and U+0000–U+001F escaped.

    Python's encoder with `ensure_ascii=False` escapes exactly that set, with the same short
    forms (`\\b \\f \\n \\r \\t`) and lowercase `\\u00xx` for the rest.
    """
    return json.dumps(text, ensure_ascii=False)


def _floats(values: Iterable[float]) -> str:
    return "[" + ",".join(format_f64_like_rust(float(v)) for v in values) + "]"


def _chunk_json(c: Chunk) -> str:
    embedding = c.embedding if c.embedding is not None else ()
    return (
        f'{{"chunk_id":{json_string(c.chunk_id)},"file_path":{json_string(c.file_path)},'
        f'"start_line":{c.start_line},"end_line":{c.end_line},"chunk_type":{json_string(c.chunk_type)},'
        f'"kind":{json_string(c.kind)},"language":{json_string(c.language)},'
        f'"content":{json_string(c.content)},"token_count":{c.token_count},'
        f'"embedding":{_floats(embedding)}}}'
    )


def _sorted_object(mapping: Mapping[str, Any], value_json: Callable[[Any], str]) -> str:
    """Keys in code-point order, which is the UTF-8 byte order a Rust `BTreeMap` keeps."""
    return "{" + ",".join(f"{json_string(k)}:{value_json(mapping[k])}" for k in sorted(mapping)) + "}"


def dumps_store(index: Index) -> str:
    """The exact text of `index.json` for `index` (compact, keys in the reference's order)."""
    index.attach_embeddings()
    chunks = ",".join(_chunk_json(c) for c in index.chunks)
    imports = _sorted_object(
        index.file_imports, lambda mods: "[" + ",".join(json_string(m) for m in mods) + "]"
    )
    tokens = _sorted_object(index.file_token_estimates, str)
    return (
        f'{{"spec_version":{json_string(SPEC_VERSION)},"embedder":{json_string(index.embedder)},'
        f'"chunks":[{chunks}],"file_imports":{imports},"file_tokens":{tokens}}}'
    )


# --------------------------------------------------------------------------- loading


class _Invalid(ValueError):
    """A store that parses as JSON but does not have the index layout."""


def _reject_constant(name: str) -> float:
    raise _Invalid(f"{name} is not a JSON number")


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"{what} must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid(f"{what} holds an unpaired surrogate escape") from None
    return value


def _count(value: Any, what: str, limit: int = _USIZE_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _USIZE_MAX:
        raise _Invalid(f"{what} must be a non-negative integer")
    if value > limit:
        raise _Invalid(f"{what} is {value}, more than any file can mean (at most {limit})")
    return value


def _vector(value: Any, what: str) -> np.ndarray:
    if not isinstance(value, list) or any(
        isinstance(x, bool) or not isinstance(x, (int, float)) for x in value
    ):
        raise _Invalid(f"{what} must be an array of numbers")
    try:
        vector = np.asarray(value, dtype=np.float64)
    except OverflowError:
        raise _Invalid(f"{what} holds a number out of range") from None
    if not np.isfinite(vector).all():
        raise _Invalid(f"{what} holds a number out of range")
    return vector


_object = partial(expect_object, error=_Invalid)


_STRING_KEYS = ("chunk_id", "file_path", "chunk_type")


def _chunk(obj: Any, position: int) -> Chunk:
    where = f"chunk {position}"
    _object(obj, where)
    for key in (*_STRING_KEYS, "start_line", "end_line", "language", "content", "token_count"):
        if key not in obj:
            raise _Invalid(f'{where} is missing "{key}"')

    def text(key: str) -> str:
        return _string(obj[key], f'{where} "{key}"')

    def count(key: str) -> int:
        return _count(obj[key], f'{where} "{key}"', _COUNT_LIMIT)

    kind = _string(obj.get("kind", ""), f'{where} "kind"')
    embedding = _vector(obj.get("embedding", []), f'{where} "embedding"')
    return Chunk(
        text("chunk_id"),
        text("file_path"),
        count("start_line"),
        count("end_line"),
        text("chunk_type"),
        kind,
        text("language"),
        text("content"),
        count("token_count"),
        embedding,
    )


def _index(data: Any) -> Index:
    _object(data, "the store")
    for key in ("spec_version", "chunks", "file_imports"):
        if key not in data:
            raise _Invalid(f'the store is missing "{key}"')
    _string(data["spec_version"], '"spec_version"')
    embedder = _string(data.get("embedder", HASH_EMBEDDER), '"embedder"')
    if not isinstance(data["chunks"], list):
        raise _Invalid('"chunks" must be an array')
    chunks = [_chunk(obj, i) for i, obj in enumerate(data["chunks"])]
    imports: dict[str, list[str]] = {}
    for path, modules in _object(data["file_imports"], '"file_imports"').items():
        what = f'"file_imports" of {path}'
        if not isinstance(modules, list):
            raise _Invalid(f"{what} must be an array of strings")
        imports[_string(path, "a file_imports key")] = [_string(m, what) for m in modules]
    tokens = {
        _string(path, "a file_tokens key"): _count(n, f'"file_tokens" of {path}')
        for path, n in _object(data.get("file_tokens", {}), '"file_tokens"').items()
    }
    return index_from_parts(chunks, imports, tokens, embedder)


def load_store(path: str) -> Index:
    """Load an `index.json` written by the reference or by us; every failure is E15."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh, parse_constant=_reject_constant)
        return _index(data)
    except (OSError, ValueError, RecursionError) as exc:
        raise CceError(f"could not load store {path}: {_describe(exc)}") from None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{os.strerror(exc.errno)} (os error {exc.errno})"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)
