"""Opt-in language packs (retrieval/chunking/languages.py): the pack checks of §pack-validators, real-source
chunking per language with hand-checked lines, import extraction, and that the default is untouched.

The sample sources live in `language_samples/`; every expected line range below was read off
`nl -ba` of that file, not off the chunker's output.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tree_sitter import Language

from cce_relevance.errors import CceError
from cce_relevance.retrieval.chunking.chunk import chunk_file, chunk_id
from cce_relevance.retrieval.chunking.languages import (
    EXTRA_LANGUAGES,
    EXTRA_PACKS,
    GRAMMAR_VERSION,
    check_languages,
    enabled_packs,
)
from cce_relevance.retrieval.chunking.packs import PACKS, REFERENCE_PACKS
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.tokens import estimate_tokens
from tests.retrieval.corpora import SAMPLES

SAMPLE_DIR = Path(__file__).parents[1] / "language_samples"
ALL = enabled_packs(EXTRA_LANGUAGES)


def sample(name: str) -> str:
    return (SAMPLE_DIR / name).read_text(encoding="utf-8")


def rows(path: str, text: str) -> list[tuple[int, int, str, str, str]]:
    """(start, end, chunk_type, kind, first line) per chunk, in index order."""
    return [
        (c.start_line, c.end_line, c.chunk_type, c.kind, c.content.split("\n", 1)[0])
        for c in chunk_file(path, text, ALL).chunks
    ]


def imports(path: str, text: str) -> list[str]:
    return chunk_file(path, text, ALL).imports


# ---------------------------------------------------- §pack-validators layers 1 and 2, for all twelve packs


def test_the_full_set_is_the_reference_six_then_the_extras_in_order():
    assert ALL.names == (
        "python",
        "javascript",
        "ruby",
        "rust",
        "typescript",
        "c",
        "go",
        "java",
        "cpp",
        "csharp",
        "php",
        "kotlin",
    )
    assert ALL.packs[:6] == PACKS


def test_packs_are_well_formed_and_claim_distinct_lowercase_extensions():
    for pack in ALL.packs:
        assert pack.name and pack.extensions and pack.function_kinds and pack.class_kinds
        assert not pack.function_kinds & pack.class_kinds
        assert all(e.startswith(".") and len(e) > 1 and e == e.lower() for e in pack.extensions)
    extensions = [e for p in ALL.packs for e in p.extensions]
    assert len(extensions) == len(set(extensions))
    assert ALL.for_path("a.h").name == "c"  # `.h` stays C: the reference claims it


# The node kinds each extra import extractor reads, besides its pack's chunk kinds.
IMPORT_KINDS = {
    "go": {"import_spec", "interpreted_string_literal", "raw_string_literal"},
    "java": {"import_declaration", "scoped_identifier", "identifier", "asterisk"},
    "cpp": {"preproc_include", "system_lib_string", "string_literal"},
    "csharp": {"using_directive", "identifier", "qualified_name", "generic_name", "alias_qualified_name"},
    "php": {
        "namespace_use_clause",
        "qualified_name",
        "name",
        "include_expression",
        "include_once_expression",
        "require_expression",
        "require_once_expression",
        "string_content",
    },
    "kotlin": {"import_header", "identifier", "wildcard_import"},
}


@pytest.mark.parametrize("pack", ALL.packs, ids=ALL.names)
def test_every_declared_kind_is_a_named_kind_of_the_grammar(pack):
    language = Language(pack.load_language())
    named = {
        language.node_kind_for_id(i)
        for i in range(language.node_kind_count)
        if language.node_kind_is_named(i)
    }
    declared = pack.function_kinds | pack.class_kinds | IMPORT_KINDS.get(pack.name, set())
    assert declared <= named, sorted(declared - named)
    for kind in declared:
        assert language.id_for_node_kind(kind, True) is not None


@pytest.mark.parametrize("pack", EXTRA_PACKS, ids=EXTRA_LANGUAGES)
def test_extra_grammars_are_abi_compatible_and_parse_cleanly(pack):
    language = Language(pack.load_language())
    assert 13 <= language.abi_version <= 15  # the range tree-sitter 0.26.1 loads
    path = next(p for p in SAMPLE_DIR.iterdir() if ALL.for_path(p.name) is pack)
    assert not pack.parser().parse(path.read_bytes()).root_node.has_error


def test_the_grammar_package_is_the_pinned_one():
    assert metadata.version("tree-sitter-language-pack") == GRAMMAR_VERSION == "0.13.0"


def test_the_languages_extra_is_pinned_tested_and_shipped_in_the_image(repo_root):
    extras = tomllib.loads((repo_root / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    pins = dict(line.split("==") for line in extras["languages"])
    assert pins == {
        "tree-sitter-language-pack": GRAMMAR_VERSION,
        "tree-sitter-c-sharp": metadata.version("tree-sitter-c-sharp"),
    }
    assert "cce-relevance[languages]" in extras["test"]
    image_lock = (repo_root / "requirements" / "runtime.txt").read_text(encoding="utf-8").splitlines()
    assert all(f"{name}=={version}" in image_lock for name, version in pins.items())


def test_the_docs_table_is_the_packs(repo_root):
    """docs/languages.md states each pack's extensions and kinds; they must be the code's."""
    documented = {}
    for line in (repo_root / "docs" / "languages.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        ticked = [re.findall(r"`([^`]+)`", cell) for cell in cells]
        if len(cells) == 4 and ticked[0] and ticked[1] and all(e.startswith(".") for e in ticked[1]):
            documented[ticked[0][0]] = (set(ticked[1]), set(ticked[2]), set(ticked[3]))
    assert documented == {
        p.name: (set(p.extensions), set(p.function_kinds), set(p.class_kinds)) for p in EXTRA_PACKS
    }


# ---------------------------------------------------------------- Go and Java, chunk by chunk


def test_go_file_is_chunked_per_type_function_and_method():
    text = sample("session_store.go")
    assert rows("session_store.go", text) == [
        (18, 22, "class", "type_declaration", "type Session struct {"),
        (24, 29, "class", "type_declaration", "type ("),  # a grouped declaration stays one chunk
        (32, 36, "class", "type_declaration", "type MemoryStore struct {"),
        (39, 41, "function", "function_declaration", "func NewMemoryStore(now Clock) *MemoryStore {"),
        (
            44,
            52,
            "function",
            "method_declaration",
            "func (m *MemoryStore) Get(id string) (*Session, error) {",
        ),
        (55, 60, "function", "method_declaration", "func (m *MemoryStore) Put(s *Session) {"),
        (62, 65, "function", "function_declaration", "func describe(s *Session) string {"),
        # the closure on line 63 (func_literal) is not a chunk, as Python's lambda is not
    ]
    assert imports("session_store.go", text) == ["errors", "sync", "time", "config", "fmt"]


def test_go_chunk_fields_follow_the_reference_rules():
    text = sample("session_store.go")
    get = chunk_file("pkg/session_store.go", text, ALL).chunks[4]
    lines = text.split("\n")
    assert get.content == "\n".join(lines[43:52])  # lines 44..52, the node's exact bytes
    assert get.language == "go" and get.file_path == "pkg/session_store.go"
    assert get.token_count == estimate_tokens(get.content)
    assert get.chunk_id == chunk_id("pkg/session_store.go", 44, 52, get.content.encode())


def test_java_file_is_chunked_per_class_interface_constructor_and_method():
    text = sample("Inventory.java")
    assert rows("Inventory.java", text) == [
        (10, 16, "class", "interface_declaration", "interface Priced {"),
        (11, 11, "function", "method_declaration", "long priceCents();"),  # abstract: no body, still a method
        (13, 15, "function", "method_declaration", "default boolean isFree() {"),
        (19, 55, "class", "class_declaration", "public class Inventory {"),
        (23, 25, "function", "constructor_declaration", "public Inventory() {"),
        (27, 29, "function", "constructor_declaration", "public Inventory(int reorderLevel) {"),
        (31, 34, "function", "method_declaration", "public void add(String sku, int quantity) {"),
        (36, 38, "function", "method_declaration", "public Optional<Integer> quantityOf(String sku) {"),
        (40, 42, "function", "method_declaration", "public boolean needsReorder(String sku) {"),
        (44, 44, "class", "enum_declaration", "enum Status { IN_STOCK, LOW, OUT }"),
        (46, 54, "class", "record_declaration", "record Line(String sku, int quantity) implements Priced {"),
        (47, 49, "function", "compact_constructor_declaration", "Line {"),
        (51, 53, "function", "method_declaration", "public long priceCents() {"),
    ]
    # java.util.*, and the class of a static import; `com.example.inventory.model.*` names no one file
    assert imports("Inventory.java", text) == ["HashMap", "Map", "Optional", "Objects"]


# ---------------------------------------------------------------- the other four


def test_cpp_file():
    text = sample("shapes.cpp")
    assert rows("shapes.cpp", text) == [
        (7, 10, "class", "struct_specifier", "struct Extent {"),
        (12, 22, "class", "class_specifier", "class Circle {"),
        (14, 14, "function", "function_definition", "explicit Circle(double radius) : radius_(radius) {}"),
        (16, 18, "function", "function_definition", "double area() const {"),
        (
            25,
            27,
            "function",
            "function_definition",
            "T clamp(T value, T lo, T hi) {",
        ),  # `template <…>` outside
        (31, 31, "class", "enum_specifier", "enum class Unit { Metre, Foot }"),
    ]
    assert imports("shapes.cpp", text) == ["cmath", "vector", "point"]


def test_csharp_file():
    text = sample("OrderService.cs")
    assert rows("OrderService.cs", text) == [
        (7, 10, "class", "interface_declaration", "public interface IOrderRepository"),
        (9, 9, "function", "method_declaration", "Order? Find(Guid id);"),
        (12, 12, "class", "record_declaration", "public record Order(Guid Id, decimal Total);"),
        (14, 29, "class", "class_declaration", "public class OrderService"),
        (18, 21, "function", "constructor_declaration", "public OrderService(IOrderRepository repository)"),
        (23, 28, "function", "method_declaration", "public decimal Discounted(Guid id, decimal rate)"),
        (
            26,
            26,
            "function",
            "local_function_statement",
            "decimal Apply(decimal total) => Round(total * (1 - rate), 2);",
        ),
        (31, 31, "class", "enum_declaration", "public enum OrderState { Open, Paid }"),
    ]
    assert imports("OrderService.cs", text) == ["System", "Math", "JsonSerializer"]


def test_php_file():
    text = sample("Cart.php")
    assert rows("Cart.php", text) == [
        (9, 12, "class", "interface_declaration", "interface Discountable"),
        (11, 11, "function", "method_declaration", "public function discount(): float;"),
        (14, 20, "class", "trait_declaration", "trait Loggable"),
        (16, 19, "function", "method_declaration", "protected function log(string $message): void"),
        (22, 38, "class", "class_declaration", "final class Cart implements Discountable"),
        (
            28,
            32,
            "function",
            "method_declaration",
            "public function add(Product $product, int $qty = 1): void",
        ),
        (34, 37, "function", "method_declaration", "public function discount(): float"),
        (40, 43, "function", "function_definition", "function cart_total(Cart $cart): Money"),
    ]
    # `use Loggable;` inside the class is a trait use, not an import
    assert imports("Cart.php", text) == ["Product", "Money", "Currency", "bootstrap"]


def test_kotlin_file():
    text = sample("Scheduler.kt")
    assert rows("Scheduler.kt", text) == [
        (7, 9, "class", "class_declaration", "interface Task {"),
        (8, 8, "function", "function_declaration", "suspend fun run()"),
        (11, 11, "class", "class_declaration", "data class Schedule(val every: Duration, val task: Task)"),
        (13, 15, "class", "object_declaration", "object Defaults {"),
        (17, 29, "class", "class_declaration", "class Scheduler(private val clock: () -> Long) {"),
        (20, 20, "function", "secondary_constructor", "constructor() : this(System::currentTimeMillis)"),
        (22, 24, "function", "function_declaration", "fun add(schedule: Schedule) {"),
        (26, 28, "class", "companion_object", "companion object {"),
        (27, 27, "function", "function_declaration", "fun withDefaults(): Scheduler = Scheduler()"),
        (31, 31, "function", "function_declaration", "fun Duration.toSeconds(): Long = this.seconds"),
    ]
    assert imports("Scheduler.kt", text) == ["Duration", "Job"]


@pytest.mark.parametrize(
    ("path", "extension"),
    [
        ("a.cc", ".cc"),
        ("a.cxx", ".cxx"),
        ("a.c++", ".c++"),
        ("a.hpp", ".hpp"),
        ("a.hh", ".hh"),
        ("a.hxx", ".hxx"),
        ("a.h++", ".h++"),
        ("B.KT", ".kt"),
        ("build.gradle.kts", ".kts"),
        ("Main.CS", ".cs"),
    ],
)
def test_other_extensions(path, extension):
    pack = ALL.for_path(path)
    assert pack is not None and extension in pack.extensions


# ---------------------------------------------------------------- import extraction


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('package p\nimport "fmt"\n', ["fmt"]),
        ('package p\nimport (\n\t"net/http"\n\tyaml "gopkg.in/yaml.v3"\n)\n', ["http", "yaml.v3"]),
        ('package p\nimport "github.com/jackc/pgx/v5"\n', ["pgx"]),  # a major-version suffix names no package
        ('package p\nimport "v2"\n', ["v2"]),  # …unless it is the whole path
        ('package p\nimport _ `net/http/pprof`\nimport . "strings"\n', ["pprof", "strings"]),
        ('package p\nimport "a/x"\nimport "b/x"\n', ["x"]),
        ("package p\nfunc f() {}\n", []),
    ],
)
def test_go_imports(text, expected):
    assert imports("m.go", text) == expected


@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=5))
def test_go_imports_name_the_last_path_segment(segments):
    path = "/".join(segments)
    want = (
        segments[-2]
        if len(segments) > 1 and segments[-1][0] == "v" and segments[-1][1:].isdigit()
        else segments[-1]
    )
    assert imports("m.go", f'package p\n\nimport "{path}"\n') == [want]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import a.b.C;\n", ["C"]),
        ("import static a.b.C.member;\n", ["C"]),
        ("import static a.b.C.*;\n", ["C"]),
        ("import a.b.*;\n", []),
        ("import C;\n", ["C"]),
        ("import a.C;\nimport b.C;\nimport a.D;\n", ["C", "D"]),
    ],
)
def test_java_imports(text, expected):
    assert imports("M.java", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("using System;\n", ["System"]),
        ("using System.Collections.Generic;\n", ["Generic"]),
        ("using static System.Math;\n", ["Math"]),
        ("using Json = System.Text.Json.JsonSerializer;\n", ["JsonSerializer"]),  # the target, not the alias
        ("using L = System.Collections.Generic.List<int>;\n", ["List"]),
        ("global using Foo.Bar;\n", ["Bar"]),
        ("using global::System.IO;\n", ["IO"]),
        ("using unsafe P = int*;\n", []),  # a pointer type names no file
        ("class A { void F() { using (var s = Open()) { } } }\n", []),  # a using statement is not a directive
    ],
)
def test_csharp_imports(text, expected):
    assert imports("M.cs", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<?php\nuse App\\Models\\Product;\n", ["Product"]),
        ("<?php\nuse App\\Support\\{Money, Currency as Cur, Sub\\Deep};\n", ["Money", "Currency", "Deep"]),
        ("<?php\nuse Psr\\Log\\LoggerInterface as Logger, Foo\\Bar;\n", ["LoggerInterface", "Bar"]),
        (
            "<?php\nuse function App\\Helpers\\format_price;\nuse const A\\B\\LIMIT;\n",
            ["format_price", "LIMIT"],
        ),
        ("<?php\nrequire 'lib/db.inc.php';\ninclude_once \"views/list.php\";\n", ["db.inc", "list"]),
        ('<?php\ninclude "$dir/x.php";\n', ["x"]),  # the first literal part of an interpolated string
        ("<?php\nrequire $path;\n", []),
        ("<?php\nclass A { use T; }\n", []),
    ],
)
def test_php_imports(text, expected):
    assert imports("m.php", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import a.b.C\n", ["C"]),
        ("import a.b.C as D\n", ["C"]),
        ("import a.b.*\n", []),
        ("import kotlinx.coroutines.delay\n", ["delay"]),
        ("import a.C\nimport b.C\n", ["C"]),
    ],
)
def test_kotlin_imports(text, expected):
    assert imports("m.kt", text) == expected


# ---------------------------------------------------------------- off by default


def test_without_extra_languages_their_files_are_one_module_chunk():
    text = sample("session_store.go")
    (chunk,) = chunk_file("session_store.go", text).chunks
    assert (chunk.start_line, chunk.end_line, chunk.kind, chunk.language) == (1, 66, "module", "plaintext")
    assert chunk_file("session_store.go", text, enabled_packs([])).chunks == [chunk]
    assert chunk_file("session_store.go", text).imports == []


def test_enabled_packs_with_no_extras_is_the_reference_set():
    assert enabled_packs([]) == REFERENCE_PACKS
    assert enabled_packs(["python", "c"]) == REFERENCE_PACKS  # the six are always on; naming them is harmless


def test_extras_leave_the_reference_languages_alone(upstream, tmp_path):
    """The upstream sample corpus plus one file per extra language: every reference chunk is unchanged."""
    corpus = tmp_path / "corpus"
    shutil.copytree(upstream / SAMPLES, corpus)
    for path in SAMPLE_DIR.iterdir():
        shutil.copy(path, corpus / path.name)
    default = build_index(corpus)
    extended = build_index(corpus, languages=ALL)
    extra_files = {p.name for p in SAMPLE_DIR.iterdir()}
    reference = [(c.chunk_id, c.kind, c.file_path) for c in default.chunks if c.file_path not in extra_files]
    assert reference == [
        (c.chunk_id, c.kind, c.file_path) for c in extended.chunks if c.file_path not in extra_files
    ]
    assert {c.language for c in default.chunks if c.file_path in extra_files} == {"plaintext"}
    assert {c.language for c in extended.chunks if c.file_path in extra_files} == set(EXTRA_LANGUAGES)
    assert "session_store.go" not in default.file_imports  # a module chunk has no imports
    assert extended.file_imports["session_store.go"] == ["errors", "sync", "time", "config", "fmt"]


# ---------------------------------------------------------------- choosing languages


def test_check_languages_orders_and_deduplicates():
    assert check_languages(["kotlin", "go", "kotlin", "python"]) == ("go", "kotlin")
    assert check_languages([]) == ()


@pytest.mark.parametrize("name", ["golang", "Go", "c++", "", "typescriptreact"])
def test_unknown_language_lists_the_available_ones(name):
    with pytest.raises(CceError) as caught:
        enabled_packs(["go", name])
    assert caught.value.message == (
        f'unknown language "{name}" (available: go, java, cpp, csharp, php, kotlin; '
        "python, javascript, ruby, rust, typescript, c are always on)"
    )


def test_a_missing_grammar_package_is_a_clear_error(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    with pytest.raises(CceError) as caught:
        enabled_packs(["java"])
    assert caught.value.message == "java needs tree-sitter-language-pack==0.13.0, which is not installed"
    assert "pip install 'cce-relevance[languages]'" in caught.value.hint
    assert enabled_packs(["python"]) == REFERENCE_PACKS  # no extra language: the package is not needed
