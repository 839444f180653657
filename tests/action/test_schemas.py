"""The JSON Schemas in docs/schemas/ describe what we write: the Action's compare.json
(`cce.relevance.action/v1`), `compare --json` of two reports (`cce.relevance.compare/v1`) and of
three or more (`cce.relevance.systems/v1`, whose block a run report of three backends also holds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from cce_relevance import schemas
from cce_relevance.action.report.document import action_document
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.cli import main as cli_main
from tests.action.test_comment_goldens import BASE, HEAD, SCENARIOS, scenario
from tests.cli.helpers import cli
from tests.cli.saved_reports import report, rows, write

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def validator(name: str) -> Draft202012Validator:
    resources = []
    for path in SCHEMAS.glob("*.schema.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        resources.append((schema["$id"], Resource.from_contents(schema)))
    registry: Registry = Registry().with_resources(resources)
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema, registry=registry)


def documents() -> list[dict[str, Any]]:
    out = []
    for name in SCENARIOS:
        outcome, _ = scenario(name)
        reports = {
            s.fixture: {"base": "sets/01/base.json", "head": "sets/01/head.json"} for s in outcome.sets
        }
        out.append(
            json.loads(
                json.dumps(action_document(outcome, outcome.verdict(), CommitPair(BASE, HEAD), reports))
            )
        )
    return out


def test_every_action_document_we_write_is_valid() -> None:
    check = validator("cce.relevance.action.v1")
    for document in documents():
        check.validate(document)


def test_the_schema_refuses_what_we_never_write() -> None:
    check = validator("cce.relevance.action.v1")
    document = documents()[0]
    document["sets"][0]["compare"]["backends"][0]["metrics"]["mrr"]["mean_delta"] = "-0.5"  # not six decimals
    with pytest.raises(ValidationError):
        check.validate(document)
    with pytest.raises(ValidationError):
        check.validate({**documents()[0], "surprise": 1})


def test_compare_json_from_the_cli_is_valid(tmp_path: Path) -> None:
    outcome, _ = scenario("stale-anchors")
    s = outcome.sets[0]
    (tmp_path / "b.json").write_text(s.base or "", encoding="utf-8")
    (tmp_path / "h.json").write_text(s.head or "", encoding="utf-8")
    for extra in ([], ["--stats", "full"]):
        done = CliRunner().invoke(
            cli_main, ["compare", str(tmp_path / "b.json"), str(tmp_path / "h.json"), "--json", *extra]
        )
        assert done.exit_code == 0, done.output
        validator("cce.relevance.compare.v1").validate(json.loads(done.output))


def _systems_reports(tmp_path: Path) -> list[str]:
    """Three saved reports; the third has one query only, so its pairs' p-values are null (n < 2)."""
    values = {
        "r1": [[0.2, 0.5, 1.0, 0.3], [0.4, 1.0, 0.5, 0.6], [0.0, 0.0, 0.0, 0.0]],
        "r2": [[0.4, 0.5, 1.0, 0.4], [0.4, 1.0, 1.0, 0.6], [0.2, 0.5, 0.5, 0.3]],
        "r3": [[0.6, 1.0, 1.0, 0.7], [0.6, 1.0, 1.0, 0.7], [0.4, 1.0, 1.0, 0.6]],
    }
    return [
        write(
            tmp_path / f"{name}.json",
            report({"bm25": rows(v), "hybrid": rows(v[:1]), f"only-{name}": rows(v)}),
        )
        for name, v in values.items()
    ]


def test_systems_json_from_the_cli_is_valid(tmp_path: Path) -> None:
    check = validator("cce.relevance.systems.v1")
    document = json.loads(cli("compare", *_systems_reports(tmp_path), "--json").out)
    check.validate(document)
    pairs = {b["backend"]: b["metrics"]["mrr"]["pairs"] for b in document["backends"]}
    assert (
        set(pairs) == {"bm25", "hybrid"} and pairs["hybrid"][0]["t_p"] is None
    )  # both branches of fixedOrNull
    assert pairs["bm25"][0]["permutation_p"] is not None
    for broken in (
        {**document, "surprise": 1},
        {**document, "reports": document["reports"][:2]},
        {**document, "backends": [{**document["backends"][0], "extra": 1}]},
    ):
        with pytest.raises(ValidationError):
            check.validate(broken)
    pair = document["backends"][0]["metrics"]["mrr"]["pairs"][0]
    pair["hsd_p"] = "0.5"  # not six decimals
    with pytest.raises(ValidationError):
        check.validate(document)


def test_a_run_reports_systems_block_is_valid(repo_root: Path) -> None:
    run = json.loads(
        cli(
            "run",
            "eval/relevance/code.jsonl",
            "--compare",
            "bm25,vector,hybrid",
            "--json",
            "--metrics",
            "ndcg@5,ap",
            cwd=repo_root,
        ).out
    )
    block = validator("cce.relevance.systems.v1").evolve(
        schema={
            "$ref": "cce.relevance.systems.v1.schema.json#/$defs/runReportSystems",
            "$id": "https://github.com/your-org/cce-relevance/docs/schemas/run.json",
        }
    )
    block.validate(run["systems"])
    assert "ndcg_at_5" in run["systems"]["metrics"]
    with pytest.raises(ValidationError):
        block.validate({**run["systems"], "backend": "bm25"})  # only the systems document names a backend


def test_the_schema_files_name_the_ids_we_write() -> None:
    for name, schema_id in (
        ("cce.relevance.action.v1", schemas.ACTION),
        ("cce.relevance.compare.v1", schemas.COMPARE),
        ("cce.relevance.systems.v1", schemas.SYSTEMS),
    ):
        document = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
        assert document["properties"]["schema"] == {"const": schema_id} and document["title"] == schema_id
