"""The Action's main job (`mode: evaluate`, the default): find the repository, resolve the base and
head commits, score every fixture set at both — loading the base side an earlier run saved in
`cache-dir` instead of scoring it again (saved/base_reuse.py), saving the head side for later
runs — then report. A `shard: I/N` job scores its share of the queries and ends here.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from cce_relevance import __version__
from cce_relevance.action.config.inputs import ActionInputs
from cce_relevance.action.modes.deliver import ReportInput, deliver
from cce_relevance.action.modes.shard import end_shard
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.runner.workflow_commands import log
from cce_relevance.action.saved.base_reuse import SAVED_ON, save_head, saved_base
from cce_relevance.action.saved.side import scoring_config
from cce_relevance.action.scoring.model import ScoredSides
from cce_relevance.action.scoring.sides import anchor_moves, compared_sets, score_sides
from cce_relevance.action.scoring.timings import Stopwatch
from cce_relevance.action.trend.record import check_history
from cce_relevance.action.workspace.git import CommitPair, changed_files, find_repository, resolve_commits
from cce_relevance.action.workspace.output_dir import give_to_workspace_owner, prepare_cache_dir


def evaluate(inputs: ActionInputs, clock: Stopwatch) -> int:
    """Score both commits and report (or, as a shard, save the state for the merge job)."""
    repo, commits, sides = _score(inputs, clock)
    subdir = inputs.working_directory.relative_to(repo)
    moves = anchor_moves(repo, commits, sides)
    edited = _edited(repo, commits, subdir, sides.base.keys() | sides.head.keys(), inputs)
    if inputs.shard is not None:
        return end_shard(inputs, subdir, commits, sides, moves, edited, clock)
    sets = compared_sets(sides, inputs.regression_metric, moves, inputs.cost)
    outcome = Outcome(
        sets, inputs.regression_metric, inputs.alpha, inputs.fail_on, inputs.min_effect, inputs.power
    )
    return deliver(inputs, ReportInput(repo, subdir, commits, outcome, edited), clock)


def _score(inputs: ActionInputs, clock: Stopwatch) -> tuple[Path, CommitPair, ScoredSides]:
    """The repository, the two commits, and every fixture set scored at both (timed on `clock`);
    the base side is loaded instead when an earlier run saved it, and a branch run saves its head."""
    with clock.stage("commits"):
        repo = find_repository(inputs.working_directory)
        commits = resolve_commits(
            inputs.github.event_name,
            inputs.github.event,
            repo,
            base_ref=inputs.base_ref,
            head_ref=inputs.head_ref,
        )
        log(f"cce-relevance {__version__}: base {commits.base or '(none)'} -> head {commits.head}")
        check_history(repo, inputs)
        made = prepare_cache_dir(repo, inputs.github.workspace, inputs.cache_dir)
    config = scoring_config(inputs, inputs.working_directory.relative_to(repo))
    whole = inputs.shard is None
    try:
        started = clock.start()
        base = saved_base(inputs.cache_dir, commits.base, config, inputs.shard) if commits.base else None
        if base is not None:  # timed only when it replaces scoring the base
            clock.stop("base load", started)
        sides = score_sides(repo, commits, inputs, clock, shard=inputs.shard, base=base)
        if whole and inputs.github.event_name in SAVED_ON:  # for later runs from this head (base_reuse.py)
            with clock.stage("head save"):
                save_head(inputs.cache_dir, commits.head, config, sides.head)
    finally:  # the runner's user saves it with actions/cache and cleans the workspace up
        give_to_workspace_owner(made, inputs.github.workspace)
    return repo, commits, sides


def _edited(
    repo: Path, commits: CommitPair, subdir: Path, fixtures: Collection[str], inputs: ActionInputs
) -> tuple[str, ...]:
    """The fixture sets and goldens this change edits (paths as configured)."""
    if commits.base is None:
        return ()
    ours = {(subdir / fixture).as_posix(): fixture for fixture in fixtures}
    ours.update({(subdir / golden).as_posix(): golden for _, golden in inputs.golden})
    changed = set(changed_files(repo, commits.base, commits.head))
    return tuple(shown for path, shown in sorted(ours.items()) if path in changed)
