"""More languages through the real CLI: `--languages` and the config file's `languages`, on `chunks`,
`search`, `run`, `index` and `validate`; what stays the same with them off; and the errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cce_relevance.project_config import load_config
from tests.cli.helpers import Outcome, cli

SAMPLES = Path(__file__).resolve().parent.parent / "retrieval" / "language_samples"
FIXTURES = (
    '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
    '{"id":"go-get","query":"get the session by id unless it has expired",'
    '"expected":["session_store.go#method_declaration@44-52"],"k":3}\n'
    '{"id":"java-ctor","query":"Inventory constructor reorder level",'
    '"expected":["Inventory.java#constructor_declaration"],"k":3}\n'
)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A repository (so config discovery stops here) with a Go and a Java file and a fixture set."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "corpus").mkdir()
    for name in ("session_store.go", "Inventory.java"):
        shutil.copy(SAMPLES / name, tmp_path / "corpus" / name)
    (tmp_path / "set.jsonl").write_text(FIXTURES, encoding="utf-8")
    return tmp_path


def chunk_rows(*args: str, cwd: Path) -> list[tuple[str, int, int, str]]:
    result = cli("chunks", "corpus", "--json", *args, cwd=cwd)
    assert result.code == 0, result.err
    return [
        (c["file_path"], c["start_line"], c["end_line"], c["kind"]) for c in json.loads(result.out)["chunks"]
    ]


def run_report(*args: str, cwd: Path) -> dict:
    result = cli("run", "set.jsonl", "--json", *args, cwd=cwd)
    assert result.code == 0, result.err
    assert result.err == ""
    return json.loads(result.out)


MODULES = [("Inventory.java", 1, 56, "module"), ("session_store.go", 1, 66, "module")]


def test_chunks_by_default_and_with_the_flag(project: Path) -> None:
    assert chunk_rows(cwd=project) == MODULES
    rows = chunk_rows("--languages", "go", cwd=project)
    assert rows[0] == MODULES[0]  # Java was not asked for
    assert rows[1:] == [
        ("session_store.go", 18, 22, "type_declaration"),
        ("session_store.go", 24, 29, "type_declaration"),
        ("session_store.go", 32, 36, "type_declaration"),
        ("session_store.go", 39, 41, "function_declaration"),
        ("session_store.go", 44, 52, "method_declaration"),
        ("session_store.go", 55, 60, "method_declaration"),
        ("session_store.go", 62, 65, "function_declaration"),
    ]
    both = chunk_rows("--languages", " java , go,,java ", cwd=project)  # trimmed, de-duplicated
    assert {kind for _, _, _, kind in both} >= {
        "constructor_declaration",
        "record_declaration",
        "type_declaration",
    }
    assert "module" not in {kind for _, _, _, kind in both}


def test_the_config_key_and_the_flag_that_overrides_it(project: Path) -> None:
    (project / "cce-relevance.toml").write_text('languages = ["java"]\n', encoding="utf-8")
    with_config = chunk_rows(cwd=project)
    assert [r for r in with_config if r[0] == "session_store.go"] == [MODULES[1]]
    assert ("Inventory.java", 23, 25, "constructor_declaration") in with_config
    assert chunk_rows("--languages", "", cwd=project) == MODULES  # '' turns the config's languages off
    assert [r for r in chunk_rows("--languages", "go", cwd=project) if r[0] == "Inventory.java"] == [
        MODULES[0]
    ]


def test_an_explicit_config_file_names_the_languages(project: Path) -> None:
    (project / "conf").mkdir()
    (project / "conf" / "langs.toml").write_text('languages = ["go", "java"]\n', encoding="utf-8")
    rows = chunk_rows("--config", "conf/langs.toml", cwd=project)
    assert ("session_store.go", 44, 52, "method_declaration") in rows
    assert ("Inventory.java", 47, 49, "compact_constructor_declaration") in rows


def test_run_scores_kind_anchors_only_when_the_language_is_chunked(project: Path) -> None:
    off = run_report(cwd=project)
    # Without the packs every chunk is a whole-file `module`: no `#method_declaration` anchor can match.
    for backend in off["backends"]:
        assert [q["recall"] for q in backend["per_query"]] == ["0.000000", "0.000000"]
    on = run_report("--languages", "go,java", cwd=project)
    for backend in on["backends"]:
        assert all(q["recall"] == "1.000000" for q in backend["per_query"]), backend["backend"]
    (project / "cce-relevance.toml").write_text('languages = ["go", "java"]\n', encoding="utf-8")
    assert run_report(cwd=project) == on


def test_search_returns_language_chunks(project: Path) -> None:
    # `ErrNotFound` occurs in one chunk only: the Get method (line 15's `var` is outside every chunk).
    result = cli(
        "search",
        "corpus",
        "ErrNotFound",
        "--backend",
        "bm25",
        "-k",
        "1",
        "--json",
        "--languages",
        "go",
        cwd=project,
    )
    assert result.code == 0, result.err
    (hit,) = json.loads(result.out)
    assert (hit["file_path"], hit["start_line"], hit["end_line"], hit["kind"]) == (
        "session_store.go",
        44,
        52,
        "method_declaration",
    )


def test_index_records_the_languages_and_the_store_scores_like_the_directory(project: Path) -> None:
    result = cli("index", "corpus", "--languages", "java,go", "--out", "store/index.json", cwd=project)
    assert result.code == 0, result.err
    fingerprint = json.loads((project / "store" / "fingerprint.json").read_text())
    assert fingerprint["languages"] == [
        "c",
        "go",
        "java",
        "javascript",
        "python",
        "ruby",
        "rust",
        "typescript",
    ]
    from_store = run_report("--store", "store/index.json", cwd=project)
    from_dir = run_report("--dir", "corpus", "--languages", "go,java", cwd=project)
    assert from_store["backends"] == from_dir["backends"]


def test_validate_sees_the_same_chunks_as_run(project: Path) -> None:
    assert cli("validate", "set.jsonl", cwd=project).code == 1  # kind anchors resolve to nothing
    result = cli("validate", "set.jsonl", "--languages", "go,java", cwd=project)
    assert result.code == 0, result.out + result.err


@pytest.mark.parametrize(
    "command",
    [
        ("chunks", "corpus"),
        ("search", "corpus", "q"),
        ("run", "set.jsonl"),
        ("index", "corpus"),
        ("validate", "set.jsonl"),
    ],
)
def test_unknown_language_is_a_usage_error(project: Path, command: tuple[str, ...]) -> None:
    result = cli(*command, "--languages", "go,golang", cwd=project)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        'error: unknown language "golang" (available: go, java, cpp, csharp, php, kotlin; '
        "python, javascript, ruby, rust, typescript, c are always on)\n"
    )
    assert not (project / "corpus" / ".cce").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'languages = ["go", "swift"]\n',
            'cce-relevance.toml: languages: unknown language "swift" (available: go, '
            "java, cpp, csharp, php, kotlin; python, javascript, ruby, rust, typescript, "
            "c are always on)",
        ),
        (
            'languages = "go"\n',
            "cce-relevance.toml: languages: expected an array of language names, e.g. "
            '["go", "java"], got "go"',
        ),
        (
            "languages = [1]\n",
            "cce-relevance.toml: languages: expected an array of language names, e.g. "
            '["go", "java"], got [1]',
        ),
    ],
)
def test_bad_config_languages(project: Path, text: str, message: str) -> None:
    (project / "cce-relevance.toml").write_text(text, encoding="utf-8")
    assert cli("chunks", "corpus", cwd=project) == Outcome(2, "", f"error: {message}\n")


def test_the_action_keeps_the_languages_of_a_side_s_config(project: Path) -> None:
    """The Action drops external retrievers from a side's config (`without_external`), not its languages."""
    (project / "cce-relevance.toml").write_text(
        'languages = ["kotlin", "go"]\n\n[backends.mine]\ncommand = ["python3", "r.py"]\n', encoding="utf-8"
    )
    config = load_config(None, str(project)).without_external("not here")
    assert (config.languages, dict(config.refused), dict(config.backends)) == (
        ("go", "kotlin"),
        {"mine": "is an external retriever: not here"},
        {},
    )


def test_languages_with_a_store_is_a_usage_error(project: Path) -> None:
    result = cli("run", "set.jsonl", "--store", "x.json", "--languages", "go", cwd=project)
    assert result.code == 2 and result.out == ""
    assert "--languages applies to a directory" in result.err


def test_a_different_grammar_package_version_is_refused(project: Path, tmp_path_factory) -> None:
    """A real process that sees tree-sitter-language-pack 1.0.0 first on its path (a fake dist-info)."""
    shadow = tmp_path_factory.mktemp("shadow")
    info = shadow / "tree_sitter_language_pack-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tree-sitter-language-pack\nVersion: 1.0.0\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(shadow), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "cce_relevance", "chunks", "corpus", "--languages", "go"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "error: go needs tree-sitter-language-pack==0.13.0, but 1.0.0 is installed "
        "(1.x downloads grammars at run time)\n"
        "hint: install the languages extra: pip install 'cce-relevance[languages]' "
        "(the Docker image has it)\n"
    )
    # The reference's six need nothing more: the same process chunks fine without --languages.
    assert (
        subprocess.run(
            [sys.executable, "-m", "cce_relevance", "chunks", "corpus"],
            cwd=project,
            env=env,
            capture_output=True,
            timeout=120,
        ).returncode
        == 0
    )


def test_extra_languages_chunk_without_a_network(project: Path) -> None:
    """The grammars are inside the wheel: a process in a network namespace of its own chunks all six."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -n is not available here")
    for name in ("shapes.cpp", "OrderService.cs", "Cart.php", "Scheduler.kt"):
        shutil.copy(SAMPLES / name, project / "corpus" / name)
    proc = subprocess.run(
        [
            unshare,
            "-n",
            sys.executable,
            "-m",
            "cce_relevance",
            "chunks",
            "corpus",
            "--languages",
            "go,java,cpp,csharp,php,kotlin",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert " module " not in proc.stdout
    assert {
        "function_definition",
        "local_function_statement",
        "trait_declaration",
        "companion_object",
        "method_declaration",
        "type_declaration",
    } <= set(proc.stdout.split())
