"""Score every configured fixture set at the base and head commits, and check the goldens at head.

Each side is its commit's tracked files, checked out into a temporary directory (git.py
`CommitFiles`; never the workspace checkout: for a pull request that is GitHub's ephemeral merge
commit, §runner-head-sha), so a side's report is the one `cce-relevance run` prints in a fresh clone of it.
Everything read from a tree is data (fixtures, corpora, goldens): nothing from the head commit
is executed, which is what makes running under `pull_request_target` safe for this Action.
The one exception is opt-in and refused under that event: `allow-repository-retrievers` runs
each side's own retriever (retriever_policy).
Because the head is untrusted, every path it supplies is confined to its tree: a fixture, a
corpus or a golden that escapes it through `..`, an absolute path or a symlink is a
configuration error, checked before anything is read.

Sets are scored with the working directory (inside the tree) as the current directory and the
corpus passed as the header resolves it, so the report's `corpus` string is the one a local
`cce-relevance run FIXTURE` from that directory prints, and base, head and the committed golden
are comparable byte for byte. Each set is scored by the library's `api.score_set`, which also
checks it for stale anchors against the index it was scored with, so the report can tell a miss
caused by a renamed file or function from a ranking change.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from cce_relevance import api
from cce_relevance.action.config.inputs import ActionInputs, expand_fixtures
from cce_relevance.action.config.paths import is_within
from cce_relevance.action.config.retriever_policy import REFUSED_BY_DEFAULT
from cce_relevance.action.scoring.model import ComparedSet, ScoredSides, SetAtCommit
from cce_relevance.action.scoring.range_anchors import AnchorMove, SideFixtures, follow_ranges
from cce_relevance.action.scoring.timings import Stopwatch
from cce_relevance.action.workspace.git import CommitFiles, CommitPair, commit_files
from cce_relevance.api import ProjectConfig
from cce_relevance.errors import CceError
from cce_relevance.evaluation.golden import GoldenFile
from cce_relevance.evaluation.rank_metrics import rank_metric_name
from cce_relevance.memory_pages import give_back_freed_memory
from cce_relevance.reporting.cost_report import p50_by_backend
from cce_relevance.reporting.run_report import run_report_json


def score_commits(
    repo: Path, commits: CommitPair, inputs: ActionInputs, clock: Stopwatch | None = None
) -> tuple[ComparedSet, ...]:
    """Every fixture set found at head or base, scored where it exists; goldens checked at head."""
    sides = score_sides(repo, commits, inputs, clock)
    return compared_sets(sides, inputs.regression_metric, anchor_moves(repo, commits, sides))


def score_sides(
    repo: Path,
    commits: CommitPair,
    inputs: ActionInputs,
    clock: Stopwatch | None = None,
    *,
    shard: api.Shard | None = None,
    base: dict[str, SetAtCommit] | None = None,
) -> ScoredSides:
    """Score each side: at head the fixture patterns must match (a pattern matching nothing is a
    typo); at base they may not (the change can add a set), and a set found on one side only is
    scored there. `shard` scores only its queries at both sides (each set's anchor check stays
    whole); `base`, the base side saved by an earlier run, is taken instead of scoring it.
    `clock` is given each side's stages (materialise, index, score, validate, hits).
    """
    clock = clock if clock is not None else Stopwatch()
    subdir = inputs.working_directory.relative_to(repo)
    shared = api.SharedIndexes()  # the files parsed for the top hits' symbols, at either side
    with commit_files(repo, [sha for sha in commits if sha is not None]) as files:
        tree = _checked_out(files, commits.head, clock, "head")
        head = _score_side("head", commits.head, tree, subdir, inputs, clock, shared, shard, required=True)
        goldens = _read_goldens(tree, subdir, head, inputs, commits.head)
        if commits.base is not None and base is None:
            # The head side's indexes are garbage now, held only by reference cycles (what ranking
            # derives from an index refers back to it): free them before the base side makes its
            # own, or the two sides' (300-400 MB each on the standard library) add up.
            gc.collect()
            give_back_freed_memory()  # their pages, which the base side's arrays would not reuse
            tree = _checked_out(files, commits.base, clock, "base")
            base = _score_side(
                "base", commits.base, tree, subdir, inputs, clock, shared, shard, required=False
            )
    return ScoredSides(base or {}, head, goldens)


def anchor_moves(repo: Path, commits: CommitPair, sides: ScoredSides) -> dict[str, tuple[AnchorMove, ...]]:
    """Per set scored at both sides, its range anchors whose lines moved or changed (git's diff
    from base to head: needs the repository)."""
    if commits.base is None:
        return {}
    return {
        fixture: follow_ranges(repo, commits.base, commits.head, base.fixtures, sides.head[fixture].fixtures)
        for fixture, base in sides.base.items()
        if fixture in sides.head
    }


def compared_sets(
    sides: ScoredSides, primary: str, moves: dict[str, tuple[AnchorMove, ...]], cost: bool = False
) -> tuple[ComparedSet, ...]:
    """The sets as the verdict, the comment and the report read them, in path order; `primary`
    is the regression metric, `moves` each set's moved range anchors (`anchor_moves`), `cost`
    whether each backend's latency is shown."""
    return tuple(
        _set_result(
            fixture,
            sides.base.get(fixture),
            sides.head.get(fixture),
            sides.goldens.get(fixture),
            primary,
            moves.get(fixture, ()),
            cost,
        )
        for fixture in sorted(sides.base.keys() | sides.head.keys())
    )


def _checked_out(files: CommitFiles, sha: str, clock: Stopwatch, side: str) -> Path:
    """`files` made to hold `sha`'s tracked files, timed as the side's `materialise`."""
    with clock.stage(f"{side} materialise"):
        return files.check_out(sha)


def _set_result(
    fixture: str,
    base: SetAtCommit | None,
    head: SetAtCommit | None,
    golden: GoldenFile | None,
    primary: str,
    moves: tuple[AnchorMove, ...],
    cost: bool = False,
) -> ComparedSet:
    either = head or base
    assert either is not None
    latency = {}
    if cost and base is not None and head is not None:
        at_base, at_head = p50_by_backend(base.run), p50_by_backend(head.run)
        latency = {name: (at_base[name], at_head[name]) for name in at_head if name in at_base}
    return ComparedSet(
        fixture,
        base.report if base else None,
        head.report if head else None,
        golden.check(head.report) if golden is not None and head is not None else None,
        primary=primary,
        base_anchors=base.anchors if base else None,
        head_anchors=head.anchors if head else None,
        base_rankings=base.rankings if base else None,
        head_rankings=head.rankings if head else None,
        corpus=either.corpus,
        anchors=either.expected,
        moves=moves,
        latency=latency,
    )


@contextlib.contextmanager
def _naming_side(side: str, sha: str) -> Iterator[None]:
    """Name the side and commit in any configuration error raised inside, keeping its hint."""
    try:
        yield
    except CceError as exc:
        raise CceError(f"at {side} {sha[:12]}: {exc.message}", exc.hint) from exc


def _score_side(
    side: str,
    sha: str,
    tree: Path,
    subdir: Path,
    inputs: ActionInputs,
    clock: Stopwatch,
    shared: api.SharedIndexes,
    shard: api.Shard | None,
    *,
    required: bool,
) -> dict[str, SetAtCommit]:
    root = tree / subdir
    with _naming_side(side, sha):
        fixtures = expand_fixtures(inputs.fixture_patterns, root, tree, required=required)
        config = _project_config(tree, root, inputs.repository_retrievers)
        # At base, a variant the change adds is left out, as a fixture set the change adds is: the
        # comparison lists it as head-only. At head an unknown name is an error (a typo).
        backends = inputs.backends if required else tuple(b for b in inputs.backends if b in config.names)
        if not backends:
            return {}
        metric = rank_metric_name(inputs.regression_metric)
        options = api.RunOptions(
            backends=backends,
            config=config,
            metrics=None if metric is None else [metric],
            # One cache for base, head and the anchor checks: the head side reuses what the base indexed.
            indexing=api.BuildOptions(cache=str(inputs.cache_dir)),
            shard=shard,
        )
        goldens = dict(inputs.golden)
        indexes = shared.another_tree()  # sets of one side sharing a corpus share its index

        def stage(name: str) -> contextlib.AbstractContextManager[None]:
            return clock.stage(f"{side} {name}")

        with contextlib.chdir(root):
            return {
                fixture: _score_fixture(tree, subdir, fixture, options, indexes, stage, goldens.get(fixture))
                for fixture in fixtures
            }


def _project_config(tree: Path, root: Path, retrievers: bool) -> ProjectConfig:
    """The side's own `cce-relevance.toml`, vetted like every path the tree supplies (a file that
    resolves outside the tree is refused): variants only, unless repository retrievers are allowed
    (retriever_policy); a `command` one then runs in the config file's directory of this side's
    tree, so base code scores base and head code head."""
    config = api.load_config(None, str(root), top=str(tree))
    return config if retrievers else config.without_external(REFUSED_BY_DEFAULT)


def _score_fixture(
    tree: Path,
    subdir: Path,
    fixture: str,
    options: api.RunOptions,
    indexes: api.SharedIndexes,
    stage: Callable[[str], contextlib.AbstractContextManager[None]],
    golden: str | None,
) -> SetAtCommit:
    """The fixture's report JSON, anchor check and top hits (`api.score_set`); its corpus is vetted
    before a single file of it is read. The golden configured for the set is one of the run's own
    files, as for its update command: left out of a corpus holding it. Runs in the working
    directory, `tree / subdir`."""
    root = tree / subdir
    vetted = False  # set once the set is read: what fails before is the fixture file itself

    def inside_tree(corpus: str) -> None:
        nonlocal vetted
        vetted = True
        if not is_within(tree, root / corpus):
            raise CceError(
                f"fixture {fixture}: its corpus {corpus!r} resolves outside the repository",
                hint='point the header\'s "corpus" at a directory inside the repository, relative to the '
                "fixture file",
            )

    outputs = [golden] if golden is not None else []
    try:
        scored = api.score_set(
            fixture, replace(options, outputs=outputs), indexes, check_corpus=inside_tree, stage=stage
        )
    except CceError as exc:
        if vetted:
            raise
        raise _naming_input("fixtures", fixture, exc) from exc
    result = scored.run
    repository_corpus = Path(os.path.relpath((root / scored.corpus).resolve(), tree.resolve())).as_posix()
    # the text as a reader of the file sees it (universal newlines), for its line numbers
    text = scored.text.replace("\r\n", "\n").replace("\r", "\n")
    return SetAtCommit(
        run_report_json(result),
        scored.anchors,
        scored.top_hits,
        repository_corpus,
        {c.id: c.anchors for c in result.fixtures.cases},
        SideFixtures(result.fixtures, text, repository_corpus),
        result,
    )


def _read_goldens(
    tree: Path, subdir: Path, head: dict[str, SetAtCommit], inputs: ActionInputs, sha: str
) -> dict[str, GoldenFile]:
    """Each configured golden, read from the head tree (compared with its head report later:
    `GoldenFile.check`)."""
    goldens = {}
    metric = rank_metric_name(inputs.regression_metric)
    with _naming_side("head", sha):
        for fixture, golden in inputs.golden:
            if fixture not in head:
                raise CceError(
                    f"input 'golden': fixture {fixture} is not in the head commit",
                    hint="remove its line from 'golden', or add the fixture set back",
                )
            path = tree / subdir / golden
            if not is_within(tree, path):
                raise CceError(f"input 'golden': {golden} resolves outside the repository")
            try:
                goldens[fixture] = GoldenFile.read(str(path), fixture, golden, inputs.backends, metric)
            except CceError as exc:
                raise _naming_input("golden", golden, exc) from exc
    return goldens


def _naming_input(name: str, path: str, exc: CceError) -> CceError:
    """`exc`, raised reading the file `path` an input names, with the input's name (and the path,
    when the reader's words leave it out: a fixture's line errors are the reference's)."""
    message = exc.message if path in exc.message else f"{path}: {exc.message}"
    return CceError(f"input '{name}': {message}", exc.hint)
