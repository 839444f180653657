"""`validate --unjudged`: the unlabeled hits of every case as a review form a person fills in.

Each hit is one line, `? "case id" "anchor"  # file:lines kind · backend rank, …`: a reviewer
replaces `?` with `y` (relevant) or `n` (not relevant) and passes the file back with
`--suggest --accept FILE`, which prints the patch (evaluation/unjudged.py reads the form).
Ids and anchors are JSON strings, so control characters are escaped; the comments name paths
and kinds from the corpus, made safe for a terminal.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

from cce_relevance.evaluation.unjudged import UNDECIDED, Accepted, UnjudgedCase, UnjudgedHit, counts
from cce_relevance.reporting.terminal import terminal_safe


def review_line(case_id: str, hit: UnjudgedHit) -> str:
    """`? "id" "anchor"  # where · backend rank, …`: one undecided line of the review form."""
    ranks = ", ".join(f"{terminal_safe(b)} {r}" for b, r in hit.ranks)
    where = terminal_safe(f"{hit.file_path}:{hit.start_line}-{hit.end_line} {hit.kind}".strip())
    return f"{UNDECIDED} {_js(case_id)} {_js(hit.anchor)}  # {where} · {ranks}\n"


def review_form(
    fixtures: str, backends: Sequence[str], top: int | None, cases: Sequence[UnjudgedCase]
) -> str:
    """The whole form: how to fill it in, then per case with unlabeled hits a comment naming it
    and one line per hit, most-retrieved first."""
    depth = "each case's k" if top is None else f"the top {top}"
    total = counts(cases)
    command = shlex.join(["cce-relevance", "validate", fixtures, "--unjudged", "--suggest", "--accept"])
    searched = ", ".join(map(terminal_safe, backends))
    out = [
        f"# cce-relevance validate --unjudged: hits in {depth} of {searched} that match no anchor of "
        f"{terminal_safe(fixtures)}\n",
        f"# {total['hits']} unlabeled hits in {total['cases']} of {len(cases)} cases, most-retrieved "
        "first.\n",
        '# Mark each line: y = relevant (added to the case\'s "expected"), n = not relevant (added to\n',
        '# its "irrelevant": judged, and not listed again), ? = not decided. Then save this form as\n',
        f"# FILE and print the patch: {terminal_safe(command)} FILE\n",
    ]
    for c in cases:
        if not c.hits:
            continue
        out.append(f"\n# line {c.case.line}, case {_js(c.case.id)}: {terminal_safe(c.case.query)}\n")
        out.extend(review_line(c.case.id, hit) for hit in c.hits)
    return "".join(out)


_C1 = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}  # DEL and C1: escaped too, as JSON allows


def _js(text: str) -> str:
    """`text` as a JSON string that reads back exactly and cannot drive a terminal."""
    return json.dumps(text, ensure_ascii=False).translate(_C1)


def accepted_text(accepted: Accepted) -> str:
    """What `validate --unjudged --suggest --accept FILE` says on stderr of the patch it prints."""
    added = [(len(e.expected), len(e.irrelevant)) for e in accepted.edits]
    apply = (
        "; review the patch on stdout, then apply it: git apply FILE (or patch -p1 < FILE)" if added else ""
    )
    return (
        f"cce-relevance validate --accept: {sum(a for a, _ in added)} anchor(s) added to expected, "
        f"{sum(b for _, b in added)} to irrelevant, in {len(added)} case(s){apply}\n"
    )
