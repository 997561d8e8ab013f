"""``CompressedGraph``: one direction of the compressed link graph in memory (every block's bit
stream in one ``uint64`` array plus the bit offset of every list), queried in compiled code."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from linkgraph.compress import bits as B
from linkgraph.compress.bv import BVParams, decode_block, decode_one, outdegree_at
from linkgraph.errors import CompressedIndexError

_EMPTY = np.empty(0, dtype=np.int64)


@njit(cache=True)
def _locate(block_first, block_nodes, page_id):
    b = np.searchsorted(block_first, page_id, side="right") - 1
    if b < 0 or page_id - block_first[b] >= block_nodes[b]:
        return -1, np.int64(0)
    return b, page_id - block_first[b]


@njit(cache=True)
def _successors(words, block_first, block_nodes, block_bit_base, block_offset_base, offsets, page_id,
                window, min_interval, code, k):
    b, x = _locate(block_first, block_nodes, page_id)
    if b < 0:
        return np.empty(0, dtype=np.int64)
    o = block_offset_base[b]
    return decode_one(words, offsets[o:o + block_nodes[b] + 1], block_bit_base[b], block_first[b], x,
                      window, min_interval, code, k)


@njit(cache=True)
def _degree(words, block_first, block_nodes, block_bit_base, block_offset_base, offsets, page_id):
    b, x = _locate(block_first, block_nodes, page_id)
    if b < 0:
        return np.int64(0)
    return outdegree_at(words, block_bit_base[b] + offsets[block_offset_base[b] + x])


@dataclass
class CompressedGraph:
    """One direction of the link graph: the successor lists of every page, block by block.

    ``words`` holds every block's stream, each starting on a word boundary at bit
    ``block_bit_base[b]``; block ``b`` covers pages ``block_first[b] ..`` (``block_nodes[b]``
    lists) and the offset of its list ``i`` within its stream is
    ``offsets[block_offset_base[b] + i]`` (``block_nodes[b] + 1`` offsets per block).
    ``bits`` is the total length of the lists' streams (padding excluded).
    """

    words: np.ndarray
    block_first: np.ndarray
    block_nodes: np.ndarray
    block_arcs: np.ndarray
    block_bit_base: np.ndarray
    block_bit_length: np.ndarray
    block_offset_base: np.ndarray
    offsets: np.ndarray
    params: BVParams

    @property
    def arcs(self) -> int:
        return int(self.block_arcs.sum())

    @property
    def bits(self) -> int:
        return int(self.block_bit_length.sum())

    @property
    def bits_per_link(self) -> float:
        return self.bits / self.arcs if self.arcs else 0.0

    @property
    def memory_bytes(self) -> int:
        return sum(a.nbytes for a in (self.words, self.block_first, self.block_nodes, self.block_arcs,
                                      self.block_bit_base, self.block_bit_length, self.block_offset_base, self.offsets))

    @classmethod
    def from_blocks(cls, blocks: list[tuple[int, int, int, int, bytes, np.ndarray]],
                    params: BVParams) -> CompressedGraph:
        """From ``(first_id, node_count, arc_count, bit_length, stream bytes, list offsets)``
        per block, in any order."""
        blocks = sorted(blocks, key=lambda block: block[0])
        word_arrays, bit_base, offset_base = [], [], []
        words_so_far, offsets_so_far = 0, 0
        for first_id, node_count, _, bit_length, data, offsets in blocks:
            if len(offsets) != node_count + 1 or offsets[-1] != bit_length:
                raise CompressedIndexError(f"offsets of the block at page {first_id} do not match its stream")
            block_words = B.bytes_to_words(data)
            word_arrays.append(block_words)
            bit_base.append(64 * words_so_far)
            offset_base.append(offsets_so_far)
            words_so_far += len(block_words)
            offsets_so_far += node_count + 1

        def column(i: int) -> np.ndarray:
            return np.array([block[i] for block in blocks], dtype=np.int64)

        return cls(
            words=np.concatenate(word_arrays) if word_arrays else np.zeros(2, dtype=np.uint64),
            block_first=column(0),
            block_nodes=column(1),
            block_arcs=column(2),
            block_bit_base=np.array(bit_base, dtype=np.int64),
            block_bit_length=column(3),
            block_offset_base=np.array(offset_base, dtype=np.int64),
            offsets=np.concatenate([block[5] for block in blocks]) if blocks else _EMPTY,
            params=params,
        )

    def _kernel_args(self) -> tuple:
        return (self.words, self.block_first, self.block_nodes, self.block_bit_base, self.block_offset_base,
                self.offsets)

    def successors(self, page_id: int) -> np.ndarray:
        """Sorted int64 ids of the list of ``page_id`` (empty for a page without one)."""
        code, k = self.params.code
        return _successors(*self._kernel_args(), np.int64(page_id), self.params.window_size,
                           self.params.min_interval_length, code, k)

    def degree(self, page_id: int) -> int:
        return int(_degree(*self._kernel_args(), np.int64(page_id)))

    def to_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every list, decoded sequentially: ``(page ids with a list slot, indptr, successors)``."""
        nodes, indptrs, successors, arcs_so_far = [], [np.zeros(1, dtype=np.int64)], [], 0
        for b in range(len(self.block_first)):
            start = self.block_bit_base[b] // 64
            end = start + (self.block_bit_length[b] + 63) // 64 + 2
            indptr, succ = decode_block(self.words[start:end], int(self.block_first[b]), int(self.block_nodes[b]),
                                        int(self.block_arcs[b]), self.params)
            nodes.append(np.arange(self.block_first[b], self.block_first[b] + self.block_nodes[b], dtype=np.int64))
            indptrs.append(indptr[1:] + arcs_so_far)
            successors.append(succ)
            arcs_so_far += len(succ)
        if not nodes:
            return _EMPTY, np.zeros(1, dtype=np.int64), _EMPTY
        return np.concatenate(nodes), np.concatenate(indptrs), np.concatenate(successors)

    def arcs_array(self) -> np.ndarray:
        """All arcs (node, successor) as an ``(arcs, 2)`` int64 array sorted by node, successor."""
        nodes, indptr, succ = self.to_csr()
        return np.column_stack([np.repeat(nodes, np.diff(indptr)), succ])
