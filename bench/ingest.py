"""Ingest throughput against a plain Parquet -> Delta copy of the same records, in one session;
with ``--incremental``, what a small daily batch rewrites of a large ``links`` table.

    python bench/ingest.py [--edges N]
    python bench/ingest.py --incremental [--base-links N] [--batch-fraction F]

Generates N edge records (about N/8 pages on N/400 hosts, power-law-ish targets, 1% bad records)
as Parquet, then times (a) ``linkgraph ingest`` into a fresh lake and (b) a plain
``spark.read.parquet(...).write.format("delta")`` copy, timed before and after the ingest; then
the same ingest into another fresh lake, and the copy once more; then a copy and an ingest of
1,000 records (the cost every ingest pays whatever its size).  Prints ``ingest_fixed_vs_copy=X``
(the 1,000-record ingest / the copy of N records), ``ingest_marginal_vs_copy=X`` (what the second
ingest spends beyond the fixed cost / what the copy of N records spends beyond the 1,000-record
copy: the ratio a batch of billions approaches) and ``ingest_warm_vs_copy=X`` (the second ingest /
the mean of the two copies around it); ends with ``ingest_vs_copy=X`` (the first ingest of the
process / the mean of the two copies around it).

``--incremental`` ingests a base of N generated links (default 10M), runs ``OPTIMIZE`` on
``pages`` and ``links`` (the clustered layout, README "Ingest at scale"), then ingests a batch of
F×N records (default 1%) whose sources lie in F of the hosts: links seen again later (updated),
new links between known pages and links to new pages.  It prints the bytes the batch's commits
wrote to ``links`` (``numTargetBytesAdded`` of its MERGEs, Delta history) and the files they
removed, over the table's bytes, ending with ``incremental_rewrite_fraction=X``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.session import get_spark
from linkgraph.steps import ingest

TINY_EDGES = 1_000  # the fixed-cost ingest: a batch whose size the time does not depend on


def generate_edges(spark: SparkSession, n_edges: int, path: str) -> None:
    n_pages = max(n_edges // 8, 10)
    pages_per_host = 50
    ids = spark.range(n_edges)
    src = (F.hash(F.col("id")) % n_pages + n_pages) % n_pages
    # targets skewed towards low page numbers (popular pages), mostly on the source's host
    skew = F.floor(F.pow(F.rand(7), 3) * n_pages).cast("long")
    same_host = F.rand(11) < 0.7
    dst = F.when(same_host, F.floor(src / pages_per_host) * pages_per_host + (F.hash(F.col("id"), F.lit(1)) % pages_per_host + pages_per_host) % pages_per_host).otherwise(skew)

    def url(page):
        return F.concat(F.lit("http://www.host"), F.floor(page / pages_per_host).cast("string"), F.lit(".com/section/page"), page.cast("string"), F.lit(".html"))

    positions = F.array(*[F.lit(p) for p in ("NAV", "CONTENT", "FOOTER", "SIDEBAR")])
    rels = F.array(F.lit(None), F.lit(None), F.lit(None), F.lit(None), F.lit("nofollow"), F.lit(None), F.lit("ugc"), F.lit(None))
    bad = F.col("id") % 100 == 0
    day = F.lit("2026-01-01").cast("timestamp") + F.make_interval(F.lit(0), F.lit(0), F.lit(0), (F.col("id") % 30).cast("int"))
    edges = ids.select(
        url(src).alias("from_url"),
        F.when(bad, F.lit("mailto:someone@example.com")).otherwise(url(dst)).alias("to_url"),
        F.concat(F.lit("page "), dst.cast("string")).alias("anchor_text"),
        F.concat(F.lit("read more about page "), dst.cast("string"), F.lit(" in this section")).alias("context_window"),
        F.element_at(rels, (F.col("id") % 8 + 1).cast("int")).alias("rel"),
        F.element_at(positions, (F.col("id") % 4 + 1).cast("int")).alias("position"),
        day.alias("discovered_at"),
        (day + F.expr("INTERVAL 3 DAYS")).alias("last_seen_at"),
    )
    edges.write.mode("overwrite").parquet(path)


def generate_batch(spark: SparkSession, n_base: int, fraction: float, path: str) -> None:
    """``fraction`` × ``n_base`` records whose sources are pages of the hosts ``h`` with
    ``h % round(1/fraction) == 0`` (a ``fraction`` of the base's hosts), seen later than the base:
    a fifth link to a page new on the same host, the rest to pages of the host or popular ones
    (some of those pairs are stored already and get updated, the others are new links)."""
    n_pages = max(n_base // 8, 10)
    pages_per_host = 50
    n_hosts = max(n_pages // pages_per_host, 1)
    every = max(round(1 / fraction), 1)
    chosen = max(n_hosts // every, 1)
    n = max(int(n_base * fraction), 1)
    ids = spark.range(n)
    host = (F.abs(F.hash(F.col("id"), F.lit(3))) % chosen) * every
    src = host * pages_per_host + F.abs(F.hash(F.col("id"), F.lit(4))) % pages_per_host
    new_page = F.col("id") % 5 == 0
    same_host = F.rand(13) < 0.7
    known_dst = F.when(same_host, host * pages_per_host + F.abs(F.hash(F.col("id"), F.lit(5))) % pages_per_host) \
        .otherwise(F.floor(F.pow(F.rand(17), 3) * n_pages).cast("long"))

    def url(host_no, page):
        return F.concat(F.lit("http://www.host"), host_no.cast("string"), F.lit(".com/section/page"),
                        page.cast("string"), F.lit(".html"))

    dst_url = F.when(new_page, url(host, F.lit(n_pages) + F.col("id"))).otherwise(
        url(F.floor(known_dst / pages_per_host), known_dst))
    day = F.lit("2026-03-01").cast("timestamp")
    ids.select(
        url(F.floor(src / pages_per_host), src).alias("from_url"),
        dst_url.alias("to_url"),
        F.concat(F.lit("recrawled "), F.col("id").cast("string")).alias("anchor_text"),
        F.lit("seen again in the daily recrawl").alias("context_window"),
        F.lit(None).cast("string").alias("rel"),
        F.lit("CONTENT").alias("position"),
        day.alias("discovered_at"),
        day.alias("last_seen_at"),
    ).write.mode("overwrite").parquet(path)


def incremental(spark: SparkSession, config, workdir: Path, n_base: int, fraction: float) -> float:
    """Base ingest, OPTIMIZE, one batch; returns (and prints) the rewrite fraction of ``links``."""
    from linkgraph.lake import schemas as S
    from linkgraph.lake.delta import Lake

    lake = Lake(spark, config.lake)
    base, batch = str(workdir / "base.parquet"), str(workdir / "batch.parquet")
    generate_edges(spark, n_base, base)
    started = time.monotonic()
    report = ingest.run(StepContext.create(spark, config), ingest.Params(base, "parquet"))
    print(f"base:   {time.monotonic() - started:8.1f} s  ({report.summary()})", flush=True)
    started = time.monotonic()
    for table in (S.PAGES_TABLE, S.LINKS_TABLE):
        spark.sql(f"OPTIMIZE delta.`{lake.location(table)}`").collect()
    links = lake.delta_table(S.LINKS_TABLE)
    detail = links.detail().first()
    print(f"optimize: {time.monotonic() - started:6.1f} s  (links: {detail['numFiles']} files, "
          f"{detail['sizeInBytes']:,} bytes)", flush=True)
    before = lake.current_version(S.LINKS_TABLE)

    generate_batch(spark, n_base, fraction, batch)
    started = time.monotonic()
    report = ingest.run(StepContext.create(spark, config), ingest.Params(batch, "parquet"))
    print(f"batch:  {time.monotonic() - started:8.1f} s  ({report.summary()})", flush=True)
    commits = links.history().where(F.col("version") > before).collect()
    written = removed = 0
    for commit in commits:
        metrics = commit["operationMetrics"] or {}
        written += int(metrics.get("numTargetBytesAdded", metrics.get("numOutputBytes", 0)))
        removed += int(metrics.get("numTargetBytesRemoved", 0))
        print(f"  links v{commit['version']} {commit['operation']}: "
              f"rows +{metrics.get('numTargetRowsInserted')} ~{metrics.get('numTargetRowsUpdated')}, "
              f"bytes +{metrics.get('numTargetBytesAdded')} -{metrics.get('numTargetBytesRemoved')}, "
              f"deletion vectors +{metrics.get('numTargetDeletionVectorsAdded')}", flush=True)
    table_bytes = int(links.detail().first()["sizeInBytes"])
    print(f"links: {table_bytes:,} bytes; the batch wrote {written:,} bytes and removed {removed:,} bytes of "
          f"files in {len(commits)} commits", flush=True)
    fraction_rewritten = (written + removed) / table_bytes
    print(f"incremental_rewrite_fraction={fraction_rewritten:.4f}")
    return fraction_rewritten


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--incremental", action="store_true",
                        help="measure what a small batch rewrites of a large links table instead")
    parser.add_argument("--base-links", type=int, default=10_000_000, help="--incremental: base records")
    parser.add_argument("--batch-fraction", type=float, default=0.01,
                        help="--incremental: batch records and source hosts, as a fraction of the base")
    parser.add_argument("--max-file-mb", type=int, default=0,
                        help="--incremental: OPTIMIZE's target file size (0: Delta's default)")
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards)")
    parser.add_argument("--driver-memory", default=None,
                        help="the local[2] session's heap (default: 2g, 4g from 5M records on)")
    parser.add_argument("--shuffle-partitions", type=int, default=None,
                        help="spark.shuffle_partitions (default: the project's 4, 64 from 5M records on)")
    args = parser.parse_args(argv)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-ingest-"))
    records = args.base_links if args.incremental else args.edges
    # the local defaults (4 partitions, 2g) suit about a million records; larger inputs need more
    # of both on one machine (README "Configuration")
    large = records >= 5_000_000
    spark_config = {"master": "local[2]", "driver_memory": args.driver_memory or ("4g" if large else "2g"),
                    "shuffle_partitions": args.shuffle_partitions or (64 if large else 4)}
    config = config_from_dict({"lake": {"path": str(workdir / "lake")}, "spark": spark_config})
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    if args.max_file_mb:
        spark.conf.set("spark.databricks.delta.optimize.maxFileSize", str(args.max_file_mb * 1024 * 1024))
    try:
        if args.incremental:
            incremental(spark, config, workdir, args.base_links, args.batch_fraction)
            return 0
        source = str(workdir / "edges.parquet")
        generate_edges(spark, args.edges, source)
        n = spark.read.parquet(source).count()
        print(f"generated {n} edge records at {source}", flush=True)

        def copy(path: str = source, target: str = "copy") -> float:
            started = time.monotonic()
            spark.read.parquet(path).write.format("delta").mode("overwrite").save(str(workdir / target))
            seconds = time.monotonic() - started
            print(f"copy:   {seconds:8.1f} s  ({path.rsplit('/', 1)[-1]}: parquet -> delta)", flush=True)
            return seconds

        copy_before = copy()
        started = time.monotonic()
        report = ingest.run(StepContext.create(spark, config), ingest.Params(source, "parquet"))
        ingest_seconds = time.monotonic() - started
        print(f"ingest: {ingest_seconds:8.1f} s  {n / ingest_seconds:12,.0f} records/s  ({report.summary()})", flush=True)
        # the copy again after the ingest: on a shared machine the load moves during the ingest
        copy_after = copy()
        copy_seconds = (copy_before + copy_after) / 2
        # the same records into a fresh lake once more: what a process that has ingested before
        # pays (the first ingest of a process also pays the JVM's, code generation's and Python
        # workers' warm-up, a fixed cost a billion-link batch does not notice)
        config_warm = config_from_dict({"lake": {"path": str(workdir / "lake-warm")}, "spark": spark_config})
        started = time.monotonic()
        ingest.run(StepContext.create(spark, config_warm), ingest.Params(source, "parquet"))
        warm_seconds = time.monotonic() - started
        print(f"ingest: {warm_seconds:8.1f} s  {n / warm_seconds:12,.0f} records/s  (again, into a fresh lake)",
              flush=True)
        warm_copy_seconds = (copy_after + copy()) / 2
        # what any ingest pays whatever its size (its Delta commits and MERGE plans, some 70 small
        # Spark jobs), against a copy of the same tiny input: the rest is what grows with the batch
        tiny_source = str(workdir / "tiny.parquet")
        generate_edges(spark, TINY_EDGES, tiny_source)
        tiny_copy_seconds = copy(tiny_source, "tiny-copy")
        config_tiny = config_from_dict({"lake": {"path": str(workdir / "lake-tiny")}, "spark": spark_config})
        started = time.monotonic()
        ingest.run(StepContext.create(spark, config_tiny), ingest.Params(tiny_source, "parquet"))
        tiny_seconds = time.monotonic() - started
        print(f"ingest: {tiny_seconds:8.1f} s  ({TINY_EDGES:,} records into a fresh lake: the fixed cost)", flush=True)
        print(f"ingest_fixed_vs_copy={tiny_seconds / warm_copy_seconds:.2f}")
        print(f"ingest_marginal_vs_copy={(warm_seconds - tiny_seconds) / (warm_copy_seconds - tiny_copy_seconds):.2f}")
        print(f"ingest_warm_vs_copy={warm_seconds / warm_copy_seconds:.2f}")
        print(f"ingest_vs_copy={ingest_seconds / copy_seconds:.2f}")
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
