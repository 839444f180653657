"""`.gitignore` parsing and matching as the reference walker applies them (§gitignore).

The reference does not use git's wildmatch: each line goes through ripgrep's `ignore` crate,
which compiles it with `globset` into a byte regex. Real-world files behave like git, but the
edges do not (braces are alternation, classes can match `/`, `*` and `?` count bytes, a bad
line is skipped alone, ...). To reproduce those edges this module re-derives each line's
glob the way `ignore` does, tokenises it with globset's rules and translates the tokens into a
Python byte regex with the same meaning. It does no I/O: the walker reads the files.

Matching is against the path of an entry relative to the directory holding the `.gitignore`,
as raw bytes (non-UTF-8 names included), and reports the verdict of the last line that matches.
A line whose regex could make `re` backtrack for longer than a run may (more than two `*`s, as
in `*a*a*a…b`) is matched by `glob_nfa.LinearMatcher` instead: same verdicts, linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cce_relevance.retrieval.corpus.glob_nfa import LinearMatcher, backtracking_risk

__all__ = ["GlobError", "Gitignore", "NestLimitError", "Pattern", "compile_line"]

# Rust's `char::is_whitespace` (the Unicode White_Space property), which `trim_end` uses.
# Python's `str.rstrip()` would also strip U+001C..U+001F, which Rust keeps.
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# regex-syntax (the Rust regex parser) rejects a pattern nested deeper than this; globset then
# fails to build the whole set, and `ignore` replaces that `.gitignore` with an empty one.
_NEST_LIMIT = 250

# Every byte that is not an ASCII letter or digit is written as `\xNN`, which means that byte
# both inside and outside a class; this mirrors globset writing non-ASCII bytes as `\xNN`.
_ESCAPED = [bytes([b]) if chr(b).isascii() and chr(b).isalnum() else b"\\x%02x" % b for b in range(256)]


class GlobError(ValueError):
    """A `.gitignore` line that globset rejects; the reference skips that line only."""


class NestLimitError(Exception):
    """A valid line whose regex nests deeper than the Rust parser allows.

    Unlike a GlobError this voids the whole file: globset fails to build the file's set.
    """


@dataclass(frozen=True, slots=True)
class _Frag:
    """A piece of translated regex and the shape the Rust parser would give it.

    `items` is how many nodes it adds to the enclosing concatenation and `height` how deep it
    nests (regex-syntax counts groups, alternations, concatenations, repetitions and classes).
    Both are tracked only to apply `_NEST_LIMIT` exactly as the reference does.
    """

    regex: bytes
    items: int
    height: int


_EMPTY = _Frag(b"", 0, 0)

# Token kinds of globset's tokenizer.
_LITERAL, _ANY, _STAR, _REC_PREFIX, _REC_SUFFIX, _REC_MIDDLE, _CLASS, _ALTERNATES = range(8)

# `literal_separator` is on, so `?` and `*` never cross `/`; the recursive forms are `**/`,
# `/**` and `/**/`. The regex is compiled with DOTALL, like globset's.
_FIXED_FRAGS = {
    _ANY: _Frag(b"[^/]", 1, 1),
    _STAR: _Frag(b"[^/]*", 1, 2),
    _REC_PREFIX: _Frag(b"(?:/?|.*/)", 1, 4),
    _REC_SUFFIX: _Frag(b"/.*", 2, 1),
    _REC_MIDDLE: _Frag(b"(?:/|/.*/)", 1, 4),
}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: int
    frag: _Frag
    char: str = ""  # the character of a literal token


def _literal(char: str) -> _Token:
    raw = char.encode("utf-8", "surrogatepass")
    return _Token(_LITERAL, _Frag(b"".join(_ESCAPED[b] for b in raw), len(raw), 0), char)


def _fixed(kind: int) -> _Token:
    return _Token(kind, _FIXED_FRAGS[kind])


def _concat(tokens: list[_Token]) -> _Frag:
    frags = [t.frag for t in tokens]
    return _Frag(
        b"".join(f.regex for f in frags),
        sum(f.items for f in frags),
        max((f.height for f in frags), default=0),
    )


def _class(negated: bool, ranges: list[tuple[str, str]]) -> _Token:
    """A `[...]` class. Non-ASCII members are written byte by byte, as globset does, so they
    never match as whole characters (`[é]` matches the single byte 0xC3 or 0xA9)."""
    parts = [b"[^" if negated else b"["]
    items = 0
    for start, end in ranges:
        first = start.encode("utf-8", "surrogatepass")
        parts.append(b"".join(_ESCAPED[b] for b in first))
        items += len(first)
        if start != end:
            last = end.encode("utf-8", "surrogatepass")
            parts.append(b"-" + b"".join(_ESCAPED[b] for b in last))
            items += len(last) - 1  # the two bytes around `-` form one range item
    parts.append(b"]")
    return _Token(_CLASS, _Frag(b"".join(parts), 1, 2 if items > 1 else 1))


def _alternates(branches: list[list[_Token]]) -> _Token:
    """`{a,b}`. Empty alternatives are dropped; a group left with none matches the empty string.

    The fragment is built when the group closes, so deep nesting never recurses.
    """
    parts = [frag for frag in map(_concat, branches) if frag.regex]
    if not parts:
        return _Token(_ALTERNATES, _EMPTY)
    heights = [f.height if f.items == 1 else f.height + 1 for f in parts]
    height = 1 + heights[0] if len(parts) == 1 else 2 + max(heights)
    if height >= _NEST_LIMIT:
        # Already too deep once the top-level concatenation is added: the line will void its
        # file (see `compile_line`), so skip building ever larger regex text.
        return _Token(_ALTERNATES, _Frag(b"(?:)", 1, height))
    if len(parts) == 1:
        # A lone alternative needs no group in Python; the Rust regex still has one.
        return _Token(_ALTERNATES, _Frag(parts[0].regex, 1, height))
    return _Token(_ALTERNATES, _Frag(b"(?:" + b"|".join(f.regex for f in parts) + b")", 1, height))


class _GlobParser:
    """globset's tokenizer (with `literal_separator` and backslash escapes on)."""

    def __init__(self, glob: str) -> None:
        self._glob = glob
        self._pos = 0
        self._prev: str | None = None
        self._cur: str | None = None
        self._group_starts: list[int] = []  # index into `_branches` where each open `{` began
        self._branches: list[list[_Token]] = [[]]  # tokens go to the last branch

    def parse(self) -> list[_Token]:
        while (char := self._bump()) is not None:
            if char == "?":
                self._push(_fixed(_ANY))
            elif char == "*":
                self._parse_star()
            elif char == "[":
                self._parse_class()
            elif char == "{":
                self._group_starts.append(len(self._branches))
                self._branches.append([])
            elif char == "}":
                self._close_group()
            elif char == "," and self._group_starts:
                self._branches.append([])
            elif char == "\\":
                escaped = self._bump()
                if escaped is None:
                    raise GlobError("dangling '\\'")
                self._push(_literal(escaped))
            else:
                self._push(_literal(char))
        if len(self._branches) > 1:
            raise GlobError("unclosed alternate group")
        return self._branches[0]

    def _bump(self) -> str | None:
        self._prev = self._cur
        if self._pos < len(self._glob):
            self._cur = self._glob[self._pos]
            self._pos += 1
        else:
            self._cur = None
        return self._cur

    def _peek(self) -> str | None:
        return self._glob[self._pos] if self._pos < len(self._glob) else None

    def _push(self, token: _Token) -> None:
        self._branches[-1].append(token)

    def _close_group(self) -> None:
        if not self._group_starts:
            raise GlobError("unopened alternate group")
        start = self._group_starts.pop()
        token = _alternates(self._branches[start:])
        del self._branches[start:]
        self._push(token)

    def _parse_star(self) -> None:
        """`*`, or `**`, which is recursive only as a whole path segment."""
        prev = self._prev
        if self._peek() != "*":
            self._push(_fixed(_STAR))
            return
        self._bump()
        in_group = len(self._branches) > 1
        if not self._branches[-1]:
            if self._peek() in (None, "/"):
                self._bump()
                self._push(_fixed(_REC_PREFIX))
            else:
                self._push_two_stars()
            return
        if prev != "/" and (not in_group or prev not in (",", "{")):
            self._push_two_stars()
            return
        following = self._peek()
        if following is None:
            self._bump()
            is_suffix = True
        elif following in (",", "}") and in_group:
            is_suffix = True
        elif following == "/":
            self._bump()
            is_suffix = False
        else:
            self._push_two_stars()
            return
        # The `/` before `**` (or a recursive token it follows) becomes part of the new token.
        replaced = self._branches[-1].pop()
        if replaced.kind in (_REC_PREFIX, _REC_SUFFIX):
            self._push(replaced)
        else:
            self._push(_fixed(_REC_SUFFIX if is_suffix else _REC_MIDDLE))

    def _push_two_stars(self) -> None:
        self._push(_fixed(_STAR))
        self._push(_fixed(_STAR))

    def _parse_class(self) -> None:
        """`[...]`: `!`/`^` negate; `]` or `-` first is a member; backslash is a plain member."""
        negated = self._peek() in ("!", "^")
        if negated:
            self._bump()
        ranges: list[tuple[str, str]] = []
        first = True
        in_range = False
        while True:
            char = self._bump()
            if char is None:
                raise GlobError("unclosed character class")
            if char == "]" and not first:
                break
            if char == "-" and not first and not in_range:
                in_range = True
            elif in_range:
                start = ranges[-1][0]
                if char < start:
                    raise GlobError(f"invalid range {start!r}-{char!r}")
                ranges[-1] = (start, char)
                in_range = False
            else:
                ranges.append((char, char))
            first = False
        if in_range:
            ranges.append(("-", "-"))
        self._push(_class(negated, ranges))


def _uses_basename(tokens: list[_Token]) -> bool:
    """Whether globset would match this glob by the candidate's basename or extension.

    globset picks a matching strategy per glob (first that applies: basename literal, whole
    literal, extension, prefix, suffix, required extension, regex). All agree with the regex
    except on a candidate made only of dots (a file `...` next to its `.gitignore`): globset
    sees no basename there, so the basename and extension strategies never match it.
    """
    kinds = [t.kind for t in tokens]
    literal = [t.kind == _LITERAL for t in tokens]
    if kinds[:1] == [_REC_PREFIX] and len(tokens) > 1 and all(literal[1:]):
        if all(t.char != "/" for t in tokens[1:]):
            return True  # basename literal `**/name`
        return False  # component suffix `**/a/b`
    if all(literal):
        return False  # whole literal
    if (
        kinds[:2] == [_REC_PREFIX, _STAR]
        and len(tokens) > 2
        and tokens[2].char == "."
        and all(literal[2:])
        and all(t.char not in "./" for t in tokens[3:])
    ):
        return True  # extension `**/*.ext`
    if kinds[-1] == _REC_SUFFIX and all(literal[:-1]):
        return False  # prefix `a/b/**`
    for token in reversed(tokens):  # required extension: ends in literal `.ext`
        if token.kind != _LITERAL or token.char == "/":
            return False
        if token.char == ".":
            return True
    return False


@dataclass(frozen=True, slots=True)
class Pattern:
    """One effective `.gitignore` line."""

    line: str  # the line after trimming, as written
    glob: str  # the glob actually compiled (with the implied `**/` or `/*`)
    negated: bool  # a `!` line: a match re-includes
    dir_only: bool  # a trailing `/`: matches directories only
    regex: re.Pattern[bytes]
    uses_basename: bool  # see `_uses_basename`
    linear: LinearMatcher | None = field(default=None, compare=False)  # set when `re` could backtrack

    def fullmatch(self, path: bytes) -> bool:
        """Whether the line's glob matches all of `path`, in time linear in its length when `re`
        could backtrack."""
        return self.linear.fullmatch(path) if self.linear is not None else bool(self.regex.fullmatch(path))


def compile_line(line: str) -> Pattern | None:
    """Compile one line (already split, its `\\r\\n` or `\\n` removed).

    Returns None for blank and comment lines. Raises GlobError for a line the reference rejects
    and NestLimitError for one that makes it drop the whole file.
    """
    if line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip(_RUST_WHITESPACE)
    if not line:
        return None
    written = line
    negated = anchored = dir_only = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
    else:
        if line.startswith("!"):
            negated, line = True, line[1:]
        if line.startswith("/"):
            anchored, line = True, line[1:]
    if line.endswith("/"):
        dir_only, line = True, line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    glob = line
    if not anchored and "/" not in line and not (glob.startswith("**/") or glob == "**"):
        glob = "**/" + glob
    if glob.endswith("/**"):
        glob += "/*"  # contents only, not the directory itself
    tokens = _GlobParser(glob).parse()
    if [t.kind for t in tokens] == [_REC_PREFIX]:
        regex = b".*"
    else:
        whole = _concat(tokens)
        if whole.height + 1 > _NEST_LIMIT:  # + 1 for the top-level concatenation
            raise NestLimitError
        regex = whole.regex
    linear = LinearMatcher(regex) if backtracking_risk(regex) else None
    return Pattern(
        written, glob, negated, dir_only, re.compile(regex, re.DOTALL), _uses_basename(tokens), linear
    )


def _split_lines(data: bytes) -> list[str]:
    """The file's lines as Rust's `BufRead::lines` yields them, up to the first line that is not
    valid UTF-8 (reading stops there). A `\\r` is dropped only before a `\\n`; a BOM is kept."""
    raw_lines = data.split(b"\n")
    terminated = len(raw_lines) - 1
    if raw_lines[-1] == b"":
        raw_lines.pop()
    lines = []
    for index, raw in enumerate(raw_lines):
        if index < terminated and raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            break
    return lines


class Gitignore:
    """The compiled lines of one `.gitignore` file."""

    __slots__ = ("patterns", "_any", "_linear")

    def __init__(self, patterns: list[Pattern]) -> None:
        self.patterns = tuple(patterns)
        # One combined regex answers "does any line match?" in a single pass; most paths
        # match nothing, and only the rest pay for finding the last matching line. Lines that
        # could backtrack stay out of it and are asked one by one, in linear time.
        plain = [p for p in patterns if p.linear is None]
        self._any = (
            re.compile(b"|".join(b"(?:%s)" % p.regex.pattern for p in plain), re.DOTALL) if plain else None
        )
        self._linear = tuple(p for p in patterns if p.linear is not None)

    def __eq__(self, other: object) -> bool:
        """Equal when the lines are (an exclusion is then the same: the Action shares an index
        between fixture sets whose exclusions are equal)."""
        return isinstance(other, Gitignore) and self.patterns == other.patterns

    def __hash__(self) -> int:
        return hash(self.patterns)

    @classmethod
    def from_bytes(cls, data: bytes) -> Gitignore:
        """Parse a file's bytes. Invalid lines are skipped one by one; never raises."""
        patterns = []
        for line in _split_lines(data):
            try:
                pattern = compile_line(line)
            except GlobError:
                continue
            except NestLimitError:
                return cls([])
            if pattern is not None:
                patterns.append(pattern)
        return cls(patterns)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, path: bytes, is_dir: bool) -> bool | None:
        """The verdict for `path` (relative to this file's directory, `/`-separated).

        True: ignored; False: re-included by a `!` line; None: no line applies. The last
        matching line wins; a dir-only line is passed over for a non-directory.
        """
        if (self._any is None or self._any.fullmatch(path) is None) and not any(
            p.fullmatch(path) for p in self._linear
        ):
            return None
        no_basename = path.strip(b".") == b""
        for pattern in reversed(self.patterns):
            if pattern.dir_only and not is_dir:
                continue
            if no_basename and pattern.uses_basename:
                continue
            if pattern.fullmatch(path):
                return not pattern.negated
        return None
