"""Expected-result anchors: `path`, `path#kind`, `#kind`, each optionally `@a-b` (harness.md §2.4–2.5).

The grammar is additive: text after the last `@` is a line range only when it is made of ASCII
digits and dashes, so pre-range fixtures such as `user@host.py` keep their literal meaning.
Error messages carry the whole anchor as decoded from JSON, untrimmed, in Rust `Debug` form,
because that is what the reference prints.
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
    """One expected result; every facet that is not None must match."""

    path: str | None
    kind: str | None
    range: tuple[int, int] | None

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
        return True

    def display(self) -> str:
        """The canonical string form: `path`, `path#kind` or `#kind`, then `@a-b` when ranged."""
        text = self.path or ""
        if self.kind is not None:
            text += "#" + self.kind
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


def parse_anchor(text: str) -> Anchor:
    """Parse one anchor string; the checks run in the reference's order (E12, E9, E10, E11)."""
    body, line_range = _split_range(text)
    hash_at = body.find("#")
    if hash_at >= 0:
        path, kind = rust_trim(body[:hash_at]), rust_trim(body[hash_at + 1 :])
        if not kind:
            raise AnchorError("E9", f"anchor {rust_debug_str(text)} has an empty kind after '#'")
    else:
        path, kind = rust_trim(body), None
    if not path and kind is None:
        raise AnchorError("E10", "anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`")
    if line_range is not None and not path:
        raise AnchorError(
            "E11",
            f"anchor {rust_debug_str(text)} has a line range but no file path — "
            "a range needs `path@a-b` or `path#kind@a-b`",
        )
    return Anchor(path=path or None, kind=kind, range=line_range)
