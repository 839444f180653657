"""The package's layers: every import goes from a later layer to an earlier one, and none loops.

Rooms, in order (each imports only rooms on earlier lines, and itself):

    shared helpers (top-level modules not named below: errors, strings, numeric, config, ...)
    → stats, retrieval (numbers in, numbers out; corpus to ranked hits: neither imports the other)
    → project_config (the user's cce-relevance.toml: backend variants, retrievers, languages)
    → evaluation → reporting → api → action, cli_flags, cli_boundary (the CLI's shared flags and its
    error boundary) → cli → __main__

The Action reaches the library's use cases only through the facade: `action/` imports `api`,
`errors`, the data model and constants of `evaluation/` from the modules that own them (anchors,
goldens, shards, metric names: the facade does not re-export them), the renderers in
`reporting/` and the shared helpers, nothing of retrieval or stats.

Inside `retrieval/`, stage packages, in order (a stage imports only earlier lines; packages on
one line do not import each other):

    tokens, _http, hit
    → corpus
    → chunking, embedding
    → ranking → file_indexing → cache → index
    → embedders
    → search, store

Inside `action/`, likewise:

    runner (GitHub's REST API, workflow commands, the deadline, the comment upsert)
    → config (the inputs) → workspace (git, the output directory)
    → scoring (the sides at base and head) → report (the gate, the summary,
      the comment body, query changes, annotations, fitting to size)
    → saved, trend (sides kept across jobs; the default branch's history)
    → modes (evaluate, shard, merge, publish; deliver and comment, which end the first three)
    → main (reads the inputs, dispatches, keeps the error boundary)

The graph is read from the source with `ast`, every import statement included (type-checking
and function-level ones too).
"""

from __future__ import annotations

import pytest

from .import_graph import PACKAGE, cycles, import_graph

ROOMS = [
    {"stats", "retrieval"},
    {"project_config"},
    {"evaluation"},
    {"reporting"},
    {"api"},
    {"action", "cli_flags", "cli_boundary"},
    {"cli"},
    {"__main__"},
]
"""Rooms after the shared helpers, in import order (position + 1 is the rank; helpers are 0)."""

STAGES = [
    {"tokens", "_http", "hit"},
    {"corpus"},
    {"chunking", "embedding"},
    {"ranking"},
    {"file_indexing"},
    {"cache"},
    {"index"},
    {"embedders"},
    {"search", "store"},
]
"""`retrieval/` packages and modules by rank."""

ACTION_STAGES = [
    {"runner"},
    {"config"},
    {"workspace"},
    {"scoring"},
    {"report"},
    {"saved", "trend"},
    {"modes"},
    {"main"},
]
"""`action/` packages and modules by rank."""

STAGED_ROOMS = {"retrieval": STAGES, "action": ACTION_STAGES}
"""Rooms split into stages, each with its stages in order."""

FACADE_ONLY = {"action": {"api", "errors", "evaluation", "reporting", "action"}}
"""Rooms that may import only these rooms (and the shared helpers)."""


def _room(module: str) -> tuple[int, str]:
    """A module's room rank and the room's name (shared helpers: 0, named after the module)."""
    parts = module.split(".")
    if len(parts) == 1:
        return 0, PACKAGE
    name = parts[1]
    rank = next((rank for rank, rooms in enumerate(ROOMS, 1) if name in rooms), 0)
    return rank, name


def _stage(module: str) -> tuple[int, str] | None:
    """A staged room's module: its stage rank and unit (sub-package or top module); None outside."""
    parts = module.split(".")
    stages = STAGED_ROOMS.get(parts[1]) if len(parts) > 1 else None
    if stages is None:
        return None
    if len(parts) == 2:
        return -1, parts[1]  # the package itself: a docstring
    unit = parts[2]
    for rank, units in enumerate(stages):
        if unit in units:
            return rank, unit
    raise AssertionError(
        f"{module}: {parts[1]}/{unit} is in no stage; add it to its room's stages in its place"
    )


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes against the room order or the retrieval stage order."""
    found = []
    for source in sorted(graph):
        for target in sorted(graph[source]):
            source_room, target_room = _room(source), _room(target)
            if source_room[0] == target_room[0] == 0:
                continue  # shared helpers among themselves: only cycles are refused
            allowed = FACADE_ONLY.get(source_room[1])
            if allowed is not None and target_room[0] != 0 and target_room[1] not in allowed:
                found.append(
                    f"{source} → {target}: room {source_room[1]} reaches the library only "
                    f"through {', '.join(sorted(allowed))}"
                )
                continue
            if source_room[1] != target_room[1] and source_room[0] <= target_room[0]:
                found.append(
                    f"{source} → {target}: room {source_room[1]} may not import room {target_room[1]}"
                )
                continue
            source_stage, target_stage = _stage(source), _stage(target)
            if source_room[1] != target_room[1] or source_stage is None or target_stage is None:
                continue
            if source_stage[1] == target_stage[1]:
                continue
            if source_stage[0] <= target_stage[0]:
                found.append(
                    f"{source} → {target}: stage {source_stage[1]} may not import stage {target_stage[1]}"
                )
    return found


def test_no_import_goes_against_the_order():
    assert violations(import_graph()) == []


def test_there_is_no_import_cycle():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize("room", sorted(STAGED_ROOMS))
def test_every_package_of_a_staged_room_has_a_stage_and_every_stage_exists(room):
    graph = import_graph()
    units = {module.split(".")[2] for module in graph if module.startswith(f"{PACKAGE}.{room}.")}
    assert units == set().union(*STAGED_ROOMS[room])
    assert all(_stage(module) is not None for module in graph if module.startswith(f"{PACKAGE}.{room}."))


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("retrieval.corpus.walk", "retrieval.chunking.packs"),  # one line of stages
        ("retrieval.ranking.bm25", "retrieval.index.model"),  # a later stage
        ("retrieval.hit", "retrieval.tokens"),
        ("stats.paired", "evaluation.metrics"),  # a later room
        ("stats.paired", "retrieval.tokens"),  # a room on the same line
        ("retrieval.hit", "stats.paired"),
        ("evaluation.metrics", "reporting.numbers"),
        ("errors", "retrieval.hit"),  # a shared helper reaching into a room
        ("api", "cli"),
        ("action.report.outcome", "retrieval.hit"),  # past the facade
        ("action.scoring.sides", "stats.paired"),
        ("action.main", "project_config"),
        ("action.runner.github", "action.config.inputs"),  # a later stage of the Action
        ("action.report.outcome", "action.trend.history"),
        ("action.saved.side", "action.trend.record"),  # one line of stages
    ],
)
def test_an_import_against_the_order_is_reported(source, target):
    graph = import_graph()
    source, target = f"{PACKAGE}.{source}", f"{PACKAGE}.{target}"
    assert source in graph and target in graph
    graph[source] = graph[source] | {target}
    assert [v for v in violations(graph) if v.startswith(f"{source} → {target}:")]


def test_a_new_cycle_is_reported():
    graph = import_graph()
    graph[f"{PACKAGE}.errors"] = graph[f"{PACKAGE}.errors"] | {f"{PACKAGE}.atomic_files"}
    assert [f"{PACKAGE}.atomic_files", f"{PACKAGE}.errors"] in cycles(graph)
