"""Scaling bench: ingest, PageRank per iteration and compression on generated graphs of growing size.

    python bench/scale.py [--sizes 1M,5M,20M,50M] [--ingest-sizes 1M,5M] [--iterations 5] [--blocks 2]

One process, one local[2] session.  For every size N (edges generated):

* **ingest** (sizes in ``--ingest-sizes``; URL ingest is the slow path): N edge records from
  ``bench/ingest.py``'s generator (about N/8 pages on N/400 hosts, 1% bad records) as Parquet,
  ``ingest_step`` into a fresh lake;
* **pagerank**: the same link structure generated as page ids (about N/8 pages, hosts contiguous,
  self-loops and repeated pairs removed) written straight to a lake's ``pages``/``links``, then the
  block engine for ``--iterations`` iterations (``--blocks`` blocks, Spark jobs per iteration,
  no Delta checkpoints); the per-iteration figures exclude the first iteration (plan warm-up);
  A lineage cut every ``LINEAGE_EVERY`` iterations checkpoints the rank blocks (those
  iterations, which add a multiply stage, are left out of the per-iteration figures too); a
  ``plan:`` line sets the shuffle per iteration that ``linkgraph.rank.plan`` (the module
  ``linkgraph plan`` prints from) gives for the graph and B against the one Spark measured, and
  the checkpoint's bytes on disk against the carried state stored uncompressed (ranks and
  partials, 8·n + 12·P); the largest size's figures end the output as ``plan_vs_measured_shuffle=``,
  ``checkpoint_bytes_uncompressed_carried=``, ``checkpoint_bytes_measured=`` and
  ``checkpoint_bytes_plan=``;
* **compress**: ``compress_step`` on that lake.

Per step and size it prints seconds, edges/s, peak resident memory of the whole local Spark (the
JVM plus Python workers, each page counted once, sampled every 0.2 s), shuffle bytes written
(Spark's REST API, summed over the step's stages) and bytes per edge of the step's Delta output.
Then, between consecutive sizes, the growth exponent log(t2/t1)/log(m2/m1) of each step's time
(m = links; 1.0 is linear), and ends with ``pagerank_iteration_exponent_<a>_<b>=X`` for the
smallest and largest size of the run (the acceptance figure uses 5M and 50M).  Absolute times
depend on the machine's load; exponents are ratios measured in the same process and are the
figures to compare.

    python bench/scale.py --model [--model-links 20M] [--model-blocks 8,32,128] [--model-iterations 3]

The scale model of the block engine's distributed path (never single-task): a generated
host-structured graph (the links above) at B = 8, 32 and 128 blocks (forced), and the same graph
with one hub page receiving 5% of all links at the automatic B of ``--model-budget``.  Per run:
seconds per iteration, tasks per iteration stage, shuffle bytes per iteration (Spark's REST API;
the first iteration excluded), the partial entries an iteration sends (P, distinct (source block,
destination page) pairs) with the shuffle bytes per entry, and the largest packed value in bytes;
then ``partial_entries_growth_b8_to_b128=`` and ``shuffle_bytes_per_entry_b128=``; last lines
``shuffle_bytes_per_link_b128=X``, ``shuffle_growth_b8_to_b128=Y`` (ratio of the shuffle bytes per
iteration) and ``max_value_bytes=Z`` (over every run, hub graph included).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.session import get_spark
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import build_rank_graph
from linkgraph.rank.plan import CHECKPOINT_BYTES_PER_PAGE, shuffle_bytes_per_iteration
from linkgraph.steps import compress, ingest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import generate_edges  # noqa: E402  (bench/ingest.py: the URL edge-record generator)

PAGES_PER_HOST = 50
LINEAGE_EVERY = 3   # the PageRank runs cut their lineage (checkpoint the ranks) every 3 iterations


def parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1_000, "M": 1_000_000, "B": 1_000_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("KMB")) * scale)


def label(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}K"


def _resident_bytes(pid: int, stat_rss_pages: int) -> int:
    """The proportional resident set (``Pss``) of ``pid``: its private pages plus its share of the
    pages it shares.  Python workers are forked from one daemon and share most of their pages, so
    adding up their ``Rss`` counts those pages once per worker; adding up ``Pss`` counts them once.
    Falls back to ``Rss`` where ``smaps_rollup`` is missing."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return stat_rss_pages * os.sysconf("SC_PAGE_SIZE")


def tree_resident_bytes(root: int) -> int:
    """Resident memory of ``root`` and all its descendants (Linux /proc), each page counted once
    (the sum of their proportional resident sets, see :func:`_resident_bytes`)."""
    children: dict[int, list[int]] = {}
    stat_rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            pid, ppid = int(entry.name), int(fields[1])
            stat_rss[pid] = int(fields[21])
            children.setdefault(ppid, []).append(pid)
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        if pid in stat_rss:
            total += _resident_bytes(pid, stat_rss[pid])
        stack.extend(children.get(pid, []))
    return total


class PeakMemory:
    """Samples the resident memory of this process tree every 0.2 s while active."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_resident_bytes(os.getpid()))
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class StageMeter:
    """Stages completed since the last ``mark``: (shuffle bytes written, tasks per stage)."""

    def __init__(self, spark: SparkSession):
        sc = spark.sparkContext
        self.url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages?status=complete"
        self.seen = set(self._stages())

    def _stages(self) -> dict[tuple[int, int], tuple[int, int]]:
        with urllib.request.urlopen(self.url, timeout=60) as response:
            stages = json.load(response)
        return {(s["stageId"], s["attemptId"]): (int(s.get("shuffleWriteBytes", 0)), int(s.get("numTasks", 0)))
                for s in stages}

    def mark(self) -> tuple[int, list[int]]:
        now = self._stages()
        new = [v for key, v in now.items() if key not in self.seen]
        self.seen = set(now)
        return sum(b for b, _ in new), sorted({t for _, t in new})


def model_graph(spark: SparkSession, n_edges: int, hub_share: float = 0.0):
    """Host-structured links as a cached (src, dst) DataFrame (``write_generated_graph``'s
    structure); with ``hub_share``, that share of the links points at page 0 (one hub)."""
    from linkgraph.rank.graph import RankGraph

    n_pages = max(n_edges // 8, 10)
    ids = spark.range(n_edges)
    src = (F.hash(F.col("id")) % n_pages + n_pages) % n_pages
    skew = F.floor(F.pow(F.rand(7), 3) * n_pages).cast("long")
    in_host = (F.hash(F.col("id"), F.lit(1)) % PAGES_PER_HOST + PAGES_PER_HOST) % PAGES_PER_HOST
    dst = F.when(F.rand(11) < 0.7, F.floor(src / PAGES_PER_HOST) * PAGES_PER_HOST + in_host).otherwise(skew)
    dst = F.least(dst, F.lit(n_pages - 1))
    if hub_share:
        dst = F.when(F.rand(13) < hub_share, F.lit(0)).otherwise(dst)
    edges = (ids.select(src.cast("long").alias("src"), dst.cast("long").alias("dst"))
             .where(F.col("src") != F.col("dst")).dropDuplicates(["src", "dst"]).cache())
    return RankGraph(vertices=None, edges=edges, n=n_pages, n_edges=edges.count())


def run_model(spark: SparkSession, args) -> int:
    """``--model``: see the module docstring."""
    meter = StageMeter(spark)
    budget = args.model_budget
    rows: dict[str, tuple[float, list[int], float, int, int, int]] = {}

    def one(name: str, graph, blocks: int, block_bytes: int) -> None:
        params = RankParams(tol=1e-300, max_iter=args.model_iterations, blocks=blocks, checkpoint_every=0,
                            single_task=False, block_bytes=block_bytes)
        marks: list[tuple[float, int, list[int]]] = []

        def progress(stat):
            marks.append((stat.seconds, *meter.mark()))

        meter.mark()
        result = BlockEngine(spark, params).run(graph, progress=progress)
        timed = marks[1:] or marks
        seconds = sum(m[0] for m in timed) / len(timed)
        shuffle = sum(m[1] for m in timed) / len(timed)
        tasks = sorted({t for m in timed for t in m[2]})
        entries = result.exchange_rows
        rows[name] = (seconds, tasks, shuffle, result.max_value_bytes, result.blocks, entries)
        print(f"{name:<14} links={graph.n_edges:>11,} B={result.blocks:<4} {seconds:8.2f} s/iteration  "
              f"tasks per stage={tasks}  shuffle/iteration={shuffle / 2**20:8.2f} MiB "
              f"({shuffle / graph.n_edges:.2f} B/link)  partial entries P={entries:,} "
              f"({entries / graph.n_edges:.3f} per link, {shuffle / max(entries, 1):.2f} B/entry)  "
              f"max_value_bytes={result.max_value_bytes:,}", flush=True)

    graph = model_graph(spark, args.model_links)
    print(f"model graph: {graph.n:,} pages, {graph.n_edges:,} links; budget {budget:,} bytes", flush=True)
    for blocks in [int(b) for b in args.model_blocks.split(",")]:
        one(f"host b={blocks}", graph, blocks, budget)
    graph.edges.unpersist()
    hub = model_graph(spark, args.model_links, hub_share=0.05)
    print(f"hub graph: {hub.n:,} pages, {hub.n_edges:,} links, page 0 receives "
          f"{hub.edges.where(F.col('dst') == 0).count():,}", flush=True)
    one("hub auto-B", hub, 0, args.model_hub_budget)
    hub.edges.unpersist()
    first, last = rows[f"host b={args.model_blocks.split(',')[0]}"], rows[f"host b={args.model_blocks.split(',')[-1]}"]
    # P, distinct (source block, destination page) pairs, grows with B on any graph (a smaller
    # source block shares fewer destinations); bytes per entry is what the engine controls
    print(f"partial_entries_growth_b{args.model_blocks.split(',')[0]}_to_b{args.model_blocks.split(',')[-1]}="
          f"{last[5] / max(first[5], 1):.3f}")
    print(f"shuffle_bytes_per_entry_b{args.model_blocks.split(',')[-1]}={last[2] / max(last[5], 1):.2f}")
    print(f"shuffle_bytes_per_link_b{args.model_blocks.split(',')[-1]}={last[2] / graph.n_edges:.2f}")
    print(f"shuffle_growth_b{args.model_blocks.split(',')[0]}_to_b{args.model_blocks.split(',')[-1]}="
          f"{last[2] / max(first[2], 1):.3f}")
    print(f"max_value_bytes={max(r[3] for r in rows.values())}")
    return 0


class ShuffleMeter:
    """Shuffle bytes written by the stages completed since the last ``mark`` (Spark REST API)."""

    def __init__(self, spark: SparkSession):
        sc = spark.sparkContext
        self.url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages?status=complete"
        self.seen = self._stages()

    def _stages(self) -> dict[tuple[int, int], int]:
        with urllib.request.urlopen(self.url, timeout=60) as response:
            stages = json.load(response)
        return {(s["stageId"], s["attemptId"]): int(s.get("shuffleWriteBytes", 0)) for s in stages}

    def mark(self) -> int:
        now = self._stages()
        new = sum(b for key, b in now.items() if key not in self.seen)
        self.seen = now
        return new


def dir_bytes(path: Path, pattern: str = "*.parquet") -> int:
    """Bytes of the files under ``path`` named like ``pattern`` (``part-``: Spark's checkpoint parts)."""
    if pattern == "part-":
        return sum(p.stat().st_size for p in path.rglob("part-*") if p.is_file()) if path.exists() else 0
    return sum(p.stat().st_size for p in path.rglob(pattern) if "_delta_log" not in p.parts)


def plan_line(pages: int, links: int, result, measured_shuffle: int, checkpoint_bytes: int, cuts: int) -> str:
    """The plan's shuffle per iteration and checkpoint bytes for this graph and B (``linkgraph.rank.plan``,
    the module ``linkgraph plan`` prints from) against what Spark measured; the checkpoint of
    the carried state as it was stored uncompressed (ranks and partials) for comparison."""
    planned = shuffle_bytes_per_iteration(links, pages, 1, result.blocks)
    carried_raw = 8 * pages + 12 * result.exchange_rows
    per_checkpoint = checkpoint_bytes // max(cuts, 1)
    planned_checkpoint = int(CHECKPOINT_BYTES_PER_PAGE * pages)
    return (f"plan: links={links} pages={pages} blocks={result.blocks} planned_shuffle={planned} "
            f"measured_shuffle={measured_shuffle} plan_vs_measured_shuffle={planned / max(measured_shuffle, 1):.3f} "
            f"checkpoint_bytes_uncompressed_carried={carried_raw} checkpoint_bytes_ranks_raw={8 * pages} "
            f"checkpoint_bytes_measured={per_checkpoint} checkpoint_bytes_plan={planned_checkpoint}")


@dataclass
class Measure:
    step: str
    size: int
    links: int
    seconds: float
    peak_rss: int
    shuffle: int
    delta_bytes: int

    def line(self) -> str:
        return (f"{self.step:<19} size={label(self.size):<4} links={self.links:>11,} {self.seconds:9.2f} s "
                f"{self.links / self.seconds:13,.0f} edges/s  peak_rss={self.peak_rss / 2**20:7.0f} MiB  "
                f"shuffle={self.shuffle / 2**20:9.1f} MiB  delta_bytes_per_edge={self.delta_bytes / max(self.links, 1):6.2f}")


def write_generated_graph(spark: SparkSession, lake: Lake, n_edges: int) -> int:
    """The link structure of ``generate_edges`` as page ids straight into ``pages``/``links``
    (what an arc-list ingest stores); returns the number of links."""
    n_pages = max(n_edges // 8, 10)
    ids = spark.range(n_edges)
    src = (F.hash(F.col("id")) % n_pages + n_pages) % n_pages
    skew = F.floor(F.pow(F.rand(7), 3) * n_pages).cast("long")
    same_host = F.rand(11) < 0.7
    in_host = (F.hash(F.col("id"), F.lit(1)) % PAGES_PER_HOST + PAGES_PER_HOST) % PAGES_PER_HOST
    dst = F.when(same_host, F.floor(src / PAGES_PER_HOST) * PAGES_PER_HOST + in_host).otherwise(skew)
    dst = F.least(dst, F.lit(n_pages - 1))
    arcs = ids.select(src.cast("long").alias(S.SRC_ID), dst.cast("long").alias(S.DST_ID)).where(
        F.col(S.SRC_ID) != F.col(S.DST_ID)).dropDuplicates([S.SRC_ID, S.DST_ID])
    links = arcs.select(*[(F.col(f.name) if f.name in (S.SRC_ID, S.DST_ID) else F.lit(None)).cast(f.dataType).alias(f.name)
                          for f in S.LINKS.fields])
    pages = spark.range(n_pages).select(*[(F.col("id") if f.name == S.PAGE_ID else F.lit(None)).cast(f.dataType).alias(f.name)
                                          for f in S.PAGES.fields])
    lake.overwrite(S.PAGES_TABLE, pages)
    lake.overwrite(S.LINKS_TABLE, links.repartitionByRange(8, S.SRC_ID, S.DST_ID).sortWithinPartitions(S.SRC_ID, S.DST_ID))
    return lake.read(S.LINKS_TABLE).count()


def measure(step, size, links_of, action, spark, shuffle, output_dirs) -> Measure:
    shuffle.mark()
    with PeakMemory() as memory:
        started = time.monotonic()
        result = action()
        seconds = time.monotonic() - started
    links = links_of(result)
    m = Measure(step, size, links, seconds, memory.peak, shuffle.mark(), sum(dir_bytes(d) for d in output_dirs))
    print(m.line(), flush=True)
    return m


def exponent(a: Measure, b: Measure) -> float:
    return math.log(b.seconds / a.seconds) / math.log(b.links / a.links)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,5M,20M,50M", help="edges generated per size (K/M suffixes)")
    parser.add_argument("--ingest-sizes", default="1M,5M", help="sizes at which URL ingest is measured too")
    parser.add_argument("--iterations", type=int, default=5, help="PageRank iterations per size (first excluded)")
    parser.add_argument("--blocks", type=int, default=2, help="PageRank vertex blocks, the same at every size")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards)")
    parser.add_argument("--no-compress", action="store_true", help="skip the compress step (PageRank and plan only)")
    parser.add_argument("--model", action="store_true", help="the distributed path's scale model instead")
    parser.add_argument("--model-links", type=parse_size, default=parse_size("20M"))
    parser.add_argument("--model-blocks", default="8,32,128")
    parser.add_argument("--model-iterations", type=int, default=3, help="the first is excluded from the figures")
    parser.add_argument("--model-budget", type=int, default=64 << 20, help="rank.block_bytes of the forced-B runs")
    parser.add_argument("--model-hub-budget", type=int, default=4 << 20,
                        help="rank.block_bytes of the hub run (small, so that the hub's in-links must be cut)")
    args = parser.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    ingest_sizes = {parse_size(s) for s in args.ingest_sizes.split(",") if s}

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-scale-"))
    spark_conf = {
        "master": "local[2]", "shuffle_partitions": 4, "driver_memory": args.driver_memory,
        "checkpoint_dir": str(workdir / "checkpoints"),
        "conf": {"spark.default.parallelism": "4", "spark.ui.enabled": "true", "spark.ui.showConsoleProgress": "false",
                 "spark.ui.retainedStages": "100000", "spark.ui.retainedJobs": "100000",
                 "spark.databricks.delta.snapshotPartitions": "2", "spark.sql.adaptive.enabled": "true"},
    }
    spark = get_spark(config_from_dict({"spark": spark_conf}).spark)
    spark.sparkContext.setLogLevel("ERROR")
    if args.model:
        try:
            return run_model(spark, args)
        finally:
            spark.stop()
            if not args.workdir:
                shutil.rmtree(workdir, ignore_errors=True)
    shuffle = ShuffleMeter(spark)
    print(f"scale bench: sizes {', '.join(map(label, sizes))}; local[2]; load average at start "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    results: dict[str, list[Measure]] = {}
    plan_lines: list[str] = []
    try:
        for size in sizes:
            if size in ingest_sizes:
                config = config_from_dict({"lake": {"path": str(workdir / f"url-{size}")}})
                source = str(workdir / f"edges-{size}.parquet")
                generate_edges(spark, size, source)
                m = measure("ingest", size, lambda r: r.read,
                            lambda: ingest.run(StepContext.create(spark, config), ingest.Params(source, "parquet")),
                            spark, shuffle, [workdir / f"url-{size}" / S.LINKS_TABLE, workdir / f"url-{size}" / S.PAGES_TABLE])
                results.setdefault("ingest", []).append(m)
                shutil.rmtree(workdir / f"url-{size}", ignore_errors=True)
                shutil.rmtree(source, ignore_errors=True)

            config = config_from_dict({"lake": {"path": str(workdir / f"ids-{size}")}})
            lake = Lake(spark, config.lake)
            n_links = write_generated_graph(spark, lake, size)
            pages, links = lake.read(S.PAGES_TABLE), lake.read(S.LINKS_TABLE)
            graph = build_rank_graph(pages, links, ())
            graph.n_edges = n_links
            params = RankParams(tol=1e-300, max_iter=args.iterations, blocks=args.blocks, checkpoint_every=0,
                                single_task=False, lineage_every=LINEAGE_EVERY)
            marks: list[tuple[float, int]] = []

            def progress(stat):
                marks.append((stat.seconds, shuffle.mark()))

            shuffle.mark()
            checkpoints_before = dir_bytes(workdir / "checkpoints", "part-")
            with PeakMemory() as memory:
                started = time.monotonic()
                result = BlockEngine(spark, params).run(graph, progress=progress)
                total = time.monotonic() - started
            # the first iteration also carries the packing's leftovers; a lineage cut adds a multiply stage
            timed = [m for i, m in enumerate(marks, 1) if i > 1 and i % LINEAGE_EVERY]
            per_iteration = Measure("pagerank_iteration", size, n_links, sum(s for s, _ in timed) / len(timed),
                                    memory.peak, sum(b for _, b in timed) // len(timed), 0)
            print(per_iteration.line() + f"  (run incl. packing {total:.1f} s)", flush=True)
            results.setdefault("pagerank_iteration", []).append(per_iteration)
            plan_lines.append(plan_line(graph.n, n_links, result, per_iteration.shuffle,
                                        dir_bytes(workdir / "checkpoints", "part-") - checkpoints_before,
                                        len(marks) // LINEAGE_EVERY))
            print(plan_lines[-1], flush=True)
            graph.vertices.unpersist()

            if not args.no_compress:
                m = measure("compress", size, lambda r: n_links,
                            lambda: compress.run(StepContext.create(spark, config), compress.Params()), spark, shuffle,
                            [workdir / f"ids-{size}" / t for t in (S.LINKS_COMPRESSED_FORWARD_TABLE,
                                                                 S.LINKS_COMPRESSED_REVERSE_TABLE,
                                                                 S.LINKS_COMPRESSED_OFFSETS_TABLE,
                                                                 S.LINKS_COMPRESSED_ORDER_TABLE)])
                results.setdefault("compress", []).append(m)
                print(f"links table: {dir_bytes(workdir / f'ids-{size}' / S.LINKS_TABLE) / n_links:.2f} bytes per edge "
                      f"(src_id, dst_id, null columns; Parquet snappy)", flush=True)
            shutil.rmtree(workdir / f"ids-{size}", ignore_errors=True)

        print("growth exponents (log time ratio / log links ratio; 1.0 = linear):")
        for step, ms in results.items():
            for a, b in zip(ms, ms[1:]):
                print(f"  {step:<19} {label(a.size)} -> {label(b.size)}: {exponent(a, b):.3f}")
        ranks = results.get("pagerank_iteration", [])
        if len(ranks) >= 2:
            a, b = ranks[0], ranks[-1]
            print(f"pagerank_iteration_exponent_{label(a.size)}_{label(b.size)}={exponent(a, b):.3f}")
        if plan_lines:   # the largest graph's figures as key=value lines
            for field in plan_lines[-1].split()[1:]:
                if field.split("=")[0] in ("plan_vs_measured_shuffle", "checkpoint_bytes_uncompressed_carried",
                                           "checkpoint_bytes_measured", "checkpoint_bytes_plan"):
                    print(field)
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
