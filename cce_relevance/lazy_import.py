"""Modules that load on first attribute access (`importlib.util.LazyLoader`).

The command line binds its library this way: `cce-relevance --help` and argument errors then
never import numpy, the tree-sitter grammars or requests, which would more than double the
start-up the Action pays on every run (docs/dev/performance.md).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """Module `name`: the loaded one if it is loaded, else a stand-in that imports it when first used."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)  # as a real import would
    return module
