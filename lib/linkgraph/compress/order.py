"""The vertex order of a compressed graph: page id ↔ position, read from ``links_compressed_order``
without Spark.

``linkgraph compress`` numbers the pages with a link ``0..m-1`` in ``url_key`` order and encodes
the graph over those positions (``linkgraph.compress.build``); queries come and answers go by page
id.  ``VertexOrder`` holds the whole map (16 bytes per vertex), for ``ConnectivityIndex.load``;
``LazyVertexOrder`` reads only the chunks a lookup needs: the ``page_to_position`` chunk of the
page asked about and the ``position_to_page`` chunks of the answer's positions (few in host
order, where most links stay within a host).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from linkgraph.compress import bits as B
from linkgraph.errors import CompressedIndexError
from linkgraph.lake import names as S

_EMPTY = np.empty(0, dtype=np.int64)


def decode_chunk(row: dict) -> tuple[np.ndarray, np.ndarray]:
    """(keys, values) of one ``links_compressed_order`` row."""
    return B.gamma_decode_pairs(B.bytes_to_words(row[S.DATA]), int(row[S.NODE_COUNT]), int(row[S.FIRST_ID]))


class VertexOrder:
    """The whole map: ``page_ids[position]`` and its inverse (by binary search)."""

    def __init__(self, page_ids: np.ndarray):
        self.page_ids = np.asarray(page_ids, dtype=np.int64)
        self._by_page = np.argsort(self.page_ids, kind="stable")
        self._sorted_page_ids = self.page_ids[self._by_page]

    @classmethod
    def from_rows(cls, rows: Sequence[dict]) -> VertexOrder:
        """From the ``position_to_page`` rows of the table (the other kind is its inverse)."""
        chunks = [decode_chunk(row) for row in sorted((r for r in rows if r[S.KIND] == S.POSITION_TO_PAGE),
                                                      key=lambda r: int(r[S.FIRST_ID]))]
        keys = np.concatenate([c[0] for c in chunks]) if chunks else _EMPTY
        values = np.concatenate([c[1] for c in chunks]) if chunks else _EMPTY
        if not np.array_equal(keys, np.arange(len(keys))):
            raise CompressedIndexError(
                "links_compressed_order does not cover positions 0..m-1: run linkgraph compress again")
        return cls(values)

    def position(self, page_id: int) -> int:
        """The position of ``page_id``, -1 when the page has no link."""
        i = int(np.searchsorted(self._sorted_page_ids, page_id))
        if i < len(self._sorted_page_ids) and int(self._sorted_page_ids[i]) == int(page_id):
            return int(self._by_page[i])
        return -1

    def to_page_ids(self, positions: np.ndarray) -> np.ndarray:
        """The page ids at ``positions``, sorted."""
        return np.sort(self.page_ids[np.asarray(positions, dtype=np.int64)])


class LazyVertexOrder:
    """The map read chunk by chunk: ``read(kind, first_id)`` returns the row of that chunk or None
    (the caller chooses and records the files); chunks read are kept."""

    def __init__(self, chunk_size: int, read: Callable[[str, int], dict | None]):
        self.chunk_size = int(chunk_size)
        self._read = read
        self._chunks: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}

    def _chunk(self, kind: str, key: int) -> tuple[np.ndarray, np.ndarray]:
        first = (int(key) // self.chunk_size) * self.chunk_size
        if (kind, first) not in self._chunks:
            row = self._read(kind, first)
            self._chunks[(kind, first)] = (_EMPTY, _EMPTY) if row is None else decode_chunk(row)
        return self._chunks[(kind, first)]

    def position(self, page_id: int) -> int:
        keys, values = self._chunk(S.PAGE_TO_POSITION, page_id)
        i = int(np.searchsorted(keys, page_id))
        return int(values[i]) if i < len(keys) and int(keys[i]) == int(page_id) else -1

    def to_page_ids(self, positions: np.ndarray) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int64)
        out = np.empty(len(positions), dtype=np.int64)
        for first in np.unique(positions // self.chunk_size):
            keys, values = self._chunk(S.POSITION_TO_PAGE, int(first) * self.chunk_size)
            here = positions // self.chunk_size == first
            i = np.searchsorted(keys, positions[here])
            if np.any(i >= len(keys)) or np.any(keys[i] != positions[here]):
                raise CompressedIndexError(
                    "a position without a page in links_compressed_order: run linkgraph compress again")
            out[here] = values[i]
        return np.sort(out)
