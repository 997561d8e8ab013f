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

Block engine (this module drives it from the driver): vertices are cut into B contiguous blocks
sized by a byte budget, block *i* being partition *i* (``rank.blocks``); the links are packed once
per (source block, destination block) pair (``rank.packing``); per iteration only partial sums
move, from each source block to the destination blocks its links reach, as flat bytes
(``rank.codec``).  An iteration is one stage of B tasks with one Python pass each
(``rank.exchange``): a task sums the partials sent to its block, reports the block's L1 change and
dangling mass through an accumulator and writes its new partials to the next shuffle (the stage
is run as a shuffle-map stage alone; the next iteration's tasks read its files).  Every
``lineage_every`` iterations the new rank blocks alone are cached and checkpointed reliably (the
session's checkpoint directory, ``linkgraph.lake.checkpoints``) as zstd-compressed byte planes,
and the partials they send are computed again from them, so the checkpoint holds no partial sums
and a lost executor costs at most that many iterations of recomputation, never the run; every
``checkpoint_every`` iterations the rank state is also written to the state store (Delta
``rank_state``), which is what a killed run resumes from.
K personalisation vectors are processed in passes of at most ``MAX_VECTOR_CHUNK`` vectors (one
pass when the whole graph is solved in one task), sharing the packed links; the passes' results
are merged into one.

A graph whose packed links fit the budget of one task is, with ``single_task``, iterated to
convergence inside one task (``rank.solver``).  Ranks leave the engine as RANKS rows (vertex,
vector_id, rank); a warm start comes in as such rows and is cut into RANK_BLOCK rows.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pyspark import RDD, Accumulator, StorageLevel
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

from linkgraph.lake import checkpoints
from linkgraph.lake.schemas import RANK, VECTOR_ID
from linkgraph.rank.blocks import BLOCK, DEFAULT_BLOCK_BYTES, BlockPlan, by_block, out_links_per_bucket, plan_blocks
from linkgraph.rank.codec import f64, pack_rank_record, unpack_rank_record
from linkgraph.rank.exchange import BlockStats, spread_ranks, stepper
from linkgraph.rank.graph import VERTEX, RankGraph
from linkgraph.rank.packing import chunk_rows, dangling_blocks, pack_edges, teleport_blocks, uniform_vectors
from linkgraph.rank.solver import one_task_solver

if TYPE_CHECKING:
    from linkgraph.lake.config import RankConfig

log = logging.getLogger(__name__)

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
            max_value, exchange_rows = edges.map(lambda kv: (sum(len(b) for b in kv[1][2:]), chunk_rows(kv[1]))).fold(
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
        carried = spread_ranks(loop.edges, loop.ranks, loop.plan, loop.vectors)
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
        respread = spread_ranks(loop.edges, ranks, loop.plan, loop.vectors)
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
        p = self.params
        solve = one_task_solver(n_vectors, n, p.damping, p.tol, p.max_iter, self._uniform, tele is None)
        inputs = edges.union(dangling).union(ranks)
        if tele is not None:
            inputs = inputs.union(tele)
        solved = inputs.mapPartitions(solve, preservesPartitioning=True).persist(StorageLevel.MEMORY_AND_DISK)
        history_bytes, iterations_bytes = solved.map(lambda kv: (kv[1][2], kv[1][3])).first()
        history = [
            IterationStat(int(it), float(l1), float(mass), float(seconds), int(active))
            for it, l1, mass, seconds, active in f64(history_bytes).reshape(-1, 5)
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
                    r = f64(value[1]).reshape(n_vectors, -1)
            if r is not None and mask is not None:
                yield r[:, mask].sum(axis=1).tobytes()

        rows = ranks.union(dangling).mapPartitions(mass).collect()
        return np.sum([f64(r) for r in rows], axis=0) if rows else np.zeros(n_vectors)

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
        stats = self.spark.sparkContext.accumulator({}, BlockStats())
        step = stepper(plan.starts, n_vectors, n, self.params.damping, active.copy(), dangling_mass.copy(),
                        None if tele is None else self._uniform, tele is None, stats)
        inputs = carried.union(dangling).union(edges)
        if tele is not None:
            inputs = inputs.union(tele)
        # not preservesPartitioning: partitionBy would take the output as partitioned already and not shuffle it
        return by_block(inputs.mapPartitionsWithIndex(step), plan.n_blocks), stats


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
    return by_block(rank_blocks.select(BLOCK, "ranks").rdd.map(
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
                r = f64(buf).reshape(n_vectors, -1)
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
