"""Adapters that let a retriever written for another framework be scored as a Python retriever
(`python = "package.module:factory"`, docs/retrievers.md). Each imports its framework only when
used; none is needed by the rest of the package."""
