"""The id of every document this tool reads or writes, each stated once.

A document names its schema in its `schema` field (a fixture set in its header line). The ids
are the reference's where the document is the reference's (fixtures, the run report); the others
are ours, versioned the same way. The index cache's own layout version lives with the cache
(retrieval/cache/index_cache.py): it is no document anyone reads.
"""

from __future__ import annotations

FIXTURES = "cce.relevance/v1"
"""A fixture set (NDJSON): the header line's `schema`."""

REPORT = "cce.relevance.report/v2"
"""A run report (`run --json`, goldens)."""

REPORTS_READ = ("cce.relevance.report/v1", REPORT)
"""Run reports `compare` and `power` read back, oldest first."""

COMPARE = "cce.relevance.compare/v1"
"""`compare --json`."""

SYSTEMS = "cce.relevance.systems/v1"
"""`compare --json` of three or more reports (a systems comparison)."""

VALIDATE = "cce.relevance.validate/v1"
"""`validate --json`."""

POWER = "cce.relevance.power/v1"
"""`power --json`."""

ACTION = "cce.relevance.action/v1"
"""The Action's JSON summary."""

PULL_REQUEST = "cce.relevance.pull-request/v1"
"""The Action's `pull-request.json`: which pull request and head a comment is for (`mode: publish`)."""

COST = "cce.relevance.cost/v1"
"""What a run cost (`run --cost`): each backend's query latency and its embedder's work. The
`cost` key of `run --json --cost`, never part of a golden (wall times differ from run to run)."""

FINGERPRINT = "cce-relevance.fingerprint/v1"
"""The fingerprint written beside an index store."""

SHARD = "cce.relevance.shard/v1"
"""One shard of a run (`run --shard I/N --shard-state FILE`): per-query values as exact floats, so
`merge` rebuilds the unsharded report byte for byte."""

ACTION_SIDE = "cce.relevance.action.side/v1"
"""One side of an Action run saved (action/saved/side.py): per fixture set the per-query values,
anchor check, top hits and anchors, and the goldens read at head."""

ACTION_SHARD = "cce.relevance.action.shard/v1"
"""One shard of an Action run (`shard: I/N`): its two saved sides and what needs both (moved range
anchors, edited files), for the fan-in job's `mode: merge`."""

HISTORY = "cce.relevance.history/v1"
"""The Action's trend history (input `history`): the means of every push to the default branch."""

TREND = "cce.relevance.trend/v1"
"""`trend --json`: series of a trend history, every point with its commit, date and value."""
