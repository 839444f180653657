#!/usr/bin/env bash
# Lint what Python tooling cannot see: action.yml, runner/action.yml (and that it is generated
# from action.yml), the generated docs (docs/cli-reference.md, docs/action.md's tables) and every
# workflow (the examples in docs/ too) against GitHub's JSON schemas, the workflows' expressions, job graph and action inputs with actionlint, and the Dockerfile
# with hadolint. check-jsonschema ships the GitHub schemas (--builtin-schema vendor.*), so this
# needs no network. Runs every check, then exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

for tool in check-jsonschema actionlint hadolint; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "lint: $tool not found on PATH; pip install -r requirements/dev.in" >&2
    exit 2
  }
done

status=0
run() {
  echo "+ $*"
  "$@" || status=1
}

mapfile -t workflows < <(find .github/workflows docs/examples -type f \( -name '*.yml' -o -name '*.yaml' \) | sort)
run check-jsonschema --builtin-schema vendor.github-actions action.yml runner/action.yml
run python3 scripts/runner_action.py --check
run python3 scripts/generated_docs.py --check
run check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}"
run actionlint "${workflows[@]}"
run hadolint Dockerfile
exit "$status"
