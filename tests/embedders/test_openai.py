"""The openai embedder against a loopback server speaking OpenAI's embeddings request and answer."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from cce_relevance.errors import CceError
from cce_relevance.retrieval.embedders.embedder import unit_rows
from cce_relevance.retrieval.embedders.openai import OpenAIEmbedder, retry_after
from cce_relevance.retrieval.embedders.spec import EmbedderSpec
from cce_relevance.retrieval.embedding.embed import hash_embed

from .fake_openai import DROP, FakeOpenAI, Reply, embeddings

TEXTS = ["def parse_config(path)", "class RateLimiter", "render the cart", "count lines", "debounce"]


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def spec(server: FakeOpenAI, **settings) -> EmbedderSpec:
    return EmbedderSpec(
        "e5", "openai", settings.pop("model", "e5-small"), base_url=server.base_url, **settings
    )


class Clock:
    """A clock the embedder's waits advance, so retries and deadlines are tested without sleeping."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def embedder(server: FakeOpenAI, environ=None, clock: Clock | None = None, **settings) -> OpenAIEmbedder:
    clock = clock or Clock()
    return OpenAIEmbedder(spec(server, **settings), environ or {}, sleep=clock.sleep, clock=clock)


def test_vectors_come_back_unit_length_in_input_order_with_the_requests_openai_expects(server):
    e = embedder(server, environ={"E5_KEY": "sk-secret"}, api_key_env="E5_KEY", dimensions=64)
    vectors = e.embed(TEXTS)
    expected = unit_rows(np.stack([hash_embed(t)[:64] for t in TEXTS]))
    assert [v.tobytes() for v in vectors] == [row.tobytes() for row in expected]
    assert all(v.dtype == np.float32 for v in vectors)
    request = server.requests[0]
    assert request == {"model": "e5-small", "input": TEXTS, "encoding_format": "float", "dimensions": 64}
    assert server.headers[0]["authorization"] == "Bearer sk-secret"
    assert server.headers[0]["content-type"] == "application/json"
    assert (e.usage.calls, e.usage.texts, e.usage.tokens) == (1, 5, 10)


def test_texts_go_in_batches_and_no_key_is_sent_when_none_is_named(server):
    e = embedder(server, batch_size=2)
    e.embed(TEXTS)
    assert [r["input"] for r in server.requests] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:5]]
    assert all("authorization" not in h for h in server.headers)
    assert "dimensions" not in server.requests[0]
    assert e.usage.calls == 3 and e.usage.texts == 5


def test_an_answer_out_of_order_is_put_back_in_input_order(server):
    def shuffled(request):
        body = embeddings(request)
        body["data"].reverse()
        return Reply.json(body)

    server.answer = shuffled
    vectors = embedder(server).embed(TEXTS)
    assert [v.tobytes() for v in vectors] == [
        r.tobytes() for r in unit_rows(np.stack([hash_embed(t) for t in TEXTS]))
    ]


def test_empty_texts_are_not_sent_and_get_zero_vectors(server):
    vectors = embedder(server).embed(["", "count lines", ""])
    assert server.requests[0]["input"] == ["count lines"]
    assert [v.shape for v in vectors] == [(256,), (256,), (256,)]
    assert not vectors[0].any() and vectors[1].any()


def test_a_429_is_retried_after_the_wait_the_server_asks_for(server):
    server.script = [
        Reply.json({"error": {"message": "Rate limit reached"}}, 429, {"Retry-After": "3"}),
        Reply.json({"error": {"message": "slow down"}}, 429, {"retry-after-ms": "250"}),
        Reply.json({"error": {"message": "overloaded"}}, 503),
    ]
    clock = Clock()
    e = embedder(server, clock=clock)
    assert len(e.embed(TEXTS)) == 5
    assert clock.waits == [3.0, 0.25, 2.0]  # the third wait is the backoff's (0.5, 1, 2, ...)
    assert len(server.requests) == 4 and e.usage.calls == 4


def test_retries_stop_after_max_retries_with_the_servers_words(server):
    server.script = [Reply.json({"error": {"message": "Rate limit reached"}}, 429)] * 3
    with pytest.raises(CceError) as caught:
        embedder(server, max_retries=2).embed(TEXTS)
    assert caught.value.message == (
        f'embedder "e5": texts 1-5: {server.base_url}/embeddings answered HTTP 429: "Rate limit reached"; '
        "gave up after 3 attempts"
    )


def test_the_whole_run_has_one_deadline(server):
    server.script = [Reply.json({}, 429, {"Retry-After": "40"})] * 2
    clock = Clock()
    e = embedder(server, clock=clock, deadline=60.0)
    with pytest.raises(CceError) as caught:
        e.embed(TEXTS)
    assert "waiting 40 s more would pass the run's embedding deadline of 60 s" in caught.value.message
    assert clock.waits == [40.0]


def test_a_lost_connection_is_retried_once_the_endpoint_has_answered(server):
    e = embedder(server)
    e.embed(TEXTS[:1])
    server.script = [DROP]
    assert len(e.embed(TEXTS)) == 5
    assert len(server.requests) == 3


def test_an_endpoint_that_is_not_there_fails_at_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    clock = Clock()
    e = OpenAIEmbedder(
        EmbedderSpec("e5", "openai", "m", base_url=f"http://127.0.0.1:{port}/v1"), {}, clock.sleep, clock
    )
    with pytest.raises(CceError) as caught:
        e.embed(TEXTS)
    assert caught.value.message == (
        f'embedder "e5": texts 1-5: could not reach http://127.0.0.1:{port}/v1/embeddings: Connection refused'
    )
    assert clock.waits == []


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(200, b"<html>"), "the answer is not JSON"),
        (Reply.json({"object": "list"}), 'the answer has no "data" array'),
        (
            Reply.json({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}),
            "1 embeddings for 2 inputs (none for input 2 of the batch)",
        ),
        (
            Reply.json({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]}),
            "the embedding of input 2 of the batch has 1 numbers; expected 2 (as the others)",
        ),
        (
            Reply.json({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}),
            "two embeddings for input 0",
        ),
        (
            Reply.json({"data": [{"index": 0, "embedding": "AAAA"}, {"index": 1, "embedding": [1.0]}]}),
            'data[0] has no "embedding" array of numbers',
        ),
        (
            Reply.json(
                {"data": [{"index": 0, "embedding": [1.0, "2"]}, {"index": 1, "embedding": [1.0, 2.0]}]}
            ),
            'the embedding of input 1 of the batch holds "2", not a finite number',
        ),
        (
            Reply.json({"data": [{"index": 5, "embedding": [1.0]}]}),
            "data[0] has no index from 0 to 1",
        ),
        (Reply.json({"error": {"message": "model not found"}}, 404), 'answered HTTP 404: "model not found"'),
    ],
)
def test_a_wrong_answer_is_a_clear_error(server, reply, message):
    server.script = [reply]
    with pytest.raises(CceError) as caught:
        embedder(server).embed(["count lines", "render the cart"])
    assert caught.value.message.startswith('embedder "e5": texts 1-2: ')
    assert message in caught.value.message


def test_vectors_not_of_the_configured_dimensions_are_refused(server):
    server.answer = lambda request: Reply.json(embeddings({**request, "dimensions": 32}))
    with pytest.raises(CceError) as caught:
        embedder(server, dimensions=64).embed(["count lines"])
    assert caught.value.message.endswith(
        "the embedding of input 1 of the batch has 32 numbers; expected 64 (the configured dimensions)"
    )


def test_a_later_batch_of_another_width_is_refused(server):
    e = embedder(server, batch_size=1)
    widths = iter([256, 128])
    server.answer = lambda request: Reply.json(embeddings({**request, "dimensions": next(widths)}))
    with pytest.raises(CceError) as caught:
        e.embed(["count lines", "render the cart"])
    assert (
        "texts 2-2: the embedding of input 1 of the batch has 128 numbers; expected 256"
        in caught.value.message
    )


def test_a_refused_key_names_the_variable_and_is_never_printed(server):
    server.script = [Reply.json({"error": {"message": "Incorrect API key provided: sk-bad"}}, 401)]
    with pytest.raises(CceError) as caught:
        embedder(server, environ={"E5_KEY": "sk-bad"}, api_key_env="E5_KEY").embed(["x"])
    assert caught.value.hint == "check the key in E5_KEY"
    assert "answered HTTP 401" in caught.value.message


def test_a_named_key_variable_that_is_unset_is_an_error_before_any_request(server):
    with pytest.raises(CceError) as caught:
        embedder(server, environ={}, api_key_env="E5_KEY")
    assert (
        caught.value.message
        == 'embedder "e5": the environment variable E5_KEY holding its API key is not set'
    )
    assert server.requests == []


def test_retry_after_reads_seconds_dates_and_milliseconds():
    assert retry_after({"retry-after": "7"}, 0.0) == 7.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 1445412480.0) == 10.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 1445412490.0) == 0.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}, 0.0) == 1.5
    assert retry_after({"retry-after": "soon"}, 0.0) is None
    assert retry_after({"retry-after": "-1"}, 0.0) is None
    assert retry_after({}, 0.0) is None
