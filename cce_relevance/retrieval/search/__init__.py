"""Searching an index: the reference's backends (BM25, vector, hybrid), external retrievers, the registry."""
