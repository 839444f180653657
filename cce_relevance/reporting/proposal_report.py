"""The text `bootstrap` prints after proposing a set: what it drew on, and how backends score it."""

from __future__ import annotations

from collections.abc import Mapping

from cce_relevance.evaluation.discrimination import Discrimination


def proposal_text(
    written: str,
    cases: int,
    asked: int,
    candidates: int,
    files: int,
    skipped: Mapping[str, int],
    forms: Mapping[str, int],
    hard: frozenset[str],
    scores: Discrimination | None,
) -> str:
    """`forms` counts the chosen cases per form, in form order; `hard` names the hard forms."""
    left_out = ", ".join(f"{n:,} {reason}" for reason, n in skipped.items())
    fewer = (
        f" (of {asked} asked: each definition is labeled once, and no more have a usable query)"
        if cases < asked
        else ""
    )
    out = [
        f"cce-relevance bootstrap: {cases} proposed cases written to {written}{fewer}\n",
        f"  drawn from {candidates:,} candidates in {files:,} files"
        + (f" (files left out: {left_out})" if left_out else "")
        + "\n",
        "  forms: "
        + ", ".join(f"{form} {n}{' (hard)' if form in hard else ''}" for form, n in forms.items())
        + "\n",
    ]
    if scores is None:
        out.append("  not scored (--no-score)\n")
        return "".join(out)
    out += [
        "\n",
        "  how each backend scores it (MRR / share of cases found in the top k)\n",
        "  " + "group".ljust(12) + "cases".rjust(6) + "".join(b.rjust(16) for b in scores.scores) + "\n",
    ]
    for group in scores.groups:
        first = next(iter(scores.scores.values()))[group]
        cells = "".join(f"{s[group].mrr:.3f} / {s[group].hit:.2f}".rjust(16) for s in scores.scores.values())
        out.append("  " + group.ljust(12) + str(first.cases).rjust(6) + cells + "\n")
    total = scores.found_by_all + scores.found_by_none + scores.disputed
    out += [
        "\n",
        f"  backends disagree on {scores.disputed} of {total} cases (found by some, not all); "
        f"{scores.found_by_all} found by all, {scores.found_by_none} by none\n",
    ]
    for a, b, test in scores.pairs:
        p = "n/a" if test.p is None else f"{test.p:.3f}"
        out.append(f"  MRR {b} − {a}: {test.mean_delta:+.3f} (paired t-test, p = {p})\n")
    out.append(
        "  review every case before committing the set: a proposal is a guess at what a user would ask\n"
    )
    return "".join(out)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
