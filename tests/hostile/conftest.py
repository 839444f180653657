"""A small project for the hostile-input suite: a three-file corpus and a fixture set over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.retrieval.corpora import write_corpus

CORPUS = {
    "auth.py": "def hash_password(pw):\n    return pw[::-1]\n\n\n"
    "class Session:\n    def refresh(self, token):\n        return token\n",
    "payments.py": "def process_payment(amount):\n    return amount\n",
}
FIXTURES = (
    '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
    '{"id":"hash","query":"where is the password hashed","expected":["auth.py@1-2"],"k":3}\n'
    '{"id":"pay","query":"process payment amount","expected":["payments.py"],"k":2}\n'
)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    write_corpus(tmp_path / "corpus", CORPUS)
    (tmp_path / "set.jsonl").write_text(FIXTURES, encoding="utf-8")
    return tmp_path
