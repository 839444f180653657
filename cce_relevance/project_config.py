"""The project's `cce-relevance.toml`: backend variants and external retrievers, validated once.

A team's ranking change is usually a constant of the fusion or a retriever of its own, so both
are named in a file that lives with the code and its fixtures, and then used wherever a backend
name goes (`--backend`, `--compare`, the Action's `backends` input):

    [backends.hybrid-rrf30]
    base = "hybrid"
    rrf_k = 30

    [backends.vector-wl]
    base = "vector"
    embedder = "wordllama"                        # or an [embedders.NAME] table's name

    [backends.mine]
    command = ["python3", "tools/retriever.py"]   # or: url = "http://127.0.0.1:8080/search"
    timeout = 10                                  # or: python = "tools.retriever:make"

    [embedders.local-e5]
    type = "openai"                               # any OpenAI-compatible /v1/embeddings endpoint
    base_url = "http://127.0.0.1:8080/v1"
    model = "e5-small"

Unset parameters keep the reference's values (config.RankingParams), so a variant that sets
nothing ranks exactly as its base. Every fault — unknown key, wrong type, value out of range, a
name that shadows a built-in — is an error naming the file, the table, the key and what was
expected: a silently ignored typo would measure the reference while the team thinks it measured
its change.

A top-level `languages = ["go", "java"]` (before the first table, as TOML requires) turns on
extra language packs for every command that indexes (retrieval/chunking/languages.py); without it the
index chunks the reference's six languages only.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from cce_relevance.errors import CceError
from cce_relevance.input_files import open_input
from cce_relevance.numeric import is_finite_number
from cce_relevance.reference import BUILTIN_BACKENDS, REFERENCE_PARAMS
from cce_relevance.retrieval.chunking.languages import check_languages
from cce_relevance.retrieval.corpus.exclusion import compile_patterns
from cce_relevance.retrieval.embedders.spec import (
    BUILTIN_EMBEDDERS,
    MAX_INPUT_CHARS,
    OPENAI,
    WORDLLAMA,
    WORDLLAMA_DIMENSIONS,
    WORDLLAMA_MODEL,
    EmbedderSpec,
)
from cce_relevance.retrieval.search.external import DEFAULT_TIMEOUT, CommandRetriever, HttpRetriever
from cce_relevance.retrieval.search.python_retriever import PythonRetriever
from cce_relevance.retrieval.search.registry import BUILTIN_SPECS, BackendSpec, Variant
from cce_relevance.strings import quoted

CONFIG_NAME = "cce-relevance.toml"
MAX_CONFIG_BYTES = 1 << 20  # a configuration of a few variants is a few kilobytes: a larger file is refused

# Backend names travel in comma lists and in the Action's inputs: the Action accepts this shape.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")


@dataclass(frozen=True)
class _Param:
    """How one RankingParams field is written in the file: its TOML type and its valid range."""

    expected: str
    valid: Callable[[Any], bool]
    convert: Callable[[Any], Any]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(expected: str, in_range: Callable[[float], bool]) -> _Param:
    """A float parameter; an int is accepted where a float is meant."""
    return _Param(expected, lambda v: is_finite_number(v) and in_range(float(v)), float)


def _integer(expected: str, in_range: Callable[[int], bool]) -> _Param:
    return _Param(expected, lambda v: _is_int(v) and in_range(v), int)


_POSITIVE = _number("a number > 0", lambda v: v > 0)
_NON_NEGATIVE = _number("a number >= 0", lambda v: v >= 0)
_FRACTION = _number("a number from 0 to 1", lambda v: 0 <= v <= 1)

PARAMETERS: Mapping[str, _Param] = MappingProxyType(
    {
        "rrf_k": _POSITIVE,
        "confidence_weight": _FRACTION,
        "fts_boost_code_lookup": _NON_NEGATIVE,
        "max_chunks_per_file": _integer("an integer >= 1", lambda v: v >= 1),
        "bm25_k1": _NON_NEGATIVE,
        "bm25_b": _FRACTION,
        "candidate_multiplier": _integer("an integer >= 1", lambda v: v >= 1),
        "w_vector": _NON_NEGATIVE,
        "w_keyword": _NON_NEGATIVE,
        "w_recency": _NON_NEGATIVE,
        "path_penalty": _NON_NEGATIVE,
        "path_penalty_markers": _Param(
            "an array of non-empty strings",
            lambda v: isinstance(v, list) and all(isinstance(m, str) and m for m in v),
            tuple,
        ),
        "graph_enabled": _Param("true or false", lambda v: isinstance(v, bool), bool),
        "graph_max_bonus_files": _integer("an integer >= 0", lambda v: v >= 0),
        "graph_bonus_chunk_scale": _NON_NEGATIVE,
    }
)
"""Every RankingParams field, with the type and range a config file may give it."""

# Which parameters each base reads; setting one its base ignores would measure nothing.
BASE_PARAMETERS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "bm25": ("bm25_k1", "bm25_b"),
        "vector": (),
        "hybrid": tuple(f.name for f in fields(REFERENCE_PARAMS)),
    }
)

# What a variant of each base may set besides its ranking parameters.
VARIANT_KEYS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"bm25": (), "vector": ("embedder",), "hybrid": ("embedder",)}
)

_EXTERNAL_KEYS = ("timeout",)
MAX_TIMEOUT = 86_400.0  # a day: longer than any CI job, and far inside what the clock functions take
_TIMEOUT = _number(f"a number of seconds > 0 and at most {MAX_TIMEOUT:g}", lambda v: 0 < v <= MAX_TIMEOUT)
_PYTHON_TARGET = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TEXT = _Param("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip()), str)

EMBEDDER_KEYS: Mapping[str, Mapping[str, _Param]] = MappingProxyType(
    {
        WORDLLAMA: MappingProxyType(
            {
                "dimensions": _integer(
                    f"one of {', '.join(map(str, WORDLLAMA_DIMENSIONS))}", lambda v: v in WORDLLAMA_DIMENSIONS
                ),
                "max_input_chars": _integer("an integer >= 1", lambda v: v >= 1),
            }
        ),
        OPENAI: MappingProxyType(
            {
                "base_url": _Param(
                    'an http:// or https:// URL, e.g. "http://127.0.0.1:8080/v1"',
                    lambda v: isinstance(v, str) and _is_http_url(v),
                    str,
                ),
                "model": _TEXT,
                "dimensions": _integer("an integer >= 1", lambda v: v >= 1),
                "api_key_env": _Param(
                    'the name of an environment variable, e.g. "OPENAI_API_KEY"',
                    lambda v: isinstance(v, str) and bool(_ENV_NAME.match(v)),
                    str,
                ),
                "batch_size": _integer("an integer from 1 to 2048", lambda v: 1 <= v <= 2048),
                "timeout": _TIMEOUT,
                "deadline": _TIMEOUT,
                "max_retries": _integer("an integer from 0 to 20", lambda v: 0 <= v <= 20),
                "max_input_chars": _integer("an integer >= 1", lambda v: v >= 1),
            }
        ),
    }
)
"""Each configurable embedder kind's keys, besides `type`; `base_url` and `model` are required for openai."""
_REQUIRED_EMBEDDER_KEYS = {OPENAI: ("base_url", "model"), WORDLLAMA: ()}


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class ProjectConfig:
    """The backends a project configured (by name, sorted), and the file they came from.

    `refused` maps configured names a front door will not run to what they are and why not (see
    `without_external`); they are neither usable nor unknown.
    """

    path: str | None = None
    backends: Mapping[str, BackendSpec] = field(default_factory=_empty)
    refused: Mapping[str, str] = field(default_factory=_empty)
    languages: tuple[str, ...] = ()  # extra languages to chunk (check_languages order)
    exclude: tuple[str, ...] = ()  # gitignore patterns, relative to the file's directory
    location: str | None = None  # the file's absolute path (a run never indexes it)
    embedders: Mapping[str, EmbedderSpec] = field(default_factory=_empty)  # [embedders.NAME], by name

    @property
    def embedder_names(self) -> tuple[str, ...]:
        """Every embedder name: the built-ins, then the configured ones."""
        return (*BUILTIN_EMBEDDERS, *self.embedders)

    def embedder(self, name: str) -> EmbedderSpec | None:
        """The embedder called `name`, built-in or configured; None for another name."""
        return self.embedders.get(name, BUILTIN_EMBEDDERS.get(name))

    @property
    def names(self) -> tuple[str, ...]:
        """Every usable backend name: the built-ins, then the configured ones."""
        return (*BUILTIN_BACKENDS, *self.backends)

    def spec(self, name: str) -> BackendSpec:
        return self.backends[name] if name in self.backends else BUILTIN_SPECS[name]

    def without_external(self, reason: str) -> ProjectConfig:
        """The variants only: naming an external retriever is then an error that gives `reason`.

        For a front door that must not run code or reach services chosen by the repository it
        scores (the Action, whose head commit may come from a fork).
        """
        variants = {n: s for n, s in self.backends.items() if _runs_nothing_chosen(s)}
        refused = {
            n: f"{_what(s)}: {reason}" for n, s in self.backends.items() if not _runs_nothing_chosen(s)
        }
        return replace(self, backends=MappingProxyType(variants), refused=MappingProxyType(refused))


def _what(spec: BackendSpec) -> str:
    """What a refused backend is, for the refusal."""
    if isinstance(spec, Variant) and spec.embedder is not None:
        return (
            f"ranks with embedder {quoted(spec.embedder.name)}, which sends the repository's text to a "
            "service its config file chose"
        )
    return "is an external retriever"


def _runs_nothing_chosen(spec: BackendSpec) -> bool:
    """A variant that neither runs the repository's code nor sends its text (and an API key) to a
    service its file chose: the built-in rankings over the hash, Ollama or WordLlama embedder."""
    return isinstance(spec, Variant) and (spec.embedder is None or not spec.embedder.remote)


NO_CONFIG = ProjectConfig()


def find_config(cwd: str, top: str | None = None) -> str | None:
    """`cce-relevance.toml` in `cwd` or the nearest directory above it, not above the repository root.

    The search stops at the first directory holding `.git` (a repository root or a worktree), or
    at `top` (a commit's files checked out without `.git`), so a file outside the project never
    changes what a run measures.
    """
    here = os.path.abspath(cwd)
    stop = os.path.abspath(top) if top is not None else None
    while True:
        candidate = os.path.join(here, CONFIG_NAME)
        if os.path.lexists(candidate):  # a symlink to nothing is found, and refused by name when read
            return candidate
        parent = os.path.dirname(here)
        if os.path.exists(os.path.join(here, ".git")) or here == stop or parent == here:
            return None
        here = parent


def load_config(path: str | None = None, cwd: str | None = None, *, top: str | None = None) -> ProjectConfig:
    """The explicit `path` (relative to `cwd`), else the discovered file, else no configuration.

    `cwd` defaults to the process's working directory; errors show `path` as given, or the
    discovered file relative to `cwd`. `top` is the repository's root when its files are checked
    out without `.git` (`find_config`); a file found there that resolves outside it (a symlink)
    is refused before it is read.
    """
    cwd = os.getcwd() if cwd is None else cwd
    if path is not None:
        full, shown = os.path.join(cwd, path), path
    else:
        found = find_config(cwd, top)
        if found is None:
            return NO_CONFIG
        full, shown = found, os.path.relpath(found, cwd)
        if top is not None and not Path(found).resolve().is_relative_to(Path(top).resolve()):
            raise CceError(f"{shown} resolves outside the repository")
    try:
        with open_input(full, limit=MAX_CONFIG_BYTES) as fh:
            data = fh.read()
    except OSError as exc:
        raise CceError(f"could not read config {shown}: {exc.strerror or exc}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        raise CceError(
            f"{shown}: invalid TOML: the file starts with a UTF-8 byte order mark (BOM)",
            hint="save it as UTF-8 without a BOM",
        )
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CceError(f"{shown}: invalid TOML: not UTF-8 text (at line {line})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CceError(f"{shown}: invalid TOML: {exc}") from None
    except RecursionError:
        raise CceError(
            f"{shown}: invalid TOML: arrays or tables nested too deeply (at most {MAX_TOML_DEPTH} levels)"
        ) from None
    except ValueError:  # tomllib's int(): a number with thousands of digits
        raise CceError(f"{shown}: invalid TOML: an integer with thousands of digits") from None
    _check_bounds(document, shown)
    config = parse_config(document, shown, os.path.dirname(os.path.abspath(full)))
    return replace(config, location=os.path.abspath(full))


MAX_TOML_DEPTH = 32  # a config nests 3 levels ([backends.NAME] and an array); far deeper is an error


def _check_bounds(document: Mapping[str, Any], shown: str) -> None:
    """Refuse nesting past `MAX_TOML_DEPTH` before any value reaches code that would recurse on it.
    (Each key checks its own integers' range and names itself; this is the backstop.)"""
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise CceError(
                f"{shown}: invalid TOML: arrays or tables nested more than {MAX_TOML_DEPTH} levels deep"
            )
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children)


def parse_config(document: Mapping[str, Any], shown: str, directory: str) -> ProjectConfig:
    """Validate a parsed file; `shown` names it in errors, `directory` is where commands run."""
    for key in document:
        if key not in ("backends", "embedders", "languages", "exclude"):
            raise CceError(
                f"{shown}: unknown key {quoted(key)} (expected a [backends.NAME] or [embedders.NAME] table, "
                "languages or exclude)"
            )
    embedder_tables = _tables(shown, document, "embedders")
    embedders = {name: _embedder(shown, name, embedder_tables[name]) for name in sorted(embedder_tables)}
    tables = _tables(shown, document, "backends")
    choices = {**BUILTIN_EMBEDDERS, **embedders}
    backends = {name: _backend(shown, name, tables[name], directory, choices) for name in sorted(tables)}
    return ProjectConfig(
        shown,
        MappingProxyType(backends),
        languages=_languages(shown, document.get("languages", [])),
        exclude=_exclude(shown, document.get("exclude", [])),
        embedders=MappingProxyType(embedders),
    )


def _tables(shown: str, document: Mapping[str, Any], key: str) -> dict[str, Any]:
    tables = document.get(key, {})
    if not isinstance(tables, dict):
        raise CceError(f"{shown}: {key}: expected a table of [{key}.NAME] tables, got {_show(tables)}")
    return tables


def _embedder(shown: str, name: str, table: Any) -> EmbedderSpec:
    """One [embedders.NAME] table: a name of the project's own, `type`, and that type's keys."""
    where = f"{shown}: {_table_name(name, 'embedders')}"
    _check_table(where, name, table, "embedder", "give this one another name", BUILTIN_EMBEDDERS)
    kind = table.get("type")
    if kind is None:
        raise CceError(f"{where}: type is missing (expected {_quoted_choices(tuple(EMBEDDER_KEYS))})")
    if not isinstance(kind, str) or kind not in EMBEDDER_KEYS:
        raise CceError(f"{where} type: expected {_quoted_choices(tuple(EMBEDDER_KEYS))}, got {_show(kind)}")
    params = EMBEDDER_KEYS[kind]
    _check_keys(where, table, "type", tuple(params), f'type "{kind}"')
    for key in _REQUIRED_EMBEDDER_KEYS[kind]:
        if key not in table:
            raise CceError(
                f'{where}: {key} is missing (type "{kind}" needs '
                f"{' and '.join(_REQUIRED_EMBEDDER_KEYS[kind])})"
            )
    values = {key: _value(where, table, key, params[key], None) for key in table if key != "type"}
    defaults: dict[str, Any] = {"max_input_chars": MAX_INPUT_CHARS}
    if kind == OPENAI:
        defaults["api_key_env"] = None  # a table names its key's variable, or the server needs none
    else:
        defaults["model"] = WORDLLAMA_MODEL
    return replace(BUILTIN_EMBEDDERS[kind], name=name, **{**defaults, **values})


def _exclude(shown: str, value: Any) -> tuple[str, ...]:
    """The top-level `exclude` array: gitignore patterns, each checked to compile."""
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise CceError(
            f'{shown}: exclude: expected an array of gitignore patterns, e.g. ["docs/generated/", '
            f'"*.golden.json"], got {_show(value)}'
        )
    compile_patterns(value, f"{shown}: exclude pattern")
    return tuple(value)


def _languages(shown: str, value: Any) -> tuple[str, ...]:
    """The top-level `languages` array, checked against the packs there are."""
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise CceError(
            f'{shown}: languages: expected an array of language names, e.g. ["go", "java"], '
            f"got {_show(value)}"
        )
    try:
        return check_languages(value)
    except CceError as exc:
        raise CceError(f"{shown}: languages: {exc.message}") from None


def _table_name(name: str, group: str = "backends") -> str:
    return f"[{group}.{name if _BARE_KEY.match(name) else quoted(name)}]"


def _check_table(
    where: str, name: str, table: Any, what: str, rename: str, builtins: Mapping[str, Any] | tuple[str, ...]
) -> None:
    """A [backends.NAME] or [embedders.NAME] table's name (not a built-in's, of the allowed
    letters) and that it is a table."""
    article = "an" if what == "embedder" else "a"
    if name in builtins:
        raise CceError(f"{where}: {quoted(name)} is a built-in {what}; {rename}")
    if not _NAME.match(name):
        raise CceError(
            f"{where}: {article} {what} name is letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    if not isinstance(table, dict):
        raise CceError(f"{where}: expected a table, got {_show(table)}")


def _backend(
    shown: str, name: str, table: Any, directory: str, embedders: Mapping[str, EmbedderSpec]
) -> BackendSpec:
    where = f"{shown}: {_table_name(name)}"
    _check_table(where, name, table, "backend", "give the variant another name", BUILTIN_BACKENDS)
    kinds = [k for k in ("base", "command", "url", "python") if k in table]
    if len(kinds) != 1:
        got = "none" if not kinds else " and ".join(kinds)
        raise CceError(
            f'{where}: expected exactly one of base = "bm25"|"vector"|"hybrid", '
            f'command = ["program", "arg", ...], url = "http://..." or python = "package.module:factory"; '
            f"got {got}"
        )
    if kinds == ["base"]:
        return _variant(where, table, embedders)
    if kinds == ["python"]:
        target = table["python"]
        if not (isinstance(target, str) and _PYTHON_TARGET.match(target)):
            raise CceError(
                f'{where} python: expected "package.module:factory" (a module to import from '
                f"{quoted(directory)} and a callable in it), got {_show(target)}"
            )
        timeout = _value(where, table, "timeout", _TIMEOUT, DEFAULT_TIMEOUT)
        return PythonRetriever(target, directory, timeout, MappingProxyType(dict(table)))
    _check_keys(where, table, kinds[0], _EXTERNAL_KEYS, f"a {kinds[0]} retriever")
    timeout = _value(where, table, "timeout", _TIMEOUT, DEFAULT_TIMEOUT)
    if kinds == ["command"]:
        command = table["command"]
        if not (isinstance(command, list) and command and all(isinstance(a, str) and a for a in command)):
            raise CceError(
                f"{where} command: expected a non-empty array of non-empty strings, e.g. "
                f'["python3", "retriever.py"], got {_show(command)}'
            )
        return CommandRetriever(tuple(command), directory, timeout)
    url = table["url"]
    if not (isinstance(url, str) and _is_http_url(url)):
        raise CceError(f"{where} url: expected an http:// or https:// URL, got {_show(url)}")
    return HttpRetriever(url, timeout)


def _variant(where: str, table: dict[str, Any], embedders: Mapping[str, EmbedderSpec]) -> Variant:
    base = table["base"]
    if base not in BUILTIN_BACKENDS:
        raise CceError(f"{where} base: expected {_quoted_choices(BUILTIN_BACKENDS)}, got {_show(base)}")
    allowed = (*BASE_PARAMETERS[base], *VARIANT_KEYS[base])
    _check_keys(where, table, "base", allowed, f'base "{base}"')
    changes = {
        key: _value(where, table, key, PARAMETERS[key], None)
        for key in table
        if key not in ("base", *VARIANT_KEYS[base])
    }
    embedder = None
    if "embedder" in table:
        chosen = table["embedder"]
        embedder = embedders.get(chosen) if isinstance(chosen, str) else None
        if embedder is None:
            raise CceError(
                f"{where} embedder: expected {_quoted_choices(tuple(embedders))} "
                f"(a built-in embedder or an [embedders.NAME] table), got {_show(chosen)}"
            )
    return Variant(base, replace(REFERENCE_PARAMS, **changes), embedder)


def _check_keys(where: str, table: dict[str, Any], kind: str, allowed: tuple[str, ...], what: str) -> None:
    takes = f"{what} takes {', '.join(allowed)}" if allowed else f"{what} takes no parameters"
    for key in table:
        if key == kind or key in allowed:
            continue
        if key in PARAMETERS or key in _EXTERNAL_KEYS:
            raise CceError(f"{where} {key}: does not apply here ({takes})")
        raise CceError(f"{where} {_key(key)}: unknown key ({takes})")


def _value(where: str, table: dict[str, Any], key: str, param: _Param, default: Any) -> Any:
    if key not in table:
        return default
    value = table[key]
    if not param.valid(value):
        raise CceError(f"{where} {key}: expected {param.expected}, got {_show(value)}")
    return param.convert(value)


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else quoted(key)


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError:  # e.g. an unclosed IPv6 bracket, 'http://[::1'
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _show(value: Any) -> str:
    """A value as TOML writes it (tables and arrays by shape), for error messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quoted(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, int):
        digits = len(str(abs(value))) if value.bit_length() < 4000 else None
        return str(value) if digits is not None and digits <= 30 else "an integer of more than 30 digits"
    if isinstance(value, list):
        shown = "[" + ", ".join(_show(v) for v in value[:8]) + (", …]" if len(value) > 8 else "]")
        return shown if len(shown) <= 200 else shown[:200] + "…"
    if isinstance(value, dict):
        return "a table"
    return quoted(str(value))


def _quoted_choices(names: tuple[str, ...]) -> str:
    """`"a", "b" or "c"`: TOML strings as a config error lists them."""
    quoted = [f'"{name}"' for name in names]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}"
