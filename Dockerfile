# The cce-relevance GitHub Action: a Docker container action (see action.yml).
#
# The base image is pinned by digest (a multi-arch index: amd64 and arm64), never a floating tag,
# so two builds of one commit start from the same bytes and Docker Hub's tag moves cannot change
# a release. It is an argument so the offline smoke test can build from a plain Debian image with
# python3, python3-venv and git (../shared/tools/docker-smoke.sh passes BASE_IMAGE).
# To bump it (CONTRIBUTING.md): `docker buildx imagetools inspect python:3.12-slim`, copy the
# index's `Digest:` line here with the tag it resolved to, run the tests and scripts/lint.sh.
# Pinned: python:3.12-slim = 3.12.14-slim-trixie (2026-09-07).
#
# Two stages: the build stage needs the source tree and pip, the final image only the finished
# virtual environment, so no stray source copy shadows the installed package.
# No USER: GitHub runs container actions as root and mounts the workspace owned by another uid.
ARG BASE_IMAGE=python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea

FROM ${BASE_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python3 -m venv /opt/venv
# Locked dependencies first, in their own layer: they change far less often than the code.
COPY requirements/runtime.txt /src/requirements/runtime.txt
RUN /opt/venv/bin/pip install --no-cache-dir -r /src/requirements/runtime.txt
# Optional extras, off by default: `--build-arg CCE_EXTRAS=semantic` adds WordLlama's model for the
# `wordllama` embedder (docs/embedders.md; its wheels are x86_64 only, so the default multi-arch
# image leaves it out).
ARG CCE_EXTRAS=""
COPY requirements/semantic.txt /src/requirements/semantic.txt
RUN case " ${CCE_EXTRAS} " in \
      *" semantic "*) /opt/venv/bin/pip install --no-cache-dir -r /src/requirements/semantic.txt ;; \
    esac
# README.m[d]: pyproject names README.md as the long description; the pattern keeps the build
# working in a tree where it has not been written yet.
COPY pyproject.toml README.m[d] LICENSE /src/
COPY cce_relevance /src/cce_relevance
# --no-deps: every dependency comes from the lock above, never from pyproject's ranges.
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps /src
# Only the grammars the language packs load (tree-sitter-language-pack ships 172, 184 MB; we
# load five), then nothing the image never runs: pip, setuptools (a 3.11 venv has it) and
# numpy's own test suite.
COPY scripts/grammars.py /app/grammars.py
RUN /opt/venv/bin/python /app/grammars.py prune \
    && /opt/venv/bin/python -m pip uninstall --yes --quiet setuptools pip \
    && rm -rf /opt/venv/lib/python3*/site-packages/numpy/*/tests \
              /opt/venv/lib/python3*/site-packages/numpy/tests

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
COPY --from=build /app/grammars.py /app/grammars.py
COPY entrypoint.py /app/entrypoint.py
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LANG=C.UTF-8 \
    PATH=/opt/venv/bin:$PATH
# Every supported language parses in the finished image, on each platform it is built for.
RUN ["/opt/venv/bin/python", "/app/grammars.py", "check"]
ENTRYPOINT ["/opt/venv/bin/python", "/app/entrypoint.py"]
