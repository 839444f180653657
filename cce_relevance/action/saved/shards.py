"""A sharded Action run: a matrix of `shard: I/N` jobs, then one `mode: merge` job.

A slow retriever or a large fixture set makes one job too slow; a CI matrix is the parallel
machine a team already has. Each shard job scores the queries whose id hashes to its shard
(`api.Shard`, the split `run --shard` uses) at base and at head, and writes one shard state,
`.cce-relevance/shard/shard-I-of-N.json` (`cce.relevance.action.shard/v1`), for
actions/upload-artifact: both saved sides (saved/side.py) and what needs the two commits, which
the shard computes while it has the repository: the range anchors whose lines moved or changed
(for its queries) and the fixture sets and goldens the change edits. A shard posts no comment
and gates nothing: it exits 0 unless its inputs are wrong.

The fan-in job downloads every shard's artifact into one directory (`shards-dir`) and merges:
it checks that the shards are one run split once — the same N, each shard 1..N exactly once,
the same commits, tool version and scoring configuration, every query scored exactly once —
and names the artifact file of any mismatch (exit 2). It needs no checkout: everything it
reports comes from the states. It then reports exactly as an unsharded run: one comment,
summary, outputs, report files and gate exit code, byte for byte the unsharded run's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_relevance import api, schemas, untrusted_json
from cce_relevance.action.config.inputs import MAX_SHARDS
from cce_relevance.action.saved.side import SavedSide, dumps_side, read_side, rebuild, side_document
from cce_relevance.action.scoring.model import Sides
from cce_relevance.action.scoring.range_anchors import AnchorMove
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.action.workspace.output_dir import OUTPUT_DIR, give_to_workspace_owner
from cce_relevance.atomic_files import write_output
from cce_relevance.errors import CceError

SHARD_DIR = "shard"  # inside the output directory: what the shard job uploads


def shard_file(shard: api.Shard) -> str:
    """The shard state's file name, `shard-I-of-N.json`."""
    return f"shard-{shard.index}-of-{shard.count}.json"


def save_shard(
    workspace: Path,
    shard: api.Shard,
    commits: CommitPair,
    config: Mapping[str, Any],
    sides: Sides,
    moves: Mapping[str, tuple[AnchorMove, ...]],
    edited: Sequence[str],
) -> Path:
    """Write the shard state under `.cce-relevance/shard/` (the output directory is fresh); returns
    its path."""
    document = {
        "schema": schemas.ACTION_SHARD,
        "shard": {"index": shard.index, "count": shard.count},
        "base": commits.base,
        "head": commits.head,
        "edited": list(edited),
        "anchor_moves": {fixture: [m.document() for m in found] for fixture, found in sorted(moves.items())},
        "sides": {
            "base": None if commits.base is None else side_document(commits.base, config, shard, sides.base),
            "head": side_document(commits.head, config, shard, sides.head, sides.goldens),
        },
    }
    directory = workspace / OUTPUT_DIR / SHARD_DIR
    directory.mkdir()
    path = directory / shard_file(shard)
    try:
        write_output(str(path), dumps_side(document))
    finally:
        give_to_workspace_owner(directory, workspace)
    return path


@dataclass(frozen=True)
class MergedRun:
    """What the shards scored, put back together: the commits, the working directory (relative
    to the repository), both sides, the moved range anchors, the edited files, and the
    regression metric the sides were scored for."""

    commits: CommitPair
    subdir: Path
    sides: Sides
    moves: dict[str, tuple[AnchorMove, ...]]
    edited: tuple[str, ...]
    regression_metric: str
    count: int


def read_shards(directory: Path) -> MergedRun:
    """Every shard state under `directory` (each artifact a directory of its own, any depth),
    checked to be one run split once, merged."""
    documents = [(path.relative_to(directory).as_posix(), path) for path in sorted(directory.rglob("*.json"))]
    if not documents:
        raise CceError(
            f"input 'shards-dir': no shard state (*.json) under {directory}",
            hint="download the artifacts the `shard: I/N` jobs uploaded (their .cce-relevance/shard/) "
            "into this directory, with actions/download-artifact",
        )
    states = [(name, _shaped(name, _load(name, path))) for name, path in documents]
    count = _check_numbering(states)
    first_name, first = states[0]
    for name, state in states[1:]:
        for key, what in (("base", "base commit"), ("head", "head commit"), ("edited", "edited files")):
            if state[key] != first[key]:
                raise CceError(
                    f"{name}: its {what} ({state[key]}) differs from {first_name}'s ({first[key]}): "
                    "the shards are not one run",
                    hint="merge the artifacts of one workflow run's shard jobs only",
                )
    heads = [(name, _side(name, state, "head")) for name, state in states]
    _check_alike(heads)
    head_side = heads[0][1]
    goldens = head_side.goldens
    for name, side in heads[1:]:
        if side.goldens != goldens:
            raise CceError(f"{name}: its goldens differ from {first_name}'s: the shards are not one run")
    bases = [(name, _side(name, state, "base")) for name, state in states] if first["base"] else []
    commits = CommitPair(first["base"], first["head"])
    sides = Sides(rebuild(bases) if bases else {}, rebuild(heads), goldens)
    return MergedRun(
        commits,
        Path(head_side.config["working_directory"]),
        sides,
        _moves(states),
        tuple(first["edited"]),
        str(head_side.config["regression_metric"]),
        count,
    )


def _load(name: str, path: Path) -> dict[str, Any]:
    document = untrusted_json.read_document(path, "shard state", name=name)
    if not isinstance(document, dict) or document.get("schema") != schemas.ACTION_SHARD:
        raise CceError(
            f'{name}: not an Action shard state (expected "schema": "{schemas.ACTION_SHARD}")',
            hint="upload only .cce-relevance/shard/ from the `shard: I/N` jobs",
        )
    return document


def _shaped(name: str, state: dict[str, Any]) -> dict[str, Any]:
    """`state` when it has the fields a shard state has, with their types; else an input error."""
    shard, sides = state.get("shard"), state.get("sides")
    fields = (
        isinstance(shard, dict)
        and all(isinstance(shard.get(k), int) for k in ("index", "count"))
        and isinstance(state.get("base"), (str, type(None)))
        and isinstance(state.get("head"), str)
        and isinstance(state.get("edited"), list)
        and isinstance(state.get("anchor_moves"), dict)
        and isinstance(sides, dict)
        and isinstance(sides.get("head"), dict)
    )
    if not fields:
        raise CceError(f"{name}: a shard state is malformed: expected a file written by a `shard: I/N` job")
    return state


def _side(name: str, state: dict[str, Any], which: str) -> SavedSide:
    side = read_side(state["sides"][which], f"{name} ({which})")
    if (side.shard.index, side.shard.count) != (state["shard"]["index"], state["shard"]["count"]):
        raise CceError(f"{name}: its {which} side is shard {side.shard}, not the file's")
    return side


def _check_numbering(states: Sequence[tuple[str, dict[str, Any]]]) -> int:
    """N, when the states are shards 1..N of one N, each once."""
    first_name, first = states[0]
    count = first["shard"]["count"]
    seen: dict[int, str] = {}
    if not 1 <= count <= MAX_SHARDS:  # a state from elsewhere: no job of ours writes one
        raise CceError(f"{first_name}: shard count {count} is not one of 1..{MAX_SHARDS}")
    for name, state in states:
        index, theirs = state["shard"]["index"], state["shard"]["count"]
        if theirs != count:
            raise CceError(
                f"{name}: shard {index}/{theirs}, but {first_name} is one of {count}: "
                "the shards must split the queries the same N ways"
            )
        if not 1 <= index <= count:
            raise CceError(f"{name}: shard {index}/{count} is not one of 1..{count}")
        if index in seen:
            raise CceError(
                f"{name}: shard {index}/{count} is also {seen[index]}: every shard must be merged once"
            )
        seen[index] = name
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise CceError(
            f"input 'shards-dir': shard {', '.join(f'{i}/{count}' for i in missing)} is missing: "
            f"expected the artifacts of all {count} shard jobs",
            hint="a shard job that failed or was cancelled uploaded nothing: re-run it, then this job",
        )
    return int(count)


def _check_alike(sides: Sequence[tuple[str, SavedSide]]) -> None:
    """The same tool version and scoring configuration in every shard, named when not."""
    first_name, first = sides[0]
    for name, side in sides[1:]:
        if side.version != first.version:
            raise CceError(
                f"{name}: scored by cce-relevance {side.version}, {first_name} by {first.version}: "
                "the shards must run one version of the Action"
            )
        if side.fingerprint != first.fingerprint:
            changed = sorted(
                k
                for k in first.config.keys() | side.config.keys()
                if side.config.get(k) != first.config.get(k)
            )
            raise CceError(
                f"{name}: scored with other inputs than {first_name} ({', '.join(changed)} differ): "
                "the shards must score the same fixtures, goldens, backends and regression metric"
            )


def _moves(states: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, tuple[AnchorMove, ...]]:
    """Each set's moved range anchors, from all shards, in fixture order (each query's anchors
    were followed by the one shard that scored it, in its order)."""
    found: dict[str, list[AnchorMove]] = {}
    for name, state in states:
        try:
            for fixture, moves in state["anchor_moves"].items():
                found.setdefault(fixture, []).extend(_move(m) for m in moves)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise CceError(f"{name}: its anchor_moves are malformed ({type(exc).__name__}: {exc})") from exc
    return {fixture: tuple(sorted(moves, key=lambda m: m.line)) for fixture, moves in found.items()}


def _move(data: Mapping[str, Any]) -> AnchorMove:
    """An anchor move read back from its `document()` form."""
    head = data["head_lines"]
    status = data["status"]
    if status not in ("moved", "changed"):
        raise ValueError(f"status {status!r}")
    return AnchorMove(
        str(data["id"]),
        int(data["line"]),
        str(data["anchor"]),
        status,
        str(data["path"]),
        (int(data["base_lines"][0]), int(data["base_lines"][1])),
        None if head is None else (int(head[0]), int(head[1])),
        None if data["fixture_line"] is None else str(data["fixture_line"]),
    )
