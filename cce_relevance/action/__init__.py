"""The GitHub Action: scores a change's fixture sets at its base and head commits and reports.

Stages, each importing only earlier ones (tests/test_layout.py): `runner` (GitHub's REST API,
workflow commands, the deadline, the comment upsert) → `config` (the inputs) → `workspace`
(git, the output directory) → `scoring` (the sides at base and head, the result model) →
`report` (the gate and its exit code, the summary, the comment body, per-query changes,
fitting to size) → `saved` (sides kept across jobs), `trend` (the default branch's history) →
`modes` (publish) → `main` (reads the inputs, dispatches, keeps the error boundary). The
library's use cases are reached only through `cce_relevance.api`; the evaluation data they do
not take or give (anchors, goldens, shards, metric names) is imported from the modules that
own it.
"""
