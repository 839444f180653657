"""The words of a commit: its subject as a query, and the rules that find a subject says nothing.

A commit or pull-request title says in a person's words what was wanted — the one source of
human-written queries with known answers every repository has. Its decorations are not part of
the request and are taken off:

* a conventional-commit type or an area before a colon, repeated (`fix(client): `,
  `docs/ssl: `, `cli: parser: `): it names where the change is, which the retriever is to find;
* bracketed tags at the start (`[docs]`, `[WIP]`) and `[skip ci]` anywhere;
* issue and pull-request references (`#123`, `(#123)`, `GH-123`, `owner/repo#123`, `fixes #12`,
  issue URLs) and ticket keys (`PROJ-123`);
* in the body's first paragraph (opt-in), the trailers (`Signed-off-by:`, `Co-authored-by:`).

What is left must still ask for something: at least `MIN_TOKENS` words, of which at least
`MIN_CONTENT_WORDS` are neither among the commonest English words nor the vocabulary of
housekeeping commits ("fix typo", "update deps", "bump version", "minor cleanup").
"""

from __future__ import annotations

import re

from cce_relevance.evaluation.proposals.texts import COMMON_WORDS, MIN_TOKENS
from cce_relevance.retrieval.tokens import tokenize

MIN_CONTENT_WORDS = 2
MAX_WORDS = 40

_PREFIX = re.compile(r"^[\w./*{},-]{1,40}(?:\([^()]{0,40}\))?!?:\s+")
_TAG = re.compile(r"^\[[^\[\]]{1,30}\]\s*")
_SKIP_CI = re.compile(r"\[(?:skip ci|ci skip|no ci|skip actions)\]", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s)\]>]+")
_REFERENCE = re.compile(
    r"(?:\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|see|for|in)\s+)?"
    r"(?:\(\s*)?(?:[\w.-]+/[\w.-]+)?(?:#|\bGH-|\bgh-)\d+(?:\s*\))?",
    re.IGNORECASE,
)
_TICKET = re.compile(r"\[?\b[A-Z][A-Z0-9]{1,9}-\d+\b\]?:?")
_PULL_REQUEST = re.compile(r"\(#(\d+)\)\s*$")
_TRAILER = re.compile(r"^[A-Za-z][\w-]*(?: [\w-]+)?: \S")
_EMPTY_BRACKETS = re.compile(r"[(\[]\s*(?:(?:see|cf\.?|refs?|for|in|and|,)\s*)*[)\]]", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_EDGES = " \t-–—:;,.|/"

BOT_NAME = re.compile(
    r"\[bot\]|^(?:dependabot|renovate|greenkeeper|snyk-bot|pre-commit-ci|github-actions|mergify|"
    r"imgbot|allcontributors|pyup-bot|codecov|deepsource-autofix|web-flow-bot)\b",
    re.IGNORECASE,
)
_REVERT = re.compile(r'^(?:revert\b|reapply\b|revert:|"?revert ")', re.IGNORECASE)
_REVERTS_BODY = re.compile(r"^This reverts commit [0-9a-f]{7,40}", re.MULTILINE)

_COMMON = COMMON_WORDS | frozenset("into out up down over via so also now only just".split())
_HOUSEKEEPING = frozenset(
    "fix fixes fixed fixing update updates updated updating change changes changed minor typo typos "
    "cleanup clean up refactor refactoring refactored wip tweak tweaks misc version versions bump "
    "bumped bumps release released releases prepare test tests testing doc docs documentation lint "
    "linting format formatting formatted style stuff improve improved improvements improvement "
    "small code more add added adds adding remove removed removes removing readme changelog merge "
    "merged branch master main initial commit todo work progress try again things various file "
    "files comment comments whitespace pep8 flake8 black ruff isort mypy ci build deps dependency "
    "dependencies requirements setup config configuration md txt rst py yml yaml toml json lock "
    "upgrade upgraded upgrades python package packages".split()
)


def pull_request(subject: str) -> int | None:
    """The number of the pull request a squash-merged commit came from: `Title (#123)` → 123."""
    found = _PULL_REQUEST.search(subject)
    return int(found.group(1)) if found else None


def query_words(subject: str) -> str:
    """The subject without its decorations (module docstring), one line of single spaces."""
    text = _SKIP_CI.sub(" ", subject)
    text = _URL.sub(" ", text)
    text = _REFERENCE.sub(" ", text)
    text = _TICKET.sub(" ", text)
    text = _EMPTY_BRACKETS.sub(" ", text)  # what held only references: `(see #12)`, `(#3, #4)`
    text = _SPACES.sub(" ", text).strip(_EDGES)
    while True:  # prefixes and tags, repeated: `[docs] cli: parser: `
        stripped = _TAG.sub("", _PREFIX.sub("", text, count=1), count=1).strip(_EDGES)
        if stripped == text:
            break
        text = stripped
    words = text.split()
    return " ".join(words[:MAX_WORDS])


def first_paragraph(body: str) -> str:
    """The body's first paragraph as one line, without trailers, references and decorations; ''
    when it has none that reads as prose (a list, a code block, only trailers)."""
    paragraph: list[str] = []
    for line in body.strip().splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    kept = [line for line in paragraph if not _TRAILER.match(line)]
    if not kept or kept[0].startswith(("* ", "- ", "```", ">", "|")):
        return ""
    text = _EMPTY_BRACKETS.sub(" ", _URL.sub(" ", _REFERENCE.sub(" ", _TICKET.sub(" ", " ".join(kept)))))
    return " ".join(_SPACES.sub(" ", text).strip(_EDGES).split()[:MAX_WORDS])


def is_bot(name: str, email: str) -> bool:
    """Whether the author is an automation account (`dependabot[bot]`, `renovate`, …)."""
    return bool(BOT_NAME.search(name) or BOT_NAME.search(email.split("@")[0]))


def is_revert(subject: str, body: str) -> bool:
    """`Revert "…"`, `revert: …`, `Reapply …`, or a body saying `This reverts commit …`."""
    return bool(_REVERT.match(subject.strip()) or _REVERTS_BODY.search(body))


def content_words(query: str) -> list[str]:
    """The query's words that say something: two letters or more, not a number, not among the
    commonest English words nor the housekeeping vocabulary."""
    return [
        t
        for t in tokenize(query)
        if len(t) > 1 and not t.isdigit() and t not in _COMMON and t not in _HOUSEKEEPING
    ]


def too_short(query: str) -> bool:
    return len(tokenize(query)) < MIN_TOKENS


def too_generic(query: str) -> bool:
    return len(content_words(query)) < MIN_CONTENT_WORDS
