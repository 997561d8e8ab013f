"""The prune of a reward run and its undo (steps 4-7 of ``linkgraph.steps.reward``'s commit order).

A prune deletes the pages a run scored below ``reward.delete_threshold`` (never a seed) and every
link touching them.  Its commits, in this order (``PRUNE_COMMITS``), each idempotent for the run:
the audit record first, so a killed prune is completed, or undone, from what it recorded; links
before pages, so the prune itself never commits a link to a missing page; then the links a
concurrent ingest added to a pruned page meanwhile.  The undo re-inserts from the Delta versions
the audit recorded (time travel): pages, then links, then scores.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.errors import PruneNotFound, RunNotFinished
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.leases import Lease
from linkgraph.lake.reliability import retry_on_conflict
from linkgraph.rank import reward as R
from linkgraph.steps.reward_runs import REWARD_STEP, interrupted_run

log = logging.getLogger(__name__)

# (table, operation, what it commits) in the order a prune commits them
PRUNE_COMMITS = (
    (S.PRUNED_PAGES_TABLE, "insert", "the audit: pruned ids, urls, scores and the pages/links versions read"),
    (S.LINKS_TABLE, "delete", "every link with a pruned page at either end, of the recorded links version"),
    (S.PAGES_TABLE, "delete", "the pruned pages"),
    (S.LINKS_TABLE, "delete", "links an ingest committed to a pruned page since (usually none: no commit)"),
)


def record_prune(lake: Lake, doomed: DataFrame, touching: DataFrame, pages: DataFrame, pages_version: int,
                 links_version: int, run_id: str, pruned_at: datetime) -> int:
    """The audit record of the prune (``PRUNE_COMMITS``' first): the ``doomed`` pages (page_id,
    score) with their url from ``pages`` and their count of ``touching`` links, all of the
    ``pages_version`` and ``links_version`` the run read; returns the links it deletes."""
    audit = (
        doomed.join(pages, on=S.PAGE_ID, how="left")
        .join(R.links_per_page(touching, doomed), on=S.PAGE_ID, how="left")
        .select(
            F.lit(run_id).alias(S.RUN_ID), S.PAGE_ID, S.URL, S.SCORE, "links_removed",
            F.lit(pages_version).cast("long").alias("pages_version"),
            F.lit(links_version).cast("long").alias("links_version"),
            F.lit(pruned_at).cast("timestamp").alias("pruned_at"),
        )
    )
    T.PRUNED_PAGES.ensure(lake)
    T.insert_missing(lake, S.PRUNED_PAGES_TABLE, audit, [S.RUN_ID, S.PAGE_ID])   # a retry adds nothing
    return touching.count()   # the links of the recorded version (a retry finds them deleted already)


def apply_prune(ctx: StepContext, run_id: str) -> None:
    """The deletes of the prune ``pruned_pages`` records for ``run_id`` (``PRUNE_COMMITS`` after
    the audit): idempotent, each retried on a Delta conflict; nothing when the run pruned nothing."""
    lake = ctx.lake
    if not T.PRUNED_PAGES.exists(lake):
        return
    audit = T.PRUNED_PAGES.read(lake).where(F.col(S.RUN_ID) == run_id)
    recorded = audit.select("links_version").first()
    if recorded is None:
        return
    # insert-only rows of one run: a lost partition is recomputed with the same ids
    doomed = audit.select(S.PAGE_ID).persist(StorageLevel.DISK_ONLY)
    try:
        if T.PAGES.read(lake).join(doomed, on=S.PAGE_ID, how="left_semi").limit(1).count():
            old_links = T.LINKS.read_version(lake, recorded["links_version"])
            _delete(ctx, run_id, S.LINKS_TABLE, R.links_touching(old_links, doomed), [S.SRC_ID, S.DST_ID])
            _delete(ctx, run_id, S.PAGES_TABLE, doomed, [S.PAGE_ID])
        _delete_dangling(ctx, run_id, doomed)
    finally:
        doomed.unpersist()


def _delete(ctx: StepContext, run_id: str, table: str, keys_df: DataFrame, keys: list[str]) -> None:
    """Delete the rows of ``keys_df`` from ``table``, retried on a Delta conflict; the delete reads
    only the files of its keys' ranges (pages by page_id, links by src_id)."""
    lake, reliability = ctx.lake, ctx.config.reliability
    retry_on_conflict(lambda: T.declaration(table).delete_matching(lake, keys_df, keys, prune_on=keys[0]),
                      what=f"reward run {run_id}: prune",
                      attempts=reliability.conflict_attempts, backoff_seconds=reliability.conflict_backoff_seconds)


def _delete_dangling(ctx: StepContext, run_id: str, doomed: DataFrame) -> None:
    """Links a concurrent ingest committed to a pruned page after the recorded version: read after
    the pages DELETE committed, so each such link is either seen here or its ingest finds the page
    gone (``check_pages_still_there``).  A pruned page an ingest inserted again keeps its links."""
    lake = ctx.lake
    gone = doomed.join(T.PAGES.read(lake).select(S.PAGE_ID), on=S.PAGE_ID, how="left_anti")
    # read from the latest links, which its own delete changes: saved reliably (the lake's
    # checkpoint directory), so every attempt of the delete sees the same rows
    dangling = R.links_touching(T.LINKS.read(lake), gone).checkpoint(eager=True)
    if dangling.limit(1).count():
        log.warning("reward run %s: deleting %d links a concurrent ingest added to pruned pages", run_id,
                    dangling.count())
        _delete(ctx, run_id, S.LINKS_TABLE, dangling, [S.SRC_ID, S.DST_ID])


@dataclass
class UndoReport(Report):
    run_id: str
    pages_restored: int = 0
    pages_skipped: int = 0
    links_restored: int = 0
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return self.pages_restored + self.links_restored

    def summary(self) -> str:
        skipped = f" ({self.pages_skipped} skipped: their url or id is in use again)" if self.pages_skipped else ""
        return (f"undo prune {self.run_id}: pages restored={self.pages_restored}{skipped} "
                f"links restored={self.links_restored}")


def undo(ctx: StepContext, run_id: str) -> UndoReport:
    """Re-insert what the prune of reward run ``run_id`` deleted, from the Delta versions of
    ``pages`` and ``links`` recorded in ``pruned_pages`` (time travel): pages whose url and id are
    both still free, then the links of those versions between pages that are again (or still)
    the same pages, then the pruned scores into ``reward_scores``.  Running it twice changes
    nothing the second time (insert-only MERGEs).  Holds the reward lease (a reward run and an
    undo never run at once); a run that has not finished is refused (the next reward run would
    complete its prune again)."""
    lake = ctx.lake
    report = UndoReport(run_id)
    with Lease(ctx.spark, lake.root, REWARD_STEP, f"undo-prune {run_id}"):
        if not T.PRUNED_PAGES.exists(lake):
            raise PruneNotFound(f"no prune has been recorded in lake {lake.root} "
                                f"(table '{S.PRUNED_PAGES_TABLE}' missing)")
        if interrupted_run(lake) == run_id:
            raise RunNotFinished(f"reward run {run_id!r} has not finished: run 'linkgraph reward' to complete it, "
                                 f"then undo its prune")
        pruned = T.PRUNED_PAGES.read(lake).where(F.col(S.RUN_ID) == run_id).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            _undo(lake, run_id, pruned, report)
        finally:
            pruned.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


def _undo(lake: Lake, run_id: str, pruned: DataFrame, report: UndoReport) -> None:
    """Pages, then links, then scores of the prune ``pruned`` records (``undo``)."""
    versions = pruned.select("pages_version", "links_version").first()
    if versions is None:
        raise PruneNotFound(f"reward run {run_id!r} pruned nothing (no rows in '{S.PRUNED_PAGES_TABLE}')")
    old_pages = T.PAGES.read_version(lake, versions["pages_version"])
    free = _free_pages(lake, old_pages, pruned)
    try:
        T.insert_missing(lake, S.PAGES_TABLE, free, [S.PAGE_ID])
        report.pages_restored = free.count()
        report.pages_skipped = pruned.count() - report.pages_restored
        report.links_restored = _restore_links(lake, old_pages, free, versions["links_version"])
        scores = pruned.join(free.select(S.PAGE_ID), on=S.PAGE_ID, how="left_semi").select(
            S.PAGE_ID, S.URL, S.SCORE, S.RUN_ID)
        T.REWARD_SCORES.ensure(lake)
        T.insert_missing(lake, S.REWARD_SCORES_TABLE, scores, [S.PAGE_ID])
    finally:
        free.unpersist()


def _free_pages(lake: Lake, old_pages: DataFrame, pruned: DataFrame) -> DataFrame:
    """The pruned pages (rows of ``old_pages``) whose id and url no other page uses now (kept)."""
    current = T.PAGES.read(lake).select(S.PAGE_ID, S.URL)
    candidates = old_pages.join(pruned.select(S.PAGE_ID), on=S.PAGE_ID, how="left_semi")
    # taken: the id or the url is used by another page now (a page restored by an earlier,
    # interrupted undo has both, so it stays free and the rest is completed)
    others = current.join(candidates.select(S.PAGE_ID, S.URL), on=[S.PAGE_ID, S.URL], how="left_anti")
    free = (candidates.join(others.select(S.PAGE_ID), on=S.PAGE_ID, how="left_anti")
            .join(others.select(S.URL), on=S.URL, how="left_anti")
            .select(*[f.name for f in S.PAGES.fields]))
    # the same rows when recomputed after their insert (restored pages stay free): a lost
    # partition is recomputed alike
    return free.persist(StorageLevel.DISK_ONLY)


def _restore_links(lake: Lake, old_pages: DataFrame, free: DataFrame, links_version: int) -> int:
    """Insert the links of ``links_version`` with a restored page at an end whose other end is
    the same page as then; returns how many are back in place (also those an undo killed
    earlier inserted)."""
    # ids that name the same URL now as in the recorded version: a link between two of them,
    # one end restored, is the link that was deleted
    same = T.PAGES.read(lake).select(S.PAGE_ID, S.URL).join(
        old_pages.select(S.PAGE_ID, S.URL), on=[S.PAGE_ID, S.URL], how="inner").select(S.PAGE_ID)
    old_links = T.LINKS.read_version(lake, links_version)
    restored = (
        R.links_touching(old_links, free)
        .join(same.select(F.col(S.PAGE_ID).alias(S.SRC_ID)), on=S.SRC_ID, how="left_semi")
        .join(same.select(F.col(S.PAGE_ID).alias(S.DST_ID)), on=S.DST_ID, how="left_semi")
        .join(old_links, on=[S.SRC_ID, S.DST_ID], how="inner")
        .select(*[f.name for f in S.LINKS.fields])
    )
    T.insert_missing(lake, S.LINKS_TABLE, restored, [S.SRC_ID, S.DST_ID])
    return restored.count()
