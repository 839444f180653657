"""How a run scores a fixture set, as one frozen value: what `run`, `score_saved_rankings` and
`score_set` take besides the set and its corpus.

The front doors build it once from their flags or inputs (black's `Mode` is the model): names are
sequences, never comma lists, and are checked by the run at the point where the reference
checks them (§order), not here, so the error that wins when several inputs are wrong stays the
reference's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY
from cce_relevance.evaluation.shards import Shard
from cce_relevance.project_config import NO_CONFIG, ProjectConfig
from cce_relevance.retrieval.index.build import DEFAULT_BUILD, BuildOptions
from cce_relevance.stats.stats_level import StatsLevel


@dataclass(frozen=True)
class RunOptions:
    """What to score and how.

    `backends` names the backends to score (None: the three built-ins); `compare` names two or
    more instead and compares them (A then B), with `stats_level="full"` adding the full
    statistics that name `primary` (a metric key) the primary metric. `metrics` (rank metric
    names) adds rank metrics; it and `trec` (TREC files wanted) make the run read each case's
    `grades` and judge every chunk against every case. `config` adds the project's backend
    variants and retrievers to the names these may use; `languages` (extra language packs)
    defaults to the config's. `indexing` says how a corpus directory is indexed. `outputs` are the
    command's own files (a golden, `--output`, a TREC run path whose `{backend}` stands for every
    backend name the config knows): a corpus directory never includes them. `shard` scores only
    the queries whose id hashes to it. `labels` reads the cases' optional `irrelevant` labels even
    without rank metrics (per-query text marks the hits a reviewer judged not relevant), and not
    their `grades`; rank metrics and TREC files read both anyway.
    """

    backends: Sequence[str] | None = None
    compare: Sequence[str] | None = None
    stats_level: StatsLevel = "reference"
    primary: str = DEFAULT_PRIMARY
    metrics: Sequence[str] | None = None
    trec: bool = False
    config: ProjectConfig = NO_CONFIG
    languages: Sequence[str] | None = None
    indexing: BuildOptions = DEFAULT_BUILD
    outputs: Sequence[str] = ()
    shard: Shard | None = None
    labels: bool = False

    def __post_init__(self) -> None:
        for name in ("backends", "compare", "metrics", "languages", "outputs"):  # frozen all the way down
            value = getattr(self, name)
            if isinstance(value, str):  # a comma list is the CLI's to split
                raise TypeError(f"{name} takes a sequence of names, not one string: {value!r}")
            if value is not None:
                object.__setattr__(self, name, tuple(value))

    @property
    def chunk_languages(self) -> Sequence[str]:
        """The extra languages corpora are chunked with: `languages`, else the config's."""
        return self.config.languages if self.languages is None else self.languages

    @property
    def own_files(self) -> list[str]:
        """`outputs` with `{backend}` written out for every backend name the config knows,
        whether or not this run scores it."""
        return [
            path.replace("{backend}", name) if "{backend}" in path else path
            for path in self.outputs
            for name in (self.config.names if "{backend}" in path else ("",))
        ]


DEFAULT_OPTIONS = RunOptions()
