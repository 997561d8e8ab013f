"""A reward run's record (step 0 of ``linkgraph.steps.reward``'s commit order) and what a start
learns from the lake about earlier runs.

Before its first write a run records itself in ``step_runs``: its run id, start time and the Delta
versions of the tables it reads (``RECORDED_TABLES``).  Every read of the run is of those versions,
so a retry computes the same result.  A run is finished when its ``reward_runs`` rows (its last
commit) exist; a recorded run newer than the last finished one without them was interrupted.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake

log = logging.getLogger(__name__)

REWARD_STEP = "reward"
RECORDED_TABLES = (T.PAGES, T.LINKS, T.REWARD_SCORES, T.FEEDS, T.PAGE_SIGNALS)


@dataclass(frozen=True)
class RunRecord:
    """When the run (first) started and the table versions it reads (None: the table was absent)."""

    started_at: datetime
    versions: dict[str, int | None]
    retried: bool


def begin(ctx: StepContext) -> RunRecord:
    """The ``step_runs`` record of this run id: the one a previous attempt wrote, else a new one
    written now, before anything else of the run."""
    lake = ctx.lake
    if T.STEP_RUNS.exists(lake):
        row = (T.STEP_RUNS.read(lake)
               .where((F.col(S.RUN_ID) == ctx.run_id) & (F.col(S.STEP) == REWARD_STEP)).first())
        if row is not None:
            log.info("reward run %s: retried; reading the table versions its first attempt recorded", ctx.run_id)
            return RunRecord(row["started_at"], json.loads(row["inputs"]), retried=True)
    versions = {table.name: table.version(lake) for table in RECORDED_TABLES}
    started_at = naive_utc(ctx.started_at)
    row_df = ctx.spark.createDataFrame(
        [(ctx.run_id, REWARD_STEP, started_at, json.dumps(versions, sort_keys=True))], S.STEP_RUNS)
    T.STEP_RUNS.ensure(lake)
    T.insert_missing(lake, S.STEP_RUNS_TABLE, row_df, [S.RUN_ID, S.STEP])
    return RunRecord(started_at, versions, retried=False)


def recorded(lake: Lake, record: RunRecord, table: T.Table) -> DataFrame:
    """``table`` at the version the run recorded (no rows of its schema when it did not exist then)."""
    version = record.versions.get(table.name)
    if version is None:
        return lake.spark.createDataFrame([], table.schema)
    return table.read_version(lake, version)


def finished_rounds(lake: Lake, run_id: str) -> list[Row]:
    """The ``reward_runs`` rows of run ``run_id``, one per round (at most ``reward.rounds`` + 1),
    in one job: none unless the run finished (its rows are its last commit)."""
    if not T.REWARD_RUNS.exists(lake):
        return []
    return (T.REWARD_RUNS.read(lake).where(F.col(S.RUN_ID) == run_id)
            .select(S.ROUND, "pages", "new_pages", "total_score", "rewards_enabled").collect())


def interrupted_run(lake: Lake) -> str | None:
    """The reward run that recorded itself in ``step_runs`` after the start of the last finished
    run and has no ``reward_runs`` rows: a run that died (a run older than the last finished one
    was superseded by it and is left alone)."""
    if not T.STEP_RUNS.exists(lake):
        return None
    started = T.STEP_RUNS.read(lake).where(F.col(S.STEP) == REWARD_STEP).select(S.RUN_ID, "started_at")
    if T.REWARD_RUNS.exists(lake):
        finished = T.REWARD_RUNS.read(lake).select(S.RUN_ID, "started_at")
        last = finished.agg(F.max("started_at").alias("_last"))
        started = (started.join(finished.select(S.RUN_ID).distinct(), on=S.RUN_ID, how="left_anti")
                   .crossJoin(last).where(F.col("_last").isNull() | (F.col("started_at") > F.col("_last"))))
    row = started.orderBy("started_at", S.RUN_ID).select(S.RUN_ID).first()
    return None if row is None else str(row[S.RUN_ID])


def naive_utc(moment: datetime) -> datetime:
    """``moment`` (UTC) without its time zone, as the tables store times."""
    return moment.replace(tzinfo=None)
