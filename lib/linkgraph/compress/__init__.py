"""Compressed link storage: Boldi-Vigna (WebGraph BVGraph) encoding of the forward and reverse
link graphs, built in blocks on Spark (``linkgraph compress``) and queried in memory
(``ConnectivityIndex``).

Importing this package does not compile anything; numba compiles each kernel on first use and
caches it next to the sources.
"""

from linkgraph.compress.bv import BVParams
from linkgraph.compress.graph import CompressedGraph
from linkgraph.compress.index import CompressedIndexError, ConnectivityIndex

__all__ = ["BVParams", "CompressedGraph", "CompressedIndexError", "ConnectivityIndex"]
