"""`cce-relevance validate`: stale anchors of every kind on a real corpus, exit codes, JSON, and the
api the Action uses to label stale anchors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cce_relevance import api
from cce_relevance.evaluation.validation import STALE_CODES
from tests.cli.helpers import cli, cli_process


@pytest.fixture()
def refactored(repo_root: Path, tmp_path: Path) -> Path:
    """Our code starter set over a copy of its corpus after a careless refactor:
    python.py deleted, c.c cut to its first 6 lines, rust.rs's enum removed, and ten comment
    lines pushed above everything in typescript.ts."""
    corpus = tmp_path / "samples"
    shutil.copytree(repo_root / "test/fixture/samples", corpus)
    (corpus / "python.py").unlink()
    c_lines = (corpus / "c.c").read_text().splitlines(keepends=True)
    (corpus / "c.c").write_text("".join(c_lines[:6]))
    rust_lines = (corpus / "rust.rs").read_text().splitlines(keepends=True)
    (corpus / "rust.rs").write_text("".join(rust_lines[:17]))
    ts = corpus / "typescript.ts"
    ts.write_text("// moved\n" * 10 + ts.read_text())
    fixtures = (repo_root / "eval/relevance/code.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "code.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"samples"}\n' + "".join(fixtures[1:])
    )
    return tmp_path


UNSATISFIABLE = "no backend can satisfy this case: none of its anchors resolves to a chunk"
EXPECTED = [
    (
        2,
        "missing-file",
        "code-record-shipment",
        "python.py#function_definition@14-16",
        'no file "python.py" in the corpus (missing, ignored, or not indexed as text)',
    ),
    (2, "unsatisfiable", "code-record-shipment", None, UNSATISFIABLE),
    (
        5,
        "no-chunk-in-range",
        "code-format-price",
        "typescript.ts@6-8",
        'no chunk of "typescript.ts" overlaps lines 6-8',
    ),
    (5, "unsatisfiable", "code-format-price", None, UNSATISFIABLE),
    (
        6,
        "missing-kind",
        "code-enum-kinds",
        "#enum_item",
        'no chunk of kind "enum_item" anywhere in the corpus',
    ),
    (8, "range-past-end", "code-count-lines", "c.c@8-16", '"c.c" has 6 lines; lines 8-16 are past its end'),
    (8, "unsatisfiable", "code-count-lines", None, UNSATISFIABLE),
    (
        10,
        "missing-file",
        "code-load-inventory",
        "python.py#function_definition",
        'no file "python.py" in the corpus (missing, ignored, or not indexed as text)',
    ),
    (10, "unsatisfiable", "code-load-inventory", None, UNSATISFIABLE),
    (
        11,
        "missing-kind",
        "code-throttle",
        "rust.rs#enum_item@19-22",
        '"rust.rs" has no chunk of kind "enum_item" (its kinds: function_item, impl_item, struct_item)',
    ),
    (11, "unsatisfiable", "code-throttle", None, UNSATISFIABLE),
]


def test_stale_anchors_of_every_kind_are_reported_in_fixture_order(refactored: Path) -> None:
    result = cli_process("validate", "code.jsonl", "--json", cwd=refactored)
    assert result.code == 1
    assert result.err.startswith("error: 11 problem(s) in code.jsonl")
    doc = json.loads(result.out)
    assert (doc["schema"], doc["ok"], doc["cases"], doc["anchors"], doc["corpus"]) == (
        "cce.relevance.validate/v1",
        False,
        10,
        12,
        "samples",
    )
    assert [(p["line"], p["code"], p["id"], p["anchor"], p["message"]) for p in doc["problems"]] == EXPECTED


def test_text_lists_one_line_per_problem(refactored: Path) -> None:
    result = cli("validate", "code.jsonl", cwd=refactored)
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[:4] == [
        "cce-relevance validate — code.jsonl",
        "  corpus  : samples",
        "  checked : 10 cases, 12 anchors",
        "  problems: 11",
    ]
    assert lines[5] == (
        '  line 2: missing-file: case "code-record-shipment", anchor '
        '"python.py#function_definition@14-16": no file "python.py" in the corpus '
        "(missing, ignored, or not indexed as text)"
    )
    assert lines[7].startswith(
        '  line 5: no-chunk-in-range: case "code-format-price", anchor "typescript.ts@6-8"'
    )
    assert len(lines) == 5 + len(EXPECTED)


def test_api_labels_stale_anchors_by_query_id(refactored: Path) -> None:
    checked = api.validate(str(refactored / "code.jsonl"))
    assert checked.stale_anchors() == {
        "code-record-shipment": ("python.py#function_definition@14-16",),
        "code-format-price": ("typescript.ts@6-8",),
        "code-enum-kinds": ("#enum_item",),
        "code-count-lines": ("c.c@8-16",),
        "code-load-inventory": ("python.py#function_definition",),
        "code-throttle": ("rust.rs#enum_item@19-22",),
    }
    assert checked.unsatisfiable() == (
        "code-record-shipment",
        "code-format-price",
        "code-count-lines",
        "code-load-inventory",
        "code-throttle",
    )


def test_a_kind_present_elsewhere_in_the_file_but_not_in_the_range(small_project: Path) -> None:
    (small_project / "k.jsonl").write_text(
        '{"query":"q","expected":["auth.py#class_definition@4-5","auth.py@1-3","auth.py"]}\n'
        '{"id":"dup","query":"q","expected":["notes.md"]}\n{"id":"dup","query":"q","expected":["notes.md@2-2"]}\n'
    )
    doc = json.loads(cli("validate", "k.jsonl", "--dir", "corpus", "--json", cwd=small_project).out)
    assert [(p["code"], p["message"]) for p in doc["problems"]] == [
        ("no-chunk-in-range", 'no chunk of kind "class_definition" of "auth.py" overlaps lines 4-5'),
        ("no-chunk-in-range", 'no chunk of "auth.py" overlaps lines 1-3'),
        ("duplicate-id", "the id is also used on line 2; comparisons pair queries by id"),
    ]


@pytest.mark.parametrize("fixtures", ["eval/relevance/code.jsonl", "eval/relevance/docs.jsonl"])
def test_our_starter_sets_are_clean(repo_root: Path, fixtures: str) -> None:
    result = cli("validate", fixtures, cwd=repo_root)
    assert (result.code, result.err) == (0, "")
    assert result.out.endswith("  ok: every anchor resolves to a chunk of the corpus\n")
    doc = json.loads(cli("validate", fixtures, "--json", cwd=repo_root).out)
    assert doc["ok"] is True and doc["problems"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["missing.jsonl"],
            "error: could not read fixtures missing.jsonl: No such file or directory (os error 2)\n",
        ),
        (["set.jsonl", "--dir", "nope"], "error: corpus is not a directory: nope\n"),
        (
            ["bad.jsonl", "--dir", "corpus"],
            'error: fixture line 1: grade of "auth.py" must be a positive integer\n',
        ),
    ],
)
def test_input_errors_exit_2(small_project: Path, args: list[str], message: str) -> None:
    (small_project / "bad.jsonl").write_text('{"query":"q","expected":["auth.py"],"grades":{"auth.py":0}}\n')
    result = cli_process("validate", *args, cwd=small_project)
    assert (result.code, result.out, result.err) == (2, "", message)


def test_without_grades_a_set_is_read_as_run_reads_it(small_project: Path) -> None:
    """The Action checks anchors with grades=False: a malformed `grades` (which `run` ignores) must
    not turn a set that scores into a configuration error."""
    (small_project / "bad.jsonl").write_text(
        '{"query":"q","expected":["auth.py","gone.py"],"grades":{"auth.py":0}}\n'
    )
    checked = api.validate(str(small_project / "bad.jsonl"), dir=str(small_project / "corpus"), grades=False)
    assert checked.stale_anchors() == {"q1": ("gone.py",)}


def test_untrusted_names_cannot_drive_the_terminal(small_project: Path) -> None:
    (small_project / "evil.jsonl").write_text(
        json.dumps({"id": "x\u001b[31m", "query": "q", "expected": ["gone\u001b]0;pwned\u0007.py"]}) + "\n"
    )
    result = cli("validate", "evil.jsonl", "--dir", "corpus", cwd=small_project)
    assert result.code == 1
    assert "\u001b" not in result.out and "\u0007" not in result.out
    assert '"x\\u001b[31m"' in result.out


def test_docs_explain_every_problem_code(repo_root: Path) -> None:
    text = (repo_root / "docs/metrics.md").read_text(encoding="utf-8")
    for code in (*STALE_CODES, "ambiguous-symbol", "unsatisfiable", "duplicate-id"):
        assert f"| `{code}` |" in text
