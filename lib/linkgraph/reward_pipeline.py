"""Reward ranking steps: page-signals input, ``linkgraph reward`` and the undo of a prune.

Each function here is what one job runs: read (config, lake) -> ``linkgraph.rank.reward``
transforms -> Delta writes.  Tables written (schemas in ``linkgraph.schemas``): ``page_signals``
(MERGE by url), ``reward_scores`` (replaced by each run), ``feeds`` (MERGE by feed_url),
``reward_runs`` (rows appended per round), ``pruned_pages`` (rows appended per prune), and the
deletes of a prune from ``links`` and ``pages``.

Order of the commits of a run, and why
--------------------------------------
Delta commits one table at a time, so a run is a sequence of single-table transactions ordered
such that every committed state is consistent and a killed run heals on the next one:

1. ``page_signals`` and ``rejects`` (when ``--signals`` is given): idempotent MERGEs.
2. ``reward_scores`` replaced: every page's score except the pages about to be pruned.
3. ``feeds`` MERGE: discovered feeds inserted, ``last_seen_at`` of the others moved on.
4. ``pruned_pages`` insert: the audit record (ids, urls, scores, the versions of ``pages`` and
   ``links`` read before the deletes) is written *before* anything is deleted.
5. ``links`` DELETE of every link with a pruned page at either end (one MERGE), then
6. ``pages`` DELETE of the pruned pages (one MERGE).  Links go first, so at no committed
   version does a ``links`` row refer to a missing page; a run killed between 5 and 6 leaves
   pages without links and without a score, which the next run treats as new pages (score 0
   without scored in-links) and prunes again.
7. ``reward_runs`` append.

Undo (``undo_prune``): the pages and links of a prune are re-inserted from the recorded Delta
versions (time travel), pages first, then links, then their scores.
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

from linkgraph import ingest as I
from linkgraph import schemas as S
from linkgraph import urls
from linkgraph.config import Config
from linkgraph.errors import ConfigError, PruneNotFound
from linkgraph.io.delta import Lake
from linkgraph.pipeline import new_run_id, reasons_text
from linkgraph.rank import reward as R
from linkgraph.readers import CORRUPT_RECORD, InputSchemaError

log = logging.getLogger(__name__)

SAMPLE_SOURCE = "builtin-sample-signals"

# JSON lines a crawler supplies (README "Page signals input"); everything but ``feed_links`` is
# read as a string so that a bad value can be rejected with its raw text.
RAW_PAGE_SIGNAL = StructType(
    [
        StructField(S.URL, StringType(), True),
        StructField(S.TITLE, StringType(), True),
        StructField(S.TEXT, StringType(), True),
        StructField(S.FEED_LINKS, ArrayType(StringType()), True),
        StructField(S.FETCHED_AT, StringType(), True),
        StructField(CORRUPT_RECORD, StringType(), True),
    ]
)


# --- page signals ---------------------------------------------------------------------------------

def read_page_signals(spark: SparkSession, path: str) -> DataFrame:
    """Raw page-signal JSON lines (``RAW_PAGE_SIGNAL``); an unreadable line keeps its text in
    ``_corrupt_record``."""
    from linkgraph.paths import local_path

    local = local_path(path)
    if local is not None and not Path(local).exists():
        raise InputSchemaError(f"page signals not found: {path}")
    return (
        spark.read.schema(RAW_PAGE_SIGNAL)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
        .json(path)
    )


def _problem(condition: Column, reason: Column | str, detail: Column | str) -> Column:
    reason_col = F.lit(reason) if isinstance(reason, str) else reason
    detail_col = F.lit(detail) if isinstance(detail, str) else detail
    return F.when(condition, F.struct(reason_col.alias(S.REASON), F.concat(F.lit("page signal: "), detail_col).alias(S.DETAIL)))


def _signal_reject_rows(rows: DataFrame, bad_feed: Column | None, source: str) -> DataFrame:
    """Rejected page signals in the ``rejects`` shape: the page URL in ``from_url``, a rejected
    feed link in ``to_url``, the raw ``fetched_at`` in ``last_seen_at``."""
    shaped = rows.select(
        F.col(S.URL).alias(S.FROM_URL),
        (bad_feed if bad_feed is not None else F.lit(None).cast("string")).alias(S.TO_URL),
        *[F.lit(None).cast("string").alias(c) for c in (S.ANCHOR_TEXT, S.CONTEXT_WINDOW, S.LINK_TYPE, S.REL, S.POSITION,
                                                        S.DISCOVERED_AT)],
        F.col(S.FETCHED_AT).alias(S.LAST_SEEN_AT),
        S.REASON, S.DETAIL,
    )
    return I.reject_rows(shaped, source)


def check_page_signals(raw: DataFrame) -> DataFrame:
    """Raw page signals plus the canonical page URL (``_page`` struct), the parsed ``_fetched``
    time and ``reason``/``detail`` of a record that cannot be used (null otherwise)."""
    checked = (
        raw.withColumn("_page", I.canonical_url(F.col(S.URL)))
        .withColumn("_fetched", F.try_to_timestamp(F.trim(F.col(S.FETCHED_AT))))
    )
    problem = F.coalesce(
        _problem(F.col(CORRUPT_RECORD).isNotNull(), S.Reason.MALFORMED_RECORD, F.substring(CORRUPT_RECORD, 1, 2000)),
        _problem(F.col("_page.reason").isNotNull(), F.col("_page.reason"), F.coalesce(F.col("_page.detail"), F.lit(""))),
        _problem(F.col(S.FETCHED_AT).isNotNull() & F.col("_fetched").isNull(), S.Reason.MALFORMED_TIMESTAMP,
                 F.concat(F.lit("fetched_at is not a timestamp: "), F.substring(S.FETCHED_AT, 1, 100))),
    )
    return checked.withColumn("_problem", problem).select(
        "*", F.col("_problem.reason").alias(S.REASON), F.col("_problem.detail").alias(S.DETAIL)
    ).drop("_problem")


def split_page_signals(checked: DataFrame, source: str) -> tuple[DataFrame, DataFrame]:
    """``(signals, rejects)`` of ``check_page_signals`` output.

    ``signals`` is in the ``PAGE_SIGNALS`` schema, one row per canonical URL, with the canonical,
    distinct, sorted feed links.  Rejected (reasons as for edges): an unreadable line
    (MALFORMED_RECORD), a page URL that does not canonicalise (NULL_FIELD, MALFORMED_URL, …), an
    unparsable ``fetched_at`` (MALFORMED_TIMESTAMP), a second row for the same URL (the latest
    ``fetched_at`` is kept; DUPLICATE_MERGED), and single feed links that do not canonicalise (the
    page is kept without them).  ``checked`` is read twice: persist it for large inputs.
    """
    bad_pages = checked.where(F.col(S.REASON).isNotNull())

    latest = Window.partitionBy("_page.url").orderBy(
        F.col("_fetched").desc_nulls_last(), F.col(S.TITLE).asc_nulls_last(), F.col(S.TEXT).asc_nulls_last(),
        F.col(S.URL),
    )
    ranked = checked.where(F.col(S.REASON).isNull()).withColumn("_order", F.row_number().over(latest))
    duplicates = ranked.where(F.col("_order") > 1).withColumn(S.REASON, F.lit(S.Reason.DUPLICATE_MERGED)).withColumn(
        S.DETAIL, F.concat(F.lit("page signal: merged into the latest signal of "), F.col("_page.url"))
    )
    kept = ranked.where(F.col("_order") == 1)

    feeds = kept.select(
        F.col("_page.url").alias("_canonical"), S.URL, S.FETCHED_AT, F.explode(S.FEED_LINKS).alias("_raw_feed")
    ).withColumn("_feed", I.canonical_url(F.col("_raw_feed")))
    bad_feeds = feeds.where(F.col("_feed.reason").isNotNull()).select(
        S.URL, S.FETCHED_AT, "_raw_feed", F.col("_feed.reason").alias(S.REASON),
        F.concat(F.lit("page signal: feed link: "), F.coalesce(F.col("_feed.detail"), F.lit(""))).alias(S.DETAIL),
    )
    good_feeds = (
        feeds.where(F.col("_feed.reason").isNull())
        .groupBy("_canonical")
        .agg(F.array_sort(F.collect_set("_feed.url")).alias("_feeds"))
    )
    signals = kept.join(good_feeds, kept["_page.url"] == good_feeds["_canonical"], how="left").select(
        F.col("_page.url").alias(S.URL),
        F.col(S.TITLE),
        F.col(S.TEXT),
        F.coalesce(F.col("_feeds"), F.array().cast(ArrayType(StringType()))).alias(S.FEED_LINKS),
        F.col("_fetched").alias(S.FETCHED_AT),
    )
    rejects = (
        _signal_reject_rows(bad_pages, None, source)
        .unionByName(_signal_reject_rows(duplicates, None, source))
        .unionByName(_signal_reject_rows(bad_feeds, F.col("_raw_feed"), source))
    )
    return signals, rejects


def write_page_signals(lake: Lake, signals: DataFrame) -> tuple[int, int]:
    """MERGE signals into ``page_signals`` by url: a row replaces the stored one unless it is
    older (both ``fetched_at`` known and the new one earlier); an unchanged row is not touched,
    so writing the same signals twice changes nothing.  Returns (inserted, updated)."""
    lake.ensure(S.PAGE_SIGNALS_TABLE, S.PAGE_SIGNALS)
    values = (S.TITLE, S.TEXT, S.FEED_LINKS, S.FETCHED_AT)
    changed = " OR ".join(f"NOT (t.{c} <=> s.{c})" for c in values)
    not_older = "(s.fetched_at IS NULL OR t.fetched_at IS NULL OR s.fetched_at >= t.fetched_at)"
    metrics = lake.merge(S.PAGE_SIGNALS_TABLE, signals, keys=[S.URL], update_set={c: f"s.{c}" for c in values},
                         update_condition=f"({changed}) AND {not_older}")
    return metrics.inserted, metrics.updated


@dataclass
class SignalsReport:
    source: str
    read: int = 0
    rejected: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    inserted: int = 0
    updated: int = 0

    def summary(self) -> str:
        reasons = reasons_text(self.rejected_by_reason)
        return (f"page signals {self.source}: read={self.read} rejected={self.rejected} "
                f"(+{self.inserted} new, {self.updated} updated; rejects by reason: {reasons})")


def ingest_page_signals(spark: SparkSession, lake: Lake, path: str, source: str | None = None) -> SignalsReport:
    """Read, validate and MERGE a page-signals JSON lines file; bad records go to ``rejects``."""
    report = SignalsReport(source=source or str(path))
    raw = read_page_signals(spark, path).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.read = raw.count()
        checked = check_page_signals(raw).persist(StorageLevel.MEMORY_AND_DISK)
        signals, rejects = split_page_signals(checked, report.source)
        rejects = rejects.persist(StorageLevel.MEMORY_AND_DISK)
        report.rejected_by_reason = {r[S.REASON]: r["count"] for r in rejects.groupBy(S.REASON).count().collect()}
        report.rejected = sum(report.rejected_by_reason.values())
        report.inserted, report.updated = write_page_signals(lake, signals)
        lake.ensure(S.REJECTS_TABLE, S.REJECTS)
        lake.merge(S.REJECTS_TABLE, rejects, keys=[S.REJECT_ID], update_set={})
        rejects.unpersist()
        checked.unpersist()
    finally:
        raw.unpersist()
    log.info(report.summary())
    return report


# --- the built-in sample -----------------------------------------------------------------------------

def sample_signal_rows(seed: int = 7) -> list[dict]:
    """The sample crawl's page signals as input rows; ``fetched_at`` is the page's latest fetch
    (the latest ``last_seen_at`` of its links; null for a page without links, e.g. a PDF)."""
    from linkgraph.sample import generate_sample_crawl

    crawl = generate_sample_crawl(seed)
    fetched: dict[str, str] = {}
    for edge in crawl.edges:
        if edge["last_seen_at"] and edge["last_seen_at"] > fetched.get(edge["from_url"], ""):
            fetched[edge["from_url"]] = edge["last_seen_at"]
    return [{**page, S.FETCHED_AT: fetched.get(page["url"])} for page in crawl.pages]


def write_sample_signals(directory: str | Path, seed: int = 7) -> Path:
    """Write the sample's page signals as JSON lines (the documented input format)."""
    from linkgraph.sample import write_pages_jsonl

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sample-page-signals.jsonl"
    write_pages_jsonl(sample_signal_rows(seed), path)
    return path


def sample_seed_urls() -> list[str]:
    """Seeds of the sample's job crawl: the home pages of the sample sites that publish a job feed."""
    from linkgraph.sample import SITES

    return [f"{site.scheme}://{site.host}/" for site in SITES if site.feeds]


# --- linkgraph reward ------------------------------------------------------------------------------

@dataclass
class RewardReport:
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
    history: list[R.RoundStat] = field(default_factory=list)
    signals: SignalsReport | None = None
    seconds: float = 0.0

    def summary(self) -> str:
        rewards = "" if self.rewards_enabled else " (rewards off)"
        return (
            f"reward run {self.run_id}: pages={self.pages} new={self.new_pages} seeds={self.seeds} "
            f"with_signals={self.pages_with_signals} rounds={self.rounds}{rewards} total_score={self.total_score:.6g} "
            f"feeds_discovered={self.feeds_discovered} pruned_pages={self.pruned_pages} "
            f"pruned_links={self.pruned_links} in {self.seconds:.1f}s"
        )


def canonical_seeds(seed_urls: list[str]) -> list[str]:
    """Canonical forms of seed URLs (as ingest writes them); a bad one is a config error."""
    canonical = []
    for raw in seed_urls:
        result = urls.canonicalize(raw)
        if result.url is None:
            raise ConfigError(f"reward seed {raw!r} is not a usable URL: {result.reason} ({result.detail})")
        canonical.append(result.url)
    return canonical


def _log_round(stat: R.RoundStat) -> None:
    log.info(
        "reward round %d: total %.6g -> %.6g (sent %.6g, received %.6g, forgotten %.6g, rewarded %.6g) "
        "largest_change=%.3g %.2fs",
        stat.round, stat.total_score_before, stat.total_score, stat.total_sent, stat.total_received,
        stat.total_forgotten, stat.total_rewarded, stat.largest_change, stat.seconds,
    )


def reward_step(
    spark: SparkSession,
    config: Config,
    rounds: int | None = None,
    seeds: list[str] | None = None,
    signals_path: str | None = None,
    signals_source: str | None = None,
) -> RewardReport:
    """``linkgraph reward``: start scores, K rounds, prune; Delta writes in the module's order.

    ``rounds`` overrides ``reward.rounds``; ``seeds`` are added to ``reward.seeds``;
    ``signals_path`` (page-signal JSON lines) is merged into ``page_signals`` first.
    """
    rc = config.reward
    rounds = rc.rounds if rounds is None else rounds
    if rounds < 0:
        raise ConfigError("--rounds must not be negative")
    seed_urls = canonical_seeds(list(rc.seeds) + list(seeds or []))
    started_at = datetime.now(timezone.utc).replace(tzinfo=None)
    started = time.monotonic()
    run_id = new_run_id(started_at)
    report = RewardReport(run_id=run_id, rounds=rounds, rewards_enabled=rc.rewards)
    lake = Lake(spark, config.lake)
    lake.require(S.PAGES_TABLE, S.LINKS_TABLE)
    if signals_path is not None:
        report.signals = ingest_page_signals(spark, lake, signals_path, signals_source)

    cached: list[DataFrame] = []

    def keep(df: DataFrame) -> DataFrame:
        cached.append(df.persist(StorageLevel.MEMORY_AND_DISK))
        return cached[-1]

    try:
        pages_version, links_version = lake.version(S.PAGES_TABLE), lake.version(S.LINKS_TABLE)
        pages = keep(lake.read_version(S.PAGES_TABLE, pages_version).select(S.PAGE_ID, S.URL))
        links = lake.read_version(S.LINKS_TABLE, links_version)
        weighted = keep(R.link_weights(links, rc.link_type_weights, rc.position_weights))
        shares = R.neighbour_shares(weighted)
        seed_ids = keep(
            pages.join(spark.createDataFrame([(u,) for u in seed_urls], f"{S.URL} string"), on=S.URL, how="inner")
            .select(S.PAGE_ID)
        )
        report.seeds = seed_ids.count()
        if report.seeds < len(set(seed_urls)):
            log.warning("%d of %d reward seeds are not pages of the lake", len(set(seed_urls)) - report.seeds, len(set(seed_urls)))

        previous = lake.read_or_empty(S.REWARD_SCORES_TABLE, S.REWARD_SCORES)
        start = R.initial_scores(pages, previous, weighted, seed_ids, rc.new_page_fraction, rc.seed_score)
        start = start.localCheckpoint(eager=True)
        round0 = start.agg(
            F.count("*").alias("pages"),
            F.sum(F.col(R.IS_NEW).cast("long")).alias("new_pages"),
            F.sum(F.when(~F.col(R.IS_NEW), F.col(S.SCORE))).alias("before"),
            F.sum(F.when(F.col(R.IS_NEW), F.col(S.SCORE))).alias("initialised"),
            F.max(F.when(F.col(R.IS_NEW), F.col(S.SCORE))).alias("largest"),
        ).first()
        report.pages, report.new_pages = int(round0["pages"]), int(round0["new_pages"] or 0)
        before, initialised = float(round0["before"] or 0.0), float(round0["initialised"] or 0.0)
        stat0 = R.RoundStat(0, before, 0.0, 0.0, 0.0, 0.0, before + initialised, float(round0["largest"] or 0.0),
                            time.monotonic() - started)

        signals = lake.read_or_empty(S.PAGE_SIGNALS_TABLE, S.PAGE_SIGNALS).join(pages, on=S.URL, how="inner")
        rewards = discovered = None
        if rc.rewards:
            known_feeds = lake.read_or_empty(S.FEEDS_TABLE, S.FEEDS)
            rewards, discovered = R.page_rewards(
                signals, known_feeds, rc.term_rules, rc.max_hits_per_term, rc.new_feed_points, rc.known_feed_points,
                rc.feed_url_pattern,
            )
            rewards, discovered = keep(rewards), keep(discovered)
            report.pages_with_signals = rewards.count()
            report.feeds_discovered = discovered.count()
        vertices = R.round_vertices(pages, shares, rewards)
        final, history = R.run_rounds(
            start.select(S.PAGE_ID, S.SCORE), vertices, shares,
            R.SpreadParams(rc.send_fraction, rc.forget_rate), rounds, progress=_log_round,
        )
        report.history = [stat0, *history]
        final = keep(final)

        doomed = keep(R.prune_candidates(final, seed_ids, rc.delete_threshold) if rc.prune
                      else final.limit(0).select(S.PAGE_ID, S.SCORE))
        report.pruned_pages = doomed.count()

        kept_scores = final.join(doomed.select(S.PAGE_ID), on=S.PAGE_ID, how="left_anti")
        lake.overwrite(S.REWARD_SCORES_TABLE, kept_scores.join(pages, on=S.PAGE_ID, how="left").select(
            S.PAGE_ID, S.URL, S.SCORE, F.lit(run_id).alias(S.RUN_ID)))
        report.total_score = float(kept_scores.agg(F.sum(S.SCORE)).first()[0] or 0.0)

        if discovered is not None:
            _record_feeds(lake, signals, discovered, rc.feed_url_pattern, run_id, started_at)
        if report.pruned_pages:
            report.pruned_links = _prune(lake, doomed, pages, links, pages_version, links_version, run_id, started_at)
        _record_rounds(lake, report, config, started_at, links_version)
    finally:
        for df in cached:
            df.unpersist()
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


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
    if not lake.exists(S.FEEDS_TABLE):  # the first run creates the table with its rows: one commit
        lake.overwrite(S.FEEDS_TABLE, rows.select(*[F.col(f.name).cast(f.dataType) for f in S.FEEDS.fields]))
        return
    lake.merge(S.FEEDS_TABLE, rows, keys=[S.FEED_URL], update_set={S.LAST_SEEN_AT: f"s.{S.LAST_SEEN_AT}"})


def _prune(lake: Lake, doomed: DataFrame, pages: DataFrame, links: DataFrame, pages_version: int,
           links_version: int, run_id: str, pruned_at: datetime) -> int:
    """Audit record, then links, then pages (module docstring); returns the links deleted."""
    touching = R.links_touching(links, doomed).localCheckpoint(eager=True)
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
    lake.append(S.PRUNED_PAGES_TABLE, audit)  # run ids are unique: an append adds each row once
    deleted_links = lake.delete_matching(S.LINKS_TABLE, touching, [S.SRC_ID, S.DST_ID]).deleted
    lake.delete_matching(S.PAGES_TABLE, doomed, [S.PAGE_ID])
    return deleted_links


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
    lake.append(S.REWARD_RUNS_TABLE, lake.spark.createDataFrame(rows, S.REWARD_RUNS))


# --- undo a prune ----------------------------------------------------------------------------------

@dataclass
class UndoReport:
    run_id: str
    pages_restored: int = 0
    pages_skipped: int = 0
    links_restored: int = 0

    def summary(self) -> str:
        skipped = f" ({self.pages_skipped} skipped: their url or id is in use again)" if self.pages_skipped else ""
        return (f"undo prune {self.run_id}: pages restored={self.pages_restored}{skipped} "
                f"links restored={self.links_restored}")


def undo_prune(spark: SparkSession, config: Config, run_id: str) -> UndoReport:
    """Re-insert what the prune of reward run ``run_id`` deleted, from the Delta versions of
    ``pages`` and ``links`` recorded in ``pruned_pages`` (time travel): pages whose url and id are
    both still free, then the links of those versions between pages that are again (or still)
    the same pages, then the pruned scores into ``reward_scores``.  Running it twice changes
    nothing the second time (insert-only MERGEs)."""
    lake = Lake(spark, config.lake)
    report = UndoReport(run_id)
    if not lake.exists(S.PRUNED_PAGES_TABLE):
        raise PruneNotFound(f"no prune has been recorded in lake {lake.root} (table '{S.PRUNED_PAGES_TABLE}' missing)")
    pruned = lake.read(S.PRUNED_PAGES_TABLE).where(F.col(S.RUN_ID) == run_id).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        versions = pruned.select("pages_version", "links_version").first()
        if versions is None:
            raise PruneNotFound(f"reward run {run_id!r} pruned nothing (no rows in '{S.PRUNED_PAGES_TABLE}')")
        old_pages = lake.read_version(S.PAGES_TABLE, versions["pages_version"])
        current = lake.read(S.PAGES_TABLE).select(S.PAGE_ID, S.URL)
        candidates = old_pages.join(pruned.select(S.PAGE_ID), on=S.PAGE_ID, how="left_semi")
        free = (candidates.join(current.select(S.PAGE_ID), on=S.PAGE_ID, how="left_anti")
                .join(current.select(S.URL), on=S.URL, how="left_anti")
                .select(*[f.name for f in S.PAGES.fields])).localCheckpoint(eager=True)
        lake.merge(S.PAGES_TABLE, free, keys=[S.PAGE_ID], update_set={})
        report.pages_restored = free.count()
        report.pages_skipped = pruned.count() - report.pages_restored

        # ids that name the same URL now as in the recorded version: a link between two of them,
        # one end restored, is the link that was deleted
        same = lake.read(S.PAGES_TABLE).select(S.PAGE_ID, S.URL).join(
            old_pages.select(S.PAGE_ID, S.URL), on=[S.PAGE_ID, S.URL], how="inner").select(S.PAGE_ID)
        old_links = lake.read_version(S.LINKS_TABLE, versions["links_version"])
        restored_links = (
            R.links_touching(old_links, free)
            .join(same.select(F.col(S.PAGE_ID).alias(S.SRC_ID)), on=S.SRC_ID, how="left_semi")
            .join(same.select(F.col(S.PAGE_ID).alias(S.DST_ID)), on=S.DST_ID, how="left_semi")
            .join(old_links, on=[S.SRC_ID, S.DST_ID], how="inner")
            .select(*[f.name for f in S.LINKS.fields])
        )
        report.links_restored = lake.merge(S.LINKS_TABLE, restored_links, keys=[S.SRC_ID, S.DST_ID], update_set={}).inserted
        scores = pruned.join(free.select(S.PAGE_ID), on=S.PAGE_ID, how="left_semi").select(
            S.PAGE_ID, S.URL, S.SCORE, S.RUN_ID)
        lake.ensure(S.REWARD_SCORES_TABLE, S.REWARD_SCORES)
        lake.merge(S.REWARD_SCORES_TABLE, scores, keys=[S.PAGE_ID], update_set={})
    finally:
        pruned.unpersist()
    log.info(report.summary())
    return report


# --- linkgraph run -----------------------------------------------------------------------------------

def reward_in_run(spark: SparkSession, config: Config, on_sample: bool) -> RewardReport | None:
    """The reward step of ``linkgraph run``, when ``reward.in_run`` asks for it (by default: on
    the built-in sample only, with its page signals and job-feed home pages as seeds)."""
    mode = config.reward.in_run
    if mode == "never" or (mode == "sample" and not on_sample):
        return None
    if not on_sample:
        return reward_step(spark, config)
    signals = write_sample_signals(tempfile.mkdtemp(prefix="linkgraph-sample-signals-"))
    return reward_step(spark, config, seeds=sample_seed_urls(), signals_path=str(signals), signals_source=SAMPLE_SOURCE)
