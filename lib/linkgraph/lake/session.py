"""The one SparkSession builder of the project.

Called only from entry points (CLI, jobs, notebooks, bench) and the test fixture, never at import.
If a session is already active (spark-submit, Databricks, a notebook) it is returned as it is
(the platform provides Delta and its own tuning), given only the configured checkpoint directory
when it has none.  Otherwise a session is built from ``SparkConfig``
with Delta's extension and catalog, the pinned JVM packages and a checkpoint directory.
"""

from __future__ import annotations

import logging
import os
import sys

from pyspark import SparkContext
from pyspark.sql import SparkSession

from linkgraph.errors import ConfigError
from linkgraph.lake.config import SparkConfig
from linkgraph.lake.packages import DELTA_PACKAGE, EXCLUDED_PACKAGES, GRAPHFRAMES_PACKAGE
from linkgraph.lake.paths import delete_tree, qualify, table_location

log = logging.getLogger(__name__)

DELTA_SQL_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
# Reliable checkpoints (the loops' lineage cuts, ``linkgraph.lake.checkpoints``) written with
# Spark's I/O codec: Spark writes them uncompressed by default (bench/checkpoints.py measures both).
CHECKPOINT_CONF = {"spark.checkpoint.compress": "true"}


def jvm_packages(spark_config: SparkConfig) -> list[str]:
    packages = [DELTA_PACKAGE]
    if spark_config.graphframes and not spark_config.graphframes_jar:
        packages.append(GRAPHFRAMES_PACKAGE)
    return packages


def jars(spark_config: SparkConfig) -> str | None:
    """``spark.jars``: the configured one plus the local GraphFrames jar, if any."""
    listed = [j for j in spark_config.conf.get("spark.jars", "").split(",") if j]
    if spark_config.graphframes_jar and spark_config.graphframes_jar not in listed:
        if not os.path.isfile(spark_config.graphframes_jar):
            raise ConfigError(f"spark.graphframes_jar: no such file: {spark_config.graphframes_jar}")
        listed.append(spark_config.graphframes_jar)
    return ",".join(listed) or None


def existing_session() -> SparkSession | None:
    """The session this process already runs, None without one: the calling thread's active
    session, else the default one.  A thread of its own (a notebook's or a test's) has no active
    session until it uses one, yet shares the process's SparkContext: building a "new" session
    there would re-apply this project's settings to the one everyone uses."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if SparkContext._active_spark_context is None:
        return None
    return SparkSession.builder.getOrCreate()


def get_spark(spark_config: SparkConfig | None = None) -> SparkSession:
    """Return the process's SparkSession (``existing_session``), or build one from ``spark_config``."""
    active = existing_session()
    if active is not None:
        if spark_config is not None and spark_config.checkpoint_dir:
            _ensure_checkpoint_dir(active, spark_config.checkpoint_dir)
        return active
    spark_config = spark_config or SparkConfig()
    # Python workers must run this interpreter (the one with linkgraph and its pins installed).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    builder = SparkSession.builder.appName(spark_config.app_name)
    if spark_config.master:
        builder = builder.master(spark_config.master)
    settings: dict[str, str] = {
        **DELTA_SQL_CONF,
        **CHECKPOINT_CONF,
        "spark.sql.shuffle.partitions": str(spark_config.shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
    }
    if spark_config.driver_memory:
        settings["spark.driver.memory"] = spark_config.driver_memory
    if spark_config.add_packages:
        settings["spark.jars.packages"] = ",".join(jvm_packages(spark_config))
        settings["spark.jars.excludes"] = EXCLUDED_PACKAGES   # what Spark's own jars/ provide
        ivy_dir = os.environ.get("LINKGRAPH_IVY_DIR")
        if ivy_dir:
            settings["spark.jars.ivy"] = ivy_dir
    settings.update(spark_config.conf)
    jar_list = jars(spark_config)
    if jar_list:
        settings["spark.jars"] = jar_list
    for key, value in settings.items():
        builder = builder.config(key, value)

    log.info("starting Spark (master=%s, packages=%s)", spark_config.master, settings.get("spark.jars.packages"))
    spark = builder.getOrCreate()
    if spark_config.checkpoint_dir:
        use_checkpoint_dir(spark, spark_config.checkpoint_dir)
    return spark


def _ensure_checkpoint_dir(spark: SparkSession, directory: str | None) -> None:
    """Give a session the platform built (Databricks, spark-submit) the configured checkpoint
    directory when it has none (None: each step's lake-derived one, see ``StepContext``).
    Sessions without a SparkContext (Spark Connect, serverless) are left alone."""
    if not directory:
        return
    try:
        use_checkpoint_dir(spark, directory)
    except Exception as exc:  # noqa: BLE001 - no SparkContext here; such platforms manage checkpoints
        log.debug("checkpoint directory not set on the active session: %s", exc)


def use_checkpoint_dir(spark: SparkSession, directory: str) -> str:
    """Give the session a reliable checkpoint directory unless it has one: ``directory``
    qualified with its file system's scheme (a path without one takes the default file system's,
    e.g. ``hdfs://namenode/...`` on a cluster, instead of each executor's local disk).  Spark
    checkpoints under a subdirectory of its own per application; returns that."""
    context = spark.sparkContext
    if not context.getCheckpointDir():
        context.setCheckpointDir(qualify(spark, directory))
        log.info("checkpoints under %s", context.getCheckpointDir())
    return str(context.getCheckpointDir())


def checkpoint_dir_of_lake(lake_root: str) -> str:
    """The checkpoint directory used when none is configured: ``<lake>/_checkpoints``, on the
    lake's own file system or object store (Delta ignores directories starting with ``_``)."""
    return table_location(lake_root, "_checkpoints")


def clean_checkpoints(spark: SparkSession, keep: bool = False) -> None:
    """Delete this application's checkpoints (the subdirectory Spark made under the configured
    directory): called when a command ends, as no checkpoint is read after its job.  With ``keep``
    (a command that failed) they stay, and where they are is logged."""
    directory = spark.sparkContext.getCheckpointDir()
    if directory and keep:
        log.warning("kept the checkpoints of this failed command for inspection: %s", directory)
        return
    if directory and delete_tree(spark, directory):
        log.info("removed checkpoints %s", directory)
