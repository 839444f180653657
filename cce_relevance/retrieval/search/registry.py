"""What a backend name stands for, and how to open it over an index for one run.

A name is one of the three built-ins, a `Variant` (a built-in ranking with some constants
changed, from `cce-relevance.toml`) or an external retriever (retrieval/search/external.py). Opening is
a context manager because an external retriever holds a process or an HTTP session for the whole
run and must be released however the run ends; built-ins and variants hold nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from cce_relevance.reference import BUILTIN_BACKENDS, REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.hit import SearchFn
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.backends import builtin_backend
from cce_relevance.retrieval.search.external import CommandRetriever, HttpRetriever, open_external


@dataclass(frozen=True)
class Variant:
    """A built-in ranking (`base`: bm25, vector or hybrid) run with `params`."""

    base: str
    params: RankingParams = REFERENCE_PARAMS


BackendSpec = Variant | CommandRetriever | HttpRetriever

BUILTIN_SPECS: dict[str, BackendSpec] = {name: Variant(name) for name in BUILTIN_BACKENDS}


@contextmanager
def open_backend(
    name: str, spec: BackendSpec, index: Index, embed: Callable[[str], np.ndarray] = hash_embed
) -> Iterator[SearchFn]:
    """The search function of backend `name`, valid inside the `with` block."""
    if isinstance(spec, Variant):
        yield builtin_backend(spec.base, index, spec.params, embed)
        return
    with open_external(name, spec, index) as search:
        yield search
