"""A small real project (corpus + fixture set) for CLI tests of the extensions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.retrieval.corpora import write_corpus

SMALL_CORPUS = {
    "auth.py": "import hashlib\n\n\ndef hash_password(pw):\n"
    "    return hashlib.sha256(pw.encode()).hexdigest()\n\n\n"
    "class Session:\n    def refresh(self, token):\n        return token\n",
    "payments.py": "import auth\n\n\ndef process_payment(amount):\n"
    "    return auth.hash_password(str(amount))\n",
    "notes.md": "Payments are retried three times.\nPasswords are hashed with sha256.\n",
}


@pytest.fixture()
def small_project(tmp_path: Path) -> Path:
    """`set.jsonl` (header corpus `corpus`) with three cases over a three-file corpus."""
    write_corpus(tmp_path / "corpus", SMALL_CORPUS)
    (tmp_path / "set.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"hash","query":"where is the password hashed",'
        '"expected":["auth.py#function_definition","notes.md"],'
        '"k":3,"grades":{"auth.py#function_definition":3}}\n'
        '{"id":"pay","query":"process payment amount","expected":["payments.py@4-5"],"k":2}\n'
        '{"id":"session","query":"refresh a session token","expected":["auth.py#class_definition"],"k":3}\n',
        encoding="utf-8",
    )
    return tmp_path
