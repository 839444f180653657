"""Linear-time matching for the byte regexes `gitignore` translates globs into.

Python's `re` backtracks: a `.gitignore` line such as `*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*ab` against a
file named with forty `a`s takes longer than any run may (each `*` retries every split of the
name). The same regex run as a Thompson NFA (Thompson 1968; Cox, "Regular Expression Matching Can
Be Simple And Fast", 2007) holds the set of live states and reads each byte once: the time is at
most (path length) × (pattern size), whatever the pattern.

It parses only the small regex grammar `gitignore` writes (`\\xNN` escapes, ASCII letters and
digits, `/`, `.`, `[...]` classes, `(?:a|b)` groups, postfix `*` and `?`; DOTALL), and is checked
against `re` on random globs and paths in the tests.
"""

from __future__ import annotations

import re
from typing import Any

_ALL = bytes([1]) * 256
_NONE = bytes(256)

Node = tuple[Any, ...]
"""An AST node: ("set", mask) | ("cat", [..]) | ("alt", [..]) | ("star", n) | ("opt", n)."""


class _Parser:
    """Regex text → AST: ("set", mask) | ("cat", [..]) | ("alt", [..]) | ("star", n) | ("opt", n)."""

    def __init__(self, text: bytes) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Node:
        node = self._alternation()
        if self.pos != len(self.text):
            raise ValueError(f"unexpected {self.text[self.pos : self.pos + 1]!r} at {self.pos}")
        return node

    def _alternation(self) -> Node:
        branches = [self._concatenation()]
        while self._peek() == b"|":
            self.pos += 1
            branches.append(self._concatenation())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _concatenation(self) -> Node:
        items = []
        while self.pos < len(self.text) and self._peek() not in (b"|", b")"):
            atom = self._atom()
            while self._peek() in (b"*", b"?"):
                atom = ("star" if self._peek() == b"*" else "opt", atom)
                self.pos += 1
            items.append(atom)
        return ("cat", items)

    def _atom(self) -> Node:
        text, pos = self.text, self.pos
        if text.startswith(b"(?:", pos):
            self.pos += 3
            node = self._alternation()
            if self._peek() != b")":
                raise ValueError("unclosed group")
            self.pos += 1
            return node
        if text.startswith(b"\\x", pos):
            self.pos += 4
            return ("set", _mask_of(int(text[pos + 2 : pos + 4], 16)))
        if text[pos : pos + 1] == b"[":
            end = text.index(b"]", pos + 2 if text[pos + 1 : pos + 2] == b"]" else pos + 1)
            self.pos = end + 1
            probe = re.compile(text[pos : end + 1], re.DOTALL)
            return ("set", bytes(1 if probe.fullmatch(bytes([b])) else 0 for b in range(256)))
        if text[pos : pos + 1] == b".":
            self.pos += 1
            return ("set", _ALL)
        self.pos += 1
        return ("set", _mask_of(text[pos]))

    def _peek(self) -> bytes:
        return self.text[self.pos : self.pos + 1]


def _mask_of(byte: int) -> bytes:
    mask = bytearray(256)
    mask[byte] = 1
    return bytes(mask)


class LinearMatcher:
    """`fullmatch(path)` for one translated regex, in time linear in the path's length."""

    __slots__ = ("_masks", "_next", "_eps", "_start", "_accept")

    def __init__(self, regex: bytes) -> None:
        self._masks: list[bytes] = []  # per state: the bytes it consumes (_NONE for an epsilon state)
        self._next: list[int] = []  # per consuming state: where a consumed byte leads
        self._eps: list[list[int]] = []  # per state: epsilon edges
        self._accept = self._state(_NONE)
        start = self._build(_Parser(regex).parse(), self._accept)
        self._start = self._closure([start])

    def _state(self, mask: bytes, to: int = -1) -> int:
        self._masks.append(mask)
        self._next.append(to)
        self._eps.append([])
        return len(self._masks) - 1

    def _build(self, node: Node, then: int) -> int:
        """States for `node` that continue to `then`; returns the entry state (built back to front)."""
        kind = node[0]
        if kind == "set":
            return self._state(node[1], then)
        if kind == "cat":
            for item in reversed(node[1]):
                then = self._build(item, then)
            return then
        split = self._state(_NONE)
        if kind == "alt":
            self._eps[split] = [self._build(branch, then) for branch in node[1]]
        elif kind == "opt":
            self._eps[split] = [self._build(node[1], then), then]
        else:  # star: the body loops back to the split
            self._eps[split] = [self._build(node[1], split), then]
        return split

    def _closure(self, states: list[int]) -> frozenset[int]:
        seen = set(states)
        stack = list(states)
        while stack:
            for target in self._eps[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return frozenset(seen)

    def fullmatch(self, path: bytes) -> bool:
        live = self._start
        masks, following = self._masks, self._next
        for byte in path:
            live = self._closure([following[s] for s in live if masks[s][byte]])
            if not live:
                return False
        return self._accept in live


def backtracking_risk(regex: bytes) -> bool:
    """Whether `re` could take super-linear time on `regex`: more than two unbounded repetitions.

    `gitignore` escapes every literal `*` as `\\x2a`, so each `*` byte in its regex text is a
    quantifier. With at most two the worst case is quadratic in a path's length (bounded by the
    file system's limits); typical lines (`*.pyc`, `build/`, `**/node_modules`) stay on `re`.
    """
    return regex.count(b"*") > 2
