"""Expected-result anchors: `path`, `path#kind`, `#kind`, each optionally `@a-b`
(§anchors–§anchor-matching), and our symbol anchors `path::Name`, `path#kind::Name`.

The grammar is additive: text after the last `@` is a line range only when it is made of ASCII
digits and dashes, so pre-range fixtures such as `user@host.py` keep their literal meaning.
Error messages carry the whole anchor as decoded from JSON, untrimmed, in Rust `Debug` form,
because that is what the reference prints.

A symbol anchor names a definition by its dotted name (retrieval/chunking/symbols.py: `Client.send`)
instead of by lines, so an edit above it cannot make it point at something else. The first
`::` starts the symbol, which runs to the end (it may hold `#` and `@`: `A.#private`); what is
before it is read as before. So text without `::` parses exactly as it always did, and
`path#kind::Name` had a kind containing `:`, which no tree-sitter kind does: such an anchor
never matched anything. The one text that changes meaning is a `path` anchor whose file name
contains `::`, which can no longer be named. `::` inside the symbol is read as `.`
(`Foo::bar` is `Foo.bar`). The symbol's lines are looked up in each corpus the anchor is scored against
(`bind`); from then on it matches as the range anchor `path@a-b` (or `path#kind@a-b`) of those
lines would, of every definition of that name when there are several.
"""

from __future__ import annotations

from dataclasses import dataclass

from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.strings import rust_trim

U64_MAX = 2**64 - 1

_RANGE_CHARS = frozenset("0123456789-")
_DIGITS = frozenset("0123456789")


class AnchorError(ValueError):
    """An anchor string the grammar rejects; `code` is the catalogue id (E9–E12).

    `message` lacks the `fixture line N: ` prefix: only the fixture parser knows the line.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Anchor:
    """One expected result; every facet that is not None must match.

    A symbol anchor (`symbol` set) matches through `bound`, the lines of the definitions of that
    name in the corpus at hand (`bind`); unbound, or bound to none, it matches nothing.
    """

    path: str | None
    kind: str | None
    range: tuple[int, int] | None
    symbol: str | None = None
    bound: tuple[tuple[int, int], ...] = ()

    def matches(self, file_path: str, kind: str, start_line: int, end_line: int) -> bool:
        """Exact path and kind equality, and inclusive line-span overlap (touching one line counts)."""
        if self.path is not None and file_path != self.path:
            return False
        if self.kind is not None and kind != self.kind:
            return False
        if self.range is not None:
            a, b = self.range
            if end_line < a or start_line > b:
                return False
        if self.symbol is not None:
            return any(start_line <= b and end_line >= a for a, b in self.bound)
        return True

    def line_spans(self) -> tuple[tuple[int, int], ...]:
        """The lines the anchor labels in its file: its range, or its symbol's bound lines."""
        if self.range is not None:
            return (self.range,)
        return self.bound

    def bind(self, spans: tuple[tuple[int, int], ...]) -> Anchor:
        """This symbol anchor with the lines its definitions have in one corpus."""
        return Anchor(self.path, self.kind, self.range, self.symbol, spans)

    def written_as(self, text: str) -> bool:
        """Whether the anchor string `text` is this anchor (False for a string that is no anchor)."""
        try:
            return parse_anchor(text) == self
        except ValueError:
            return False

    def display(self) -> str:
        """The canonical string form: `path`, `path#kind` or `#kind`, then `::Name` or `@a-b`."""
        text = self.path or ""
        if self.kind is not None:
            text += "#" + self.kind
        if self.symbol is not None:
            text += "::" + self.symbol
        if self.range is not None:
            text += f"@{self.range[0]}-{self.range[1]}"
        return text


def _parse_u64(digits: str) -> int | None:
    """Rust's `usize::from_str` restricted to what a range tail can hold: ASCII digits, ≤ 2^64−1.

    Leading zeros are stripped before `int()` so that a long run of zeros neither overflows
    nor trips Python's limit on integer-string length, exactly as Rust accepts `007`.
    """
    if not digits or not set(digits) <= _DIGITS:
        return None
    significant = digits.lstrip("0")
    if len(significant) > 20:
        return None
    value = int(significant or "0")
    return value if value <= U64_MAX else None


def _split_range(text: str) -> tuple[str, tuple[int, int] | None]:
    """Split a trailing `@a-b` off `text`; the body is untrimmed. Raises E12 for a bad attempt."""
    at = text.rfind("@")
    if at < 0:
        return text, None
    tail = rust_trim(text[at + 1 :])
    if not tail or not set(tail) <= _RANGE_CHARS:
        return text, None
    dash = tail.find("-")
    a = _parse_u64(tail[:dash]) if dash >= 0 else None
    b = _parse_u64(tail[dash + 1 :]) if dash >= 0 else None
    if a is None or b is None or a == 0 or b < a:
        raise AnchorError(
            "E12",
            f"anchor {rust_debug_str(text)} has an invalid line range after '@' — "
            "expected `a-b` with 1 ≤ a ≤ b",
        )
    return text[:at], (a, b)


SYMBOL_SEPARATOR = "::"


def parse_anchor(text: str) -> Anchor:
    """Parse one anchor string; the checks run in the reference's order (E12, E9, E10, E11), those
    of a symbol (S1–S3) before E10 (an anchor with `::` is not empty)."""
    body, line_range = _split_range(text)
    body, symbol = _split_symbol(body)
    hash_at = body.find("#")
    if hash_at >= 0:
        path, kind = rust_trim(body[:hash_at]), rust_trim(body[hash_at + 1 :])
        if not kind:
            raise AnchorError("E9", f"anchor {rust_debug_str(text)} has an empty kind after '#'")
    else:
        path, kind = rust_trim(body), None
    if symbol is not None:
        _check_symbol(text, symbol, path, line_range)
    if not path and kind is None:
        raise AnchorError("E10", "anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`")
    if line_range is not None and not path:
        raise AnchorError(
            "E11",
            f"anchor {rust_debug_str(text)} has a line range but no file path — "
            "a range needs `path@a-b` or `path#kind@a-b`",
        )
    return Anchor(path=path or None, kind=kind, range=line_range, symbol=symbol)


def _split_symbol(text: str) -> tuple[str, str | None]:
    """`text` up to its first `::`, and the trimmed symbol after it (`::` in it read as `.`)."""
    at = text.find(SYMBOL_SEPARATOR)
    if at < 0:
        return text, None
    return text[:at], ".".join(rust_trim(part) for part in text[at + 2 :].split(SYMBOL_SEPARATOR))


def _check_symbol(text: str, symbol: str, path: str, line_range: tuple[int, int] | None) -> None:
    """S1: an empty symbol; S2: a symbol without a file; S3: a symbol with a range."""
    if not symbol:
        raise AnchorError("S1", f"anchor {rust_debug_str(text)} has an empty symbol after '::'")
    if not path:
        raise AnchorError(
            "S2",
            f"anchor {rust_debug_str(text)} names a symbol but no file path — "
            "a symbol needs `path::Name` or `path#kind::Name`",
        )
    if line_range is not None:
        raise AnchorError(
            "S3",
            f"anchor {rust_debug_str(text)} has both a symbol and a line range — "
            "a symbol anchor finds its own lines; drop the `@a-b`",
        )
