"""Retrievers that run in this process: `python = "package.module:factory"` in a backend table.

A team's retriever is often a Python object already (a LangChain retriever, a class over its own
vector store); putting it behind the JSON-lines protocol would cost a wrapper and a process. The
factory is called once per run with the corpus directory and the backend's table (a dict of its
keys, `python` included) and returns an object whose `search(query, k)` returns the ranked
results: mappings (or objects with those attributes) of `file_path`, `start_line`, `end_line`,
optional `kind` and `score` — the results of a `cce.retriever/v1` answer, checked by the same
rules, with the same messages (retrieval/search/external.py). Numbers of numpy's types count as
the numbers they are.

The module is imported with the config file's directory first on `sys.path`, and the modules
that import brought in from that directory are forgotten when the run ends, so another tree's
retriever of the same name (the Action's head after its base) runs its own code. The factory and
every search run on one thread of their own, in order (a retriever may hold objects bound to the
thread that made them, such as a SQLite connection); a search that raises, or that has not
returned within the backend's `timeout`, stops the run with an error naming the backend, the
query and where it failed.
"""

from __future__ import annotations

import importlib
import numbers
import os
import queue
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any

from cce_relevance.errors import CceError
from cce_relevance.retrieval.hit import Hit, SearchFn
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.external import DEFAULT_TIMEOUT, AnswerFault, AnswerReader, failure
from cce_relevance.strings import escape_unprintable, quoted

RESULT_FIELDS = ("file_path", "start_line", "end_line", "kind", "score")
_MESSAGE_CHARS = 300


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class PythonRetriever:
    """A factory to import (`module:attribute`, the attribute possibly dotted) from `cwd` (the
    config file's directory), called with the corpus directory and `options` (the backend table)."""

    target: str
    cwd: str
    timeout: float = DEFAULT_TIMEOUT
    options: Mapping[str, Any] = field(default_factory=_empty, compare=False)


def _where(exc: BaseException, cwd: str) -> str:
    """` (at path:line, in function)` for the innermost frame of `exc`'s traceback in a file, the
    path relative to `cwd` when it lies inside; '' without one."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _machinery(f.filename)]
    if not frames:  # raised by the import machinery itself (a module not found)
        return ""
    frame = frames[-1]
    path = frame.filename
    relative = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    shown = path if relative.startswith("..") else relative
    return f" (at {escape_unprintable(shown)}:{frame.lineno}, in {escape_unprintable(frame.name)})"


_IMPORTLIB = os.path.dirname(importlib.__file__ or "") + os.sep


def _machinery(path: str) -> bool:
    """Frames of the import system and of this module: never where the team's code went wrong."""
    return path.startswith("<") or path.startswith(_IMPORTLIB) or path == __file__


def _raised(exc: BaseException, cwd: str) -> str:
    text = escape_unprintable(str(exc))
    text = text[:_MESSAGE_CHARS] + "…" if len(text) > _MESSAGE_CHARS else text
    return f"{type(exc).__name__}{': ' + text if text else ''}{_where(exc, cwd)}"


class _Thread:
    """One thread running the calls handed to it, in order; `call` waits at most `timeout`
    seconds (None: as long as it takes) for each."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue[tuple[bool, Any]]] | None] = (
            queue.Queue()
        )
        self._thread = threading.Thread(
            target=self._serve, name=f"cce-relevance-retriever {name}", daemon=True
        )
        self._thread.start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            work, answer = job
            try:
                answer.put((True, work()))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                answer.put((False, exc))

    def call(self, work: Callable[[], Any], timeout: float | None) -> Any:
        answer: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._jobs.put((work, answer))
        ok, value = answer.get(timeout=timeout)  # queue.Empty past the timeout
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        self._jobs.put(None)


def _imported(name: str, spec: PythonRetriever, before: set[str]) -> Callable[..., Any]:
    """The factory (`before`: the modules loaded before, whose new ones are forgotten on an error)."""
    module_name, _, attribute = spec.target.partition(":")
    sys.path.insert(0, spec.cwd)
    importlib.invalidate_caches()
    try:
        module: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - whatever the module's own code raises
        _forget(before, spec.cwd)
        raise CceError(
            f"backend {quoted(name)}: could not import {quoted(module_name)} from {quoted(spec.cwd)}: "
            f"{_raised(exc, spec.cwd)}"
        ) from None
    finally:
        if spec.cwd in sys.path:
            sys.path.remove(spec.cwd)
    factory = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            _forget(before, spec.cwd)
            raise CceError(
                f"backend {quoted(name)}: {quoted(module_name)} has no attribute {quoted(attribute)}"
            )
        factory = getattr(factory, part)
    if not callable(factory):
        _forget(before, spec.cwd)
        raise CceError(f"backend {quoted(name)}: {quoted(spec.target)} is not callable")
    return factory


def _forget(before: set[str], cwd: str) -> None:
    """Drop from `sys.modules` the modules loaded since `before` whose code lies under `cwd`."""
    root = os.path.realpath(cwd) + os.sep
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        if isinstance(module, ModuleType) and _lies_under(module, root):
            del sys.modules[name]
    importlib.invalidate_caches()


def _lies_under(module: ModuleType, root: str) -> bool:
    places = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
    return any(isinstance(p, str) and os.path.realpath(p).startswith(root) for p in places)


def _number(value: Any) -> Any:
    """numpy's (and any other `numbers`) integers and reals as Python's; anything else as it is."""
    if isinstance(value, bool) or type(value) in (int, float):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _result(item: Any) -> Any:
    """A result as the JSON object a `cce.retriever/v1` answer would carry."""
    if isinstance(item, Mapping):
        return {key: _number(value) for key, value in item.items()}
    if any(hasattr(item, key) for key in RESULT_FIELDS) and not isinstance(item, (str, bytes)):
        return {key: _number(getattr(item, key)) for key in RESULT_FIELDS if hasattr(item, key)}
    return item


def answer_of(results: Any, query_id: str) -> dict[str, Any]:
    """What `search` returned, as an answer for `AnswerReader.answer_hits`: a list or tuple (or
    other iterable that is not text or a mapping) of results; anything else is left for the
    checks to name."""
    if not isinstance(results, (str, bytes, Mapping)) and hasattr(results, "__iter__"):
        results = [_result(item) for item in results]
    return {"id": query_id, "results": results}


@contextmanager
def open_python(name: str, spec: PythonRetriever, index: Index, corpus: str) -> Iterator[SearchFn]:
    """The search function of an in-process retriever over `index` (the corpus directory `corpus`)."""
    before = set(sys.modules)
    factory = _imported(name, spec, before)
    thread = _Thread(name)
    answers = AnswerReader(index)
    try:
        options = {key: value for key, value in spec.options.items()}
        try:
            retriever = thread.call(lambda: factory(corpus, options), None)
        except Exception as exc:  # noqa: BLE001 - the team's code
            raise CceError(
                f"backend {quoted(name)}: {quoted(spec.target)} raised {_raised(exc, spec.cwd)}"
            ) from None
        method = getattr(retriever, "search", None)
        if not callable(method):
            raise CceError(
                f"backend {quoted(name)}: {quoted(spec.target)} returned {_kind(retriever)}, "
                "not an object with a search(query, k) method"
            )

        def search(query: str, k: int, query_id: str = "") -> list[Hit]:
            try:
                results = thread.call(lambda: method(query, k), spec.timeout)
            except queue.Empty:
                raise failure(name, query_id, f"no results within {spec.timeout:g} seconds") from None
            except Exception as exc:  # noqa: BLE001 - the team's code
                raise failure(name, query_id, f"search raised {_raised(exc, spec.cwd)}") from None
            try:
                return answers.answer_hits(answer_of(results, query_id), query_id, k)
            except AnswerFault as fault:
                raise failure(name, query_id, str(fault)) from None

        yield search
        close = getattr(retriever, "close", None)
        if callable(close):
            try:
                thread.call(close, spec.timeout)
            except queue.Empty:
                pass  # its thread is a daemon: it ends with the process
            except Exception as exc:  # noqa: BLE001 - the team's code
                raise CceError(f"backend {quoted(name)}: close() raised {_raised(exc, spec.cwd)}") from None
    finally:
        thread.stop()
        _forget(before, spec.cwd)


def _kind(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"
