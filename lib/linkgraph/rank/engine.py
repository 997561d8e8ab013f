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
order, so most links stay inside a block).  Links are packed once into one CSR matrix per
(source block, destination block) pair, cached and partitioned by source block.  Per iteration
only rank blocks move: a co-grouped ``applyInPandas`` multiplies each source block's ranks through
its CSR matrices (scipy.sparse, K vectors at once), the partial vectors are shuffled to their
destination block and summed there with the teleport and dangling terms.  Per iteration O(B·n·K)
numbers move instead of every edge, and one small action (B rows of K numbers) reads the L1 change
and the next dangling mass.  Lineage is cut every ``checkpoint_every`` iterations by writing the
rank state to Delta (which is also what a killed run resumes from).

A graph that is a single block (at most ``block_max_vertices`` vertices, so it fits one executor)
is, with ``single_task``, iterated to convergence inside one task: the same arithmetic without a
Spark job per iteration, its per-iteration statistics reported when the task ends.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pyspark import StorageLevel
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

from linkgraph.rank.graph import DST, SRC, VERTEX, WEIGHT, RankGraph
from linkgraph.schemas import RANK, VECTOR_ID

log = logging.getLogger(__name__)

BLOCK, SB, DB = "block", "sb", "db"

EDGE_BLOCK = StructType(
    [
        StructField(SB, IntegerType(), False),
        StructField(DB, IntegerType(), False),
        StructField("indptr", BinaryType(), False),   # int64[size(db)+1]
        StructField("indices", BinaryType(), False),  # int32 local source index per link
        StructField("weights", BinaryType(), False),  # float64 1/outdeg(source) per link
    ]
)
STATIC_BLOCK = StructType(
    [
        StructField(BLOCK, IntegerType(), False),
        StructField("teleport", BinaryType(), False),  # float64[K, size]
        StructField("dangling", BinaryType(), False),  # bool[size]
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
PARTIAL = StructType(
    [
        StructField(BLOCK, IntegerType(), False),
        StructField("is_old", IntegerType(), False),
        StructField("values", BinaryType(), False),
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
    blocks: int = 0                 # 0: automatic
    block_max_vertices: int = 4_000_000
    checkpoint_every: int = 10
    single_task: bool = True        # a one-block graph is iterated inside one Spark task


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


class StateStore:
    """Where the block engine keeps its rank state between iterations (resume + lineage cut)."""

    def save(self, iteration: int, rank_blocks: DataFrame, active: np.ndarray, vector_iterations: list[int]) -> None:
        raise NotImplementedError

    def load(self, partitions: int) -> tuple[int, DataFrame, np.ndarray, list[int]] | None:
        return None


class NoStateStore(StateStore):
    """Nothing survives the process."""

    def save(self, iteration, rank_blocks, active, vector_iterations):
        return None


def plan_blocks(n: int, params: RankParams) -> tuple[int, int]:
    blocks = params.blocks or max(1, math.ceil(n / params.block_max_vertices))
    blocks = min(blocks, max(n, 1))
    block_size = max(1, math.ceil(n / blocks))
    return math.ceil(max(n, 1) / block_size), block_size


def _block_len(block: int, block_size: int, n: int) -> int:
    return max(0, min(block_size, n - block * block_size))


def _f64(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.float64)


def transition_weights(edges: DataFrame) -> DataFrame:
    """(src, dst, w): each link's share of its source's out-weight, ``1/outdeg`` when the edges
    carry no ``weight`` column, else ``weight / Σ weight`` over the source's links (weights > 0)."""
    link_weight = F.col(WEIGHT).cast("double") if WEIGHT in edges.columns else F.lit(1.0)
    weighted = edges.select(SRC, DST, link_weight.alias(WEIGHT))
    out_weight = weighted.groupBy(SRC).agg(F.sum(WEIGHT).alias("out_weight"))
    return weighted.join(out_weight, on=SRC, how="inner").select(
        SRC, DST, (F.col(WEIGHT) / F.col("out_weight")).alias("w"))


def build_edge_blocks(graph: RankGraph, block_size: int, partitions: int) -> DataFrame:
    n = graph.n
    weighted = transition_weights(graph.edges).select(
        (F.col(SRC) / block_size).cast("int").alias(SB),
        (F.col(DST) / block_size).cast("int").alias(DB),
        (F.col(SRC) % block_size).cast("int").alias("s"),
        (F.col(DST) % block_size).cast("int").alias("d"),
        F.col("w"),
    )

    def pack(pdf: pd.DataFrame) -> pd.DataFrame:
        sb, db = int(pdf[SB].iat[0]), int(pdf[DB].iat[0])
        rows = _block_len(db, block_size, n)
        order = np.lexsort((pdf["s"].to_numpy(), pdf["d"].to_numpy()))
        d = pdf["d"].to_numpy()[order]
        indptr = np.zeros(rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(d, minlength=rows), out=indptr[1:])
        return pd.DataFrame(
            {
                SB: [sb],
                DB: [db],
                "indptr": [indptr.tobytes()],
                "indices": [pdf["s"].to_numpy()[order].astype(np.int32).tobytes()],
                "weights": [pdf["w"].to_numpy()[order].astype(np.float64).tobytes()],
            }
        )

    return weighted.groupBy(SB, DB).applyInPandas(pack, EDGE_BLOCK).repartition(partitions, SB)


def build_static_blocks(
    spark: SparkSession, graph: RankGraph, teleport: DataFrame | None, n_vectors: int,
    n_blocks: int, block_size: int, partitions: int,
) -> DataFrame:
    n = graph.n
    has_out = (
        graph.edges.select(SRC).distinct()
        .groupBy((F.col(SRC) / block_size).cast("int").alias(BLOCK))
        .agg(F.collect_list((F.col(SRC) % block_size).cast("int")).alias("has_out"))
    )
    blocks = spark.range(n_blocks).select(F.col("id").cast("int").alias(BLOCK))
    static = blocks.join(has_out, on=BLOCK, how="left")
    if teleport is not None:
        tele = teleport.groupBy((F.col(VERTEX) / block_size).cast("int").alias(BLOCK)).agg(
            F.collect_list(F.struct(VECTOR_ID, (F.col(VERTEX) % block_size).cast("int").alias("local"), "weight"))
            .alias("tele")
        )
        static = static.join(tele, on=BLOCK, how="left")
    else:
        static = static.withColumn("tele", F.lit(None).cast("array<struct<vector_id:int,local:int,weight:double>>"))

    uniform = teleport is None

    def build(batches):
        for pdf in batches:
            out = {BLOCK: [], "teleport": [], "dangling": []}
            for block, has_out_list, tele in zip(pdf[BLOCK], pdf["has_out"], pdf["tele"], strict=True):
                size = _block_len(int(block), block_size, n)
                dangling = np.ones(size, dtype=bool)
                if has_out_list is not None and len(has_out_list):
                    dangling[np.asarray(has_out_list, dtype=np.int64)] = False
                if uniform:
                    v = np.full((n_vectors, size), 1.0 / n)
                else:
                    v = np.zeros((n_vectors, size))
                    if tele is not None and len(tele):
                        vec = np.fromiter((t["vector_id"] for t in tele), dtype=np.int64, count=len(tele))
                        loc = np.fromiter((t["local"] for t in tele), dtype=np.int64, count=len(tele))
                        wt = np.fromiter((t["weight"] for t in tele), dtype=np.float64, count=len(tele))
                        np.add.at(v, (vec, loc), wt)
                out[BLOCK].append(int(block))
                out["teleport"].append(v.tobytes())
                out["dangling"].append(dangling.tobytes())
            yield pd.DataFrame(out)

    return static.mapInPandas(build, STATIC_BLOCK).repartition(partitions, BLOCK)


def initial_rank_blocks(spark: SparkSession, n: int, n_vectors: int, n_blocks: int, block_size: int,
                        partitions: int) -> DataFrame:
    """Uniform 1/n for every vector."""

    def build(batches):
        for pdf in batches:
            ranks = [np.full((n_vectors, _block_len(int(b), block_size, n)), 1.0 / n).tobytes() for b in pdf[BLOCK]]
            yield pd.DataFrame({BLOCK: pdf[BLOCK].astype("int32"), "ranks": ranks, "l1": None, "dangling_mass": None})

    blocks = spark.range(n_blocks).select(F.col("id").cast("int").alias(BLOCK))
    return blocks.mapInPandas(build, RANK_BLOCK).repartition(partitions, BLOCK)


class BlockEngine:
    name = "fast"

    def __init__(self, spark: SparkSession, params: RankParams, partitions: int | None = None):
        self.spark = spark
        self.params = params
        self.partitions = partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or 200)

    def run(
        self,
        graph: RankGraph,
        teleport: DataFrame | None = None,
        n_vectors: int = 1,
        initial: DataFrame | None = None,
        state: StateStore | None = None,
        progress: Callable[[IterationStat], None] | None = None,
    ) -> RankResult:
        params, n = self.params, graph.n
        state = state or NoStateStore()
        n_blocks, block_size = plan_blocks(n, params)
        partitions = max(1, min(self.partitions, n_blocks))
        edge_blocks = build_edge_blocks(graph, block_size, partitions).persist(StorageLevel.MEMORY_AND_DISK)
        static = build_static_blocks(self.spark, graph, teleport, n_vectors, n_blocks, block_size, partitions)
        static = static.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            edge_blocks.count()  # pack the links once, before the timed iterations
            static.count()
            return self._power_iterate(graph, edge_blocks, static, n_vectors, n_blocks, block_size, partitions,
                                       initial, state, progress)
        finally:
            edge_blocks.unpersist()
            static.unpersist()

    def _power_iterate(self, graph, edge_blocks, static, n_vectors, n_blocks, block_size, partitions,
                       initial, state, progress) -> RankResult:
        params, n = self.params, graph.n
        resumed = state.load(partitions)
        if resumed is not None:
            start_iteration, ranks, active, vector_iterations = resumed
            log.info("resuming from iteration %d", start_iteration)
        else:
            start_iteration = 0
            if initial is not None:
                ranks = rank_blocks_from_table(initial, n, n_vectors, n_blocks, block_size, partitions)
            else:
                ranks = initial_rank_blocks(self.spark, n, n_vectors, n_blocks, block_size, partitions)
            active = np.ones(n_vectors, dtype=bool)
            vector_iterations = [params.max_iter] * n_vectors
        if n_blocks == 1 and params.single_task and resumed is None:
            return self._solve_in_one_task(edge_blocks, static, ranks, n, n_vectors, progress)
        # Local checkpoints (here and per iteration) keep the plan from growing with the iteration
        # count; the blocks of a replaced one are freed by Spark's ContextCleaner once unreferenced.
        ranks = ranks.localCheckpoint(eager=True)
        dangling_mass = self._dangling_mass(ranks, static, n_vectors)

        history: list[IterationStat] = []
        iteration = start_iteration
        while iteration < params.max_iter and active.any():
            started = time.monotonic()
            iteration += 1
            ranks = self._iterate(edge_blocks, static, ranks, dangling_mass, active, n, block_size, n_vectors)
            ranks = ranks.localCheckpoint(eager=True)
            l1, dangling_mass = self._stats(ranks, n_vectors)
            for k in np.flatnonzero(active):
                if l1[k] < params.tol:
                    active[k] = False
                    vector_iterations[k] = iteration
            if params.checkpoint_every and iteration % params.checkpoint_every == 0 and active.any():
                state.save(iteration, ranks, active, vector_iterations)
            stat = IterationStat(iteration, float(l1.max()), float(dangling_mass.max()), time.monotonic() - started,
                                 int(active.sum()))
            history.append(stat)
            if progress:
                progress(stat)

        return RankResult(
            ranks=explode_rank_blocks(ranks, n, block_size, n_vectors),
            iterations=iteration,
            converged=not active.any(),
            vector_iterations=vector_iterations,
            history=history,
            resumed_from=resumed[0] if resumed is not None else None,
        )

    def _solve_in_one_task(self, edge_blocks, static, ranks, n, n_vectors, progress) -> RankResult:
        """The whole power iteration inside one task, for a graph that is a single block (it fits
        one executor by ``block_max_vertices``): the same arithmetic as :meth:`_iterate` without a
        Spark job per iteration.  Only the per-iteration statistics reach the driver; the ranks
        stay a (checkpointed) DataFrame.  Nothing is checkpointed mid-run: such a run takes seconds
        to minutes, and a killed one simply starts over."""
        from scipy.sparse import csr_matrix

        damping, tol, max_iter = self.params.damping, self.params.tol, self.params.max_iter

        def solve(key, edges_pdf: pd.DataFrame, block_pdf: pd.DataFrame) -> pd.DataFrame:
            v = _f64(block_pdf["teleport"].iat[0]).reshape(n_vectors, n)
            dangling = np.frombuffer(block_pdf["dangling"].iat[0], dtype=bool)
            r = _f64(block_pdf["ranks"].iat[0]).reshape(n_vectors, n).copy()
            if edges_pdf.empty:
                matrix = csr_matrix((n, n))
            else:
                matrix = csr_matrix(
                    (np.frombuffer(edges_pdf["weights"].iat[0], dtype=np.float64),
                     np.frombuffer(edges_pdf["indices"].iat[0], dtype=np.int32),
                     np.frombuffer(edges_pdf["indptr"].iat[0], dtype=np.int64)),
                    shape=(n, n),
                )
            active = np.ones(n_vectors, dtype=bool)
            vector_iterations = np.full(n_vectors, max_iter, dtype=np.int32)
            history = []
            mass = r[:, dangling].sum(axis=1)
            iteration = 0
            while iteration < max_iter and active.any():
                started = time.monotonic()
                iteration += 1
                new = damping * (np.ascontiguousarray((matrix @ r.T).T) + mass[:, None] * v) + (1.0 - damping) * v
                new[~active] = r[~active]
                l1 = np.abs(new - r).sum(axis=1)
                r, mass = new, new[:, dangling].sum(axis=1)
                finished = active & (l1 < tol)
                vector_iterations[finished] = iteration
                active &= ~finished
                history.append((iteration, l1.max(), mass.max(), time.monotonic() - started, active.sum()))
            return pd.DataFrame({
                BLOCK: [0], "ranks": [r.tobytes()],
                "history": [np.asarray(history, dtype=np.float64).tobytes()],
                "vector_iterations": [vector_iterations.tobytes()],
            })

        block = static.join(ranks.select(BLOCK, "ranks"), on=BLOCK, how="inner")
        solved = (
            edge_blocks.groupBy(SB).cogroup(block.groupBy(BLOCK))
            .applyInPandas(solve, "block int, ranks binary, history binary, vector_iterations binary")
            .localCheckpoint(eager=True)
        )
        stats = solved.select("history", "vector_iterations").first()
        history = [
            IterationStat(int(it), float(l1), float(mass), float(seconds), int(active))
            for it, l1, mass, seconds, active in _f64(stats["history"]).reshape(-1, 5)
        ]
        for stat in history:
            if progress:
                progress(stat)
        vector_iterations = [int(i) for i in np.frombuffer(stats["vector_iterations"], dtype=np.int32)]
        return RankResult(
            ranks=explode_rank_blocks(solved, n, n, n_vectors),
            iterations=history[-1].iteration if history else 0,
            converged=bool(history) and history[-1].active_vectors == 0,
            vector_iterations=vector_iterations,
            history=history,
        )

    @staticmethod
    def _dangling_mass(ranks: DataFrame, static: DataFrame, n_vectors: int) -> np.ndarray:
        def mass(key, rank_pdf, static_pdf):
            r = _f64(rank_pdf["ranks"].iat[0]).reshape(n_vectors, -1)
            dangling = np.frombuffer(static_pdf["dangling"].iat[0], dtype=bool)
            return pd.DataFrame({"m": [r[:, dangling].sum(axis=1).tobytes()]})

        rows = ranks.groupBy(BLOCK).cogroup(static.groupBy(BLOCK)).applyInPandas(mass, "m binary").collect()
        return np.sum([_f64(r["m"]) for r in rows], axis=0) if rows else np.zeros(n_vectors)

    @staticmethod
    def _stats(ranks: DataFrame, n_vectors: int) -> tuple[np.ndarray, np.ndarray]:
        rows = ranks.select("l1", "dangling_mass").collect()  # one row per block
        l1 = np.sum([_f64(r["l1"]) for r in rows], axis=0)
        mass = np.sum([_f64(r["dangling_mass"]) for r in rows], axis=0)
        return l1, mass

    def _iterate(self, edge_blocks, static, ranks, dangling_mass, active, n, block_size, n_vectors) -> DataFrame:
        damping = self.params.damping
        active_now = active.copy()
        mass_now = dangling_mass.copy()

        def spread(key, edges_pdf: pd.DataFrame, rank_pdf: pd.DataFrame) -> pd.DataFrame:
            from scipy.sparse import csr_matrix

            if rank_pdf.empty:
                return pd.DataFrame({BLOCK: [], "is_old": [], "values": []})
            sb = int(rank_pdf[BLOCK].iat[0])
            r = _f64(rank_pdf["ranks"].iat[0]).reshape(n_vectors, -1)
            blocks, kinds, values = [sb], [1], [r.tobytes()]
            columns = (edges_pdf[DB], edges_pdf["indptr"], edges_pdf["indices"], edges_pdf["weights"])
            for db, indptr, indices, weights in zip(*columns, strict=True):
                rows = _block_len(int(db), block_size, n)
                matrix = csr_matrix(
                    (np.frombuffer(weights, dtype=np.float64), np.frombuffer(indices, dtype=np.int32),
                     np.frombuffer(indptr, dtype=np.int64)),
                    shape=(rows, r.shape[1]),
                )
                partial = np.ascontiguousarray((matrix @ r.T).T)
                blocks.append(int(db))
                kinds.append(0)
                values.append(partial.tobytes())
            return pd.DataFrame({BLOCK: blocks, "is_old": kinds, "values": values})

        def combine(key, parts: pd.DataFrame, static_pdf: pd.DataFrame) -> pd.DataFrame:
            v = _f64(static_pdf["teleport"].iat[0]).reshape(n_vectors, -1)
            dangling = np.frombuffer(static_pdf["dangling"].iat[0], dtype=bool)
            incoming = np.zeros_like(v)
            old = None
            for is_old, values in zip(parts["is_old"], parts["values"], strict=True):
                if is_old:
                    old = _f64(values).reshape(n_vectors, -1)
                else:
                    incoming += _f64(values).reshape(n_vectors, -1)
            new = damping * (incoming + mass_now[:, None] * v) + (1.0 - damping) * v
            assert old is not None, "every block has its previous ranks among the parts"
            new[~active_now] = old[~active_now]
            return pd.DataFrame(
                {
                    BLOCK: [int(static_pdf[BLOCK].iat[0])],
                    "ranks": [new.tobytes()],
                    "l1": [np.abs(new - old).sum(axis=1).tobytes()],
                    "dangling_mass": [new[:, dangling].sum(axis=1).tobytes()],
                }
            )

        partials = edge_blocks.groupBy(SB).cogroup(ranks.groupBy(BLOCK)).applyInPandas(spread, PARTIAL)
        return partials.groupBy(BLOCK).cogroup(static.groupBy(BLOCK)).applyInPandas(combine, RANK_BLOCK)


def explode_rank_blocks(ranks: DataFrame, n: int, block_size: int, n_vectors: int) -> DataFrame:
    """Rank blocks -> one row per (vertex, vector_id)."""

    def explode(batches):
        for pdf in batches:
            for block, buf in zip(pdf[BLOCK], pdf["ranks"], strict=True):
                r = _f64(buf).reshape(n_vectors, -1)
                size = r.shape[1]
                vertices = np.tile(np.arange(size, dtype=np.int64) + int(block) * block_size, n_vectors)
                vectors = np.repeat(np.arange(n_vectors, dtype=np.int32), size)
                yield pd.DataFrame({VERTEX: vertices, VECTOR_ID: vectors, RANK: r.reshape(-1)})

    return ranks.select(BLOCK, "ranks").mapInPandas(explode, RANKS)


def rank_blocks_from_table(ranks: DataFrame, n: int, n_vectors: int, n_blocks: int, block_size: int,
                           partitions: int) -> DataFrame:
    """RANKS rows (e.g. a previous run) -> rank blocks; vertices without a rank start at 1/n and
    each vector is renormalised to sum 1 (a warm start)."""
    grouped = ranks.groupBy((F.col(VERTEX) / block_size).cast("int").alias(BLOCK)).agg(
        F.collect_list(F.struct(VECTOR_ID, (F.col(VERTEX) % block_size).cast("int").alias("local"), RANK)).alias("r")
    )
    totals = ranks.groupBy(VECTOR_ID).agg(F.sum(RANK).alias("total"), F.count("*").alias("count")).collect()
    total = np.zeros(n_vectors)
    covered = np.zeros(n_vectors)
    for row in totals:
        if row[VECTOR_ID] < n_vectors:
            total[row[VECTOR_ID]] = row["total"]
            covered[row[VECTOR_ID]] = row["count"]
    scale = 1.0 / (total + (n - covered) / n)

    def build(batches):
        for pdf in batches:
            out_blocks, out_ranks = [], []
            for block, items in zip(pdf[BLOCK], pdf["r"], strict=True):
                size = _block_len(int(block), block_size, n)
                r = np.full((n_vectors, size), np.nan)
                if items is not None:
                    for item in items:
                        if item[VECTOR_ID] < n_vectors:
                            r[item[VECTOR_ID], item["local"]] = item[RANK]
                r = np.where(np.isnan(r), 1.0 / n, r) * scale[:, None]
                out_blocks.append(int(block))
                out_ranks.append(r.tobytes())
            yield pd.DataFrame({BLOCK: out_blocks, "ranks": out_ranks, "l1": None, "dangling_mass": None})

    blocks = ranks.sparkSession.range(n_blocks).select(F.col("id").cast("int").alias(BLOCK))
    return blocks.join(grouped, on=BLOCK, how="left").mapInPandas(build, RANK_BLOCK).repartition(partitions, BLOCK)
