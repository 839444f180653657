"""What a backend name stands for, and how to open it over an index for one run.

A name is one of the three built-ins, a `Variant` (a built-in ranking with some constants
changed, or another embedder, from `cce-relevance.toml`), an external retriever
(retrieval/search/external.py) or an in-process Python retriever (python_retriever.py). Opening
is a context manager because a retriever holds a process, an HTTP session or a thread for the
whole run and must be released however the run ends; built-ins and variants hold nothing of
their own (a variant's embedder belongs to the run's `RunEmbedders`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from cce_relevance.reference import BUILTIN_BACKENDS, REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.embedders.service import RunEmbedders
from cce_relevance.retrieval.embedders.spec import EmbedderSpec
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.hit import SearchFn
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.backends import builtin_backend
from cce_relevance.retrieval.search.external import CommandRetriever, HttpRetriever, open_external
from cce_relevance.retrieval.search.python_retriever import PythonRetriever, open_python


@dataclass(frozen=True)
class Variant:
    """A built-in ranking (`base`: bm25, vector or hybrid) run with `params`, over the vectors of
    `embedder` (None: the index's own, embedded as the index says)."""

    base: str
    params: RankingParams = REFERENCE_PARAMS
    embedder: EmbedderSpec | None = None

    def own_embedder(self, index: Index) -> EmbedderSpec | None:
        """The embedder this variant ranks with when it is not the one `index` was built with."""
        if self.embedder is None or self.base == "bm25" or self.embedder.name == index.embedder:
            return None
        return self.embedder


BackendSpec = Variant | CommandRetriever | HttpRetriever | PythonRetriever

BUILTIN_SPECS: dict[str, BackendSpec] = {name: Variant(name) for name in BUILTIN_BACKENDS}


@contextmanager
def open_backend(
    name: str,
    spec: BackendSpec,
    index: Index,
    embed: Callable[[str], np.ndarray] = hash_embed,
    embedders: RunEmbedders | None = None,
    corpus: str = "",
) -> Iterator[SearchFn]:
    """The search function of backend `name`, valid inside the `with` block. A variant with its
    own embedder takes it from `embedders`; a Python retriever's factory is given `corpus`."""
    if isinstance(spec, Variant):
        chosen = spec.own_embedder(index)
        if chosen is None:
            yield builtin_backend(spec.base, index, spec.params, embed)
            return
        if embedders is None:
            raise ValueError(f"backend {name!r} names embedder {chosen.name!r} but the run has no embedders")
        service = embedders.service(chosen)
        yield builtin_backend(spec.base, service.index(index), spec.params, service.embed_query)
        return
    if isinstance(spec, PythonRetriever):
        with open_python(name, spec, index, corpus) as search:
            yield search
        return
    with open_external(name, spec, index) as search:
        yield search
