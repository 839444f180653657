"""A `shard: I/N` job's end (saved/shards.py describes the sharded run): its state in the output
directory for actions/upload-artifact, and a line saying what it scored. No report, no comment,
no gate: the `mode: merge` job has them.
"""

from __future__ import annotations

from pathlib import Path

from cce_relevance.action.config.inputs import ActionInputs
from cce_relevance.action.report.outcome import counted
from cce_relevance.action.runner.workflow_commands import log, write_step_outputs
from cce_relevance.action.saved.shards import save_shard
from cce_relevance.action.saved.side import scoring_config
from cce_relevance.action.scoring.model import ScoredSides
from cce_relevance.action.scoring.range_anchors import AnchorMove
from cce_relevance.action.scoring.timings import Stopwatch
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.action.workspace.output_dir import fresh_output_dir, give_to_workspace_owner
from cce_relevance.errors import EXIT_OK


def end_shard(
    inputs: ActionInputs,
    subdir: Path,
    commits: CommitPair,
    sides: ScoredSides,
    moves: dict[str, tuple[AnchorMove, ...]],
    edited: tuple[str, ...],
    clock: Stopwatch,
) -> int:
    """A `shard: I/N` job's end: its state in the output directory, for actions/upload-artifact;
    no report, no comment, no gate (the `mode: merge` job has them)."""
    assert inputs.shard is not None
    github = inputs.github
    with clock.stage("report"):
        directory = fresh_output_dir(github.workspace, keep=inputs.cache_dir)
        try:
            config = scoring_config(inputs, subdir)
            path = save_shard(github.workspace, inputs.shard, commits, config, sides, moves, edited)
        finally:
            give_to_workspace_owner(directory, github.workspace)
        shown = path.relative_to(github.workspace).as_posix()
        if github.output_path is not None:
            write_step_outputs(github.output_path, {"shard-state": shown})
    queries = sum(len(r.expected) for r in sides.head.values())
    log(
        f"Shard {inputs.shard}: {counted(queries, 'query', 'queries')} of "
        f"{counted(len(sides.head), 'fixture set')}, at "
        f"{'base and head' if commits.base else 'head'}; state {shown} (upload it for the `mode: merge` job)"
    )
    log(clock.line())
    return EXIT_OK
