"""Terminal hygiene for untrusted text (file paths, fixture ids, corpus lines)."""

from __future__ import annotations

_CONTROL = {c: "\ufffd" for c in [*range(0, 9), *range(10, 32), 127, *range(0x80, 0xA0)]}


def terminal_safe(text: str) -> str:
    """Replace control characters (C0 but TAB, DEL, C1) so text cannot drive the terminal."""
    return text.translate(_CONTROL)
