"""cce-relevance: score retrieval ranking against labeled fixtures, query by query.

The facade is `cce_relevance.api`. A citation such as `§gitignore` in the code names the heading
of that name in a document of the repository (the reference's behaviour the code reproduces:
docs/reference-behaviour.md); tests/test_docs.py checks that every one resolves.
"""

__version__ = "0.1.0"
