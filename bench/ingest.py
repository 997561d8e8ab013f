"""Ingest throughput against a plain Parquet -> Delta copy of the same records, in one session;
with ``--incremental``, what a small daily batch rewrites of a large ``links`` table.

    python bench/ingest.py [--edges N]
    python bench/ingest.py --incremental [--shape hosts|scattered] [--base-links N] [--batch-fraction F]

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
``pages`` and ``links`` into about ``--files`` files each (the many-files regime of a large
table), then ingests a batch of F×N records (default 1%) whose sources lie in F of the hosts,
neighbours in ``url_key`` order (``--shape hosts``: a crawl focused on the hosts of some domains
or of one country) or are F of the pages of every host (``--shape scattered``: a recrawl of 1% of
pages everywhere; a batch from F of the hosts drawn at random touches the files this one does): links seen again later (updated), new links
between known pages and links to new pages.  With a ``--workdir`` the optimised base is kept and
reused by later runs with the same ``--base-links`` and ``--files``.  From Spark's own metrics of
the batch's ingest it prints ``incremental_read_fraction=X``: the input bytes (tasks' input
metrics, REST API) of the stages that scan ``links`` or ``pages`` (matched to the scans through
their SQL metrics, which name the stage of their largest task) over the two tables' bytes, with
the ``size of files read`` of those scans next to it (the files left after data skipping, whole);
``incremental_table_shuffle_fraction=X``: the shuffle bytes written by the stages that scan the
two tables (the stored rows Delta's joins shuffle) over their bytes; and
``incremental_shuffle_fraction=X``: the shuffle bytes written by all the batch's stages (the
batch's own records, pages and keys included) over the two tables' bytes.  Then the bytes the batch's commits wrote to ``links``
(``numTargetBytesAdded`` of its MERGEs, Delta history) and the files they removed, over the
table's bytes, ending with ``incremental_rewrite_fraction=X``.  ``--verbose`` lists every scan of
the two tables (its columns and stage) and every stage that read or shuffled.

The input metrics count what the tasks read from the files: the row groups left after the
scan's filters, and within them the column chunks of the columns read only where a chunk is
larger than the reader's buffer; on small files (a 1M-record base) a narrow scan and a wide one
read about the same bytes.  Spark's automatic broadcast of small frames is off for the batch
(``--auto-broadcast`` keeps it): here a table of a few MB or a batch of 10,000 records would be
broadcast whole, which at 10B links (a 20 GB ``pages``, a batch of 100M records) they are not; the
broadcasts the ingest asks for itself stay.  For the same reason the MERGEs' key filters are used
whatever the tables' size (``keyfilter.MIN_TABLE_BYTES`` set to 0; by default a table below
64 MiB is merged without one).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from linkgraph.lake import keyfilter
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.session import get_spark
from linkgraph.steps import ingest

VERBOSE = False  # --verbose: every stage that read or shuffled, with its bytes
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


def session_config(records: int, driver_memory: str | None = None, shuffle_partitions: int | None = None) -> dict:
    """The ``spark`` section of the benches' ``local[2]`` session for ``records`` records: the
    local defaults (4 partitions, 2g) suit about a million records; larger inputs need more of both
    on one machine (README "Configuration")."""
    large = records >= 5_000_000
    return {"master": "local[2]", "driver_memory": driver_memory or ("4g" if large else "2g"),
            "shuffle_partitions": shuffle_partitions or (64 if large else 4)}


def timed_copy(spark: SparkSession, source: str, target: str) -> float:
    """Seconds of the peer every ingest figure is a ratio to: ``source`` (Parquet) copied as it is
    into a Delta table at ``target`` (overwritten); printed as it ends."""
    started = time.monotonic()
    spark.read.parquet(source).write.format("delta").mode("overwrite").save(target)
    seconds = time.monotonic() - started
    print(f"copy:   {seconds:8.1f} s  ({source.rsplit('/', 1)[-1]}: parquet -> delta)", flush=True)
    return seconds


PAGES_PER_HOST = 50


def focused_hosts(n_hosts: int, fraction: float) -> list[int]:
    """A ``fraction`` of the hosts ``0 .. n_hosts - 1`` that are neighbours in ``url_key`` order
    (the reversed host names ``com.host<h>.www`` sort as the strings ``<h>``): the hosts of a
    few domains, or of one country, that a focused crawl revisits.  The run starts at the middle
    of that order."""
    ordered = sorted(range(n_hosts), key=str)
    count = max(round(n_hosts * fraction), 1)
    start = (n_hosts - count) // 2
    return ordered[start:start + count]


def generate_batch(spark: SparkSession, n_base: int, fraction: float, path: str) -> None:
    """``fraction`` × ``n_base`` records whose sources are pages of :func:`focused_hosts` (a
    ``fraction`` of the base's hosts, neighbours in ``url_key`` order), seen later than the base
    (:func:`write_recrawl`)."""
    n_hosts = max(max(n_base // 8, 10) // PAGES_PER_HOST, 1)
    hosts = F.array(*[F.lit(h) for h in focused_hosts(n_hosts, fraction)])
    ids = spark.range(max(int(n_base * fraction), 1))
    host = F.element_at(hosts, (F.abs(F.hash(F.col("id"), F.lit(3))) % F.size(hosts) + 1).cast("int")).cast("long")
    write_recrawl(ids, host * PAGES_PER_HOST + F.abs(F.hash(F.col("id"), F.lit(4))) % PAGES_PER_HOST, n_base, path)


def generate_scattered_batch(spark: SparkSession, n_base: int, fraction: float, path: str) -> None:
    """``fraction`` × ``n_base`` records whose sources are the pages ``p`` with
    ``p % round(1/fraction) == 0``, on every host, seen later than the base (:func:`write_recrawl`)."""
    every = max(round(1 / fraction), 1)
    ids = spark.range(max(int(n_base * fraction), 1))
    write_recrawl(ids, (F.abs(F.hash(F.col("id"), F.lit(3))) % max(max(n_base // 8, 10) // every, 1)) * every,
                  n_base, path)


def write_recrawl(ids, src, n_base: int, path: str) -> None:
    """One record per row of ``ids`` from page ``src`` (a column), written as Parquet to ``path``:
    a fifth link to a page new on the source's host, the rest to pages of that host or popular ones
    (some of those pairs are stored already and get updated, the others are new links)."""
    n_pages = max(n_base // 8, 10)
    host = F.floor(src / PAGES_PER_HOST)
    new_page = F.col("id") % 5 == 0
    same_host = F.rand(13) < 0.7
    known_dst = F.when(same_host, host * PAGES_PER_HOST + F.abs(F.hash(F.col("id"), F.lit(5))) % PAGES_PER_HOST) \
        .otherwise(F.floor(F.pow(F.rand(17), 3) * n_pages).cast("long"))

    def url(host_no, page):
        return F.concat(F.lit("http://www.host"), host_no.cast("string"), F.lit(".com/section/page"),
                        page.cast("string"), F.lit(".html"))

    dst_url = F.when(new_page, url(host, F.lit(n_pages) + F.col("id"))).otherwise(
        url(F.floor(known_dst / PAGES_PER_HOST), known_dst))
    day = F.lit("2026-03-01").cast("timestamp")
    ids.select(
        url(host, src).alias("from_url"),
        dst_url.alias("to_url"),
        F.concat(F.lit("recrawled "), F.col("id").cast("string")).alias("anchor_text"),
        F.lit("seen again in the daily recrawl").alias("context_window"),
        F.lit(None).cast("string").alias("rel"),
        F.lit("CONTENT").alias("position"),
        day.alias("discovered_at"),
        day.alias("last_seen_at"),
    ).write.mode("overwrite").parquet(path)


_SIZE = re.compile(r"([0-9][0-9.,]*) (B|KiB|MiB|GiB|TiB)\b")
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def size_metric_bytes(text: str | None) -> int:
    """The total of a size SQL metric as the status store shows it (``"15.3 MiB"``, or
    ``"total (min, med, max)\n15.3 MiB (...)"``): its first size."""
    found = _SIZE.search(text or "")
    return int(float(found.group(1).replace(",", "")) * _UNITS[found.group(2)]) if found else 0


def _seq(scala_seq) -> list:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def executions_since(spark: SparkSession, seen: set[int]) -> list[int]:
    """Ids of the SQL executions the driver's status store holds that are not in ``seen``."""
    store = spark._jsparkSession.sharedState().statusStore()
    return [e.executionId() for e in _seq(store.executionsList()) if e.executionId() not in seen]


_STAGE = re.compile(r"\(stage (\d+)\.\d+: task \d+\)")


def table_scans(spark: SparkSession, executions: list[int], locations: list[str]) -> dict[str, tuple[int, set[int]]]:
    """Per location: ``size of files read`` of every scan node of ``executions`` whose description
    names it (SQL metrics of the status store: whole files), and the stages those scans ran in (a
    task metric's text names the stage of its largest task: ``(stage 12.0: task 34)``)."""
    store = spark._jsparkSession.sharedState().statusStore()
    scans: dict[str, tuple[int, set[int]]] = {location: (0, set()) for location in locations}
    for execution in executions:
        values = {}
        iterator = store.executionMetrics(execution).iterator()
        while iterator.hasNext():
            entry = iterator.next()
            values[int(entry._1())] = entry._2()
        for node in _seq(store.planGraph(execution).allNodes()):
            desc = node.desc()
            location = next((t for t in locations if f"{t}]" in desc or f"{t}," in desc), None)
            if location is None or not node.name().startswith("Scan"):
                continue
            files, stages = scans[location]
            found_stages, found_bytes = set(), 0
            for metric in _seq(node.metrics()):
                text = values.get(int(metric.accumulatorId())) or ""
                if metric.name() == "size of files read":
                    found_bytes = size_metric_bytes(text)
                found_stages.update(int(found) for found in _STAGE.findall(text))
            if VERBOSE:
                columns = re.search(r"ReadSchema: (struct<[^>]*>)", desc)
                print(f"    scan of {location.rsplit('/', 1)[-1]} in execution {execution}: files of "
                      f"{found_bytes:,} B, stages {sorted(found_stages)}, {columns.group(1) if columns else ''}",
                      flush=True)
            scans[location] = (files + found_bytes, stages | found_stages)
    return scans


def print_exchanges(spark: SparkSession, executions: list[int], least: int = 100_000) -> None:
    """--verbose: every shuffle exchange of ``executions`` that wrote at least ``least`` bytes (SQL
    metrics), with its execution's call site and the exchange's partitioning: where the batch's
    shuffle bytes go."""
    store = spark._jsparkSession.sharedState().statusStore()
    by_id = {e.executionId(): e for e in _seq(store.executionsList())}
    for execution in executions:
        values = {}
        iterator = store.executionMetrics(execution).iterator()
        while iterator.hasNext():
            entry = iterator.next()
            values[int(entry._1())] = entry._2()
        for node in _seq(store.planGraph(execution).allNodes()):
            written = sum(size_metric_bytes(values.get(int(m.accumulatorId())))
                          for m in _seq(node.metrics()) if m.name() == "shuffle bytes written")
            if written >= least:
                where = by_id[execution].description().splitlines()[0][:60] if execution in by_id else "?"
                print(f"    exchange in execution {execution} ({where}): {written:,} B  {node.desc()[:160]}",
                      flush=True)


def _stages(spark: SparkSession) -> list[dict]:
    """The stages the driver's status store holds, as its REST API gives them (raw byte counts)."""
    sc = spark.sparkContext
    with urllib.request.urlopen(f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages") as response:
        return json.load(response)


def stage_ids(spark: SparkSession) -> set[int]:
    return {s["stageId"] for s in _stages(spark)}


def stage_traffic(spark: SparkSession, before: set[int],
                  scan_stages: dict[str, set[int]]) -> tuple[dict[str, int], int, int]:
    """Over the stages the status store holds that are not in ``before``: per table, the input
    bytes of the stages its scans ran in (tasks' input metrics; every attempt counted), the
    shuffle bytes all of them wrote, and the shuffle bytes of the stages that scan the tables
    (the stored rows a join or MERGE shuffles; the batch's own records are shuffled by the others)."""
    read = dict.fromkeys(scan_stages, 0)
    shuffled = from_tables = 0
    table_stages = set().union(*scan_stages.values())
    for stage in _stages(spark):
        if stage["stageId"] in before:
            continue
        shuffled += int(stage.get("shuffleWriteBytes", 0))
        if stage["stageId"] in table_stages:
            from_tables += int(stage.get("shuffleWriteBytes", 0))
        if VERBOSE and (stage.get("shuffleWriteBytes") or stage.get("inputBytes")):
            print(f"    stage {stage['stageId']}.{stage['attemptId']}: input {stage.get('inputBytes', 0):,} B, "
                  f"shuffle write {stage.get('shuffleWriteBytes', 0):,} B  {stage['name'][:90]}", flush=True)
        for table, stages in scan_stages.items():
            if stage["stageId"] in stages:
                read[table] += int(stage.get("inputBytes", 0))
    return read, shuffled, from_tables


def ingest_traffic(spark: SparkSession, config, lake, batch: str) -> tuple[float, float]:
    """Ingest ``batch`` and print what it read of ``links`` and ``pages`` and shuffled, over the
    two tables' bytes (Spark's metrics: the input and shuffle bytes of the stages, from the REST
    API, matched to the scans of the tables by their SQL metrics); returns (read fraction, shuffle
    fraction)."""
    from linkgraph.lake import schemas as S

    tables = {t: lake.location(t) for t in (S.LINKS_TABLE, S.PAGES_TABLE)}
    sizes = {t: int(lake.delta_table(t).detail().first()["sizeInBytes"]) for t in tables}
    seen, stages = set(executions_since(spark, set())), stage_ids(spark)
    started = time.monotonic()
    report = ingest.run(StepContext.create(spark, config), ingest.Params(batch, "parquet"))
    print(f"batch:  {time.monotonic() - started:8.1f} s  ({report.summary()})", flush=True)
    executions = executions_since(spark, seen)
    scans = table_scans(spark, executions, list(tables.values()))
    if VERBOSE:
        print_exchanges(spark, executions)
    read, shuffled, from_tables = stage_traffic(spark, stages, {t: scans[location][1] for t, location in tables.items()})
    whole_files = {table: scans[location][0] for table, location in tables.items()}
    total = sum(sizes.values())
    for table in tables:
        print(f"  {table}: {sizes[table]:,} bytes; its scans read {read[table]:,} bytes "
              f"(in files of {whole_files[table]:,} bytes)", flush=True)
    print(f"  shuffled {shuffled:,} bytes, {from_tables:,} of them by the stages that scan the two tables "
          f"(their rows; the rest is the batch's own records, pages and keys)", flush=True)
    print(f"incremental_read_fraction={sum(read.values()) / total:.4f}")
    print(f"incremental_table_shuffle_fraction={from_tables / total:.4f}")
    print(f"incremental_shuffle_fraction={shuffled / total:.4f}", flush=True)
    return sum(read.values()) / total, shuffled / total


def build_base(spark: SparkSession, config, lake, path: str, n_base: int, files: int) -> None:
    """Ingest ``n_base`` generated records, then ``OPTIMIZE`` (it clusters) ``pages`` and
    ``links`` into about ``files`` files each: the many-files regime of a large table (10B links
    are about 400 files of 400 MB), which a table of a few hundred MB would not reach with Delta's
    1 GB target."""
    from linkgraph.lake import schemas as S

    generate_edges(spark, n_base, path)
    started = time.monotonic()
    report = ingest.run(StepContext.create(spark, config), ingest.Params(path, "parquet"))
    print(f"base:   {time.monotonic() - started:8.1f} s  ({report.summary()})", flush=True)
    started = time.monotonic()
    for table in (S.PAGES_TABLE, S.LINKS_TABLE):
        size = int(lake.delta_table(table).detail().first()["sizeInBytes"])
        spark.conf.set("spark.databricks.delta.optimize.maxFileSize", str(max(size // files, 1 << 16)))
        spark.sql(f"OPTIMIZE delta.`{lake.location(table)}`").collect()
        detail = lake.delta_table(table).detail().first()
        print(f"optimize: {table}: {detail['numFiles']} files, {detail['sizeInBytes']:,} bytes", flush=True)
    spark.conf.unset("spark.databricks.delta.optimize.maxFileSize")
    print(f"optimize: {time.monotonic() - started:6.1f} s", flush=True)


def incremental(spark: SparkSession, config, workdir: Path, n_base: int, fraction: float,
                shape: str = "hosts", files: int = 64) -> float:
    """Base ingest, OPTIMIZE, one batch; returns (and prints) the rewrite fraction of ``links``."""
    from linkgraph.lake import schemas as S
    from linkgraph.lake.delta import Lake

    lake = Lake(spark, config.lake)
    base, batch = str(workdir / "base.parquet"), str(workdir / "batch.parquet")
    saved_base = workdir / f"base-lake-{n_base}-{files}"
    if saved_base.is_dir():
        # the base of an earlier run with the same --workdir, --base-links and --files
        shutil.rmtree(config.lake.path, ignore_errors=True)
        shutil.copytree(saved_base, config.lake.path)
        print(f"base:   reused {saved_base}", flush=True)
    else:
        build_base(spark, config, lake, base, n_base, files)
        shutil.copytree(config.lake.path, saved_base)
    links = lake.delta_table(S.LINKS_TABLE)
    before = lake.current_version(S.LINKS_TABLE)

    (generate_batch if shape == "hosts" else generate_scattered_batch)(spark, n_base, fraction, batch)
    ingest_traffic(spark, config, lake, batch)
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
    parser.add_argument("--shape", choices=("hosts", "scattered"), default="hosts",
                        help="--incremental: the batch's sources in a fraction of the hosts (neighbours in "
                             "url_key order), or a fraction of the pages of every host")
    parser.add_argument("--base-links", type=int, default=10_000_000, help="--incremental: base records")
    parser.add_argument("--batch-fraction", type=float, default=0.01,
                        help="--incremental: batch records and source hosts, as a fraction of the base")
    parser.add_argument("--files", type=int, default=64,
                        help="--incremental: the files OPTIMIZE makes of each base table (the many-files regime)")
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards)")
    parser.add_argument("--driver-memory", default=None,
                        help="the local[2] session's heap (default: 2g, 4g from 5M records on)")
    parser.add_argument("--shuffle-partitions", type=int, default=None,
                        help="spark.shuffle_partitions (default: the project's 4, 64 from 5M records on)")
    parser.add_argument("--auto-broadcast", action="store_true",
                        help="--incremental: keep Spark's automatic broadcast of small frames (off by default: "
                             "at 10B links neither the tables nor a 1%% batch are small)")
    parser.add_argument("--verbose", action="store_true",
                        help="--incremental: print every stage of the batch's ingest that read or shuffled")
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-ingest-"))
    records = args.base_links if args.incremental else args.edges
    spark_config = session_config(records, args.driver_memory, args.shuffle_partitions)
    config = config_from_dict({"lake": {"path": str(workdir / "lake")}, "spark": spark_config})
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    # scan descriptions keep the whole table location (how the read metrics find the table's scans)
    spark.conf.set("spark.sql.maxMetadataStringLength", "10000")
    try:
        if args.incremental:
            # the cluster regime: nothing is broadcast because it is small here (neither a 20 GB
            # ``pages`` nor a batch of 100M records is); the broadcasts the code asks for stay
            if not args.auto_broadcast:
                spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
            # and every table is large enough for the MERGEs' key filters (at 10B links all are)
            keyfilter.MIN_TABLE_BYTES = 0
            incremental(spark, config, workdir, args.base_links, args.batch_fraction, args.shape, args.files)
            return 0
        source = str(workdir / "edges.parquet")
        generate_edges(spark, args.edges, source)
        n = spark.read.parquet(source).count()
        print(f"generated {n} edge records at {source}", flush=True)

        def copy(path: str = source, target: str = "copy") -> float:
            return timed_copy(spark, path, str(workdir / target))

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
