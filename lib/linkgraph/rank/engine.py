"""PageRank engines over a ``RankGraph``: the block engine (default) and the naive join engine.

Semantics shared by both (and by the references in tests):

    r_{t+1} = d · (Mᵀ r_t + D_t · v) + (1 − d) · v,     D_t = Σ_{i dangling} r_t[i]

with damping ``d``, ``M[i, j] = 1/outdeg(i)`` for each followed link i→j (``w(i→j)/Σ_k w(i→k)``
when the graph's edges carry a ``weight`` column, as the domain graph's do) and teleport vector ``v``
(uniform, or a normalised personalisation vector).  Dangling mass is redistributed every
iteration along ``v`` ("strongly preferential", networkx's default), so Σ r = 1 always.  Iteration
starts from the uniform vector 1/n (or a warm start) and stops when ‖r_{t+1} − r_t‖₁ < tol, or after
``max_iter`` iterations (then the run is marked not converged).  With K vectors, each vector stops
on its own: once converged its ranks are frozen while the others go on.

Block engine: vertices are cut into B contiguous index ranges (page ids follow reversed host
order, so most links stay inside a block), sized by a byte budget (``block_bytes``): a block's
out-links (12 bytes each) and vertices (8 + 8·K bytes each) add up to at most the budget, and B
is at least three times the cores by default so every core has work.  Links are packed once per
(source block, destination block) pair, hypersparse (DCSR: only the destination rows that receive
a link) unless a dense row pointer is smaller, in chunks of at most ``block_bytes``; a hub's
in-links are cut across chunks like any other.  Everything lives in RDDs partitioned by block with
an identity partitioner, so block *i* is partition *i* and B blocks are B tasks per stage.  Per
iteration only partial sums move: each source block multiplies its ranks through its chunks
(scipy.sparse, K vectors at once) and sends, per chunk, (destination row, value per vector) for
the rows it reaches — or a dense vector when that is smaller — to the destination block, where
they are summed with the teleport and dangling terms.  The bytes shuffled per iteration are at
most 12 · (distinct (source block, destination page) pairs) · K before compression (rows as
gaps, arrays byte plane by byte plane: compressed, ~8 bytes per entry), plus Spark's framing of
each non-empty (source block, destination block) shuffle segment (≈ 71 bytes, measured:
negligible unless a block pair carries only a few links).  An iteration is one stage of B
tasks with one Python pass each: a task sums the partials sent to its block, reports the block's
L1 change and dangling mass through an accumulator and writes its new partials to the next
shuffle (the stage is run as a shuffle-map stage alone; the next iteration's tasks read its
files).  Every ``lineage_every`` iterations the new rank blocks alone are cached and checkpointed
reliably (the session's checkpoint directory, ``linkgraph.lake.checkpoints``) as
zstd-compressed byte planes, and the partials they send are computed again from them, so the
checkpoint holds no partial sums and a lost executor costs at most that many iterations of
recomputation, never the run; every ``checkpoint_every``
iterations the rank state is also written to the state store (Delta ``rank_state``), which is
what a killed run resumes from.
K personalisation vectors are processed in passes of at most ``MAX_VECTOR_CHUNK`` vectors (one
pass when the whole graph is solved in one task), sharing the packed links.

A graph whose packed links fit the budget of one task (12·links + 8·pages ≤ ``block_bytes``) is,
with ``single_task``, iterated to convergence inside one task: the same arithmetic without a Spark
job per iteration, its per-iteration statistics reported when the task ends.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark import RDD, Accumulator, AccumulatorParam, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    DoubleType,
    IntegerType,
    LongType,
    StructField,
    StructType,
)
from scipy.sparse import coo_matrix, csr_matrix

from linkgraph.lake import checkpoints
from linkgraph.lake.schemas import RANK, VECTOR_ID
from linkgraph.rank.graph import DST, SRC, VERTEX, WEIGHT, RankGraph
from linkgraph.rank.teleport import UNIFORM_VERTEX

if TYPE_CHECKING:
    from linkgraph.lake.config import RankConfig

log = logging.getLogger(__name__)

BLOCK, SB, DB = "block", "sb", "db"
MIB = 1 << 20
DEFAULT_BLOCK_BYTES = 64 * MIB
LINK_BYTES = 12            # int32 local source + float64 weight per packed link
ROW_BYTES = 8              # int32 row id + int32 row pointer per destination row of a hypersparse pair
MAX_VECTOR_CHUNK = 16      # personalisation vectors per pass of the distributed path
PLAN_BUCKETS = 1 << 16     # vertex ranges whose out-links are counted to cut the blocks
TASKS_PER_CORE = 3         # automatic B is at least this many times the cores

EDGE_CHUNK = StructType(
    [
        StructField(SB, IntegerType(), False),
        StructField(DB, IntegerType(), False),
        StructField("rows", BinaryType(), False),     # int32 local destination rows (empty: all rows, dense)
        StructField("indptr", BinaryType(), False),   # int32[rows + 1]
        StructField("indices", BinaryType(), False),  # int32 local source index per link
        StructField("weights", BinaryType(), False),  # float64 1/outdeg(source) per link
    ]
)
TELEPORT_CHUNK = StructType(
    [
        StructField(BLOCK, IntegerType(), False),
        StructField("vectors", BinaryType(), False),  # int32 vector per entry
        StructField("locals", BinaryType(), False),   # int32 local vertex per entry
        StructField("weights", BinaryType(), False),  # float64 teleport weight per entry
    ]
)
RANK_BLOCK = StructType(
    [
        StructField(BLOCK, IntegerType(), False),
        StructField("ranks", BinaryType(), False),          # float64[K, size]
        StructField("l1", BinaryType(), True),              # float64[K]: ‖new − old‖₁ of this block
        StructField("dangling_mass", BinaryType(), True),   # float64[K]: Σ new over dangling vertices
    ]
)
RANKS = StructType(
    [
        StructField(VERTEX, LongType(), False),
        StructField(VECTOR_ID, IntegerType(), False),
        StructField(RANK, DoubleType(), False),
    ]
)


@dataclass(frozen=True)
class RankParams:
    damping: float = 0.85
    tol: float = 1e-6
    max_iter: int = 100
    blocks: int = 0                 # 0: automatic (by block_bytes, at least 3 × the cores)
    block_max_vertices: int = 4_000_000
    checkpoint_every: int = 10      # iterations between rank-state saves (resume)
    single_task: bool = True        # a graph whose packed links fit block_bytes is iterated inside one task
    block_bytes: int = DEFAULT_BLOCK_BYTES
    lineage_every: int = 10         # iterations between reliable checkpoints of the rank RDD

    @classmethod
    def from_config(cls, rank: RankConfig, **overrides: Any) -> RankParams:
        """The engine parameters of the ``rank`` config section, every field of it, with
        ``overrides`` (e.g. analyze's ``max_iter=analysis.authority_max_iter``): the one way from
        config (and the flags the CLI applied to it) to an engine."""
        values = {f.name: getattr(rank, f.name) for f in dataclasses.fields(cls)}
        return cls(**{**values, **overrides})


@dataclass
class IterationStat:
    iteration: int
    l1: float
    dangling_mass: float
    seconds: float
    active_vectors: int = 1


@dataclass
class RankResult:
    ranks: DataFrame                  # RANKS: (vertex, vector_id, rank)
    iterations: int
    converged: bool
    vector_iterations: list[int]      # per vector: iterations until it converged (or max_iter)
    history: list[IterationStat] = field(default_factory=list)
    resumed_from: int | None = None   # the checkpointed iteration a resumed run started after
    blocks: int = 1                   # B of the block engine
    max_value_bytes: int = 0          # largest packed value (one row's binaries) the block engine built
    exchange_rows: int = 0            # destination rows the packed chunks reach: the partial entries per iteration


class StateStore:
    """Where the block engine keeps its rank state between iterations (resume)."""

    def save(self, iteration: int, rank_blocks: DataFrame, active: np.ndarray, vector_iterations: list[int]) -> None:
        raise NotImplementedError

    def load(self, partitions: int) -> tuple[int, DataFrame, np.ndarray, list[int]] | None:
        return None


class NoStateStore(StateStore):
    """Nothing survives the process."""

    def save(self, iteration, rank_blocks, active, vector_iterations):
        return None


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


def _identity(block: int) -> int:
    """Partition function: block *i* → partition *i* (one module-level object, so RDDs partitioned
    with it are co-partitioned and unions of them need no shuffle)."""
    return block


def _by_block(pairs: RDD, n_blocks: int) -> RDD:
    """``pairs`` (block, value) shuffled so that block *i* is partition *i*, declared in the
    serializer of every other RDD here.  ``partitionBy``'s output is framed pickled lists, which
    ``BatchedSerializer`` and the context's ``AutoBatchedSerializer`` read alike, but ``RDD.union``
    compares serializer objects and, when they differ, inserts a Python pass that re-pickles every
    record: one more Python worker per task, per stage, per iteration."""
    shuffled = pairs.partitionBy(n_blocks, _identity)
    same: RDD = RDD(shuffled._jrdd, shuffled.ctx, shuffled.ctx.serializer)
    same.partitioner = shuffled.partitioner
    return same


class _BlockStats(AccumulatorParam):
    """Accumulates {block: (L1 change, dangling mass), each float64[K]}; a block reported twice
    (a recomputed task) keeps one entry, so the sums never count a block twice."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, value1: dict, value2: dict) -> dict:
        value1.update(value2)
        return value1


def _f64(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.float64)


def _i32(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.int32)


def transition_weights(edges: DataFrame) -> DataFrame:
    """(src, dst, w): each link's share of its source's out-weight, ``1/outdeg`` when the edges
    carry no ``weight`` column, else ``weight / Σ weight`` over the source's links (weights > 0)."""
    link_weight = F.col(WEIGHT).cast("double") if WEIGHT in edges.columns else F.lit(1.0)
    weighted = edges.select(SRC, DST, link_weight.alias(WEIGHT))
    out_weight = weighted.groupBy(SRC).agg(F.sum(WEIGHT).alias("out_weight"))
    return weighted.join(out_weight, on=SRC, how="inner").select(
        SRC, DST, (F.col(WEIGHT) / F.col("out_weight")).alias("w"))


def out_links_per_bucket(edges: DataFrame, n: int, buckets: int = PLAN_BUCKETS) -> np.ndarray:
    """Out-links per range of ``ceil(n / buckets)`` consecutive vertices (at most ``buckets`` numbers)."""
    buckets = max(1, min(buckets, n))
    width = math.ceil(n / buckets)
    counts = np.zeros(buckets, dtype=np.int64)
    rows = edges.groupBy((F.col(SRC) / width).cast("long").alias("bucket")).count().collect()
    for row in rows:
        counts[int(row["bucket"])] = int(row["count"])
    return counts


def pack_edges(graph: RankGraph, plan: BlockPlan, budget: int) -> RDD:
    """(source block, ("E", destination block, rows, indptr, indices, weights)) per chunk of at
    most ``budget`` bytes, partitioned by source block."""
    starts = np.asarray(plan.starts, dtype=np.int64)
    max_links = max(1, (budget - 8) // (LINK_BYTES + ROW_BYTES))

    def assign(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            src, dst = pdf[SRC].to_numpy(np.int64), pdf[DST].to_numpy(np.int64)
            sb = np.searchsorted(starts, src, side="right") - 1
            db = np.searchsorted(starts, dst, side="right") - 1
            yield pd.DataFrame({SB: sb.astype(np.int32), DB: db.astype(np.int32),
                                "s": (src - starts[sb]).astype(np.int32), "d": (dst - starts[db]).astype(np.int32),
                                "w": pdf["w"].to_numpy(np.float64)})

    def pack(pdf: pd.DataFrame) -> pd.DataFrame:
        sb, db = int(pdf[SB].iat[0]), int(pdf[DB].iat[0])
        size = int(starts[db + 1] - starts[db])
        s_all, d_all = pdf["s"].to_numpy(np.int32), pdf["d"].to_numpy(np.int32)
        order = np.lexsort((s_all, d_all))
        s_all, d_all, w_all = s_all[order], d_all[order], pdf["w"].to_numpy(np.float64)[order]
        out: dict[str, list] = {SB: [], DB: [], "rows": [], "indptr": [], "indices": [], "weights": []}
        for lo in range(0, len(order), max_links):
            d = d_all[lo:lo + max_links]
            rows, first = np.unique(d, return_index=True)
            if 2 * len(rows) < size:    # hypersparse is smaller than a row pointer over every row
                indptr = np.append(first, len(d)).astype(np.int32)
                row_bytes = rows.astype(np.int32).tobytes()
            else:
                indptr = np.zeros(size + 1, dtype=np.int32)
                np.cumsum(np.bincount(d, minlength=size), out=indptr[1:])
                row_bytes = b""
            out[SB].append(sb)
            out[DB].append(db)
            out["rows"].append(row_bytes)
            out["indptr"].append(indptr.tobytes())
            out["indices"].append(s_all[lo:lo + max_links].tobytes())
            out["weights"].append(w_all[lo:lo + max_links].tobytes())
        return pd.DataFrame(out)

    assigned_schema = f"{SB} int, {DB} int, s int, d int, w double"
    packed = (transition_weights(graph.edges).mapInPandas(assign, assigned_schema)
              .groupBy(SB, DB).applyInPandas(pack, EDGE_CHUNK))
    return _by_block(packed.rdd.map(
        lambda row: (row[0], ("E", row[1], bytes(row[2]), bytes(row[3]), bytes(row[4]), bytes(row[5])))
    ), plan.n_blocks)


def dangling_blocks(edges: RDD, plan: BlockPlan) -> RDD:
    """(block, ("D", bool[size])) per block: vertices with no packed out-link."""
    starts = plan.starts

    def build(block: int, items: Iterable) -> Iterator:
        has_out = np.zeros(starts[block + 1] - starts[block], dtype=bool)
        for _, value in items:
            has_out[_i32(value[4])] = True
        yield block, ("D", (~has_out).tobytes())

    return edges.mapPartitionsWithIndex(build, preservesPartitioning=True)


def teleport_blocks(teleport: DataFrame, plan: BlockPlan, first_vector: int, vectors: int, budget: int) -> RDD:
    """(block, ("T", vectors, locals, weights)) chunks of the teleport entries of vectors
    ``first_vector .. first_vector + vectors − 1`` (renumbered from 0), partitioned by block."""
    starts = np.asarray(plan.starts, dtype=np.int64)
    per_chunk = max(1, budget // 16)
    selected = teleport.where(F.col(VECTOR_ID).between(first_vector, first_vector + vectors - 1)
                              & (F.col(VERTEX) != UNIFORM_VERTEX)).select(
        F.col(VERTEX).cast("long").alias(VERTEX), (F.col(VECTOR_ID) - first_vector).cast("int").alias(VECTOR_ID),
        F.col("weight").cast("double").alias("weight"))

    def assign(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            vertex = pdf[VERTEX].to_numpy(np.int64)
            block = np.searchsorted(starts, vertex, side="right") - 1
            yield pd.DataFrame({BLOCK: block.astype(np.int32), "local": (vertex - starts[block]).astype(np.int32),
                                VECTOR_ID: pdf[VECTOR_ID].to_numpy(np.int32), "weight": pdf["weight"].to_numpy()})

    def pack(pdf: pd.DataFrame) -> pd.DataFrame:
        block = int(pdf[BLOCK].iat[0])
        vec, loc = pdf[VECTOR_ID].to_numpy(np.int32), pdf["local"].to_numpy(np.int32)
        wt = pdf["weight"].to_numpy(np.float64)
        chunks = range(0, len(pdf), per_chunk)
        return pd.DataFrame({
            BLOCK: [block] * len(chunks),
            "vectors": [vec[lo:lo + per_chunk].tobytes() for lo in chunks],
            "locals": [loc[lo:lo + per_chunk].tobytes() for lo in chunks],
            "weights": [wt[lo:lo + per_chunk].tobytes() for lo in chunks],
        })

    packed = (selected.mapInPandas(assign, f"{BLOCK} int, local int, {VECTOR_ID} int, weight double")
              .groupBy(BLOCK).applyInPandas(pack, TELEPORT_CHUNK))
    return _by_block(packed.rdd.map(
        lambda row: (row[0], ("T", bytes(row[1]), bytes(row[2]), bytes(row[3])))
    ), plan.n_blocks)


def _teleport_vector(entries: list | None, vectors: int, size: int, n: int,
                     uniform: np.ndarray | None = None) -> np.ndarray | float:
    """A block's teleport weights: float64[K, size] of its entries, 1/n in the rows of the vectors
    ``uniform`` marks; with no entries at all (every vector uniform) the scalar 1/n.  The uniform
    vector is implicit: numpy broadcasts 1/n, and no table or shuffle holds n entries of it."""
    if entries is None:
        return 1.0 / n
    v = np.zeros((vectors, size))
    for _, vec, loc, wt in entries:
        np.add.at(v, (_i32(vec), _i32(loc)), _f64(wt))
    if uniform is not None and uniform.any():
        v[uniform] = 1.0 / n
    return v


def uniform_vectors(teleport: DataFrame, first_vector: int, vectors: int) -> np.ndarray:
    """bool[vectors]: which of vectors ``first_vector ..`` are uniform over all pages, marked in
    ``teleport`` by one row at ``teleport.UNIFORM_VERTEX`` (at most K rows reach the driver)."""
    mask = np.zeros(vectors, dtype=bool)
    marked = teleport.where((F.col(VERTEX) == UNIFORM_VERTEX)
                            & F.col(VECTOR_ID).between(first_vector, first_vector + vectors - 1))
    for row in marked.select(VECTOR_ID).distinct().collect():
        mask[row[0] - first_vector] = True
    return mask


def _chunk_rows(value: tuple) -> int:
    """Destination rows an ("E", ...) chunk reaches."""
    if value[2]:
        return len(value[2]) // 4
    return int(np.count_nonzero(np.diff(_i32(value[3]))))


def _planes(values: np.ndarray) -> bytes:
    """The bytes of a fixed-width array stored plane by plane (every element's first byte, then
    every second byte, ...): the high bytes of small row gaps and of doubles of like magnitude
    line up into runs that Spark's shuffle compression (LZ4 by default) removes."""
    width = values.dtype.itemsize
    return np.ascontiguousarray(values.reshape(-1).view(np.uint8).reshape(-1, width).T).tobytes()


def _unplanes(value: bytes, dtype: type, count: int, offset: int) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    planes = np.frombuffer(value, dtype=np.uint8, count=count * width, offset=offset).reshape(width, count)
    return np.ascontiguousarray(planes.T).view(dtype).reshape(count)


def _encode_partial(rows: np.ndarray | None, partial: np.ndarray) -> bytes:
    """A partial sum as one bytes value: int32 row count (−1: dense, every row), the gaps between
    the (ascending) rows as uint32, then float64[K, rows], the arrays byte plane by byte plane.
    One flat value rather than a tuple keeps the serialized framing of each (source block,
    destination block) record to the pickle of one bytes object; gaps and planes let the shuffle
    compression take a sparse entry from 12 bytes to about 8 (measured in docs/scaling.md)."""
    if rows is None:
        return np.int32(-1).tobytes() + _planes(partial)
    gaps = np.diff(rows, prepend=0).astype(np.uint32)
    return np.int32(len(rows)).tobytes() + _planes(gaps) + _planes(partial)


def _decode_partial(value: bytes, n_vectors: int) -> tuple[np.ndarray | None, np.ndarray]:
    count = int(np.frombuffer(value, dtype=np.int32, count=1)[0])
    if count < 0:
        size = (len(value) - 4) // 8
        return None, _unplanes(value, np.float64, size, 4).reshape(n_vectors, -1)
    rows = np.cumsum(_unplanes(value, np.uint32, count, 4), dtype=np.int64)
    return rows, _unplanes(value, np.float64, count * n_vectors, 4 + 4 * count).reshape(n_vectors, -1)


def _multiply(r: np.ndarray, value: tuple, rows_out: int) -> tuple[np.ndarray | None, np.ndarray]:
    """One chunk's contribution: (destination rows or None for all rows, float64[K, rows])."""
    _, _, rows, indptr, indices, weights = value
    row_ids = _i32(rows) if rows else None
    shape = (len(row_ids) if row_ids is not None else rows_out, r.shape[1])
    matrix = csr_matrix((_f64(weights), _i32(indices), _i32(indptr)), shape=shape)
    return row_ids, np.ascontiguousarray((matrix @ r.T).T)


class BlockEngine:
    name = "fast"

    def __init__(self, spark: SparkSession, params: RankParams, partitions: int | None = None):
        self.spark = spark
        self.params = params
        self.cores = partitions or spark.sparkContext.defaultParallelism
        self._uniform: np.ndarray | None = None   # the current pass's vectors marked uniform in its teleport

    def plan(self, graph: RankGraph, n_vectors: int) -> BlockPlan:
        n_links = graph.n_edges if graph.n_edges is not None else graph.edges.count()
        one_task = plan_blocks(graph.n, n_links, self.params, n_vectors, self.cores)
        if one_task.single_task:
            return one_task
        return plan_blocks(graph.n, n_links, self.params, n_vectors, self.cores,
                           out_links_per_bucket(graph.edges, graph.n))

    def run(
        self,
        graph: RankGraph,
        teleport: DataFrame | None = None,
        n_vectors: int = 1,
        initial: DataFrame | None = None,
        state: StateStore | None = None,
        progress: Callable[[IterationStat], None] | None = None,
    ) -> RankResult:
        params = self.params
        if graph.n == 0:
            return RankResult(self.spark.createDataFrame([], RANKS), 0, True, [0] * n_vectors, blocks=0)
        plan = self.plan(graph, n_vectors)
        log.info("pagerank: %d block(s)%s, %d vector(s) per pass", plan.n_blocks,
                 " in one task" if plan.single_task else "", plan.vectors)
        edges = pack_edges(graph, plan, params.block_bytes).persist(StorageLevel.MEMORY_AND_DISK)
        dangling = dangling_blocks(edges, plan).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            # pack the links once, before the timed iterations; the largest value and the partial
            # entries an iteration sends (P, distinct (source block, destination page) pairs)
            max_value, exchange_rows = edges.map(lambda kv: (sum(len(b) for b in kv[1][2:]), _chunk_rows(kv[1]))).fold(
                (0, 0), lambda a, b: (max(a[0], b[0]), a[1] + b[1]))
            dangling.count()
            passes = range(0, n_vectors, plan.vectors)
            if len(passes) > 1 and state is not None and not isinstance(state, NoStateStore):
                log.warning("pagerank: %d vectors in %d passes: the rank state is not saved", n_vectors, len(passes))
                state = None
            results = []
            for first in passes:
                vectors = min(plan.vectors, n_vectors - first)
                tele = None if teleport is None else teleport_blocks(teleport, plan, first, vectors,
                                                                     params.block_bytes)
                self._uniform = None if teleport is None else uniform_vectors(teleport, first, vectors)
                start = None if initial is None else initial.where(
                    F.col(VECTOR_ID).between(first, first + vectors - 1)).withColumn(
                    VECTOR_ID, F.col(VECTOR_ID) - first)
                result = self._pass(graph.n, plan, edges, dangling, tele, vectors, start,
                                    state or NoStateStore(), progress)
                result.max_value_bytes = max(max_value, 8 * vectors * max(map(plan.size, range(plan.n_blocks))))
                result.exchange_rows = exchange_rows
                results.append((first, result))
            return _merge_passes(results, plan.n_blocks)
        finally:
            edges.unpersist()
            dangling.unpersist()

    def _pass(self, n: int, plan: BlockPlan, edges: RDD, dangling: RDD, tele: RDD | None, vectors: int,
              initial: DataFrame | None, state: StateStore, progress) -> RankResult:
        resumed = state.load(plan.n_blocks)
        start = self._start(n, plan, dangling, vectors, initial, resumed)
        if plan.single_task and resumed is None:
            return self._solve_in_one_task(edges, dangling, tele, start.ranks, n, vectors, progress)
        loop = _Loop(plan, edges, dangling, tele, n, vectors, start, state, progress)
        self._run_loop(loop)
        return RankResult(
            ranks=explode_rank_blocks(self._rank_frame(loop.ranks), plan.starts, vectors),
            iterations=loop.iteration,
            converged=not loop.active.any(),
            vector_iterations=loop.vector_iterations,
            history=loop.history,
            resumed_from=resumed[0] if resumed is not None else None,
            blocks=plan.n_blocks,
        )

    def _start(self, n: int, plan: BlockPlan, dangling: RDD, vectors: int, initial: DataFrame | None,
               resumed: tuple[int, DataFrame, np.ndarray, list[int]] | None) -> _Start:
        """Where a pass starts: the resumed state, a warm start or the uniform vector."""
        if resumed is not None:
            iteration, ranks_df, active, vector_iterations = resumed
            log.info("resuming from iteration %d", iteration)
            return _Start(iteration, rank_rdd(ranks_df, plan, vectors, n), active, vector_iterations)
        if initial is not None:
            ranks = rank_rdd(rank_blocks_from_table(initial, n, vectors, plan), plan, vectors, n)
        else:
            ranks = initial_ranks(dangling, plan, vectors, n)
        return _Start(0, ranks, np.ones(vectors, dtype=bool), [self.params.max_iter] * vectors)

    def _run_loop(self, loop: _Loop) -> None:
        """Iterate ``loop`` until every vector converged or ``max_iter``: one stage per iteration,
        the lineage cut every ``lineage_every`` iterations, the state saved every ``checkpoint_every``."""
        params = self.params
        loop.ranks = loop.ranks.persist(StorageLevel.MEMORY_AND_DISK)
        dangling_mass = self._dangling_mass(loop.ranks, loop.dangling, loop.vectors)
        # each block's ranks with the partial sums sent to it from every block's ranks (not yet computed)
        carried = _spread_ranks(loop.edges, loop.ranks, loop.plan, loop.vectors)
        while loop.iteration < params.max_iter and loop.active.any():
            started = time.monotonic()
            loop.iteration += 1
            previous = carried
            carried, stats = self._iterate(loop.plan, loop.edges, loop.dangling, loop.tele, carried, dangling_mass,
                                           loop.active, loop.n, loop.vectors)
            if params.lineage_every and loop.iteration % params.lineage_every == 0:
                carried = self._cut_at_ranks(carried, loop)
            else:
                _run_shuffle_map_stage(carried)
            l1, dangling_mass = self._stats(stats, loop.plan.n_blocks)
            previous.unpersist()
            loop.ranks.unpersist()
            loop.ranks = _rank_blocks_of(carried)
            loop.record(l1, dangling_mass, params, time.monotonic() - started)
            if params.checkpoint_every and loop.iteration % params.checkpoint_every == 0 and loop.active.any():
                loop.state.save(loop.iteration, self._rank_frame(loop.ranks), loop.active, loop.vector_iterations)
            if loop.progress:
                loop.progress(loop.history[-1])

    def _cut_at_ranks(self, carried: RDD, loop: _Loop) -> RDD:
        """The lineage cut: only the new rank blocks are checkpointed (zstd-compressed byte planes,
        n × K × about 7 bytes), then the partials they send are computed again from them (one
        more multiply stage): what the next iteration reads depends on the checkpoint and the
        cached links alone, and the checkpoint holds no partial sums."""
        packed = self._cut_lineage(_rank_blocks_of(carried).mapValues(pack_rank_record))
        if loop.cut is not None:    # the previous cut: nothing live reads it any more
            loop.cut.unpersist()
            checkpoints.drop_rdd(self.spark, loop.cut)
        loop.cut = packed
        ranks = packed.mapValues(unpack_rank_record)
        respread = _spread_ranks(loop.edges, ranks, loop.plan, loop.vectors)
        _run_shuffle_map_stage(respread)
        return respread

    def _cut_lineage(self, rdd: RDD) -> RDD:
        """``rdd`` computed, cached and checkpointed reliably in one job (it survives a lost
        executor: lost partitions are read back from the session's checkpoint directory)."""
        return checkpoints.cut_rdd(self.spark, rdd)

    def _rank_frame(self, ranks: RDD) -> DataFrame:
        return self.spark.createDataFrame(ranks.map(lambda kv: (kv[0], kv[1][1], kv[1][2], kv[1][3])), RANK_BLOCK)

    def _solve_in_one_task(self, edges: RDD, dangling: RDD, tele: RDD | None, ranks: RDD, n: int, n_vectors: int,
                           progress) -> RankResult:
        """The whole power iteration inside one task, for a graph whose packed links fit the
        budget of one task: the same arithmetic as :meth:`_iterate` without a Spark job per
        iteration.  Only the per-iteration statistics reach the driver; the ranks stay one cached
        value of 8·K·n bytes (at most the budget).  Nothing is checkpointed
        mid-run: such a run takes seconds to minutes, and a killed one simply starts over."""
        p, uniform_rows = self.params, self._uniform
        uniform = tele is None

        def solve(items: Iterable) -> Iterator:
            matrix, r, dangling_mask, teleports = _gather_one_task(items, n_vectors, n)
            v = _teleport_vector(None if uniform else teleports, n_vectors, n, n, uniform_rows)
            r, history, vector_iterations = _power_iterate(matrix, r, dangling_mask, v, p.damping, p.tol, p.max_iter)
            yield 0, ("S", r.tobytes(), np.asarray(history, dtype=np.float64).tobytes(), vector_iterations.tobytes())

        inputs = edges.union(dangling).union(ranks)
        if tele is not None:
            inputs = inputs.union(tele)
        solved = inputs.mapPartitions(solve, preservesPartitioning=True).persist(StorageLevel.MEMORY_AND_DISK)
        history_bytes, iterations_bytes = solved.map(lambda kv: (kv[1][2], kv[1][3])).first()
        history = [
            IterationStat(int(it), float(l1), float(mass), float(seconds), int(active))
            for it, l1, mass, seconds, active in _f64(history_bytes).reshape(-1, 5)
        ]
        for stat in history:
            if progress:
                progress(stat)
        ranks_out = solved.mapValues(lambda value: ("R", value[1], None, None))
        return RankResult(
            ranks=explode_rank_blocks(self._rank_frame(ranks_out), (0, n), n_vectors),
            iterations=history[-1].iteration if history else 0,
            converged=bool(history) and history[-1].active_vectors == 0,
            vector_iterations=[int(i) for i in np.frombuffer(iterations_bytes, dtype=np.int32)],
            history=history,
            blocks=1,
        )

    @staticmethod
    def _dangling_mass(ranks: RDD, dangling: RDD, n_vectors: int) -> np.ndarray:
        def mass(items: Iterable) -> Iterator[bytes]:
            r = mask = None
            for _, value in items:
                if value[0] == "D":
                    mask = np.frombuffer(value[1], dtype=bool)
                else:
                    r = _f64(value[1]).reshape(n_vectors, -1)
            if r is not None and mask is not None:
                yield r[:, mask].sum(axis=1).tobytes()

        rows = ranks.union(dangling).mapPartitions(mass).collect()
        return np.sum([_f64(r) for r in rows], axis=0) if rows else np.zeros(n_vectors)

    @staticmethod
    def _stats(stats: Accumulator, n_blocks: int) -> tuple[np.ndarray, np.ndarray]:
        """The L1 change and the dangling mass of the iteration just run, summed over the blocks:
        every statistic came back with the combine tasks (the ``stats`` accumulator), so no
        Python pass reads the blocks again and nothing but B × 2K numbers reaches the driver."""
        per_block = stats.value
        stats.value = {}    # the driver keeps every accumulator registered: keep only an empty one
        assert len(per_block) == n_blocks, f"statistics of {len(per_block)} of {n_blocks} blocks"
        rows = [per_block[b] for b in sorted(per_block)]
        l1 = np.sum([r[0] for r in rows], axis=0)
        mass = np.sum([r[1] for r in rows], axis=0)
        return l1, mass

    def _iterate(self, plan: BlockPlan, edges: RDD, dangling: RDD, tele: RDD | None, carried: RDD,
                 dangling_mass: np.ndarray, active: np.ndarray, n: int, n_vectors: int) -> tuple[RDD, Accumulator]:
        """One iteration in one Python pass per block: each block's task sums the partials sent to
        it (``carried``: the previous iteration's), computes its new ranks and at once multiplies
        them with its own links, so its output (its new ranks, kept in its partition, and the
        partials for every destination block) is shuffled into the next ``carried`` (not yet
        computed).  Returns it and the accumulator the tasks report each block's (L1 change,
        dangling mass) to."""
        stats = self.spark.sparkContext.accumulator({}, _BlockStats())
        step = _stepper(plan.starts, n_vectors, n, self.params.damping, active.copy(), dangling_mass.copy(),
                        None if tele is None else self._uniform, tele is None, stats)
        inputs = carried.union(dangling).union(edges)
        if tele is not None:
            inputs = inputs.union(tele)
        # not preservesPartitioning: partitionBy would take the output as partitioned already and not shuffle it
        return _by_block(inputs.mapPartitionsWithIndex(step), plan.n_blocks), stats


@dataclass
class _Start:
    """Where a pass of the distributed path starts."""

    iteration: int
    ranks: RDD
    active: np.ndarray
    vector_iterations: list[int]


class _Loop:
    """The state of a pass's iterations: the inputs, the current rank RDD, the active vectors and
    the history."""

    def __init__(self, plan: BlockPlan, edges: RDD, dangling: RDD, tele: RDD | None, n: int, vectors: int,
                 start: _Start, state: StateStore, progress) -> None:
        self.plan, self.edges, self.dangling, self.tele, self.n, self.vectors = plan, edges, dangling, tele, n, vectors
        self.iteration, self.ranks = start.iteration, start.ranks
        self.active, self.vector_iterations = start.active, start.vector_iterations
        self.state, self.progress = state, progress
        self.history: list[IterationStat] = []
        self.cut: RDD | None = None     # the checkpointed rank blocks of the last lineage cut

    def record(self, l1: np.ndarray, dangling_mass: np.ndarray, params: RankParams, seconds: float) -> None:
        """The iteration's statistics; vectors whose change fell below ``tol`` stop."""
        for k in np.flatnonzero(self.active):
            if l1[k] < params.tol:
                self.active[k] = False
                self.vector_iterations[k] = self.iteration
        self.history.append(IterationStat(self.iteration, float(l1.max()), float(dangling_mass.max()), seconds,
                                          int(self.active.sum())))


def _spread_ranks(edges: RDD, ranks: RDD, plan: BlockPlan, vectors: int) -> RDD:
    """Each block's ranks with the partial sums its ranks send to every block (not yet computed)."""
    return _by_block(edges.union(ranks).mapPartitionsWithIndex(_spreader(plan.starts, vectors)), plan.n_blocks)


def _gather_block(items: Iterable, n_vectors: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, list]:
    """A block task's inputs: (summed incoming partials, previous ranks, dangling mask, teleport
    chunks, link chunks)."""
    incoming = np.zeros((n_vectors, size))
    old = mask = None
    teleports, chunks = [], []
    for _, value in items:
        if isinstance(value, bytes):    # a partial sum from a source block
            rows, part = _decode_partial(value, n_vectors)
            if rows is not None:
                incoming[:, rows] += part
            else:
                incoming += part
            continue
        tag = value[0]
        if tag == "R":
            old = _f64(value[1]).reshape(n_vectors, -1)
        elif tag == "D":
            mask = np.frombuffer(value[1], dtype=bool)
        elif tag == "T":
            teleports.append(value)
        else:
            chunks.append((None, value))
    assert old is not None and mask is not None, "every block has its previous ranks and dangling mask"
    return incoming, old, mask, teleports, chunks


def _stepper(starts, n_vectors: int, n: int, damping: float, active: np.ndarray, mass: np.ndarray,
             uniform_rows: np.ndarray | None, uniform: bool, stats: Accumulator) -> Callable[[int, Iterable], Iterator]:
    """The task of a block in one iteration (see ``BlockEngine._iterate``)."""
    spread = _spreader(starts, n_vectors)

    def step(block: int, items: Iterable) -> Iterator:
        size = starts[block + 1] - starts[block]
        incoming, old, mask, teleports, chunks = _gather_block(items, n_vectors, size)
        v = _teleport_vector(None if uniform else teleports, n_vectors, size, n, uniform_rows)
        new = damping * (incoming + mass[:, None] * v) + (1.0 - damping) * v
        new[~active] = old[~active]
        l1, block_mass = np.abs(new - old).sum(axis=1), new[:, mask].sum(axis=1)
        stats.add({block: (l1, block_mass)})
        ranks = ("R", new.tobytes(), l1.tobytes(), block_mass.tobytes())
        # the next iteration's partials, from the new ranks (the ranks record goes first)
        yield from spread(block, [(block, ranks), *chunks])

    return step


def _gather_one_task(items: Iterable, n_vectors: int, n: int) -> tuple[csr_matrix, np.ndarray, np.ndarray, list]:
    """The single task's inputs: (the whole transition matrix, ranks, dangling mask, teleport chunks)."""
    row_ids, cols, weights, teleports = [], [], [], []
    r = dangling_mask = None
    for _, value in items:
        if value[0] == "E":
            indptr = _i32(value[3])
            rows = _i32(value[2]) if value[2] else np.arange(len(indptr) - 1, dtype=np.int32)
            row_ids.append(np.repeat(rows, np.diff(indptr)))
            cols.append(_i32(value[4]))
            weights.append(_f64(value[5]))
        elif value[0] == "D":
            dangling_mask = np.frombuffer(value[1], dtype=bool)
        elif value[0] == "T":
            teleports.append(value)
        else:
            r = _f64(value[1]).reshape(n_vectors, n).copy()
    assert r is not None and dangling_mask is not None, "the block's ranks and dangling mask"
    if row_ids:
        matrix = coo_matrix((np.concatenate(weights), (np.concatenate(row_ids), np.concatenate(cols))),
                            shape=(n, n)).tocsr()
    else:
        matrix = coo_matrix((n, n)).tocsr()
    return matrix, r, dangling_mask, teleports


def _power_iterate(matrix: csr_matrix, r: np.ndarray, dangling_mask: np.ndarray, v: np.ndarray | float,
                   damping: float, tol: float, max_iter: int) -> tuple[np.ndarray, list, np.ndarray]:
    """The power iteration to convergence: (ranks, per-iteration (iteration, L1, dangling mass,
    seconds, active vectors), iterations per vector)."""
    n_vectors = r.shape[0]
    active = np.ones(n_vectors, dtype=bool)
    vector_iterations = np.full(n_vectors, max_iter, dtype=np.int32)
    history = []
    mass = r[:, dangling_mask].sum(axis=1)
    iteration = 0
    while iteration < max_iter and active.any():
        started = time.monotonic()
        iteration += 1
        new = damping * (np.ascontiguousarray((matrix @ r.T).T) + mass[:, None] * v) + (1.0 - damping) * v
        new[~active] = r[~active]
        l1 = np.abs(new - r).sum(axis=1)
        r, mass = new, new[:, dangling_mask].sum(axis=1)
        finished = active & (l1 < tol)
        vector_iterations[finished] = iteration
        active &= ~finished
        history.append((iteration, l1.max(), mass.max(), time.monotonic() - started, active.sum()))
    return r, history, vector_iterations


def pack_rank_record(value: tuple) -> tuple:
    """A rank record as its checkpoint stores it: ("Z", zstd of the ranks' byte planes, raw
    length, l1, dangling mass).  Ranks of one graph share their exponent bytes, which the planes
    line up for the compressor."""
    planes = _planes(_f64(value[1]))
    return "Z", pa.compress(planes, codec="zstd", asbytes=True), len(planes), value[2], value[3]


def unpack_rank_record(value: tuple) -> tuple:
    """The rank record ``pack_rank_record`` stored."""
    planes = pa.decompress(value[1], decompressed_size=value[2], codec="zstd", asbytes=True)
    return "R", _unplanes(planes, np.float64, value[2] // 8, 0).tobytes(), value[3], value[4]


def _spreader(starts, n_vectors: int) -> Callable[[int, Iterable], Iterator]:
    """The multiply of a block's task: its ranks record (passed on, to stay in its partition)
    and, per destination block, the partial sums of its links (sparse, or dense where smaller)."""

    def spread(block: int, items: Iterable) -> Iterator:
        r, ranks, chunks = None, None, []
        for _, value in items:
            if value[0] == "R":
                ranks = value
                r = _f64(value[1]).reshape(n_vectors, -1)
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
            yield db, _encode_partial(rows, partial)

    return spread


def _run_shuffle_map_stage(shuffled: RDD) -> None:
    """Run the stage that writes the shuffle ``shuffled`` reads (the block tasks of an iteration)
    and nothing after it: the next iteration's block tasks read the shuffle files directly, so an
    iteration is one stage of B tasks.  An action on ``shuffled`` itself would add a stage of B
    more tasks that only read the shuffle back (and cache it).  ``SparkContext.submitMapStage`` is
    what adaptive query execution runs its stages with; its outputs stay registered with the map
    output tracker, and a lost executor's are recomputed from the lineage like any others."""
    rdd = shuffled._jrdd.rdd()
    while True:
        dependency = rdd.dependencies().head()
        if dependency.getClass().getSimpleName() == "ShuffleDependency":
            break
        rdd = dependency.rdd()
    shuffled.ctx._jsc.sc().submitMapStage(dependency).get()


def _rank_blocks_of(carried: RDD) -> RDD:
    """The rank records of ``carried`` (its partial sums left out), partitioning kept."""
    return carried.filter(lambda kv: not isinstance(kv[1], bytes))


def initial_ranks(dangling: RDD, plan: BlockPlan, n_vectors: int, n: int) -> RDD:
    """Uniform 1/n for every vector, built in each block's task."""
    starts = plan.starts

    def build(block: int, items: Iterable) -> Iterator:
        for _ in items:
            yield block, ("R", np.full((n_vectors, starts[block + 1] - starts[block]), 1.0 / n).tobytes(), None, None)

    return dangling.mapPartitionsWithIndex(build, preservesPartitioning=True)


def rank_rdd(rank_blocks: DataFrame, plan: BlockPlan, n_vectors: int, n: int) -> RDD:
    """RANK_BLOCK rows (block, ranks) -> the rank RDD partitioned by block."""
    return _by_block(rank_blocks.select(BLOCK, "ranks").rdd.map(
        lambda row: (row[0], ("R", bytes(row[1]), None, None))), plan.n_blocks)


def _merge_passes(results: list[tuple[int, RankResult]], blocks: int) -> RankResult:
    """The results of vector passes as one (vector ids shifted back)."""
    if len(results) == 1:
        return results[0][1]
    ranks = None
    for first, result in results:
        shifted = result.ranks.withColumn(VECTOR_ID, (F.col(VECTOR_ID) + first).cast("int"))
        ranks = shifted if ranks is None else ranks.unionByName(shifted)
    assert ranks is not None
    by_iteration: dict[int, list[IterationStat]] = {}
    for _, result in results:
        for stat in result.history:
            by_iteration.setdefault(stat.iteration, []).append(stat)
    history = [
        IterationStat(i, max(s.l1 for s in stats), max(s.dangling_mass for s in stats),
                      sum(s.seconds for s in stats), sum(s.active_vectors for s in stats))
        for i, stats in sorted(by_iteration.items())
    ]
    return RankResult(
        ranks=ranks,
        iterations=max(r.iterations for _, r in results),
        converged=all(r.converged for _, r in results),
        vector_iterations=[i for _, r in results for i in r.vector_iterations],
        history=history,
        blocks=blocks,
        max_value_bytes=max(r.max_value_bytes for _, r in results),
        exchange_rows=max(r.exchange_rows for _, r in results),
    )


def explode_rank_blocks(ranks: DataFrame, starts: tuple[int, ...], n_vectors: int) -> DataFrame:
    """Rank blocks -> one row per (vertex, vector_id)."""

    def explode(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            for block, buf in zip(pdf[BLOCK], pdf["ranks"], strict=True):
                r = _f64(buf).reshape(n_vectors, -1)
                vertices = np.arange(r.shape[1], dtype=np.int64) + starts[int(block)]
                for k in range(n_vectors):
                    yield pd.DataFrame({VERTEX: vertices, VECTOR_ID: np.full(r.shape[1], k, dtype=np.int32),
                                        RANK: r[k]})

    return ranks.select(BLOCK, "ranks").mapInPandas(explode, RANKS)


def rank_blocks_from_table(ranks: DataFrame, n: int, n_vectors: int, plan: BlockPlan) -> DataFrame:
    """RANKS rows (e.g. a previous run) -> RANK_BLOCK rows, one per block; vertices without a
    rank start at 1/n and each vector is renormalised to sum 1 (a warm start)."""
    starts = np.asarray(plan.starts, dtype=np.int64)
    totals = ranks.groupBy(VECTOR_ID).agg(F.sum(RANK).alias("total"), F.count("*").alias("count")).collect()
    total = np.zeros(n_vectors)
    covered = np.zeros(n_vectors)
    for row in totals:
        if 0 <= row[VECTOR_ID] < n_vectors:
            total[row[VECTOR_ID]] = row["total"]
            covered[row[VECTOR_ID]] = row["count"]
    scale = 1.0 / (total + (n - covered) / n)
    spark = ranks.sparkSession
    every_block = spark.range(len(starts) - 1).select(
        F.col("id").cast("int").alias(BLOCK), F.lit(-1).cast("int").alias("local"),
        F.lit(-1).cast("int").alias(VECTOR_ID), F.lit(0.0).alias(RANK))

    def assign(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            vertex = pdf[VERTEX].to_numpy(np.int64)
            block = np.searchsorted(starts, vertex, side="right") - 1
            yield pd.DataFrame({BLOCK: block.astype(np.int32), "local": (vertex - starts[block]).astype(np.int32),
                                VECTOR_ID: pdf[VECTOR_ID].to_numpy(np.int32), RANK: pdf[RANK].to_numpy(np.float64)})

    def build(pdf: pd.DataFrame) -> pd.DataFrame:
        block = int(pdf[BLOCK].iat[0])
        r = np.full((n_vectors, int(starts[block + 1] - starts[block])), np.nan)
        known = (pdf[VECTOR_ID] >= 0) & (pdf[VECTOR_ID] < n_vectors)
        r[pdf[VECTOR_ID][known].to_numpy(), pdf["local"][known].to_numpy()] = pdf[RANK][known].to_numpy()
        r = np.where(np.isnan(r), 1.0 / n, r) * scale[:, None]
        return pd.DataFrame({BLOCK: [block], "ranks": [r.tobytes()], "l1": [None], "dangling_mass": [None]})

    located = ranks.select(VERTEX, VECTOR_ID, RANK).mapInPandas(
        assign, f"{BLOCK} int, local int, {VECTOR_ID} int, {RANK} double")
    return located.unionByName(every_block).groupBy(BLOCK).applyInPandas(build, RANK_BLOCK)

