"""`mode: merge`: the fan-in job of a sharded run (saved/shards.py). It reads the shards' states
(data a pull request's code wrote: every field is checked before use) and reports exactly as an
unsharded run would.
"""

from __future__ import annotations

from cce_relevance import __version__
from cce_relevance.action.config.inputs import ActionInputs
from cce_relevance.action.modes.deliver import ReportInput
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.runner.workflow_commands import log
from cce_relevance.action.saved.shards import read_shards
from cce_relevance.action.scoring.sides import compared_sets
from cce_relevance.action.scoring.timings import Stopwatch
from cce_relevance.action.trend.record import merge_repository
from cce_relevance.action.workspace.git import event_commits
from cce_relevance.errors import CceError


def merge(inputs: ActionInputs, clock: Stopwatch) -> ReportInput:
    """`mode: merge`: the shards' states put back together, reported as the unsharded run."""
    assert inputs.shards_dir is not None
    github = inputs.github
    known = event_commits(github.event_name, github.event, inputs.head_ref)
    with clock.stage("merge"):
        try:
            merged = read_shards(inputs.shards_dir, head=known.head, base=known.base)
        except CceError as exc:  # an artifact's refusal names its file; the input says where it came from
            if exc.message.startswith("input '"):
                raise
            raise CceError(f"input 'shards-dir': {exc.message}", hint=exc.hint) from None
    commits = merged.commits
    log(
        f"cce-relevance {__version__}: base {commits.base or '(none)'} -> head {commits.head} "
        f"({merged.count} shards merged)"
    )
    if merged.regression_metric != inputs.regression_metric:
        raise CceError(
            f"input 'regression-metric': {inputs.regression_metric}, but the shards were scored for "
            f"{merged.regression_metric}",
            hint="give the merge job the shard jobs' 'regression-metric'",
        )
    sets = compared_sets(merged.sides, merged.regression_metric, merged.moves)
    outcome = Outcome(
        sets, merged.regression_metric, inputs.alpha, inputs.fail_on, inputs.min_effect, inputs.power
    )
    repo = merge_repository(inputs)  # the trend's store reads git: a checkout, if any
    return ReportInput(repo, merged.subdir, commits, outcome, merged.edited)
