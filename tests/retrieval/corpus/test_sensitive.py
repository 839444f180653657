"""Layer-1 sensitive basenames (§sensitive) and the Rust extension rule they rely on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.retrieval.corpus.sensitive import is_sensitive, path_extension

EXACT_NAMES = [
    "credentials.json",
    "credentials.yml",
    "credentials.yaml",
    "secrets.json",
    "secrets.yml",
    "secrets.yaml",
    ".netrc",
    ".pgpass",
    ".htpasswd",
    ".dockercfg",
    "kubeconfig",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
]


@pytest.mark.parametrize("name", EXACT_NAMES)
def test_exact_names_are_sensitive_in_any_ascii_case(name: str) -> None:
    assert is_sensitive(name)
    assert is_sensitive(name.upper())


@pytest.mark.parametrize("ext", ["pem", "key", "p12", "pfx", "keystore", "jks", "ppk", "der", "asc"])
def test_key_extensions_are_sensitive(ext: str) -> None:
    assert is_sensitive(f"server.{ext}")
    assert is_sensitive(f"a.b.{ext.upper()}")


@pytest.mark.parametrize(
    "name",
    [
        ".pem",  # the only dot is the leading one: no extension
        ".key",
        "pem",
        "server.pem.txt",  # only the last extension counts
        "id_rsa.pub",
        "my_id_rsa",
        "credentials.json.example",
        "foo.env",
        "envfile",
        ".envrc",
        "monkey.js",
        "keys.go",
    ],
)
def test_ordinary_names_are_not_sensitive(name: str) -> None:
    assert not is_sensitive(name)


def test_a_name_with_two_leading_dots_has_an_extension() -> None:
    # Rust's Path::extension: `..pem` splits into `.` and `pem`.
    assert is_sensitive("..pem")


@pytest.mark.parametrize(
    "name", [".env", ".ENV", ".env.local", ".env.production", ".env.local.secret", ".env."]
)
def test_dotenv_files_are_sensitive(name: str) -> None:
    assert is_sensitive(name)


@pytest.mark.parametrize(
    "name",
    [".env.example", ".env.sample", ".env.template", ".env.dist", ".env.local.example", ".ENV.EXAMPLE"],
)
def test_dotenv_templates_are_indexed(name: str) -> None:
    assert not is_sensitive(name)


def test_lowercasing_is_ascii_only() -> None:
    # U+0130 (İ) lowercases to "i̇" with str.lower(); the reference leaves it alone.
    assert not is_sensitive("\u0130D_RSA")
    assert is_sensitive("ID_RSA")
    # KELVIN SIGN lowercases to "k" with str.lower(), which would make this `.key`.
    assert not is_sensitive("a.\u212aEY")


@pytest.mark.parametrize(
    ("name", "ext"),
    [
        ("a.py", "py"),
        ("a.tar.gz", "gz"),
        ("a.", ""),
        (".bashrc", None),
        ("..bashrc", "bashrc"),
        ("noext", None),
        (".", None),
        ("..", None),
        ("", None),
        ("x.jsonl", "jsonl"),
        (".jsonl", None),
    ],
)
def test_path_extension_follows_rust(name: str, ext: str | None) -> None:
    assert path_extension(name) == ext


@given(st.text())
def test_is_sensitive_never_raises(name: str) -> None:
    assert isinstance(is_sensitive(name), bool)
