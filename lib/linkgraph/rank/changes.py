"""What changed between two rank runs: one row per node of either run, and the figures that say
whether a move is a change or noise.

Each run is a ``(node, page_id, score)`` frame (``page_id`` null above the page level).  A node's
position is its place in its run, 1 for the highest score, ties broken by the node's name, so
positions are dense and unique.  :func:`rank_changes` classifies every node by ``CHANGES``;
:func:`correlations` gives Spearman's rho and Kendall's tau-b of the two score vectors over the
nodes both runs hold, as ``scipy.stats.spearmanr`` and ``scipy.stats.kendalltau`` define them
(ties get their average rank).

Scale: positions are numbered by a range-partitioned sort (:func:`linkgraph.lake.ids.number_in_order`),
Spearman's rho is a Spark ``corr`` of the average ranks (exact, distributed), and Kendall's tau,
an all-pairs statistic, is computed on the driver from at most ``kendall_nodes`` common nodes: all
of them when there are no more, else a sample chosen by a hash of the node's name (the same nodes
for the same two runs), whose size is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from scipy import stats

from linkgraph.lake import schemas as S
from linkgraph.lake.ids import number_in_order

# The values of ``rank_changes.change``, in the order they are decided: a node only one run holds
# is new or vanished; a node both hold entered or left the top K, else moved or kept its position.
NEW, VANISHED, ENTERED, LEFT, MOVED, UNCHANGED = "new", "vanished", "entered", "left", "moved", "unchanged"
CHANGES = (NEW, VANISHED, ENTERED, LEFT, MOVED, UNCHANGED)

_HASH_RANGE = float(2 ** 31)


def positioned(scores: DataFrame, score: str, position: str) -> DataFrame:
    """``scores`` (``node``, ``page_id``, ``score``) with ``score`` renamed and a dense ``position``:
    1 for the highest score, ties in ``node`` order."""
    renamed = scores.select(S.NODE, S.PAGE_ID, F.col(S.SCORE).alias(score))
    return number_in_order(renamed, [-F.col(score), S.NODE], 1, position)


def _change(top_k: int) -> Column:
    before, after = F.col(S.FROM_POSITION), F.col(S.TO_POSITION)
    return (F.when(before.isNull(), F.lit(NEW))
            .when(after.isNull(), F.lit(VANISHED))
            .when((before > top_k) & (after <= top_k), F.lit(ENTERED))
            .when((before <= top_k) & (after > top_k), F.lit(LEFT))
            .when(before != after, F.lit(MOVED))
            .otherwise(F.lit(UNCHANGED)))


def rank_changes(before: DataFrame, after: DataFrame, top_k: int) -> DataFrame:
    """One row per node of either run: both scores and positions (null where a run lacks the
    node), ``position_change`` (positive: the node moved up) and ``change`` (``CHANGES``;
    ``entered``/``left`` are about the first ``top_k`` positions)."""
    a = positioned(before, S.FROM_SCORE, S.FROM_POSITION)
    b = positioned(after, S.TO_SCORE, S.TO_POSITION).withColumnRenamed(S.PAGE_ID, "_to_page_id")
    joined = a.join(b, on=S.NODE, how="full_outer")
    return joined.select(
        S.NODE, F.coalesce(F.col(S.PAGE_ID), F.col("_to_page_id")).alias(S.PAGE_ID),
        S.FROM_SCORE, S.TO_SCORE, S.FROM_POSITION, S.TO_POSITION,
        (F.col(S.FROM_POSITION) - F.col(S.TO_POSITION)).alias(S.POSITION_CHANGE),
        _change(top_k).alias(S.CHANGE),
    )


@dataclass(frozen=True)
class ChangeCounts:
    """The nodes of each ``change``, and how many of the first ``top_k`` positions both runs share."""

    by_change: dict[str, int]
    top_k: int
    top_k_shared: int

    @property
    def top_k_overlap(self) -> float:
        """The share of the top K (of the smaller run's top, when a run has fewer than K nodes)
        that both runs hold: 1.0 means the same set, in any order."""
        size = min(self.top_k, self.nodes_before, self.nodes_after)
        return self.top_k_shared / size if size else 1.0

    @property
    def nodes_before(self) -> int:
        return sum(n for change, n in self.by_change.items() if change != NEW)

    @property
    def nodes_after(self) -> int:
        return sum(n for change, n in self.by_change.items() if change != VANISHED)


def change_counts(changes: DataFrame, top_k: int) -> ChangeCounts:
    """The counts of :func:`rank_changes`' rows in one aggregate (one row to the driver)."""
    in_both_tops = (F.col(S.FROM_POSITION) <= top_k) & (F.col(S.TO_POSITION) <= top_k)
    row = changes.agg(
        *[F.sum((F.col(S.CHANGE) == change).cast("long")).alias(change) for change in CHANGES],
        F.sum(in_both_tops.cast("long")).alias("_shared"),
    ).first()
    values = row.asDict() if row is not None else {}
    return ChangeCounts({change: int(values.get(change) or 0) for change in CHANGES}, top_k,
                        int(values.get("_shared") or 0))


def average_ranks(scores: DataFrame, score: str, rank: str) -> DataFrame:
    """``(node, <rank>)``: the rank of each node's ``score`` in descending order, tied scores given
    the mean of the positions they span (scipy's ``rankdata(method="average")``).  A tie group is
    one key of the join with its first position: AQE splits a skewed one (many pages sharing the
    teleport-only rank)."""
    numbered = number_in_order(scores.select(S.NODE, score), [-F.col(score), S.NODE], 1, "_position")
    ties = numbered.groupBy(score).agg(F.min("_position").alias("_first"), F.count(F.lit(1)).alias("_tied"))
    return numbered.join(ties, on=score).select(
        S.NODE, (F.col("_first") + (F.col("_tied") - 1) / 2.0).alias(rank))


@dataclass(frozen=True)
class Correlations:
    """Spearman's rho and Kendall's tau-b over the nodes both runs hold (None: fewer than two, or a
    constant vector); ``kendall_nodes``: the nodes Kendall's tau was computed on."""

    common: int
    spearman: float | None
    kendall: float | None
    kendall_nodes: int


def correlations(changes: DataFrame, kendall_nodes: int) -> Correlations:
    """The correlations of the two runs' scores over the nodes of ``changes`` both runs hold."""
    common = changes.where(F.col(S.FROM_SCORE).isNotNull() & F.col(S.TO_SCORE).isNotNull()) \
        .select(S.NODE, S.FROM_SCORE, S.TO_SCORE)
    count = common.count()
    if count < 2:
        return Correlations(count, None, None, 0)
    ranked = average_ranks(common, S.FROM_SCORE, "_rank_from").join(
        average_ranks(common, S.TO_SCORE, "_rank_to"), on=S.NODE)
    row = ranked.agg(F.corr("_rank_from", "_rank_to").alias("rho")).first()
    rho = None if row is None or row["rho"] is None or np.isnan(row["rho"]) else float(row["rho"])
    sample = common if count <= kendall_nodes else common.where(
        (F.xxhash64(S.NODE).bitwiseAND(0x7FFFFFFF) / _HASH_RANGE) < kendall_nodes / count)
    pairs = sample.select(S.FROM_SCORE, S.TO_SCORE).collect()
    tau = None
    if len(pairs) >= 2:
        values = np.array([(p[0], p[1]) for p in pairs], dtype=np.float64)
        result = stats.kendalltau(values[:, 0], values[:, 1])
        tau = None if np.isnan(result.statistic) else float(result.statistic)
    return Correlations(count, rho, tau, len(pairs))
