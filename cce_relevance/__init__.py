"""cce-relevance: score retrieval ranking against labeled fixtures, query by query."""

__version__ = "0.1.0"
