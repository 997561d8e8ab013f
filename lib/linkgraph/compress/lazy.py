"""``LazyConnectivityIndex``: the compressed link graph opened without loading it, for lookups of a
few pages.

``ConnectivityIndex.load`` keeps every block's bit stream and the bit offset of every list in memory:
the compressed size plus 8 bytes per vertex and direction (about 16 GB of offsets alone at a billion
pages), read through every file of the four tables.  ``ConnectivityIndex.open`` returns this class
instead: a query for page ``p`` reads the Delta log's per-file statistics (min/max of ``kind``,
``first_id``, ``block_id`` and ``direction``), then only the order chunk holding ``p`` (its
position ``v``), the data file holding the block of ``v`` and the file holding that block's
offsets, decodes that one block's offsets (``node_count + 1`` values), and maps the answer back to
page ids through the order chunks of its positions (one, when the links stay in the block's
range).  ``linkgraph compress`` writes one block or chunk per file.  Blocks and chunks read are
kept for later queries; ``files_read`` lists the data files read so far.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError

from linkgraph.compress import bits as B
from linkgraph.compress.bv import BVParams
from linkgraph.compress.graph import CompressedGraph
from linkgraph.compress.order import LazyVertexOrder
from linkgraph.errors import CompressedIndexError, CompressedTableMissing
from linkgraph.lake import names as S
from linkgraph.lake.paths import table_location

_EMPTY = np.empty(0, dtype=np.int64)
_ORDER = "order"   # the key of links_compressed_order among the tables a LazyConnectivityIndex reads


class DeltaFiles:
    """The data files of one Delta table with their column statistics (from the log, no data read)."""

    def __init__(self, location: str):
        try:
            table = DeltaTable(location)
        except TableNotFoundError:
            raise CompressedTableMissing(f"table not found at {location}: run linkgraph compress") from None
        self.table = table
        # rows may be deleted without rewriting their file, which a plain Parquet read would return
        self.deletion_vectors = "deletionVectors" in (table.protocol().reader_features or [])
        self.root = table.table_uri.rstrip("/")
        # columns converted one at a time, as asked for: a whole-table conversion imports pandas
        # (for the timestamp columns), which a lookup does not need
        self.actions = pa.RecordBatchReader.from_stream(table.get_add_actions(flatten=True)).read_all()
        self.paths: list[str] = self.actions.column("path").to_pylist()
        self._stats: dict[str, list] = {}

    def stat(self, kind: str, column: str) -> list:
        name = f"{kind}.{column}"
        if name not in self._stats:
            present = name in self.actions.column_names
            self._stats[name] = self.actions.column(name).to_pylist() if present else [None] * len(self.paths)
        return self._stats[name]

    def uri(self, i: int) -> str:
        path = self.paths[i]
        return path if "://" in path else f"{self.root}/{path}"

    def local(self, i: int) -> str:
        uri = self.uri(i)
        parsed = urlparse(uri)
        return unquote(parsed.path) if parsed.scheme in ("", "file") else uri

    def candidates(self, column: str, low, high) -> list[int]:
        """Files whose [min, max] of ``column`` meets [low, high] (every file without statistics)."""
        mins, maxs = self.stat("min", column), self.stat("max", column)
        return [i for i in range(len(self.paths))
                if mins[i] is None or maxs[i] is None or (mins[i] <= high and maxs[i] >= low)]


def read_rows(path: str, column: str, low, high, keep: Callable[[Any], bool] | None = None,
              columns: list[str] | None = None) -> dict[str, list]:
    """Rows of the Parquet file ``path`` whose ``column`` lies in [``low``, ``high``] (or, when
    given, passes ``keep``, which must imply the range), as lists per column (``columns``,
    default all).  Row groups whose statistics miss
    the range are not read.  Plain ``ParquetFile`` reads and Python lists: ``pyarrow.dataset``
    (``read_table`` with filters), ``pyarrow.compute`` and ``to_numpy`` import pandas, half a
    second of a one-page lookup."""
    parquet = pq.ParquetFile(path)
    names = columns or parquet.schema_arrow.names
    j = parquet.schema_arrow.get_field_index(column)
    groups = []
    for g in range(parquet.metadata.num_row_groups):
        stats = parquet.metadata.row_group(g).column(j).statistics
        if stats is None or not stats.has_min_max or (stats.min <= high and stats.max >= low):
            groups.append(g)
    rows: dict[str, list] = {name: [] for name in names}
    if not groups:
        return rows
    table = parquet.read_row_groups(groups, columns=list(dict.fromkeys([*names, column])))
    values = table.column(column).to_pylist()
    if keep is None:
        matches = [i for i, value in enumerate(values) if value is not None and low <= value <= high]
    else:
        matches = [i for i, value in enumerate(values) if value is not None and keep(value)]
    for i in matches:
        row = table.slice(i, 1).to_pydict()
        for name in names:
            rows[name].append(row[name][0])
    return rows


def _disjoint(files: DeltaFiles, column: str, chosen: list[int]) -> bool:
    mins, maxs = files.stat("min", column), files.stat("max", column)
    if any(mins[i] is None or maxs[i] is None for i in chosen):
        return False
    spans = sorted((mins[i], maxs[i]) for i in chosen)
    return all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))


class LazyConnectivityIndex:
    """Out- and in-links of single pages, each read from its own block (see the module docstring)."""

    def __init__(self, forward: str, reverse: str, offsets: str, order: str):
        self._locations = {S.FORWARD: forward, S.REVERSE: reverse, S.OFFSETS: offsets, _ORDER: order}
        self._logs: dict[str, DeltaFiles] = {}
        self._blocks: dict[tuple[str, int], CompressedGraph] = {}
        self._order: LazyVertexOrder | None = None
        self._builds: set[tuple] = set()
        self.files_read: list[str] = []

    def _files(self, key: str) -> DeltaFiles:
        """A table's file list, its Delta log read on first use (an out-link lookup never reads
        the reverse table's log)."""
        if key not in self._logs:
            self._logs[key] = DeltaFiles(self._locations[key])
        return self._logs[key]

    @classmethod
    def at(cls, lake_dir: str | Path) -> LazyConnectivityIndex:
        tables = (S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
                  S.LINKS_COMPRESSED_ORDER_TABLE)
        return cls(*(table_location(str(lake_dir), table) for table in tables))

    # --- queries -------------------------------------------------------------------------------
    def out_links(self, page_id: int, limit: int | None = None) -> np.ndarray:
        """Sorted int64 ids of the pages ``page_id`` links to; with ``limit``, of the first
        ``limit`` of them in vertex (url_key) order, so only their order chunks are read."""
        return self._successors(S.FORWARD, page_id, limit)

    def in_links(self, page_id: int, limit: int | None = None) -> np.ndarray:
        """Sorted int64 ids of the pages linking to ``page_id`` (``limit``: as ``out_links``)."""
        return self._successors(S.REVERSE, page_id, limit)

    def out_degree(self, page_id: int) -> int:
        return self._degree(S.FORWARD, page_id)

    def in_degree(self, page_id: int) -> int:
        return self._degree(S.REVERSE, page_id)

    def _degree(self, direction: str, page_id: int) -> int:
        vertex = self._vertex_order().position(page_id)
        graph = None if vertex < 0 else self._graph(direction, vertex)
        return 0 if graph is None else graph.degree(vertex)

    def _successors(self, direction: str, page_id: int, limit: int | None) -> np.ndarray:
        order = self._vertex_order()
        vertex = order.position(page_id)
        graph = None if vertex < 0 else self._graph(direction, vertex)
        return _EMPTY if graph is None else order.to_page_ids(graph.successors(vertex)[:limit])

    # --- reading one block ---------------------------------------------------------------------
    def _read(self, files: DeltaFiles, i: int, column: str, low, high) -> dict:
        self.files_read.append(files.uri(i))
        return read_rows(files.local(i), column, low, high)

    def _same_build(self, row: dict, what: str) -> None:
        """Every row read must come from one build of the four tables."""
        self._builds.add(tuple(row.get(c) for c in S.COMPRESSION_BUILD_COLUMNS))
        if len(self._builds) > 1:
            raise CompressedIndexError(f"{what} comes from another build than the rows read before it: "
                                       "run linkgraph compress again")

    def _vertex_order(self) -> LazyVertexOrder:
        if self._order is None:
            files = self._files(_ORDER)
            sizes = [s for s in files.stat("max", S.BLOCK_SIZE) if s is not None]   # none: no links

            def read(kind: str, first_id: int) -> dict | None:
                row = self._row_of(files, S.FIRST_ID, first_id, S.KIND, kind)
                if row is not None:
                    self._same_build(row, f"the {kind} chunk at {first_id}")
                return row

            self._order = LazyVertexOrder(int(sizes[0]) if sizes else 1, read)
        return self._order

    def _block_row(self, direction: str, vertex: int) -> dict | None:
        """The row of the block whose vertex range may hold ``vertex``, or None."""
        files = self._files(direction)
        sizes = [s for s in files.stat("max", S.BLOCK_SIZE) if s is not None]
        low = (vertex // int(sizes[0])) * int(sizes[0]) if sizes else 0
        chosen = files.candidates(S.FIRST_ID, low, vertex)
        if not chosen:
            return None
        if _disjoint(files, S.FIRST_ID, chosen):
            # the file starting last before the vertex holds the last block starting before it
            mins = files.stat("min", S.FIRST_ID)
            chosen = [max(chosen, key=lambda i: mins[i])]
        best: dict | None = None
        for i in chosen:
            rows = self._read(files, i, S.FIRST_ID, low, vertex)
            for j, first in enumerate(rows[S.FIRST_ID]):
                if best is None or first > best[S.FIRST_ID]:
                    best = {c: rows[c][j] for c in rows}
        if best is None or vertex >= best[S.FIRST_ID] + best[S.NODE_COUNT]:
            return None
        return best

    def _row_of(self, files: DeltaFiles, key_column: str, key: int, kind_column: str, kind: str) -> dict | None:
        """The row with ``key_column == key`` and ``kind_column == kind``, read from the files whose
        statistics can hold both, or None."""
        of_kind = set(files.candidates(kind_column, kind, kind))
        for i in files.candidates(key_column, key, key):
            if i not in of_kind:
                continue
            rows = self._read(files, i, key_column, key, key)
            for j, found in enumerate(rows[kind_column]):
                if found == kind:
                    return {c: rows[c][j] for c in rows}
        return None

    def _offsets_row(self, direction: str, block_id: int) -> dict:
        row = self._row_of(self._files(S.OFFSETS), S.BLOCK_ID, block_id, S.DIRECTION, direction)
        if row is None:
            raise CompressedIndexError(f"no {direction} offsets for block {block_id}: run linkgraph compress again")
        return row

    def _graph(self, direction: str, vertex: int) -> CompressedGraph | None:
        for (d, _), graph in self._blocks.items():
            if d == direction and graph.block_first[0] <= vertex < graph.block_first[0] + graph.block_nodes[0]:
                return graph
        row = self._block_row(direction, vertex)
        if row is None:
            return None
        self._same_build(row, f"block {row[S.BLOCK_ID]} ({direction})")
        offsets = self._offsets_row(direction, row[S.BLOCK_ID])
        self._same_build(offsets, f"the offsets of block {row[S.BLOCK_ID]} ({direction})")
        params = BVParams(window_size=row[S.WINDOW_SIZE], max_ref_count=row[S.MAX_REF_COUNT],
                          min_interval_length=row[S.MIN_INTERVAL_LENGTH], residual_code=row[S.RESIDUAL_CODE])
        node_offsets = B.gamma_decode_gaps(B.bytes_to_words(offsets[S.OFFSETS]), row[S.NODE_COUNT] + 1)
        graph = CompressedGraph.from_blocks(
            [(row[S.FIRST_ID], row[S.NODE_COUNT], row[S.ARC_COUNT], row[S.BIT_LENGTH], row[S.DATA], node_offsets)],
            params)
        self._blocks[(direction, int(row[S.BLOCK_ID]))] = graph
        return graph
