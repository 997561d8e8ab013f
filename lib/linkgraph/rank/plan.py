"""``linkgraph plan``: what a graph needs on a cluster, from the rank engine's own block planner.

Given E links, n pages, K rank vectors and C cores (or a lake to count E and n from), the plan cuts
the blocks with :func:`linkgraph.rank.blocks.plan_blocks` (the function ``BlockEngine.plan``
calls, with the out-links spread evenly over the vertex buckets) and prices every byte with the
engine's layout constants (``LINK_BYTES``, ``ROW_BYTES``) and the per-link constants below, which
``bench/scale.py`` measures (it imports this module and prints ``plan_vs_measured_shuffle=``, the
plan's shuffle per iteration of the bench graph over the shuffle Spark measured).

Measured constants (``python bench/scale.py``, host-structured generated graphs, docs/scaling.md):

* ``ENTRIES_PER_LINK_LIMIT`` and ``ENTRIES_PER_LINK_DROP``: partial entries per link P/E
  (distinct (source block, destination page) pairs) as ``LIMIT − DROP / √B``, fitted to
  ``bench/scale.py --model`` (0.318 at B = 8, 0.384 at B = 32, 0.417 at B = 128: the fit gives
  0.318, 0.384, 0.417);
* ``SHUFFLE_BYTES_PER_ENTRY``: bytes a partial entry (one vector) takes in the shuffle after the
  engine's byte planes and Spark's LZ4;
* ``RANK_SHUFFLE_BYTES_PER_PAGE``: bytes a page's rank (one vector) takes in the shuffle, where
  the rank blocks travel with the partials;
* ``SEGMENT_BYTES``: Spark's framing of one non-empty (source block, destination block) segment;
* ``CHECKPOINT_BYTES_PER_PAGE``: bytes per page (one vector) of a reliable checkpoint, which
  holds the rank blocks only, as zstd-compressed byte planes (``codec.pack_rank_record``);
* ``PYTHON_WORKER_BYTES``: the resident memory (RSS) of a Python worker once the heaviest step
  module is imported: ``pyspark.worker``, pandas, pyarrow and ``linkgraph.compress.build`` with its
  numba kernels, 193 MiB measured (``/proc/self/status`` VmRSS; the rank engine 135 MiB, ingest 129
  MiB), plus ``ARROW_BATCH_BYTES``, one Arrow batch of ingest's records at their size caps.

Python memory is resident memory and is planned into ``spark.executor.memoryOverhead``; the plan
never sets ``spark.executor.pyspark.memory``.  Spark enforces that setting as an address-space
limit (``RLIMIT_AS``) of ``pyspark.memory / cores`` per worker, and a worker's address space is
368-540 MiB right after those imports (VmSize, measured alike) and grows with every thread arena:
at any budget a plan could afford per core it kills workers that use far less memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from linkgraph.lake.config_analysis import CentralityConfig
from linkgraph.rank import hyperball
from linkgraph.rank.blocks import LINK_BYTES, PLAN_BUCKETS, ROW_BYTES, BlockPlan, plan_blocks
from linkgraph.rank.engine import RankParams

MIB = 1 << 20
GIB = 1 << 30

# measured by bench/scale.py (see the module docstring)
ENTRIES_PER_LINK_LIMIT = 0.450
ENTRIES_PER_LINK_DROP = 0.373
SHUFFLE_BYTES_PER_ENTRY = 8.5
RANK_SHUFFLE_BYTES_PER_PAGE = 8.0
SEGMENT_BYTES = 71
CHECKPOINT_BYTES_PER_PAGE = 7.0
PYTHON_WORKER_BYTES = 193 * MIB
ARROW_BATCH_BYTES = 64 * MIB    # 10,000 records (spark.sql.execution.arrow.maxRecordsPerBatch) at ~5.6 kB

# HyperBall (``linkgraph centrality``), measured: the CPU seconds of one arc's spread and merge in
# one iteration at 256 registers (1.76 µs, the in-memory kernel on a 100,000-node, 1M-arc
# host-structured graph with every counter changing; it grows with the registers merged), and the
# iterations a web graph's balls grow for (cnr-2000: 79, docs/benchmarks.md)
BALL_ARC_SECONDS_PER_REGISTER = 1.76e-6 / 256
BALL_ITERATIONS = 80
BALL_STATE_SHUFFLES = 3   # the state through the spread's cogroup, the merge's cogroup and its repartition

# layout arithmetic (no measurement)
PACK_SHUFFLE_BYTES_PER_LINK = 24     # (sb, db, s, d: int32; w: float64) rows grouped into chunks
COMPRESS_SHUFFLE_BYTES_PER_LINK = 32  # (src, dst) longs, shuffled once per direction
PARTITION_BYTES = 128 * MIB           # shuffle bytes per partition (spark.sql.adaptive.advisoryPartitionSizeInBytes)
PYTHON_COPIES = 2                     # a block's values as pickled bytes, and its arrays / scipy matrix
JVM_BASE_BYTES = 2 * GIB              # an executor's heap before it caches anything
DRIVER_BASE_BYTES = 4 * GIB   # Delta snapshots, the planner's 65,536 bucket counts, ingest's broadcast table
MAP_STATUS_BYTES = 4                  # driver bytes per (map task, reduce partition) of one shuffle
MIN_OVERHEAD_BYTES = 384 * MIB        # Spark's floor for spark.executor.memoryOverhead


@dataclass(frozen=True)
class PlanInputs:
    links: int
    pages: int
    vectors: int = 1
    cores: int = 400
    executor_cores: int = 8


@dataclass(frozen=True)
class Plan:
    """The figures ``linkgraph plan`` prints, in bytes unless named otherwise."""

    inputs: PlanInputs
    blocks: int
    single_task: bool
    vectors_per_pass: int
    bytes_per_task: int
    packed_bytes: int
    partial_entries: int
    shuffle_bytes_per_iteration: int
    checkpoint_bytes: int
    local_disk_per_executor: int
    executor_memory: int
    python_memory_per_task: int
    python_memory_per_executor: int
    memory_overhead: int
    shuffle_partitions: int
    driver_memory: int
    compress_shuffle_bytes: int

    @property
    def executors(self) -> int:
        return max(1, math.ceil(self.inputs.cores / self.inputs.executor_cores))

    def lines(self) -> list[str]:
        """``key=value`` lines: the inputs, the figures, then the Spark settings to use."""
        i = self.inputs
        return [
            f"links={i.links}", f"pages={i.pages}", f"vectors={i.vectors}", f"cores={i.cores}",
            f"executor_cores={i.executor_cores}", f"executors={self.executors}",
            f"blocks={self.blocks}", f"single_task={str(self.single_task).lower()}",
            f"vectors_per_pass={self.vectors_per_pass}", f"packed_bytes={self.packed_bytes}",
            f"bytes_per_task={self.bytes_per_task}", f"partial_entries={self.partial_entries}",
            f"shuffle_bytes_per_iteration={self.shuffle_bytes_per_iteration}",
            f"checkpoint_bytes={self.checkpoint_bytes}",
            f"local_disk_per_executor={self.local_disk_per_executor}",
            f"executor_memory={self.executor_memory}",
            f"python_memory_per_task={self.python_memory_per_task}",
            f"python_memory_per_executor={self.python_memory_per_executor}",
            f"compress_shuffle_bytes={self.compress_shuffle_bytes}",
            f"spark.executor.cores={i.executor_cores}",
            f"spark.executor.memory={spark_size(self.executor_memory)}",
            f"spark.executor.memoryOverhead={spark_size(self.memory_overhead)}",
            f"spark.sql.shuffle.partitions={self.shuffle_partitions}",
            f"spark.driver.memory={spark_size(self.driver_memory)}",
        ]


def parse_count(text: str) -> int:
    """``10e9``, ``1e9``, ``2.5e6``, ``400`` or ``1_000`` as an integer (ValueError otherwise)."""
    value = float(text.replace("_", ""))
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise ValueError(f"not a non-negative whole number: {text!r}")
    return int(value)


def spark_size(n_bytes: int) -> str:
    """Bytes as a Spark memory setting, rounded up to whole MiB (``1536m``) or GiB (``12g``)."""
    if n_bytes >= 8 * GIB:
        return f"{math.ceil(n_bytes / GIB)}g"
    return f"{math.ceil(n_bytes / MIB)}m"


def entries_per_link(blocks: int) -> float:
    """P / E, the partial entries per link at ``blocks`` blocks (measured, see the module docstring)."""
    if blocks <= 1:
        return 0.0
    return max(0.0, min(1.0, ENTRIES_PER_LINK_LIMIT - ENTRIES_PER_LINK_DROP / math.sqrt(blocks)))


def block_plan(inputs: PlanInputs, params: RankParams) -> BlockPlan:
    """The engine's block plan for the graph, its out-links spread evenly over the vertices."""
    n, links = max(inputs.pages, 1), inputs.links
    one_task = plan_blocks(n, links, params, inputs.vectors, inputs.cores)
    if one_task.single_task:
        return one_task
    buckets = max(1, min(PLAN_BUCKETS, n))
    width = math.ceil(n / buckets)
    vertices = np.clip(n - np.arange(buckets, dtype=np.int64) * width, 0, width)
    bucket_links = np.floor(links * vertices / n).astype(np.int64)
    return plan_blocks(n, links, params, inputs.vectors, inputs.cores, bucket_links)


def shuffle_bytes_per_iteration(links: int, pages: int, vectors: int, blocks: int) -> int:
    """Bytes one iteration of the block engine shuffles: the partial entries, the rank blocks and
    the framing of the non-empty segments (at most B², at most one per partial entry)."""
    entries = entries_per_link(blocks) * links
    segments = min(blocks * blocks, entries) if blocks > 1 else 0
    return int(entries * vectors * SHUFFLE_BYTES_PER_ENTRY + pages * vectors * RANK_SHUFFLE_BYTES_PER_PAGE
               + segments * SEGMENT_BYTES)


def make_plan(inputs: PlanInputs, params: RankParams) -> Plan:
    blocks = block_plan(inputs, params)
    b, n, e = blocks.n_blocks, inputs.pages, inputs.links
    k = blocks.vectors
    packed = LINK_BYTES * e + (ROW_BYTES + 8 * k) * n
    per_task = min(params.block_bytes, math.ceil(packed / b)) if not blocks.single_task else packed
    entries = int(entries_per_link(b) * e)
    shuffle = 0 if blocks.single_task else shuffle_bytes_per_iteration(e, n, k, b)
    checkpoint = 0 if blocks.single_task else int(k * n * CHECKPOINT_BYTES_PER_PAGE)
    executors = max(1, math.ceil(inputs.cores / inputs.executor_cores))
    # a task: its block's values and their arrays, its outgoing partials, its incoming sums
    python_task = (PYTHON_WORKER_BYTES + ARROW_BATCH_BYTES + PYTHON_COPIES * per_task
                   + LINK_BYTES * k * math.ceil(e / b) + 8 * k * math.ceil(n / b))
    python_executor = python_task * inputs.executor_cores
    # the packed links are cached once (MEMORY_AND_DISK): their executor's share, plus shuffle buffers
    executor_memory = JVM_BASE_BYTES + math.ceil(packed / executors) + inputs.executor_cores * per_task
    # off-heap: the JVM's 10 % and the Python workers' resident memory (module docstring)
    overhead = max(MIN_OVERHEAD_BYTES, executor_memory // 10) + python_executor
    # two iterations' shuffle files live at once, plus the cached links spilled to disk; or the
    # (src, dst) pairs compress shuffles, whichever is more
    compress_shuffle = COMPRESS_SHUFFLE_BYTES_PER_LINK * e
    local_disk = math.ceil(max(2 * shuffle + packed, compress_shuffle) / executors)
    partitions = max(2 * inputs.cores, math.ceil(max(compress_shuffle, PACK_SHUFFLE_BYTES_PER_LINK * e)
                                                 / PARTITION_BYTES))
    driver = DRIVER_BASE_BYTES + MAP_STATUS_BYTES * b * b
    return Plan(inputs, b, blocks.single_task, k, per_task, packed, entries, shuffle, checkpoint, local_disk,
                executor_memory, python_task, python_executor, overhead, partitions, driver, compress_shuffle)



@dataclass(frozen=True)
class CentralityCost:
    """What a distributed HyperBall run over ``nodes`` and ``arcs`` ships and computes, in bytes and
    core-seconds, for ``BALL_ITERATIONS`` iterations (one task's graph ships nothing)."""

    nodes: int
    arcs: int
    blocks: int
    shuffle_bytes_per_iteration: int
    core_seconds: float

    @property
    def shuffle_bytes(self) -> int:
        return self.shuffle_bytes_per_iteration * BALL_ITERATIONS

    @property
    def core_hours(self) -> float:
        return self.core_seconds / 3600

    def describe(self) -> str:
        return (f"{self.blocks:,} blocks, {hyperball.size_text(self.shuffle_bytes_per_iteration)} shuffled per "
                f"iteration, {hyperball.size_text(self.shuffle_bytes)} over {BALL_ITERATIONS} iterations, "
                f"{self.core_hours:,.1f} core-hours of counter merges")

    def fits(self, max_shuffle_bytes: int) -> bool:
        return self.shuffle_bytes <= max_shuffle_bytes


def centrality_lines(inputs: PlanInputs, centrality: CentralityConfig, block_bytes: int) -> list[str]:
    """``linkgraph plan``'s lines for page-level ``linkgraph centrality`` on the planned graph: its
    shuffle per iteration and per run, its core-hours and hours on the cores, and whether it fits
    ``centrality.max_shuffle_bytes`` (``fits``) or would be refused (``refused``)."""
    cost = centrality_cost(inputs.pages, inputs.links, centrality.registers, centrality.block_max_nodes, block_bytes)
    return [
        f"centrality_page_blocks={cost.blocks}",
        f"centrality_page_shuffle_bytes_per_iteration={cost.shuffle_bytes_per_iteration}",
        f"centrality_page_shuffle_bytes={cost.shuffle_bytes}",
        f"centrality_page_core_hours={cost.core_hours:.1f}",
        f"centrality_page_hours={cost.core_hours / inputs.cores:.2f}",
        f"centrality_page={'fits' if cost.fits(centrality.max_shuffle_bytes) else 'refused'}",
    ]


def centrality_cost(nodes: int, arcs: int, registers: int, block_max_nodes: int, block_bytes: int
                    ) -> CentralityCost:
    """The cost of ``linkgraph centrality`` on a graph: per iteration every block's state is
    shuffled ``BALL_STATE_SHUFFLES`` times, and each (source block, destination node) pair with a
    link ships one merged counter (the rank engine's partial entries per link, ``entries_per_link``)."""
    block_nodes = hyperball.budget_block_nodes(registers, block_bytes, block_max_nodes)
    blocks, _ = hyperball.plan_blocks(max(nodes, 1), block_nodes)
    counter = hyperball.node_bytes(registers)
    shuffled = 0 if blocks == 1 else int(
        (BALL_STATE_SHUFFLES * nodes + entries_per_link(blocks) * arcs) * counter)
    seconds = BALL_ITERATIONS * arcs * BALL_ARC_SECONDS_PER_REGISTER * registers
    return CentralityCost(nodes, arcs, blocks, shuffled, seconds)

