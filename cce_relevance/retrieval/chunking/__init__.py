"""Chunking: language packs and their grammars, chunks of a file, line weights, the import graph."""
