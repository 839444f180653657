"""Unlabeled hits: results in a case's top N that match none of its anchors, for a person to judge.

Every metric counts a result that matches no anchor as not relevant, though often nobody looked
at it: the label set names what its author knew of. `validate --unjudged` lists, per case, the
top hits of each backend that match no anchor of `expected` nor of `irrelevant` (the results a
reviewer already rejected), most-retrieved first: the hits several backends agree on are the
likeliest answers nobody labeled. Each is named by the anchor that would label it (its symbol,
`path::Name`, where the definition has a unique one; else its kind and lines), so the listing is
also a review form: a reviewer marks each line `y` (relevant: add it to `expected`) or `n` (not
relevant: add it to `irrelevant`), and `review_edits` turns the marked lines into edits of the
fixture file, which `validate --unjudged --suggest --accept FILE` prints as a patch.

The review form is line based and plain text: `MARK "case id" "anchor"  # comment`, the id and
the anchor written as JSON strings (so any id reads back exactly), `?` for a line not decided.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchors import Anchor, AnchorError, parse_anchor
from cce_relevance.evaluation.backend_runs import evaluated_backends
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.prepared import prepare_check
from cce_relevance.evaluation.proposals.symbols import definition_anchor
from cce_relevance.evaluation.run_corpus import query_embedder, warn_on_stderr
from cce_relevance.evaluation.run_options import DEFAULT_OPTIONS, RunOptions
from cce_relevance.evaluation.selection import selected_backends
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.evaluation.symbol_anchors import bind_symbols
from cce_relevance.evaluation.validation import Validation
from cce_relevance.input_files import open_input
from cce_relevance.retrieval.chunking.chunk import MODULE
from cce_relevance.retrieval.chunking.symbols import CorpusSymbols
from cce_relevance.retrieval.hit import Hit

UNDECIDED, RELEVANT, NOT_RELEVANT = "?", "y", "n"
_MARKS = {
    UNDECIDED: None,
    RELEVANT: "expected",
    NOT_RELEVANT: "irrelevant",
    "+": "expected",
    "-": "irrelevant",
}


@dataclass(frozen=True)
class UnjudgedHit:
    """One result of a case that no anchor labels: where it is, the anchor that would name it, and
    the rank each backend that retrieved it gave it (backend order)."""

    anchor: str
    file_path: str
    start_line: int
    end_line: int
    kind: str
    ranks: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class UnjudgedCase:
    case: Case
    hits: tuple[UnjudgedHit, ...]


def labeled(case: Case, hit: Hit) -> bool:
    """Whether an anchor of the case (`expected` or `irrelevant`) matches the hit."""
    span = (hit.file_path, hit.kind, hit.start_line, hit.end_line)
    return any(a.matches(*span) for a in (*case.anchors, *case.irrelevant))


def unjudged_hits(reports: Sequence[BackendReport], symbols: CorpusSymbols) -> tuple[UnjudgedCase, ...]:
    """Per case (fixture order), the hits of every backend's report that no anchor labels, most
    backends first, then best rank, then the earliest backend to rank it so, then place.

    The reports' cases are the set's (bound to the corpus, read with their `irrelevant` labels),
    searched as deep as the listing goes."""
    out = []
    for i, first in enumerate(reports[0].cases if reports else ()):
        found: dict[tuple[str, int, int, str], list[tuple[str, int, Hit]]] = {}
        for report in reports:
            for hit in report.cases[i].hits:
                if not labeled(first.case, hit):
                    key = (hit.file_path, hit.start_line, hit.end_line, hit.kind)
                    found.setdefault(key, []).append((report.backend, hit.rank, hit))
        order = {r.backend: n for n, r in enumerate(reports)}
        ranked = sorted(
            found.items(),
            key=lambda item: (
                -len(item[1]),
                min(rank for _, rank, _ in item[1]),
                min(order[b] for b, _, _ in item[1]),
                item[0],
            ),
        )
        hits = tuple(
            UnjudgedHit(
                _anchor_of(seen[0][2], symbols),
                *key[:3],
                key[3],
                tuple((b, rank) for b, rank, _ in seen),
            )
            for key, seen in ranked
        )
        out.append(UnjudgedCase(first.case, hits))
    return tuple(out)


def _anchor_of(hit: Hit, symbols: CorpusSymbols) -> str:
    """The anchor that labels `hit`: its definition's symbol anchor when unique in its file, the
    whole file's `path#module` for a whole-file chunk, else its kind and lines."""
    if hit.kind == MODULE:
        return f"{hit.file_path}#{MODULE}"
    definitions = symbols.definitions(hit.file_path)
    for d in definitions:
        if d.chunk_id == hit.chunk_id or (d.start_line, d.end_line, d.kind) == (
            hit.start_line,
            hit.end_line,
            hit.kind,
        ):
            named = definition_anchor(hit.file_path, definitions, d)
            if named is not None:
                return named
            break
    return Anchor(hit.file_path, hit.kind or None, (hit.start_line, hit.end_line)).display()


# --- the review form --------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """One decided line of a review: add `anchor` to the case's `field` (`expected`/`irrelevant`)."""

    source_line: int
    case_id: str
    anchor: str
    field: str


def parse_review(text: str, source: str) -> list[Verdict]:
    """The decided lines of a review form (`y`/`+` relevant, `n`/`-` not relevant; `?` lines,
    blank lines and `#` comments are skipped). A line that is none of these is an input error
    naming `source` and the line."""
    verdicts = []
    decoder = json.JSONDecoder()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        mark = line[0]
        if mark not in _MARKS:
            raise CceError(
                f"{source}:{number}: expected a line starting y, n or ? (then the case id and the "
                f"anchor as JSON strings), got {line[:40]!r}"
            )
        try:
            case_id, end = decoder.raw_decode(line, _skip_space(line, 1))
            anchor, end = decoder.raw_decode(line, _skip_space(line, end))
        except json.JSONDecodeError:
            raise CceError(f'{source}:{number}: expected `{mark} "case id" "anchor"`') from None
        rest = line[end:].strip()
        if not isinstance(case_id, str) or not isinstance(anchor, str) or (rest and not rest.startswith("#")):
            raise CceError(f'{source}:{number}: expected `{mark} "case id" "anchor"`, then only a # comment')
        field = _MARKS[mark]
        if field is None:
            continue
        try:
            parse_anchor(anchor)
        except AnchorError as exc:
            raise CceError(f"{source}:{number}: {exc.message}") from None
        verdicts.append(Verdict(number, case_id, anchor, field))
    return verdicts


def _skip_space(line: str, at: int) -> int:
    while at < len(line) and line[at] in " \t":
        at += 1
    return at


@dataclass(frozen=True)
class LabelEdit:
    """Anchors to add to one fixture line: to `expected` and to `irrelevant`, in review order."""

    line: int
    case_id: str
    expected: tuple[str, ...]
    irrelevant: tuple[str, ...]


def review_edits(verdicts: Sequence[Verdict], cases: Sequence[Case], source: str) -> list[LabelEdit]:
    """The edits the verdicts make, per fixture line (fixture order). A verdict naming no case, or
    an id several cases share, is an input error; an anchor the case has already (in either
    field), or that two lines both decide, is added once, to the field the first decided."""
    by_id: dict[str, list[Case]] = {}
    for case in cases:
        by_id.setdefault(case.id, []).append(case)
    added: dict[int, dict[str, list[str]]] = {}
    decided: dict[tuple[int, str], str] = {}
    for v in verdicts:
        found = by_id.get(v.case_id, [])
        if len(found) != 1:
            problem = "names no case of the set" if not found else "names several cases (duplicate ids)"
            raise CceError(f"{source}:{v.source_line}: case id {json.dumps(v.case_id)} {problem}")
        case = found[0]
        wanted = parse_anchor(v.anchor)
        if wanted in case.anchors or wanted in case.irrelevant or (case.line, v.anchor) in decided:
            continue
        decided[case.line, v.anchor] = v.field
        added.setdefault(case.line, {"expected": [], "irrelevant": []})[v.field].append(v.anchor)
    ids = {c.line: c.id for c in cases}
    return [
        LabelEdit(line, ids[line], tuple(fields["expected"]), tuple(fields["irrelevant"]))
        for line, fields in sorted(added.items())
    ]


def edited_lines(text: str, edits: Sequence[LabelEdit]) -> list[str]:
    """The fixture file's lines (kept ends) with each edit's anchors appended to its line's arrays.

    An edited line is written again as compact JSON with its keys in their order (`irrelevant`
    placed after `expected` when it is new); every other line keeps its bytes."""
    lines = text.split("\n")
    ends = ["\n"] * (len(lines) - 1) + [""]
    for edit in edits:
        line = lines[edit.line - 1]
        body, cr = (line[:-1], "\r") if line.endswith("\r") else (line, "")
        lines[edit.line - 1] = _edited(body, edit) + cr
    return [line + end for line, end in zip(lines, ends, strict=True) if line + end]


def _edited(line: str, edit: LabelEdit) -> str:
    value: dict[str, object] = json.loads(line)
    out: dict[str, object] = {}
    for key, item in value.items():
        out[key] = item
        if key == "expected":
            out[key] = [*_strings(item), *edit.expected]
            if edit.irrelevant and "irrelevant" not in value:
                out["irrelevant"] = list(edit.irrelevant)
        elif key == "irrelevant":
            out[key] = [*_strings(item), *edit.irrelevant]
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def _strings(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else [value]


def counts(cases: Sequence[UnjudgedCase]) -> Mapping[str, int]:
    """How many cases have unlabeled hits, and how many such hits there are."""
    return {
        "cases": sum(1 for c in cases if c.hits),
        "hits": sum(len(c.hits) for c in cases),
    }


@dataclass(frozen=True)
class Unjudged:
    """`validate` with the hits nobody labeled: the anchor findings, the backends searched, how
    deep (None: each case's k), and per case the hits no anchor labels (evaluation/unjudged.py)."""

    validation: Validation
    backends: tuple[str, ...]
    top: int | None
    cases: tuple[UnjudgedCase, ...]


def unjudged(
    fixtures_path: str,
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    dir: str | None = None,
    top: int | None = None,
) -> Unjudged:
    """`validate`, and every case's top `top` hits (default: its k) at each of `options.backends`
    (default: the built-in ones) that match none of its anchors, `expected` or `irrelevant`."""
    if top is not None and top < 1:
        raise CceError(f"the hits listed must be at least 1, got {top}")
    names = selected_backends(options.backends, options.config)
    check = prepare_check(fixtures_path, options, dir, True)
    cases = bind_symbols(check.fixtures, check.symbols).cases
    if top is not None:
        cases = tuple(dataclasses.replace(c, k=top) for c in cases)
    embed = query_embedder(check.index, warn_on_stderr)
    weights = LineWeights.of_index(check.index)
    corpus = os.path.abspath(check.validation.corpus)
    reports = evaluated_backends(
        names, options.config, check.index, embed, cases, weights, None, options.indexing, corpus=corpus
    )
    return Unjudged(check.validation, tuple(names), top, unjudged_hits(reports, check.symbols))


def read_review(path: str) -> tuple[str, str]:
    """A filled-in review form's text, and how errors name it: the file at `path`, or standard
    input for `-`."""
    try:
        if path == "-":
            return sys.stdin.read(), "<stdin>"
        with open_input(path, "r", encoding="utf-8") as fh:
            return fh.read(), path
    except (OSError, UnicodeDecodeError) as exc:
        raise CceError(f"could not read review {path}: {getattr(exc, 'strerror', None) or exc}") from None


@dataclass(frozen=True)
class Accepted:
    """A filled-in review form (`unjudged`) as edits of the fixture file, and as a patch."""

    edits: tuple[LabelEdit, ...]
    patch: str
