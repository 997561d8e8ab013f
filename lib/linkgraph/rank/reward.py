"""Reward-distribution ranking for focused crawls: pure transforms plus the round loop.

Scores are non-negative reals ("points").  One round, for every page ``i`` with score ``s_i``:

    sent_i      = α · s_i                          if i has a neighbour with positive link weight, else 0
    received_i  = Σ_j α · s_j · w_ij / W_j          over i's neighbours j
    kept_i      = s_i − sent_i + received_i
    s'_i        = (1 − β) · kept_i + r_i            (β · kept_i is "forgotten", r_i the round's reward)

with send fraction ``α``, forgetting rate ``β``, ``w_ij`` the summed weight of the links between
``i`` and ``j`` *in both directions* (i→j and j→i each count; a self-link is not a neighbour) and
``W_j = Σ_k w_jk``.  Spreading only moves mass (Σ received = Σ sent), so per round

    total' = (1 − β) · total + Σ r,

which is never more than ``total`` when rewards are off, and never more than
``max(total, Σ r / β)`` when the rewards are the same every round: the system cannot excite itself.

Rewards (``page_rewards``): term points of a page's title and text plus feed points.  A feed
linked by pages of the run's signals that is not in the ``feeds`` table yet is discovered in
round 1: the page that saw it first (earliest ``fetched_at``, then smallest URL) earns the
new-feed points for it in round 1; every other (page, feed) link earns the known-feed points in
every round, as does the discovering page from round 2 on.  So each page has two reward values,
``reward_first`` (round 1) and ``reward_later`` (rounds 2…K).

Everything here is ``DataFrame -> DataFrame`` except ``run_rounds``, which iterates over per-block
score vectors (``linkgraph.rank.spread``, a sparse product, not a per-link join): each round is
checkpointed reliably (cutting the lineage) and one aggregate row of totals reaches the driver.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType

from linkgraph.lake import schemas as S
from linkgraph.lake.config_analysis import TermRule
from linkgraph.lake.rows import one_row
from linkgraph.rank.spread import BLOCK, BLOCK_SIZE, ROUND, BlockRounds
from linkgraph.rank.spread import TOTALS as BLOCK_TOTALS

WEIGHT = "weight"
NEIGHBOUR_ID = "neighbour_id"
SHARE = "share"
TERM_POINTS = "term_points"
FEED_FIRST, FEED_LATER = "feed_first", "feed_later"
REWARD_FIRST, REWARD_LATER = "reward_first", "reward_later"
SENDS = "sends"
IS_NEW = "is_new"

# Totals are summed as decimals of this type: exact, so the same bits whatever order the rows
# arrive in (a retried task or a lost executor changes that order); 18 digits after the point
# (each value rounded to 1e-18 points first: 1e9 pages move a total by at most 5e-10), 20 before
# (totals up to 1e20 points; a larger one stops the job with Spark's decimal overflow error).
EXACT_TOTAL = DecimalType(38, 18)


def exact_total(column: str | Column) -> Column:
    """The sum of a double column over a group or a table, the same bits in any row order: each
    value rounded to 1e-18, summed exactly as a decimal, the total returned as a double."""
    value = F.col(column) if isinstance(column, str) else column
    return F.sum(value.cast(EXACT_TOTAL)).cast("double")


def sum_in_order(df: DataFrame, key: str, order: str, value: Column, alias: str) -> DataFrame:
    """(key, alias): ``value`` summed per ``key`` in ``order``'s order, the same bits whatever
    order the shuffle delivers the rows in. The rows of a key meet in one partition sorted by
    (key, order), and the aggregate that follows adds them in that order (no exchange between
    its partial and final step); ``order`` must be unique within a key. Memory per task stays
    bounded: the sort spills."""
    return (
        df.repartition(key).sortWithinPartitions(key, order)
        .groupBy(key).agg(F.sum(value).alias(alias))
    )


# A term matches where no letter, digit or underscore touches it on either side (Java regex,
# Unicode-aware case folding), so "hr" does not match inside "hrms" and "job" not inside "jobs".
_WORD_BEFORE, _WORD_AFTER = r"(?<![\p{L}\p{N}_])", r"(?![\p{L}\p{N}_])"


@dataclass(frozen=True)
class SpreadParams:
    """``send_fraction`` α and ``forget_rate`` β of a round, both in [0, 1]."""

    send_fraction: float = 0.1
    forget_rate: float = 0.1


@dataclass(frozen=True)
class RoundStat:
    """Mass bookkeeping of one round (points): ``total_score = total_score_before −
    total_forgotten + total_rewarded`` and ``total_received = total_sent`` up to rounding."""

    round: int
    total_score_before: float
    total_sent: float
    total_received: float
    total_forgotten: float
    total_rewarded: float
    total_score: float
    largest_change: float
    seconds: float


# --- graph ---------------------------------------------------------------------------------------

def _lookup(column: str, weights: dict[str, float]) -> Column:
    """``weights[column]`` as a double column, 1.0 for values not listed (and for null)."""
    expression = F.lit(1.0)
    for key, value in sorted(weights.items()):
        expression = F.when(F.col(column) == key, F.lit(float(value))).otherwise(expression)
    return expression


def link_weights(links: DataFrame, type_weights: dict[str, float], position_weights: dict[str, float]) -> DataFrame:
    """(src_id, dst_id, weight): a link weighs ``type_weights[link_type] *
    position_weights[position]``, each 1 when its type or position is not listed."""
    weight = _lookup(S.LINK_TYPE, type_weights) * _lookup(S.POSITION, position_weights)
    return links.select(S.SRC_ID, S.DST_ID, weight.cast("double").alias(WEIGHT))


def neighbour_shares(weighted_links: DataFrame) -> DataFrame:
    """(page_id, neighbour_id, share): each page's neighbours in both link directions with the
    fraction of what the page sends that each receives (shares of a page sum to 1).

    The weight between two pages is the sum of the weights of the links between them in either
    direction; pairs of total weight 0 and self-links are not neighbours.
    """
    positive = weighted_links.where((F.col(WEIGHT) > 0) & (F.col(S.SRC_ID) != F.col(S.DST_ID)))
    both = positive.select(F.col(S.SRC_ID).alias(S.PAGE_ID), F.col(S.DST_ID).alias(NEIGHBOUR_ID), WEIGHT).unionByName(
        positive.select(F.col(S.DST_ID).alias(S.PAGE_ID), F.col(S.SRC_ID).alias(NEIGHBOUR_ID), WEIGHT)
    )
    # links are unique per (src, dst): at most two weights per pair, whose sum has no order
    pairs = both.groupBy(S.PAGE_ID, NEIGHBOUR_ID).agg(F.sum(WEIGHT).alias(WEIGHT))
    totals = sum_in_order(pairs, S.PAGE_ID, NEIGHBOUR_ID, F.col(WEIGHT), "_total")
    return pairs.join(totals, on=S.PAGE_ID, how="inner").select(
        S.PAGE_ID, NEIGHBOUR_ID, (F.col(WEIGHT) / F.col("_total")).alias(SHARE)
    )


# --- rewards -------------------------------------------------------------------------------------

def term_pattern(term: str) -> str:
    """Java regex matching ``term`` as a whole word (or words), case-insensitively."""
    words = term.split()
    escaped = [''.join(c if c.isalnum() else "\\" + c for c in word) for word in words]
    return "(?iu)" + _WORD_BEFORE + r"\s+".join(escaped) + _WORD_AFTER


def term_points(signals: DataFrame, rules: list[TermRule], max_hits_per_term: int) -> DataFrame:
    """``signals`` plus ``term_points``: Σ over every term of every rule of
    ``points × min(hits, max_hits_per_term)``, where ``hits`` counts the term's non-overlapping
    whole-word, case-insensitive occurrences in the title and the text together.  A term listed
    in several rules scores under each."""
    page_text = F.concat_ws("\n", F.col(S.TITLE), F.col(S.TEXT))
    points = F.lit(0.0)
    for rule in rules:
        for term in rule.terms:
            hits = F.size(F.regexp_extract_all(page_text, F.lit(term_pattern(term)), F.lit(0)))
            points = points + F.least(hits, F.lit(max_hits_per_term)).cast("double") * F.lit(float(rule.points))
    return signals.withColumn(TERM_POINTS, points)


def page_feed_links(signals: DataFrame, feed_url_pattern: str | None = None) -> DataFrame:
    """(page_id, url, fetched_at, feed_url): one row per distinct feed a page links to, restricted
    to feed URLs in which ``feed_url_pattern`` (Java regex) is found when given."""
    feeds = signals.select(S.PAGE_ID, S.URL, S.FETCHED_AT, F.explode(F.array_distinct(S.FEED_LINKS)).alias(S.FEED_URL))
    feeds = feeds.where(F.col(S.FEED_URL).isNotNull())
    if feed_url_pattern:
        feeds = feeds.where(F.col(S.FEED_URL).rlike(feed_url_pattern))
    return feeds


def feed_rewards(
    feed_links: DataFrame, known_feeds: DataFrame, new_feed_points: float, known_feed_points: float
) -> tuple[DataFrame, DataFrame]:
    """Feed points per page and the feeds discovered now.

    Returns ``(points, discovered)``: ``points`` is (page_id, feed_first, feed_later) for every page
    linking to a feed, ``discovered`` is (feed_url, discovered_by) for each feed of ``feed_links``
    not in ``known_feeds`` (its discovering page's url).  See the module docstring for the rule.
    """
    new = feed_links.join(known_feeds.select(S.FEED_URL), on=S.FEED_URL, how="left_anti")
    first_sighting = Window.partitionBy(S.FEED_URL).orderBy(F.col(S.FETCHED_AT).asc_nulls_last(), F.col(S.URL))
    discovered = (
        new.withColumn("_order", F.row_number().over(first_sighting))
        .where(F.col("_order") == 1)
        .select(S.FEED_URL, F.col(S.URL).alias("discovered_by"), S.PAGE_ID)
    )
    credited = feed_links.join(
        discovered.select(S.FEED_URL, S.PAGE_ID, F.lit(True).alias("_discoverer")), on=[S.FEED_URL, S.PAGE_ID],
        how="left"
    )
    first = F.when(F.col("_discoverer"), F.lit(float(new_feed_points))).otherwise(F.lit(float(known_feed_points)))
    points = credited.groupBy(S.PAGE_ID).agg(
        F.sum(first).alias(FEED_FIRST), (F.count("*") * F.lit(float(known_feed_points))).alias(FEED_LATER)
    )
    return points, discovered.select(S.FEED_URL, "discovered_by")


def page_rewards(
    signals: DataFrame,
    known_feeds: DataFrame,
    rules: list[TermRule],
    max_hits_per_term: int,
    new_feed_points: float,
    known_feed_points: float,
    feed_url_pattern: str | None = None,
) -> tuple[DataFrame, DataFrame]:
    """(page_id, reward_first, reward_later) for every page with signals, and the discovered
    feeds (``feed_rewards``).  ``signals``: page_signals rows with their ``page_id``."""
    terms = term_points(signals, rules, max_hits_per_term).select(S.PAGE_ID, TERM_POINTS)
    feed_points, discovered = feed_rewards(
        page_feed_links(signals, feed_url_pattern), known_feeds, new_feed_points, known_feed_points
    )
    rewards = terms.join(feed_points, on=S.PAGE_ID, how="left").select(
        S.PAGE_ID,
        (F.col(TERM_POINTS) + F.coalesce(FEED_FIRST, F.lit(0.0))).alias(REWARD_FIRST),
        (F.col(TERM_POINTS) + F.coalesce(FEED_LATER, F.lit(0.0))).alias(REWARD_LATER),
    )
    return rewards, discovered


# --- start scores ----------------------------------------------------------------------------------

def initial_scores(
    page_ids: DataFrame,
    previous: DataFrame,
    weighted_links: DataFrame,
    seed_ids: DataFrame,
    new_page_fraction: float,
    seed_score: float,
) -> DataFrame:
    """(page_id, score, is_new) for every page of ``page_ids``.

    A page with a previous score keeps it.  A new page starts with ``new_page_fraction × s_src ×
    w(src→page) / Σ w(src→·)`` summed over the previously scored pages linking to it (its weighted
    share of each source's out-links); a new seed page gets ``seed_score`` on top.  Sources are not
    charged for it: it is an estimate of the new page's worth, recorded in round 0's
    ``total_initialised``.
    """
    known = previous.select(S.PAGE_ID, S.SCORE).join(page_ids.select(S.PAGE_ID), on=S.PAGE_ID, how="inner")
    new = page_ids.select(S.PAGE_ID).join(known.select(S.PAGE_ID), on=S.PAGE_ID, how="left_anti")
    out_total = sum_in_order(weighted_links, S.SRC_ID, S.DST_ID, F.col(WEIGHT), "_out")
    inherited = sum_in_order(
        weighted_links.where(F.col(WEIGHT) > 0)
        .join(new.select(F.col(S.PAGE_ID).alias(S.DST_ID)), on=S.DST_ID, how="inner")
        .join(known.select(F.col(S.PAGE_ID).alias(S.SRC_ID), S.SCORE), on=S.SRC_ID, how="inner")
        .join(out_total, on=S.SRC_ID, how="inner"),
        S.DST_ID, S.SRC_ID,
        F.lit(float(new_page_fraction)) * F.col(S.SCORE) * F.col(WEIGHT) / F.col("_out"), "_inherited",
    ).withColumnRenamed(S.DST_ID, S.PAGE_ID)
    seeds = seed_ids.select(S.PAGE_ID).distinct().withColumn("_seed", F.lit(float(seed_score)))
    started = (
        new.join(inherited, on=S.PAGE_ID, how="left")
        .join(seeds, on=S.PAGE_ID, how="left")
        .select(
            S.PAGE_ID,
            (F.coalesce("_inherited", F.lit(0.0)) + F.coalesce("_seed", F.lit(0.0))).alias(S.SCORE),
            F.lit(True).alias(IS_NEW),
        )
    )
    return known.select(S.PAGE_ID, F.col(S.SCORE).cast("double"), F.lit(False).alias(IS_NEW)).unionByName(started)


# --- rounds ------------------------------------------------------------------------------------------

def round_vertices(page_ids: DataFrame, shares: DataFrame, rewards: DataFrame | None) -> DataFrame:
    """(page_id, sends, reward_first, reward_later): what a round needs per page besides its score.
    ``sends``: the page has a neighbour; rewards 0 for pages without (or with ``rewards`` None)."""
    senders = shares.select(S.PAGE_ID).distinct().withColumn(SENDS, F.lit(True))
    vertices = page_ids.select(S.PAGE_ID).join(senders, on=S.PAGE_ID, how="left")
    if rewards is None:
        vertices = vertices.withColumn(REWARD_FIRST, F.lit(0.0)).withColumn(REWARD_LATER, F.lit(0.0))
    else:
        vertices = vertices.join(rewards, on=S.PAGE_ID, how="left")
    return vertices.select(
        S.PAGE_ID,
        F.coalesce(SENDS, F.lit(False)).alias(SENDS),
        F.coalesce(REWARD_FIRST, F.lit(0.0)).cast("double").alias(REWARD_FIRST),
        F.coalesce(REWARD_LATER, F.lit(0.0)).cast("double").alias(REWARD_LATER),
    )


def run_rounds(
    scores: DataFrame,
    vertices: DataFrame,
    shares: DataFrame,
    params: SpreadParams,
    rounds: int,
    progress: Callable[[RoundStat], None] | None = None,
    first_round: int = 1,
    block_size: int = BLOCK_SIZE,
) -> tuple[DataFrame, list[RoundStat]]:
    """Run ``rounds`` rounds numbered from ``first_round`` (round 1 adds ``reward_first``) from
    ``scores`` (page_id, score); returns the final (page_id, score) and the bookkeeping of each
    round.

    Rounds move per-block score vectors through a sparse product (``linkgraph.rank.spread``): the
    shares are packed once into per-block arrays, and a round shuffles the B score blocks and the
    sparse partials they send, never a row per link.  Each round's B rows are checkpointed
    (``saved``), so the plan stays one round deep and a lost executor costs no round; the driver
    reads one row of totals per round.  Pages are
    those of both ``scores`` and ``vertices`` (the step passes the same pages to both).
    """
    current = scores.select(S.PAGE_ID, F.col(S.SCORE).cast("double").alias(S.SCORE))
    if rounds <= 0:
        return current, []
    alpha, beta = float(params.send_fraction), float(params.forget_rate)
    packed = BlockRounds(current, vertices, shares, block_size=block_size)
    history: list[RoundStat] = []
    try:
        if packed.n_blocks == 1:
            return _rounds_of_one_block(packed, alpha, beta, first_round, rounds, progress)
        for round_no in range(first_round, first_round + rounds):
            started = time.monotonic()
            if packed.n == 0:
                sums = dict.fromkeys(BLOCK_TOTALS, 0.0)
            else:
                packed.state = saved(packed.round(alpha, beta, first=round_no == 1))
                totals = one_row(packed.state.agg(
                    *[(F.max(name) if name == "largest_change" else exact_total(name)).alias(name)
                      for name in BLOCK_TOTALS]))
                sums = {name: float(value or 0.0) for name, value in totals.asDict().items()}
            stat = RoundStat(round=round_no, seconds=time.monotonic() - started, **sums)
            history.append(stat)
            if progress:
                progress(stat)
        final = saved(packed.scores())
    finally:
        packed.release()
    return final, history


def _rounds_of_one_block(packed: BlockRounds, alpha: float, beta: float, first_round: int, rounds: int,
                         progress: Callable[[RoundStat], None] | None) -> tuple[DataFrame, list[RoundStat]]:
    """:func:`run_rounds` of a run of one block (up to ``BLOCK_SIZE`` pages): every round in one
    task (``BlockRounds.rounds_in_one_task``, the same scores and sums as a job per round),
    checkpointed once; the driver reads one row of sums per round (``rounds`` rows, no vector).
    A round's seconds are the run's divided evenly."""
    started = time.monotonic()
    rows = saved(packed.rounds_in_one_task(alpha, beta, first_round, rounds))
    sums = rows.drop("scores").orderBy(ROUND).collect()
    packed.state = rows.where(F.col(ROUND) == first_round + rounds - 1).select(BLOCK, "scores")
    final = saved(packed.scores())
    seconds = (time.monotonic() - started) / rounds
    history = [RoundStat(round=row[ROUND], seconds=seconds, **{name: float(row[name]) for name in BLOCK_TOTALS})
               for row in sums]
    for stat in history:
        if progress:
            progress(stat)
    return final, history


def saved(df: DataFrame) -> DataFrame:
    """``df`` computed once and checkpointed reliably to the session's checkpoint directory (the
    lake's ``_checkpoints`` unless configured; ``StepContext`` sets it), cutting its lineage: loop
    state that survives a lost executor."""
    return df.checkpoint(eager=True)


# --- pruning -----------------------------------------------------------------------------------------

def prune_candidates(scores: DataFrame, seed_ids: DataFrame, delete_threshold: float) -> DataFrame:
    """(page_id, score) of the pages scoring below ``delete_threshold`` that are not seeds."""
    return scores.where(F.col(S.SCORE) < float(delete_threshold)).join(
        seed_ids.select(S.PAGE_ID), on=S.PAGE_ID, how="left_anti"
    ).select(S.PAGE_ID, S.SCORE)


def links_touching(links: DataFrame, page_ids: DataFrame) -> DataFrame:
    """(src_id, dst_id) of every link with a page of ``page_ids`` at either end, once each."""
    ids = page_ids.select(S.PAGE_ID)
    by_src = links.join(ids.select(F.col(S.PAGE_ID).alias(S.SRC_ID)), on=S.SRC_ID, how="left_semi")
    by_dst = links.join(ids.select(F.col(S.PAGE_ID).alias(S.DST_ID)), on=S.DST_ID, how="left_semi")
    return by_src.select(S.SRC_ID, S.DST_ID).unionByName(by_dst.select(S.SRC_ID, S.DST_ID)).distinct()


def links_per_page(touching: DataFrame, page_ids: DataFrame) -> DataFrame:
    """(page_id, links_removed): how many of the ``touching`` links have each page at an end
    (a link between two such pages counts for both)."""
    ends = touching.select(F.col(S.SRC_ID).alias(S.PAGE_ID)).unionAll(touching.select(F.col(S.DST_ID).alias(S.PAGE_ID)))
    counted = ends.join(page_ids.select(S.PAGE_ID), on=S.PAGE_ID, how="inner").groupBy(S.PAGE_ID).count()
    return page_ids.select(S.PAGE_ID).join(counted, on=S.PAGE_ID, how="left").select(
        S.PAGE_ID, F.coalesce(F.col("count"), F.lit(0)).cast("long").alias("links_removed")
    )
