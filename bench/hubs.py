"""Hub bench: analyze, scores, reward and compress on a generated graph with a hub page and a huge host.

    python bench/hubs.py [--links 20M] [--hub-in-links 2M] [--host-pages 5M] [--driver-memory 4g]
                         [--max-list-entries 65536] [--workdir DIR] [--steps analyze,scores,reward,compress]

One process, one local[2] session with ``--driver-memory`` (4 GB by default).  The
graph is written straight to a lake's ``pages``/``links``, created as ingest creates them
(clustered by id, deletion vectors on), holding what ingest would store (ingest itself is
``bench/scale.py``'s subject): ``--links`` links in all, of which page 0 -- a page of the big
host -- receives ``--hub-in-links`` (from pages 1, 2, ...), and the host ``www.big-host.com``
holds ``--host-pages`` pages; the other pages sit 100 to a host and 1,000 to a registered domain.
Numbers in URLs are zero-padded and ``url_key`` is set, so the ids follow ``url_key`` order as
ingest numbers pages.
The rest of the links are 70% within the source's host, 30% to a skewed random page; anchors are
drawn from 1,000 texts.

Per step (``analyze``, ``scores`` from one seed, ``reward`` with ``--rounds`` rounds and no
pruning, ``compress``) it prints seconds, peak resident memory of the whole local Spark (JVM plus
Python workers, each page counted once: the sum of their proportional set sizes, sampled every
0.2 s) and shuffle bytes written.  Then the largest array in any row
of any table the lake holds (top-level array columns of every Delta table), and the seconds of a
single-page compressed lookup of the hub's in-links and out-links in a fresh Python process
(cold: no Spark, ``ConnectivityIndex.open`` then one query each), with the data files it read,
and the wall seconds of ``linkgraph links --compressed out|in <hub URL>`` each in a fresh
interpreter.  A lake already in ``--workdir`` is reused (``--steps`` picks the steps to run).
It ends with ``hop_depth_rounds=R`` (the scores step's hop search, when it ran),
``max_row_entries=N`` and ``single_page_lookup_seconds=S`` (the ``out`` command's seconds).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType

from linkgraph.cli import main as cli
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.session import get_spark
from linkgraph.lake.tables import ensure_core_tables
from linkgraph.steps import analyze, compress, scores

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import PeakMemory, ShuffleMeter, parse_size  # noqa: E402  (bench/scale.py's meters)

BIG_HOST, BIG_DOMAIN = "www.big-host.com", "big-host.com"
PAGES_PER_HOST, PAGES_PER_DOMAIN = 100, 1000


def page_url(page: F.Column, host_pages: int) -> tuple[F.Column, F.Column, F.Column, F.Column]:
    """(url, host, registered_domain, url_key) of page id ``page``.  Numbers are zero-padded, so the
    ids follow ``url_key`` order as ingest numbers pages (big host first, then by domain and host)."""
    def padded(value: F.Column) -> F.Column:
        return F.lpad(value.cast("long").cast("string"), 9, "0")

    big = page < host_pages
    domain_number, host_number = padded(F.floor(page / PAGES_PER_DOMAIN)), padded(F.floor(page / PAGES_PER_HOST))
    domain = F.when(big, F.lit(BIG_DOMAIN)).otherwise(F.concat(F.lit("d"), domain_number, F.lit(".net")))
    host = F.when(big, F.lit(BIG_HOST)).otherwise(F.concat(F.lit("h"), host_number, F.lit("."), domain))
    reversed_host = F.when(big, F.lit(".".join(reversed(BIG_HOST.split("."))))).otherwise(
        F.concat(F.lit("net.d"), domain_number, F.lit(".h"), host_number))
    path = F.concat(F.lit("/p"), padded(page))
    return F.concat(F.lit("http://"), host, path), host, domain, F.concat(reversed_host, path)


def hub_pages(spark: SparkSession, n_pages: int, host_pages: int) -> DataFrame:
    """The ``pages`` rows of the hub graph."""
    url, host, domain, key = page_url(F.col("id"), host_pages)
    values = {S.PAGE_ID: F.col("id"), S.URL: url, S.HOST: host, S.REGISTERED_DOMAIN: domain, S.URL_KEY: key}
    return spark.range(n_pages).select(*[
        (values[f.name] if f.name in values else F.lit(None)).cast(f.dataType).alias(f.name) for f in S.PAGES.fields])


def write_hub_graph(spark: SparkSession, lake: Lake, n_links: int, hub_in: int, host_pages: int) -> tuple[int, int]:
    """Pages and links of the hub graph into the lake; returns (pages, links)."""
    n_pages = max(host_pages * 2, n_links // 4, hub_in + 2)
    pages = hub_pages(spark, n_pages, host_pages)
    hub = spark.range(1, hub_in + 1).select(F.col("id").alias(S.SRC_ID), F.lit(0).cast("long").alias(S.DST_ID))
    ids = spark.range(max(n_links - hub_in, 0))
    src = (F.xxhash64(F.col("id")) % n_pages + n_pages) % n_pages
    in_range = (F.xxhash64(F.col("id"), F.lit(1)) % PAGES_PER_HOST + PAGES_PER_HOST) % PAGES_PER_HOST
    within_big = (F.xxhash64(F.col("id"), F.lit(2)) % host_pages + host_pages) % host_pages
    host_start = F.floor(src / PAGES_PER_HOST) * PAGES_PER_HOST
    same_host = F.when(src < host_pages, within_big).otherwise(host_start + in_range)
    skewed = F.floor(F.pow(F.rand(7), 3) * n_pages).cast("long")
    dst = F.least(F.when(F.rand(11) < 0.7, same_host).otherwise(skewed), F.lit(n_pages - 1))
    rest = ids.select(src.cast("long").alias(S.SRC_ID), dst.cast("long").alias(S.DST_ID))
    arcs = hub.unionByName(rest).where(F.col(S.SRC_ID) != F.col(S.DST_ID)).dropDuplicates([S.SRC_ID, S.DST_ID])
    anchor = F.concat(F.lit("anchor "), (F.xxhash64(S.SRC_ID, S.DST_ID) % 1000).cast("string"))
    link_values = {S.SRC_ID: F.col(S.SRC_ID), S.DST_ID: F.col(S.DST_ID), S.ANCHOR_TEXT: anchor}
    links = arcs.select(*[(link_values[f.name] if f.name in link_values else F.lit(None)).cast(f.dataType).alias(f.name)
                          for f in S.LINKS.fields])
    ensure_core_tables(lake)   # as ingest creates them: clustered by id, deletion vectors on
    lake.append(S.PAGES_TABLE, pages.repartitionByRange(8, S.PAGE_ID).sortWithinPartitions(S.PAGE_ID))
    by_pair = (S.SRC_ID, S.DST_ID)
    lake.append(S.LINKS_TABLE, links.repartitionByRange(16, *by_pair).sortWithinPartitions(*by_pair))
    return n_pages, lake.read(S.LINKS_TABLE).count()


def max_row_entries(spark: SparkSession, lake_dir: Path) -> dict[str, int]:
    """Per Delta table of the lake: the most entries of any top-level array column in one row."""
    found: dict[str, int] = {}
    for table in sorted(p.parent.name for p in lake_dir.glob("*/_delta_log")):
        df = spark.read.format("delta").load(str(lake_dir / table))
        arrays = [f.name for f in df.schema.fields if isinstance(f.dataType, ArrayType)]
        if arrays:
            row = df.agg(*[F.coalesce(F.max(F.size(c)), F.lit(0)).alias(c) for c in arrays]).first()
            found[table] = max(int(row[c]) for c in arrays)
    return found


LOOKUP = """
import json, sys, time
started = time.monotonic()
from linkgraph.compress import ConnectivityIndex
index = ConnectivityIndex.open(sys.argv[1])
outs = index.out_links(int(sys.argv[2]))
out_seconds, out_files = time.monotonic() - started, list(index.files_read)
ins = index.in_links(int(sys.argv[2]))
print(json.dumps({"seconds": out_seconds, "in_seconds": time.monotonic() - started - out_seconds,
                  "in": len(ins), "out": len(outs), "out_files": out_files,
                  "in_files": index.files_read[len(out_files):]}))
"""

CLI = "import sys; from linkgraph.cli import main; sys.exit(main(sys.argv[1:]))"
STEPS = ("analyze", "scores", "reward", "compress")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", default="20M", help="links generated (K/M suffixes; default 20M)")
    parser.add_argument("--hub-in-links", default="2M", help="in-links of the hub page (default 2M)")
    parser.add_argument("--host-pages", default="5M", help="pages of the big host (default 5M)")
    parser.add_argument("--rounds", type=int, default=10, help="reward rounds (default 10)")
    parser.add_argument("--max-list-entries", type=int, default=65536, help="analysis.max_list_entries")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards); "
                        "a lake already in it is reused, not generated again")
    parser.add_argument("--steps", default=",".join(STEPS),
                        help=f"steps to run, comma-separated (default: {','.join(STEPS)})")
    args = parser.parse_args(argv)
    n_links, hub_in, host_pages = parse_size(args.links), parse_size(args.hub_in_links), parse_size(args.host_pages)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-hubs-"))
    lake_dir = workdir / "lake"
    config = config_from_dict({
        "lake": {"path": str(lake_dir)},
        "analysis": {"max_list_entries": args.max_list_entries},
        "spark": {"master": "local[2]", "shuffle_partitions": 8, "driver_memory": args.driver_memory,
                  "checkpoint_dir": str(workdir / "checkpoints"),
                  "conf": {"spark.default.parallelism": "4", "spark.ui.enabled": "true",
                           "spark.ui.showConsoleProgress": "false", "spark.ui.retainedStages": "100000",
                           "spark.ui.retainedJobs": "100000", "spark.databricks.delta.snapshotPartitions": "2",
                           "spark.sql.adaptive.enabled": "true"}},
    })
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    shuffle = ShuffleMeter(spark)
    print(f"hubs bench: links={n_links:,} hub_in_links={hub_in:,} host_pages={host_pages:,} local[2] "
          f"driver {args.driver_memory}; load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
          flush=True)
    try:
        lake = Lake(spark, config.lake)
        started = time.monotonic()
        if lake.exists(S.LINKS_TABLE):
            n_pages, stored = lake.read(S.PAGES_TABLE).count(), lake.read(S.LINKS_TABLE).count()
            print(f"reusing the lake of {workdir}: pages={n_pages:,} links={stored:,}", flush=True)
        else:
            n_pages, stored = write_hub_graph(spark, lake, n_links, hub_in, host_pages)
            print(f"generated pages={n_pages:,} links={stored:,} in {time.monotonic() - started:.1f} s", flush=True)
        hub_url = lake.read(S.PAGES_TABLE).where(F.col(S.PAGE_ID) == 0).first()[S.URL]
        seed_url = lake.read(S.PAGES_TABLE).where(F.col(S.PAGE_ID) == host_pages).first()[S.URL]

        def reward() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                code = cli(["reward", "--lake", str(lake_dir), "--rounds", str(args.rounds), "--no-prune",
                            "--seeds", seed_url])
            if code != 0:
                raise SystemExit(f"reward exited {code}")

        actions = {"analyze": lambda: analyze.run(StepContext.create(spark, config), analyze.Params()),
                   "scores": lambda: scores.run(StepContext.create(spark, config), scores.Params(seeds=seed_url)),
                   "reward": reward,
                   "compress": lambda: compress.run(StepContext.create(spark, config), compress.Params())}
        chosen = [name.strip() for name in args.steps.split(",") if name.strip()]
        if unknown := set(chosen) - set(STEPS):
            raise SystemExit(f"--steps: unknown step(s) {sorted(unknown)}; choose from {','.join(STEPS)}")
        steps = [(name, actions[name]) for name in STEPS if name in chosen]
        shuffle.mark()
        hop_rounds = None
        for name, action in steps:
            with PeakMemory() as memory:
                started = time.monotonic()
                report = action()
                seconds = time.monotonic() - started
            print(f"{name:<9} {seconds:9.1f} s  peak_rss={memory.peak / 2**20:7.0f} MiB  "
                  f"shuffle={shuffle.mark() / 2**20:9.1f} MiB", flush=True)
            if name == "scores":
                hop_rounds = report.hop_rounds
                print(f"  hop depth: {hop_rounds} rounds (scores.max_depth {config.scores.max_depth}, "
                      f"hop_limit {config.scores.hop_limit})", flush=True)

        entries = max_row_entries(spark, lake_dir)
        for table, n in entries.items():
            print(f"  largest array in a row of {table}: {n:,}")
        lookup = subprocess.run([sys.executable, "-c", LOOKUP, str(lake_dir), "0"], capture_output=True, text=True,
                                check=True)
        answer = json.loads(lookup.stdout.strip().splitlines()[-1])
        print(f"single-page lookup of {hub_url} (cold process, no Spark): out_links={answer['out']:,} in "
              f"{answer['seconds']:.3f} s (imports + open + query), then in_links={answer['in']:,} in "
              f"{answer['in_seconds']:.3f} s", flush=True)
        for direction in ("out", "in"):
            for path in answer[f"{direction}_files"]:
                print(f"  {direction} read {path}")
        cli_seconds = {}
        for direction in ("out", "in"):   # the command itself, a fresh interpreter each (no Spark, no pyspark)
            started = time.monotonic()
            subprocess.run([sys.executable, "-c", CLI, "links", direction, hub_url, "--compressed", "--lake",
                            str(lake_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            cli_seconds[direction] = time.monotonic() - started
        print(f"linkgraph links --compressed out/in {hub_url} (fresh process, 1,000 URLs printed): "
              f"{cli_seconds['out']:.3f} / {cli_seconds['in']:.3f} s", flush=True)
        if hop_rounds is not None:
            print(f"hop_depth_rounds={hop_rounds}")
        print(f"max_row_entries={max(entries.values(), default=0)}")
        print(f"single_page_lookup_seconds={cli_seconds['out']:.3f}")
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
