"""Compressed link storage: Boldi-Vigna (WebGraph BVGraph) encoding of the forward and reverse
link graphs, built in blocks on Spark (``linkgraph compress``) and queried in memory
(``ConnectivityIndex``).

Importing this package does not compile anything; numba compiles each kernel on first use and
caches it next to the sources.  Its names are imported on first use, so a single-page lookup
(``linkgraph.compress.lazy``, ``linkgraph.compress.pages``) never imports ``linkgraph.lake.schemas`` or
pyspark.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linkgraph.compress.bv import BVParams
    from linkgraph.compress.graph import CompressedGraph
    from linkgraph.compress.index import CompressedIndexError, ConnectivityIndex

__all__ = ["BVParams", "CompressedGraph", "CompressedIndexError", "ConnectivityIndex"]

_MODULES = {"BVParams": "linkgraph.compress.bv", "CompressedGraph": "linkgraph.compress.graph",
            "CompressedIndexError": "linkgraph.compress.index", "ConnectivityIndex": "linkgraph.compress.index"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return getattr(importlib.import_module(_MODULES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
