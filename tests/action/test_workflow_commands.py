"""Output files, step summary and workflow commands, checked by parsing them back as the runner does.

The two small parsers below are ports of actions/runner: ``FileCommandManager.cs`` (the
``GITHUB_OUTPUT`` / ``GITHUB_ENV`` reader, Linux line endings) and ``ActionCommand.cs`` with
``ActionCommandManager.TryProcessCommand`` (v2 ``::cmd::`` after leading whitespace, legacy
``##[cmd]`` anywhere in a line, ``stop-commands`` and its resume token).
"""

from __future__ import annotations

import ast
import re
import secrets
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.action.runner import workflow_commands
from cce_relevance.action.runner.workflow_commands import (
    STEP_SUMMARY_LIMIT,
    annotation,
    append_step_summary,
    error_annotation,
    log,
    neutralize_untrusted,
    plain,
    set_outputs,
)

# -- a port of the runner's file-command reader ------------------------------------------------


def runner_file_values(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    index = 0

    def read_line() -> tuple[str | None, str | None]:
        nonlocal index
        if index >= len(text):
            return None, None
        start, lf = index, text.find("\n", index)
        if lf < 0:
            index = len(text)
            return text[start:], None
        index = lf + 1
        return text[start:lf], "\n"

    line, _ = read_line()
    while line is not None:
        if line:
            equals, heredoc = line.find("="), line.find("<<")
            if equals >= 0 and (heredoc < 0 or equals < heredoc):
                name, value = line.split("=", 1)
            elif heredoc >= 0 and (equals < 0 or heredoc < equals):
                name, delimiter = line.split("<<", 1)
                assert name and delimiter, f"invalid format {line!r}"
                start = end = index
                temp, newline = read_line()
                while temp != delimiter:
                    assert temp is not None, f"matching delimiter not found {delimiter!r}"
                    assert newline is not None, "EOF marker missing new line"
                    end = index - len(newline)
                    temp, newline = read_line()
                value = text[start:end] if end > start else ""
            else:
                raise AssertionError(f"invalid format {line!r}")
            values[name] = value
        line, _ = read_line()
    return values


def read_outputs(path: Path) -> dict[str, str]:
    with open(path, encoding="utf-8", newline="") as handle:  # no newline translation, like .NET
        return runner_file_values(handle.read())


# -- a port of the runner's workflow-command processing ----------------------------------------

REGISTERED = {
    "error",
    "warning",
    "notice",
    "debug",
    "add-mask",
    "group",
    "endgroup",
    "echo",
    "set-output",
    "save-state",
    "add-matcher",
    "remove-matcher",
    "set-env",
    "add-path",
    "stop-commands",
}


def _unescape(text: str, mappings: list[tuple[str, str]]) -> str:
    for token, replacement in mappings:
        text = text.replace(replacement, token)
    return text


DATA = [("\r", "%0D"), ("\n", "%0A"), ("%", "%25")]
PROPERTY = [("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25")]
Command = tuple[str, dict[str, str], str]


def _parse_v2(line: str, registered: set[str]) -> Command | None:
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if name.lower() not in registered:
        return None
    properties = {}
    if space > 0:
        for item in info[space + 1 :].strip().split(","):
            pair = [part for part in item.split("=", 1) if part]
            if len(pair) == 2:
                properties[pair[0]] = _unescape(pair[1], PROPERTY)
    return name, properties, _unescape(message[end + 2 :], DATA)


def _parse_v1(line: str, registered: set[str]) -> Command | None:
    start = line.find("##[")
    end = line.find("]", start) if start >= 0 else -1
    if end < 0:
        return None
    name = line[start + 3 : end].split(" ", 1)[0]
    return (name, {}, line[end + 1 :]) if name.lower() in registered else None


def runner_commands(log: str) -> list[Command]:
    """The commands the runner would act on, in order, for this stdout."""
    registered, stop_token, acted = set(REGISTERED), None, []
    for line in re.split(r"\r\n|\r|\n", log):  # .NET ReadLine: CR, LF and CRLF all end a line
        command = _parse_v2(line, registered) or _parse_v1(line, registered)
        if command is None:
            continue
        name = command[0].lower()
        if stop_token is not None:
            if name == stop_token:
                acted.append(command)
                registered.discard(stop_token)
                stop_token = None
        elif name == "stop-commands":
            acted.append(command)
            stop_token = command[2].lower()
            registered.add(stop_token)
        else:
            acted.append(command)
    return acted


# -- GITHUB_OUTPUT -----------------------------------------------------------------------------

OUTPUT_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,15}", fullmatch=True)


def test_outputs_round_trip_multiline_and_awkward_values(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier=from another step\n")
    values = {
        "verdict": "regression",
        "report": "line 1\nline 2\r\nline 3\n",
        "empty": "",
        "looks-like-syntax": "x=1\nother<<EOF\nEOF\n=",
    }
    set_outputs(path, values)
    assert read_outputs(path) == {"earlier": "from another step", **values}


@given(st.dictionaries(OUTPUT_NAMES, st.text(), max_size=5))
def test_outputs_round_trip_any_text(
    tmp_path_factory: pytest.TempPathFactory, values: dict[str, str]
) -> None:
    path = tmp_path_factory.mktemp("out") / "output"
    set_outputs(path, values)
    assert read_outputs(path) == values


def test_delimiter_found_in_the_value_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = iter(["0" * 32, "1" * 32])
    monkeypatch.setattr(secrets, "token_hex", lambda nbytes: next(tokens))
    hostile = f"ok\nghadelimiter_{'0' * 32}\ninjected=1"
    path = tmp_path / "output"

    set_outputs(path, {"report": hostile})

    text = path.read_text()
    assert text.startswith(f"report<<ghadelimiter_{'1' * 32}\n")
    assert read_outputs(path) == {"report": hostile}


@pytest.mark.parametrize("name", ["", "a=b", "a<<b", "1st", "has space", "new\nline"])
def test_output_names_are_validated(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="invalid output name"):
        set_outputs(tmp_path / "output", {name: "v"})


# -- GITHUB_STEP_SUMMARY -----------------------------------------------------------------------


def test_step_summary_appends_with_a_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_step_summary(path, "# One")
    append_step_summary(path, "two\n")
    assert path.read_text() == "# One\ntwo\n"


def test_step_summary_refuses_to_cross_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_step_summary(path, "é" * ((STEP_SUMMARY_LIMIT - 2) // 2))  # bytes, not characters
    assert path.stat().st_size == STEP_SUMMARY_LIMIT - 1
    with pytest.raises(ValueError, match="whole summary"):
        append_step_summary(path, "x")
    assert path.stat().st_size == STEP_SUMMARY_LIMIT - 1


# -- annotations -------------------------------------------------------------------------------


def test_annotation_escapes_properties_and_data() -> None:
    line = error_annotation(
        "50% of queries\nregressed", file="eval/a,b:c.ndjson", line=3, title="Drift: set A"
    )
    expected = "::error file=eval/a%2Cb%3Ac.ndjson,line=3,title=Drift%3A set A::50%25 of queries%0Aregressed"
    assert line == expected
    properties = {"file": "eval/a,b:c.ndjson", "line": "3", "title": "Drift: set A"}
    assert runner_commands(line) == [("error", properties, "50% of queries\nregressed")]


def test_annotation_without_properties() -> None:
    assert annotation("notice", "3 more in the summary") == "::notice::3 more in the summary"
    assert annotation("warning", "x", title="") == "::warning::x"


def test_annotation_line_must_be_positive() -> None:
    with pytest.raises(ValueError):
        error_annotation("m", file="f", line=0)


# The runner trims the property list and drops a value that starts with "=", so those two
# shapes cannot be carried by any encoder; everything else must survive exactly.
PROPERTY_TEXT = st.text(min_size=1).filter(lambda s: s == s.strip() and not s.startswith("="))


@given(message=st.text(), file=PROPERTY_TEXT, title=PROPERTY_TEXT, line=st.integers(1, 10**6))
def test_annotation_round_trips_through_the_runner(message: str, file: str, title: str, line: int) -> None:
    command = error_annotation(message, file=file, line=line, title=title)
    assert "\n" not in command and "\r" not in command
    assert runner_commands(command) == [("error", {"file": file, "line": str(line), "title": title}, message)]


# -- untrusted text in the log -----------------------------------------------------------------

HOSTILE_LINES = st.sampled_from(
    [
        "::error::injected",
        "   ::warning file=x::indented",
        "::add-mask::hide-the-logs",
        "prefix ##[error]legacy anywhere in the line",
        "::stop-commands::attacker",
        "::attacker::",
        "::set-output name=verdict::pass",
        "##[endgroup]",
        "\r::error::after a bare CR",
    ]
)
UNTRUSTED = st.one_of(st.text(), st.lists(st.one_of(HOSTILE_LINES, st.text()), max_size=6).map("\n".join))


@given(UNTRUSTED)
def test_neutralized_text_runs_no_command_and_commands_resume_after(text: str) -> None:
    wrapped = neutralize_untrusted(text)
    acted = runner_commands(wrapped + "\n::error::ours, after the untrusted text")

    stop, resume, after = acted  # exactly three: nothing from the text itself
    assert stop[0] == "stop-commands" and resume[0].lower() == stop[2].lower()
    assert after == ("error", {}, "ours, after the untrusted text")
    assert text in wrapped  # printed verbatim


def test_hostile_text_would_run_commands_without_neutralizing() -> None:
    # Guards the emulator: the same text, printed raw, does trigger commands.
    raw = "benign\n  ::error::injected\nx ##[warning]legacy"
    assert [name for name, _, _ in runner_commands(raw)] == ["error", "warning"]


@given(UNTRUSTED)
def test_a_plain_log_line_runs_no_command_whatever_it_holds(text: str) -> None:
    printed = plain(text)

    assert runner_commands(printed + "\n::error::ours") == [("error", {}, "ours")]
    assert "\r" not in printed and "\n" not in printed  # one line: nothing after it can start one
    assert _unescape(printed.replace("%3A", ":", 1).replace("##%5B", "##["), DATA) == text


def test_log_prints_our_commands_as_built_and_data_as_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    log(annotation("warning", "a finding", file="eval/code.jsonl"))
    log(neutralize_untrusted("diff\n::error::quoted"))
    log("head %0A::warning::X\n::error::Y ##[group]Z")

    printed = capsys.readouterr().out
    assert [name for name, _, _ in runner_commands(printed)][0] == "warning"
    assert [name for name, _, _ in runner_commands(printed)][-1] != "error"
    assert printed.splitlines()[-1] == "head %250A::warning::X%0A::error::Y ##%5Bgroup]Z"
    assert len(runner_commands(printed)) == 3  # the warning, the fence's stop and resume


def test_nothing_in_the_action_prints_but_the_one_printer() -> None:
    """`log` is the only way to the job's log: a `print` or a write to stdout anywhere else
    could put a pull request's text at the start of a line."""
    package = Path(workflow_commands.__file__).parents[1]
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "workflow_commands.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if name in {"print", "sys.stdout.write", "sys.__stdout__.write", "os.write"}:
                    found.append(f"{path.relative_to(package)}:{node.lineno}: {name}")
    assert found == []
