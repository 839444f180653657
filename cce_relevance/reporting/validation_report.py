"""Renderings of `validate`: human text and the `cce.relevance.validate/v1` JSON document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cce_relevance import schemas
from cce_relevance.evaluation.anchor_fixes import AnchorFix
from cce_relevance.evaluation.validation import Validation
from cce_relevance.reporting.terminal import terminal_safe
from cce_relevance.strings import quoted


def validation_document(v: Validation) -> dict[str, Any]:
    """Plain data; `problems` in fixture order, each with its code, line, case id, anchor and message."""
    return {
        "anchors": v.anchors,
        "cases": v.cases,
        "corpus": v.corpus,
        "fixtures": v.fixtures,
        "ok": v.ok,
        "problems": [
            {"anchor": f.anchor, "code": f.code, "id": f.case_id, "line": f.line, "message": f.message}
            for f in v.findings
        ],
        "schema": schemas.VALIDATE,
    }


def validation_text(v: Validation) -> str:
    """A header, then one line per problem; names from the fixtures are quoted and escaped."""
    out = [
        f"cce-relevance validate — {terminal_safe(v.fixtures)}\n",
        f"  corpus  : {terminal_safe(v.corpus)}\n",
        f"  checked : {v.cases} cases, {v.anchors} anchors\n",
    ]
    if v.ok:
        out.append("  ok: every anchor resolves to a chunk of the corpus\n")
        return "".join(out)
    out.append(f"  problems: {len(v.findings)}\n\n")
    for f in v.findings:
        where = f"case {quoted(f.case_id)}" + (f", anchor {quoted(f.anchor)}" if f.anchor is not None else "")
        out.append(f"  line {f.line}: {f.code}: {where}: {f.message}\n")
    return "".join(out)


def fixes_text(fixes: Sequence[AnchorFix], stale_cases: int) -> str:
    """What `validate --suggest` proposes, one line per fix (stale and moved anchors)."""
    if not fixes and not stale_cases:
        return ""
    out = [f"\n  suggested fixes: {len(fixes)} (cases with stale anchors: {stale_cases})\n"]
    for f in fixes:
        out.append(
            f"  line {f.line}: case {quoted(f.case_id)}: {quoted(f.old.display())} -> "
            f"{quoted(f.new)}: {terminal_safe(f.why)}\n"
        )
    if fixes:
        out.append("  review the patch on stdout, then apply it: git apply FILE (or patch -p1 < FILE)\n")
    return "".join(out)
