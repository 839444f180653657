"""Symbol anchors (`path::Name`) through the real CLI: they follow their definition when lines move
above it (where a range anchor silently re-binds), `validate` reports a missing or ambiguous
symbol, and `chunks` lists each chunk's symbol."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import cli
from tests.retrieval.corpora import write_corpus

CLIENT = (
    "class Client:\n"
    "    def send(self, request):\n"
    '        """Transmit the request over the wire."""\n'
    "        return request\n"
    "\n\n"
    "def helper():\n"
    "    return None\n"
)
# Three lines added above it: lines 2-4, which labelled `send`, now hold `unquote`.
EDITED = 'def unquote(text):\n    """Strip the wire quotes."""\n    return text.strip()\n\n' + CLIENT

SET = (
    '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
    '{"id":"by-symbol","query":"transmit request over the wire","expected":["a.py::Client.send"],"k":1}\n'
    '{"id":"by-range","query":"transmit request over the wire","expected":["a.py@2-4"],"k":1}\n'
)


def _project(tmp_path: Path, source: str, fixtures: str = SET) -> Path:
    write_corpus(tmp_path / "corpus", {"a.py": source})
    (tmp_path / "set.jsonl").write_text(fixtures, encoding="utf-8")
    return tmp_path / "set.jsonl"


def _per_query(report: dict, metric: str = "mrr") -> dict[str, str]:
    """Query id → one metric as the report prints it (`tokens.iou` for a token metric)."""

    def value(query: dict) -> str:
        for key in metric.split("."):
            query = query[key]
        return str(query)

    return {q["id"]: value(q) for q in report["backends"][0]["per_query"]}


def test_a_symbol_anchor_follows_its_definition_where_a_range_anchor_rebinds(tmp_path: Path) -> None:
    before = cli(
        "run", str(_project(tmp_path / "before", CLIENT)), "--backend", "bm25", "--json", "--no-cache"
    )
    after = cli("run", str(_project(tmp_path / "after", EDITED)), "--backend", "bm25", "--json", "--no-cache")
    assert (before.code, after.code) == (0, 0), before.err + after.err
    old, new = json.loads(before.out), json.loads(after.out)
    assert _per_query(old) == {"by-symbol": "1.000000", "by-range": "1.000000"}
    assert _per_query(new) == {"by-symbol": "1.000000", "by-range": "0.000000"}  # lines 2-4 are `unquote` now
    # A symbol anchor is scored at token level as the range of its definition's lines.
    assert _per_query(old, "tokens.recall")["by-symbol"] == "1.000000"
    assert _per_query(new, "tokens.iou")["by-symbol"] == _per_query(old, "tokens.iou")["by-symbol"]


def test_validate_reports_a_missing_and_an_ambiguous_symbol(tmp_path: Path) -> None:
    source = CLIENT.replace("def send", "def post") + (
        "\n\nclass Prop:\n    @property\n    def x(self):\n        return 1\n\n"
        "    @x.setter\n    def x(self, v):\n        pass\n"
    )
    fixtures = _project(
        tmp_path,
        source,
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"gone","query":"q","expected":["a.py::Client.send"]}\n'
        '{"id":"renamed-class","query":"q","expected":["a.py::Other.post", "a.py::helper"]}\n'
        '{"id":"twice","query":"q","expected":["a.py::Prop.x"]}\n'
        '{"id":"kind","query":"q","expected":["a.py#class_definition::helper"]}\n',
    )
    result = cli("validate", str(fixtures), "--json", "--no-cache")
    assert result.code == 1
    problems = [(p["code"], p["id"], p["anchor"], p["message"]) for p in json.loads(result.out)["problems"]]
    assert problems == [
        ("missing-symbol", "gone", "a.py::Client.send", '"a.py" has no definition named "Client.send"'),
        (
            "unsatisfiable",
            "gone",
            None,
            "no backend can satisfy this case: none of its anchors resolves to a chunk",
        ),
        (
            "missing-symbol",
            "renamed-class",
            "a.py::Other.post",
            '"a.py" has no definition named "Other.post" (same name: Client.post at lines 2-4)',
        ),
        (
            "ambiguous-symbol",
            "twice",
            "a.py::Prop.x",
            '"Prop.x" names 2 definitions of "a.py" (function_definition at lines 13-14, '
            "function_definition at lines 17-18); it matches all of them; a line range names one of them",
        ),
        (
            "missing-symbol",
            "kind",
            "a.py#class_definition::helper",
            '"a.py" has no definition of kind "class_definition" named "helper" '
            "(same name: helper (function_definition) at lines 7-8)",
        ),
        (
            "unsatisfiable",
            "kind",
            None,
            "no backend can satisfy this case: none of its anchors resolves to a chunk",
        ),
    ]


def test_a_clean_symbol_set_validates(tmp_path: Path) -> None:
    result = cli("validate", str(_project(tmp_path, CLIENT)), "--no-cache")
    assert result.code == 0, result.out


def test_symbol_anchors_need_a_corpus_directory_not_a_store(tmp_path: Path) -> None:
    fixtures = _project(tmp_path, CLIENT)
    store = tmp_path / "store.json"
    assert cli("index", str(tmp_path / "corpus"), "--out", str(store), "--no-cache").code == 0
    result = cli("run", str(fixtures), "--store", str(store))
    assert result.code == 2 and result.out == ""
    assert "symbol anchors (`path::Name`) are looked up in a corpus directory" in result.err
    assert "Traceback" not in result.err


def test_chunks_lists_each_chunks_symbol(tmp_path: Path) -> None:
    write_corpus(tmp_path, {"a.py": EDITED, "notes.md": "notes\n"})
    result = cli("chunks", str(tmp_path), "--no-cache")
    assert result.code == 0
    rows = [line.split() for line in result.out.splitlines()]
    assert rows[0][-2:] == ["tokens", "symbol"]
    assert [(r[0], r[1], r[-1]) for r in rows[1:-1]] == [
        ("a.py", "1-3", "unquote"),
        ("a.py", "5-8", "Client"),
        ("a.py", "6-8", "Client.send"),
        ("a.py", "11-12", "helper"),
        ("notes.md", "1-2", "-"),
    ]
    as_json = json.loads(cli("chunks", str(tmp_path), "--json", "--no-cache").out)
    assert "symbol" not in as_json["chunks"][0]  # the conformance document is the reference's
