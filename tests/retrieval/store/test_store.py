"""The persisted store (§store): the serde_json/ryu byte layout, loading, and validation."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.store.fingerprint import dumps_fingerprint, fingerprint_path
from cce_relevance.retrieval.store.store import (
    default_store_path,
    dumps_store,
    format_f64_like_rust,
    json_string,
    load_store,
)
from tests.retrieval.corpora import write_corpus
from tests.retrieval.ranking.test_postings import assert_same_bm25

CORPUS_A = {  # §hybrid-examples
    "auth.py": 'def hash_password(pw):\n    return pw + "salt"\n',
    "payments.py": "import auth\n\ndef process_payment(amount):\n"
    "    return auth.hash_password(str(amount))\n",
}

# --------------------------------------------------------------------------- doubles


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (-0.5, "-0.5"),
        (0.4472135954999579, "0.4472135954999579"),
        (1e15, "1000000000000000.0"),  # k ≥ 0 and kk ≤ 16
        (1e16, "1e16"),  # kk = 17: exponent form, no `+`
        (123456789012345.6, "123456789012345.6"),
        (1234567890123456.8, "1234567890123456.8"),
        (12345678901234568.0, "1.2345678901234568e16"),
        (0.6666666666666666, "0.6666666666666666"),
        (0.00001, "0.00001"),  # kk = -4
        (0.000015, "0.000015"),
        (1e-6, "1e-6"),  # kk = -5: exponent form, no zero padding
        (9.9e-6, "9.9e-6"),
        (1e-7, "1e-7"),
        (1.2345e-7, "1.2345e-7"),
        (1e300, "1e300"),
        (-2.5e-300, "-2.5e-300"),
        (5e-324, "5e-324"),  # smallest subnormal
        (2.2250738585072014e-308, "2.2250738585072014e-308"),
        (1.7976931348623157e308, "1.7976931348623157e308"),
        (100.0, "100.0"),
        (0.1, "0.1"),
        (1 / 3, "0.3333333333333333"),
    ],
)
def test_ryu_layout_table(value: float, text: str) -> None:
    assert format_f64_like_rust(value) == text


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_doubles_have_no_store_form(value: float) -> None:
    with pytest.raises(ValueError):
        format_f64_like_rust(value)


def _oracle(x: float) -> str:
    """The ryu layout from numpy's Dragon4 digits (independent of `repr`), per §store-writing's regimes."""
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    scientific = np.format_float_scientific(abs(x), unique=True, trim="-", exp_digits=1)
    exponent = int(scientific.split("e")[1])
    if -5 < exponent + 1 <= 16:
        return sign + np.format_float_positional(abs(x), unique=True, trim="0")
    return sign + scientific.replace("e+", "e")


_LAYOUT = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+|-?[1-9](\.[0-9]*[1-9])?e-?[1-9][0-9]*")

_subnormals = st.floats(min_value=-2.2250738585072014e-308, max_value=2.2250738585072014e-308)
_tiny = st.floats(min_value=1e-12, max_value=1e-4).flatmap(lambda x: st.sampled_from([x, -x]))
_big_integers = st.integers(min_value=10**16, max_value=10**300).map(float)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        _subnormals,
        _tiny,
        _big_integers,
        st.integers(min_value=-(2**53), max_value=2**53).map(float),
    )
)
@example(2.0**-1074)
@example(-(2.0**63))
def test_every_double_round_trips_in_the_ryu_layout(x: float) -> None:
    text = format_f64_like_rust(x)
    assert float(text) == x and math.copysign(1.0, float(text)) == math.copysign(1.0, x)
    assert _LAYOUT.fullmatch(text), text
    assert text == _oracle(x)


# --------------------------------------------------------------------------- strings


def _serde_escape(text: str) -> str:
    """serde_json's string rule, spelled out: `"`, `\\`, the five short forms, else \\u00xx below 0x20."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    out = []
    for ch in text:
        if ch in short:
            out.append(short[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",))))
@example('\x00\x01\x1f\x7f\x80\u2028\u2029\ufeff é 日本 🙂 "q" \\ \b\f\n\r\t')
def test_strings_escape_like_serde_json(text: str) -> None:
    assert json_string(text) == _serde_escape(text)
    assert json.loads(json_string(text)) == text


# --------------------------------------------------------------------------- whole stores


def test_corpus_a_store_is_2904_bytes_in_the_reference_layout(tmp_path: Path) -> None:
    index = build_index(write_corpus(tmp_path, CORPUS_A))
    text = dumps_store(index)
    assert len(text.encode("utf-8")) == 2904  # §hybrid-examples, §store-writing
    assert text.startswith('{"spec_version":"1.0","embedder":"hash","chunks":[{"chunk_id":"')
    assert '"file_imports":{"payments.py":["auth"]},' in text
    # estimate_tokens of each whole file: max(1, utf-8 bytes // 4).
    auth_tokens, payments_tokens = (len(CORPUS_A[name]) // 4 for name in ("auth.py", "payments.py"))
    assert text.endswith(f'"file_tokens":{{"auth.py":{auth_tokens},"payments.py":{payments_tokens}}}}}')
    first = json.loads(text)["chunks"][0]
    assert list(first) == [
        "chunk_id",
        "file_path",
        "start_line",
        "end_line",
        "chunk_type",
        "kind",
        "language",
        "content",
        "token_count",
        "embedding",
    ]
    assert (first["file_path"], first["start_line"], first["end_line"]) == ("auth.py", 1, 2)
    # `def hash_password(pw): return pw + "salt"`: five distinct tokens, `pw` twice, norm √8.
    nonzero = sorted(format_f64_like_rust(abs(v)) for v in first["embedding"] if v)
    assert nonzero == ["0.35355339059327373"] * 4 + ["0.7071067811865475"]
    assert text.count(',"embedding":[0.0,0.0,') == 2


@pytest.mark.parametrize(
    ("corpus", "size"), [("test/fixture/samples", 28924), ("eval/relevance/docs-corpus", 9915)]
)
def test_upstream_corpora_give_the_reference_store_sizes(upstream: Path, corpus: str, size: int) -> None:
    """§store-writing: the prototype's stores were byte-identical to serde_json's for these."""
    assert len(dumps_store(build_index(upstream / corpus)).encode("utf-8")) == size


def test_keys_are_sorted_and_text_is_raw_utf8(tmp_path: Path) -> None:
    files = {
        "b.py": "import zlib\nimport abc\n",
        "a/z.py": "import os\n",
        "ä.txt": 'naïve "quoted" \\ tab\there \x01\x1f\x7f\n',
        "Z.md": "# upper\n",
    }
    text = dumps_store(build_index(write_corpus(tmp_path, files)))
    data = json.loads(text)
    assert list(data) == ["spec_version", "embedder", "chunks", "file_imports", "file_tokens"]
    assert list(data["file_imports"]) == ["a/z.py", "b.py"]
    assert data["file_imports"]["b.py"] == ["zlib", "abc"]  # module order is extraction order
    assert list(data["file_tokens"]) == ["Z.md", "a/z.py", "b.py", "ä.txt"]  # code-point (UTF-8 byte) order
    assert '"content":"naïve \\"quoted\\" \\\\ tab\\there \\u0001\\u001f\x7f\\n"' in text
    outside_strings = re.sub(r'"(?:[^"\\]|\\.)*"', "", text)
    assert not re.search(r"\s", outside_strings)  # compact: no whitespace between tokens


def test_empty_corpus_store(tmp_path: Path) -> None:
    text = dumps_store(build_index(tmp_path))
    assert text == '{"spec_version":"1.0","embedder":"hash","chunks":[],"file_imports":{},"file_tokens":{}}'
    assert load_store_text(tmp_path, text).chunks == []


def load_store_text(tmp_path: Path, text: str, name: str = "store.json"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return load_store(str(path))


def test_written_store_loads_back_exactly(upstream: Path, tmp_path: Path) -> None:
    built = build_index(upstream / "test/fixture/samples")
    text = dumps_store(built)
    loaded = load_store_text(tmp_path, text)
    assert loaded.embedder == "hash"
    assert (
        loaded.file_imports == built.file_imports
        and loaded.file_token_estimates == built.file_token_estimates
    )
    assert [
        (
            c.chunk_id,
            c.file_path,
            c.start_line,
            c.end_line,
            c.chunk_type,
            c.kind,
            c.language,
            c.content,
            c.token_count,
        )
        for c in loaded.chunks
    ] == [
        (
            c.chunk_id,
            c.file_path,
            c.start_line,
            c.end_line,
            c.chunk_type,
            c.kind,
            c.language,
            c.content,
            c.token_count,
        )
        for c in built.chunks
    ]
    for a, b in zip(loaded.chunks, built.chunks, strict=True):
        assert a.embedding.tobytes() == b.embedding.tobytes()  # bit for bit
    assert dumps_store(loaded) == text


def test_optional_fields_take_their_defaults(tmp_path: Path) -> None:
    text = (
        '{"spec_version":"1.0","chunks":[{"chunk_id":"x","file_path":"a.py","start_line":1,"end_line":2,'
        '"chunk_type":"module","language":"plaintext","content":"hi","token_count":1,"extra":true}],'
        '"file_imports":{}}'
    )
    index = load_store_text(tmp_path, text)
    assert index.embedder == "hash" and index.file_token_estimates == {}
    [chunk] = index.chunks
    assert chunk.kind == "" and chunk.embedding.size == 0


def test_a_third_embedder_name_is_kept(tmp_path: Path) -> None:
    text = '{"spec_version":"1.0","embedder":"e5","chunks":[],"file_imports":{},"file_tokens":{}}'
    assert load_store_text(tmp_path, text).embedder == "e5"


_GOOD_CHUNK = (
    '{"chunk_id":"x","file_path":"a.py","start_line":1,"end_line":2,"chunk_type":"module",'
    '"kind":"module","language":"plaintext","content":"hi","token_count":1,"embedding":[0.5]}'
)


def _store(chunk: str = _GOOD_CHUNK, rest: str = '"file_imports":{},"file_tokens":{}') -> str:
    return '{"spec_version":"1.0","embedder":"hash","chunks":[' + chunk + "]," + rest + "}"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", r"Expecting value: line 1 column 1 \(char 0\)"),
        ("[]", "the store: expected an object, got a JSON array"),
        ('{"chunks":[],"file_imports":{}}', 'the store is missing "spec_version"'),
        ('{"spec_version":"1.0","file_imports":{}}', 'the store is missing "chunks"'),
        ('{"spec_version":"1.0","chunks":[]}', 'the store is missing "file_imports"'),
        ('{"spec_version":1,"chunks":[],"file_imports":{}}', '"spec_version" must be a string'),
        (
            '{"spec_version":"1.0","embedder":null,"chunks":[],"file_imports":{}}',
            '"embedder" must be a string',
        ),
        ('{"spec_version":"1.0","chunks":{},"file_imports":{}}', '"chunks" must be an array'),
        (_store("3"), "chunk 0: expected an object, got a JSON number"),
        (_store(_GOOD_CHUNK.replace('"content":"hi",', "")), 'chunk 0 is missing "content"'),
        (
            _store(_GOOD_CHUNK.replace('"start_line":1', '"start_line":"1"')),
            'chunk 0 "start_line" must be a non-negative integer',
        ),
        (
            _store(_GOOD_CHUNK.replace('"end_line":2', '"end_line":2.0')),
            'chunk 0 "end_line" must be a non-negative integer',
        ),
        (
            _store(_GOOD_CHUNK.replace('"token_count":1', '"token_count":-1')),
            'chunk 0 "token_count" must be a non-negative integer',
        ),
        (
            _store(_GOOD_CHUNK.replace('"token_count":1', '"token_count":true')),
            'chunk 0 "token_count" must be a non-negative integer',
        ),
        (
            _store(_GOOD_CHUNK.replace('"start_line":1', '"start_line":18446744073709551616')),
            'chunk 0 "start_line" must be a non-negative integer',
        ),
        (
            _store(_GOOD_CHUNK.replace('"chunk_id":"x"', '"chunk_id":7')),
            'chunk 0 "chunk_id" must be a string',
        ),
        (_store(_GOOD_CHUNK.replace('"kind":"module"', '"kind":null')), 'chunk 0 "kind" must be a string'),
        (
            _store(_GOOD_CHUNK.replace('"content":"hi"', '"content":"\\ud800"')),
            'chunk 0 "content" holds an unpaired surrogate escape',
        ),
        (
            _store(_GOOD_CHUNK.replace("[0.5]", '[0.5,"x"]')),
            'chunk 0 "embedding" must be an array of numbers',
        ),
        (
            _store(_GOOD_CHUNK.replace("[0.5]", "[0.5,null]")),
            'chunk 0 "embedding" must be an array of numbers',
        ),
        (_store(_GOOD_CHUNK.replace("[0.5]", "[true]")), 'chunk 0 "embedding" must be an array of numbers'),
        (_store(_GOOD_CHUNK.replace("[0.5]", "0.5")), 'chunk 0 "embedding" must be an array of numbers'),
        (_store(_GOOD_CHUNK.replace("[0.5]", "[NaN]")), "NaN is not a JSON number"),
        (_store(_GOOD_CHUNK.replace("[0.5]", "[1e999]")), 'chunk 0 "embedding" holds a number out of range'),
        (
            _store(_GOOD_CHUNK.replace("[0.5]", "[1" + "0" * 400 + "]")),
            'chunk 0 "embedding" holds a number out of range',
        ),
        (
            _store(rest='"file_imports":[],"file_tokens":{}'),
            '"file_imports": expected an object, got a JSON array',
        ),
        (
            _store(rest='"file_imports":{"a.py":"os"},"file_tokens":{}'),
            '"file_imports" of a.py must be an array of strings',
        ),
        (
            _store(rest='"file_imports":{"a.py":[1]},"file_tokens":{}'),
            '"file_imports" of a.py must be a string',
        ),
        (
            _store(rest='"file_imports":{},"file_tokens":{"a.py":1.5}'),
            '"file_tokens" of a.py must be a non-negative integer',
        ),
        ("[" * 100000, "nested too deeply"),
    ],
)
def test_invalid_stores_are_e15(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CceError) as caught:
        load_store(str(path))
    assert re.fullmatch(re.escape(f"could not load store {path}: ") + reason, caught.value.message)


def test_unreadable_stores_are_e15(tmp_path: Path) -> None:
    (tmp_path / "latin1.json").write_bytes(b'{"spec_version":"\xe9"}')
    for name, reason in [
        ("missing.json", "No such file or directory (os error 2)"),
        (".", "Is a directory (os error 21)"),
        ("latin1.json", "'utf-8' codec can't decode byte 0xe9 in position 17: invalid continuation byte"),
    ]:
        with pytest.raises(CceError) as caught:
            load_store(str(tmp_path / name))
        assert caught.value.message == f"could not load store {tmp_path / name}: {reason}"


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    root = write_corpus(tmp_path_factory.mktemp("corpus"), CORPUS_A)
    return dumps_store(build_index(root)).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(cut=st.integers(min_value=0, max_value=2903))
def test_every_truncation_is_e15(
    tmp_path_factory: pytest.TempPathFactory, sample_store: bytes, cut: int
) -> None:
    path = tmp_path_factory.mktemp("cut") / "index.json"
    path.write_bytes(sample_store[:cut])
    with pytest.raises(CceError, match="^could not load store "):
        load_store(str(path))


@settings(max_examples=300, deadline=None)
@given(position=st.integers(min_value=0, max_value=2903), byte=st.integers(min_value=0, max_value=255))
def test_a_garbled_byte_loads_or_is_e15(
    tmp_path_factory: pytest.TempPathFactory, sample_store: bytes, position: int, byte: int
) -> None:
    garbled = bytearray(sample_store)
    garbled[position] = byte
    path = tmp_path_factory.mktemp("garbled") / "index.json"
    path.write_bytes(bytes(garbled))
    try:
        index = load_store(str(path))
    except CceError as exc:
        assert exc.message.startswith(f"could not load store {path}: ")
    else:
        assert len(index.chunks) == 2


# --------------------------------------------------------------------------- paths and fingerprint


def test_default_store_path() -> None:
    assert default_store_path("proj") == "proj/.cce/index.json"


@pytest.mark.parametrize(
    ("store", "fingerprint"),
    [
        ("proj/.cce/index.json", "proj/.cce/fingerprint.json"),
        ("index.json", "fingerprint.json"),
        ("stores/a.json", "stores/a.json.fingerprint.json"),
        ("a.json", "a.json.fingerprint.json"),
        ("/tmp/x/index.json.bak", "/tmp/x/index.json.bak.fingerprint.json"),
    ],
)
def test_fingerprint_sits_beside_the_store(store: str, fingerprint: str) -> None:
    assert fingerprint_path(store) == fingerprint


def test_fingerprint_records_the_build_and_binds_the_bytes(tmp_path: Path) -> None:
    index = build_index(write_corpus(tmp_path, CORPUS_A))
    data = dumps_store(index).encode("utf-8")
    text = dumps_fingerprint(index, data, redaction=True)
    assert text == dumps_fingerprint(index, data, redaction=True) and text.endswith("}\n")
    doc = json.loads(text)
    assert list(doc) == sorted(doc)
    assert doc == {
        "schema": "cce-relevance.fingerprint/v1",
        "engine": doc["engine"],
        "spec_version": "1.0",
        "embedder": "hash",
        "model": None,
        "embed_dim": 256,
        "languages": ["c", "javascript", "python", "ruby", "rust", "typescript"],
        "redaction": True,
        "tokenizer": "cce.tokens/v1",
        "files": 2,
        "chunks": 2,
        "store_bytes": 2904,
        "store_sha256": hashlib.sha256(data).hexdigest(),
    }
    assert doc["engine"].startswith("cce-relevance ")
    other = json.loads(dumps_fingerprint(index, data + b" ", redaction=False, model="m"))
    assert (
        other["store_sha256"] != doc["store_sha256"] and other["redaction"] is False and other["model"] == "m"
    )


def test_a_loaded_store_has_no_term_counts_and_the_same_bm25(tmp_path: Path) -> None:
    """A store holds no BM25 term counts: the loaded index tokenizes its contents, and gets the
    very postings the built index took from indexing."""
    built = build_index(Path(__file__).resolve().parents[3] / "test/fixture/samples")
    loaded = load_store_text(tmp_path, dumps_store(built))
    assert built.postings is not None and loaded.postings is None
    assert_same_bm25(loaded.bm25(), built.bm25())
