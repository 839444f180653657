"""`bootstrap`: a proposed fixture set drawn from a corpus directory, scored at the backends.

Nothing is written here (the front door writes the set and its report); what the set and the
report are named is left out of the corpus when inside it, as a run leaves out its own files.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from cce_relevance.errors import CceError
from cce_relevance.evaluation.backend_runs import evaluated_backends
from cce_relevance.evaluation.discrimination import Discrimination, discrimination
from cce_relevance.evaluation.fixtures import parse_fixtures
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.proposals import FORMS, Proposal, check_forms, propose
from cce_relevance.evaluation.proposals.file_rules import DEFAULT_RULES, FileRules
from cce_relevance.evaluation.run_corpus import (
    bound_fixtures,
    corpus_exclusion,
    open_corpus,
    query_embedder,
    require_directory,
    warn_on_stderr,
)
from cce_relevance.evaluation.run_options import DEFAULT_OPTIONS, RunOptions
from cce_relevance.evaluation.selection import selected_backends
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.retrieval.chunking.languages import check_languages, enabled_packs
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.corpus.walk import walk


@dataclass(frozen=True)
class Bootstrapped:
    """A proposed fixture set (`text`, its header's corpus relative to where it is written),
    what it was drawn from, and each scored backend's report on it (empty when not scored)."""

    text: str
    proposal: Proposal
    reports: tuple[BackendReport, ...]

    def form_counts(self) -> dict[str, int]:
        """Chosen cases per form, in form order (forms with none left out)."""
        counts = Counter(p.candidate.form for p in self.proposal.cases)
        return {form: counts[form] for form in FORMS if counts[form]}

    def discrimination(self) -> Discrimination | None:
        """How the scored backends tell the set's cases apart, over all cases, easy and hard
        ones and each form; None when it was not scored."""
        if not self.reports:
            return None
        groups: dict[str, list[str]] = {"easy": [], "hard": []}
        for p in self.proposal.cases:
            groups["hard" if p.candidate.hard else "easy"].append(p.id)
            groups.setdefault(p.candidate.form, []).append(p.id)
        ordered = {g: groups[g] for g in ("easy", "hard", *FORMS) if groups.get(g)}
        return discrimination(self.reports, ordered)


def bootstrap(
    directory: str,
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    queries: int = 50,
    seed: int = 0,
    out: str | None = None,
    rules: FileRules = DEFAULT_RULES,
    forms: tuple[str, ...] | None = None,
    score: bool = True,
) -> Bootstrapped:
    """Propose `queries` labeled cases drawn from `directory` (deterministic for `seed`; `forms`
    default all), and score them at `options.backends` (default: the built-in ones) unless
    `score` is off.

    The header's corpus is `directory` relative to the directory `out` will be written in (the
    working directory when `out` is None); `out` and `options.outputs` are left out of the
    corpus when inside it.
    """
    require_directory(directory)
    languages = check_languages(options.chunk_languages)
    if queries < 1:
        raise CceError(f"a proposal needs at least 1 query, got {queries}")
    config = options.config
    names = selected_backends(options.backends, config)
    own = [*([out] if out is not None else []), *options.own_files]
    exclusion = corpus_exclusion(directory, config, own)
    index = open_corpus(directory, languages=languages, indexing=options.indexing, exclude=exclusion)
    texts = {f.path: redact(f.text) for f in walk(directory, exclude=exclusion).files}
    chosen_forms = check_forms(forms if forms is not None else FORMS)
    proposal = propose(index.chunks, texts, queries, seed, rules, chosen_forms, enabled_packs(languages))
    if not proposal.cases:
        raise CceError(
            f"nothing to propose in {directory}: no definition with a usable name or doc sentence "
            f"in {proposal.files} file(s) kept",
            hint="keep test, vendored or generated files to draw from more of the corpus",
        )
    where = os.path.dirname(os.path.abspath(out)) if out is not None else os.getcwd()
    text = proposal.fixture_text(os.path.relpath(os.path.abspath(directory), where).replace(os.sep, "/"))
    reports: tuple[BackendReport, ...] = ()
    if score:
        cases = bound_fixtures(parse_fixtures(text, out or "<bootstrap>"), directory, None, languages).cases
        embed = query_embedder(index, warn_on_stderr)
        weights = LineWeights.of_index(index)
        reports = tuple(
            evaluated_backends(names, config, index, embed, cases, weights, None, options.indexing)
        )
    return Bootstrapped(text, proposal, reports)
