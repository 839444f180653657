"""`rust_is_alphanumeric` against Rust's own answer, when a Rust compiler is available, and known points."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cce_relevance.unicode_rust import rust_is_alphanumeric

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "rust_alphanumeric_ranges.rs"


@pytest.mark.parametrize(
    ("ch", "expected"),
    [
        ("a", True),
        ("Z", True),
        ("7", True),
        ("_", False),
        ("-", False),
        (" ", False),
        ("\u093f", True),  # DEVANAGARI VOWEL SIGN I: Other_Alphabetic
        ("\u0345", True),  # COMBINING YPOGEGRAMMENI: Other_Alphabetic
        ("\u0301", False),  # COMBINING ACUTE ACCENT: a mark but not Alphabetic
        ("\u00b2", True),  # SUPERSCRIPT TWO: No
        ("\u2160", True),  # ROMAN NUMERAL ONE: Nl
        ("日", True),
        ("\u200b", False),
    ],
)
def test_known_points(ch: str, expected: bool) -> None:
    assert rust_is_alphanumeric(ch) is expected


@pytest.mark.skipif(shutil.which("rustc") is None, reason="no rustc to ask")
def test_every_code_point_agrees_with_rustc(tmp_path: Path) -> None:
    binary = tmp_path / "ranges"
    subprocess.run(["rustc", "-O", "-o", str(binary), str(SCRIPT)], check=True, capture_output=True)
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout.split()
    rust = bytearray(0x110000)
    for lo, hi in zip(out[::2], out[1::2], strict=True):
        rust[int(lo, 16) : int(hi, 16) + 1] = b"\x01" * (int(hi, 16) - int(lo, 16) + 1)
    mismatches = [
        cp
        for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF and rust_is_alphanumeric(chr(cp)) != bool(rust[cp])
    ]
    assert mismatches == []
