"""The text `bootstrap` prints after proposing a set: what it drew on, and how backends score it."""

from __future__ import annotations

from cce_relevance.evaluation.discrimination import Discrimination
from cce_relevance.evaluation.history.mining import HistoryProposal
from cce_relevance.evaluation.proposals import HARD_FORMS
from cce_relevance.evaluation.proposals.bootstrap import Bootstrapped
from cce_relevance.reporting.terminal import terminal_safe


def proposal_text(result: Bootstrapped, written: str, asked: int) -> str:
    """The summary of a proposed set: `written` is where it went (a path, or "stdout") and `asked`
    the number of cases asked for."""
    proposal, forms, scores = result.proposal, result.form_counts(), result.discrimination()
    cases = len(proposal.cases)
    left_out = ", ".join(f"{n:,} {reason}" for reason, n in proposal.skipped.items())
    fewer = f" (of {asked} asked: each definition is labeled once, and no more have a usable query)"
    out = [
        f"cce-relevance bootstrap: {cases} proposed cases written to {terminal_safe(written)}"
        + (fewer if cases < asked else "")
        + "\n",
        f"  drawn from {_count(proposal.candidates, 'candidate')} in {_count(proposal.files, 'file')}"
        + (f" (files left out: {left_out})" if left_out else "")
        + "\n",
        "  forms: "
        + ", ".join(f"{form} {n}{' (hard)' if form in HARD_FORMS else ''}" for form, n in forms.items())
        + "\n",
    ]
    closing = "review every case before committing the set: a proposal is a guess at what a user would ask"
    return "".join(out + _closed(scores, closing))


def _closed(scores: Discrimination | None, closing: str) -> list[str]:
    """The scores (or that there are none), then the closing line."""
    return [*(["  not scored (--no-score)\n"] if scores is None else _scores(scores)), f"  {closing}\n"]


def history_text(
    written: str,
    proposal: HistoryProposal,
    asked: int,
    revisions: str,
    dates: str,
    scores: Discrimination | None,
) -> str:
    """What `bootstrap --from-history` drew on: commits seen, kept, and left out per rule (the
    yield), then how each backend scores the set. `dates` describes `--since`/`--until` ('' for
    none)."""
    kept = len(proposal.cases)
    stop = f"; the walk stopped at --queries {asked}" if proposal.stopped else ""
    out = [
        f"cce-relevance bootstrap --from-history: {kept} cases written to {terminal_safe(written)}\n",
        f"  commits seen: {proposal.seen:,} of {terminal_safe(revisions)}{terminal_safe(dates)}, "
        f"{kept} kept{stop}\n",
    ]
    if proposal.skipped:
        width = max(len(rule) for rule in proposal.skipped)
        out.append("  left out, by the first rule that applies:\n")
        out += [f"    {rule.ljust(width)}  {n:>6,}\n" for rule, n in proposal.skipped.items()]
    prs = sum(1 for c in proposal.cases if c.pull_request is not None)
    out.append(f"  cases: {prs} from merged pull requests, {kept - prs} from other commits\n")
    closing = (
        "anchors are the definitions each commit changed, as they were at its parent; the set is "
        "scored at the tree in DIR (docs/fixture-sets.md: scoring a set at one commit)"
    )
    return "".join(out + _closed(scores, closing))


def _scores(scores: Discrimination) -> list[str]:
    names = [terminal_safe(b) for b in scores.scores]
    width = max(16, *(len(n) + 2 for n in names))
    out = [
        "\n",
        "  how each backend scores it (MRR / share of cases found in the top k)\n",
        "  " + "group".ljust(12) + "cases".rjust(6) + "".join(n.rjust(width) for n in names) + "\n",
    ]
    for group in scores.groups:
        first = next(iter(scores.scores.values()))[group]
        cells = "".join(
            f"{s[group].mrr:.3f} / {s[group].hit:.2f}".rjust(width) for s in scores.scores.values()
        )
        out.append("  " + group.ljust(12) + str(first.cases).rjust(6) + cells + "\n")
    total = scores.found_by_all + scores.found_by_none + scores.disputed
    out += [
        "\n",
        f"  backends disagree on {scores.disputed} of {total} cases (found by some, not all); "
        f"{scores.found_by_all} found by all, {scores.found_by_none} by none\n",
    ]
    for a, b, test in scores.pairs:
        p = "n/a" if test.p is None else f"{test.p:.3f}"
        out.append(
            f"  MRR {terminal_safe(b)} − {terminal_safe(a)}: {test.mean_delta:+.3f} "
            f"(paired t-test, p = {p})\n"
        )
    return out


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
