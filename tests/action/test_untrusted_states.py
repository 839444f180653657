"""Shard states and saved sides are read as JSON from outside (untrusted_json): an artifact or a cache
entry that is not plain UTF-8 JSON within the limits is an input error naming the file, never a
crash, and a saved side that cannot be read is ignored (the base is scored again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cce_relevance.action.saved.base_reuse import saved_base, side_path
from cce_relevance.action.saved.shards import read_shards
from cce_relevance.errors import CceError

CONFIG = {"fixtures": ["eval/code.jsonl"], "golden": [], "backends": ["bm25"]}
COMMIT = "a" * 40
BAD = {
    "a byte order mark": b'\xef\xbb\xbf{"schema": "x"}',
    "nesting too deep": b"[" * 100_000 + b"]" * 100_000,  # a RecursionError for json.loads
    "an integer over 64 bits": b'{"schema": ' + b"9" * 40 + b"}",
    "not UTF-8": b'{"schema": "\xff"}',
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_shard_state_that_is_not_plain_json_is_an_input_error_naming_it(tmp_path: Path, case: str) -> None:
    artifact = tmp_path / "cce-relevance-shard-1"
    artifact.mkdir()
    (artifact / "shard-1-of-2.json").write_bytes(BAD[case])

    with pytest.raises(CceError) as raised:
        read_shards(tmp_path)

    assert "shard-1-of-2.json" in raised.value.message and raised.value.exit_code == 2


@pytest.mark.parametrize("case", list(BAD))
def test_a_saved_side_that_is_not_plain_json_is_ignored_with_a_warning(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = side_path(tmp_path, COMMIT, CONFIG)
    path.parent.mkdir()
    path.write_bytes(BAD[case])

    assert saved_base(tmp_path, COMMIT, CONFIG) is None
    assert "::warning::Ignoring the saved base side: " in capsys.readouterr().out
