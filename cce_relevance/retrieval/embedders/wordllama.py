"""WordLlama: static token embeddings from the model inside the `wordllama` wheel.

WordLlama (MIT) ships a 256-component embedding table distilled from a large language model's
token embeddings, with its tokenizer, inside its wheel. A text's vector is the mean of its tokens'
rows: no network, no GPU, the same vector for the same text on every run — a semantic embedder
that a CI job can afford. It is the optional extra `cce-relevance[semantic]`, pinned; the model is
read from the installed package only (never from a download cache, never fetched), so a missing
extra or a damaged install is an error that says how to install it.

Texts are embedded in batches of similar length (padding is masked out of the mean, so a text's
vector does not depend on its batch), cut to `max_input_chars`, and made unit length
(`unit_rows`): vector ranking is then cosine.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from cce_relevance.errors import CceError
from cce_relevance.retrieval.embedders.embedder import Embedder, unit_rows
from cce_relevance.retrieval.embedders.spec import WORDLLAMA_DIMENSIONS, EmbedderSpec

DISTRIBUTION = "wordllama"
EXTRA = "cce-relevance[semantic]"
INSTALL_HINT = f"install the optional extra: pip install '{EXTRA}'"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR = "embedding.weight"
_BATCH_CHARS = 64 * 2048  # texts per batch × the longest one's characters: bounds the padded tensor


@contextmanager
def _root_logging_kept() -> Iterator[None]:
    """Undo what importing wordllama does to the root logger (`logging.basicConfig(level=INFO)`):
    a library must not make every other library's INFO messages print."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def _package_dir() -> Path:
    """Where the installed wordllama package lies; a `CceError` naming the extra when it is not."""
    try:
        with _root_logging_kept():
            import wordllama
    except ImportError as exc:
        raise CceError(
            f"the wordllama embedder needs the optional extra {EXTRA} ({exc})", hint=INSTALL_HINT
        ) from None
    return Path(wordllama.__file__).resolve().parent


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def load_model(dimensions: int) -> Any:
    """WordLlama's inference object over the bundled model's first `dimensions` components."""
    if dimensions not in WORDLLAMA_DIMENSIONS:
        raise CceError(f"wordllama dimensions: expected one of {WORDLLAMA_DIMENSIONS}, got {dimensions}")
    root = _package_dir()
    weights, tokenizer_file = root / WEIGHTS, root / TOKENIZER
    for path in (weights, tokenizer_file):
        if not path.is_file():
            raise CceError(
                f"the installed wordllama {version()} has no bundled model file {path}",
                hint=f"reinstall the optional extra: pip install --force-reinstall '{EXTRA}'",
            )
    with _root_logging_kept():
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama import WordLlamaInference

        try:
            with safe_open(str(weights), framework="np", device="cpu") as f:
                table = f.get_tensor(_TENSOR)[:, :dimensions]
            return WordLlamaInference(table, Tokenizer.from_file(str(tokenizer_file)))
        except Exception as exc:  # noqa: BLE001 - a damaged file raises anything from Rust bindings
            raise CceError(
                f"could not load the wordllama model from {root}: {exc}",
                hint=f"reinstall the optional extra: pip install --force-reinstall '{EXTRA}'",
            ) from None


class WordLlamaEmbedder(Embedder):
    """The bundled WordLlama model, loaded on first use."""

    def __init__(self, spec: EmbedderSpec) -> None:
        super().__init__(spec)
        self.dimensions = spec.dimensions or WORDLLAMA_DIMENSIONS[-1]
        self._model: Any = None

    @property
    def identity(self) -> str:
        return f"wordllama {version()} {self.spec.model} {self.dimensions} unit"

    def _loaded(self) -> Any:
        if self._model is None:
            self._model = load_model(self.dimensions)
        return self._model

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        if not texts:
            return []
        model = self._loaded()
        out: list[np.ndarray] = [np.zeros(0)] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order) and (stop - start + 1) * max(len(texts[order[stop]]), 1) <= _BATCH_CHARS:
                stop += 1
            batch = [texts[i] for i in order[start:stop]]
            with self.timed(len(batch)):
                pooled = model.embed(batch, norm=False, batch_size=len(batch))
            for i, row in zip(order[start:stop], unit_rows(pooled), strict=True):
                out[i] = row
            start = stop
        return out
