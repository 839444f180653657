"""The Ollama client (§ollama, §store-mode–§embedder-name) against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import numpy as np
import pytest

from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.embedding.ollama import (
    DEFAULT_MODEL,
    DEFAULT_URL,
    OllamaClient,
    OllamaError,
    parse_embeddings,
)
from tests.retrieval.fake_ollama import DROP, FakeOllama, Reply, closed_port_url, hash_vectors


@pytest.fixture()
def ollama():
    with FakeOllama() as fake:
        yield fake


def client(fake: FakeOllama, model: str = "nomic-embed-text") -> OllamaClient:
    return OllamaClient(fake.url, model, timeout=(5.0, 30.0))


def test_request_shape_and_vectors(ollama: FakeOllama) -> None:
    vectors = client(ollama, "all-minilm").embed(["def f(): pass", "ünïcode text"])
    assert ollama.paths == ["/api/embed"]
    assert ollama.requests == [{"model": "all-minilm", "input": ["def f(): pass", "ünïcode text"]}]
    assert len(vectors) == 2
    assert np.array_equal(vectors[0], hash_embed("def f(): pass"))
    assert vectors[1].dtype == np.float64


def test_each_text_is_cut_to_its_first_2000_characters_not_bytes(ollama: FakeOllama) -> None:
    long_text = "é" * 1999 + "日本語" + "x" * 10
    client(ollama).embed([long_text, "short"])
    sent = ollama.inputs[0]
    assert sent[0] == "é" * 1999 + "日" and len(sent[0]) == 2000
    assert sent[1] == "short"


def test_index_time_embedding_goes_in_batches_of_64(ollama: FakeOllama) -> None:
    texts = [f"chunk {i}" for i in range(130)]
    vectors = client(ollama).embed_batches(texts)
    assert [len(batch) for batch in ollama.inputs] == [64, 64, 2]
    assert [t for batch in ollama.inputs for t in batch] == texts
    assert all(np.array_equal(v, hash_embed(t)) for v, t in zip(vectors, texts, strict=True))


def test_documents_embedder_is_recorded_as_ollama(ollama: FakeOllama) -> None:
    documents = client(ollama).documents()
    assert documents.name == "ollama"
    assert len(documents.embed_all(["a", "b"])) == 2


def test_health_check_embeds_ping(ollama: FakeOllama) -> None:
    client(ollama).check_health()
    assert ollama.requests == [{"model": "nomic-embed-text", "input": ["ping"]}]


def test_base_url_may_end_with_a_slash(ollama: FakeOllama) -> None:
    OllamaClient(ollama.url + "/", "m").check_health()
    assert ollama.paths == ["/api/embed"]


def test_environment_selects_server_and_model() -> None:
    assert (OllamaClient.from_env({}).base_url, OllamaClient.from_env({}).model) == (
        DEFAULT_URL,
        DEFAULT_MODEL,
    )
    assert DEFAULT_URL == "http://localhost:11434" and DEFAULT_MODEL == "nomic-embed-text"
    c = OllamaClient.from_env(
        {"CCE_OLLAMA_URL": "http://127.0.0.1:9", "CCE_OLLAMA_MODEL": "mxbai-embed-large"}
    )
    assert (c.endpoint, c.model) == ("http://127.0.0.1:9/api/embed", "mxbai-embed-large")
    empty = OllamaClient.from_env({"CCE_OLLAMA_URL": "", "CCE_OLLAMA_MODEL": ""})
    assert (empty.base_url, empty.model) == (DEFAULT_URL, DEFAULT_MODEL)


def test_empty_query_needs_no_request(ollama: FakeOllama) -> None:
    assert client(ollama).embed_query("").size == 0
    assert ollama.requests == []
    assert np.array_equal(client(ollama).embed_query("where"), hash_embed("where"))


# --------------------------------------------------------------------------- failures


def test_unreachable_server() -> None:
    with pytest.raises(
        OllamaError,
        match=r"^could not reach Ollama at http://127\.0\.0\.1:\d+/api/embed: "
        r"Connection refused$",
    ):
        OllamaClient(closed_port_url()).check_health()


def test_connection_dropped_without_an_answer(ollama: FakeOllama) -> None:
    ollama.reply = lambda _request: DROP
    with pytest.raises(OllamaError, match="^could not reach Ollama at "):
        client(ollama).check_health()


def test_timeout(ollama: FakeOllama) -> None:
    ollama.hold = True
    with pytest.raises(OllamaError, match=r"/api/embed: timed out$"):
        OllamaClient(ollama.url, "m", timeout=(5.0, 0.2)).check_health()


def test_http_error_shows_ollamas_message_quoted(ollama: FakeOllama) -> None:
    ollama.reply = lambda _r: Reply.json({"error": 'model "nomic-embed-text" not found\x1b[31m'}, 404)
    with pytest.raises(OllamaError) as caught:
        client(ollama).check_health()
    assert str(caught.value) == (
        f"Ollama at {ollama.url}/api/embed answered HTTP 404: "
        '"model \\"nomic-embed-text\\" not found\\u001b[31m"'
    )


@pytest.mark.parametrize(
    "body",
    [b"<html>bad gateway</html>", b"[" * 100_000 + b"]" * 100_000],
    ids=["html", "nested 100,000 deep"],
)
def test_http_error_without_a_json_body(ollama: FakeOllama, body: bytes) -> None:
    ollama.reply = lambda _r: Reply(502, body)
    with pytest.raises(OllamaError, match=r"answered HTTP 502$"):
        client(ollama).check_health()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", r"^Ollama returned invalid JSON: Expecting value: line 1 column 1 \(char 0\)$"),
        (b'{"embeddings": [[0.1, 0.2]', "^Ollama returned invalid JSON: "),
        (b'{"embeddings": [[NaN, 0.5]]}', "^Ollama returned invalid JSON: NaN is not a JSON number$"),
        (b'{"embeddings": [[1e400, 0.5]]}', "^Ollama returned a number out of range$"),
        (b'{"embedding": [0.1, 0.2]}', '^Ollama reply has no "embeddings" array$'),
        (b"[[0.1, 0.2]]", '^Ollama reply has no "embeddings" array$'),
        (b'{"embeddings": {"0": [0.1]}}', '^Ollama reply has no "embeddings" array$'),
        (b'{"embeddings": []}', "^Ollama returned 0 embeddings for 1 inputs$"),
        (b'{"embeddings": [[0.1], [0.2]]}', "^Ollama returned 2 embeddings for 1 inputs$"),
        (b'{"embeddings": ["0.1"]}', "^Ollama embedding 0 is not an array$"),
        (b'{"embeddings": [[]]}', "^Ollama returned an empty embedding for input 0$"),
        (b'{"embeddings": [["a", null, true, {}]]}', "^Ollama returned an empty embedding for input 0$"),
    ],
)
def test_malformed_replies_are_errors(ollama: FakeOllama, body: bytes, message: str) -> None:
    ollama.reply = lambda _r: Reply(200, body)
    with pytest.raises(OllamaError, match=message):
        client(ollama).check_health()


def test_non_numeric_entries_are_dropped_and_integers_become_doubles() -> None:
    [vector] = parse_embeddings(b'{"embeddings": [["x", 0.5, null, true, 2, [1], -3e-7]]}', ["text"])
    assert vector.tolist() == [0.5, 2.0, -3e-7]
    assert vector.dtype == np.float64


def test_empty_vector_is_fine_for_an_empty_input() -> None:
    vectors = parse_embeddings(b'{"embeddings": [[], [0.25]]}', ["", "x"])
    assert vectors[0].size == 0 and vectors[1].tolist() == [0.25]


def test_a_failing_batch_aborts_the_whole_embedding(ollama: FakeOllama) -> None:
    ollama.reply = lambda r: Reply(500, b"") if "chunk 70" in r["input"] else hash_vectors(r)
    with pytest.raises(OllamaError, match="answered HTTP 500"):
        client(ollama).embed_batches([f"chunk {i}" for i in range(130)])
    assert len(ollama.requests) == 2  # the third batch is never sent


# --------------------------------------------------------------------------- query time


def test_forgiving_query_embedder_warns_and_returns_the_empty_vector(ollama: FakeOllama) -> None:
    warnings: list[str] = []
    embed = client(ollama).forgiving_query_embedder(warnings.append)
    ollama.reply = lambda _r: Reply(503, b'{"error":"busy"}')
    assert embed("where is auth").size == 0
    assert warnings == [
        f'Ollama at {ollama.url}/api/embed answered HTTP 503: "busy"; vector recall disabled for this query'
    ]


def test_forgiving_query_embedder_asks_once_per_query_text(ollama: FakeOllama) -> None:
    warnings: list[str] = []
    embed = client(ollama).forgiving_query_embedder(warnings.append)
    first = embed("where is auth")
    again = embed("where is auth")
    other = embed("payments")
    assert ollama.inputs == [["where is auth"], ["payments"]]
    assert np.array_equal(first, hash_embed("where is auth")) and again is first
    assert np.array_equal(other, hash_embed("payments"))
    assert warnings == []


def test_a_failed_query_is_asked_again_next_time(ollama: FakeOllama) -> None:
    warnings: list[str] = []
    embed = client(ollama).forgiving_query_embedder(warnings.append)
    replies = iter([Reply(500, b""), None])
    ollama.reply = lambda r: next(replies) or hash_vectors(r)
    assert embed("q").size == 0
    assert np.array_equal(embed("q"), hash_embed("q"))
    assert len(warnings) == 1 and len(ollama.requests) == 2
