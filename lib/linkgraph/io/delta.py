"""Delta Lake I/O: the only module that reads or writes tables.

A ``Lake`` names tables either as paths (``<lake>/<table>``) or as catalog tables
(``[catalog.]schema.<table>``).  Writes are Delta transactions: an upsert is one ``MERGE``, a
replacement one ``overwrite`` commit, so a job killed midway leaves the previous version intact.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.types import StructType

from linkgraph.config import LakeConfig
from linkgraph.errors import MissingTableError
from linkgraph.paths import to_uri
from linkgraph.rows import one_row

log = logging.getLogger(__name__)


# --- test hook: a crash right after a commit --------------------------------------------------------

CRASH_AFTER_COMMITS = "LINKGRAPH_CRASH_AFTER_COMMITS"


class SimulatedCrash(BaseException):
    """Raised by the crash hook in ``raise`` mode.  A ``BaseException``, so no ``except Exception``
    on its way out (conflict retries, the CLI's error handler) turns it into anything else."""


class CrashHook:
    """Test-only: with ``LINKGRAPH_CRASH_AFTER_COMMITS`` set, the process counts the Delta commits
    it makes (every write of ``Lake`` that created a table version, but a MERGE that changed no
    row: the table is as before it) and right after the N-th one (value ``N``), or after the first
    commit to a table (value: the table's name), SIGKILLs its own process group (driver, its JVM,
    Python workers: a job started in a session of its own), leaving exactly the commits made so
    far.  A ``:raise`` suffix raises ``SimulatedCrash`` instead, for in-process tests: only
    ``finally`` blocks run on its way out, and none of them writes to a table, so the lake is what
    a SIGKILL at that point would leave.  Unset (always, outside tests): nothing is counted."""

    def __init__(self) -> None:
        self.commits = 0
        self.tables: list[str] = []

    def reset(self) -> None:
        self.commits, self.tables = 0, []

    def committed(self, table: str) -> None:
        setting = os.environ.get(CRASH_AFTER_COMMITS)
        if not setting:
            return
        self.commits += 1
        self.tables.append(table)
        target, _, mode = setting.partition(":")
        if (self.commits < int(target)) if target.isdigit() else (table != target):
            return
        log.warning("crash hook: stopping after commit %d (%s)", self.commits, table)
        if mode == "raise":
            self.commits = 0   # the next attempt counts its own commits; ``tables`` keeps them all
            raise SimulatedCrash(f"simulated crash after commit to {table}")
        os.killpg(os.getpgrp(), signal.SIGKILL)


CRASH_HOOK = CrashHook()


@dataclass(frozen=True)
class MergeMetrics:
    inserted: int
    updated: int
    deleted: int
    version: int


class Lake:
    def __init__(self, spark: SparkSession, lake_config: LakeConfig):
        self.spark = spark
        self.config = lake_config
        # (table, version or None when not looked up) of every commit made through this object,
        # in order: what a step that stops half-way had committed
        self.commits: list[tuple[str, int | None]] = []

    def _committed(self, table: str, version: int | None = None) -> None:
        self.commits.append((table, version))
        CRASH_HOOK.committed(table)

    @property
    def root(self) -> str:
        """The lake directory as Spark sees it: a relative ``lake.path`` resolved against the
        working directory to a ``file://`` URI, an absolute path or a URI as written."""
        return to_uri(self.config.path).rstrip("/")

    @property
    def uses_catalog(self) -> bool:
        return self.config.schema is not None

    def location(self, table: str) -> str:
        """The path or fully qualified name of ``table``."""
        if self.uses_catalog:
            parts = [p for p in (self.config.catalog, self.config.schema, table) if p]
            return ".".join(parts)
        return f"{self.root}/{table}"

    def exists(self, table: str) -> bool:
        if self.uses_catalog:
            return self.spark.catalog.tableExists(self.location(table))
        return DeltaTable.isDeltaTable(self.spark, self.location(table))

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
        return int(one_row(self.delta_table(table).history(1).select("version"))["version"])

    def version(self, table: str) -> int | None:
        if not self.exists(table):
            return None
        return one_row(self.delta_table(table).history(1).select("version"))["version"]

    def ensure(self, table: str, schema: StructType) -> None:
        """Create ``table`` empty with ``schema`` unless it exists (a no-op commit is avoided)."""
        if self.exists(table) and self._first_commit_seen(table):
            return
        builder = DeltaTable.createIfNotExists(self.spark).addColumns(schema)
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

    def _created_concurrently(self, table: str, exc: Exception, wait_seconds: float = 30.0) -> bool:
        """True when creating ``table`` failed because another job was creating it at the same
        moment: its directory already held files but not yet a first commit
        (``DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION``), and that commit appears within
        ``wait_seconds``.  A directory that stays a non-Delta one is a real error."""
        if "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION" not in str(exc):
            return False
        return self.exists(table) and self._first_commit_seen(table, wait_seconds)

    def _first_commit_seen(self, table: str, wait_seconds: float = 30.0) -> bool:
        """True once the table's first commit is readable.  A table another job is creating has a
        ``_delta_log`` directory (``exists`` is true) a moment before its first commit, and reading
        it in between fails with ``DELTA_TABLE_NOT_FOUND``: wait up to ``wait_seconds`` for it."""
        if self.uses_catalog:
            return True
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                self.delta_table(table)
                return True
            except Exception as exc:
                if "DELTA_TABLE_NOT_FOUND" not in str(exc):
                    raise
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

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
        metrics = one_row(self.delta_table(table).history(1).select("operationMetrics"))["operationMetrics"] or {}
        return int(metrics.get("numOutputRows", 0))

    def built_from(self, table: str) -> str | None:
        """The ``built_from`` recorded by the table's last commit (None if absent or none)."""
        if not self.exists(table):
            return None
        return one_row(self.delta_table(table).history(1).select("userMetadata"))["userMetadata"]

    def last_build(self, table: str) -> tuple[str | None, int] | None:
        """(``built_from``, rows written) of the table's last commit, read from the Delta log in one
        look-up; None when the table does not exist."""
        if not self.exists(table):
            return None
        last = one_row(self.delta_table(table).history(1).select("userMetadata", "operationMetrics"))
        return last["userMetadata"], int((last["operationMetrics"] or {}).get("numOutputRows", 0))

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
    ) -> MergeMetrics:
        """Upsert ``updates`` into ``table`` on equality of ``keys`` in one MERGE commit.

        Matched rows get ``update_set`` (column -> SQL expression; default: every non-key column
        from the source), only where ``update_condition`` holds, which is how a re-run with the
        same input leaves every row untouched; unmatched rows are inserted.  ``update_set={}``
        makes the merge insert-only.  Expressions name ``t.<col>`` (target) and ``s.<col>``
        (source).
        """
        version_before = self.version(table)
        condition = " AND ".join(f"t.`{k}` = s.`{k}`" for k in keys)
        merge = self.delta_table(table).alias("t").merge(updates.alias("s"), condition)
        if update_set is None:
            update_set = {c: f"s.`{c}`" for c in updates.columns if c not in keys}
        if update_set:
            values: dict[str, str | Column] = dict(update_set)
            merge = merge.whenMatchedUpdate(condition=update_condition, set=values)
        merge.whenNotMatchedInsertAll().execute()
        return self._committed_merge(table, version_before)

    def _committed_merge(self, table: str, version_before: int | None) -> MergeMetrics:
        metrics = self._merge_metrics_since(table, version_before)
        # a MERGE that changed no row (Delta may still write a version) leaves the table as it was
        if metrics.version != version_before and (metrics.inserted or metrics.updated or metrics.deleted):
            self._committed(table, metrics.version)
        return metrics

    def _merge_metrics_since(self, table: str, version_before: int | None) -> MergeMetrics:
        """Row counts of the MERGE committed after ``version_before`` (zeros if none was)."""
        last = one_row(self.delta_table(table).history(1).select("version", "operation", "operationMetrics"))
        if last["version"] == version_before or last["operation"] != "MERGE":
            return MergeMetrics(inserted=0, updated=0, deleted=0, version=int(last["version"]))
        metrics = last["operationMetrics"] or {}
        return MergeMetrics(
            inserted=int(metrics.get("numTargetRowsInserted", 0)),
            updated=int(metrics.get("numTargetRowsUpdated", 0)),
            deleted=int(metrics.get("numTargetRowsDeleted", 0)),
            version=int(last["version"]),
        )

    # --- reward ranking (issue 6): time travel and deletes ---------------------------------------

    def read_version(self, table: str, version: int) -> DataFrame:
        """``table`` as it was at Delta ``version`` (time travel)."""
        reader = self.spark.read.format("delta").option("versionAsOf", int(version))
        if self.uses_catalog:
            return reader.table(self.location(table))
        return reader.load(self.location(table))

    def delete_matching(self, table: str, keys_df: DataFrame, keys: list[str]) -> MergeMetrics:
        """Delete the rows of ``table`` whose ``keys`` equal a row of ``keys_df`` (distinct keys) in
        one MERGE commit; returns its counts (``deleted``)."""
        version_before = self.version(table)
        condition = " AND ".join(f"t.`{k}` = s.`{k}`" for k in keys)
        merge = self.delta_table(table).alias("t").merge(keys_df.select(*keys).alias("s"), condition)
        merge.whenMatchedDelete().execute()
        return self._committed_merge(table, version_before)
