"""The Action's packaging agrees with its code: action.yml, Dockerfile, locks and workflows.

Each contract here is stated in two places (a YAML or Dockerfile line and the Python that relies on
it); these tests are what keeps the two copies from drifting apart. Schema validity and Dockerfile
style are checked by scripts/lint.sh (check-jsonschema, hadolint).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from fnmatch import fnmatch
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from cce_relevance.action.inputs import read_inputs

ROOT = Path(__file__).resolve().parents[2]
KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
OUR_ACTION = re.compile(r"^(\./|[\w.-]+/cce-relevance@)")


def load_yaml(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return load_yaml(ROOT / "action.yml")


class RecordingEnv(dict[str, str]):
    """An environment that remembers which variables were asked for."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return super().__getitem__(key)


def minimal_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "f.jsonl").write_text("{}\n")
    return {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_FIXTURES": "f.jsonl"}


def test_action_is_a_docker_action_fed_through_the_environment(action: dict[str, Any]) -> None:
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}  # no `args`: inputs arrive as INPUT_*
    assert action["name"] and action["description"]
    assert set(action["branding"]) == {"icon", "color"}


def test_inputs_are_kebab_case_and_described(action: dict[str, Any]) -> None:
    for name, spec in action["inputs"].items():
        assert KEBAB.match(name), name
        assert isinstance(spec.get("description"), str) and spec["description"].strip(), name
    assert action["inputs"]["fixtures"]["required"] is True
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_outputs_are_the_documented_ones_and_described(action: dict[str, Any]) -> None:
    assert set(action["outputs"]) == {"report", "compare", "drift", "verdict", "comment-url"}
    for name, spec in action["outputs"].items():
        assert spec["description"].strip(), name


def test_every_input_read_is_declared_and_every_declared_input_is_read(
    action: dict[str, Any], tmp_path: Path
) -> None:
    env = RecordingEnv(minimal_env(tmp_path))
    read_inputs(env)
    read = {
        key.removeprefix("INPUT_").lower().replace("_", "-") for key in env.asked if key.startswith("INPUT_")
    }
    assert read == set(action["inputs"])


def test_action_yml_defaults_are_the_code_defaults(action: dict[str, Any], tmp_path: Path) -> None:
    """Passing every default explicitly (as the runner does) changes nothing."""
    env = minimal_env(tmp_path)
    explicit = dict(env)
    for name, spec in action["inputs"].items():
        if "default" in spec and name != "github-token":  # an expression the runner evaluates
            explicit[f"INPUT_{name.upper()}"] = str(spec["default"])
    assert read_inputs(explicit) == read_inputs(env)


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    logical: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        logical.append(pending.strip())
        pending = ""
    return [(head.upper(), rest.strip()) for head, _, rest in (line.partition(" ") for line in logical)]


def test_dockerfile_base_image_is_an_argument() -> None:
    instructions = dockerfile_instructions()
    first_from = next(i for i, (op, _) in enumerate(instructions) if op == "FROM")
    assert ("ARG", "BASE_IMAGE=python:3.12-slim") in instructions[:first_from]
    for op, args in instructions:
        if op == "FROM":
            assert args.split()[0] == "${BASE_IMAGE}", args


def test_dockerfile_entrypoint_is_exec_form_and_runs_entrypoint_py() -> None:
    instructions = dockerfile_instructions()
    entrypoints = [args for op, args in instructions if op == "ENTRYPOINT"]
    assert len(entrypoints) == 1
    assert json.loads(entrypoints[0]) == ["/opt/venv/bin/python", "/app/entrypoint.py"]
    assert "USER" not in {op for op, _ in instructions}  # GitHub runs container actions as root


def test_dockerfile_installs_the_lock_then_the_package_without_deps() -> None:
    runs = [args for op, args in dockerfile_instructions() if op == "RUN"]
    lock = next(i for i, r in enumerate(runs) if "-r /src/requirements/runtime.txt" in r)
    package = next(i for i, r in enumerate(runs) if "--no-deps /src" in r)
    assert lock < package
    env = " ".join(args for op, args in dockerfile_instructions() if op == "ENV")
    for setting in ("PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "PATH=/opt/venv/bin:$PATH"):
        assert setting in env


def test_dockerignore_admits_everything_the_dockerfile_copies() -> None:
    allowed = [line[1:] for line in (ROOT / ".dockerignore").read_text().splitlines() if line.startswith("!")]
    for op, args in dockerfile_instructions():
        if op != "COPY" or args.startswith("--from"):
            continue
        for source in args.split()[:-1]:
            assert any(fnmatch(entry, source) for entry in allowed), (
                f"COPY {source} is excluded by .dockerignore"
            )


def test_entrypoint_exits_with_main_s_return_code() -> None:
    code = [
        line
        for line in (ROOT / "entrypoint.py").read_text().splitlines()
        if line and not line.startswith('"""')
    ]
    assert code == ["from cce_relevance.action.main import main", "raise SystemExit(main())"]


def requirement_lines(path: Path) -> Iterator[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            yield line


def pins(path: Path) -> dict[str, str]:
    result: dict[str, str] = {}
    for line in requirement_lines(path):
        name, sep, version = line.partition("==")
        assert sep and version and not set(version) & set("<>=!~*; "), (
            f"{path.name}: {line!r} is not pinned with =="
        )
        key = canonicalize_name(name)
        assert key not in result, f"{path.name}: {name} pinned twice"
        result[key] = version
    return result


def test_runtime_lock_pins_everything_and_covers_runtime_in() -> None:
    locked = pins(ROOT / "requirements" / "runtime.txt")
    for line in requirement_lines(ROOT / "requirements" / "runtime.in"):
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"runtime.in names {requirement.name}, missing from runtime.txt"
        assert requirement.specifier.contains(locked[name], prereleases=True), line


def test_runtime_lock_satisfies_pyproject_dependencies() -> None:
    locked = pins(ROOT / "requirements" / "runtime.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for line in project["dependencies"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"pyproject depends on {requirement.name}, missing from runtime.txt"
        assert requirement.specifier.contains(locked[name], prereleases=True), f"{line} vs =={locked[name]}"


def test_runtime_lock_is_closed_under_dependencies() -> None:
    """Every dependency of a locked package is locked too (read from the installed metadata)."""
    locked = pins(ROOT / "requirements" / "runtime.txt")
    for name in locked:
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is not installed: pip install -r requirements/runtime.txt")
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                assert canonicalize_name(requirement.name) in locked, f"{name} needs {requirement.name}"


def workflow_files() -> list[Path]:
    return sorted(
        [*(ROOT / ".github" / "workflows").glob("*.yml"), *(ROOT / "docs" / "examples").rglob("*.yml")]
    )


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as a boolean
    return on if isinstance(on, dict) else {name: None for name in ([on] if isinstance(on, str) else on)}


def steps(workflow: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for job in workflow["jobs"].values():
        yield from job.get("steps", [])


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_workflow_runs_on_pull_request_target(path: Path) -> None:
    """pull_request_target with a write token must never run pull request code (a "pwn request")."""
    assert "pull_request_target" not in triggers(load_yaml(path))


def test_relevance_workflow_runs_this_action_on_the_starter_sets() -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "relevance.yml")
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    checkout = next(s for s in steps(workflow) if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    ours = next(s for s in steps(workflow) if s.get("uses") == "./")
    assert ours["with"]["fixtures"].split() == ["eval/relevance/code.jsonl", "eval/relevance/docs.jsonl"]
    assert (
        ours["with"]["golden"].strip() == "eval/relevance/code.jsonl=test/fixture/relevance/code.golden.json"
    )


def test_fork_safe_evaluate_stage_is_unprivileged_and_does_not_comment() -> None:
    workflow = load_yaml(ROOT / "docs" / "examples" / "fork-safe" / "relevance-evaluate.yml")
    assert set(triggers(workflow)) == {"pull_request"}
    assert workflow["permissions"] == {"contents": "read"}
    ours = next(s for s in steps(workflow) if OUR_ACTION.match(s.get("uses", "")))
    assert str(ours["with"]["comment"]).lower() == "false"
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in steps(workflow))


def test_fork_safe_publish_stage_never_touches_pull_request_code() -> None:
    workflow = load_yaml(ROOT / "docs" / "examples" / "fork-safe" / "relevance-publish.yml")
    assert set(triggers(workflow)) == {"workflow_run"}
    assert workflow["permissions"]["pull-requests"] == "write"
    assert workflow["permissions"]["actions"] == "read"  # to list and download the artifact
    [step] = steps(workflow)  # no checkout, no shell, no script: the Action publishes
    assert OUR_ACTION.match(step["uses"]) and step["with"]["mode"] == "publish"
    assert step["with"]["run-id"] == "${{ github.event.workflow_run.id }}"


def test_fork_safe_stages_agree_on_the_artifact() -> None:
    evaluate = load_yaml(ROOT / "docs" / "examples" / "fork-safe" / "relevance-evaluate.yml")
    publish = load_yaml(ROOT / "docs" / "examples" / "fork-safe" / "relevance-publish.yml")
    upload = next(s for s in steps(evaluate) if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == ".cce-relevance/" and upload["with"]["include-hidden-files"] is True
    [step] = steps(publish)
    assert upload["with"]["name"] == step["with"]["artifact"]
    assert triggers(publish)["workflow_run"]["workflows"] == [evaluate["name"]]
