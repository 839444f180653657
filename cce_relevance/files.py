"""Writing output files so that a reader never sees half of one.

Shared by the front doors (reports, goldens) and `api` (stores and their fingerprints).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from cce_relevance.errors import CceError


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, at import (single-threaded): `os.umask` can only be read by setting it.
_UMASK = _current_umask()


def write_atomically(path: str, text: str) -> None:
    """Write via a temporary file in the same directory and rename: never a half-written file.

    A failed write removes its temporary file, so an interrupted run leaves the old file as it was.
    The file gets the permissions a plain `open(path, "w")` would give (mkstemp's are owner-only).
    """
    directory = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".cce-relevance-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_UMASK)
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from None
