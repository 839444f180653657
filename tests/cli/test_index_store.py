"""`cce-relevance index` and `run --store`: the reference's store, written and evaluated (§store)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from cce_relevance.evaluation.run_corpus import OLLAMA_STORE_REFUSAL
from tests.cli.helpers import cli, cli_process
from tests.retrieval.fake_ollama import FakeOllama, Reply, closed_port_url, hash_vectors

CORPUS_A = {  # §hybrid-examples
    "auth.py": 'def hash_password(pw):\n    return pw + "salt"\n',
    "payments.py": "import auth\n\ndef process_payment(amount):\n"
    "    return auth.hash_password(str(amount))\n",
}
CASES = (
    '{"id":"hash","query":"where is the password hashed","expected":["auth.py"],"k":3}\n'
    '{"id":"pay","query":"process payment amount","expected":["payments.py@3-4"],"k":2}\n'
)


def write_files(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    write_files(tmp_path / "corpus", CORPUS_A)
    (tmp_path / "set.jsonl").write_text(CASES)
    return tmp_path


def run_json(*args: str, cwd: Path) -> dict:
    result = cli("run", *args, "--json", cwd=cwd)
    assert result.code == 0, result.err
    assert result.err == ""
    return json.loads(result.out)


# --------------------------------------------------------------------------- index


def test_index_writes_the_default_store_and_fingerprint(project: Path) -> None:
    result = cli("index", "corpus", cwd=project)
    assert result.code == 0, result.err
    store = project / "corpus/.cce/index.json"
    fingerprint = project / "corpus/.cce/fingerprint.json"
    assert result.out == (
        "wrote corpus/.cce/index.json: 2 chunks from 2 files, embedder hash, 2904 bytes\n"
        "wrote corpus/.cce/fingerprint.json\n"
    )
    assert result.err == ""
    data = store.read_bytes()
    assert len(data) == 2904  # §hybrid-examples
    doc = json.loads(fingerprint.read_text())
    assert doc["store_sha256"] == hashlib.sha256(data).hexdigest() and doc["redaction"] is True
    assert sorted(p.name for p in store.parent.iterdir()) == [
        "fingerprint.json",
        "index.json",
    ]  # no temp files


def test_index_is_deterministic_and_ignores_its_own_store(project: Path) -> None:
    assert cli("index", "corpus", cwd=project).code == 0
    first = (project / "corpus/.cce/index.json").read_bytes()
    again = cli_process("index", "corpus", cwd=project)
    assert again.code == 0, again.err
    assert (project / "corpus/.cce/index.json").read_bytes() == first  # .cce is never walked
    assert "2 chunks from 2 files" in again.out


def test_out_names_the_store_and_its_fingerprint(project: Path) -> None:
    result = cli("index", "corpus", "--out", "stores/nested/a.json", cwd=project)
    assert result.code == 0, result.err
    assert (project / "stores/nested/a.json").stat().st_size == 2904
    assert json.loads((project / "stores/nested/a.json.fingerprint.json").read_text())["store_bytes"] == 2904
    assert not (project / "corpus/.cce").exists()


@pytest.mark.parametrize(
    ("corpus", "size"), [("test/fixture/samples", 28924), ("eval/relevance/docs-corpus", 9915)]
)
def test_upstream_corpora_store_sizes(upstream: Path, tmp_path: Path, corpus: str, size: int) -> None:
    result = cli("index", str(upstream / corpus), "--out", str(tmp_path / "index.json"))
    assert result.code == 0, result.err
    assert (tmp_path / "index.json").stat().st_size == size


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["index", "nope"], "error: corpus is not a directory: nope\n"),
        (["index", "set.jsonl"], "error: corpus is not a directory: set.jsonl\n"),
        (
            ["index", "corpus", "--out", "set.jsonl/index.json"],
            "error: could not write set.jsonl/index.json: ",
        ),
        (["index", "corpus", "--out", "corpus"], "error: could not write corpus: Is a directory\n"),
    ],
)
def test_index_input_errors(project: Path, args: list[str], message: str) -> None:
    result = cli(*args, cwd=project)
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith(message)
    assert not list(project.rglob(".cce-relevance-*"))  # a failed write leaves no temporary file


def test_store_files_get_ordinary_permissions(project: Path) -> None:
    assert cli("index", "corpus", cwd=project).code == 0
    (project / "plain").write_text("x")  # what open() gives under this process's umask
    expected = (project / "plain").stat().st_mode & 0o777
    for name in ("index.json", "fingerprint.json"):
        assert (project / "corpus/.cce" / name).stat().st_mode & 0o777 == expected


def test_index_usage_errors(project: Path) -> None:
    for args in (["index", "corpus", "--out", ""], ["index", "corpus", "--embedder", "bert"], ["index"]):
        result = cli(*args, cwd=project)
        assert result.code == 2 and result.out == ""


def test_allow_secrets_indexes_sensitive_files_verbatim(tmp_path: Path) -> None:
    secret = "AKIAIOSFODNN7EXAMPLE"
    write_files(tmp_path / "c", {"app.py": f'KEY = "{secret}"\n', ".env": "TOKEN=abc123\n"})
    protected = cli("index", "c", "--out", "safe.json", cwd=tmp_path)
    assert protected.code == 0 and protected.err == ""
    safe = (tmp_path / "safe.json").read_text()
    assert secret not in safe and ".env" not in safe

    result = cli("index", "c", "--out", "raw.json", "--allow-secrets", cwd=tmp_path)
    assert result.code == 0
    assert result.err == "warning: --allow-secrets: secret protection is off; files are indexed verbatim\n"
    raw = json.loads((tmp_path / "raw.json").read_text())
    assert sorted(raw["file_tokens"]) == [".env", "app.py"]
    assert any(secret in c["content"] for c in raw["chunks"])
    assert json.loads((tmp_path / "raw.json.fingerprint.json").read_text())["redaction"] is False


# --------------------------------------------------------------------------- run --store


def test_run_store_equals_run_dir_on_corpus_a(project: Path) -> None:
    assert cli("index", "corpus", cwd=project).code == 0
    from_dir = run_json("set.jsonl", "--dir", "corpus", cwd=project)
    from_store = run_json("set.jsonl", "--store", "corpus/.cce/index.json", cwd=project)
    assert from_store["corpus"] == "corpus/.cce/index.json"
    assert from_store["embedder"] == "hash"
    assert from_store["backends"] == from_dir["backends"]


@pytest.mark.parametrize("fixtures", ["eval/relevance/code.jsonl", "eval/relevance/docs.jsonl"])
def test_run_store_equals_run_dir_on_our_starter_sets(repo_root: Path, tmp_path: Path, fixtures: str) -> None:
    header = json.loads((repo_root / fixtures).read_text().splitlines()[0])
    corpus = str((repo_root / fixtures).parent / header["corpus"])
    assert cli("index", corpus, "--out", str(tmp_path / "index.json")).code == 0
    for mode in ([], ["--compare", "bm25,hybrid"]):
        from_dir = run_json(fixtures, *mode, cwd=repo_root)
        from_store = run_json(fixtures, "--store", str(tmp_path / "index.json"), *mode, cwd=repo_root)
        assert from_store["backends"] == from_dir["backends"]
        assert from_store.get("compare") == from_dir.get("compare")
        assert from_store["corpus"] == str(tmp_path / "index.json") != from_dir["corpus"]


def test_upstream_golden_reproduces_from_a_store(upstream: Path, tmp_path: Path) -> None:
    store = tmp_path / "samples.json"
    assert cli("index", str(upstream / "test/fixture/samples"), "--out", str(store)).code == 0
    result = cli("run", "eval/relevance/code.jsonl", "--store", str(store), "--json", cwd=upstream)
    assert result.code == 0, result.err
    golden = (upstream / "test/fixture/relevance/code.golden.json").read_text(encoding="utf-8")
    expected = golden.replace(
        '"corpus": "eval/relevance/../../test/fixture/samples"', f'"corpus": {json.dumps(str(store))}'
    )
    assert expected != golden
    assert result.out == expected


@pytest.mark.parametrize("cut", [0, 1, 1000, 2903])
def test_truncated_store_is_e15_without_a_traceback(project: Path, cut: int) -> None:
    assert cli("index", "corpus", cwd=project).code == 0
    data = (project / "corpus/.cce/index.json").read_bytes()
    (project / "cut.json").write_bytes(data[:cut])
    result = cli_process("run", "set.jsonl", "--store", "cut.json", cwd=project)
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("error: could not load store cut.json: ")
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


def test_garbled_store_is_e15(project: Path) -> None:
    assert cli("index", "corpus", cwd=project).code == 0
    text = (project / "corpus/.cce/index.json").read_text()
    (project / "bad.json").write_text(text.replace('"start_line":1', '"start_line":"one"', 1))
    result = cli_process("run", "set.jsonl", "--store", "bad.json", cwd=project)
    assert (result.code, result.out) == (2, "")
    assert (
        result.err
        == 'error: could not load store bad.json: chunk 0 "start_line" must be a non-negative integer\n'
    )


def test_store_that_is_a_directory_is_e15(project: Path) -> None:
    result = cli("run", "set.jsonl", "--store", "corpus", cwd=project)
    assert (result.code, result.out) == (2, "")
    assert result.err == "error: could not load store corpus: Is a directory (os error 21)\n"


# --------------------------------------------------------------------------- Ollama


@pytest.fixture()
def ollama(monkeypatch: pytest.MonkeyPatch):
    with FakeOllama() as fake:
        monkeypatch.setenv("CCE_OLLAMA_URL", fake.url)
        monkeypatch.setenv("CCE_OLLAMA_MODEL", "fake-embed")
        yield fake


def test_index_with_ollama_records_the_embedder_and_model(project: Path, ollama: FakeOllama) -> None:
    result = cli("index", "corpus", "--embedder", "ollama", cwd=project)
    assert result.code == 0, result.err
    assert "embedder ollama" in result.out
    store = json.loads((project / "corpus/.cce/index.json").read_text())
    assert store["embedder"] == "ollama"
    contents = [c["content"] for c in store["chunks"]]
    assert contents == [
        'def hash_password(pw):\n    return pw + "salt"',
        "def process_payment(amount):\n    return auth.hash_password(str(amount))",
    ]
    assert ollama.requests == [
        {"model": "fake-embed", "input": ["ping"]},  # the health check comes first
        {"model": "fake-embed", "input": contents},
    ]
    fingerprint = json.loads((project / "corpus/.cce/fingerprint.json").read_text())
    assert (fingerprint["embedder"], fingerprint["model"], fingerprint["embed_dim"]) == (
        "ollama",
        "fake-embed",
        256,
    )


def test_ollama_index_batches_chunks_by_64(tmp_path: Path, ollama: FakeOllama) -> None:
    write_files(tmp_path / "many", {f"f{i:03}.md": f"note {i}\n" for i in range(150)})
    assert cli("index", "many", "--embedder", "ollama", cwd=tmp_path).code == 0
    assert [len(batch) for batch in ollama.inputs] == [1, 64, 64, 22]
    store = json.loads((tmp_path / "many/.cce/index.json").read_text())
    assert [c["content"] for c in store["chunks"]] == [t for batch in ollama.inputs[1:] for t in batch]


def test_ollama_index_refuses_to_start_when_unreachable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = closed_port_url()
    monkeypatch.setenv("CCE_OLLAMA_URL", url)
    result = cli("index", "corpus", "--embedder", "ollama", cwd=project)
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith(f"error: Ollama is not ready: could not reach Ollama at {url}/api/embed: ")
    assert "hint: start Ollama" in result.err
    assert not (project / "corpus/.cce").exists()


def test_a_failing_ollama_batch_writes_nothing(tmp_path: Path, ollama: FakeOllama) -> None:
    write_files(tmp_path / "many", {f"f{i:03}.md": f"note {i}\n" for i in range(100)})
    assert cli("index", "many", "--out", "old.json", cwd=tmp_path).code == 0
    before = (tmp_path / "old.json").read_bytes()
    ollama.reply = lambda r: (
        Reply(500, b'{"error":"out of memory"}') if len(r["input"]) == 36 else hash_vectors(r)
    )
    result = cli("index", "many", "--embedder", "ollama", "--out", "old.json", cwd=tmp_path)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"error: embedding with Ollama failed, nothing was written: Ollama at {ollama.url}/api/embed "
        'answered HTTP 500: "out of memory"\n'
    )
    assert (tmp_path / "old.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many", "old.json", "old.json.fingerprint.json"]
    assert [len(batch) for batch in ollama.inputs] == [1, 64, 36]  # the last batch failed


def test_ollama_store_scores_like_hash_when_the_vectors_agree(
    repo_root: Path, tmp_path: Path, ollama: FakeOllama
) -> None:
    """The fake answers with hash vectors, so an Ollama store must rank exactly as `--dir` does."""
    store = str(tmp_path / "docs.json")
    assert (
        cli("index", "eval/relevance/docs-corpus", "--embedder", "ollama", "--out", store, cwd=repo_root).code
        == 0
    )
    ollama.requests.clear()
    from_store = run_json("eval/relevance/docs.jsonl", "--store", store, cwd=repo_root)
    from_dir = run_json("eval/relevance/docs.jsonl", cwd=repo_root)
    assert from_store["embedder"] == "ollama"
    assert from_store["backends"] == from_dir["backends"]
    queries = [
        json.loads(line)["query"]
        for line in (repo_root / "eval/relevance/docs.jsonl").read_text().splitlines()[1:]
    ]
    assert ollama.inputs == [["ping"]] + [[q] for q in queries]  # one request per query, shared by backends


def test_ollama_store_is_refused_when_ollama_is_unreachable(
    project: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("index", "corpus", "--embedder", "ollama", cwd=project).code == 0
    monkeypatch.setenv("CCE_OLLAMA_URL", closed_port_url())
    result = cli_process(
        "run", "set.jsonl", "--store", "corpus/.cce/index.json", "--backend", "nope", cwd=project
    )
    assert (result.code, result.out) == (2, "")
    assert result.err == f"error: {OLLAMA_STORE_REFUSAL}\n"  # before the backend list is read (§order)
    assert OLLAMA_STORE_REFUSAL == (
        "this store was built with the ollama embedder but Ollama is unreachable \u2014 "
        "refusing to score across mismatched embedding spaces. "
        "Start Ollama, or evaluate a corpus directory with the deterministic hash embedder (--dir)."
    )


def test_ollama_store_is_refused_when_the_health_check_reply_is_unusable(
    project: Path, ollama: FakeOllama
) -> None:
    assert cli("index", "corpus", "--embedder", "ollama", cwd=project).code == 0
    ollama.reply = lambda r: Reply.json({"embeddings": [[]]})
    result = cli("run", "set.jsonl", "--store", "corpus/.cce/index.json", cwd=project)
    assert (result.code, result.out, result.err) == (2, "", f"error: {OLLAMA_STORE_REFUSAL}\n")


def test_query_time_failure_warns_and_scores_without_vector_recall(project: Path, ollama: FakeOllama) -> None:
    assert cli("index", "corpus", "--embedder", "ollama", cwd=project).code == 0
    ollama.reply = lambda r: Reply(500, b"") if r["input"] == ["process payment amount"] else hash_vectors(r)
    result = cli(
        "run",
        "set.jsonl",
        "--store",
        "corpus/.cce/index.json",
        "--backend",
        "vector,hybrid",
        "--json",
        cwd=project,
    )
    assert result.code == 0
    warning = (
        f"warning: Ollama at {ollama.url}/api/embed answered HTTP 500; "
        "vector recall disabled for this query\n"
    )
    assert result.err == warning * 2  # once per backend that embeds the query
    vector, hybrid = ({q["id"]: q for q in b["per_query"]} for b in json.loads(result.out)["backends"])
    # An empty query vector gives every chunk cosine 0, so the vector backend falls back to chunk-id
    # order, which puts auth.py (188febb74a94633e) before payments.py; with its vector, payments.py leads.
    assert vector["pay"]["first_relevant_rank"] == 2
    assert vector["hash"]["first_relevant_rank"] == 1
    assert hybrid["pay"]["first_relevant_rank"] == 1  # BM25 alone still finds payments.py
    healthy = run_json("set.jsonl", "--dir", "corpus", "--backend", "vector", cwd=project)
    assert {q["id"]: q["first_relevant_rank"] for q in healthy["backends"][0]["per_query"]} == {
        "hash": 1,
        "pay": 1,
    }


def test_hash_store_never_touches_the_network(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCE_OLLAMA_URL", closed_port_url())
    assert cli("index", "corpus", cwd=project).code == 0
    shutil.copy(project / "corpus/.cce/index.json", project / "copy.json")
    assert run_json("set.jsonl", "--store", "copy.json", cwd=project)["embedder"] == "hash"
