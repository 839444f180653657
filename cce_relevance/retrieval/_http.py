"""Plain words for a failed HTTP request, shared by the HTTP clients of the retrieval room.

requests wraps the socket error several layers deep (urllib3's `MaxRetryError.reason`, exception
`args`, `__cause__`/`__context__`), and its own message is a pile of pool and adapter names. The
operating system's words (`Connection refused`, `Name or service not known`) are what a person
needs in an error line.
"""

from __future__ import annotations


def connection_reason(exc: BaseException) -> str:
    """The first OS error text found under `exc`'s wrappers, else `str(exc)`."""
    pending: list[BaseException] = [exc]
    seen: set[int] = set()
    while pending:
        err = pending.pop(0)
        if id(err) in seen:
            continue
        seen.add(id(err))
        if isinstance(err, OSError) and err.strerror:
            return err.strerror
        links = (getattr(err, "reason", None), err.__cause__, err.__context__, *err.args)
        pending.extend(x for x in links if isinstance(x, BaseException))
    return str(exc)
