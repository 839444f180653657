"""Fixture cases from a repository's history: what a commit asked for, and where the answer was.

`bootstrap` draws its queries from the code's own names and doc lines, so the words of a query
are the words of its answer (the vocabulary leak that makes synthetic sets too easy). A commit's
subject — or a merged pull request's title, which a squash merge makes the subject, `Title (#123)`
— is a person's request in their own words, and the definitions the commit changed are where
the answer lived. `mine` walks a range of commits, newest first, and makes one case per commit
that survives the rules below: the query is the subject with its decorations taken off
(`subjects.py`), the anchors are symbol anchors (`path::Name`) of the innermost definitions whose
lines the commit changed, read at the commit's *parent* — what a retriever should have found
before the change was made. Each case's `note` names the commit.

A commit is left out, by the first rule that applies, and counted under it (`SKIP_RULES`, in
order): a merge; a root commit; a bot's; a revert; a subject that after cleaning is too short or
says nothing but housekeeping ("fix typo", "update deps"); a commit that changes no file of the
corpus, or only test, vendored, generated or `--skip`ped files (the `bootstrap` file rules); one
that only reformats (its files are equal without whitespace, with one quote style and without
trailing commas); one whose changed lines touch no named definition at the parent (only imports
or new code); one touching more than `max_definitions` definitions (too diffuse to say where the
answer is); one whose definitions no longer exist in the corpus the set is scored at (the tree
in DIR), or share their name there with another definition (overloads, `if TYPE_CHECKING:`
twins), so that no anchor names one of them; one whose query text a newer case has already;
one whose text the secret redactor would change.

The walk is deterministic for a repository state and range (git's order) and stops once
`limit` cases are kept.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cce_relevance import schemas
from cce_relevance.evaluation.history import DEFAULT_MAX_DEFINITIONS, subjects
from cce_relevance.evaluation.history.git_log import Commit, FileChange, Repository
from cce_relevance.evaluation.proposals.file_rules import FileRules
from cce_relevance.evaluation.proposals.symbols import definition_anchor
from cce_relevance.retrieval.chunking.packs import PackSet
from cce_relevance.retrieval.chunking.symbols import Definition, file_definitions
from cce_relevance.retrieval.corpus.redact import redact

SKIP_RULES = (
    "merge commit",
    "root commit",
    "bot author",
    "revert",
    "subject too short",
    "subject too generic",
    "no file of the corpus",
    "test files only",
    "vendored or generated files only",
    "skipped files only",
    "formatting only",
    "no definition changed at the parent",
    "too many definitions",
    "gone from the scored tree",
    "ambiguous in the scored tree",
    "same query as a newer case",
    "secret in the text",
)
_QUOTES = str.maketrans("'", '"')
_TRAILING_COMMA = re.compile(r",(?=[)\]}])")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class HistoryCase:
    """One kept commit: its case id, query and anchors, and what the note says of it."""

    id: str
    query: str
    anchors: tuple[str, ...]
    commit: Commit
    pull_request: int | None
    gone: int  # changed definitions left out: not in the scored tree
    ambiguous: int = 0  # changed definitions left out: their name names several there

    @property
    def note(self) -> str:
        where = f"PR #{self.pull_request}, commit" if self.pull_request is not None else "commit"
        parent = self.commit.parents[0][:12]
        left = ""
        if self.gone:
            left += (
                f"; {self.gone} more changed definition{'s' if self.gone > 1 else ''} not in the scored tree"
            )
        if self.ambiguous:
            left += (
                f"; {self.ambiguous} more changed definition{'s' if self.ambiguous > 1 else ''} "
                "named ambiguously in the scored tree"
            )
        return (
            f"history: {where} {self.commit.sha[:12]} ({self.commit.date[:10]}) "
            f"{json.dumps(self.commit.subject, ensure_ascii=False)}; anchors as at its parent {parent}{left}"
        )


@dataclass(frozen=True)
class HistoryProposal:
    """The kept cases, newest first, and the yield: commits seen, and left out per rule."""

    cases: tuple[HistoryCase, ...]
    seen: int
    skipped: dict[str, int]  # by rule, in SKIP_RULES order, rules that dropped none left out
    stopped: bool  # the walk stopped at `limit` cases, before the end of the range

    def fixture_text(self, corpus: str) -> str:
        """The NDJSON set: a header naming `corpus` (relative to the file), then one line per case."""
        lines = [_json({"schema": schemas.FIXTURES, "corpus": corpus})]
        lines += [
            _json({"id": c.id, "query": c.query, "expected": list(c.anchors), "note": c.note})
            for c in self.cases
        ]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class HistoryOptions:
    revisions: str = "HEAD"
    since: str | None = None
    until: str | None = None
    limit: int = 50
    with_body: bool = False
    max_definitions: int = DEFAULT_MAX_DEFINITIONS


DEFAULT_HISTORY = HistoryOptions()  # the whole history reachable from HEAD, 50 cases at most


def mine(
    repo: Repository,
    options: HistoryOptions,
    rules: FileRules,
    packs: PackSet,
    scored: Callable[[str], int],
) -> HistoryProposal:
    """Cases from the commits of `options.revisions` in the corpus at `repo.prefix` (corpus-relative
    paths are the repository's without it). `scored(anchor)` says how many definitions of the tree
    the set is scored at an anchor names (0 when it resolves to no chunk there); `rules` and
    `packs` are the ones `bootstrap` draws with."""
    skipped: Counter[str] = Counter()
    kept: list[HistoryCase] = []
    queries: set[str] = set()
    ids: set[str] = set()
    seen = 0
    stopped = False
    for commit in repo.commits(options.revisions, options.since, options.until):
        if len(kept) >= options.limit:
            stopped = True
            break
        seen += 1
        query = _query(commit, options.with_body)
        reason = _commit_rule(commit, query)
        anchors: tuple[str, ...] = ()
        gone = ambiguous = 0
        if reason is None:
            reason, anchors, gone, ambiguous = _changed_anchors(
                repo, commit, rules, packs, scored, options.max_definitions
            )
        if reason is None and query.lower() in queries:
            reason = "same query as a newer case"
        if reason is None and (redact(query) != query or any(redact(a) != a for a in anchors)):
            reason = "secret in the text"
        if reason is not None:
            skipped[reason] += 1
            continue
        number = subjects.pull_request(commit.subject)
        case = HistoryCase(_case_id(commit, number, ids), query, anchors, commit, number, gone, ambiguous)
        if redact(case.note) != case.note:
            skipped["secret in the text"] += 1
            continue
        ids.add(case.id)
        queries.add(query.lower())
        kept.append(case)
    ordered = {rule: skipped[rule] for rule in SKIP_RULES if skipped[rule]}
    return HistoryProposal(tuple(kept), seen, ordered, stopped)


def _query(commit: Commit, with_body: bool) -> str:
    query = subjects.query_words(commit.subject)
    if with_body:
        paragraph = subjects.first_paragraph(commit.body)
        if paragraph:
            query = " ".join(f"{query} {paragraph}".split()[: subjects.MAX_WORDS])
    return query


def _commit_rule(commit: Commit, query: str) -> str | None:
    """The rule that drops a commit for what it is, before its diff is read."""
    if len(commit.parents) > 1:
        return "merge commit"
    if not commit.parents:
        return "root commit"
    if subjects.is_bot(commit.author, commit.email):
        return "bot author"
    if subjects.is_revert(commit.subject, commit.body):
        return "revert"
    if subjects.too_short(query):
        return "subject too short"
    if subjects.too_generic(query):
        return "subject too generic"
    return None


def _changed_anchors(
    repo: Repository,
    commit: Commit,
    rules: FileRules,
    packs: PackSet,
    scored: Callable[[str], int],
    max_definitions: int,
) -> tuple[str | None, tuple[str, ...], int, int]:
    """The rule that drops the commit for what it changed, or None, its anchors, and how many of
    its changed definitions the scored tree no longer has, and how many it names ambiguously (an
    anchor that names several definitions would accept any of them, and does not validate)."""
    parent = commit.parents[0]
    changes = [c for c in repo.changes(parent, commit.sha) if _in_corpus(repo, c)]
    if not changes:
        return "no file of the corpus", (), 0, 0
    kept: list[tuple[FileChange, str | None, str | None]] = []
    reasons = []
    for change in changes:
        old = _corpus_path(repo, change.old_path)
        new = _corpus_path(repo, change.new_path)
        old_text = _text(repo.blob(parent, change.old_path)) if change.old_path is not None else None
        new_text = _text(repo.blob(commit.sha, change.new_path)) if change.new_path is not None else None
        path, text = (old, old_text) if old is not None else (new, new_text)
        reason = rules.skip_reason(path, text or "") if path is not None else "skipped"
        if reason is None:
            kept.append((change, old_text, new_text))
        else:
            reasons.append(reason)
    if not kept:
        if all(r == "test" for r in reasons):
            return "test files only", (), 0, 0
        if all(r == "skipped" for r in reasons):
            return "skipped files only", (), 0, 0
        return "vendored or generated files only", (), 0, 0
    if all(old is not None and new is not None and _same_tokens(old, new) for _, old, new in kept):
        return "formatting only", (), 0, 0
    changed: list[tuple[str, Sequence[Definition], Definition]] = []
    for change, old_text, new_text in kept:
        path = _corpus_path(repo, change.old_path)
        if path is None or old_text is None:
            continue
        definitions = file_definitions(path, old_text, packs)
        touched = _touched(definitions, change.old_lines)
        new_path = _corpus_path(repo, change.new_path)
        if new_text is not None and new_path is not None:
            grown = _touched(file_definitions(new_path, new_text, packs), change.new_lines)
            touched = _with_parents_of(touched, grown, definitions)
        changed += [(path, definitions, d) for d in touched]
    if not changed:
        return "no definition changed at the parent", (), 0, 0
    if len(changed) > max_definitions:
        return "too many definitions", (), 0, 0
    named = [
        a for path, definitions, d in changed if (a := definition_anchor(path, definitions, d)) is not None
    ]
    if not named:
        return "no definition changed at the parent", (), 0, 0
    found = {a: scored(a) for a in named}
    anchors = tuple(a for a, n in found.items() if n == 1)
    gone = sum(n == 0 for n in found.values())
    ambiguous = len(found) - len(anchors) - gone
    if not anchors:
        return ("ambiguous in the scored tree" if ambiguous else "gone from the scored tree"), (), 0, 0
    return None, anchors, gone, ambiguous


def _in_corpus(repo: Repository, change: FileChange) -> bool:
    return any(p is not None and p.startswith(repo.prefix) for p in (change.old_path, change.new_path))


def _corpus_path(repo: Repository, path: str | None) -> str | None:
    if path is None or not path.startswith(repo.prefix):
        return None
    return path[len(repo.prefix) :]


def _text(data: bytes | None) -> str | None:
    """A blob as text, None when it is not UTF-8 (the walker indexes no such file)."""
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _same_tokens(old: str, new: str) -> bool:
    """Whether two texts differ only in layout: whitespace, quote style, trailing commas."""
    return _normal(old) == _normal(new)


def _normal(text: str) -> str:
    return _TRAILING_COMMA.sub("", _WHITESPACE.sub("", text.translate(_QUOTES)))


def _touched(definitions: Sequence[Definition], hunks: Sequence[tuple[int, int]]) -> list[Definition]:
    """The innermost definitions holding a line the hunks replace, or an insertion point inside
    them (count 0: after line `first`), in file order."""
    found: dict[int, Definition] = {}
    for first, count in hunks:
        if count == 0:
            points = [(first, first + 1)]  # between these two lines
        else:
            points = [(line, line) for line in range(first, first + count)]
        for low, high in points:
            holding = [
                (d.end_line - d.start_line, i)
                for i, d in enumerate(definitions)
                if d.start_line <= low and high <= d.end_line
            ]
            if holding:
                _, i = min(holding)
                found[i] = definitions[i]
    return [found[i] for i in sorted(found)]


def _with_parents_of(
    touched: Sequence[Definition], grown: Sequence[Definition], definitions: Sequence[Definition]
) -> list[Definition]:
    """`touched` (definitions of the parent) and the parent's definitions of the same name and
    kind as those the commit's new lines fall in (`grown`): lines appended at the end of a body
    change that definition, though on the parent's side they are an insertion after it. A
    definition that is new in the commit has none, and adds nothing."""
    found = {id(d): d for d in touched}
    for g in grown:
        same = [d for d in definitions if g.symbol is not None and (d.symbol, d.kind) == (g.symbol, g.kind)]
        if len(same) == 1:
            found.setdefault(id(same[0]), same[0])
    return sorted(found.values(), key=definitions.index)


def _case_id(commit: Commit, number: int | None, taken: set[str]) -> str:
    base = f"pr-{number}" if number is not None else f"commit-{commit.sha[:12]}"
    return base if base not in taken else f"{base}-{commit.sha[:12]}"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
