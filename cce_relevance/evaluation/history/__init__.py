"""Fixture cases from a repository's history (`bootstrap --from-history`).

`mining.py` walks the commits and makes the cases, `subjects.py` turns a subject into a query
and says when it asks for nothing, `git_log.py` reads the repository. This module holds only
what the command line needs before any of them is loaded.
"""

DEFAULT_MAX_DEFINITIONS = 5  # a commit changing more definitions is too diffuse to anchor
