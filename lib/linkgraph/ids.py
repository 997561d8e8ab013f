"""Ids: dense row numbering (page ids, vertex ids, frontier positions) and run ids."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def new_run_id(started_at: datetime | None = None) -> str:
    """``20261130T012200-1a2b3c4d``: the start time (UTC) and a random suffix; sorts by start."""
    started_at = started_at or datetime.now(timezone.utc)
    return f"{started_at:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def number_in_order(df: DataFrame, order_by: list[str], first_id: int, id_column: str) -> DataFrame:
    """Give every row a dense id ``first_id, first_id+1, …`` in the order of ``order_by``.

    Distributed: a range-partitioned sort, one small aggregate of per-partition row counts (one
    number per partition reaches the driver) and a per-partition offset.  The sorted frame is
    checkpointed so both passes see the same partitioning.
    """
    spark = df.sparkSession
    ordered = (
        df.orderBy(*order_by)
        .withColumn("_part", F.spark_partition_id())
        .withColumn("_mono", F.monotonically_increasing_id())
        .checkpoint(eager=True)
    )
    counts = ordered.groupBy("_part").count().orderBy("_part").collect()
    offsets, running = {}, first_id
    for row in counts:
        offsets[row["_part"]] = running
        running += row["count"]
    offset_table = spark.createDataFrame(list(offsets.items()), "_part INT, _offset LONG")
    position_in_partition = F.col("_mono") - F.shiftleft(F.col("_part").cast("long"), 33)
    return (
        ordered.join(F.broadcast(offset_table), on="_part", how="inner")
        .withColumn(id_column, F.col("_offset") + position_in_partition)
        .drop("_part", "_mono", "_offset")
    )
