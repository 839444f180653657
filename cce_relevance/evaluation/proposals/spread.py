"""Choosing N of the candidates: every form represented, files and kinds spread, one seed.

The N cases are shared out among the forms that have candidates as evenly as they allow (a
form with too few gives its share to the others). Picks then go round the forms, the one with
fewest candidates first (a definition is labeled once, and a scarce form would otherwise find
its few taken by another); each takes, among its form's candidates whose definition is not
labeled yet, the one whose file, then whose kind within the form, then whose kind overall have
been picked least so far, ties broken by a shuffle drawn from `random.Random(seed)`.
So the same corpus and seed give the same set, and a set of 50 touches 50 files when it can.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from cce_relevance.evaluation.proposals.candidates import FORMS, Candidate


def shares(available: dict[str, int], n: int) -> dict[str, int]:
    """How many cases each form gets: `n` split evenly over the forms, capped by what each has."""
    share = dict.fromkeys(available, 0)
    left = min(n, sum(available.values()))
    while left > 0:
        open_forms = [f for f in available if share[f] < available[f]]
        each = max(1, left // len(open_forms))
        for form in open_forms:
            give = min(each, available[form] - share[form], left)
            share[form] += give
            left -= give
            if left == 0:
                break
    return share


def choose(
    candidates: Sequence[Candidate], n: int, seed: int, forms: Sequence[str] = FORMS
) -> list[Candidate]:
    """`n` candidates spread over forms, files and kinds, in form order then path and line."""
    rng = random.Random(seed)
    order = list(range(len(candidates)))
    rng.shuffle(order)
    rank = {i: r for r, i in enumerate(order)}
    by_form: dict[str, list[int]] = {f: [] for f in forms}
    for i, c in enumerate(candidates):
        if c.form in by_form:
            by_form[c.form].append(i)
    taken: list[int] = []
    labeled: set[tuple[str, str]] = set()  # ("chunk", id) labeled by some form, ("text", query) asked
    file_uses: Counter[str] = Counter()
    kind_uses: Counter[str | tuple[str, str]] = Counter()  # by kind, and by (form, kind)
    while len(taken) < n:  # again when a form ran out because others labeled its definitions
        free = {f: sum(_free(candidates[i], labeled) for i in ids) for f, ids in by_form.items()}
        if not any(free.values()):
            break
        share = shares(free, n - len(taken))
        while any(share.values()):
            for form in sorted(
                forms, key=lambda f: free.get(f, 0)
            ):  # the scarcest form first, not to lose it
                if not share.get(form):
                    continue
                pool = [i for i in by_form[form] if _free(candidates[i], labeled)]
                if not pool:
                    share[form] = 0
                    continue
                best = min(
                    pool,
                    key=lambda i: (
                        file_uses[candidates[i].chunk.file_path],
                        kind_uses[(form, candidates[i].chunk.kind)],
                        kind_uses[candidates[i].chunk.kind],
                        rank[i],
                    ),
                )
                c = candidates[best]
                taken.append(best)
                labeled.update((("chunk", c.chunk.chunk_id), ("text", c.query.lower())))
                file_uses[c.chunk.file_path] += 1
                kind_uses[c.chunk.kind] += 1
                kind_uses[(form, c.chunk.kind)] += 1
                share[form] -= 1
    position = {f: p for p, f in enumerate(forms)}
    picked = [candidates[i] for i in taken]
    return sorted(picked, key=lambda c: (position[c.form], c.chunk.file_path, c.chunk.start_line, c.query))


def _free(c: Candidate, labeled: set[tuple[str, str]]) -> bool:
    """Neither its definition nor its text is in the set yet."""
    return ("chunk", c.chunk.chunk_id) not in labeled and ("text", c.query.lower()) not in labeled
