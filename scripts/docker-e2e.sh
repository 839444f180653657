#!/usr/bin/env bash
# The Action end to end inside its Docker image, compared with the same run outside it.
#
# Builds the image (../shared/tools/docker-smoke.sh build: the Docker engine, a local Debian base
# image and this Dockerfile; cached after the first run), then runs tests/action/docker_e2e.py:
# the pull-request scenario of tests/action/test_main_e2e.py played twice, once with entrypoint.py
# run directly and once in the container with GitHub's mounts and variables, each against its own
# loopback GitHub on 127.0.0.1. Exits 0 when the comment, outputs, step summary, report files and
# exit codes are identical and as expected (1 on the drifting push, 0 after the golden update,
# 1 after a rename that leaves an anchor stale and drifts the golden again).
#
# Usage (from anywhere):  scripts/docker-e2e.sh [--no-build] [--keep]
# Environment: PYTHON (default .venv/bin/python), SMOKE (default ../shared/tools/docker-smoke.sh),
# IMAGE (docker-smoke.sh's, default cce-relevance:smoke). Not run by CI: it needs a Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
SMOKE=${SMOKE:-../shared/tools/docker-smoke.sh}

build=1
args=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    *) args+=("$arg") ;;
  esac
done

if [ "$build" = 1 ]; then
  "$SMOKE" build
fi
exec "$PYTHON" -m tests.action.docker_e2e --smoke "$SMOKE" "${args[@]}"
