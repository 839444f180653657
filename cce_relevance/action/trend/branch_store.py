"""The trend history on a data branch of origin (input `history-branch`), with plain git.

The alternative to keeping the file with actions/cache: the history is a file on a branch of the
repository's own origin (`cce-relevance-data`, say) that holds nothing else of the project, in
the manner of github-action-benchmark's `gh-pages` data. A pull request's run fetches it (a
read-only token is enough); a push to the default branch fetches it, commits the new history on
top and pushes that commit, authenticated as the checkout is (actions/checkout leaves the job's
token in the repository's config unless `persist-credentials: false`; the job needs
`contents: write`). The Action never handles the token itself; git leaves credentials out of
the URLs its messages quote, and the runner masks the job's token in the log besides.

Two pushes to the default branch can record at the same time: the push that comes second is
refused by origin (not a fast-forward), and the run fetches again and records on top of the
other run's commit, up to `trend.ATTEMPTS` times. Nothing is ever force-pushed.

The branch is fetched into a private ref (`PRIVATE_REF`), never into a branch or the working
tree; the commit is built with a private index file (`read-tree` of the fetched tip, so other
files on the branch are kept, then the history's blob), and dated with the recorded commit's
committer date, so the same history on the same tip is the same commit. What git adds to the
repository (objects, the private ref) is handed to the workspace's owner afterwards, as the
Action's other files are (§runner-file-owner).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cce_relevance.action.trend.history import (
    History,
    HistoryError,
    check_size,
    dumps_history,
    read_history,
)
from cce_relevance.action.workspace.git import git
from cce_relevance.action.workspace.output_dir import give_to_workspace_owner
from cce_relevance.errors import CceError

PRIVATE_REF = "refs/cce-relevance/history"
NETWORK_TIMEOUT = 60.0  # seconds for one call to origin (ls-remote, fetch, push)
REMOTE = "origin"
IDENTITY = {  # the commits' author and committer: the bot every Actions job can name
    "GIT_AUTHOR_NAME": "github-actions[bot]",
    "GIT_AUTHOR_EMAIL": "41898282+github-actions[bot]@users.noreply.github.com",
    "GIT_COMMITTER_NAME": "github-actions[bot]",
    "GIT_COMMITTER_EMAIL": "41898282+github-actions[bot]@users.noreply.github.com",
}


@dataclass(frozen=True)
class HistoryBranch:
    """The file `path` on branch `branch` of origin, seen from the repository `repo` in `workspace`."""

    repo: Path
    workspace: Path
    branch: str
    path: str

    @property
    def shown(self) -> str:
        return f"{self.path} on branch {self.branch}"

    def fetch(self) -> str | None:
        """The branch's tip on origin, fetched into `PRIVATE_REF`; None when there is no such branch."""
        listed = self._git(
            "ls-remote", "--heads", "--end-of-options", REMOTE, f"refs/heads/{self.branch}", network=True
        )
        if not listed.strip():
            return None
        refspec = f"+refs/heads/{self.branch}:{PRIVATE_REF}"
        with self._handed_back():
            self._git("fetch", "--no-tags", "--quiet", "--end-of-options", REMOTE, refspec, network=True)
        return self._git("rev-parse", "--verify", "--end-of-options", f"{PRIVATE_REF}^{{commit}}").strip()

    def read(self, tip: str | None) -> History | None:
        """The history in the file at `tip`; None without a tip or without the file there. The
        file is checked out into a temporary directory through a private index: its bytes as they
        are, and only when it is a regular file (a symlink could point anywhere on the runner)."""
        if tip is None:
            return None
        with tempfile.TemporaryDirectory(prefix="cce-history-") as temp:
            index = {"GIT_INDEX_FILE": str(Path(temp) / "index")}
            self._git("read-tree", "--end-of-options", tip, env=index)
            staged = self._git("ls-files", "-s", "-z", "--", self.path, env=index).split("\0")[0]
            if not staged:
                return None
            info, _, name = staged.partition("\t")
            mode, blob, _stage = info.split(" ")
            if name != self.path or mode not in ("100644", "100755"):
                raise HistoryError("is not a regular file on the branch")
            check_size(int(self._git("cat-file", "-s", "--end-of-options", blob)))
            tree = Path(temp) / "tree"
            tree.mkdir()
            self._git(f"--work-tree={tree}", "checkout-index", "--", self.path, env=index)
            return read_history(tree / self.path)

    def write(self, history: History, tip: str | None, message: str, seconds: int) -> bool:
        """Commit `history` on top of `tip` and push it; False when origin's branch moved on since
        `tip` was fetched (fetch again and retry). Nothing to do when it is already there."""
        with self._handed_back(), tempfile.TemporaryDirectory(prefix="cce-history-") as temp:
            content = Path(temp) / "history.json"
            content.write_text(dumps_history(history), encoding="utf-8")
            blob = self._git("hash-object", "-w", "--", str(content)).strip()
            index = {"GIT_INDEX_FILE": str(Path(temp) / "index")}
            if tip:
                self._git("read-tree", "--end-of-options", tip, env=index)
            else:
                self._git("read-tree", "--empty", env=index)
            self._git("update-index", "--add", "--cacheinfo", f"100644,{blob},{self.path}", env=index)
            tree = self._git("write-tree", env=index).strip()
            if (
                tip is not None
                and self._git("rev-parse", "--verify", "--end-of-options", f"{tip}^{{tree}}").strip() == tree
            ):
                return True  # the same history is on the branch already
            date = {"GIT_AUTHOR_DATE": f"@{seconds} +0000", "GIT_COMMITTER_DATE": f"@{seconds} +0000"}
            parents = (f"-p{tip}",) if tip else ()  # each value glued to its option: never an option itself
            made = self._git(
                "commit-tree", *parents, f"-m{message}", "--end-of-options", tree, env={**IDENTITY, **date}
            )
            commit = made.strip()
            try:
                self._git(
                    "push",
                    "--quiet",
                    "--end-of-options",
                    REMOTE,
                    f"{commit}:refs/heads/{self.branch}",
                    network=True,
                )
            except CceError:
                if self.fetch() != tip:
                    return False  # another run recorded first: build on its commit
                raise
            return True

    def _git(self, *args: str, env: dict[str, str] | None = None, network: bool = False) -> str:
        return git(self.repo, *args, env=env, timeout=NETWORK_TIMEOUT if network else None)

    @contextmanager
    def _handed_back(self) -> Iterator[None]:
        """Hand what git wrote in the repository (objects, refs) to the workspace's owner after."""
        try:
            yield
        finally:
            common = Path(self._git("rev-parse", "--git-common-dir").strip())
            directory = common if common.is_absolute() else self.repo / common
            if directory.resolve().is_relative_to(self.workspace.resolve()):
                give_to_workspace_owner(directory, self.workspace)
