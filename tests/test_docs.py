"""Prose that points somewhere must point at something in this repository.

- Every `§id` the package or its tests cite is a heading `§id` of a document in the repository
  (docs/reference-behaviour.md holds the reference's behaviour the code reproduces).
- No citation of documents that are not in the repository (the specs the code was written
  from, design notes).
- Every error code the package names (E1, E16, ...) is in the error catalogue.
- Every test tests/oracles.md names exists.
"""

from __future__ import annotations

import re

from .import_graph import PACKAGE_DIR

REPO = PACKAGE_DIR.parent
DOCS = sorted([*REPO.glob("*.md"), *(REPO / "docs").rglob("*.md"), *(REPO / "tests").glob("*.md")])
CITATION = re.compile(r"§([a-z][a-z0-9-]*[a-z0-9])")


def _package_text() -> dict[str, str]:
    """The package's and the tests' sources: both cite the reference's behaviour."""
    sources = [*PACKAGE_DIR.rglob("*.py"), *(REPO / "tests").rglob("*.py")]
    return {
        str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
        for p in sorted(sources)
        if p.name != "test_docs.py"
    }


def _headings() -> dict[str, str]:
    found = {}
    for doc in DOCS:
        for line in doc.read_text(encoding="utf-8").splitlines():
            match = re.match(r"#+ §([a-z][a-z0-9-]*)", line)
            if match:
                assert match.group(1) not in found, f"§{match.group(1)} is a heading twice"
                found[match.group(1)] = str(doc.relative_to(REPO))
    return found


def test_every_citation_in_the_code_and_the_docs_is_a_heading_of_a_repository_document():
    headings = _headings()
    texts = {**_package_text(), **{str(d.relative_to(REPO)): d.read_text(encoding="utf-8") for d in DOCS}}
    unresolved = sorted(
        {
            f"{path}: §{cited}"
            for path, text in texts.items()
            for cited in CITATION.findall(text)
            if cited not in headings
        }
    )
    assert unresolved == []


def test_the_code_cites_no_document_outside_the_repository():
    outside = re.compile(r"\b(pipeline\.md|harness\.md|anchors-mission|ARCHITECTURE\.md|issue #\d+)|§\d")
    found = [
        f"{path}: {m.group(0)}" for path, text in _package_text().items() for m in outside.finditer(text)
    ]
    assert found == []


def test_every_error_code_named_is_in_the_catalogue():
    catalogue = (REPO / "docs" / "reference-behaviour.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| (E\d+) \|", catalogue, re.M))
    named = {code for text in _package_text().values() for code in re.findall(r"\b(E\d{1,2})\b", text)}
    assert named - listed == set()


def test_every_test_the_oracle_table_names_exists():
    table = (REPO / "tests" / "oracles.md").read_text(encoding="utf-8")
    missing = []
    for row in table.splitlines():
        if not row.startswith("| ") or row.startswith(("| fast path", "|---")):
            continue
        current = None
        for ref in re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?|`::(\w+)`", row.split("|")[3]):
            path, name, shorthand = ref
            if path:
                current = REPO / path
                assert current.is_file(), path
            name = name or shorthand
            if name and current is not None and f"def {name}(" not in current.read_text(encoding="utf-8"):
                missing.append(f"{current.relative_to(REPO)}::{name}")
    assert missing == []


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a `#` line in a code block is no heading
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def test_every_relative_link_points_at_a_file_and_heading_that_exist():
    broken = []
    for doc in DOCS:
        text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            resolved = (doc.parent / path).resolve() if path else doc
            if not resolved.exists():
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such heading)")
    assert broken == []
