"""`cce-relevance.toml`: every ranking parameter, every kind of fault, discovery, and the docs' tables."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.numeric import is_finite_number
from cce_relevance.project_config import BASE_PARAMETERS, CONFIG_NAME, NO_CONFIG, PARAMETERS, load_config
from cce_relevance.reference import REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.search.external import DEFAULT_TIMEOUT, CommandRetriever, HttpRetriever
from cce_relevance.retrieval.search.registry import Variant
from tests.conftest import REPO_ROOT

# A valid value other than the reference's for every parameter, as TOML, and as it is parsed.
CHANGED = {
    "rrf_k": ("30", 30.0),
    "confidence_weight": ("0.25", 0.25),
    "fts_boost_code_lookup": ("2", 2.0),
    "max_chunks_per_file": ("1", 1),
    "bm25_k1": ("0.9", 0.9),
    "bm25_b": ("1", 1.0),
    "candidate_multiplier": ("5", 5),
    "w_vector": ("0", 0.0),
    "w_keyword": ("0.6", 0.6),
    "w_recency": ("0.0", 0.0),
    "path_penalty": ("1.0", 1.0),
    "path_penalty_markers": ('["vendor/"]', ("vendor/",)),
    "graph_enabled": ("false", False),
    "graph_max_bonus_files": ("0", 0),
    "graph_bonus_chunk_scale": ("0.5", 0.5),
}


def write(tmp_path: Path, text: str, name: str = CONFIG_NAME) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    write(tmp_path, text)
    with pytest.raises(CceError) as caught:
        load_config(None, str(tmp_path))
    return caught.value.message


def test_every_ranking_parameter_is_configurable() -> None:
    names = {f.name for f in dataclasses.fields(RankingParams)}
    assert set(PARAMETERS) == names == set(CHANGED) == set(BASE_PARAMETERS["hybrid"])


@pytest.mark.parametrize("key", sorted(CHANGED))
def test_each_parameter_reaches_the_variant_and_nothing_else_changes(tmp_path: Path, key: str) -> None:
    text, value = CHANGED[key]
    assert getattr(REFERENCE_PARAMS, key) != value
    write(tmp_path, f'[backends.v]\nbase = "hybrid"\n{key} = {text}\n')
    spec = load_config(None, str(tmp_path)).spec("v")
    assert spec == Variant("hybrid", dataclasses.replace(REFERENCE_PARAMS, **{key: value}))
    assert type(getattr(spec.params, key)) is type(getattr(REFERENCE_PARAMS, key))


def test_an_unchanged_variant_has_the_reference_params(tmp_path: Path) -> None:
    write(tmp_path, '[backends.same]\nbase = "hybrid"\n[backends.b]\nbase = "bm25"\nbm25_k1 = 1.2\n')
    config = load_config(None, str(tmp_path))
    assert config.spec("same") == config.spec("hybrid") == Variant("hybrid", REFERENCE_PARAMS)
    assert config.spec("b") == Variant("bm25", REFERENCE_PARAMS)


def test_names_are_the_builtins_then_the_configured_ones_sorted(tmp_path: Path) -> None:
    write(tmp_path, '[backends.zeta]\nbase = "vector"\n[backends.alpha]\nbase = "bm25"\n')
    config = load_config(None, str(tmp_path))
    assert config.names == ("bm25", "vector", "hybrid", "alpha", "zeta")
    assert config.path == CONFIG_NAME


def test_external_retrievers_run_in_the_config_files_directory(tmp_path: Path) -> None:
    write(
        tmp_path,
        '[backends.cmd]\ncommand = ["python3", "r.py"]\ntimeout = 2\n'
        '[backends.web]\nurl = "http://127.0.0.1:9/search"\n',
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    config = load_config(None, str(sub))
    assert config.path == "../" + CONFIG_NAME
    assert config.spec("cmd") == CommandRetriever(("python3", "r.py"), str(tmp_path), 2.0)
    assert config.spec("web") == HttpRetriever("http://127.0.0.1:9/search", DEFAULT_TIMEOUT)


def test_without_external_keeps_variants_and_refuses_the_rest(tmp_path: Path) -> None:
    write(tmp_path, '[backends.cmd]\ncommand = ["x"]\n[backends.v]\nbase = "hybrid"\n')
    config = load_config(None, str(tmp_path)).without_external("not here")
    assert config.names == ("bm25", "vector", "hybrid", "v")
    assert dict(config.refused) == {"cmd": "is an external retriever: not here"}


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path, '[backends.outside]\nbase = "hybrid"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert load_config(None, str(repo / "src")) == NO_CONFIG
    write(repo, '[backends.inside]\nbase = "hybrid"\n')
    assert load_config(None, str(repo / "src")).names[-1] == "inside"


def test_an_explicit_path_wins_over_discovery(tmp_path: Path) -> None:
    write(tmp_path, '[backends.found]\nbase = "hybrid"\n')
    write(tmp_path, '[backends.chosen]\nbase = "bm25"\n', "other.toml")
    config = load_config("other.toml", str(tmp_path))
    assert (config.path, config.names[-1]) == ("other.toml", "chosen")


def test_an_empty_file_configures_nothing(tmp_path: Path) -> None:
    write(tmp_path, "")
    config = load_config(None, str(tmp_path))
    assert config.path == CONFIG_NAME and not config.backends


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(value), repr(value))
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


SCALAR = (
    st.booleans()
    | st.integers(-5, 10**20)
    | st.floats()
    | st.text(st.characters(exclude_categories=["Cs", "Cc"]))
)
VALUE = SCALAR | st.lists(SCALAR, max_size=3)


@settings(max_examples=400, deadline=None)
@given(key=st.sampled_from(sorted(PARAMETERS)), value=VALUE)
def test_any_value_is_taken_as_written_or_refused_naming_the_key(
    tmp_path_factory: pytest.TempPathFactory, key: str, value: object
) -> None:
    directory = tmp_path_factory.mktemp("cfg")
    write(directory, f'[backends.v]\nbase = "hybrid"\n{key} = {toml_value(value)}\n')
    try:
        spec = load_config(None, str(directory)).spec("v")
    except CceError as exc:
        assert exc.message.startswith(
            f"cce-relevance.toml: [backends.v] {key}: expected {PARAMETERS[key].expected}, "
        )
        assert not PARAMETERS[key].valid(value)
        return
    got, reference = getattr(spec.params, key), getattr(REFERENCE_PARAMS, key)
    assert type(got) is type(reference)
    if is_finite_number(value):
        assert got == type(reference)(value)  # an int given for a float is its nearest double
    else:
        assert got == (tuple(value) if isinstance(value, list) else value)


WHERE = "cce-relevance.toml: [backends.v]"
TIMEOUT_RANGE = "a number of seconds > 0 and at most 86400"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('rrf_k = "thirty"', f'{WHERE} rrf_k: expected a number > 0, got "thirty"'),
        ("rrf_k = 0", f"{WHERE} rrf_k: expected a number > 0, got 0"),
        ("rrf_k = -1.5", f"{WHERE} rrf_k: expected a number > 0, got -1.5"),
        ("rrf_k = nan", f"{WHERE} rrf_k: expected a number > 0, got nan"),
        ("rrf_k = inf", f"{WHERE} rrf_k: expected a number > 0, got inf"),
        ("rrf_k = true", f"{WHERE} rrf_k: expected a number > 0, got true"),
        ("rrf_k = [30]", f"{WHERE} rrf_k: expected a number > 0, got [30]"),
        ("confidence_weight = 1.5", f"{WHERE} confidence_weight: expected a number from 0 to 1, got 1.5"),
        ("bm25_b = -0.1", f"{WHERE} bm25_b: expected a number from 0 to 1, got -0.1"),
        ("w_vector = -1", f"{WHERE} w_vector: expected a number >= 0, got -1"),
        ("max_chunks_per_file = 0", f"{WHERE} max_chunks_per_file: expected an integer >= 1, got 0"),
        ("max_chunks_per_file = 2.0", f"{WHERE} max_chunks_per_file: expected an integer >= 1, got 2.0"),
        ("max_chunks_per_file = false", f"{WHERE} max_chunks_per_file: expected an integer >= 1, got false"),
        ("candidate_multiplier = 0", f"{WHERE} candidate_multiplier: expected an integer >= 1, got 0"),
        ("graph_max_bonus_files = -1", f"{WHERE} graph_max_bonus_files: expected an integer >= 0, got -1"),
        ("graph_enabled = 1", f"{WHERE} graph_enabled: expected true or false, got 1"),
        ('graph_enabled = "no"', f'{WHERE} graph_enabled: expected true or false, got "no"'),
        (
            'path_penalty_markers = "tests/"',
            f'{WHERE} path_penalty_markers: expected an array of non-empty strings, got "tests/"',
        ),
        (
            'path_penalty_markers = ["tests/", ""]',
            f'{WHERE} path_penalty_markers: expected an array of non-empty strings, got ["tests/", ""]',
        ),
        (
            "path_penalty_markers = [{a = 1}]",
            f"{WHERE} path_penalty_markers: expected an array of non-empty strings, got [a table]",
        ),
        ("rrf = 30", f'{WHERE} rrf: unknown key (base "hybrid" takes {", ".join(PARAMETERS)}, embedder)'),
        ('"r f" = 30', f'{WHERE} "r f": unknown key (base "hybrid" takes {", ".join(PARAMETERS)}, embedder)'),
        (
            "timeout = 3",
            f'{WHERE} timeout: does not apply here (base "hybrid" takes {", ".join(PARAMETERS)}, embedder)',
        ),
    ],
)
def test_bad_hybrid_parameters(tmp_path: Path, body: str, message: str) -> None:
    assert error_of(tmp_path, f'[backends.v]\nbase = "hybrid"\n{body}\n') == message


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'base = "bm25"\nrrf_k = 30',
            f'{WHERE} rrf_k: does not apply here (base "bm25" takes bm25_k1, bm25_b)',
        ),
        (
            'base = "vector"\nbm25_b = 0.5',
            f'{WHERE} bm25_b: does not apply here (base "vector" takes embedder)',
        ),
        ('base = "hybird"', f'{WHERE} base: expected "bm25", "vector" or "hybrid", got "hybird"'),
        ("base = 3", f'{WHERE} base: expected "bm25", "vector" or "hybrid", got 3'),
        (
            "rrf_k = 30",
            f'{WHERE}: expected exactly one of base = "bm25"|"vector"|"hybrid", '
            'command = ["program", "arg", ...], url = "http://..." or python = "package.module:factory"; '
            "got none",
        ),
        (
            'base = "hybrid"\nurl = "http://127.0.0.1:1/"',
            f'{WHERE}: expected exactly one of base = "bm25"|"vector"|"hybrid", '
            'command = ["program", "arg", ...], url = "http://..." or python = "package.module:factory"; '
            "got base and url",
        ),
        (
            'command = ["r"]\nrrf_k = 30',
            f"{WHERE} rrf_k: does not apply here (a command retriever takes timeout)",
        ),
        ('url = "http://h/"\nretries = 3', f"{WHERE} retries: unknown key (a url retriever takes timeout)"),
        (
            "command = []",
            f"{WHERE} command: expected a non-empty array of non-empty strings, e.g. "
            '["python3", "retriever.py"], got []',
        ),
        (
            'command = "python3 r.py"',
            f"{WHERE} command: expected a non-empty array of non-empty strings, e.g. "
            '["python3", "retriever.py"], got "python3 r.py"',
        ),
        ('command = ["r"]\ntimeout = 0', f"{WHERE} timeout: expected {TIMEOUT_RANGE}, got 0"),
        ('command = ["r"]\ntimeout = "10"', f'{WHERE} timeout: expected {TIMEOUT_RANGE}, got "10"'),
        ('url = "http://h/"\ntimeout = 1e308', f"{WHERE} timeout: expected {TIMEOUT_RANGE}, got 1e+308"),
        ('url = "ftp://h/search"', f'{WHERE} url: expected an http:// or https:// URL, got "ftp://h/search"'),
        (
            'url = "127.0.0.1:8000/search"',
            f'{WHERE} url: expected an http:// or https:// URL, got "127.0.0.1:8000/search"',
        ),
    ],
)
def test_bad_backend_tables(tmp_path: Path, table: str, message: str) -> None:
    assert error_of(tmp_path, f"[backends.v]\n{table}\n") == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[backends.hybrid]\nbase = "hybrid"\n',
            'cce-relevance.toml: [backends.hybrid]: "hybrid" is a built-in backend; '
            "give the variant another name",
        ),
        (
            '[backends."my retriever"]\nbase = "hybrid"\n',
            'cce-relevance.toml: [backends."my retriever"]: '
            "a backend name is letters, digits, '.', '_' and '-', starting with a letter or digit",
        ),
        (
            '[backends."-x"]\nbase = "hybrid"\n',
            "cce-relevance.toml: [backends.-x]: a backend name is letters, digits, '.', '_' and '-', "
            "starting with a letter or digit",
        ),
        ("[backends]\nv = 3\n", "cce-relevance.toml: [backends.v]: expected a table, got 3"),
        ("backends = 3\n", "cce-relevance.toml: backends: expected a table of [backends.NAME] tables, got 3"),
        (
            "language = []\n",
            'cce-relevance.toml: unknown key "language" '
            "(expected a [backends.NAME] or [embedders.NAME] table, languages or exclude)",
        ),
    ],
)
def test_bad_files(tmp_path: Path, text: str, message: str) -> None:
    assert error_of(tmp_path, text) == message


def test_invalid_toml_names_the_file_and_the_position(tmp_path: Path) -> None:
    message = error_of(tmp_path, '[backends.v\nbase = "hybrid"\n')
    assert message.startswith("cce-relevance.toml: invalid TOML: ") and "line 1" in message


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / CONFIG_NAME).write_bytes(b'[backends.v]\nbase = "hybrid\xff"\n')
    with pytest.raises(CceError) as caught:
        load_config(None, str(tmp_path))
    assert caught.value.message == "cce-relevance.toml: invalid TOML: not UTF-8 text (at line 2)"


def test_an_unreadable_config_path(tmp_path: Path) -> None:
    with pytest.raises(CceError) as caught:
        load_config("missing.toml", str(tmp_path))
    assert caught.value.message == "could not read config missing.toml: No such file or directory"
    (tmp_path / CONFIG_NAME).mkdir()
    with pytest.raises(CceError) as caught:
        load_config(None, str(tmp_path))
    assert caught.value.message == "could not read config cce-relevance.toml: Is a directory"


DOCS = (REPO_ROOT / "docs" / "retrievers.md").read_text(encoding="utf-8")


def test_the_documented_config_file_loads(tmp_path: Path) -> None:
    example = re.findall(r"```toml\n(.*?)```", DOCS, re.S)[0]
    config = load_config(str(write(tmp_path, example)), str(tmp_path))
    assert config.names == (
        "bm25",
        "vector",
        "hybrid",
        "bm25-short-docs",
        "grep",
        "hybrid-cap1",
        "hybrid-rrf30",
    )


@pytest.mark.parametrize("doc", ["docs/retrievers.md", "docs/embedders.md", "README.md"])
def test_every_config_snippet_of_the_docs_loads(tmp_path: Path, doc: str) -> None:
    for snippet in re.findall(r"```toml\n(.*?)```", (REPO_ROOT / doc).read_text(encoding="utf-8"), re.S):
        load_config(str(write(tmp_path, snippet)), str(tmp_path))


def test_the_repositorys_own_config_defines_the_wordllama_variants() -> None:
    config = load_config(None, str(REPO_ROOT))
    for name, base in (("vector-wl", "vector"), ("hybrid-wl", "hybrid")):
        spec = config.spec(name)
        assert isinstance(spec, Variant) and spec.base == base and spec.params == REFERENCE_PARAMS
        assert spec.embedder is not None and spec.embedder.name == "wordllama"


def test_the_documented_parameter_table_matches_the_code() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \| (.+?) \| (.+?) \|$", DOCS, re.M)
    table = {
        name: (default, accepted, bases) for name, default, accepted, bases in rows if name in PARAMETERS
    }
    assert list(table) == list(PARAMETERS)
    for name, (default, accepted, bases) in table.items():
        reference = getattr(REFERENCE_PARAMS, name)
        shown = (
            str(reference).lower()
            if isinstance(reference, bool)
            else (
                "[" + ", ".join(f'"{m}"' for m in reference) + "]"
                if isinstance(reference, tuple)
                else str(reference)
            )
        )
        assert default == shown, name
        assert accepted == PARAMETERS[name].expected, name
        assert bases.split(", ") == [b for b in ("bm25", "vector", "hybrid") if name in BASE_PARAMETERS[b]], (
            name
        )


E5 = "cce-relevance.toml: [embedders.e5]"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("", f'{E5}: type is missing (expected "wordllama" or "openai")'),
        ('type = "bert"', f'{E5} type: expected "wordllama" or "openai", got "bert"'),
        (
            'type = "openai"\nmodel = "m"',
            f'{E5}: base_url is missing (type "openai" needs base_url and model)',
        ),
        (
            'type = "openai"\nbase_url = "ftp://h/v1"\nmodel = "m"',
            f'{E5} base_url: expected an http:// or https:// URL, e.g. "http://127.0.0.1:8080/v1", '
            'got "ftp://h/v1"',
        ),
        (
            'type = "openai"\nbase_url = "http://h/v1"\nmodel = "m"\napi_key_env = "sk-123"',
            f'{E5} api_key_env: expected the name of an environment variable, e.g. "OPENAI_API_KEY", '
            'got "sk-123"',
        ),
        (
            'type = "openai"\nbase_url = "http://h/v1"\nmodel = "m"\nbatch_size = 0',
            f"{E5} batch_size: expected an integer from 1 to 2048, got 0",
        ),
        ('type = "wordllama"\ndimensions = 512', f"{E5} dimensions: expected one of 64, 128, 256, got 512"),
        (
            'type = "wordllama"\ntimeout = 3',
            f'{E5} timeout: does not apply here (type "wordllama" takes dimensions, max_input_chars)',
        ),
        (
            'type = "openai"\nbase_url = "http://h/v1"\nmodel = "m"\nkey = "sk"',
            f'{E5} key: unknown key (type "openai" takes base_url, model, dimensions, api_key_env, '
            "batch_size, timeout, deadline, max_retries, max_input_chars)",
        ),
    ],
)
def test_bad_embedder_tables(tmp_path: Path, table: str, message: str) -> None:
    assert error_of(tmp_path, f"[embedders.e5]\n{table}\n") == message


def test_an_embedder_table_may_not_take_a_built_in_name(tmp_path: Path) -> None:
    assert error_of(tmp_path, '[embedders.wordllama]\ntype = "wordllama"\n') == (
        'cce-relevance.toml: [embedders.wordllama]: "wordllama" is a built-in embedder; '
        "give this one another name"
    )


def test_embedder_tables_and_the_variants_that_name_them(tmp_path: Path) -> None:
    write(
        tmp_path,
        '[embedders.e5]\ntype = "openai"\nbase_url = "http://127.0.0.1:8080/v1"\nmodel = "e5-small"\n'
        'dimensions = 128\napi_key_env = "E5_KEY"\n\n'
        '[embedders.wl64]\ntype = "wordllama"\ndimensions = 64\n\n'
        '[backends.hybrid-e5]\nbase = "hybrid"\nembedder = "e5"\nrrf_k = 30\n\n'
        '[backends.vector-wl64]\nbase = "vector"\nembedder = "wl64"\n',
    )
    config = load_config(None, str(tmp_path))
    e5 = config.spec("hybrid-e5")
    assert isinstance(e5, Variant) and e5.params.rrf_k == 30.0
    assert e5.embedder is not None
    assert (e5.embedder.kind, e5.embedder.model, e5.embedder.dimensions, e5.embedder.api_key_env) == (
        "openai",
        "e5-small",
        128,
        "E5_KEY",
    )
    assert config.embedder_names == ("hash", "ollama", "wordllama", "openai", "e5", "wl64")
    wl64 = config.embedder("wl64")
    assert wl64 is not None and wl64.dimensions == 64
    # The Action without allow-repository-retrievers: a remote embedder is refused, WordLlama runs.
    safe = config.without_external("refused")
    assert dict(safe.refused) == {
        "hybrid-e5": 'ranks with embedder "e5", which sends the repository\'s text to a service its config '
        "file chose: refused"
    }
    assert "vector-wl64" in safe.backends
