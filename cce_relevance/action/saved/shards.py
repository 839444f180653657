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
from cce_relevance.action.saved.side import (
    SavedSide,
    dumps_side,
    read_shard_numbers,
    read_side_field,
    read_span,
    rebuild,
    side_document,
)
from cce_relevance.action.scoring.model import ScoredSides
from cce_relevance.action.scoring.range_anchors import AnchorMove, Status
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
    sides: ScoredSides,
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
    sides: ScoredSides
    moves: dict[str, tuple[AnchorMove, ...]]
    edited: tuple[str, ...]
    regression_metric: str
    count: int


def read_shards(directory: Path, *, head: str | None = None, base: str | None = None) -> MergedRun:
    """Every shard state under `directory` (each artifact a directory of its own, any depth),
    read field by field (`_read_state`), checked to be one run split once, merged. `head` and
    `base`: the commits the merge job knows from its event (`workspace.git.event_commits`), when
    it does: a state for another commit is refused."""
    documents = [(path.relative_to(directory).as_posix(), path) for path in sorted(directory.rglob("*.json"))]
    if not documents:
        raise CceError(
            f"input 'shards-dir': no shard state (*.json) under {directory}",
            hint="download the artifacts the `shard: I/N` jobs uploaded (their .cce-relevance/shard/) "
            "into this directory, with actions/download-artifact",
        )
    read = [_read_state(name, _load(name, path), base, head) for name, path in documents]
    count = _check_numbering(read)
    first = read[0]
    for state in read[1:]:
        for what, mine, theirs in (
            ("base commit", first.base, state.base),
            ("head commit", first.head, state.head),
            ("edited files", first.edited, state.edited),
        ):
            if theirs != mine:
                raise CceError(
                    f"{state.name}: its {what} ({_listed(theirs)}) differs from {first.name}'s "
                    f"({_listed(mine)}): the shards are not one run",
                    hint="merge the artifacts of one workflow run's shard jobs only",
                )
    saved = [_sides(state) for state in read]
    heads = [(state.name, head_side) for state, (_, head_side) in zip(read, saved, strict=True)]
    _check_alike(heads)
    head_side = heads[0][1]
    goldens = head_side.goldens
    for name, side in heads[1:]:
        if side.goldens != goldens:
            raise CceError(f"{name}: its goldens differ from {first.name}'s: the shards are not one run")
    bases = [
        (state.name, base_side)
        for state, (base_side, _) in zip(read, saved, strict=True)
        if base_side is not None
    ]
    sides = ScoredSides(rebuild(bases) if bases else {}, rebuild(heads), goldens)
    return MergedRun(
        CommitPair(first.base, first.head),
        Path(head_side.config["working_directory"]),
        sides,
        _moves(read),
        first.edited,
        str(head_side.config["regression_metric"]),
        count,
    )


def _listed(value: str | None | tuple[str, ...]) -> str:
    return ", ".join(value) if isinstance(value, tuple) else str(value)


def _load(name: str, path: Path) -> untrusted_json.Field:
    document = untrusted_json.read_document(path, "shard state", name=name)
    if not isinstance(document, dict) or document.get("schema") != schemas.ACTION_SHARD:
        raise CceError(
            f'{name}: not an Action shard state (expected "schema": "{schemas.ACTION_SHARD}")',
            hint="upload only .cce-relevance/shard/ from the `shard: I/N` jobs",
        )
    return untrusted_json.Field(document, name)


@dataclass(frozen=True)
class _State:
    """One shard state, read: its file name, shard, commits, edited files, moved anchors, sides."""

    name: str
    shard: api.Shard
    base: str | None
    head: str
    edited: tuple[str, ...]
    moves: tuple[tuple[str, tuple[AnchorMove, ...]], ...]
    sides: untrusted_json.Field  # read once the states are known to be one run (`_sides`)


def _read_state(
    name: str, document: untrusted_json.Field, known_base: str | None, known_head: str | None
) -> _State:
    """A shard state read by its schema, every field: the shard numbers, the commits (lowercase
    hex; the commits the merge job knows, when given), the edited files (relative paths) and the
    anchor moves; the sides are read by `_with_sides`."""
    fields = document.object(("schema", "shard", "base", "head", "edited", "anchor_moves", "sides"))
    shard = read_shard_numbers(fields["shard"])
    base = fields["base"].optional(untrusted_json.Field.commit)
    head = fields["head"].commit()
    for key, theirs, ours in (("base", base, known_base), ("head", head, known_head)):
        if ours is not None and theirs != ours:
            fields[key].refuse(f"the shards are for commit {theirs or '(none)'}, but this run is for {ours}")
    # The edited fixture sets and goldens, and the sets of the moves, are paths relative to the
    # working directory the head side was scored in (they may climb out of it, not the workspace).
    under = fields["sides"].key("head").key("config").key("working_directory").path(root=True)

    def relative(path: untrusted_json.Field) -> str:
        return path.path(under=under)

    edited = tuple(fields["edited"].list_of(relative))
    moves = tuple(
        (fixture, tuple(_move(m) for m in entry.items()))
        for fixture, entry in fields["anchor_moves"].entries(relative)
    )
    return _State(name, shard, base, head, edited, moves, fields["sides"])


def _sides(state: _State) -> tuple[SavedSide | None, SavedSide]:
    """A state's base side (None without a base commit) and head side (read_side), each of the
    file's shard and commit."""
    sides = state.sides.object(("base", "head"))
    if state.base is None and sides["base"].value is None:
        return None, _side(sides["head"], state.shard, state.head)
    return _side(sides["base"], state.shard, state.base), _side(sides["head"], state.shard, state.head)


def _side(field: untrusted_json.Field, shard: api.Shard, commit: str | None) -> SavedSide:
    """A shard state's side: a saved side of the state's shard and of its commit."""
    if commit is None:
        field.expected("null (the state has no base commit)")
    side = read_side_field(field)
    if side.shard != shard:
        field.key("shard").refuse(f"the side is shard {side.shard}, the state shard {shard}")
    if side.commit != commit:
        field.key("commit").refuse(f"the side is of commit {side.commit}, the state's is {commit}")
    return side


def _check_numbering(states: Sequence[_State]) -> int:
    """N, when the states are shards 1..N of one N, each once."""
    first = states[0]
    count = first.shard.count
    seen: dict[int, str] = {}
    if not 1 <= count <= MAX_SHARDS:  # a state from elsewhere: no job of ours writes one
        raise CceError(f"{first.name}: shard count {count} is not one of 1..{MAX_SHARDS}")
    for state in states:
        index, theirs = state.shard.index, state.shard.count
        if theirs != count:
            raise CceError(
                f"{state.name}: shard {index}/{theirs}, but {first.name} is one of {count}: "
                "the shards must split the queries the same N ways"
            )
        if not 1 <= index <= count:
            raise CceError(f"{state.name}: shard {index}/{count} is not one of 1..{count}")
        if index in seen:
            raise CceError(
                f"{state.name}: shard {index}/{count} is also {seen[index]}: every shard must be merged once"
            )
        seen[index] = state.name
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise CceError(
            f"input 'shards-dir': shard {', '.join(f'{i}/{count}' for i in missing)} is missing: "
            f"expected the artifacts of all {count} shard jobs",
            hint="a shard job that failed or was cancelled uploaded nothing: re-run it, then this job",
        )
    return count


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


def _moves(states: Sequence[_State]) -> dict[str, tuple[AnchorMove, ...]]:
    """Each set's moved range anchors, from all shards, in fixture order (each query's anchors
    were followed by the one shard that scored it, in its order)."""
    found: dict[str, list[AnchorMove]] = {}
    for state in states:
        for fixture, moves in state.moves:
            found.setdefault(fixture, []).extend(moves)
    return {fixture: tuple(sorted(moves, key=lambda m: m.line)) for fixture, moves in found.items()}


_FIXTURE_LINE = 1 << 20  # characters of a fixture line a moved anchor rewrites


def _move(field: untrusted_json.Field) -> AnchorMove:
    """An anchor move read back from its `document()` form, every field checked."""
    f = field.object(("id", "line", "anchor", "status", "path", "base_lines", "head_lines", "fixture_line"))
    status: Status = "moved" if f["status"].choice(("moved", "changed")) == "moved" else "changed"
    return AnchorMove(
        f["id"].line(),
        f["line"].integer(1),
        f["anchor"].line(),
        status,
        f["path"].path(),
        read_span(f["base_lines"]),
        f["head_lines"].optional(read_span),
        f["fixture_line"].optional(lambda line: line.line(_FIXTURE_LINE)),
    )
