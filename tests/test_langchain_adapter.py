"""The LangChain adapter with a real `langchain_core` BaseRetriever and Documents, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from cce_relevance.adapters.langchain import LangChainRetriever
from tests.cli.helpers import cli

AUTH = "import hashlib\n\n\ndef hash_password(pw):\n    return hashlib.sha256(pw).hexdigest()\n"
NOTES = "# Notes\n\nPasswords are hashed with sha256.\nPayments retry three times.\n"


class WordOverlap(BaseRetriever):
    """A real LangChain retriever: the Documents sharing most words with the query, best first."""

    documents: list[Document]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        words = set(query.lower().split())
        scored = [
            (len(words & set(d.page_content.lower().split())), i, d) for i, d in enumerate(self.documents)
        ]
        return [d for n, _, d in sorted(scored, key=lambda t: (-t[0], t[1])) if n]


def corpus(root: Path) -> Path:
    (root / "corpus").mkdir(parents=True)
    (root / "corpus" / "auth.py").write_text(AUTH)
    (root / "corpus" / "notes.md").write_text(NOTES)
    return root / "corpus"


def test_documents_become_results_with_lines_from_metadata_offsets_or_the_whole_file(tmp_path: Path) -> None:
    root = corpus(tmp_path)
    start = AUTH.index("def hash_password")
    documents = [
        Document(
            AUTH[start:],
            metadata={"source": str(root / "auth.py"), "start_index": start, "kind": "function_definition"},
        ),
        Document(
            "Passwords are hashed",
            metadata={"source": "notes.md", "start_line": 3, "end_line": 3, "score": 0.9},
        ),
        Document("whole notes", metadata={"source": "notes.md"}),
        Document("passwords again", metadata={"source": "notes.md"}),  # the same whole-file span: left out
    ]
    adapter = LangChainRetriever(WordOverlap(documents=documents), str(root))
    results = adapter.search("def hash_password(pw): passwords hashed", 2)
    assert results == [
        {"file_path": "auth.py", "start_line": 4, "end_line": 5, "kind": "function_definition"},
        {"file_path": "notes.md", "start_line": 3, "end_line": 3, "score": 0.9},
    ]
    assert adapter.search("whole notes passwords again", 5) == [
        {"file_path": "notes.md", "start_line": 1, "end_line": 4},
        {"file_path": "notes.md", "start_line": 3, "end_line": 3, "score": 0.9},
    ]


FACTORY = """\
from pathlib import Path

from langchain_core.documents import Document

from cce_relevance.adapters.langchain import LangChainRetriever
from tests.test_langchain_adapter import WordOverlap


def make(corpus, table):
    documents = []
    for path in sorted(Path(corpus).iterdir()):
        text = path.read_text()
        offset = 0
        for paragraph in text.split("\\n\\n"):
            documents.append(Document(paragraph, metadata={"source": str(path), "start_index": offset}))
            offset += len(paragraph) + 2
    return LangChainRetriever(WordOverlap(documents=documents), corpus)
"""


def test_a_langchain_retriever_scores_from_the_config(tmp_path: Path) -> None:
    corpus(tmp_path)
    (tmp_path / "lc_retriever.py").write_text(FACTORY)
    (tmp_path / "cce-relevance.toml").write_text('[backends.langchain]\npython = "lc_retriever:make"\n')
    (tmp_path / "set.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"hash","query":"def hash_password(pw):","expected":["auth.py@4-5"],"k":2}\n'
        '{"id":"retry","query":"payments retry three times","expected":["notes.md@3-4"],"k":2}\n'
    )
    result = cli("run", "set.jsonl", "--backend", "langchain", "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    [backend] = json.loads(result.out)["backends"]
    assert backend["mrr"] == "1.000000"
    assert [q["first_relevant_rank"] for q in backend["per_query"]] == [1, 1]
