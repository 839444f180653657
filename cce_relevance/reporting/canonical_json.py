"""The one canonical JSON writer for reports: sorted keys, 2-space indent, one trailing newline.

This reproduces serde_json's pretty printer over B-tree maps byte for byte (§json-report).
"""

from __future__ import annotations

import json
from typing import Any


def dumps_report(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
