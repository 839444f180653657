"""No value reaches git where an option can go.

A shard's state, an event payload and an input are data from outside: a commit field of
`--output=FILE`, handed to `git show` as a revision, was read as an option and git wrote the file.
Two checks. The first reads the package's source with `ast`: every argument list that runs git
(a list starting with "git", or a call of one of the `HELPERS` that pass their arguments to git)
must put every value that is not text written in the source after `--end-of-options` or `--`
(a value glued to its option, `f"--work-tree={path}"`, is text we wrote followed by data, so it
is one argument git cannot read as another option). The second gives a real repository's git
functions such a commit and finds an error naming it, and no file where git would have written.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import cce_relevance
from cce_relevance.action.config.inputs import ActionInputs
from cce_relevance.action.trend.branch_store import HistoryBranch
from cce_relevance.action.trend.history import History
from cce_relevance.action.trend.record import record_push
from cce_relevance.action.workspace.git import (
    CommitPair,
    changed_files,
    commit_files,
    commit_sha,
    resolve_commits,
    tree_bytes,
)
from cce_relevance.errors import CceError
from tests.action.test_git import Upstream, event_inputs, isolated_git, sh, upstream
from tests.action.test_trend import outcome

__all__ = ["isolated_git", "upstream"]  # the fixtures of test_git.py, used here too

PACKAGE = Path(cce_relevance.__file__).parent
END_OF_OPTIONS = frozenset({"--", "--end-of-options"})
# git's own options before the command that take the next argument as their value, whatever it is.
VALUE_OPTIONS = frozenset({"-C", "-c"})
# What an f-string may begin with: text that is no option, or a whole option its value is glued to.
_GLUED = re.compile(r"[^-]|--[a-z][a-z-]*=|-[a-zA-Z]$")


@dataclass(frozen=True)
class Varargs:
    """The helper's positional arguments from `start` on are git's."""

    start: int


@dataclass(frozen=True)
class Listed:
    """The helper's positional argument `index` is a list (or tuple) of git's arguments."""

    index: int


# (module under cce_relevance/, function or Class.method) -> where a call's git arguments are.
HELPERS: dict[tuple[str, str], Varargs | Listed] = {
    ("action/workspace/git.py", "git"): Varargs(1),
    ("action/workspace/git.py", "_run"): Listed(1),
    ("action/workspace/git.py", "_fetch"): Listed(1),
    ("action/workspace/git.py", "CommitFiles._git"): Varargs(0),
    ("action/trend/branch_store.py", "HistoryBranch._git"): Varargs(0),
    ("evaluation/history/git_log.py", "Repository._run"): Listed(0),
    ("evaluation/history/git_log.py", "Repository._text"): Listed(0),
}
# Processes that are not git, each with the reason its arguments are not data.
OTHER_PROGRAMS = {
    ("retrieval/search/external.py", "_Process.__init__"): "the retriever command the user configured",
}
_PROCESS_CALLS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "os": {
        "system",
        "popen",
        "posix_spawn",
        "posix_spawnp",
        *(f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
        *(f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    },
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
}


_Report = Callable[[ast.AST], None]


@dataclass
class _State:
    protected: bool = False  # an `--end-of-options` or `--` came before
    before_command: bool = True  # still in git's own options, before the command's name
    value_next: bool = False  # the last argument was one of VALUE_OPTIONS


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)  # every checked argument list, as file:line
    helper_calls: dict[tuple[str, str], int] = field(default_factory=dict)
    other_programs: set[tuple[str, str]] = field(default_factory=set)


class _Module:
    """One source file's argument lists, checked against the rules of the module docstring."""

    def __init__(self, name: str, source: str, findings: Findings) -> None:
        self.name, self.found = name, findings
        self.tree = ast.parse(source)
        self.constants = {
            target.id: node.value
            for node in self.tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(self.tree):  # a process function imported by name is found too
            if isinstance(node, ast.ImportFrom) and node.module in _PROCESS_CALLS:
                for alias in node.names:
                    if alias.name in _PROCESS_CALLS[node.module]:
                        findings.other_programs.add((name, f"from {node.module} import {alias.name}"))
        # The helpers a plain name calls here: the module's own functions, and `git` imported.
        self.helper_names = {key[1]: key for key in HELPERS if key[0] == name and "." not in key[1]}
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "cce_relevance.action.workspace.git":
                for alias in node.names:
                    if alias.name == "git":
                        self.helper_names[alias.asname or alias.name] = ("action/workspace/git.py", "git")

    def check(self) -> None:
        self._visit(self.tree, "", None)

    def _visit(
        self, node: ast.AST, owner: str, function: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                self._visit(child, child.name, None)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._visit(child, owner, child)
            else:
                self._inspect(child, owner, function)
                self._visit(child, owner, function)

    def _inspect(
        self, node: ast.AST, owner: str, function: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> None:
        where = f"{self.name}:{getattr(node, 'lineno', 0)}"
        scope = _Scope(self, owner, function)
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts and _text(node.elts[0]) == "git":
            self._arguments(node.elts[1:], scope, where)
        if not isinstance(node, ast.Call):
            return
        func = node.func
        key = None
        if isinstance(func, ast.Name):
            key = self.helper_names.get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            key = (self.name, f"{owner}.{func.attr}")
        spec = HELPERS.get(key) if key is not None else None
        if spec is not None and key is not None:
            self.found.helper_calls[key] = self.found.helper_calls.get(key, 0) + 1
            if isinstance(spec, Varargs):
                self._arguments(node.args[spec.start :], scope, where)
            else:
                self._arguments([ast.Starred(node.args[spec.index])], scope, where)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr in _PROCESS_CALLS.get(func.value.id, ())
        ):
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.List) and first.elts and _text(first.elts[0]) == "git"):
                self.found.other_programs.add((self.name, scope.qualname))

    def _arguments(self, items: Sequence[ast.expr], scope: _Scope, where: str) -> None:
        self.found.sites.append(where)
        scope.scan(items, _State(), lambda node: self.found.problems.append(_problem(where, node)))


@dataclass
class _Scope:
    """Where an argument list is written: what its names refer to."""

    module: _Module
    owner: str
    function: ast.FunctionDef | ast.AsyncFunctionDef | None

    @property
    def qualname(self) -> str:
        name = self.function.name if self.function is not None else ""
        return f"{self.owner}.{name}" if self.owner else name

    def scan(self, items: Sequence[ast.expr], state: _State, report: _Report) -> _State:
        for item in items:
            state = self._item(item, state, report)
        return state

    def _item(self, item: ast.expr, state: _State, report: _Report) -> _State:
        """One argument (or, starred, a sequence of them)."""
        if isinstance(item, ast.Starred):
            return self._sequence(item.value, state, report)
        text = _text(item)
        if text is not None:
            return _literal(text, state)
        if isinstance(item, ast.IfExp):
            return self._either([[item.body], [item.orelse]], state, report)
        if isinstance(item, ast.Name):
            bound, named = self._bound(item), _naming(item, report)
            if bound is _FORWARDED:
                return state
            if isinstance(bound, list):  # a loop variable: each of the loop's items in turn
                return self._either([[value] for value in bound], state, named)
            if isinstance(bound, tuple) and len(bound) == 1:
                return self._item(bound[0], state, named)
        if state.value_next or state.protected:
            return _State(state.protected, state.before_command, False)
        report(item)
        return state

    def _sequence(self, node: ast.expr, state: _State, report: _Report) -> _State:
        """The arguments a starred expression gives."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return self.scan(node.elts, state, report)
        if isinstance(node, ast.IfExp):
            return self._either([[ast.Starred(node.body)], [ast.Starred(node.orelse)]], state, report)
        if isinstance(node, ast.Name):
            bound = self._bound(node)
            if bound is _FORWARDED:
                return state
            if isinstance(bound, tuple):  # an assignment and its `+=`s, one after the other
                return self.scan([ast.Starred(part) for part in bound], state, _naming(node, report))
        if not state.protected:
            report(node)
        return state

    def _either(self, branches: list[list[ast.expr]], state: _State, report: _Report) -> _State:
        after = [self.scan(branch, _State(**vars(state)), report) for branch in branches]
        return _State(
            all(s.protected for s in after),
            all(s.before_command for s in after),
            any(s.value_next for s in after),
        )

    def _bound(self, name: ast.Name) -> object:
        """What `name` holds: `_FORWARDED` (a parameter of a helper, checked where it is called),
        a tuple of the parts an assignment and its `+=` joined, a list of the alternatives a `for`
        loop gives it, or None (unknown: a value)."""
        function = self.function
        if function is not None:
            parameters = {
                a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)
            }
            parameters |= {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
            if name.id in parameters:
                if (self.module.name, self.qualname) in HELPERS:
                    return _FORWARDED
                return None  # a parameter of a function that is no helper: its callers are unchecked
            assigned: list[ast.expr] = []
            loops: list[ast.expr] = []
            for node in ast.walk(function):
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name.id for t in node.targets
                ):
                    assigned.append(node.value)
                elif (
                    isinstance(node, ast.AugAssign)
                    and isinstance(node.target, ast.Name)
                    and node.target.id == name.id
                ):
                    assigned.append(node.value)
                elif (
                    isinstance(node, ast.For)
                    and isinstance(node.target, ast.Name)
                    and node.target.id == name.id
                ):
                    loops.append(node.iter)
            if loops and not assigned:
                return self._values_of(loops[0])
            if assigned:
                return tuple(assigned)
        constant = self.module.constants.get(name.id)
        return None if constant is None else (constant,)

    def _values_of(self, node: ast.expr) -> list[ast.expr] | None:
        if isinstance(node, ast.Name) and node.id in self.module.constants:
            node = self.module.constants[node.id]
        return list(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else None


_FORWARDED = object()  # a helper's parameter: checked where the helper is called


def _text(node: ast.expr) -> str | None:
    """The text of an argument written in the source: a string, or an f-string that begins with
    text that cannot start another option (`_GLUED`); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        prefix = str(node.values[0].value)
        return prefix if _GLUED.match(prefix) else None
    return None


def _literal(text: str, state: _State) -> _State:
    protected = state.protected or text in END_OF_OPTIONS
    if state.before_command and not text.startswith("-") and not state.value_next:
        return _State(protected, False, False)  # the command's name
    return _State(protected, state.before_command, state.before_command and text in VALUE_OPTIONS)


def _naming(name: ast.Name, report: _Report) -> _Report:
    """A report that names the variable, whatever part of its value is at fault."""
    return lambda _node: report(name)


def _problem(where: str, node: ast.AST) -> str:
    return f"{where}: {ast.unparse(node)} reaches git before any `--end-of-options` or `--`"


def check_sources(sources: dict[str, str]) -> Findings:
    """Check modules given as {path under cce_relevance/: source}."""
    findings = Findings()
    for name, source in sorted(sources.items()):
        _Module(name, source, findings).check()
    return findings


def package_sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}


def test_every_value_given_to_git_comes_after_the_end_of_its_options() -> None:
    found = check_sources(package_sources())

    assert found.problems == []
    assert len(found.sites) >= 50  # the check saw the package's calls (53 when it was written)
    unused = [key for key in HELPERS if not found.helper_calls.get(key)]
    assert unused == [], "a helper no longer called (renamed?): update HELPERS"
    assert found.other_programs == set(OTHER_PROGRAMS), (
        "a process that is not git: say why its arguments are safe"
    )


def test_the_check_finds_a_value_where_an_option_can_go() -> None:
    """The check itself, on modules written for it: each unprotected value is found, the same
    calls with `--end-of-options` or `--` in place (or the value glued to its option) are not."""
    source = """
from cce_relevance.action.workspace.git import git as run_git

STEPS = ("--deepen=1", "--unshallow")

def record(repo, head, path, tip):
    run_git(repo, "show", "-s", head)
    run_git(repo, "show", "-s", "--end-of-options", head)
    run_git(repo, "ls-files", str(path))
    run_git(repo, "ls-files", "--", str(path))
    run_git(repo, f"--work-tree={path}", "checkout-index", "--", "x")
    run_git(repo, f"{tip}:refs/heads/x")
    run_git(repo, f"-{tip}")
    run_git(repo, "commit-tree", f"-p{tip}", "--end-of-options", tip)
    parents = ("-p", tip) if tip else ()
    run_git(repo, "commit-tree", *parents)
    for step in STEPS:
        run_git(repo, "fetch", step, "origin")
    args = ["log"]
    args += [head]
    run_git(repo, *args)
    subprocess.run(["git", "-C", path, "log", head])
    subprocess.run(["ls", path])

def wrapper(repo, *args):
    run_git(repo, "log", *args)
"""
    found = check_sources({"m.py": source})

    assert [p.split(": ", 1)[1].split(" reaches")[0] for p in found.problems] == [
        "head",
        "str(path)",
        "f'{tip}:refs/heads/x'",
        "f'-{tip}'",
        "parents",  # ("-p", tip): only a glued value is one argument
        "args",  # args += [head]
        "head",  # after -C's value, still before any end of options
        "args",  # a function passing its parameters to git is no registered helper
    ]
    assert found.other_programs == {("m.py", "record")}


def test_removing_an_end_of_options_from_the_package_is_found() -> None:
    sources = package_sources()
    module = "action/trend/record.py"
    before = sources[module].count('"--end-of-options", head')
    sources[module] = sources[module].replace('"--end-of-options", head', "head")

    assert before == 1
    assert [p.split(": ")[1] for p in check_sources(sources).problems] == [
        "head reaches git before any `--end-of-options` or `--`"
    ]


# The behaviour: a commit that is an option, given to each function that takes one.


EVIL_OPTION = "--output={}"


@pytest.fixture
def evil(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A commit value that git would read as `--output=FILE`, FILE outside the repository."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "evil"
    yield EVIL_OPTION.format(target), target


def push_inputs(tmp_path: Path, up: Upstream, **inputs: str) -> ActionInputs:
    payload = {
        "ref": "refs/heads/main",
        "before": up.c3,
        "after": up.c4,
        "repository": {"full_name": "o/r", "default_branch": "main"},
    }
    return event_inputs(tmp_path, up.path, "push", payload, **inputs)


@pytest.mark.parametrize(
    "store", [{"history": ".cce-relevance-history/history.json"}, {"history": "", "history-branch": "data"}]
)
def test_a_shard_head_that_is_an_option_is_refused_before_git_sees_it(
    tmp_path: Path, upstream: Upstream, evil: tuple[str, Path], store: dict[str, str]
) -> None:
    value, target = evil
    inputs = push_inputs(tmp_path, upstream, **store)

    with pytest.raises(CceError) as raised:
        record_push(inputs, upstream.path, CommitPair(upstream.c3, value), outcome())

    assert raised.value.exit_code == 2
    assert raised.value.message.startswith('the head commit "--output=/')
    assert raised.value.message.endswith(
        "is not a commit: expected a full SHA (40 or 64 lowercase hex digits)"
    )
    assert not target.exists()
    # The check matters: what the call was before, given the same value, writes the file.
    sh(upstream.path, "show", "-s", "--format=%ct", value)
    assert target.exists()


def test_every_function_that_takes_a_commit_refuses_an_option(
    tmp_path: Path, upstream: Upstream, evil: tuple[str, Path]
) -> None:
    value, target = evil
    origin = tmp_path / "origin.git"
    sh(tmp_path, "init", "-q", "--bare", str(origin))
    sh(upstream.path, "remote", "add", "origin", str(origin))
    branch = HistoryBranch(upstream.path, upstream.path, "data", "history.json")
    calls = {
        "changed_files": lambda: changed_files(upstream.path, upstream.c1, value),
        "tree_bytes": lambda: tree_bytes(upstream.path, value),
        "commit_sha": lambda: commit_sha(value, "the commit"),
        "history read": lambda: branch.read(value),
        "history write": lambda: branch.write(History("main"), value, "m", 0),
        "head-ref": lambda: resolve_commits(
            "workflow_dispatch", {}, upstream.path, base_ref=None, head_ref=value
        ),
    }
    for name, call in calls.items():
        with pytest.raises(CceError) as raised:
            call()
        assert "--output=/" in raised.value.message, name
        assert raised.value.exit_code == 2, name
        assert not target.exists(), name
    with commit_files(upstream.path) as files, pytest.raises(CceError, match="--output=/"):
        files.check_out(value)
    assert not target.exists()


def test_a_commit_sha_is_forty_or_sixty_four_lowercase_hex_digits() -> None:
    for good in ("a" * 40, "0123456789abcdef" * 4):
        assert commit_sha(good, "x") == good
    for bad in ("A" * 40, "a" * 39, "a" * 41, "a" * 40 + "\n", "a" * 63, "HEAD", "-" + "a" * 39, None, 7):
        with pytest.raises(CceError, match="^the head commit .* is not a commit"):
            commit_sha(bad, "the head commit")
