"""The corpus a fixture set is scored against: found from the flags or the fixture header,
indexed, and how its queries are embedded (§corpus-choice–§embedder-name).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from cce_relevance.errors import CceError
from cce_relevance.evaluation.fixtures import FixtureSet, corpus_dir
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.evaluation.symbol_anchors import bind_symbols
from cce_relevance.project_config import NO_CONFIG, ProjectConfig
from cce_relevance.retrieval.chunking.languages import enabled_packs
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols, ParsedFiles
from cce_relevance.retrieval.corpus.exclusion import (
    NO_EXCLUSION,
    Exclusion,
    compile_patterns,
    own_files,
    pattern_set,
)
from cce_relevance.retrieval.embedders.service import RunEmbedders
from cce_relevance.retrieval.embedding.embed import (
    HASH_DOCUMENTS,
    HASH_EMBEDDER,
    DocumentEmbedder,
    hash_embed,
)
from cce_relevance.retrieval.embedding.ollama import (
    OLLAMA_EMBEDDER,
    OllamaClient,
    OllamaError,
    document_embedder,
)
from cce_relevance.retrieval.index.build import DEFAULT_BUILD, BuildOptions, build_index
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.hybrid import QueryEmbedder
from cce_relevance.retrieval.store.store import load_store

Warn = Callable[[str], None]


def warn_on_stderr(message: str) -> None:
    """`warning: <message>` on stderr: the one thing a successful run may print there (§embedder-name)."""
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


OLLAMA_STORE_REFUSAL = (  # §errors E16, the reference's words
    "this store was built with the ollama embedder but Ollama is unreachable — refusing to score across "
    "mismatched embedding spaces. Start Ollama, or evaluate a corpus directory with the deterministic hash "
    "embedder (--dir)."
)


def open_corpus(
    path: str,
    *,
    protect_secrets: bool = True,
    embedder: DocumentEmbedder = HASH_DOCUMENTS,
    languages: Sequence[str] = (),
    indexing: BuildOptions = DEFAULT_BUILD,
    exclude: Exclusion = NO_EXCLUSION,
) -> Index:
    """Index a corpus directory in memory (E18 when it is not one).

    `languages` names extra language packs to chunk with (none: the reference's six only);
    `indexing` says how (cache, worker processes, progress; see `build_options`); `exclude` what
    to leave out (see `corpus_exclusion`).
    """
    packs = enabled_packs(languages)
    return build_index(
        require_directory(path),
        protect_secrets,
        embedder,
        packs,
        cache=indexing.cache,
        workers=indexing.workers,
        progress=indexing.progress,
        exclude=exclude,
    )


def corpus_exclusion(
    corpus: str,
    config: ProjectConfig = NO_CONFIG,
    own: Sequence[str] = (),
    fixtures: FixtureSet | None = None,
) -> Exclusion:
    """What an index of the corpus directory `corpus` leaves out (retrieval/corpus/exclusion.py):
    the command's own files that lie inside it (`own`: fixture file, golden, output paths,
    relative to the current directory; and the config file), and the `exclude` patterns of the
    config file (relative to its directory) and of the fixture header (relative to the corpus)."""
    sets = []
    if config.exclude and config.location is not None:
        sets.append(
            pattern_set(
                compile_patterns(config.exclude, f"{config.path}: exclude pattern"),
                os.path.dirname(config.location),
                corpus,
            )
        )
    if fixtures is not None and fixtures.exclude:
        sets.append(
            pattern_set(
                compile_patterns(fixtures.exclude, f"{fixtures.path}: exclude pattern"), corpus, corpus
            )
        )
    paths = [*own, *([config.location] if config.location is not None else [])]
    return Exclusion(own_files(paths, corpus), tuple(p for p in sets if p is not None))


def fixtures_exclusion(
    fixtures: FixtureSet, fixtures_arg: str, dir: str | None, config: ProjectConfig, outputs: Sequence[str]
) -> Exclusion:
    """`corpus_exclusion` of the corpus directory a fixture set is scored against (`--dir`, else
    its header's), with the fixture file and `outputs` as the command's own files."""
    corpus = dir if dir is not None else header_corpus(fixtures, fixtures_arg)
    return corpus_exclusion(corpus, config, [fixtures_arg, *outputs], fixtures)


def report_excluded(index: Index, exclusion: Exclusion, warn: Warn) -> None:
    """One line through `warn` naming the run's own files that the corpus held and the run left out."""
    left_out = [path for path in index.walk_excluded if path in exclusion.own]
    if left_out:
        warn(f"not scoring this run's own files found in the corpus: {', '.join(left_out)}")


def require_directory(path: str) -> str:
    """`path` when it is a directory, else E18."""
    if not os.path.isdir(path):
        raise CceError(f"corpus is not a directory: {path}")
    return path


def query_embedder(
    index: Index, warn: Warn, config: ProjectConfig = NO_CONFIG, embedders: RunEmbedders | None = None
) -> QueryEmbedder:
    """How queries are embedded for `index` (§store-mode–§embedder-name): Ollama for an `ollama`
    store; the embedder a store was built with when it is one this project knows (built-in or
    `[embedders.NAME]`, opened from `embedders`); else hash, as the reference does for a name it
    does not know.

    An Ollama store is scored only after a health check passes (E16 otherwise, nothing scored);
    a later per-query failure is a warning and that query loses vector recall.
    """
    if index.embedder != OLLAMA_EMBEDDER:
        spec = config.embedder(index.embedder)
        if spec is None or spec.is_hash or embedders is None:
            return hash_embed
        return embedders.service(spec).embed_query
    client = OllamaClient.from_env()
    try:
        client.check_health()
    except OllamaError:
        raise CceError(OLLAMA_STORE_REFUSAL) from None
    return client.forgiving_query_embedder(warn)


def index_embedder(
    name: str, config: ProjectConfig, embedders: RunEmbedders
) -> tuple[DocumentEmbedder, str | None]:
    """The index-time embedder called `name` (built-in or the config's `[embedders.NAME]`), and
    what the fingerprint records of it (None for the hash embedder). Ollama is checked before
    anything is indexed."""
    spec = config.embedder(name)
    if spec is None:
        raise CceError(
            f"unknown embedder {rust_debug_str(name)} (expected {', '.join(config.embedder_names)})"
        )
    if name in (HASH_EMBEDDER, OLLAMA_EMBEDDER):
        return document_embedder(name)
    service = embedders.service(spec)
    return service.documents(), service.embedder.identity


def resolve_index(
    fixtures: FixtureSet,
    fixtures_arg: str,
    dir: str | None,
    store: str | None,
    languages: Sequence[str] = (),
    indexing: BuildOptions = DEFAULT_BUILD,
    exclude: Exclusion = NO_EXCLUSION,
    index: Index | None = None,
) -> tuple[str, Index]:
    """The corpus display string and its index: `--store` > `--dir` > header `corpus` (§corpus-choice).

    `languages`, `indexing` and `exclude` apply to a directory; a store's chunks were made when
    it was written. `index`, when given, is that directory's index made already (with `exclude`),
    and is not made again.
    """
    if store is not None:
        return store, load_store(store)
    if dir is None:
        corpus = header_corpus(fixtures, fixtures_arg)
        _refuse_sweeping_corpus(corpus, fixtures_arg)
    else:
        corpus = dir
    if index is not None:
        return corpus, index
    return corpus, open_corpus(corpus, languages=languages, indexing=indexing, exclude=exclude)


def header_corpus(fixtures: FixtureSet, fixtures_arg: str) -> str:
    """The header's `corpus` joined onto the fixture file's directory: the report's corpus string."""
    if not fixtures.corpus:
        raise CceError('no corpus: pass --dir <corpus>, or declare "corpus" in the fixture header line')
    path = corpus_dir(fixtures_arg, fixtures.corpus)
    if "\0" in path:  # no directory has such a name; E18 before any file system call chokes on it
        shown = path.replace("\0", "\\0")
        raise CceError(f"corpus is not a directory: {shown}")
    return path


def _refuse_sweeping_corpus(path: str, fixtures_arg: str) -> None:
    """A header `corpus` that names the filesystem root or the user's home is refused: a fixture
    file (often from a pull request) must not make a run index, cache and score every file a
    machine holds. Naming it on the command line (`--dir`) is the explicit opt-in."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return
    home = os.path.expanduser("~")
    sweeping = {os.path.realpath(os.sep)} | ({os.path.realpath(home)} if home not in ("", "~") else set())
    if real in sweeping:
        raise CceError(
            f"the fixture header of {fixtures_arg} names {path} as its corpus, which is "
            f"{'the filesystem root' if real == os.path.realpath(os.sep) else 'your home directory'}",
            hint=f'pass --dir {path} to index it deliberately, or point "corpus" at the code to score',
        )


def corpus_symbols(
    corpus: str, languages: Sequence[str] = (), parsed: ParsedFiles | None = None
) -> CorpusSymbols:
    """The symbols of a corpus directory's chunks, as `open_corpus(corpus, languages=…)` chunks it
    (`parsed`: files parsed already, shared with other corpora's; see `CorpusSymbols`)."""
    return CorpusSymbols(corpus, enabled_packs(languages), parsed=parsed)


def bound_fixtures(
    fixtures: FixtureSet, corpus: str, store: str | None, languages: Sequence[str]
) -> FixtureSet:
    """`fixtures` with their symbol anchors (`path::Name`) given their lines in the corpus directory."""
    if not any(c.has_symbols for c in fixtures.cases):
        return fixtures
    if store is not None:
        raise CceError(
            "symbol anchors (`path::Name`) are looked up in a corpus directory, and a store keeps "
            "no syntax trees",
            hint="score the directory (--dir), or use line-range anchors",
        )
    return bind_symbols(fixtures, corpus_symbols(corpus, languages))
