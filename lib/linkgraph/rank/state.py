"""Rank state in Delta, so a killed PageRank run resumes from its last checkpointed iteration."""

from __future__ import annotations

import logging

import numpy as np
from pyspark.sql import functions as F

from linkgraph.lake.delta import Lake
from linkgraph.lake.schemas import RANK_STATE
from linkgraph.rank.engine import BLOCK, StateStore

log = logging.getLogger(__name__)


class DeltaStateStore(StateStore):
    """Keeps the rank blocks of the last checkpointed iteration of the run ``run_key``.

    ``run_key`` identifies the computation (graph version, parameters, teleport vectors), so only
    a restart of the same computation resumes.  One overwrite commit per checkpoint; the table is
    emptied when the run finishes.
    """

    def __init__(self, lake: Lake, table: str, run_key: str):
        self.lake, self.table, self.run_key = lake, table, run_key

    def save(self, iteration, rank_blocks, active, vector_iterations) -> None:
        state = rank_blocks.select(
            F.lit(self.run_key).alias("run_key"),
            F.lit(iteration).cast("int").alias("iteration"),
            F.lit(np.asarray(active, dtype=bool).tobytes()).alias("active"),
            F.array(*[F.lit(int(v)) for v in vector_iterations]).cast("array<int>").alias("vector_iterations"),
            BLOCK,
            "ranks",
        )
        self.lake.overwrite(self.table, state)
        log.info("rank state of iteration %d saved to %s", iteration, self.lake.location(self.table))

    def load(self, partitions: int):
        if not self.lake.exists(self.table):
            return None
        state = self.lake.read(self.table).where(F.col("run_key") == self.run_key)
        head = state.select("iteration", "active", "vector_iterations").first()
        if head is None:
            return None
        ranks = state.select(
            BLOCK, "ranks", F.lit(None).cast("binary").alias("l1"), F.lit(None).cast("binary").alias("dangling_mass")
        )
        active = np.frombuffer(head["active"], dtype=bool).copy()
        return int(head["iteration"]), ranks.repartition(partitions, BLOCK), active, list(head["vector_iterations"])

    def clear(self) -> None:
        if self.lake.exists(self.table):
            self.lake.overwrite(self.table, self.lake.spark.createDataFrame([], RANK_STATE))

