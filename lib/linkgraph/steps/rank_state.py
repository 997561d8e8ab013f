"""Rank state in Delta (``rank_state``), so a killed PageRank run resumes from its last checkpointed
iteration: the ``linkgraph.rank.engine.StateStore`` the ``pagerank`` step gives the block engine."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

import numpy as np
from pyspark.sql import functions as F

from linkgraph.lake import tables as T
from linkgraph.lake.delta import Lake
from linkgraph.lake.schemas import RANK_STATE
from linkgraph.rank.blocks import BLOCK
from linkgraph.rank.engine import StateStore

log = logging.getLogger(__name__)

# A killed run resumes from its state within this long; older state of other runs is dropped by
# the next run that finishes (a run over another links version never resumes it).
STALE_STATE_AFTER = timedelta(days=1)


class DeltaStateStore(StateStore):
    """Keeps the rank blocks of the last checkpointed iteration of the run ``run_key``.

    ``run_key`` identifies the computation (graph version, parameters, teleport vectors), so only
    a restart of the same computation resumes.  Each run owns its rows: a checkpoint replaces the
    rows of its ``run_key`` alone (one ``replaceWhere`` commit), so two runs (a uniform and a
    personalised one) never overwrite or clear each other's state.  A finished run deletes its own
    rows and those of runs saved more than ``STALE_STATE_AFTER`` ago (killed, never resumed).
    """

    def __init__(self, lake: Lake, table: str | T.Table, run_key: str):
        self.lake, self.table, self.run_key = lake, T.declaration(table), run_key

    def save(self, iteration, rank_blocks, active, vector_iterations) -> None:
        state = rank_blocks.select(
            F.lit(self.run_key).alias("run_key"),
            F.lit(iteration).cast("int").alias("iteration"),
            F.lit(np.asarray(active, dtype=bool).tobytes()).alias("active"),
            F.array(*[F.lit(int(v)) for v in vector_iterations]).cast("array<int>").alias("vector_iterations"),
            BLOCK,
            "ranks",
            F.lit(datetime.now(timezone.utc).replace(tzinfo=None)).cast("timestamp").alias("saved_at"),
        )
        self.table.overwrite(self.lake, state, replace_where=self._own_rows())
        log.info("rank state of iteration %d saved to %s", iteration, self.lake.location(self.table.name))

    def load(self, partitions: int):
        if not self.table.exists(self.lake):
            return None
        state = self.table.read(self.lake).where(F.col("run_key") == self.run_key)
        head = state.select("iteration", "active", "vector_iterations").first()
        if head is None:
            return None
        ranks = state.select(
            BLOCK, "ranks", F.lit(None).cast("binary").alias("l1"), F.lit(None).cast("binary").alias("dangling_mass")
        )
        active = np.frombuffer(head["active"], dtype=bool).copy()
        return int(head["iteration"]), ranks.repartition(partitions, BLOCK), active, list(head["vector_iterations"])

    def _own_rows(self) -> str:
        return f"run_key = '{self.run_key}'"

    def clear(self) -> None:
        """Delete this run's rows and stale rows of other runs (one commit; none when none match)."""
        if not self.table.exists(self.lake):
            return
        stale = (datetime.now(timezone.utc) - STALE_STATE_AFTER).replace(tzinfo=None)
        doomed = f"{self._own_rows()} OR saved_at IS NULL OR saved_at < TIMESTAMP '{stale:%Y-%m-%d %H:%M:%S}'"
        if self.table.read(self.lake).where(doomed).limit(1).count():
            self.table.overwrite(self.lake, self.lake.spark.createDataFrame([], RANK_STATE), replace_where=doomed)

