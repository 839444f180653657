"""A run never scores its own inputs and outputs, and `exclude` leaves out more: with the corpus at
the repository root (the common case), the golden, TREC files, charts and the config file lie
inside it, and scoring them would make every run measure a different corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import cli
from tests.retrieval.corpora import write_corpus

SOURCES = {
    "src/billing.py": 'def invoice_total(lines, tax):\n    """Sum the invoice lines and add tax."""\n'
    "    return sum(lines) * (1 + tax)\n",
    "src/shipping.py": 'def record_shipment(order, carrier):\n    """Store the carrier of an order."""\n'
    "    return (order, carrier)\n",
    "docs/guide.md": "# Guide\n\nThe invoice total includes tax; shipments record their carrier.\n",
}
SET = (
    '{"schema":"cce.relevance/v1","corpus":".."}\n'
    '{"id":"total","query":"invoice total with tax","expected":["src/billing.py"],"k":3}\n'
    '{"id":"ship","query":"record the shipment carrier","expected":["src/shipping.py"],"k":3}\n'
    '{"id":"rate","query":"the golden report mrr precision recall tokens",'
    '"expected":["docs/guide.md"],"k":3}\n'
)
GOLDEN = "eval/set.golden.json"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A repository-shaped tree: the fixture set in eval/, its corpus the whole tree."""
    write_corpus(tmp_path, {**SOURCES, "eval/set.jsonl": SET})
    return tmp_path


def test_update_golden_then_check_passes_with_the_golden_inside_the_corpus(repo: Path) -> None:
    first = cli("run", "eval/set.jsonl", "--golden", GOLDEN, "--update-golden", "--no-cache", cwd=repo)
    assert (
        first.code == 0 and first.err == f"golden report {GOLDEN} created\n"
    )  # no own file in the corpus yet
    check = cli("run", "eval/set.jsonl", "--golden", GOLDEN, "--no-cache", cwd=repo)
    assert check.code == 0, check.err
    assert check.err == (
        f"warning: not scoring this run's own files found in the corpus: {GOLDEN}\n"
        f"golden report {GOLDEN} matches\n"
    )
    again = cli("run", "eval/set.jsonl", "--golden", GOLDEN, "--update-golden", "--no-cache", cwd=repo)
    assert again.code == 0 and again.out == first.out
    # Without the golden (a run that does not name it), the golden is an ordinary file of the corpus.
    plain = cli("run", "eval/set.jsonl", "--json", "--no-cache", cwd=repo)
    assert plain.out != (repo / GOLDEN).read_text(encoding="utf-8")


def test_outputs_and_the_config_file_are_never_scored(repo: Path) -> None:
    args = ("run", "eval/set.jsonl", "--json", "--no-cache")
    clean = cli(*args, cwd=repo).out
    (repo / "runs").mkdir()
    outputs = (
        "--output",
        "report.json",
        "--trec-run",
        "runs/{backend}.run",
        "--trec-qrels",
        "runs/set.qrels",
        "--compare",
        "bm25,hybrid",
        "--chart",
        "deltas.md",
    )
    compared = cli(*args[:3], *outputs[-4:], "--json", "--no-cache", cwd=repo).out
    for _ in range(2):
        assert cli(*args, *outputs, cwd=repo).code == 0
        assert (repo / "report.json").read_text(encoding="utf-8") == compared
    assert sorted(p.name for p in (repo / "runs").iterdir()) == ["bm25.run", "hybrid.run", "set.qrels"]
    (repo / "cce-relevance.toml").write_text(
        '[backends.hybrid-rrf30]\nbase = "hybrid"\nrrf_k = 30\n'
        "# invoice total with tax, the shipment carrier\n",
        encoding="utf-8",
    )
    with_config = cli(*args, *outputs, cwd=repo)
    assert (repo / "report.json").read_text(encoding="utf-8") == compared
    assert with_config.err == (
        "warning: not scoring this run's own files found in the corpus: cce-relevance.toml, "
        "deltas.md, report.json, runs/bm25.run, runs/hybrid.run, runs/set.qrels\n"
    )
    # To a run that does not write them, they are files like any other: scored, and they change it.
    assert cli(*args, cwd=repo).out != clean


def test_exclude_patterns_from_the_config_file_and_the_fixture_header(repo: Path) -> None:
    (repo / "cce-relevance.toml").write_text('exclude = ["docs/"]\n', encoding="utf-8")
    listed = cli("chunks", str(repo), "--no-cache", cwd=repo)
    assert listed.code == 0
    assert [line.split()[0] for line in listed.out.splitlines()[1:-1]] == [
        "src/billing.py",
        "src/shipping.py",
    ]
    checked = cli("validate", "eval/set.jsonl", "--json", "--no-cache", cwd=repo)
    assert checked.code == 1
    assert [(p["code"], p["anchor"]) for p in json.loads(checked.out)["problems"]] == [
        ("missing-file", "docs/guide.md"),
        ("unsatisfiable", None),
    ]
    (repo / "cce-relevance.toml").unlink()
    header = SET.replace('"corpus":".."', '"corpus":"..","exclude":["*.md", "!docs/guide.md", "shipping.*"]')
    (repo / "eval/set.jsonl").write_text(header, encoding="utf-8")
    checked = cli("validate", "eval/set.jsonl", "--json", "--no-cache", cwd=repo)
    assert [(p["code"], p["anchor"]) for p in json.loads(checked.out)["problems"]] == [
        ("missing-file", "src/shipping.py"),
        ("unsatisfiable", None),
    ]


def test_a_config_in_a_parent_directory_excludes_relative_to_itself(tmp_path: Path) -> None:
    write_corpus(
        tmp_path,
        {
            "project/src/a.py": "def a():\n    pass\n",
            "project/src/gen/b.py": "def b():\n    pass\n",
            "project/other/gen/c.py": "def c():\n    pass\n",
        },
    )
    (tmp_path / "cce-relevance.toml").write_text(
        'exclude = ["/project/src/gen/", "other"]\n', encoding="utf-8"
    )
    (tmp_path / ".git").mkdir()  # the repository root: the config search stops here
    listed = cli("chunks", "project", "--no-cache", cwd=tmp_path)
    assert [line.split()[0] for line in listed.out.splitlines()[1:-1]] == ["src/a.py"]
    listed = cli("chunks", "project/src", "--no-cache", cwd=tmp_path)
    assert [line.split()[0] for line in listed.out.splitlines()[1:-1]] == ["a.py"]


@pytest.mark.parametrize(
    ("where", "text", "message"),
    [
        (
            "cce-relevance.toml",
            'exclude = ["src/[a"]\n',
            "error: cce-relevance.toml: exclude pattern 'src/[a' is not a valid gitignore pattern: "
            "unclosed character class",
        ),
        (
            "cce-relevance.toml",
            'exclude = "docs/"\n',
            "error: cce-relevance.toml: exclude: expected an array of gitignore patterns, "
            'e.g. ["docs/generated/", "*.golden.json"], got "docs/"',
        ),
        (
            "eval/set.jsonl",
            SET.replace('"corpus":".."', '"corpus":"..","exclude":"docs/"'),
            'error: fixture line 1: "exclude" must be an array of gitignore patterns, '
            'e.g. ["docs/generated/", "*.golden.json"]',
        ),
        (
            "eval/set.jsonl",
            SET.replace('"corpus":".."', '"corpus":"..","exclude":["{a,b"]'),
            "error: fixture line 1: exclude pattern '{a,b' is not a valid gitignore pattern: "
            "unclosed alternate group",
        ),
    ],
)
def test_bad_exclude_patterns_are_input_errors(repo: Path, where: str, text: str, message: str) -> None:
    (repo / where).write_text(text, encoding="utf-8")
    result = cli("run", "eval/set.jsonl", "--no-cache", cwd=repo)
    assert result.code == 2 and result.out == ""
    assert result.err.splitlines()[0] == message


def test_a_store_written_into_the_corpus_is_not_indexed_by_the_next_index(repo: Path) -> None:
    first = cli("index", str(repo), "--out", str(repo / "store" / "index.json"), "--no-cache")
    assert first.code == 0, first.err
    second = cli("index", str(repo), "--out", str(repo / "store" / "index.json"), "--no-cache")
    assert second.code == 0 and second.out == first.out  # same files, same chunks: the store is not one
    assert sorted(p.name for p in (repo / "store").iterdir()) == ["fingerprint.json", "index.json"]
    # To another command the store is a file like any other.
    listed = cli("chunks", str(repo), "--no-cache")
    assert "store/index.json" in listed.out and "store/fingerprint.json" in listed.out
