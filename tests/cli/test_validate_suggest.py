"""`validate --suggest`: a patch that `git apply` takes, pointing stale and moved anchors at the
definitions they labeled, after a rename and after an edit that moved lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import cli

CONFIG = (
    '"""Settings."""\nimport json\n\n\n'
    "def parse_flags(argv):\n"
    '    """Turn command-line flags into options."""\n'
    "    return dict(a.split('=') for a in argv)\n\n\n"
    "def read_config(path):\n"
    '    """Read the settings file from disk and parse it as JSON."""\n'
    "    with open(path) as fh:\n        return json.load(fh)\n\n\n"
    "def write_config(path, data):\n"
    '    """Write the settings back to disk."""\n'
    '    with open(path, "w") as fh:\n        json.dump(data, fh)\n'
)
SET = (
    '{"schema":"cce.relevance/v1","corpus":"../src"}\n'
    '{"id":"flags","query":"command-line flags into options",'
    '"expected":["conf.py#function_definition@5-7"]}\n'
    '{"id":"read","query":"read the settings file from disk", '
    '"expected":["conf.py#function_definition@10-13"],"k":3}\n'
    '{"id":"write","query":"write settings back to disk","expected":["conf.py#function_definition@16-19"]}'
)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A git repository with src/conf.py and eval/set.jsonl (no final newline), committed."""
    (tmp_path / "src").mkdir()
    (tmp_path / "eval").mkdir()
    (tmp_path / "src/conf.py").write_text(CONFIG)
    (tmp_path / "eval/set.jsonl").write_text(SET)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "labels")
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=tmp_path).code == 0
    return tmp_path


def _apply(repo: Path) -> tuple[str, str]:
    """`validate --suggest` saved as a patch and applied with `git apply`; (patch, stderr)."""
    out = cli("validate", "eval/set.jsonl", "--suggest", "--no-cache", cwd=repo)
    assert out.out, out.err
    (repo / "fix.patch").write_text(out.out)
    _git(repo, "apply", "--check", "fix.patch")
    _git(repo, "apply", "fix.patch")
    return out.out, out.err


def _span(text: str, header: str) -> str:
    """`start-end` of the definition whose first line starts with `header` (it ends before the
    next blank line)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header)) + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return f"{start}-{end}"


def test_a_renamed_function_below_a_new_one_gets_its_new_range(repo: Path) -> None:
    edited = CONFIG.replace("def read_config", "def load_config").replace(
        "\n\ndef load_config",
        '\n\ndef merge_defaults(options):\n    """Fill in what a user left out."""\n'
        "    return options\n\n\ndef load_config",
    )
    (repo / "src/conf.py").write_text(edited)
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo).code == 0  # both re-bound silently
    patch, err = _apply(repo)
    assert patch.splitlines()[:2] == ["--- a/eval/set.jsonl", "+++ b/eval/set.jsonl"]
    assert "\\ No newline at end of file" in patch
    lines = (repo / "eval/set.jsonl").read_text().split("\n")
    assert lines[1] == SET.split("\n")[1]  # parse_flags did not move
    assert lines[2] == (
        '{"id":"read","query":"read the settings file from disk", '
        f'"expected":["conf.py#function_definition@{_span(edited, "def load_config")}"],"k":3}}'
    )
    assert lines[3] == (
        '{"id":"write","query":"write settings back to disk",'
        f'"expected":["conf.py#function_definition@{_span(edited, "def write_config")}"]}}'
    )
    assert "lines 10-13 now hold function_definition merge_defaults" in err
    assert "function_definition load_config at conf.py:" + _span(edited, "def load_config") in err
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo).code == 0
    assert cli("validate", "eval/set.jsonl", "--suggest", "--no-cache", cwd=repo).out == ""


def test_lines_inserted_above_make_one_anchor_stale_and_move_the_others(repo: Path) -> None:
    edited = CONFIG.replace("import json\n", "import json\n" + "# note\n" * 5)
    (repo / "src/conf.py").write_text(edited)
    stale = cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo)
    assert stale.code == 1 and stale.out.count("no-chunk-in-range") == 1  # @5-7 is comments now
    patch, err = _apply(repo)
    assert [line for line in patch.splitlines() if line.startswith("+{")] == [
        '+{"id":"flags","query":"command-line flags into options","expected":["conf.py#function_definition@'
        + _span(edited, "def parse_flags")
        + '"]}',
        '+{"id":"read","query":"read the settings file from disk", "expected":["conf.py#function_definition@'
        + _span(edited, "def read_config")
        + '"],"k":3}',
        '+{"id":"write","query":"write settings back to disk","expected":["conf.py#function_definition@'
        + _span(edited, "def write_config")
        + '"]}',
    ]
    assert "shares 5 word(s) with the query" in err
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo).code == 0


def test_a_function_that_is_gone_gets_no_guess(repo: Path) -> None:
    (repo / "src/conf.py").write_text(
        CONFIG.replace(
            'def parse_flags(argv):\n    """Turn command-line flags into options."""\n', "# flags went away\n"
        )
    )
    out = cli("validate", "eval/set.jsonl", "--suggest", "--no-cache", cwd=repo)
    assert out.code == 1 and '"flags"' not in out.out


def test_a_clean_set_has_an_empty_patch_and_json_is_refused(repo: Path) -> None:
    out = cli("validate", "eval/set.jsonl", "--suggest", "--no-cache", cwd=repo)
    assert out.code == 0 and out.out == "" and "ok: every anchor resolves" in out.err
    refused = cli("validate", "eval/set.jsonl", "--suggest", "--json", cwd=repo)
    assert refused.code == 2 and "--suggest prints a patch" in refused.err


def test_a_moved_file_is_found_by_its_name(repo: Path) -> None:
    (repo / "src/settings").mkdir()
    (repo / "src/conf.py").rename(repo / "src/settings/conf.py")
    patch, _ = _apply(repo)
    assert patch.count("+{") == 3 and "settings/conf.py#function_definition@10-13" in patch
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo).code == 0


SYMBOL_SET = (
    '{"schema":"cce.relevance/v1","corpus":"../src"}\n'
    '{"id":"read","query":"read the settings file from disk","expected":["conf.py::read_config"]}\n'
    '{"id":"write","query":"write settings back to disk",'
    '"expected":["conf.py#function_definition::write_config"]}\n'
    '{"id":"flags","query":"command-line flags into options","expected":["conf.py::parse_flags"]}\n'
)


def test_a_renamed_function_and_a_function_moved_into_a_class_keep_symbol_anchors(repo: Path) -> None:
    (repo / "eval/set.jsonl").write_text(SYMBOL_SET)
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo).code == 0
    edited = CONFIG.replace("def read_config", "def load_config").replace(
        "def write_config(path, data):", "class Store:\n    def write_config(path, data):"
    )
    edited = edited.replace(
        '\n    """Write the settings back', '\n        """Write the settings back'
    ).replace(
        '    with open(path, "w") as fh:\n        json.dump',
        '        with open(path, "w") as fh:\n            json.dump',
    )
    (repo / "src/conf.py").write_text(edited)
    stale = cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo)
    assert stale.code == 1 and stale.out.count("missing-symbol") == 2
    patch, err = _apply(repo)
    assert (repo / "eval/set.jsonl").read_text().splitlines()[1:] == [
        '{"id":"read","query":"read the settings file from disk","expected":["conf.py::load_config"]}',
        '{"id":"write","query":"write settings back to disk",'
        '"expected":["conf.py#function_definition::Store.write_config"]}',
        SYMBOL_SET.splitlines()[3],
    ]
    assert "function_definition Store.write_config at conf.py:" in err and "has that last name" in err
    assert "its name is most like read_config" in err
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo).code == 0


def test_a_symbol_whose_function_is_gone_gets_no_guess(repo: Path) -> None:
    (repo / "eval/set.jsonl").write_text(SYMBOL_SET)
    (repo / "src/conf.py").write_text(CONFIG.replace("def parse_flags(argv):", "def unrelated_helper(argv):"))
    out = cli("validate", "eval/set.jsonl", "--suggest", "--no-cache", cwd=repo)
    assert out.code == 1 and "missing-symbol" in out.err and out.out == ""


def test_a_function_moved_to_another_module_is_found_by_its_name(repo: Path) -> None:
    (repo / "eval/set.jsonl").write_text(SYMBOL_SET)
    head, rest = CONFIG.split("def read_config")
    moved, tail = rest.split("def write_config")
    (repo / "src/conf.py").write_text(head + "def write_config" + tail)
    (repo / "src/loading").mkdir()
    (repo / "src/loading/files.py").write_text("import json\n\n\ndef read_config" + moved)
    (repo / "src/loading/other.py").write_text("def read_configs():\n    return []\n")
    patch, err = _apply(repo)
    assert patch.count("\n+{") == 1
    assert '"expected":["loading/files.py::read_config"]' in (repo / "eval/set.jsonl").read_text()
    assert "function_definition read_config at loading/files.py:4-7 has that name" in err
    assert cli("validate", "eval/set.jsonl", "--no-cache", cwd=repo).code == 0
