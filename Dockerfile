# The cce-relevance GitHub Action: a Docker container action (see action.yml).
#
# BASE_IMAGE is an argument so the same file builds on GitHub (python:3.12-slim) and from a plain
# Debian image with python3, python3-venv and git (the offline smoke test builds it that way).
# Two stages: the build stage needs the source tree and pip's build isolation, the final image
# only the finished virtual environment, so no stray source copy shadows the installed package.
# No USER: GitHub runs container actions as root and mounts the workspace owned by another uid.
ARG BASE_IMAGE=python:3.12-slim

FROM ${BASE_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python3 -m venv /opt/venv
# Locked dependencies first, in their own layer: they change far less often than the code.
COPY requirements/runtime.txt /src/requirements/runtime.txt
RUN /opt/venv/bin/pip install --no-cache-dir -r /src/requirements/runtime.txt
# README.m[d]: pyproject names README.md as the long description; the pattern keeps the build
# working in a tree where it has not been written yet.
COPY pyproject.toml README.m[d] /src/
COPY cce_relevance /src/cce_relevance
# --no-deps: every dependency comes from the lock above, never from pyproject's ranges.
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps /src

FROM ${BASE_IMAGE}
# git materialises the base and head commits as worktrees. python:*-slim lacks it; the Debian
# smoke image already has it, so it is installed only when missing. The version is whatever the
# base image's Debian release ships: a pinned Debian revision would break at its next security
# update, and the commands we use (worktree, merge-base, fetch --deepen) are stable for years.
# hadolint ignore=DL3008
RUN if ! command -v git >/dev/null 2>&1; then \
      apt-get update \
      && apt-get install -y --no-install-recommends git \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /opt/venv /opt/venv
COPY entrypoint.py /app/entrypoint.py
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LANG=C.UTF-8 \
    PATH=/opt/venv/bin:$PATH
ENTRYPOINT ["/opt/venv/bin/python", "/app/entrypoint.py"]
