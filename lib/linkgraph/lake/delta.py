"""Delta Lake I/O: the only module that reads or writes tables.

A ``Lake`` names tables either as paths (``<lake>/<table>``) or as catalog tables
(``[catalog.]schema.<table>``).  Writes are Delta transactions: an upsert is one ``MERGE``, a
replacement one ``overwrite`` commit, so a job killed midway leaves the previous version intact.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from linkgraph.errors import MissingTableError
from linkgraph.lake import keyfilter
from linkgraph.lake.config import LakeConfig
from linkgraph.lake.paths import lake_root, table_location
from linkgraph.lake.rows import one_row

log = logging.getLogger(__name__)

# Tables created with ``cluster_by`` get liquid clustering and deletion vectors: a MERGE, UPDATE or
# DELETE then marks changed rows in a deletion vector instead of rewriting every file that holds one.
DELETION_VECTORS = {"delta.enableDeletionVectors": "true"}

# A MERGE's key-range predicate has at most this many ranges (more: the smallest gaps are closed).
MAX_KEY_RANGES = 64


# --- commit observers -----------------------------------------------------------------------------

# Callables ``(table_name) -> None`` called right after every commit ``Lake`` makes (a write that
# created a table version; a MERGE that changed no row is not one), in the committing thread, in
# the order registered.  Production registers none; test support registers one to stop a step at a
# chosen commit (tests/crash_hook.py).  An observer that raises stops the write's caller with it.
COMMIT_OBSERVERS: list[Callable[[str], None]] = []


@dataclass(frozen=True)
class MergeMetrics:
    """Rows a MERGE inserted, updated and deleted, and the table version it committed (None
    when it changed no row)."""
    inserted: int
    updated: int
    deleted: int
    version: int | None


# what creating a table fails with while another job is creating it (its first commit not yet written)
CREATED_CONCURRENTLY_ERRORS = ("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION", "DELTA_TABLE_NOT_FOUND")
# what loading such a table fails with until that commit is written
NOT_YET_A_TABLE_ERRORS = ("DELTA_TABLE_NOT_FOUND", "DELTA_MISSING_DELTA_TABLE")

NOTHING_MERGED = MergeMetrics(inserted=0, updated=0, deleted=0, version=None)

# Commits that rearrange files without changing a row: auto compaction (on in conf/cluster.yaml)
# commits an ``OPTIMIZE`` right after a write, and maintenance adds the others.  What a table was
# built from, and how many rows its build wrote, are those of the last commit before them.
LAYOUT_OPERATIONS = frozenset({"OPTIMIZE", "VACUUM START", "VACUUM END", "REORG"})
# at most this many layout commits are looked past (auto compaction adds one per write)
MAX_LAYOUT_COMMITS = 8


class Lake:
    # how long a create that met another job's half-created table waits for its first commit
    CREATION_WAIT_SECONDS = 30.0

    def __init__(self, spark: SparkSession, lake_config: LakeConfig):
        self.spark = spark
        self.config = lake_config
        # (table, version or None when not looked up) of every commit made through this object,
        # in order: what a step that stops half-way had committed
        self.commits: list[tuple[str, int | None]] = []

    def _committed(self, table: str, version: int | None = None) -> None:
        self.commits.append((table, version))
        for observer in list(COMMIT_OBSERVERS):
            observer(table)

    @property
    def root(self) -> str:
        """The lake directory as Spark sees it: a relative ``lake.path`` resolved against the
        working directory to a ``file://`` URI, an absolute path or a URI as written."""
        return lake_root(self.config.path)

    @property
    def uses_catalog(self) -> bool:
        return self.config.schema is not None

    def location(self, table: str) -> str:
        """The path or fully qualified name of ``table``."""
        return table_location(self.config.path, table, self.config.catalog, self.config.schema)

    def exists(self, table: str) -> bool:
        """True when ``table`` is a Delta table with at least one commit.  ``isDeltaTable``
        answers from the session's cached log of the path, which only loading the table
        refreshes: a table another job created after this session first looked reads as missing
        there, so a "no" is checked by loading the table."""
        if self.uses_catalog:
            return self.spark.catalog.tableExists(self.location(table))
        return DeltaTable.isDeltaTable(self.spark, self.location(table)) or self._loads(table)

    def _loads(self, table: str) -> bool:
        try:
            self.delta_table(table)
        except Exception as exc:
            if any(code in str(exc) for code in NOT_YET_A_TABLE_ERRORS):
                return False
            raise
        return True

    def delta_table(self, table: str) -> DeltaTable:
        if self.uses_catalog:
            return DeltaTable.forName(self.spark, self.location(table))
        return DeltaTable.forPath(self.spark, self.location(table))

    def require(self, *tables: str) -> None:
        """Stop with ``MissingTableError`` (an ``InputSchemaError``) naming the first of ``tables`` the lake
        does not hold."""
        for table in tables:
            if not self.exists(table):
                raise MissingTableError(f"table '{table}' not found in lake {self.root}: run ingest first")

    def read(self, table: str) -> DataFrame:
        if self.uses_catalog:
            return self.spark.read.table(self.location(table))
        return self.spark.read.format("delta").load(self.location(table))

    def read_or_empty(self, table: str, schema: StructType) -> DataFrame:
        if self.exists(table):
            return self.read(table)
        return self.spark.createDataFrame([], schema)

    def current_version(self, table: str) -> int:
        """The latest Delta version of a table the lake holds (``MissingTableError`` otherwise)."""
        self.require(table)
        return int(self._last_commit(table, version_only=True)["version"])

    def version(self, table: str) -> int | None:
        if not self.exists(table):
            return None
        return int(self._last_commit(table, version_only=True)["version"])

    def _last_commit(self, table: str, version_only: bool = False) -> dict[str, Any]:
        """``version`` (the newest) and the ``userMetadata`` and ``operationMetrics`` of the table's
        last commit that wrote rows: commits that only rearrange files (``LAYOUT_OPERATIONS``, e.g.
        the ``OPTIMIZE`` auto compaction commits after a write) are looked past, at most
        ``MAX_LAYOUT_COMMITS`` of them.

        In a classic session on a path-based table they come from the driver's ``DeltaLog``: the
        log brought up to date (a listing of the commits since the last checkpoint) and the newest
        commit files read, which runs no Spark job (about 20 ms where ``history(1)`` runs a job,
        0.5 s on a warm local session and more on a cluster, and every step asks this a few
        dozen times).  Elsewhere (Spark Connect, catalog tables) it is ``history``."""
        log_and_snapshot = self._delta_log_snapshot(table)
        if log_and_snapshot is None:
            rows = self.delta_table(table).history(MAX_LAYOUT_COMMITS + 1) \
                .select("version", "operation", "userMetadata", "operationMetrics").collect()
            newest = max(rows, key=lambda row: row["version"])
            if version_only:
                return {"version": newest["version"]}
            built = next((row for row in sorted(rows, key=lambda row: -row["version"])
                          if row["operation"] not in LAYOUT_OPERATIONS), newest)
            return {"version": newest["version"], "userMetadata": built["userMetadata"],
                    "operationMetrics": dict(built["operationMetrics"] or {})}
        delta_log, snapshot = log_and_snapshot
        version = int(snapshot.version())
        if version_only:
            return {"version": version}
        info = _commit_info(self.spark._jvm, delta_log, snapshot, version)
        looked_past = 0
        while info.get("operation") in LAYOUT_OPERATIONS and looked_past < MAX_LAYOUT_COMMITS \
                and version - looked_past > 0:
            looked_past += 1
            info = _commit_info(self.spark._jvm, delta_log, snapshot, version - looked_past)
        return {"version": version, "userMetadata": info.get("userMetadata"),
                "operationMetrics": dict(info.get("operationMetrics") or {})}

    def _delta_log_snapshot(self, table: str) -> tuple[Any, Any] | None:
        """(the JVM ``DeltaLog``, its snapshot brought up to date) of a path-based table in a
        classic session; None elsewhere."""
        jvm = getattr(self.spark, "_jvm", None)
        if self.uses_catalog or jvm is None:
            return None
        delta_log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(self.spark._jsparkSession, self.location(table))
        none = jvm.scala.Option.empty()
        return delta_log, delta_log.update(False, none, none)

    def versions_since(self, table: str, version: int | None) -> list[int]:
        """The versions ``table`` (which the lake holds) committed after ``version`` (after none:
        every version), oldest first.

        Delta numbers a table's commits without gaps, so these are the versions from
        ``version + 1`` to the current one, which the newest commit alone gives: no other commit
        file is read, whatever the log retains.  (``history()`` without a limit would read the
        ``commitInfo`` of every commit the log retains and collect it on the driver.)"""
        first = 0 if version is None else int(version) + 1
        return list(range(first, self.current_version(table) + 1))

    def ensure(self, table: str, schema: StructType, cluster_by: list[str] | None = None,
               properties: dict[str, str] | None = None) -> None:
        """Create ``table`` empty with ``schema`` unless it exists (a no-op commit is avoided);
        with ``cluster_by``, liquid-clustered by those columns and with deletion vectors on; with
        ``properties``, created with those table properties, or an existing table given the ones
        it lacks or holds other values of (:meth:`set_table_properties`)."""
        if self.exists(table):
            if properties:
                self.set_table_properties(table, properties)
            return
        builder = DeltaTable.createIfNotExists(self.spark).addColumns(schema)
        if cluster_by:
            builder = builder.clusterBy(*cluster_by)
            for key, value in DELETION_VECTORS.items():
                builder = builder.property(key, value)
        for key, value in (properties or {}).items():
            builder = builder.property(key, value)
        location = self.location(table)
        builder = builder.tableName(location) if self.uses_catalog else builder.location(location)
        try:
            builder.execute()
        except Exception as exc:
            if not self._created_concurrently(table, exc):
                raise
            return
        self._committed(table, 0)
        log.info("created Delta table %s", self.location(table))

    def _created_concurrently(self, table: str, exc: Exception) -> bool:
        """True when creating ``table`` failed because another job was creating it at the same
        moment and its first commit appears within ``CREATION_WAIT_SECONDS``.  The other job's
        ``_delta_log`` directory exists a moment before its first commit: meanwhile a create here
        fails with ``DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION`` (or ``DELTA_TABLE_NOT_FOUND``).
        A directory that stays a non-Delta one is a real error."""
        if not any(code in str(exc) for code in CREATED_CONCURRENTLY_ERRORS):
            return False
        return self._first_commit_seen(table, self.CREATION_WAIT_SECONDS)

    def _first_commit_seen(self, table: str, wait_seconds: float) -> bool:
        """True once the table's first commit is readable, polled for up to ``wait_seconds``."""
        deadline = time.monotonic() + wait_seconds
        while not self.exists(table):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)
        return True

    def overwrite(
        self, table: str, df: DataFrame, partition_by: list[str] | None = None, built_from: str | None = None,
        replace_where: str | None = None,
    ) -> None:
        """Replace the table's content in one commit (schema replaced too), or with
        ``replace_where`` only the rows matching that predicate.  ``built_from`` (a description of
        the inputs, e.g. their versions) is recorded as the commit's user metadata, see
        :meth:`built_from`."""
        writer = df.write.format("delta").mode("overwrite")
        # replace_where: columns added since the table was created are merged into its schema
        writer = (writer.option("replaceWhere", replace_where).option("mergeSchema", "true") if replace_where
                  else writer.option("overwriteSchema", "true"))
        if built_from is not None:
            writer = writer.option("userMetadata", built_from)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        if self.uses_catalog:
            writer.saveAsTable(self.location(table))
        else:
            writer.save(self.location(table))
        self._committed(table)

    def rows_written(self, table: str) -> int:
        """Rows the table's last commit wrote (its ``numOutputRows`` metric): read from the Delta
        log, without scanning the data again."""
        return int(self._last_commit(table)["operationMetrics"].get("numOutputRows", 0))

    def built_from(self, table: str) -> str | None:
        """The ``built_from`` recorded by the table's last commit (None if absent or none)."""
        if not self.exists(table):
            return None
        return self._last_commit(table)["userMetadata"]

    def last_build(self, table: str) -> tuple[str | None, int] | None:
        """(``built_from``, rows written) of the table's last commit, read from the Delta log in one
        look-up; None when the table does not exist."""
        if not self.exists(table):
            return None
        last = self._last_commit(table)
        return last["userMetadata"], int(last["operationMetrics"].get("numOutputRows", 0))

    def append(self, table: str, df: DataFrame) -> None:
        writer = df.write.format("delta").mode("append")
        if self.uses_catalog:
            writer.saveAsTable(self.location(table))
        else:
            writer.save(self.location(table))
        self._committed(table)

    def merge(
        self,
        table: str,
        updates: DataFrame,
        keys: list[str],
        update_set: dict[str, str] | None = None,
        update_condition: str | None = None,
        prune_on: str | None = None,
        target_filter: str | None = None,
        insert: bool = True,
        filter_keys: bool = False,
        broadcast_source: bool = False,
    ) -> MergeMetrics:
        """Upsert ``updates`` into ``table`` on equality of ``keys`` in one MERGE commit.

        Matched rows get ``update_set`` (column -> SQL expression; default: every non-key column
        from the source), only where ``update_condition`` holds, which is how a re-run with the
        same input leaves every row untouched; unmatched rows are inserted.  ``update_set={}``
        makes the merge insert-only.  Expressions name ``t.<col>`` (target) and ``s.<col>``
        (source).

        ``prune_on`` (an integer key column) adds the ranges of the source's values of it to the
        condition (:func:`key_ranges`; an empty source is not merged at all), ``target_filter``
        any other predicate on ``t`` that every possible match satisfies: Delta then reads and
        touches only the files whose statistics overlap them, so the cost follows the batch, not
        the table.  ``insert=False`` leaves unmatched rows out (an update-only MERGE: Delta joins
        source and target with an inner join, which can broadcast a small source).
        ``filter_keys``: a bloom filter of the source's ``keys`` (:mod:`linkgraph.lake.keyfilter`,
        tables from ``keyfilter.MIN_TABLE_BYTES`` on) lets only the matches and ~1% of the other
        rows read reach Delta's shuffles.  ``broadcast_source`` (a small source) broadcasts it into
        Delta's inner joins; the join that finds the inserts still shuffles both sides.

        With deletion vectors Delta reads of the target only the columns the condition and the
        update expressions name (unset columns are copied from the target, so they are read too).
        """
        target = self.delta_table(table)
        filter_keys = filter_keys and self.table_bytes(table) >= keyfilter.MIN_TABLE_BYTES
        key_types = {f.name: f.dataType for f in target.toDF().schema.fields if f.name in keys} if filter_keys else None
        condition = _merge_condition(updates, keys, prune_on, target_filter, key_types)
        if condition is None:
            return NOTHING_MERGED
        merge = target.alias("t").merge((F.broadcast(updates) if broadcast_source else updates).alias("s"), condition)
        if update_set is None:
            update_set = {c: f"s.`{c}`" for c in updates.columns if c not in keys}
        if update_set:
            values: dict[str, str | Column] = dict(update_set)
            merge = merge.whenMatchedUpdate(condition=update_condition, set=values)
        if insert:
            merge = merge.whenNotMatchedInsertAll()
        return self._committed_merge(table, merge.execute())

    def table_bytes(self, table: str) -> int:
        """The bytes of the files of ``table``'s current version, from its log: in a classic
        session the snapshot's size (the commit's checksum file records it: no Spark job, where
        ``detail()`` runs four), elsewhere ``detail()``."""
        log_and_snapshot = self._delta_log_snapshot(table)
        if log_and_snapshot is not None:
            checksum = log_and_snapshot[1].checksumOpt()
            if checksum.isDefined():
                return int(checksum.get().tableSizeBytes())
            return int(log_and_snapshot[1].sizeInBytes())   # the log's replay: Spark jobs
        return int(one_row(self.delta_table(table).detail().select("sizeInBytes"))[0] or 0)

    def table_properties(self, table: str) -> dict[str, str]:
        """``table``'s properties (``delta.*`` and user-set), from the snapshot the session holds:
        ``SHOW TBLPROPERTIES`` runs no Spark job where ``detail()`` runs four (0.1 s against 1.7 s
        after an overwrite on a local lake)."""
        name = self.location(table) if self.uses_catalog else f"delta.`{self.location(table)}`"
        return {row["key"]: row["value"] for row in self.spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}

    def set_table_properties(self, table: str, properties: dict[str, str]) -> None:
        """Give ``table`` the ``properties`` it lacks or holds other values of, in one commit
        (``ALTER TABLE ... SET TBLPROPERTIES``); none when it holds them all."""
        current = self.table_properties(table)
        changed = {key: value for key, value in properties.items() if current.get(key) != value}
        if not changed:
            return
        name = self.location(table) if self.uses_catalog else f"delta.`{self.location(table)}`"
        quoted = ", ".join(f"'{_sql_text(key)}' = '{_sql_text(value)}'" for key, value in changed.items())
        self.spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ({quoted})")
        self._committed(table)

    def _committed_merge(self, table: str, result: DataFrame) -> MergeMetrics:
        """The counts of an executed MERGE, from the one row its execution returns (computed on
        the driver: no Spark job, no read of the table's history).  A MERGE that changed no row
        leaves the table as it was; one that did is recorded with the table's version after it."""
        row = one_row(result)
        inserted, updated, deleted = (int(row[c] or 0) for c in ("num_inserted_rows", "num_updated_rows",
                                                                 "num_deleted_rows"))
        if not (inserted or updated or deleted):
            return NOTHING_MERGED
        version = self.current_version(table)
        self._committed(table, version)
        return MergeMetrics(inserted=inserted, updated=updated, deleted=deleted, version=version)

    # --- reward ranking: time travel and deletes -----------------------------------------------

    def read_version(self, table: str, version: int) -> DataFrame:
        """``table`` as it was at Delta ``version`` (time travel)."""
        reader = self.spark.read.format("delta").option("versionAsOf", int(version))
        if self.uses_catalog:
            return reader.table(self.location(table))
        return reader.load(self.location(table))

    def delete_matching(self, table: str, keys_df: DataFrame, keys: list[str],
                        prune_on: str | None = None) -> MergeMetrics:
        """Delete the rows of ``table`` whose ``keys`` equal a row of ``keys_df`` (distinct keys) in
        one MERGE commit; returns its counts (``deleted``).  ``prune_on``: as in :meth:`merge`."""
        keys_df = keys_df.select(*keys)
        condition = _merge_condition(keys_df, keys, prune_on, None)
        if condition is None:
            return NOTHING_MERGED
        merge = self.delta_table(table).alias("t").merge(keys_df.alias("s"), condition)
        return self._committed_merge(table, merge.whenMatchedDelete().execute())


# --- key ranges: batch-proportional MERGEs -------------------------------------------------------

def key_ranges(df: DataFrame, column: str, max_ranges: int = MAX_KEY_RANGES) -> list[tuple[int, int]]:
    """See :func:`key_ranges_and_rows`."""
    return key_ranges_and_rows(df, column, max_ranges)[0]


def key_ranges_and_rows(df: DataFrame, column: str,
                        max_ranges: int = MAX_KEY_RANGES) -> tuple[list[tuple[int, int]], int]:
    """At most ``max_ranges`` closed ranges ``(low, high)`` that cover every non-null value of the
    integer ``column`` of ``df``, with the largest gaps between its values left out.

    Two small aggregates: the minimum and maximum, then per bucket (``16 * max_ranges`` equal
    buckets between them) the smallest and largest value; the driver receives at most that many
    rows, whatever the size of ``df``, and closes the smallest gaps between bucket ranges.  Also
    returns the number of rows of ``df``.
    """
    bounds = one_row(df.agg(F.min(column).alias("lo"), F.max(column).alias("hi"), F.count(F.lit(1)).alias("n")))
    if bounds["lo"] is None:
        return [], int(bounds["n"])
    low, high = int(bounds["lo"]), int(bounds["hi"])
    width = max(1, -(-(high - low + 1) // (16 * max_ranges)))
    bucket = F.floor((F.col(column) - F.lit(low)) / F.lit(width))
    rows = (fewer_tasks(df, int(bounds["n"])).where(F.col(column).isNotNull()).groupBy(bucket.alias("_bucket"))
            .agg(F.min(column).alias("lo"), F.max(column).alias("hi")).orderBy("_bucket").collect())
    ranges = [(int(r["lo"]), int(r["hi"])) for r in rows]
    return close_smallest_gaps(ranges, max_ranges), int(bounds["n"])


def fewer_tasks(source: DataFrame, rows: int) -> DataFrame:
    """``source`` read in one task per million of its ``rows`` when it reads nothing but in-memory
    caches, for an aggregate over it: each task's partial result is shuffled (a bloom filter's at
    its final size), so a batch cached in 64 partitions shuffled 64 filters.  Any other
    ``source`` is returned as it is: fewer tasks would compute it, not just read it."""
    jdf = getattr(source, "_jdf", None)
    if jdf is None:
        return source
    leaves = jdf.queryExecution().optimizedPlan().collectLeaves()
    for leaf in (leaves.apply(i) for i in range(leaves.size())):
        if leaf.getClass().getSimpleName() != "InMemoryRelation" or not leaf.cacheBuilder().storageLevel().useMemory():
            return source
    return source.coalesce(max(1, -(-rows // 1_000_000)))


def close_smallest_gaps(ranges: list[tuple[int, int]], max_ranges: int) -> list[tuple[int, int]]:
    """Sorted, disjoint ``ranges`` merged into at most ``max_ranges`` by closing the smallest gaps."""
    if len(ranges) <= max_ranges:
        return ranges
    gaps = sorted(range(1, len(ranges)), key=lambda i: (ranges[i][0] - ranges[i - 1][1], i))
    closed = set(gaps[: len(ranges) - max_ranges])
    merged = [ranges[0]]
    for i in range(1, len(ranges)):
        if i in closed:
            merged[-1] = (merged[-1][0], ranges[i][1])
        else:
            merged.append(ranges[i])
    return merged


def ranges_condition(column: str, ranges: list[tuple[int, int]]) -> str:
    """SQL predicate: ``column`` lies in one of ``ranges`` (false for none)."""
    if not ranges:
        return "false"
    return "(" + " OR ".join(f"{column} BETWEEN {lo} AND {hi}" for lo, hi in ranges) + ")"


def _merge_condition(source: DataFrame, keys: list[str], prune_on: str | None, target_filter: str | None,
                     key_types: dict[str, DataType] | None = None) -> str | Column | None:
    """The MERGE condition: keys equal, plus the source's key ranges, ``target_filter`` and (with
    ``key_types``, the target's types of the keys) a bloom filter of the source's keys, hashed as
    the target's values are; None when the source is found empty (the MERGE would change
    nothing)."""
    parts = [f"t.`{k}` = s.`{k}`" for k in keys]
    rows = None
    if prune_on is not None:
        ranges, rows = key_ranges_and_rows(source, prune_on)
        if not rows:
            return None
        parts.append(ranges_condition(f"t.`{prune_on}`", ranges))
    if target_filter is not None:
        parts.append(f"({target_filter})")
    condition = " AND ".join(parts)
    if key_types is None:
        return condition
    rows = source.count() if rows is None else rows
    if not rows:
        return None
    typed = fewer_tasks(source, rows).select(*[F.col(f"`{k}`").cast(key_types[k]).alias(k) for k in keys])
    bloom = keyfilter.bloom_filter_condition(typed, keys, [f"t.`{k}`" for k in keys], rows)
    return condition if bloom is None else F.expr(condition) & bloom


def _commit_info(jvm: Any, delta_log: Any, snapshot: Any, version: int) -> dict[str, Any]:
    """The ``commitInfo`` action of commit ``version`` of ``snapshot`` (its newest or one before),
    read from the commit file on the driver; {} when the commit records none or its file is gone
    (log cleanup keeps the commits since the last checkpoint)."""
    deltas = snapshot.logSegment().deltas()   # the commit files since the checkpoint, oldest first
    index = deltas.size() - 1
    while index >= 0 and _delta_file_version(deltas.apply(index)) > version:
        index -= 1
    if index >= 0 and _delta_file_version(deltas.apply(index)) == version:
        commit_file = deltas.apply(index).getPath()
    else:   # the checkpoint's own commit (or an older one): its file may still be in the log
        commit_file = jvm.org.apache.hadoop.fs.Path(delta_log.logPath(), f"{version:020d}.json")
        if not commit_file.getFileSystem(delta_log.newDeltaHadoopConf()).exists(commit_file):
            return {}
    lines = delta_log.store().read(commit_file, delta_log.newDeltaHadoopConf()).iterator()
    while lines.hasNext():
        line = lines.next()
        if '"commitInfo"' in line:
            action = json.loads(line)
            if "commitInfo" in action:
                return dict(action["commitInfo"])
    return {}


def _sql_text(text: str) -> str:
    """``text`` inside a single-quoted Spark SQL string literal."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _delta_file_version(status: Any) -> int:
    """The version in a commit file's name (``00000000000000000042.json`` and the staged
    ``00000000000000000042.<uuid>.json``)."""
    return int(str(status.getPath().getName()).split(".")[0])
