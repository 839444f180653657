"""A base side scored earlier, reused instead of scoring it again.

A run on a branch's tip (`SAVED_ON`: a push, a schedule) that scores all queries (no `shard`)
saves its head side (saved/side.py) in the cache directory, as `sides/SHA-FINGERPRINT.json` (the
newest `KEPT` are kept): a push to the default branch thereby leaves the side of the commit that
later pull requests branch from, and `actions/cache` keeps it with the index cache. A pull
request's run saves nothing: its head is seldom another run's base, and a saved side names every
top hit's symbol, which parses every file a top hit lies in (about 1.3 P on the standard
library), where the comment names only the few it shows. A run whose base commit (for a pull request, the
merge-base) has a saved side of the same fingerprint — the same tool version and scoring inputs;
the commit pins every file that was read — loads it and skips scoring the base: the report,
comparison and comment are the ones re-scoring gives, byte for byte, since the saved per-query
values are the ones the scoring would compute. A shard (`shard: I/N`) of such a run takes its
own queries of the saved whole side (`shard_side`, the id hash split of `api.Shard`), so a
matrix of shards scores only its head, and the shard state it saves is the one scoring its base
gives; the fingerprint leaves the shard out, so the push run's side matches. A saved side of
that commit with another fingerprint is ignored with a notice; one that cannot be read is
ignored with a warning: a cache is never a reason to fail.

The cache directory comes from earlier runs, never from the checkout (output_files.py
`prepare_cache_dir` refuses one the repository tracks), so what is reused was scored by a run of
this workflow. A saved side records each retriever's results, so with repository retrievers
(`allow-repository-retrievers`) reuse assumes a retriever's answers depend on its commit alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cce_relevance import api, untrusted_json
from cce_relevance.action.runner.workflow_commands import annotation, log
from cce_relevance.action.saved.side import dumps_side, fingerprint, read_side, rebuild, side_document
from cce_relevance.action.scoring.model import SetAtCommit
from cce_relevance.action.scoring.range_anchors import SideFixtures
from cce_relevance.atomic_files import write_output
from cce_relevance.errors import CceError
from cce_relevance.evaluation.shards import shard_part
from cce_relevance.reporting.run_report import run_report_json

SIDES_DIR = "sides"  # inside the cache directory
WHOLE = api.Shard(1, 1)
SAVED_ON = frozenset({"push", "schedule"})  # the events whose head side is saved
KEPT = 32  # saved sides kept, the newest: a cache carried from push to push stays bounded


def side_path(cache_dir: Path, commit: str, config: Mapping[str, Any]) -> Path:
    """Where the side of `commit` scored with `config` is saved."""
    return cache_dir / SIDES_DIR / f"{commit}-{fingerprint(config)[:16]}.json"


def save_head(
    cache_dir: Path, commit: str, config: Mapping[str, Any], head: Mapping[str, SetAtCommit]
) -> None:
    """Save a whole head side for later runs whose base is `commit`, keeping the `KEPT` newest.
    Best effort: a side that cannot be saved is a warning (a later run scores that base itself)."""
    path = side_path(cache_dir, commit, config)
    try:
        path.parent.mkdir(exist_ok=True)
        write_output(str(path), dumps_side(side_document(commit, config, WHOLE, head)))
        prune(path.parent)
    except (OSError, CceError) as exc:
        reason = exc.message if isinstance(exc, CceError) else exc.strerror or str(exc)
        log(annotation("warning", f"Could not save the head side for later runs: {reason}"))


def prune(directory: Path, keep: int = KEPT) -> None:
    """Delete all but the `keep` newest saved sides in `directory`."""
    saved = sorted(directory.glob("*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name), reverse=True)
    for old in saved[keep:]:
        old.unlink()


def saved_base(
    cache_dir: Path, commit: str, config: Mapping[str, Any], shard: api.Shard | None = None
) -> dict[str, SetAtCommit] | None:
    """The base side of `commit` saved by an earlier run with the same fingerprint, or None (then
    the base is scored); says which in the log. A shard (`shard: I/N`) takes its own queries of
    the saved whole side (`shard_side`)."""
    wanted = side_path(cache_dir, commit, config)
    others = sorted(p for p in (cache_dir / SIDES_DIR).glob(f"{commit}-*.json") if p != wanted)
    if not wanted.is_file():
        if others:
            log(
                annotation(
                    "notice",
                    f"A saved side of base {commit[:12]} was scored with another tool version or other "
                    "inputs (fixtures, goldens, backends, regression metric, working directory); "
                    "scoring the base again.",
                )
            )
        return None
    shown = wanted.relative_to(cache_dir).as_posix()
    try:
        side = read_side(untrusted_json.read_document(wanted, "saved side", name=shown), shown)
        if (side.commit, side.fingerprint, side.shard) != (commit, fingerprint(config), WHOLE):
            raise CceError(f"{shown}: not the whole side of {commit[:12]} with these inputs")
        results = rebuild([(shown, side)])
    except (OSError, ValueError, CceError) as exc:
        reason = exc.message if isinstance(exc, CceError) else str(exc)
        log(annotation("warning", f"Ignoring the saved base side: {reason}; scoring the base again."))
        return None
    log(
        f"Base {commit[:12]}: reusing the side an earlier run saved ({shown}) instead of scoring it"
        + ("" if shard is None else f", shard {shard}'s queries of it")
    )
    return results if shard is None else shard_side(results, shard)


def shard_side(whole: Mapping[str, SetAtCommit], shard: api.Shard) -> dict[str, SetAtCommit]:
    """A whole side cut down to `shard`'s queries: per set, what scoring only them gives (the
    run, its report, the top hits and anchors of those queries, the set as read with only them),
    so the shard state saved from it is the one a shard that scored its base saves, byte for
    byte. The anchor check stays the whole set's, as a live shard's does."""
    return {fixture: _shard_part(result, shard) for fixture, result in whole.items()}


def _shard_part(result: SetAtCommit, shard: api.Shard) -> SetAtCommit:
    run = shard_part(result.run, shard)
    ids = [case.id for case in run.fixtures.cases]
    return SetAtCommit(
        run_report_json(run),
        result.anchors,
        {backend: {i: by_case[i] for i in ids} for backend, by_case in result.rankings.items()},
        result.corpus,
        {i: result.expected[i] for i in ids},
        SideFixtures(run.fixtures, result.fixtures.text, result.fixtures.corpus),
        run,
    )
