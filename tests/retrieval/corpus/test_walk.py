"""The corpus walker on real trees (§walk, §file-filters–§walk-output)."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.reference import MAX_FILE_SIZE
from cce_relevance.retrieval.corpus import walk as walk_module
from cce_relevance.retrieval.corpus.walk import WalkedFile, WalkResult, walk


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files (and their parent directories) under root; a key ending in '/' is a directory."""
    for rel, content in files.items():
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def paths(result: WalkResult) -> list[str]:
    return [f.path for f in result.files]


# Output form and order (§paths, §walk-output).


def test_result_carries_relative_paths_and_text(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": "x = 1\n", "pkg/b.md": "# B\n"})
    result = walk(tmp_path)
    assert result == WalkResult(
        files=[WalkedFile("a.py", "x = 1\n"), WalkedFile("pkg/b.md", "# B\n")],
        skipped=0,
        sensitive=0,
        errors=0,
    )


def test_sorted_by_whole_path_string_not_by_component(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a/x.py": "", "a-b/x.py": "", "a.py": "", "a/c.py": "", "B.py": "", "é.py": ""})
    assert paths(walk(tmp_path)) == ["B.py", "a-b/x.py", "a.py", "a/c.py", "a/x.py", "é.py"]


def test_order_does_not_depend_on_listing_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {f"d{i}/f{j}.py": "" for i in range(3) for j in range(3)})
    expected = walk(tmp_path)
    real_scandir = os.scandir

    class Reversed:
        def __init__(self, path: bytes) -> None:
            self._entries = sorted(real_scandir(path), key=lambda e: e.name, reverse=True)

        def __enter__(self) -> list[os.DirEntry[bytes]]:
            return self._entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(walk_module.os, "scandir", Reversed)
    assert walk(tmp_path) == expected


def test_root_may_be_given_as_str_or_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {"d/sub/a.py": "a"})
    monkeypatch.chdir(tmp_path / "d")
    assert paths(walk(".")) == ["sub/a.py"]
    assert paths(walk("./")) == ["sub/a.py"]
    assert paths(walk(str(tmp_path / "d") + "/")) == ["sub/a.py"]


def test_backslash_in_a_name_stays(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a\\b.py": "", "a/b.py": ""})
    assert paths(walk(tmp_path)) == ["a/b.py", "a\\b.py"]


def test_non_utf8_names_are_converted_lossily(tmp_path: Path) -> None:
    raw_root = os.fsencode(tmp_path)
    os.mkdir(raw_root + b"/d\xff")
    with open(raw_root + b"/d\xff/f\xc3.py", "wb") as handle:
        handle.write(b"ok")
    assert walk(tmp_path).files == [WalkedFile("d\ufffd/f\ufffd.py", "ok")]


def test_gitignore_matches_non_utf8_names_as_bytes(tmp_path: Path) -> None:
    raw_root = os.fsencode(tmp_path)
    (tmp_path / ".gitignore").write_text("a?b\n")
    for name in (b"a\xffb", b"a\xc3\xa9b", b"axb"):
        with open(raw_root + b"/" + name, "wb") as handle:
            handle.write(b"")
    # `?` is one byte: it matches 0xFF and `x`, not the two bytes of `é`.
    assert paths(walk(tmp_path)) == [".gitignore", "a\u00e9b"]


# Pruning (§walk).


def test_always_pruned_and_dot_directories_are_not_descended(tmp_path: Path) -> None:
    pruned = [".git", ".cce", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".hidden"]
    make_tree(tmp_path, {f"{name}/f.py": "" for name in pruned})
    make_tree(tmp_path, {f"src/{name}/f.py": "" for name in pruned})
    make_tree(tmp_path, {"src/keep.py": ""})
    assert paths(walk(tmp_path)) == ["src/keep.py"]


def test_pruning_is_by_exact_case_sensitive_name(tmp_path: Path) -> None:
    make_tree(tmp_path, {"Build/a.py": "", "builds/a.py": "", "xdist/a.py": "", "build/a.py": ""})
    assert paths(walk(tmp_path)) == ["Build/a.py", "builds/a.py", "xdist/a.py"]


def test_files_named_like_pruned_dirs_and_dotfiles_are_kept(tmp_path: Path) -> None:
    make_tree(tmp_path, {"build": "", "dist": "", ".hidden": "", "sub/.git": "", ".gitignore": ""})
    assert paths(walk(tmp_path)) == [".gitignore", ".hidden", "build", "dist", "sub/.git"]


@pytest.mark.parametrize("root_name", ["node_modules", ".hidden", "build"])
def test_root_named_like_a_pruned_directory_is_walked(tmp_path: Path, root_name: str) -> None:
    root = make_tree(tmp_path / root_name, {"a.py": "", "build/b.py": ""})
    assert paths(walk(root)) == ["a.py"]


# `.gitignore` files in the tree (§gitignore).


def test_gitignore_files_are_indexed_and_applied(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "*.log\n", "a.log": "", "a.py": "", "sub/b.log": ""})
    assert paths(walk(tmp_path)) == [".gitignore", "a.py"]


def test_nested_gitignore_applies_below_its_directory_only(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {"src/.gitignore": "local.ts\n", "src/local.ts": "", "src/x/local.ts": "", "local.ts": ""}
    )
    assert paths(walk(tmp_path)) == ["local.ts", "src/.gitignore"]


def test_deeper_gitignore_takes_precedence(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.gen\n",
            "a.gen": "",
            "sub/.gitignore": "!keep.gen\n",
            "sub/keep.gen": "",
            "sub/other.gen": "",
        },
    )
    assert paths(walk(tmp_path)) == [".gitignore", "sub/.gitignore", "sub/keep.gen"]


def test_deeper_gitignore_can_ignore_what_a_shallower_one_reincludes(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {".gitignore": "*\n!*.py\n!*/\n", "sub/.gitignore": "b.py\n", "a.py": "", "sub/b.py": ""}
    )
    assert paths(walk(tmp_path)) == ["a.py"]


def test_anchored_pattern_in_a_nested_gitignore(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {"sub/.gitignore": "/gen.py\nx/y.py\n", "sub/gen.py": "", "sub/d/gen.py": "", "sub/x/y.py": ""},
    )
    assert paths(walk(tmp_path)) == ["sub/.gitignore", "sub/d/gen.py"]


def test_dir_only_pattern_prunes_directories_not_same_named_files(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "out/\n", "out/a.py": "", "src/out": "", "src/out2/b.py": ""})
    assert paths(walk(tmp_path)) == [".gitignore", "src/out", "src/out2/b.py"]


def test_ignored_directory_cannot_be_reincluded_into(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {".gitignore": "gen/\n!gen/keep.py\n", "gen/keep.py": "", "gen/.gitignore": "!keep.py\n"}
    )
    assert paths(walk(tmp_path)) == [".gitignore"]


def test_doublestar_forms(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "**/tmp\nlogs/**\na/**/z.py\n",
            "tmp": "",
            "x/y/tmp": "",
            "logs/a.py": "",
            "logs/b/c.py": "",
            "a/z.py": "",
            "a/b/c/z.py": "",
            "a/b/keep.py": "",
        },
    )
    assert paths(walk(tmp_path)) == [".gitignore", "a/b/keep.py"]


def test_negation_classes_braces_and_escapes_in_a_tree(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.{js,ts}\n!keep.ts\n[ab].md\nfoo\\ \n\\#x\n",
            "a.js": "",
            "b.ts": "",
            "keep.ts": "",
            "a.md": "",
            "c.md": "",
            "foo ": "",
            "foo": "",
            "#x": "",
        },
    )
    assert paths(walk(tmp_path)) == [".gitignore", "c.md", "foo", "keep.ts"]


def test_crlf_bom_and_invalid_lines_in_a_tree(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": b"\xef\xbb\xbfa.py\r\n[z-a]\r\nb.py\r\nc.py\r\n\xff\r\nd.py\r\n",
            "a.py": "",
            "b.py": "",
            "c.py": "",
            "d.py": "",
        },
    )
    # BOM spoils the first pattern; the invalid class is skipped alone; the bad byte ends reading
    # (and keeps the `.gitignore` itself out of the index, as any non-UTF-8 file).
    result = walk(tmp_path)
    assert (paths(result), result.skipped) == (["a.py", "d.py"], 1)


def test_gitignore_is_case_sensitive(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "Secret.txt\n", "secret.txt": "", "Secret.txt": ""})
    assert paths(walk(tmp_path)) == [".gitignore", "secret.txt"]


def test_a_nested_git_directory_is_not_a_boundary(tmp_path: Path) -> None:
    # With require_git off, the pinned `ignore` never looks for `.git`, so outer rules still apply.
    make_tree(tmp_path, {".gitignore": "*.log\n", "repo/.git/": "", "repo/a.log": "", "repo/b.py": ""})
    assert paths(walk(tmp_path)) == [".gitignore", "repo/b.py"]


def test_gitignore_read_through_a_symlink(tmp_path: Path) -> None:
    make_tree(tmp_path, {"rules.txt": "*.log\n", "a.log": ""})
    (tmp_path / ".gitignore").symlink_to("rules.txt")
    assert paths(walk(tmp_path)) == ["rules.txt"]


def test_gitignore_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    make_tree(tmp_path, {"sub/.gitignore/": "", "sub/a.log": "", "fifo/a.log": ""})
    os.mkfifo(tmp_path / "fifo" / ".gitignore")  # reading it would block forever
    assert paths(walk(tmp_path)) == ["fifo/a.log", "sub/a.log"]


# Symlinks and special files (§walk).


def test_symlinks_are_dropped_without_being_counted(tmp_path: Path) -> None:
    make_tree(tmp_path, {"real/a.py": "a", "b.py": "b"})
    (tmp_path / "link_dir").symlink_to("real")
    (tmp_path / "link_file.py").symlink_to("b.py")
    (tmp_path / "dangling.py").symlink_to("nowhere")
    result = walk(tmp_path)
    assert paths(result) == ["b.py", "real/a.py"]
    assert (result.skipped, result.sensitive, result.errors) == (0, 0, 0)


def test_symlink_loop_terminates(tmp_path: Path) -> None:
    make_tree(tmp_path, {"d/a.py": ""})
    (tmp_path / "d" / "loop").symlink_to("..")
    (tmp_path / "self").symlink_to("self")
    assert paths(walk(tmp_path)) == ["d/a.py"]


def test_fifo_and_socket_are_not_files(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": ""})
    os.mkfifo(tmp_path / "pipe.py")  # opening it would block
    short_dir = tempfile.mkdtemp(dir="/tmp")  # AF_UNIX paths are limited to ~108 bytes
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(os.path.join(short_dir, "s.py"))
            assert paths(walk(short_dir)) == []
        result = walk(tmp_path)
        assert paths(result) == ["a.py"]
        assert (result.skipped, result.errors) == (0, 0)
    finally:
        for name in os.listdir(short_dir):
            os.unlink(os.path.join(short_dir, name))
        os.rmdir(short_dir)


def test_root_symlink_to_directory_is_followed(tmp_path: Path) -> None:
    make_tree(tmp_path, {"real/a.py": ""})
    (tmp_path / "link").symlink_to("real")
    assert paths(walk(tmp_path / "link")) == ["a.py"]


def test_root_file_is_the_only_file_with_an_empty_path(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": "x"})
    (tmp_path / "link.py").symlink_to("a.py")
    assert walk(tmp_path / "a.py").files == [WalkedFile("", "x")]
    assert walk(tmp_path / "link.py").files == [WalkedFile("", "x")]


def test_missing_root_is_one_error(tmp_path: Path) -> None:
    assert walk(tmp_path / "missing") == WalkResult([], 0, 0, 1)
    (tmp_path / "dangling").symlink_to("missing")
    assert walk(tmp_path / "dangling") == WalkResult([], 0, 0, 1)


# Unreadable directories and files that vanish.


def _failing_scandir(monkeypatch: pytest.MonkeyPatch, failing: Path) -> None:
    real_scandir = os.scandir

    def scandir(path: bytes):  # type: ignore[no-untyped-def]
        if path == os.fsencode(failing):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(walk_module.os, "scandir", scandir)


def test_unreadable_directory_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {"locked/a.py": "", "open/b.py": ""})
    _failing_scandir(monkeypatch, tmp_path / "locked")
    result = walk(tmp_path)
    assert paths(result) == ["open/b.py"]
    assert result.errors == 1


def test_unreadable_root_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {"a.py": ""})
    _failing_scandir(monkeypatch, tmp_path)
    assert walk(tmp_path) == WalkResult([], 0, 0, 1)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any directory")
def test_directory_without_read_permission(tmp_path: Path) -> None:
    make_tree(tmp_path, {"locked/a.py": "", "b.py": ""})
    (tmp_path / "locked").chmod(0o000)
    try:
        result = walk(tmp_path)
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert (paths(result), result.errors) == (["b.py"], 1)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_file_without_read_permission_is_skipped(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": "", "b.py": ""})
    (tmp_path / "a.py").chmod(0o000)
    result = walk(tmp_path)
    assert (paths(result), result.skipped) == (["b.py"], 1)


def test_file_vanishing_mid_walk_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {"gone.py": "", "stays.py": ""})
    real_scandir = os.scandir

    def scandir(path: bytes) -> list[os.DirEntry[bytes]]:
        with real_scandir(path) as listing:
            entries = list(listing)
        (tmp_path / "gone.py").unlink()
        return entries

    class Listing:
        def __init__(self, path: bytes) -> None:
            self._entries = scandir(path)

        def __enter__(self) -> list[os.DirEntry[bytes]]:
            return self._entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(walk_module.os, "scandir", Listing)
    result = walk(tmp_path)
    assert (paths(result), result.skipped, result.errors) == (["stays.py"], 1, 0)


# Per-file filters, in order (§file-filters).


def test_sensitive_names_are_counted_and_never_read(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {".env": "S=1", "id_rsa": "k", "sub/server.pem": "c", ".env.example": "S=", "a.py": ""}
    )
    (tmp_path / "id_rsa").chmod(0o000)
    result = walk(tmp_path)
    assert paths(result) == [".env.example", "a.py"]
    assert (result.sensitive, result.skipped) == (3, 0)


def test_protection_off_walks_sensitive_names(tmp_path: Path) -> None:
    make_tree(tmp_path, {".env": "S=1", "id_rsa": "k"})
    result = walk(tmp_path, protect_secrets=False)
    assert paths(result) == [".env", "id_rsa"]
    assert result.sensitive == 0


def test_sensitive_check_comes_before_the_other_filters(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.pem": b"\xff", "b.key": b"x" * (MAX_FILE_SIZE + 1)})
    assert walk(tmp_path) == WalkResult([], skipped=0, sensitive=2, errors=0)


def test_gitignored_sensitive_file_is_not_counted(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": ".env\n", ".env": "S=1"})
    assert walk(tmp_path).sensitive == 0


def test_jsonl_rule(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            "a.jsonl": "{}",
            "..jsonl": "{}",
            "b.JSONL": "{}",
            ".jsonl": "{}",
            "c.jsonl.txt": "",
            "d.jsonl/e.py": "",
        },
    )
    result = walk(tmp_path)
    assert paths(result) == [".jsonl", "b.JSONL", "c.jsonl.txt", "d.jsonl/e.py"]
    assert result.skipped == 2


def test_size_limit_keeps_exactly_max(tmp_path: Path) -> None:
    for name, size in (("exact.txt", MAX_FILE_SIZE), ("over.txt", MAX_FILE_SIZE + 1)):
        with open(tmp_path / name, "wb") as handle:
            handle.truncate(size)
    result = walk(tmp_path)
    assert paths(result) == ["exact.txt"]
    assert len(result.files[0].text) == MAX_FILE_SIZE
    assert result.skipped == 1


def test_invalid_utf8_is_skipped_bom_and_empty_files_are_kept(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            "bad.py": b"ok\xff",
            "surrogate.py": b"\xed\xa0\x80",
            "overlong.py": b"\xc0\xaf",
            "bom.py": b"\xef\xbb\xbfx",
            "empty.py": b"",
            "nul.bin": b"\x00\x01",
        },
    )
    result = walk(tmp_path)
    assert result.files == [
        WalkedFile("bom.py", "\ufeffx"),
        WalkedFile("empty.py", ""),
        WalkedFile("nul.bin", "\x00\x01"),
    ]
    assert result.skipped == 3


# Reading a walked file again (a warm run's chunks: retrieval/chunking/chunk.py `SlicedChunk`).


def forget_recent() -> None:
    """Let go of the texts read again so far (each test reads its files from disk)."""
    walk_module._recent.clear()
    walk_module._held[0] = 0


def read_again(result: WalkResult) -> list[str]:
    """Each walked file's text as its `FileText` reads it, after the recently read ones are let go."""
    forget_recent()
    return [f.source.read() if f.source else "no source" for f in result.files]


def test_a_file_read_again_gives_the_text_the_walk_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(
        tmp_path / "t", {"bom.py": b"\xef\xbb\xbfx", "nul.bin": b"\x00\x01", "u.rs": "// é漢\U0001f600\n"}
    )
    with open(os.fsencode(tmp_path / "t") + b"/caf\xe9.py", "wb") as handle:
        handle.write(b"x = 1\n")  # a name that is not UTF-8: read again by its bytes
    (tmp_path / "t" / "link.py").symlink_to("u.rs")  # not walked
    monkeypatch.chdir(tmp_path)
    result = walk("t")  # a relative root: the file is read again from anywhere
    monkeypatch.chdir("/")
    assert read_again(result) == [f.text for f in result.files] and len(result.files) == 4
    assert paths(result)[0] == "bom.py" and "caf\ufffd.py" in paths(result)
    rooted = walk(tmp_path / "t" / "link.py")  # a root that is a symlink to a file
    assert read_again(rooted) == [f.text for f in rooted.files] == ["// é漢\U0001f600\n"]


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.write_bytes(b"y = 2\n"),  # same size, other bytes
        lambda p: p.write_bytes(b"x = 1\n\n"),
        os.unlink,
        lambda p: os.unlink(p) or os.mkfifo(p),  # type: ignore[func-returns-value]  # not a regular file
    ],
    ids=["same-size", "longer", "gone", "fifo"],
)
def test_a_file_changed_since_the_walk_is_refused_when_read_again(
    tmp_path: Path, change: Callable[[Path], object]
) -> None:
    make_tree(tmp_path, {"pkg/a.py": "x = 1\n", "b.py": "ok"})
    result = walk(tmp_path)
    change(tmp_path / "pkg" / "a.py")
    forget_recent()
    with pytest.raises(CceError, match="^pkg/a.py: the file changed while the corpus was being ranked"):
        next(f for f in result.files if f.path == "pkg/a.py").source.read()  # type: ignore[union-attr]
    assert next(f for f in result.files if f.path == "b.py").source.read() == "ok"  # type: ignore[union-attr]


def test_files_read_again_are_kept_within_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk_module, "_RECENT_CHARS", 10)
    make_tree(tmp_path, {"a": "aaaa", "b": "bbbb", "c": "cccc"})
    files = [f.source for f in walk(tmp_path).files if f.source]
    forget_recent()
    for source in files:
        source.read()
    assert list(walk_module._recent) == files[1:] and walk_module._held == [8]  # the oldest let go
    (tmp_path / "a").write_text("AAAA")
    (tmp_path / "b").write_text("BBBB")
    assert files[1].read() == "bbbb"  # a kept text is the one the walk read
    with pytest.raises(CceError):
        files[0].read()  # one let go is read again, and refused


# Properties.

_RAW_NAME = st.binary(min_size=1, max_size=8).filter(
    lambda n: b"/" not in n and b"\x00" not in n and n not in (b".", b"..")
)
_TREE = st.recursive(
    st.one_of(st.binary(max_size=16), st.sampled_from([b"*\n!a\n", b"[\n{,}\nb/\n", b"**\n!*/\n"])),
    lambda children: st.dictionaries(_RAW_NAME, children, max_size=4),
    max_leaves=12,
)


def _build(root: bytes, tree: dict[bytes, object]) -> set[bytes]:
    """Create the tree; return the root-relative raw paths of its regular files."""
    created: set[bytes] = set()
    for name, node in tree.items():
        path = root + b"/" + name
        if isinstance(node, dict):
            os.mkdir(path)
            created |= {name + b"/" + rel for rel in _build(path, node)}
        else:
            with open(path, "wb") as handle:
                handle.write(node)  # type: ignore[arg-type]
            created.add(name)
    return created


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_RAW_NAME | st.just(b".gitignore"), _TREE, max_size=5))
def test_walk_of_arbitrary_trees_never_raises(tree: dict[bytes, object]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        created = _build(os.fsencode(tmp), tree)
        result = walk(tmp)
        assert [f.source.read() for f in result.files if f.source] == [f.text for f in result.files]
    walked = paths(result)
    assert walked == sorted(walked)
    assert set(walked) <= {rel.decode("utf-8", "replace") for rel in created}
    assert all(not p.startswith(("/", "./")) and ".." not in p.split("/") for p in walked)
    if all(_is_utf8(rel) for rel in created):
        assert len(walked) == len(set(walked))
    assert len(walked) + result.skipped + result.sensitive <= len(created)
    assert result.errors == 0


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
