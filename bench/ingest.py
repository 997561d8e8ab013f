"""Ingest throughput against a plain Parquet -> Delta copy of the same records, in one session.

    python bench/ingest.py [--edges N]

Generates N edge records (about N/8 pages on N/400 hosts, power-law-ish targets, 1% bad records)
as Parquet, then times (a) ``linkgraph ingest`` into a fresh lake and (b) a plain
``spark.read.parquet(...).write.format("delta")`` copy.  Ends with ``ingest_vs_copy=X`` (ingest
time / copy time).
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

from linkgraph.config import config_from_dict
from linkgraph.pipeline import ingest_step
from linkgraph.session import get_spark


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards)")
    args = parser.parse_args(argv)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-ingest-"))
    config = config_from_dict({"lake": {"path": str(workdir / "lake")}, "spark": {"master": "local[2]"}})
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        source = str(workdir / "edges.parquet")
        generate_edges(spark, args.edges, source)
        n = spark.read.parquet(source).count()
        print(f"generated {n} edge records at {source}", flush=True)

        started = time.monotonic()
        spark.read.parquet(source).write.format("delta").mode("overwrite").save(str(workdir / "copy"))
        copy_seconds = time.monotonic() - started
        print(f"copy:   {copy_seconds:8.1f} s  {n / copy_seconds:12,.0f} records/s  (parquet -> delta)", flush=True)

        started = time.monotonic()
        report = ingest_step(spark, config, source, "parquet")
        ingest_seconds = time.monotonic() - started
        print(f"ingest: {ingest_seconds:8.1f} s  {n / ingest_seconds:12,.0f} records/s  ({report.summary()})", flush=True)
        print(f"ingest_vs_copy={ingest_seconds / copy_seconds:.2f}")
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
