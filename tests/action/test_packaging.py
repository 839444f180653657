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

from cce_relevance.action.config.inputs import read_inputs

ROOT = Path(__file__).resolve().parents[2]
KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
OUR_ACTION = re.compile(r"^(\./|[\w.-]+/cce-relevance(/runner)?@)")  # the Docker or the runner-native action


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
    # Not `required`: publish and merge read none (GitHub may come to enforce `required`); the
    # scoring mode refuses an empty one itself (test_inputs.py).
    assert action["inputs"]["fixtures"]["required"] is False
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_outputs_are_the_documented_ones_and_described(action: dict[str, Any]) -> None:
    assert set(action["outputs"]) == {"report", "compare", "drift", "verdict", "comment-url", "shard-state"}
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


def test_dockerfile_base_image_is_a_digest_pinned_argument() -> None:
    """A multi-arch index pinned by digest, with the tag it resolved to written beside it."""
    instructions = dockerfile_instructions()
    first_from = next(i for i, (op, _) in enumerate(instructions) if op == "FROM")
    args = [a for op, a in instructions[:first_from] if op == "ARG" and a.startswith("BASE_IMAGE=")]
    assert len(args) == 1
    match = re.fullmatch(r"BASE_IMAGE=(python:3\.12-slim)@sha256:[0-9a-f]{64}", args[0])
    assert match, args[0]
    assert f"# Pinned: {match.group(1)} = 3.12." in (ROOT / "Dockerfile").read_text(encoding="utf-8")
    for op, args_ in instructions:
        if op == "FROM":
            assert args_.split()[0] == "${BASE_IMAGE}", args_


def test_dockerfile_prunes_the_grammars_and_checks_every_language_in_the_final_image() -> None:
    instructions = dockerfile_instructions()
    stages = [i for i, (op, _) in enumerate(instructions) if op == "FROM"]
    assert len(stages) == 2
    build, final = instructions[stages[0] : stages[1]], instructions[stages[1] :]
    assert any(op == "RUN" and a.startswith("/opt/venv/bin/python /app/grammars.py prune") for op, a in build)
    runs = [json.loads(a) for op, a in final if op == "RUN" and a.startswith("[")]
    assert ["/opt/venv/bin/python", "/app/grammars.py", "check"] in runs
    copied_venv = next(
        i for i, (op, a) in enumerate(final) if op == "COPY" and a.endswith("/opt/venv /opt/venv")
    )
    check = next(i for i, (op, a) in enumerate(final) if op == "RUN" and "grammars.py" in a)
    assert copied_venv < check


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


def test_semantic_lock_pins_the_extra_and_everything_it_needs_beyond_the_runtime_lock() -> None:
    runtime = pins(ROOT / "requirements" / "runtime.txt")
    semantic = pins(ROOT / "requirements" / "semantic.txt")
    assert not set(runtime) & set(semantic), "semantic.txt repeats a runtime.txt pin"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extra = [Requirement(line) for line in project["optional-dependencies"]["semantic"]]
    assert [str(r) for r in extra] == list(requirement_lines(ROOT / "requirements" / "semantic.in"))
    locked = {**runtime, **semantic}
    for requirement in extra:
        assert requirement.specifier.contains(semantic[canonicalize_name(requirement.name)])
    for name in semantic:
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                assert canonicalize_name(requirement.name) in locked, f"{name} needs {requirement.name}"


def test_dockerfile_installs_the_semantic_lock_only_when_asked() -> None:
    instructions = dockerfile_instructions()
    assert ("ARG", 'CCE_EXTRAS=""') in instructions
    [run] = [args for op, args in instructions if op == "RUN" and "semantic.txt" in args]
    assert '*" semantic "*) /opt/venv/bin/pip install --no-cache-dir -r /src/requirements/semantic.txt' in run


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
    # the reports, not the index cache (the publishing stage caps the artifact's size)
    assert upload["with"]["path"].split() == [".cce-relevance/", "!.cce-relevance/cache/"]
    assert upload["with"]["include-hidden-files"] is True
    [step] = steps(publish)
    assert upload["with"]["name"] == step["with"]["artifact"]
    assert triggers(publish)["workflow_run"]["workflows"] == [evaluate["name"]]


PINNED = re.compile(r"^\s*-?\s*uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+\.\d+\.\d+$")


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_job_has_a_timeout(path: Path) -> None:
    """A hung step must not hold a runner for GitHub's default six hours."""
    for name, job in load_yaml(path)["jobs"].items():
        if "uses" not in job:  # a reusable-workflow call: its own jobs carry the timeouts
            assert isinstance(job.get("timeout-minutes"), int), f"{path.name}: job {name}"


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_third_party_actions_are_pinned_by_full_commit_sha(path: Path) -> None:
    """A tag can be moved to other code; a commit SHA cannot. The version sits in a comment."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if "uses:" not in line or line.lstrip().startswith("#"):
            continue
        target = line.split("uses:", 1)[1].strip()
        if target.startswith("./") or OUR_ACTION.match(target):
            continue
        assert PINNED.match(line), (
            f"{path.name}: {line.strip()!r} is not pinned as `uses: OWNER/REPO@<sha> # vX.Y.Z`"
        )


def test_ci_tests_every_supported_python_with_the_reference_data() -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "ci.yml")
    assert set(triggers(workflow)) == {"push", "pull_request", "workflow_call"}
    test = workflow["jobs"]["test"]
    assert test["strategy"]["matrix"]["python-version"] == ["3.11", "3.12", "3.13"]
    runs = [s.get("run", "") for s in test["steps"]]
    fetch = next(i for i, r in enumerate(runs) if r.startswith("python scripts/fetch_upstream.py fetch "))
    pytest_step = next(i for i, r in enumerate(runs) if r.startswith("python -m pytest"))
    assert fetch < pytest_step
    destination = runs[fetch].split()[-1].strip('"').replace("$RUNNER_TEMP", "${{ runner.temp }}")
    assert test["steps"][pytest_step]["env"]["CCE_UPSTREAM_DIR"] == destination


def test_release_workflow_builds_attests_pins_and_verifies() -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "release.yml")
    on = triggers(workflow)
    assert on["push"] == {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}
    assert set(on["workflow_dispatch"]["inputs"]) == {"version", "dry-run"}
    assert workflow["permissions"] == {"contents": "read"}  # each job asks for what it needs
    jobs = workflow["jobs"]
    assert jobs["test"]["uses"] == "./.github/workflows/ci.yml"
    assert set(jobs["image"]["needs"]) == {"plan", "test"}
    assert jobs["image"]["permissions"] == {
        "contents": "read",
        "packages": "write",
        "id-token": "write",
        "attestations": "write",
    }
    build = next(s for s in jobs["image"]["steps"] if s.get("id") == "build")
    assert build["with"]["platforms"] == "linux/amd64,linux/arm64"
    assert build["with"]["tags"] == "${{ needs.plan.outputs.image-tags }}"
    attest = next(s for s in jobs["image"]["steps"] if "attest-build-provenance@" in s.get("uses", ""))
    assert attest["with"]["subject-digest"] == "${{ steps.build.outputs.digest }}"
    assert attest["with"]["push-to-registry"] is True
    assert jobs["release"]["permissions"] == {"contents": "write"}
    publish = next(s for s in jobs["release"]["steps"] if s.get("id") == "publish")
    assert "python scripts/release.py" in publish["run"] and "--digest" in publish["run"]
    assert publish["env"]["DIGEST"] == "${{ needs.image.outputs.digest }}"
    assert '--dist "$DIST"' in publish["run"]  # runner/action.yml pinned to the built package
    assert set(jobs["release"]["needs"]) == {"plan", "image", "dist", "pypi"}  # tags after PyPI


def test_release_workflow_publishes_the_reproducible_dists_with_trusted_publishing() -> None:
    jobs = load_yaml(ROOT / ".github" / "workflows" / "release.yml")["jobs"]
    dist = jobs["dist"]
    assert set(dist["needs"]) == {"plan", "test"} and "permissions" not in dist  # the workflow's read-only
    build = "\n".join(s.get("run", "") for s in dist["steps"])
    assert build.count("python scripts/release.py dist --outdir") == 2 and "diff <(" in build
    assert "twine check --strict dist/*" in build
    pypi = jobs["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}  # nothing else: no contents, no token secret
    assert pypi["environment"]["name"] == "pypi" and pypi["if"] == "${{ !inputs.dry-run }}"
    [upload] = [s for s in pypi["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert re.fullmatch(r"pypa/gh-action-pypi-publish@[0-9a-f]{40}", upload["uses"])
    assert "password" not in upload.get("with", {})  # trusted publishing, no API token
    minting = {name for name, job in jobs.items() if job.get("permissions", {}).get("id-token") == "write"}
    assert minting == {"pypi", "image"}  # the image job signs its provenance attestation
    verify = jobs["verify"]
    assert any(s.get("uses") == "./runner" for s in verify["steps"])  # the released package, by hash
    verify = jobs["verify"]
    assert set(verify["needs"]) == {"plan", "release"}
    checkout = verify["steps"][0]
    assert checkout["with"]["ref"] == "${{ needs.release.outputs.commit }}"
    ours = next(s for s in verify["steps"] if s.get("uses") == "./")
    assert ours["with"]["fixtures"].split() == ["eval/relevance/code.jsonl", "eval/relevance/docs.jsonl"]


def guide_yaml_blocks() -> list[str]:
    text = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    return re.findall(r"```yaml\n(.*?)```", text, flags=re.S)


def test_the_guides_cache_snippet_restores_on_pull_requests_and_saves_on_the_default_branch(
    action: dict[str, Any],
) -> None:
    [snippet] = [b for b in guide_yaml_blocks() if "actions/cache/" in b]
    steps_ = yaml.safe_load(snippet)
    restore, ours, save = steps_
    default = action["inputs"]["cache-dir"]["default"]
    assert default == ".cce-relevance/cache" and ours["with"]["cache-dir"] == default
    for step in (restore, save):
        line = next(line for line in snippet.splitlines() if step["uses"] in line)
        assert PINNED.match(line), line
        assert step["with"]["path"] == default
        assert step["with"]["key"] == "cce-relevance-${{ runner.os }}-${{ runner.arch }}-${{ github.sha }}"
    assert restore["uses"].startswith("actions/cache/restore@") and "pull_request" in restore["if"]
    assert restore["with"]["restore-keys"] == "cce-relevance-${{ runner.os }}-${{ runner.arch }}-"
    assert save["uses"].startswith("actions/cache/save@") and "default_branch" in save["if"]
    assert "github.event_name == 'push'" in save["if"]
    # Saved after a failed gate too (the records do not depend on it), never after a run that
    # scored nothing (the key is the commit's and cannot be written twice).
    assert "!cancelled()" in save["if"] and f"steps.{ours['id']}.outputs.report != ''" in save["if"]


def test_readme_shows_the_released_action_and_pinned_actions() -> None:
    [workflow] = [b for b in guide_yaml_blocks() if b.startswith("name: Relevance")]
    assert "uses: your-org/cce-relevance@v1" in workflow
    for line in workflow.splitlines():
        if "uses:" in line and "cce-relevance@" not in line:
            assert PINNED.match(line), line


def test_ci_runs_the_image_without_a_home_and_ci_run_verifies_the_local_data() -> None:
    image = load_yaml(ROOT / ".github" / "workflows" / "ci.yml")["jobs"]["image"]
    no_home = next(s["run"] for s in image["steps"] if "HOME=/nonexistent" in s.get("run", ""))
    assert "INPUT_FIXTURES=eval/relevance/code.jsonl" in no_home
    assert no_home.rstrip().endswith("cce-relevance:ci")
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'python scripts/fetch_upstream.py verify "$CCE_UPSTREAM_DIR"' in ci_run


def test_changelog_lists_every_schema_id_in_force() -> None:
    """A changed id must be called out in CHANGELOG.md; the table there starts from the ids in force."""
    from cce_relevance import schemas

    ids = {value for name, value in vars(schemas).items() if name.isupper() and isinstance(value, str)}
    table = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").split("## [Unreleased]", 1)[0]
    listed = set(re.findall(r"^\| `([^`]+)` \|", table, flags=re.M))
    assert ids <= listed, sorted(ids - listed)
