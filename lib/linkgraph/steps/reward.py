"""``linkgraph reward``: page-signals input, the reward rounds, then the prune
(``linkgraph.steps.prune``, with its undo); the run record is ``linkgraph.steps.reward_runs``.

Read (config, pinned table versions) -> ``linkgraph.rank.reward`` transforms -> Delta writes.
Tables written (schemas in ``linkgraph.lake.schemas``): ``page_signals``
(MERGE by url), ``reward_scores`` (replaced by each run), ``feeds`` (MERGE by feed_url),
``reward_runs`` (rows appended per round), ``pruned_pages`` (rows appended per prune), and the
deletes of a prune from ``links`` and ``pages``.

Order of the commits of a run, and why
--------------------------------------
Delta commits one table at a time, so a run is a sequence of single-table transactions ordered
such that every committed state is consistent and a killed run heals on the next start:

1. ``page_signals`` and ``rejects`` (when ``--signals`` is given): idempotent MERGEs.
2. ``reward_scores`` replaced: every page's score except the pages about to be pruned.  Before
   it, the prune is decided: none when no page scored above 0 (the scores cannot tell pages
   apart: no seed, no rewarded signal, no earlier score), and a prune of more than
   ``reward.max_prune_share`` of the pages is refused (``PruneRefused``, exit 2) here, before
   the run's first result is written: nothing of the prune is committed, and the run stays
   unfinished for the next start to complete under the config then in force.
3. ``feeds`` MERGE: discovered feeds inserted, ``last_seen_at`` of the others moved on.
4-7. The prune, in the order of ``linkgraph.steps.prune.PRUNE_COMMITS``:
4. ``pruned_pages`` insert: the audit record (ids, urls, scores, the versions of ``pages`` and
   ``links`` read before the deletes) is written *before* anything is deleted.
5. ``links`` DELETE of every link with a pruned page at either end (one MERGE), then
6. ``pages`` DELETE of the pruned pages (one MERGE).  Links go first, so a link to a missing
   page is never committed by the prune itself, then
7. ``links`` DELETE again of links to a pruned page that is gone now: links an ingest committed
   between the read of step 0 and the pages DELETE (usually nothing, and no commit).  An ingest
   that resolved its links before the pages DELETE and commits them after it finds its pages
   gone and re-runs (``linkgraph.lake.reliability.check_pages_still_there``).  Each DELETE is retried
   on a Delta conflict (``reliability.conflict_attempts``).
8. ``reward_runs`` append, last: the run is finished.

0. Before all of these, the run records itself in ``step_runs``: its run id, start time and the
   Delta versions of ``pages``, ``links``, ``reward_scores``, ``feeds`` and ``page_signals`` it
   reads.  Every read is of those versions (time travel), so computing the run again gives the
   same scores from the same previous scores and known feeds, and every write above is
   idempotent for it and commits nothing when it already landed (``reward_scores`` already of
   this run is not replaced again; a MERGE that changes nothing writes no version).

One run at a time, and an interrupted run completed whatever the run id
-----------------------------------------------------------------------
A run (and an undo) holds the lake's reward lease (``linkgraph.lake.leases``) from before its
first write to its end; a start while another run holds it stops with ``StepAlreadyRunning``.
A start that holds the lease first looks for an interrupted run: a ``step_runs`` record of
``reward`` newer than the last finished run without ``reward_runs`` rows.  When there is one,
the start completes that run (its run id, its recorded versions) instead of starting its own,
whatever run id it was given (``linkgraph reward`` and ``linkgraph run`` give a new one); a
start given the run id of a finished run writes nothing.  So a run killed after any of its
commits ends, after one more start, as one uninterrupted run would have, and no ``step_runs``
record is left without its run.

Undo (``undo_prune``, ``linkgraph.steps.prune.undo``): the pages and links of a prune are
re-inserted from the recorded Delta versions (time travel), pages first, then links, then their
scores; a page already restored by an undo that died half-way counts as free, so running it
again completes the rest.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from linkgraph import urls
from linkgraph.errors import ConfigError, PruneRefused, UsageError
from linkgraph.inputs import signals as SG
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, StepContext, reasons_text
from linkgraph.lake.delta import Lake
from linkgraph.lake.lakepolicy import check_lake_policy, url_policy
from linkgraph.lake.leases import Lease
from linkgraph.lake.rows import one_row
from linkgraph.rank import reward as R
from linkgraph.steps import prune as P
from linkgraph.steps.registry import RunPlan, Step, Task, comma_groups, option, with_params
from linkgraph.steps.reward_runs import (
    REWARD_STEP,
    RunRecord,
    begin,
    finished_rounds,
    interrupted_run,
    recorded,
)

log = logging.getLogger(__name__)


# --- page signals ---------------------------------------------------------------------------------

@dataclass
class SignalsReport(Report):
    source: str
    read: int = 0
    rejected: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    inserted: int = 0
    updated: int = 0
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return self.inserted + self.updated

    def summary(self) -> str:
        reasons = reasons_text(self.rejected_by_reason)
        return (f"page signals {self.source}: read={self.read} rejected={self.rejected} "
                f"(+{self.inserted} new, {self.updated} updated; rejects by reason: {reasons})")


def ingest_page_signals(spark: SparkSession, lake: Lake, path: str, source: str | None = None,
                        policy: urls.UrlPolicy = urls.DEFAULT_POLICY) -> SignalsReport:
    """Read, validate and MERGE a page-signals JSON lines file, its URLs canonicalised under
    ``policy``; bad records go to ``rejects``."""
    started = time.monotonic()
    report = SignalsReport(source=source or str(path))
    raw = SG.read_page_signals(spark, path).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.read = raw.count()
        checked = SG.check_page_signals(raw, policy).persist(StorageLevel.MEMORY_AND_DISK)
        signals, rejects = SG.split_page_signals(checked, report.source, policy)
        rejects = rejects.persist(StorageLevel.MEMORY_AND_DISK)
        report.rejected_by_reason = T.count_by_reason(rejects)
        report.rejected = sum(report.rejected_by_reason.values())
        report.inserted, report.updated = T.merge_page_signals(lake, signals)
        T.write_rejects(lake, rejects)
        rejects.unpersist()
        checked.unpersist()
    finally:
        raw.unpersist()
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


# --- linkgraph reward ------------------------------------------------------------------------------

@dataclass
class RewardReport(Report):
    run_id: str
    rounds: int
    pages: int = 0
    new_pages: int = 0
    seeds: int = 0
    pages_with_signals: int = 0
    feeds_discovered: int = 0
    pruned_pages: int = 0
    pruned_links: int = 0
    total_score: float = 0.0
    rewards_enabled: bool = True
    prune_skipped: str | None = None   # why a run that would prune pruned nothing
    history: list[R.RoundStat] = field(default_factory=list)
    signals: SignalsReport | None = None
    completed_for: str | None = None   # the run id this start was given, when it completed another run
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return self.pages - self.pruned_pages

    def lines(self) -> list[str]:
        taken_over = ([f"reward run {self.run_id} had not finished: completed it instead of starting run "
                       f"{self.completed_for}"] if self.completed_for else [])
        skipped = [self.prune_skipped] if self.prune_skipped else []
        return [*taken_over, *([self.signals.summary()] if self.signals is not None else []), *skipped,
                self.summary()]

    def summary(self) -> str:
        rewards = "" if self.rewards_enabled else " (rewards off)"
        return (
            f"reward run {self.run_id}: pages={self.pages} new={self.new_pages} seeds={self.seeds} "
            f"with_signals={self.pages_with_signals} rounds={self.rounds}{rewards} total_score={self.total_score:.6g} "
            f"feeds_discovered={self.feeds_discovered} pruned_pages={self.pruned_pages} "
            f"pruned_links={self.pruned_links} in {self.seconds:.1f}s"
        )


def _log_round(stat: R.RoundStat) -> None:
    log.info(
        "reward round %d: total %.6g -> %.6g (sent %.6g, received %.6g, forgotten %.6g, rewarded %.6g) "
        "largest_change=%.3g %.2fs",
        stat.round, stat.total_score_before, stat.total_score, stat.total_sent, stat.total_received,
        stat.total_forgotten, stat.total_rewarded, stat.largest_change, stat.seconds,
    )


class _Cache:
    """DataFrames persisted for one run, unpersisted together at its end.  They are page- or
    link-sized and each is read a few times in order, so they are kept on the executors' local
    disks: in memory they hold heap the rounds' sorts and joins need (at 20M links, a 4 GB driver
    in local mode runs out of heap in round 1 with these frames cached in memory)."""

    def __init__(self) -> None:
        self.frames: list[DataFrame] = []

    def keep(self, df: DataFrame) -> DataFrame:
        self.frames.append(df.persist(StorageLevel.DISK_ONLY))
        return self.frames[-1]

    def release(self) -> None:
        for df in self.frames:
            df.unpersist()


@dataclass
class _Inputs:
    """The pinned versions a run reads, and what it derives from them once."""

    pages_version: int
    links_version: int
    pages: DataFrame      # page_id, url
    links: DataFrame
    weighted: DataFrame   # link weights
    seed_ids: DataFrame   # page_id


def _run(ctx: StepContext, rounds: int | None = None, seeds: list[str] | None = None,
        signals_path: str | None = None, signals_source: str | None = None) -> RewardReport:
    """Start scores, K rounds, prune; Delta writes in the module's order, under the lake's reward
    lease; an interrupted run is completed instead of starting a new one.

    ``rounds`` overrides ``reward.rounds``; ``seeds`` are added to ``reward.seeds``;
    ``signals_path`` (page-signal JSON lines) is merged into ``page_signals`` first.
    """
    rc, lake = ctx.config.reward, ctx.lake
    rounds = rc.rounds if rounds is None else rounds
    if rounds < 0:
        raise ConfigError("--rounds must not be negative")
    policy = url_policy(ctx.config, ctx.spark)
    canonical = urls.canonical_seed_urls(list(rc.seeds) + list(seeds or []), "reward.seeds", policy)
    seed_urls = [seed.url for seed in canonical if seed.url is not None]
    T.require(lake, T.PAGES, T.LINKS)
    with Lease(ctx.spark, lake.root, REWARD_STEP, ctx.run_id) as lease:
        asked = ctx.run_id
        ctx = _take_over(ctx, lease)
        report = RewardReport(run_id=ctx.run_id, rounds=rounds, rewards_enabled=rc.rewards,
                              completed_for=asked if asked != ctx.run_id else None)
        finished = finished_rounds(lake, ctx.run_id)
        if finished:
            return _finished_report(ctx, report, finished)
        if signals_path is not None:
            check_lake_policy(lake, ctx.config.urls)
            report.signals = ingest_page_signals(ctx.spark, lake, signals_path, signals_source, policy)
        _compute(ctx, report, seed_urls)
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


def _compute(ctx: StepContext, report: RewardReport, seed_urls: list[str]) -> None:
    """Steps 0-8 of the module docstring for run ``ctx.run_id``; ``reward_runs`` last."""
    rc, lake = ctx.config.reward, ctx.lake
    record = begin(ctx)
    cache = _Cache()
    try:
        inputs = _read_inputs(ctx, cache, seed_urls, report, record)
        start, stat0 = _start_scores(ctx, cache, inputs, report, record)
        signals = recorded(lake, record, T.PAGE_SIGNALS).join(
            inputs.pages, on=S.URL, how="inner")
        rewards, discovered = _rewards(ctx, cache, signals, report, record)
        shares = R.neighbour_shares(inputs.weighted)
        final, history = R.run_rounds(
            start.select(S.PAGE_ID, S.SCORE), R.round_vertices(inputs.pages, shares, rewards), shares,
            R.SpreadParams(rc.send_fraction, rc.forget_rate), report.rounds, progress=_log_round,
        )
        report.history = [stat0, *history]
        _write_results(ctx, cache, inputs, cache.keep(final), signals, discovered, report, record.started_at)
        if report.pruned_pages:
            P.apply_prune(ctx, ctx.run_id)
        _record_rounds(lake, report, ctx.config, record.started_at, inputs.links_version)
    finally:
        cache.release()





def _take_over(ctx: StepContext, lease: Lease) -> StepContext:
    """``ctx`` for the run this start works on: the interrupted run when there is one (whatever
    run id this start was given), else its own."""
    interrupted = interrupted_run(ctx.lake)
    if interrupted is None or interrupted == ctx.run_id:
        return ctx
    log.warning("reward run %s did not finish: completing it instead of starting run %s", interrupted, ctx.run_id)
    lease.update(interrupted)
    return dataclasses.replace(ctx, run_id=interrupted)


def _finished_report(ctx: StepContext, report: RewardReport, rounds: list[Row]) -> RewardReport:
    """The report of a run that completed before (a retry of it writes nothing), from its
    ``reward_runs`` rows."""
    lake, run_id = ctx.lake, ctx.run_id
    last = max(rounds, key=lambda row: row[S.ROUND])
    first = next(row for row in rounds if row[S.ROUND] == 0)
    report.rounds, report.pages, report.new_pages = int(last[S.ROUND]), int(first["pages"]), int(first["new_pages"])
    report.total_score = float(last["total_score"])
    report.rewards_enabled = bool(first["rewards_enabled"])
    pruned = (T.PRUNED_PAGES.read(lake).where(F.col(S.RUN_ID) == run_id)
              if T.PRUNED_PAGES.exists(lake) else None)
    recorded = (one_row(pruned.agg(F.count(F.lit(1)).alias("pages"), F.first("links_version").alias("links_version")))
                if pruned is not None else None)
    if pruned is not None and recorded is not None and recorded["pages"]:
        report.pruned_pages = int(recorded["pages"])
        old_links = T.LINKS.read_version(lake, recorded["links_version"])
        report.pruned_links = R.links_touching(old_links, pruned.select(S.PAGE_ID)).count()
    if T.FEEDS.exists(lake):
        report.feeds_discovered = T.FEEDS.read(lake).where(F.col("discovered_run_id") == run_id).count()
    report.seconds = ctx.elapsed()
    log.info("reward run %s finished before; nothing to do", run_id)
    return report


def _read_inputs(ctx: StepContext, cache: _Cache, seed_urls: list[str], report: RewardReport,
                 record: RunRecord) -> _Inputs:
    rc, lake = ctx.config.reward, ctx.lake
    pages_version, links_version = record.versions[S.PAGES_TABLE], record.versions[S.LINKS_TABLE]
    assert pages_version is not None and links_version is not None, "pages and links are required"
    pages = cache.keep(T.PAGES.read_version(lake, pages_version).select(S.PAGE_ID, S.URL))
    links = T.LINKS.read_version(lake, links_version)
    weighted = cache.keep(R.link_weights(links, rc.link_type_weights, rc.position_weights))
    seed_ids = cache.keep(
        pages.join(ctx.spark.createDataFrame([(u,) for u in seed_urls], f"{S.URL} string"), on=S.URL, how="inner")
        .select(S.PAGE_ID)
    )
    report.seeds = seed_ids.count()
    if report.seeds < len(set(seed_urls)):
        log.warning("%d of %d reward seeds are not pages of the lake", len(set(seed_urls)) - report.seeds,
                    len(set(seed_urls)))
    return _Inputs(pages_version, links_version, pages, links, weighted, seed_ids)


def _start_scores(ctx: StepContext, cache: _Cache, inputs: _Inputs, report: RewardReport,
                  record: RunRecord) -> tuple[DataFrame, R.RoundStat]:
    """Round 0: the previous scores, new pages initialised (kept), and its statistics."""
    rc = ctx.config.reward
    previous = recorded(ctx.lake, record, T.REWARD_SCORES)
    start = R.initial_scores(inputs.pages, previous, inputs.weighted, inputs.seed_ids, rc.new_page_fraction,
                             rc.seed_score)
    # a row per page, read twice: on local disk, so it takes no heap from the rounds' sorts; a lost
    # partition is recomputed from the pinned table versions it is derived from
    start = cache.keep(start)
    round0 = one_row(start.agg(
        F.count("*").alias("pages"),
        F.sum(F.col(R.IS_NEW).cast("long")).alias("new_pages"),
        R.exact_total(F.when(~F.col(R.IS_NEW), F.col(S.SCORE))).alias("before"),
        R.exact_total(F.when(F.col(R.IS_NEW), F.col(S.SCORE))).alias("initialised"),
        F.max(F.when(F.col(R.IS_NEW), F.col(S.SCORE))).alias("largest"),
    ))
    report.pages, report.new_pages = int(round0["pages"]), int(round0["new_pages"] or 0)
    before, initialised = float(round0["before"] or 0.0), float(round0["initialised"] or 0.0)
    stat0 = R.RoundStat(0, before, 0.0, 0.0, 0.0, 0.0, before + initialised, float(round0["largest"] or 0.0),
                        ctx.elapsed())
    return start, stat0


def _rewards(ctx: StepContext, cache: _Cache, signals: DataFrame, report: RewardReport,
             record: RunRecord) -> tuple[DataFrame | None, DataFrame | None]:
    """(page rewards, discovered feeds), both None when rewards are off."""
    rc = ctx.config.reward
    if not rc.rewards:
        return None, None
    known_feeds = recorded(ctx.lake, record, T.FEEDS)
    rewards, discovered = R.page_rewards(
        signals, known_feeds, rc.term_rules, rc.max_hits_per_term, rc.new_feed_points, rc.known_feed_points,
        rc.feed_url_pattern,
    )
    rewards, discovered = cache.keep(rewards), cache.keep(discovered)
    report.pages_with_signals = rewards.count()
    report.feeds_discovered = discovered.count()
    return rewards, discovered


def _write_results(ctx: StepContext, cache: _Cache, inputs: _Inputs, final: DataFrame, signals: DataFrame,
                   discovered: DataFrame | None, report: RewardReport, started_at: datetime) -> None:
    """``reward_scores`` (without the pages about to be pruned), ``feeds``, then the prune."""
    rc, lake = ctx.config.reward, ctx.lake
    prune = rc.prune and _prune_has_evidence(final, report)
    doomed = cache.keep(R.prune_candidates(final, inputs.seed_ids, rc.delete_threshold) if prune
                        else final.limit(0).select(S.PAGE_ID, S.SCORE))
    report.pruned_pages = doomed.count()
    kept_scores = final.join(doomed.select(S.PAGE_ID), on=S.PAGE_ID, how="left_anti")
    if not _scores_of_run(lake, report.run_id):   # a retry after this commit does not commit it again
        _refuse_a_large_prune(report, rc.max_prune_share)
        T.REWARD_SCORES.overwrite(lake, kept_scores.join(inputs.pages, on=S.PAGE_ID, how="left").select(
            S.PAGE_ID, S.URL, S.SCORE, F.lit(report.run_id).alias(S.RUN_ID)))
    report.total_score = float(one_row(kept_scores.agg(R.exact_total(S.SCORE)))[0] or 0.0)
    if discovered is not None:
        _record_feeds(lake, signals, discovered, rc.feed_url_pattern, report.run_id, started_at)
    if report.pruned_pages:
        touching = cache.keep(R.links_touching(inputs.links, doomed))   # of the pinned links version
        report.pruned_links = P.record_prune(lake, doomed, touching, inputs.pages, inputs.pages_version,
                                             inputs.links_version, report.run_id, started_at)


def _prune_has_evidence(final: DataFrame, report: RewardReport) -> bool:
    """Whether the scores can tell pages apart: some page scored above 0.  When none did (no seed
    page, no reward from page signals, no earlier score), every page is below any positive threshold
    and a prune would delete the whole lake: the run prunes nothing and says why in one line."""
    if (one_row(final.agg(F.max(S.SCORE)))[0] or 0.0) > 0.0:
        return True
    report.prune_skipped = (
        f"reward run {report.run_id}: pruned nothing: no page scored above 0 (seeds={report.seeds}, "
        f"pages with signals={report.pages_with_signals}, earlier scores="
        f"{report.history[0].total_score_before if report.history else 0.0:.6g}); a prune needs seeds, "
        f"page signals or earlier scores")
    log.warning(report.prune_skipped)
    return False


def _refuse_a_large_prune(report: RewardReport, max_share: float) -> None:
    """Stop the run (``PruneRefused``, exit 2) before its first result is written when it would
    prune more than ``max_share`` of its pages."""
    if report.pruned_pages and report.pruned_pages > max_share * report.pages:
        raise PruneRefused(
            f"reward run {report.run_id}: refused to prune {report.pruned_pages} of {report.pages} pages "
            f"({report.pruned_pages / report.pages:.1%}, more than reward.max_prune_share={max_share:g}); "
            f"nothing pruned: raise reward.max_prune_share or run with --no-prune to finish this run")


def _scores_of_run(lake: Lake, run_id: str) -> bool:
    """True when ``reward_scores`` holds the scores of run ``run_id`` (it wrote them before)."""
    return T.REWARD_SCORES.exists(lake) and bool(
        T.REWARD_SCORES.read(lake).where(F.col(S.RUN_ID) == run_id).limit(1).count())


def _record_feeds(lake: Lake, signals: DataFrame, discovered: DataFrame, pattern: str | None, run_id: str,
                  seen_at: datetime) -> None:
    """Insert the discovered feeds; move ``last_seen_at`` of every feed linked now."""
    linked = R.page_feed_links(signals, pattern).select(S.FEED_URL).distinct()
    rows = linked.join(discovered, on=S.FEED_URL, how="left").select(
        S.FEED_URL, "discovered_by",
        F.lit(seen_at).cast("timestamp").alias(S.DISCOVERED_AT),
        F.lit(run_id).alias("discovered_run_id"),
        F.lit(seen_at).cast("timestamp").alias(S.LAST_SEEN_AT),
    )
    T.merge_feeds(lake, rows)


def _record_rounds(lake: Lake, report: RewardReport, config: Config, started_at: datetime,
                   links_version: int | None) -> None:
    """Append one ``reward_runs`` row per round (round 0: the start state)."""
    rc = config.reward
    rows = [
        (
            report.run_id, stat.round, started_at, report.pages, report.new_pages if stat.round == 0 else 0,
            rc.send_fraction, rc.forget_rate, report.rewards_enabled, links_version,
            stat.total_score_before, stat.total_sent, stat.total_received, stat.total_forgotten, stat.total_rewarded,
            stat.total_score - stat.total_score_before if stat.round == 0 else 0.0,
            stat.total_score, stat.largest_change, stat.seconds,
        )
        for stat in report.history
    ]
    T.REWARD_RUNS.append(lake, lake.spark.createDataFrame(rows, S.REWARD_RUNS))


# --- the step's declaration -------------------------------------------------------------------------

_RUN_ID = re.compile(r"[A-Za-z0-9._:+-]{1,100}")


@dataclass(frozen=True)
class Params:
    rounds: int | None = option("distribution rounds (default: reward.rounds, 10)", metavar="K")
    signals: str | None = option("page-signal JSON lines to merge into page_signals first", metavar="PATH",
                                 path="page signals")
    seeds: list[str] = option("comma-separated seed URLs (never pruned), added to reward.seeds", metavar="URLS",
                              default=[])
    no_rewards: bool = option("spread and forget only; add no rewards", config="reward.rewards",
                              config_value=False, default=False)
    no_prune: bool = option("keep pages below the delete threshold", config="reward.prune", config_value=False,
                            default=False)
    undo_prune: str | None = option("restore what reward run RUN_ID pruned, and stop", metavar="RUN_ID")
    run_id: str | None = option("run id to use (a retry: the same RUN_ID completes that run, or does nothing if "
                                "it finished; default: a new id)", metavar="RUN_ID")
    signals_source: str | None = None   # the source recorded for the signals (the sample's), not a flag


def run(ctx: StepContext, params: Params) -> RewardReport | P.UndoReport:
    ctx = with_params(ctx, params)
    if params.undo_prune:
        return P.undo(ctx, params.undo_prune)
    if params.run_id is not None:
        ctx = dataclasses.replace(ctx, run_id=params.run_id)
    seeds = [url for group in comma_groups(params.seeds) for url in group]
    return _run(ctx, rounds=params.rounds, seeds=seeds, signals_path=params.signals,
                signals_source=params.signals_source)


def _checked(params: Params) -> Params:
    if params.rounds is not None and params.rounds < 0:
        raise UsageError("--rounds must not be negative")
    if params.undo_prune is None and params.run_id is not None and not _RUN_ID.fullmatch(params.run_id):
        raise UsageError(f"--run-id {params.run_id!r}: use 1-100 letters, digits and . _ : + -")
    return params


def _for_run(plan: RunPlan, config: Config) -> Params | None:
    """The reward step of ``linkgraph run``, when ``reward.in_run`` asks for it (by default: on
    the built-in sample only, with its page signals and job-feed home pages as seeds)."""
    mode = config.reward.in_run
    if mode == "never" or (mode == "sample" and not plan.on_sample):
        return None
    if not plan.on_sample:
        return Params()
    signals = SG.write_sample_signals(tempfile.mkdtemp(prefix="linkgraph-sample-signals-"))
    return Params(seeds=[",".join(SG.sample_seed_urls())], signals=str(signals), signals_source=SG.SAMPLE_SOURCE)


STEP = Step(
    name="reward", help="reward-distribution ranking for focused crawls (scores, feeds, pruning)", params=Params,
    run=run, reads=(T.PAGES, T.LINKS, T.PAGE_SIGNALS, T.REWARD_SCORES, T.FEEDS),
    writes=(T.REWARD_SCORES, T.REWARD_RUNS, T.FEEDS, T.PRUNED_PAGES, T.PAGE_SIGNALS, T.REJECTS, T.STEP_RUNS,
            T.PAGES, T.LINKS),
    after=("ingest",), for_run=_for_run, prepare=_checked,
    tasks=(Task("reward", ("--rounds", "{param:reward_rounds}", "--signals", "{param:signals_root}/{ds}",
                          "--if-present", "--run-id", "{ds}-reward")),),
)
