"""The block tasks of the rank engine's distributed path: partial sums sent, summed and sent again.

Per iteration only partial sums move.  Each source block multiplies its ranks through its packed
chunks (scipy.sparse, K vectors at once) and sends, per chunk, (destination row, value per vector)
for the rows it reaches — or a dense vector when that is smaller — to the destination block
(:func:`spread_ranks`; the values encoded by ``rank.codec``).  An iteration is one Python pass per
block (:func:`stepper`): the task sums the partials sent to its block, adds the teleport and
dangling terms, ``new = d · (incoming + D · v) + (1 − d) · v`` (inactive vectors keep their
ranks), reports the block's L1 change and dangling mass to a :class:`BlockStats` accumulator and,
from the new ranks at once, writes the partials of the next iteration.  A block's ranks record
("R", float64[K, size], L1 change, dangling mass) always goes first and stays in its partition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
from pyspark import RDD, Accumulator, AccumulatorParam
from scipy.sparse import csr_matrix

from linkgraph.rank.blocks import BlockPlan, by_block
from linkgraph.rank.codec import decode_partial, encode_partial, f64, i32
from linkgraph.rank.packing import teleport_vector


class BlockStats(AccumulatorParam):
    """Accumulates {block: (L1 change, dangling mass), each float64[K]}; a block reported twice
    (a recomputed task) keeps one entry, so the sums never count a block twice."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, value1: dict, value2: dict) -> dict:
        value1.update(value2)
        return value1


def spread_ranks(edges: RDD, ranks: RDD, plan: BlockPlan, vectors: int) -> RDD:
    """Each block's ranks with the partial sums its ranks send to every block (not yet computed)."""
    return by_block(edges.union(ranks).mapPartitionsWithIndex(_spreader(plan.starts, vectors)), plan.n_blocks)


def _gather_block(items: Iterable, n_vectors: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, list]:
    """A block task's inputs: (summed incoming partials, previous ranks, dangling mask, teleport
    chunks, link chunks)."""
    incoming = np.zeros((n_vectors, size))
    old = mask = None
    teleports, chunks = [], []
    for _, value in items:
        if isinstance(value, bytes):    # a partial sum from a source block
            rows, part = decode_partial(value, n_vectors)
            if rows is not None:
                incoming[:, rows] += part
            else:
                incoming += part
            continue
        tag = value[0]
        if tag == "R":
            old = f64(value[1]).reshape(n_vectors, -1)
        elif tag == "D":
            mask = np.frombuffer(value[1], dtype=bool)
        elif tag == "T":
            teleports.append(value)
        else:
            chunks.append((None, value))
    assert old is not None and mask is not None, "every block has its previous ranks and dangling mask"
    return incoming, old, mask, teleports, chunks


def stepper(starts, n_vectors: int, n: int, damping: float, active: np.ndarray, mass: np.ndarray,
            uniform_rows: np.ndarray | None, uniform: bool, stats: Accumulator) -> Callable[[int, Iterable], Iterator]:
    """The task of a block in one iteration (see ``engine.BlockEngine._iterate``)."""
    spread = _spreader(starts, n_vectors)

    def step(block: int, items: Iterable) -> Iterator:
        size = starts[block + 1] - starts[block]
        incoming, old, mask, teleports, chunks = _gather_block(items, n_vectors, size)
        v = teleport_vector(None if uniform else teleports, n_vectors, size, n, uniform_rows)
        new = damping * (incoming + mass[:, None] * v) + (1.0 - damping) * v
        new[~active] = old[~active]
        l1, block_mass = np.abs(new - old).sum(axis=1), new[:, mask].sum(axis=1)
        stats.add({block: (l1, block_mass)})
        ranks = ("R", new.tobytes(), l1.tobytes(), block_mass.tobytes())
        # the next iteration's partials, from the new ranks (the ranks record goes first)
        yield from spread(block, [(block, ranks), *chunks])

    return step


def _spreader(starts, n_vectors: int) -> Callable[[int, Iterable], Iterator]:
    """The multiply of a block's task: its ranks record (passed on, to stay in its partition)
    and, per destination block, the partial sums of its links (sparse, or dense where smaller)."""

    def spread(block: int, items: Iterable) -> Iterator:
        r, ranks, chunks = None, None, []
        for _, value in items:
            if value[0] == "R":
                ranks = value
                r = f64(value[1]).reshape(n_vectors, -1)
            elif value[0] == "E":
                chunks.append(value)
        if r is None:
            return
        yield block, ranks
        for value in chunks:
            db = value[1]
            size = starts[db + 1] - starts[db]
            rows, partial = _multiply(r, value, size)
            if rows is not None and len(rows) * (4 + 8 * n_vectors) >= size * 8 * n_vectors:
                dense = np.zeros((n_vectors, size))
                dense[:, rows] = partial
                rows, partial = None, dense
            yield db, encode_partial(rows, partial)

    return spread


def _multiply(r: np.ndarray, value: tuple, rows_out: int) -> tuple[np.ndarray | None, np.ndarray]:
    """One chunk's contribution: (destination rows or None for all rows, float64[K, rows])."""
    _, _, rows, indptr, indices, weights = value
    row_ids = i32(rows) if rows else None
    shape = (len(row_ids) if row_ids is not None else rows_out, r.shape[1])
    matrix = csr_matrix((f64(weights), i32(indices), i32(indptr)), shape=shape)
    return row_ids, np.ascontiguousarray((matrix @ r.T).T)
