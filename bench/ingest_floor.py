"""The least an ingest of N records can cost against a Parquet -> Delta copy, in one session.

    python bench/ingest_floor.py [--edges N]

Generates the records ``bench/ingest.py`` generates (N edge records, about N/8 pages) and times,
between two copies of them (``spark.read.parquet(...).write.format("delta")``), a *floor
pipeline*: only the passes every ingest of those records into empty ``pages`` and ``links``
tables must make, with Spark built-ins and every shortcut a correct ingest could not take:

* the URLs are taken as canonical as they are (no canonicalisation, no Public Suffix List: host
  and ``url_key`` are taken from the URL by ``linkgraph.inputs.ingest``'s ``host_of`` and
  ``url_key``, as ingest takes them from a canonical URL) and no field is checked (no rejects);
* a pair's sightings are not ranked: only a 64-bit hash per record is shuffled to find the
  repeated pairs, and only their records are aggregated (any one of them kept);
* the pages are the distinct URLs of both ends (one shuffle of URL and times), numbered in
  ``url_key`` order by ``linkgraph.lake.ids.number_in_order``;
* the links take both page ids from a broadcast (hash, page_id) table and are written once,
  the pages once, each as a plain Delta append into an empty table (no MERGE).

``--unordered-ids`` gives the pages ids that are neither dense nor in ``url_key`` order (nothing is
sorted, the pages held by a local checkpoint): lower still than any ingest whose ids keep a host's
pages together.

Every part is something ``linkgraph ingest`` does more of, so the floor bounds from below what
any implementation of it on this machine costs.  Prints the seconds of each part and ends with
``ingest_floor_vs_copy=X`` (the floor pipeline / the mean of the two copies around it).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ingest import generate_edges, session_config, timed_copy  # bench/ingest.py: the same records and peer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph.inputs.ingest import host_of, url_key
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.ids import number_in_order
from linkgraph.lake.session import get_spark, use_checkpoint_dir


def pair_representatives(records: DataFrame) -> DataFrame:
    """One record per (from_url, to_url) with the pair's earliest discovery and latest sighting.
    Only a 64-bit pair hash per record is shuffled (partially aggregated) to find the repeated
    pairs; a record of a pair seen once stays where it is, the records of the repeated pairs
    (broadcast as hashes) are aggregated, any one of them kept."""
    keyed = records.withColumn("_pair", F.xxhash64("from_url", "to_url"))
    repeated = F.broadcast(keyed.groupBy("_pair").count().where(F.col("count") > 1).select("_pair"))
    columns = [c for c in records.columns if c not in ("discovered_at", "last_seen_at")]
    merged = (keyed.join(repeated, on="_pair", how="left_semi").groupBy("_pair")
              .agg(F.first(F.struct(*columns)).alias("_record"), F.min("discovered_at").alias("discovered_at"),
                   F.max("last_seen_at").alias("last_seen_at"))
              .select("_record.*", "discovered_at", "last_seen_at"))
    return keyed.join(repeated, on="_pair", how="left_anti").drop("_pair").unionByName(merged)


def distinct_pages(records: DataFrame) -> DataFrame:
    """(url, first_seen_at, last_seen_at) of every URL at either end (one shuffle of the ends)."""
    ends = records.select(F.explode(F.array("from_url", "to_url")).alias("url"), "discovered_at", "last_seen_at")
    return ends.groupBy("url").agg(F.min("discovered_at").alias("first_seen_at"),
                                   F.max("last_seen_at").alias("last_seen_at"))


def numbered_pages(records: DataFrame, unordered: bool) -> DataFrame:
    """The distinct pages with dense ids in ``url_key`` order (checkpointed), or with ``unordered``
    with ids of ``monotonically_increasing_id`` (neither dense nor ordered: nothing is sorted),
    held on the executors by a local checkpoint."""
    pages = distinct_pages(records)
    if unordered:
        return pages.withColumns({"page_id": F.monotonically_increasing_id(),
                                  "host": host_of(F.col("url"))}).localCheckpoint(eager=True)
    numbered = number_in_order(pages, [url_key(F.col("url")), F.col("url")], 0, "page_id")
    return numbered.withColumn("host", host_of(F.col("url"))).checkpoint(eager=True)


def floor_ingest(spark: SparkSession, source: str, lake: Path, unordered: bool) -> dict[str, float]:
    seconds: dict[str, float] = {}
    records = spark.read.parquet(source)

    started = time.monotonic()
    pages = numbered_pages(records, unordered)
    seconds["pages (ends aggregated, numbered)"] = time.monotonic() - started

    started = time.monotonic()
    pages.write.format("delta").mode("overwrite").save(str(lake / "pages"))
    seconds["pages written"] = time.monotonic() - started

    started = time.monotonic()
    ids = pages.select(F.xxhash64("url").alias("_hash"), "page_id")
    links = (pair_representatives(records)
             .withColumns({"_src": F.xxhash64("from_url"), "_dst": F.xxhash64("to_url")})
             .join(F.broadcast(ids.withColumnsRenamed({"_hash": "_src", "page_id": "src_id"})), on="_src")
             .join(F.broadcast(ids.withColumnsRenamed({"_hash": "_dst", "page_id": "dst_id"})), on="_dst")
             .select("src_id", "dst_id", "anchor_text", "context_window", "rel", "position",
                     "discovered_at", "last_seen_at"))
    links.write.format("delta").mode("overwrite").save(str(lake / "links"))
    seconds["links (pairs, ids, written)"] = time.monotonic() - started
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--unordered-ids", action="store_true",
                        help="page ids neither dense nor in url_key order (nothing sorted): a lower floor")
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards)")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-floor-"))
    # the session bench/ingest.py uses for the same records
    config = config_from_dict({"lake": {"path": str(workdir / "lake")}, "spark": session_config(args.edges)})
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    use_checkpoint_dir(spark, str(workdir / "checkpoints"))
    try:
        source = str(workdir / "edges.parquet")
        generate_edges(spark, args.edges, source)
        print(f"generated {spark.read.parquet(source).count()} edge records at {source}", flush=True)

        def copy() -> float:
            return timed_copy(spark, source, str(workdir / "copy"))

        copy()   # the first job of the process pays the JVM's and code generation's warm-up
        copy_before = copy()
        parts = floor_ingest(spark, source, workdir / "lake", args.unordered_ids)
        floor_seconds = sum(parts.values())
        for part, part_seconds in parts.items():
            print(f"floor:  {part_seconds:8.1f} s  {part}", flush=True)
        copy_after = copy()
        links = spark.read.format("delta").load(str(workdir / "lake" / "links")).count()
        pages = spark.read.format("delta").load(str(workdir / "lake" / "pages")).count()
        print(f"floor:  {floor_seconds:8.1f} s  in all ({links:,} links, {pages:,} pages)", flush=True)
        print(f"ingest_floor_vs_copy={floor_seconds / ((copy_before + copy_after) / 2):.2f}")
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
