"""Harmonic centrality with HyperBall (Boldi & Vigna 2013): HyperLogLog counters of the balls
B_t(x) = nodes that reach x in at most t steps, grown along the links until no counter changes.

    H(x) = Σ_{y ≠ x} 1 / d(y, x) = Σ_{t ≥ 1} (|B_t(x)| − |B_{t−1}(x)|) / t

(distances *to* x, as ``networkx.harmonic_centrality`` and Common Crawl's host ranks).  The
counters, their estimate of |B_t(x)| (relative standard error 1.04/√m for ``m`` registers,
``centrality.registers``; small balls counted exactly) and the kernels that unite them are
``linkgraph.rank.counters``.  B_0(x) = {x}; step t sets c(x) ← c(x) ∪ ⋃_{y→x} c(y), and only
counters that changed in step t−1 can change anything in step t, so only those are sent.

Distribution, like the rank engine's block exchange: node ids are cut into B contiguous blocks;
links are packed once into one CSR matrix per (source block, destination block) pair, cached.
The state is one row per block (its counters, ``uint8[size, m]``; which changed last; the
harmonic sums so far).  Per iteration a co-grouped ``applyInPandas`` takes each source block's
*changed* counters through its CSR matrices and emits, per destination block, only the rows
that receive something (sparse exchange); a second one merges them into the destination block
with numpy (``np.maximum.reduceat``) and adds (est_t − est_{t−1})/t to the harmonic sums.  One
small action per iteration reads the number of changed counters; the loop stops at zero.  A
graph of one block is, with ``single_task``, iterated inside one task with the same kernels.

Sizing, in bytes: a block holds at most ``block_max_nodes`` nodes and few enough that its
counters (``STATE_COPIES`` copies of :func:`node_bytes` per node) take at most half of
``block_bytes`` (``rank.block_bytes``); a graph whose block task needs more anyway
(:func:`task_bytes`) is refused before any iteration (:func:`require_fits`, ``HyperBallTooLarge``).
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
from pyspark.sql.types import BinaryType, DoubleType, IntegerType, LongType, StructField, StructType

from linkgraph.errors import HyperBallTooLarge
from linkgraph.lake import checkpoints
from linkgraph.lake.rows import one_row
from linkgraph.rank.counters import SPREAD_CHUNK_BYTES, Counters, exact_limit, merge, spread

log = logging.getLogger(__name__)

SRC, DST = "src", "dst"
BLOCK, SB, DB = "block", "sb", "db"

EDGE_BLOCK = StructType([
    StructField(SB, IntegerType(), False),
    StructField(DB, IntegerType(), False),
    StructField("sources", BinaryType(), False),   # int32: the local sources of sb with links into db
    StructField("indptr", BinaryType(), False),    # int64[len(sources) + 1]: per such source
    StructField("indices", BinaryType(), False),   # int32 local destinations
])
STATE = StructType([
    StructField(BLOCK, IntegerType(), False),
    StructField("registers", BinaryType(), False),   # uint8[size, m]
    StructField("members", BinaryType(), False),     # int64[size, exact_limit(m)]: the ball while small
    StructField("counts", BinaryType(), False),      # int32[size]: members, or OVERFLOW
    StructField("changed", BinaryType(), False),     # bool[size]: changed in the last step
    StructField("harmonic", BinaryType(), False),    # float64[size]
    StructField("n_changed", LongType(), False),
    StructField("added", DoubleType(), False),       # harmonic added by the last step
])
PARTIAL = StructType([
    StructField(BLOCK, IntegerType(), False),
    StructField("rows", BinaryType(), False),        # int64 local destination rows
    StructField("registers", BinaryType(), False),   # uint8[len(rows), m]
    StructField("members", BinaryType(), False),     # int64[len(rows), exact_limit(m)]
    StructField("counts", BinaryType(), False),      # int32[len(rows)]
])
RESULT = StructType([
    StructField("node", LongType(), False),
    StructField("harmonic", DoubleType(), False),
])


def relative_standard_error(m: int) -> float:
    return 1.04 / math.sqrt(m)


@dataclass
class BallStep:
    iteration: int
    changed: int
    added: float
    seconds: float


@dataclass
class HyperBallResult:
    harmonic: DataFrame            # RESULT: (node, harmonic)
    iterations: int
    converged: bool
    history: list[BallStep] = field(default_factory=list)


# --- one block in memory ------------------------------------------------------------------------

def single_block(indptr: np.ndarray, indices: np.ndarray, n: int, m: int, max_iter: int
                 ) -> tuple[np.ndarray, list[BallStep], bool]:
    """HyperBall on one block in memory: (harmonic, steps, converged)."""
    counters = Counters.initial(0, n, m)
    changed = np.ones(n, dtype=bool)
    harmonic = np.zeros(n)
    sizes = counters.sizes()
    steps: list[BallStep] = []
    for t in range(1, max_iter + 1):
        started = time.monotonic()
        rows, incoming = spread(indptr, indices, counters, changed)
        changed = merge(counters, rows, incoming)
        new_sizes = counters.sizes(changed)
        added = (new_sizes - sizes[changed]) / t
        harmonic[changed] += added
        sizes[changed] = new_sizes
        steps.append(BallStep(t, int(changed.sum()), float(added.sum()), time.monotonic() - started))
        if not changed.any():
            return harmonic, steps, True
    return harmonic, steps, False


# --- the distributed engine -------------------------------------------------------------------

def plan_blocks(n: int, block_max_nodes: int) -> tuple[int, int]:
    n_blocks = max(1, math.ceil(n / block_max_nodes))
    return n_blocks, max(1, math.ceil(n / n_blocks))


# --- sizing -------------------------------------------------------------------------------------

MIB = 1 << 20
DEFAULT_BLOCK_BYTES = 64 * MIB   # the rank engine's block budget (``rank.block_bytes``)
STATE_COPIES = 3                 # a block's state, its merged copy and the partials it receives
STATE_SHARE = 2                  # the counters take at most 1/STATE_SHARE of the budget
ROW_BYTES = 12                   # int32 local source + int64 row pointer per source row of a block pair
ARC_BYTES = 28                   # int32 stored destination + three int64 temporaries while spreading


def node_bytes(m: int) -> int:
    """State bytes of one node: its registers, exact members and count, changed flag, harmonic sum."""
    return m + 8 * exact_limit(m) + 4 + 1 + 8


def budget_block_nodes(m: int, block_bytes: int, block_max_nodes: int) -> int:
    """Nodes per block: at most ``block_max_nodes``, and few enough that the block's counters (all
    their copies) take at most half of ``block_bytes``; the rest is for its links."""
    return max(1, min(block_max_nodes, block_bytes // (STATE_SHARE * STATE_COPIES * node_bytes(m))))


@dataclass(frozen=True)
class TaskBytes:
    """What one block's task holds: the counters of its nodes (``STATE_COPIES`` copies), the
    row pointers of its block pairs (hypersparse: one per source row that has links there), its
    arcs, and the counters gathered along them (in chunks of at most ``SPREAD_CHUNK_BYTES``)."""

    nodes: int
    blocks: int
    block_nodes: int
    state: int
    row_pointers: int
    arcs: int

    @property
    def total(self) -> int:
        return self.state + self.row_pointers + self.arcs

    def describe(self) -> str:
        return (f"{size_text(self.total)} per task ({self.blocks:,} block(s) of {self.block_nodes:,} nodes: "
                f"counters {size_text(self.state)}, row pointers {size_text(self.row_pointers)}, "
                f"arcs {size_text(self.arcs)})")


def size_text(size: int) -> str:
    """``size`` bytes in the largest binary unit it reaches (TiB, GiB, MiB, KiB), one decimal."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size} bytes"


def task_bytes(n: int, arcs: int, m: int, block_nodes: int) -> TaskBytes:
    """The bytes a block's task needs for a graph of ``n`` nodes and ``arcs`` links in blocks of
    at most ``block_nodes`` nodes, the arcs spread evenly over the source blocks."""
    blocks, size = plan_blocks(max(n, 1), block_nodes)
    per_block = math.ceil(arcs / blocks)
    gathered = min(SPREAD_CHUNK_BYTES, per_block * node_bytes(m))
    return TaskBytes(n, blocks, size, STATE_COPIES * size * node_bytes(m), ROW_BYTES * min(per_block, size * blocks),
                     ARC_BYTES * per_block + gathered)


def require_fits(need: TaskBytes, block_bytes: int, what: str, fits: str = "") -> None:
    """Raise ``HyperBallTooLarge`` when ``need`` is over the budget; ``what`` names the graph,
    ``fits`` says what would fit (appended to the message)."""
    if need.total > block_bytes:
        raise HyperBallTooLarge(
            f"centrality: HyperBall over {what} ({need.nodes:,} nodes) needs {need.describe()}, over the block "
            f"budget of {size_text(block_bytes)} (rank.block_bytes); refused before any iteration"
            + (f"; {fits}" if fits else ""))


def _size(block: int, block_size: int, n: int) -> int:
    return max(0, min(block_size, n - block * block_size))


def edge_blocks(edges: DataFrame, block_size: int, partitions: int) -> DataFrame:
    """One hypersparse CSR per (source block, destination block) pair: the local sources of
    ``sb`` that link into ``db`` (``sources``), a row pointer per such source, the local
    destinations in ``db``; so a pair takes bytes per link, whatever the block size."""
    keyed = edges.select(
        (F.col(SRC) / block_size).cast("int").alias(SB), (F.col(DST) / block_size).cast("int").alias(DB),
        (F.col(SRC) % block_size).cast("long").alias("s"), (F.col(DST) % block_size).cast("long").alias("d"))

    def pack(pdf: pd.DataFrame) -> pd.DataFrame:
        order = np.lexsort((pdf["d"].to_numpy(), pdf["s"].to_numpy()))
        s, d = pdf["s"].to_numpy()[order], pdf["d"].to_numpy()[order]
        sources, first = np.unique(s, return_index=True)
        indptr = np.append(first, len(s)).astype(np.int64)
        return pd.DataFrame({SB: [int(pdf[SB].iloc[0])], DB: [int(pdf[DB].iloc[0])],
                             "sources": [sources.astype(np.int32).tobytes()], "indptr": [indptr.tobytes()],
                             "indices": [d.astype(np.int32).tobytes()]})

    return keyed.groupBy(SB, DB).applyInPandas(pack, EDGE_BLOCK).repartition(partitions, SB)


def dense_row_pointer(sources: np.ndarray, indptr: np.ndarray, size: int) -> np.ndarray:
    """The CSR row pointer (one entry per local source 0..size) of a hypersparse one."""
    counts = np.zeros(size, dtype=np.int64)
    counts[sources] = np.diff(indptr)
    dense = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=dense[1:])
    return dense


def _combiner(m: int, t: int) -> Callable:
    """The merge of step ``t``'s partial counters into their destination block (a cogroup function)."""

    def combine(key, parts: pd.DataFrame, state_pdf: pd.DataFrame) -> pd.DataFrame:
        s = state_pdf.iloc[0]
        counters = Counters.from_bytes(s["registers"], s["members"], s["counts"], m, writable=True)
        harmonic = np.frombuffer(s["harmonic"], dtype=np.float64).copy()
        if len(parts):
            rows = np.concatenate([np.frombuffer(r, dtype=np.int64) for r in parts["rows"]])
            incoming = [Counters.from_bytes(*p, m) for p in zip(parts["registers"], parts["members"],
                                                                 parts["counts"], strict=True)]
            touched = np.unique(rows)   # the only rows that can change: their counters before the merge
            before = Counters(counters.regs[touched], counters.members[touched], counters.counts[touched])
            changed = merge(counters, rows, Counters.concat(incoming))
            grown = changed[touched]
            added = (counters.sizes(touched[grown]) - before.sizes(grown)) / t
            harmonic[touched[grown]] += added
        else:
            changed, added = np.zeros(counters.regs.shape[0], dtype=bool), np.zeros(0)
        return pd.DataFrame([(int(s[BLOCK]), *counters.to_bytes(), changed.tobytes(), harmonic.tobytes(),
                              int(changed.sum()), float(added.sum()))],
                            columns=[f.name for f in STATE.fields])

    return combine


class HyperBall:
    """HyperBall over nodes ``0 .. n-1``.  Blocks hold at most ``block_max_nodes`` nodes and few
    enough that a block's state fits ``block_bytes`` (:func:`budget_block_nodes`); a graph whose
    block task would need more than ``block_bytes`` anyway (:func:`task_bytes`: the dense row
    pointers grow with the block count) is refused before any iteration (``HyperBallTooLarge``)."""

    def __init__(self, spark: SparkSession, registers: int, block_max_nodes: int, max_iter: int = 1000,
                 single_task: bool = True, checkpoint_every: int = 5, partitions: int | None = None,
                 block_bytes: int = DEFAULT_BLOCK_BYTES):
        self.spark, self.m, self.block_bytes = spark, registers, block_bytes
        self.block_max_nodes = budget_block_nodes(registers, block_bytes, block_max_nodes)
        self.max_iter, self.single_task, self.checkpoint_every = max_iter, single_task, checkpoint_every
        self.partitions = partitions   # None: one per block

    def needs(self, n: int, arcs: int) -> TaskBytes:
        """The bytes one block's task needs for a graph of ``n`` nodes and ``arcs`` links."""
        return task_bytes(n, arcs, self.m, self.block_max_nodes)

    def run(self, edges: DataFrame, n: int, progress: Callable[[BallStep], None] | None = None,
            arcs: int | None = None) -> HyperBallResult:
        """Harmonic centrality of nodes ``0 .. n-1`` of ``edges`` (src, dst); ``arcs``: the number
        of edges, when known (counted otherwise), to refuse a graph over the budget up front."""
        require_fits(self.needs(n, edges.count() if arcs is None else arcs), self.block_bytes, "this graph")
        n_blocks, block_size = plan_blocks(n, self.block_max_nodes)
        partitions = max(1, min(self.partitions or n_blocks, n_blocks))
        packed = edge_blocks(edges, block_size, partitions).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            packed.count()
            if n_blocks == 1 and self.single_task:
                return self._one_task(packed, n, progress)
            return self._iterate(packed, n, n_blocks, block_size, partitions, progress)
        finally:
            packed.unpersist()

    def _one_task(self, packed: DataFrame, n: int, progress) -> HyperBallResult:
        m, max_iter = self.m, self.max_iter
        out_schema = "harmonic binary, steps binary, converged boolean"

        def solve(pdf: pd.DataFrame) -> pd.DataFrame:
            row = pdf.iloc[0] if len(pdf) else None
            if row is None:
                indptr, indices = np.zeros(n + 1, np.int64), np.zeros(0, np.int32)
            else:
                indptr = dense_row_pointer(np.frombuffer(row["sources"], dtype=np.int32),
                                           np.frombuffer(row["indptr"], dtype=np.int64), n)
                indices = np.frombuffer(row["indices"], dtype=np.int32)
            harmonic, steps, converged = single_block(indptr, indices, n, m, max_iter)
            table = np.array([(s.iteration, s.changed, s.added, s.seconds) for s in steps], dtype=np.float64)
            return pd.DataFrame({"harmonic": [harmonic.tobytes()], "steps": [table.tobytes()],
                                 "converged": [converged]})

        row = packed.groupBy(F.lit(0).alias("_g")).applyInPandas(solve, out_schema).first()
        if row is None:  # no link at all: no ball grows, every harmonic centrality is 0
            harmonic, steps, converged = np.zeros(n), [BallStep(1, 0, 0.0, 0.0)], True
        else:
            harmonic = np.frombuffer(row["harmonic"], dtype=np.float64)
            table = np.frombuffer(row["steps"], dtype=np.float64).reshape(-1, 4)
            steps = [BallStep(int(a), int(b), float(c), float(d)) for a, b, c, d in table]
            converged = bool(row["converged"])
        for step in steps:
            if progress:
                progress(step)
        frame = self._nodes_frame(harmonic)
        return HyperBallResult(frame, len(steps), converged, steps)

    def _nodes_frame(self, harmonic: np.ndarray) -> DataFrame:
        """(node, harmonic) of a one-block result, built on the executors in slices."""
        payload = harmonic.tobytes()
        n = len(harmonic)
        chunk = 1 << 20
        starts = self.spark.createDataFrame([(s,) for s in range(0, max(n, 1), chunk)], "start long")
        data = self.spark.sparkContext.broadcast(payload)

        def explode(batches):
            values = np.frombuffer(data.value, dtype=np.float64)
            for pdf in batches:
                for start in pdf["start"]:
                    end = min(int(start) + chunk, n)
                    yield pd.DataFrame({"node": np.arange(int(start), end, dtype=np.int64),
                                        "harmonic": values[int(start):end]})

        return starts.mapInPandas(explode, RESULT)

    def _initial_state(self, n: int, n_blocks: int, block_size: int, partitions: int) -> DataFrame:
        m = self.m

        def build(batches):
            for pdf in batches:
                rows = []
                for block in pdf["id"]:
                    size = _size(int(block), block_size, n)
                    counters = Counters.initial(int(block) * block_size, size, m)
                    rows.append((int(block), *counters.to_bytes(), np.ones(size, dtype=bool).tobytes(),
                                 np.zeros(size).tobytes(), size, 0.0))
                yield pd.DataFrame(rows, columns=[f.name for f in STATE.fields])

        return self.spark.range(n_blocks).mapInPandas(build, STATE).repartition(partitions, BLOCK)

    def _iterate(self, packed: DataFrame, n: int, n_blocks: int, block_size: int, partitions: int,
                 progress) -> HyperBallResult:
        """The block exchange, one Spark job per step.  The state is checkpointed reliably at the
        start and every ``checkpoint_every`` steps (``linkgraph.lake.checkpoints``: a lost executor
        costs at most that many steps of recomputation), each cut replacing the one before."""
        m = self.m
        state = checkpoints.cut(self._initial_state(n, n_blocks, block_size, partitions))
        last_cut = state
        steps: list[BallStep] = []
        for t in range(1, self.max_iter + 1):
            started = time.monotonic()
            partials = packed.groupBy(SB).cogroup(state.groupBy(BLOCK)).applyInPandas(_sender(m), PARTIAL)
            new_state = partials.groupBy(BLOCK).cogroup(state.groupBy(BLOCK)).applyInPandas(_combiner(m, t), STATE)
            new_state = new_state.repartition(partitions, BLOCK)
            if t % self.checkpoint_every == 0:
                new_state = checkpoints.cut(new_state)
                checkpoints.drop(last_cut)
                last_cut = new_state
            else:
                new_state = new_state.persist(StorageLevel.MEMORY_AND_DISK)
            totals = one_row(new_state.agg(F.sum("n_changed").alias("c"), F.sum("added").alias("a")))
            state.unpersist()
            state = new_state
            steps.append(BallStep(t, int(totals["c"] or 0), float(totals["a"] or 0.0), time.monotonic() - started))
            if progress:
                progress(steps[-1])
            if steps[-1].changed == 0:
                break
        harmonic = state.select(BLOCK, "harmonic").mapInPandas(_exploder(block_size), RESULT)
        return HyperBallResult(harmonic, len(steps), bool(steps) and steps[-1].changed == 0, steps)


def _sender(m: int) -> Callable:
    """A step's spread of each source block's changed counters through its block pairs (a cogroup
    function): one PARTIAL row per destination block that receives something."""

    def send(key, edges_pdf: pd.DataFrame, state_pdf: pd.DataFrame) -> pd.DataFrame:
        out: list[tuple[int, bytes, bytes, bytes, bytes]] = []
        if len(state_pdf) == 0 or len(edges_pdf) == 0:
            return pd.DataFrame(out, columns=[f.name for f in PARTIAL.fields])
        s = state_pdf.iloc[0]
        counters = Counters.from_bytes(s["registers"], s["members"], s["counts"], m)
        changed = np.frombuffer(s["changed"], dtype=bool)
        for _, e in edges_pdf.iterrows():
            rows, incoming = spread(np.frombuffer(e["indptr"], dtype=np.int64),
                                    np.frombuffer(e["indices"], dtype=np.int32), counters, changed,
                                    np.frombuffer(e["sources"], dtype=np.int32).astype(np.int64))
            if len(rows):
                out.append((int(e[DB]), rows.tobytes(), *incoming.to_bytes()))
        return pd.DataFrame(out, columns=[f.name for f in PARTIAL.fields])

    return send


def _exploder(block_size: int) -> Callable:
    """(block, harmonic bytes) rows to RESULT rows (a mapInPandas function)."""

    def explode(batches):
        for pdf in batches:
            for block, harmonic in zip(pdf[BLOCK], pdf["harmonic"], strict=True):
                values = np.frombuffer(harmonic, dtype=np.float64)
                first = int(block) * block_size
                yield pd.DataFrame({"node": np.arange(first, first + len(values), dtype=np.int64),
                                    "harmonic": values})

    return explode
