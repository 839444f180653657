"""A real git repository whose history exercises every rule of `bootstrap --from-history`.

Commits are made with the `git` on PATH, with fixed authors and dates, so the history (and the
shas) are the same on every machine. `build` returns the repository and, per commit subject,
its sha; `EXPECTED_SKIPS` is the yield the walk over the whole history must report.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

HUMAN = ("Ada Lovelace", "ada@example.com")
BOT = ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")

CLIENT = '''\
class Client:
    """An HTTP client."""

    def send(self, request):
        return self.transport.handle(request)

    def close(self):
        self.transport.close()


def build_url(base, path):
    return base.rstrip("/") + "/" + path.lstrip("/")
'''

PARSER = """\
def parse_header(line):
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()


def parse_status(line):
    version, code, reason = line.split(" ", 2)
    return int(code), reason
"""

MANY = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(7))


def git(repo: Path, *args: str, date: str = "2024-01-01T12:00:00+00:00", who: tuple[str, str] = HUMAN) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout


class History:
    """Writes files and commits them one day apart, recording each subject's sha."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.day = 0
        self.shas: dict[str, str] = {}
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")

    def write(self, path: str, text: str) -> None:
        target = self.repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def commit(self, message: str, who: tuple[str, str] = HUMAN) -> str:
        self.day += 1
        date = f"2024-01-{self.day:02d}T12:00:00+00:00"
        git(self.repo, "add", "-A", date=date)
        git(self.repo, "commit", "-q", "--allow-empty", "-m", message, date=date, who=who)
        sha = git(self.repo, "rev-parse", "HEAD").strip()
        self.shas[message.split("\n")[0]] = sha
        return sha


def build(repo: Path) -> History:
    """The history, oldest first, one commit a day from 2024-01-01; the corpus is `src/` (its
    files are `src/`-relative). Each commit's comment says the rule that leaves it out, or
    what it is kept for."""
    h = History(repo)
    client, parser = CLIENT, PARSER
    h.write("src/client.py", client)
    h.write("src/parser.py", parser)
    h.write("docs/guide.md", "# Guide\n")
    h.commit("Initial import of the client and the parser")  # root commit
    client = client.replace("return self.transport.handle(request)", "return self._retry(request)")
    h.write("src/client.py", client)
    h.commit("Retry failed requests with exponential backoff (#41)")  # same query as a newer case
    parser = parser.replace('line.split(" ", 2)', "line.split(maxsplit=2)")
    h.write("src/parser.py", parser)
    h.commit("fix(parser): tolerate PROJ-7 status lines without a reason, fixes #12")  # kept: parse_status
    client += "\n# pinned\n"
    h.write("src/client.py", client)
    h.commit("Bump requests from 2.31.0 to 2.32.0", who=BOT)  # bot author
    h.commit('Revert "Drop the flaky proxy test"\n\nThis reverts commit 0123456.')  # revert
    h.write("docs/guide.md", "# Guide\n\nTypo.\n")
    h.commit("Fix typo")  # subject too short
    h.write("docs/guide.md", "# Guide\n\nMore.\n")
    h.commit("Update the docs and the changelog")  # subject too generic
    h.write("docs/guide.md", "# Guide\n\nMore words about proxies.\n")
    h.commit("Explain proxy configuration in the user guide")  # no file of the corpus
    h.write("src/tests/test_parser.py", "def test_status():\n    assert True\n")
    h.commit("Cover status parsing with a regression test for reasons")  # test files only
    h.write("src/vendor/idna.py", "def encode(label):\n    return label\n")
    h.commit("Vendor the idna label encoder for hostnames")  # vendored or generated files only
    client = client.replace(
        'base.rstrip("/") + "/" + path.lstrip("/")', "base.rstrip('/') + '/' + path.lstrip('/')"
    )
    h.write("src/client.py", client + "\n\n")
    h.commit("Reformat the client module with the house style")  # formatting only
    client += "\n\ndef build_query(params):\n    return '&'.join(params)\n"
    h.write("src/client.py", client)
    h.commit("Add a query string builder for request parameters")  # no definition changed (new code)
    h.write("src/many.py", MANY)
    h.commit("Introduce arithmetic helpers for the examples")  # no definition changed (new file)
    h.write("src/many.py", MANY.replace("return x +", "return x -"))
    h.commit("Invert every arithmetic helper of the examples")  # too many definitions
    h.write("src/legacy.py", "def old_codec(data):\n    return data\n")
    h.commit("Keep a legacy codec around for old servers")  # no definition changed (new file)
    h.write("src/legacy.py", "def old_codec(data):\n    return bytes(data)\n")
    h.commit("Encode legacy codec output as bytes for old servers")  # gone from the scored tree
    (repo / "src/legacy.py").unlink()
    h.commit("Drop the legacy codec module entirely from the package")  # gone from the scored tree
    client = client.replace("self.transport.close()", "self.transport.close()\n        self.closed = True")
    h.write("src/client.py", client)
    h.commit(
        "Mark the client closed after closing its transport\n\n"
        "Callers asked whether a client can still send; the flag answers it.\n\n"
        "Signed-off-by: Ada Lovelace <ada@example.com>"
    )  # kept: Client.close
    parser = parser.replace("value.strip()", "value.strip(' \\t')")
    h.write("src/parser.py", parser)
    h.commit("Retry failed requests with exponential backoff (#41)")  # kept as pr-41: parse_header
    git(repo, "checkout", "-q", "-b", "side")
    h.write("src/parser.py", parser.replace("name.strip()", "name.strip(' ')"))
    h.commit("Strip only spaces from header names on the side branch")  # kept: parse_header
    git(repo, "checkout", "-q", "main")
    h.day += 1
    date = f"2024-01-{h.day:02d}T12:00:00+00:00"
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side", date=date)  # merge commit
    h.shas["Merge branch 'side'"] = git(repo, "rev-parse", "HEAD").strip()
    return h


EXPECTED_SKIPS = {
    "merge commit": 1,
    "root commit": 1,
    "bot author": 1,
    "revert": 1,
    "subject too short": 1,
    "subject too generic": 1,
    "no file of the corpus": 1,
    "test files only": 1,
    "vendored or generated files only": 1,
    "formatting only": 1,
    "no definition changed at the parent": 3,
    "too many definitions": 1,
    "gone from the scored tree": 2,
    "same query as a newer case": 1,
}
KEPT = {  # subject → anchors, newest first
    "Strip only spaces from header names on the side branch": ["parser.py::parse_header"],
    "Retry failed requests with exponential backoff (#41)": ["parser.py::parse_header"],
    "Mark the client closed after closing its transport": ["client.py::Client.close"],
    "fix(parser): tolerate PROJ-7 status lines without a reason, fixes #12": ["parser.py::parse_status"],
}
