"""Layer-1 secret protection: file names that are never read (§sensitive).

The decision is taken from the basename alone, before any read, so a credential file's bytes
never enter memory. Matching is on the ASCII-lowercased name, like the reference's
`to_ascii_lowercase` (`str.lower()` would also fold non-ASCII letters).
"""

from __future__ import annotations

import string

__all__ = ["is_sensitive", "path_extension"]

_SENSITIVE_NAMES = frozenset(
    {
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
    }
)
_SENSITIVE_EXTENSIONS = frozenset({"pem", "key", "p12", "pfx", "keystore", "jks", "ppk", "der", "asc"})
# `.env.*` files ending like this are templates, meant to be read.
_DOTENV_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def path_extension(name: str) -> str | None:
    """The extension of a file name by Rust's `Path::extension` rules.

    The text after the last `.`; None when there is no dot, when the only dot that counts is
    the leading one (`.pem` has none, `..pem` has `pem`), and for `..`.
    """
    dot = name.rfind(".")
    if dot <= 0 or name == "..":
        return None
    return name[dot + 1 :]


def is_sensitive(basename: str) -> bool:
    """Whether a file with this name must be skipped unread: a credential or key file name,
    a key-like extension, or a `.env` file that is not a template."""
    lower = basename.translate(_ASCII_LOWER)
    if lower in _SENSITIVE_NAMES or path_extension(lower) in _SENSITIVE_EXTENSIONS:
        return True
    if lower == ".env" or lower.startswith(".env."):
        return not lower.endswith(_DOTENV_TEMPLATE_SUFFIXES)
    return False
