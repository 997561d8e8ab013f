"""``ConnectivityIndex``: the compressed forward and reverse link graphs in memory, answering
"which pages does p link to / which pages link to p / does p link to q" without Spark.

``ConnectivityIndex.load(lake)`` reads the four tables ``linkgraph compress`` writes (with the
``deltalake`` reader when given a lake directory, through Spark when given a ``Lake``) and keeps
every block's bit stream in one ``uint64`` array plus the bit offset of every list (8 bytes per
vertex and direction) and the vertex order (16 bytes per vertex: the graph's vertices are the
linked pages' positions in ``url_key`` order, ``linkgraph.compress.order``).  A query maps the page
id to its position, decodes one list (its reference chain, at most ``max_ref_count`` lists back,
and the list itself, in compiled code) and maps the positions back to page ids.

Memory: a full ``load`` holds the compressed streams of both directions plus 8 bytes per vertex and
direction for the offsets and 16 for the order (about 32 GB at a billion pages, on top of the
streams), and reads every file of the four tables.  ``ConnectivityIndex.open(source)`` is the lazy
alternative for a few lookups (``linkgraph links --compressed``): it reads the order chunk of the
page asked about, the block holding it and that block's offsets, and the order chunks of the answer
only (``linkgraph.compress.lazy``).
"""

from __future__ import annotations

import numpy as np
from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError

from linkgraph.compress import bits as B
from linkgraph.compress.bv import BVParams, block_csr, encode_block
from linkgraph.compress.graph import CompressedGraph
from linkgraph.compress.lazy import LazyConnectivityIndex
from linkgraph.compress.order import VertexOrder
from linkgraph.compress.webgraph import write_bvgraph
from linkgraph.errors import CompressedIndexError, CompressedTableMissing
from linkgraph.lake import schemas as S
from linkgraph.lake.paths import table_location

_EMPTY = np.empty(0, dtype=np.int64)


class ConnectivityIndex:
    """Forward (out-links) and reverse (in-links) compressed graphs of one build, over the
    vertices of ``order`` (None: the vertices are the page ids, as ``from_arcs`` encodes them)."""

    def __init__(self, forward: CompressedGraph, reverse: CompressedGraph, links_version: int | None = None,
                 order: VertexOrder | None = None):
        self.forward = forward
        self.reverse = reverse
        self.links_version = links_version
        self.order = order

    # --- queries -------------------------------------------------------------------------------
    def out_links(self, page_id: int, limit: int | None = None) -> np.ndarray:
        """Sorted int64 ids of the pages ``page_id`` links to; with ``limit``, of the first
        ``limit`` of them in vertex order (url_key order; page id order without an ``order``)."""
        return self._successors(self.forward, page_id, limit)

    def in_links(self, page_id: int, limit: int | None = None) -> np.ndarray:
        """Sorted int64 ids of the pages linking to ``page_id`` (``limit``: as ``out_links``)."""
        return self._successors(self.reverse, page_id, limit)

    def out_degree(self, page_id: int) -> int:
        vertex = self._vertex(page_id)
        return 0 if vertex < 0 else self.forward.degree(vertex)

    def in_degree(self, page_id: int) -> int:
        vertex = self._vertex(page_id)
        return 0 if vertex < 0 else self.reverse.degree(vertex)

    def _vertex(self, page_id: int) -> int:
        return int(page_id) if self.order is None else self.order.position(page_id)

    def _successors(self, graph: CompressedGraph, page_id: int, limit: int | None = None) -> np.ndarray:
        vertex = self._vertex(page_id)
        if vertex < 0:
            return _EMPTY
        successors = graph.successors(vertex)[:limit]
        return successors if self.order is None else self.order.to_page_ids(successors)

    def has_link(self, source: int, target: int) -> bool:
        """Whether ``source`` links to ``target``: decodes the shorter of the out-list of source
        and the in-list of target (their lengths are the first code of each list)."""
        out_degree, in_degree = self.out_degree(source), self.in_degree(target)
        if out_degree == 0 or in_degree == 0:
            return False
        if out_degree <= in_degree:
            candidates, wanted = self.out_links(source), target
        else:
            candidates, wanted = self.in_links(target), source
        i = int(np.searchsorted(candidates, wanted))
        return i < len(candidates) and int(candidates[i]) == int(wanted)

    def covered_ids(self) -> int:
        """One past the largest vertex that has an out- or an in-link (with an ``order``, the
        number of pages with a link)."""
        return max((int((g.block_first + g.block_nodes).max()) for g in (self.forward, self.reverse)
                    if len(g.block_first)), default=0)

    def write_bvgraph(self, basename, nodes: int | None = None) -> dict[str, str]:
        """Write the forward graph as WebGraph BVGraph files ``basename.graph/.offsets/.properties``
        over vertices ``0 .. nodes - 1`` (default: every vertex up to the last one with a link);
        with an ``order`` the vertices are positions, ``order.page_ids[v]`` the page of vertex v."""
        covered = self.covered_ids()
        if nodes is not None and nodes < covered:
            raise ValueError(f"nodes={nodes} but page {covered - 1} has links")
        return write_bvgraph(self.forward, basename, covered if nodes is None else nodes)

    # --- construction --------------------------------------------------------------------------
    @classmethod
    def from_arcs(cls, sources: np.ndarray, targets: np.ndarray, params: BVParams | None = None,
                  block_size: int = 65536) -> ConnectivityIndex:
        """Encode an arc list in this process, block by block as ``linkgraph compress`` does
        (``params`` default: ``BVParams()``)."""
        params = params or BVParams()
        sources = np.asarray(sources, dtype=np.int64)
        targets = np.asarray(targets, dtype=np.int64)
        graphs = []
        for nodes, successors in ((sources, targets), (targets, sources)):
            blocks = []
            block_ids = nodes // block_size
            order = np.argsort(block_ids, kind="stable")
            ids_sorted = block_ids[order]
            bounds = np.flatnonzero(np.diff(ids_sorted)) + 1
            for chunk in np.split(order, bounds) if len(order) else []:
                first_id = int(block_ids[chunk[0]]) * block_size
                indptr, succ = block_csr(nodes[chunk], successors[chunk], first_id)
                block = encode_block(indptr, succ, first_id, params)
                blocks.append((first_id, block.node_count, block.arc_count, block.bit_length, block.to_bytes(),
                               block.offsets))
            graphs.append(CompressedGraph.from_blocks(blocks, params))
        return cls(graphs[0], graphs[1])

    @classmethod
    def open(cls, source) -> LazyConnectivityIndex | ConnectivityIndex:
        """The compressed tables of a lake opened lazily (one block read per page asked about):
        ``source`` a lake directory or a path-based ``Lake``; a catalog ``Lake`` is loaded in full
        through Spark."""
        if _is_lake(source):
            if source.uses_catalog:
                return cls.load(source)
            return LazyConnectivityIndex(*(source.location(t) for t in (
                S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
                S.LINKS_COMPRESSED_ORDER_TABLE)))
        return LazyConnectivityIndex.at(source)

    @classmethod
    def load(cls, source) -> ConnectivityIndex:
        """Load the compressed tables of a lake: ``source`` a lake directory (read without
        Spark) or a ``linkgraph.lake.delta.Lake``."""
        tables = {
            name: _read_table(source, name).to_pydict()
            for name in (S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_REVERSE_TABLE,
                         S.LINKS_COMPRESSED_OFFSETS_TABLE, S.LINKS_COMPRESSED_ORDER_TABLE)
        }
        # (a table of an older build lacks the newest build columns: None there, so it never matches)
        builds: set[tuple] = {
            tuple(rows[c][i] if c in rows else None for c in S.COMPRESSION_BUILD_COLUMNS)
            for rows in tables.values() for i in range(len(rows[S.FIRST_ID]))
        }
        if len(builds) > 1:
            raise CompressedIndexError(
                f"the compressed tables come from different builds {sorted(builds)}: run linkgraph compress again")
        links_version, params = None, BVParams()
        if builds:
            (build,) = builds
            links_version = build[0]
            params = BVParams(window_size=build[2], max_ref_count=build[3], min_interval_length=build[4],
                              residual_code=build[5])
        offsets = tables[S.LINKS_COMPRESSED_OFFSETS_TABLE]
        graphs = []
        directions = ((S.FORWARD, S.LINKS_COMPRESSED_FORWARD_TABLE), (S.REVERSE, S.LINKS_COMPRESSED_REVERSE_TABLE))
        for direction, name in directions:
            offsets_of = {
                offsets[S.BLOCK_ID][i]: (offsets[S.OFFSETS][i], offsets[S.NODE_COUNT][i])
                for i in range(len(offsets[S.BLOCK_ID])) if offsets[S.DIRECTION][i] == direction
            }
            rows = tables[name]
            blocks = []
            for i, block_id in enumerate(rows[S.BLOCK_ID]):
                if block_id not in offsets_of:
                    raise CompressedIndexError(
                        f"no {direction} offsets for block {block_id}: run linkgraph compress again")
                offsets_data, node_count = offsets_of[block_id]
                node_offsets = B.gamma_decode_gaps(B.bytes_to_words(offsets_data), node_count + 1)
                blocks.append((rows[S.FIRST_ID][i], rows[S.NODE_COUNT][i], rows[S.ARC_COUNT][i], rows[S.BIT_LENGTH][i],
                               rows[S.DATA][i], node_offsets))
            graphs.append(CompressedGraph.from_blocks(blocks, params))
        order_rows = tables[S.LINKS_COMPRESSED_ORDER_TABLE]
        order = VertexOrder.from_rows([{c: order_rows[c][i] for c in order_rows}
                                       for i in range(len(order_rows[S.KIND]))])
        return cls(graphs[0], graphs[1], links_version=links_version, order=order)


def _is_lake(source: object) -> bool:
    """``source`` is a ``linkgraph.lake.delta.Lake`` (told by its interface, so that this module,
    the Spark-free lookup path, never imports pyspark)."""
    return hasattr(source, "uses_catalog") and hasattr(source, "location")


def _read_table(source, table: str):
    """A lake table as a pyarrow Table."""
    if _is_lake(source):
        if not source.exists(table):
            raise CompressedTableMissing(f"table '{table}' not found in lake {source.root}: run linkgraph compress")
        return source.read(table).toArrow()
    path = table_location(str(source), table)
    try:
        return DeltaTable(path).to_pyarrow_table()
    except TableNotFoundError:
        raise CompressedTableMissing(f"table '{table}' not found at {path}: run linkgraph compress") from None
