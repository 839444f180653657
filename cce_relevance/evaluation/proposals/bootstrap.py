"""`bootstrap`: a proposed fixture set drawn from a corpus directory's definitions, or from its
repository's history (`bootstrap_history`), scored at the backends.

Nothing is written here (the front door writes the set and its report); what the set and the
report are named is left out of the corpus when inside it, as a run leaves out its own files.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.backend_runs import evaluated_backends
from cce_relevance.evaluation.discrimination import Discrimination, discrimination
from cce_relevance.evaluation.fixtures import parse_fixtures
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.history.git_log import Repository
from cce_relevance.evaluation.history.mining import DEFAULT_HISTORY, HistoryOptions, HistoryProposal, mine
from cce_relevance.evaluation.proposals import FORMS, Proposal, check_forms, propose
from cce_relevance.evaluation.proposals.file_rules import DEFAULT_RULES, FileRules
from cce_relevance.evaluation.run_corpus import (
    bound_fixtures,
    corpus_exclusion,
    corpus_symbols,
    open_corpus,
    query_embedder,
    require_directory,
    warn_on_stderr,
)
from cce_relevance.evaluation.run_options import DEFAULT_OPTIONS, RunOptions
from cce_relevance.evaluation.selection import selected_backends
from cce_relevance.evaluation.spans import LineWeights
from cce_relevance.evaluation.symbol_anchors import bind_anchor
from cce_relevance.retrieval.chunking.languages import check_languages, enabled_packs
from cce_relevance.retrieval.corpus.exclusion import Exclusion
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.corpus.walk import walk
from cce_relevance.retrieval.embedders.service import RunEmbedders
from cce_relevance.retrieval.index.model import Index


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
    names = selected_backends(options.backends, options.config)
    corpus = _ProposalCorpus.of(directory, languages, options, out)
    texts = {f.path: redact(f.text) for f in walk(directory, exclude=corpus.exclusion).files}
    chosen_forms = check_forms(forms if forms is not None else FORMS)
    proposal = propose(
        corpus.index.chunks, texts, queries, seed, rules, chosen_forms, enabled_packs(corpus.languages)
    )
    nothing = CceError(
        f"nothing to propose in {directory}: no definition with a usable name or doc sentence "
        f"in {proposal.files} file(s) kept",
        hint="keep test, vendored or generated files to draw from more of the corpus",
    )
    return Bootstrapped(*corpus.scored(proposal, nothing, names, options, score))


@dataclass(frozen=True)
class HistoryBootstrapped:
    """A fixture set drawn from a repository's history (`text`), the yield of the walk, and each
    scored backend's report on it (empty when not scored)."""

    text: str
    proposal: HistoryProposal
    reports: tuple[BackendReport, ...]

    def discrimination(self) -> Discrimination | None:
        """How the scored backends tell the cases apart: all of them, the merged pull requests'
        and the other commits'."""
        if not self.reports:
            return None
        groups: dict[str, list[str]] = {"merged PRs": [], "commits": []}
        for c in self.proposal.cases:
            groups["merged PRs" if c.pull_request is not None else "commits"].append(c.id)
        return discrimination(self.reports, {g: ids for g, ids in groups.items() if ids})


def bootstrap_history(
    directory: str,
    options: RunOptions = DEFAULT_OPTIONS,
    *,
    history: HistoryOptions = DEFAULT_HISTORY,
    out: str | None = None,
    rules: FileRules = DEFAULT_RULES,
    score: bool = True,
) -> HistoryBootstrapped:
    """Cases drawn from the commits of `history.revisions` in the git repository holding
    `directory` (evaluation/history/): their subjects as queries, the definitions they changed,
    read at their parents, as anchors; only anchors that name one definition of `directory` as
    it is now (the tree the set is scored at: check out an earlier commit there to score the set
    at it). Scored
    as `bootstrap` scores, with the same header corpus and the same files left out."""
    require_directory(directory)
    languages = check_languages(options.chunk_languages)
    if history.limit < 1:
        raise CceError(f"a proposal needs at least 1 query, got {history.limit}")
    if history.max_definitions < 1:
        raise CceError(f"a commit's definitions must be at least 1, got {history.max_definitions}")
    names = selected_backends(options.backends, options.config)
    corpus = _ProposalCorpus.of(directory, languages, options, out)
    symbols = corpus_symbols(directory, corpus.languages)
    anchors = AnchorIndex.of_index(corpus.index)

    def named(text: str) -> int:
        """How many definitions of `directory` the anchor names (0: it resolves to no chunk)."""
        bound = bind_anchor(parse_anchor(text), symbols)
        return len(bound.bound) if anchors.resolves(bound) else 0

    with Repository(directory) as repo:
        proposal = mine(repo, history, rules, enabled_packs(corpus.languages), named)
    left_out = ", ".join(f"{n} {rule}" for rule, n in proposal.skipped.items()) or "none"
    nothing = CceError(
        f"nothing to propose from the history of {directory}: {proposal.seen} commit(s) seen, "
        f"none kept (left out: {left_out})",
        hint="widen the range or the dates, or allow more definitions a commit",
    )
    return HistoryBootstrapped(*corpus.scored(proposal, nothing, names, options, score))


P = TypeVar("P", Proposal, HistoryProposal)


@dataclass(frozen=True)
class _ProposalCorpus:
    """What a proposal is drawn from and scored over: the directory, its languages, what its
    index leaves out (the command's own files and the config's `exclude` patterns), the index,
    and where the set will be written."""

    directory: str
    languages: tuple[str, ...]
    exclusion: Exclusion
    index: Index
    out: str | None

    @classmethod
    def of(
        cls, directory: str, languages: tuple[str, ...], options: RunOptions, out: str | None
    ) -> _ProposalCorpus:
        own = [*([out] if out is not None else []), *options.own_files]
        exclusion = corpus_exclusion(directory, options.config, own)
        index = open_corpus(directory, languages=languages, indexing=options.indexing, exclude=exclusion)
        return cls(directory, languages, exclusion, index, out)

    def scored(
        self, proposal: P, nothing: CceError, names: Sequence[str], options: RunOptions, score: bool
    ) -> tuple[str, P, tuple[BackendReport, ...]]:
        """A proposed set's text (its header's corpus relative to `out`), the proposal, and each
        backend's report on it (none unless `score`); `nothing` is raised for a proposal without
        cases."""
        if not proposal.cases:
            raise nothing
        where = os.path.dirname(os.path.abspath(self.out)) if self.out is not None else os.getcwd()
        text = proposal.fixture_text(
            os.path.relpath(os.path.abspath(self.directory), where).replace(os.sep, "/")
        )
        if not score:
            return text, proposal, ()
        fixtures = parse_fixtures(text, self.out or "<bootstrap>")
        cases = bound_fixtures(fixtures, self.directory, None, self.languages).cases
        weights = LineWeights.of_index(self.index)
        with RunEmbedders(options.indexing.cache) as embedders:
            embed = query_embedder(self.index, warn_on_stderr, options.config, embedders)
            reports = evaluated_backends(
                names,
                options.config,
                self.index,
                embed,
                cases,
                weights,
                None,
                options.indexing,
                corpus=os.path.abspath(self.directory),
                embedders=embedders,
            )
        return text, proposal, tuple(reports)
