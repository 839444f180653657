"""The WordLlama embedder over the model inside the installed wheel (the `semantic` extra)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cce_relevance.errors import CceError
from cce_relevance.retrieval.embedders.spec import BUILTIN_EMBEDDERS, EmbedderSpec
from cce_relevance.retrieval.embedders.wordllama import EXTRA, WordLlamaEmbedder, load_model

TEXTS = [
    "def record_shipment(order, carrier):\n    return carrier.ship(order)\n",
    "class RateLimiter:\n    '''Token bucket.'''\n",
    "",
    "render the shopping cart " * 200,
    "x",
]


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder(BUILTIN_EMBEDDERS["wordllama"])


def test_vectors_are_unit_float32_and_the_same_alone_as_in_any_batch(wordllama):
    together = wordllama.embed(TEXTS)
    alone = [wordllama.embed([t])[0] for t in TEXTS]
    reversed_ = wordllama.embed(TEXTS[::-1])[::-1]
    assert [v.tobytes() for v in together] == [v.tobytes() for v in alone] == [v.tobytes() for v in reversed_]
    assert all(v.dtype == np.float32 and v.shape == (256,) for v in together)
    norms = [float(np.linalg.norm(v.astype(np.float64))) for v in together]
    assert norms[2] == 0.0  # no token: the zero vector
    assert all(abs(n - 1.0) < 1e-6 for i, n in enumerate(norms) if i != 2)


def test_it_embeds_meaning_not_just_shared_words(wordllama):
    query, near, far = wordllama.embed(["ship an order", "send a parcel to the customer", "compile regex"])
    assert float(query @ near) > float(query @ far)


def test_calls_and_texts_are_counted_per_batch(wordllama):
    fresh = WordLlamaEmbedder(BUILTIN_EMBEDDERS["wordllama"])
    fresh.embed(TEXTS)
    assert fresh.usage.texts == len(TEXTS) and fresh.usage.calls >= 1 and fresh.usage.tokens is None


def test_fewer_dimensions_are_the_models_first_components():
    narrow = WordLlamaEmbedder(EmbedderSpec("wl64", "wordllama", "l2_supercat", 64)).embed(TEXTS[:2])
    assert [v.shape for v in narrow] == [(64,), (64,)]
    with pytest.raises(CceError, match="expected one of"):
        load_model(100)


def test_the_model_is_read_from_the_installed_wheel_only(wordllama):
    import wordllama as package

    weights = Path(package.__file__).parent / "weights" / "l2_supercat_256.safetensors"
    assert weights.is_file()
    assert "wordllama 0.4.0.post1 l2_supercat 256 unit" == wordllama.identity


def test_importing_it_leaves_the_root_logger_alone():
    code = (
        "import logging\n"
        "from cce_relevance.retrieval.embedders.wordllama import load_model\n"
        "load_model(256)\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), root.level)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == f"0 {30}\n"


def test_without_the_extra_the_error_names_it():
    code = (
        "import sys\n"
        "sys.modules['wordllama'] = None\n"
        "from cce_relevance.errors import CceError\n"
        "from cce_relevance.retrieval.embedders.wordllama import load_model\n"
        "try:\n"
        "    load_model(256)\n"
        "except CceError as exc:\n"
        "    print(exc.message)\n"
        "    print(exc.hint)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, hint = out.splitlines()
    assert first.startswith(f"the wordllama embedder needs the optional extra {EXTRA}")
    assert hint == f"install the optional extra: pip install '{EXTRA}'"
