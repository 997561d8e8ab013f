"""The block plan of the rank engine: which vertices each block holds, and block *i* as partition *i*.

Vertices are cut into B contiguous index ranges (page ids follow reversed host order, so most
links stay inside a block), sized by a byte budget (``block_bytes``): a block's out-links
(``LINK_BYTES`` = 12 bytes each) and vertices (8 + 8·K bytes each) add up to at most the budget,
and B is at least ``TASKS_PER_CORE`` (three) times the cores by default so every core has work.
The cut is made on the out-links counted per bucket of consecutive vertices (``PLAN_BUCKETS``
buckets at most); a block never holds more than ``block_max_vertices`` vertices.  K
personalisation vectors are processed in passes of at most ``MAX_VECTOR_CHUNK`` vectors (one pass
when the whole graph is solved in one task).

A graph whose packed links fit the budget of one task (12·links + 8·pages ≤ ``block_bytes``,
:func:`packed_link_bytes`) is, with ``single_task``, planned as one block solved inside one task.

Everything the engine keeps per block lives in RDDs partitioned by block with an identity
partitioner (:func:`by_block`), so block *i* is partition *i* and B blocks are B tasks per stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from pyspark import RDD
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.rank.graph import SRC

if TYPE_CHECKING:
    from linkgraph.rank.engine import RankParams

BLOCK = "block"            # the column of a block's index
MIB = 1 << 20
DEFAULT_BLOCK_BYTES = 64 * MIB
LINK_BYTES = 12            # int32 local source + float64 weight per packed link
ROW_BYTES = 8              # int32 row id + int32 row pointer per destination row of a hypersparse pair
MAX_VECTOR_CHUNK = 16      # personalisation vectors per pass of the distributed path
PLAN_BUCKETS = 1 << 16     # vertex ranges whose out-links are counted to cut the blocks
TASKS_PER_CORE = 3         # automatic B is at least this many times the cores


@dataclass(frozen=True)
class BlockPlan:
    """Block *b* holds vertices ``starts[b] .. starts[b+1] − 1``; ``vectors`` per pass."""

    starts: tuple[int, ...]
    vectors: int
    single_task: bool = False

    @property
    def n_blocks(self) -> int:
        return len(self.starts) - 1

    def size(self, block: int) -> int:
        return self.starts[block + 1] - self.starts[block]


def packed_link_bytes(links: int, vertices: int) -> int:
    """Bytes of a graph's links packed in one block (indices, weights, one row per vertex)."""
    return LINK_BYTES * links + ROW_BYTES * vertices


def plan_blocks(n: int, n_links: int, params: RankParams, n_vectors: int, cores: int,
                bucket_links: np.ndarray | None = None) -> BlockPlan:
    """Cut ``n`` vertices into blocks.  ``bucket_links[j]``: out-links of the vertices of bucket
    ``j`` (``ceil(n / len(bucket_links))`` consecutive vertices each); needed unless one task."""
    budget = params.block_bytes
    if (params.single_task and params.blocks in (0, 1) and packed_link_bytes(n_links, n) <= budget
            and n <= params.block_max_vertices):
        return BlockPlan((0, n), max(1, min(n_vectors, budget // (16 * max(n, 1)))), True)
    vectors = min(n_vectors, MAX_VECTOR_CHUNK)
    if bucket_links is None or len(bucket_links) == 0:
        bucket_links = np.zeros(1, dtype=np.int64)
    width = math.ceil(n / len(bucket_links))
    firsts = np.arange(len(bucket_links), dtype=np.int64) * width
    vertices = np.clip(n - firsts, 0, width)
    costs = LINK_BYTES * bucket_links.astype(np.float64) + (ROW_BYTES + 8 * vectors) * vertices
    total = float(costs.sum())
    if params.blocks:
        blocks = min(params.blocks, n)
        cum = np.cumsum(costs)
        starts = [0]
        for k in range(1, blocks):
            j = int(np.searchsorted(cum, k * total / blocks, side="left"))
            start = int(min(n, firsts[min(j, len(firsts) - 1)] + width))
            starts.append(min(max(start, starts[-1] + 1), n - (blocks - k)))
        starts.append(n)
        return BlockPlan(tuple(starts), vectors)
    wanted = max(math.ceil(total / budget), TASKS_PER_CORE * max(cores, 1))
    target = min(float(budget), total / wanted)
    starts, acc, acc_vertices = [0], 0.0, 0
    for first, cost, count in zip(firsts.tolist(), costs.tolist(), vertices.tolist(), strict=True):
        if count == 0:
            break
        if acc_vertices and (acc + cost > target or acc_vertices + count > params.block_max_vertices):
            starts.append(first)
            acc, acc_vertices = 0.0, 0
        acc += cost
        acc_vertices += count
    starts.append(n)
    return BlockPlan(tuple(starts), vectors)


def out_links_per_bucket(edges: DataFrame, n: int, buckets: int = PLAN_BUCKETS) -> np.ndarray:
    """Out-links per range of ``ceil(n / buckets)`` consecutive vertices (at most ``buckets`` numbers)."""
    buckets = max(1, min(buckets, n))
    width = math.ceil(n / buckets)
    counts = np.zeros(buckets, dtype=np.int64)
    rows = edges.groupBy((F.col(SRC) / width).cast("long").alias("bucket")).count().collect()
    for row in rows:
        counts[int(row["bucket"])] = int(row["count"])
    return counts


def _identity(block: int) -> int:
    """Partition function: block *i* → partition *i* (one module-level object, so RDDs partitioned
    with it are co-partitioned and unions of them need no shuffle)."""
    return block


def by_block(pairs: RDD, n_blocks: int) -> RDD:
    """``pairs`` (block, value) shuffled so that block *i* is partition *i*, declared in the
    serializer of every other RDD of the engine.  ``partitionBy``'s output is framed pickled lists,
    which ``BatchedSerializer`` and the context's ``AutoBatchedSerializer`` read alike, but ``RDD.union``
    compares serializer objects and, when they differ, inserts a Python pass that re-pickles every
    record: one more Python worker per task, per stage, per iteration."""
    shuffled = pairs.partitionBy(n_blocks, _identity)
    same: RDD = RDD(shuffled._jrdd, shuffled.ctx, shuffled.ctx.serializer)
    same.partitioner = shuffled.partitioner
    return same
