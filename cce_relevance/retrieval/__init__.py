"""Retrieval: from a corpus directory to ranked hits, in stage packages that import only earlier ones.

`tokens`, `_http`, `hit` → `corpus` → `chunking`, `embedding` → `ranking` → `indexing` → `cache` →
`index` → `embedders` → `search`, `store` (tests/test_layout.py holds the order and fails on an
import against it).
"""
