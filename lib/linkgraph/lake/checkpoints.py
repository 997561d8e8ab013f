"""Reliable checkpoints of the state of iterative loops (hop depth, components, HyperBall, the
rank engine): each lineage cut writes the state to the session's checkpoint directory (the lake's
``_checkpoints`` or ``spark.checkpoint_dir``, a file system every executor reaches), so a lost
executor costs a re-read of those files, never the step.  A local checkpoint would keep the state
in the executors' block managers only: lost with the executor, with no lineage left to recompute it.

A loop deletes each cut as soon as the next one is written (nothing reads it after that); the last
cut is what the loop's result reads, and goes with the application's checkpoint directory when the
command ends.  A loop that fails deletes nothing: its cuts stay for inspection.
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile

from pyspark import RDD, SparkContext, StorageLevel
from pyspark.sql import DataFrame, SparkSession

from linkgraph.errors import ConfigError
from linkgraph.lake.paths import delete_tree
from linkgraph.lake.session import use_checkpoint_dir

log = logging.getLogger(__name__)


def require_checkpoint_dir(spark: SparkSession) -> str:
    """The session's reliable checkpoint directory.  A session without one gets a temporary
    directory when its master is local (executors and driver share one file system, the directory
    is removed at exit); on a cluster that is a configuration error, as no local disk is reliable.
    A session without a SparkContext (Spark Connect) checkpoints where its server says: ``""``."""
    context = _context(spark)
    if context is None:
        return ""
    current = context.getCheckpointDir()
    if current:
        return str(current)
    if not (context.master or "").startswith("local"):
        raise ConfigError("spark.checkpoint_dir: iterative steps need a reliable checkpoint directory every executor "
                          "can reach (set spark.checkpoint_dir, or run the step through linkgraph, which uses "
                          "<lake>/_checkpoints)")
    temporary = tempfile.mkdtemp(prefix="linkgraph-checkpoints-")
    atexit.register(shutil.rmtree, temporary, True)
    return use_checkpoint_dir(spark, temporary)


def _context(spark: SparkSession) -> SparkContext | None:
    try:
        return spark.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        return None


def cut(df: DataFrame) -> DataFrame:
    """``df`` computed once and written to the reliable checkpoint directory; the returned
    DataFrame reads those files (its lineage starts there; its partitioning is kept)."""
    require_checkpoint_dir(df.sparkSession)
    cached = df.persist(StorageLevel.MEMORY_AND_DISK)   # computed once for the count and the write
    written = cached.checkpoint(eager=True)
    cached.unpersist()
    return written


def checkpoint_file(df: DataFrame) -> str | None:
    """The directory of the reliable checkpoint ``df`` reads (a DataFrame :func:`cut` returned),
    None for any other DataFrame (and on Spark Connect, whose server keeps its checkpoints)."""
    if not hasattr(df, "_jdf"):
        return None
    plan = df._jdf.queryExecution().logical()
    if plan.getClass().getSimpleName() != "LogicalRDD":
        return None
    file = plan.rdd().getCheckpointFile()
    return str(file.get()) if file.isDefined() else None


def drop(df: DataFrame | None) -> None:
    """Delete the checkpoint files ``df`` (a superseded :func:`cut`) reads; nothing may read it after."""
    if df is None:
        return
    delete_file(df.sparkSession, checkpoint_file(df))


def cut_rdd(spark: SparkSession, rdd: RDD) -> RDD:
    """``rdd`` cached and checkpointed reliably in one job (a JVM-side count): lost cached
    partitions are read back from the checkpoint files."""
    require_checkpoint_dir(spark)
    rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
    rdd.checkpoint()
    rdd._jrdd.count()
    return rdd


def drop_rdd(spark: SparkSession, rdd: RDD | None) -> None:
    """Delete the checkpoint files of a superseded :func:`cut_rdd` (nothing may read it after)."""
    if rdd is not None:
        delete_file(spark, rdd.getCheckpointFile())


def delete_file(spark: SparkSession, path: str | None) -> None:
    if path and delete_tree(spark, path):
        log.debug("removed superseded checkpoint %s", path)
