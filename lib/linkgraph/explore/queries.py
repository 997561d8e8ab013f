"""Queries behind the exploration notebooks: lake tables in, small DataFrames out.

Every function is a pure ``DataFrame -> DataFrame`` transform whose result is bounded by its
parameters (bins, ``n``, ``max_domains``, a run's iterations), never by the size of the graph, so
a notebook may ``toPandas()`` it to plot.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S

BIN = "bin"
BIN_LOW, BIN_HIGH = "bin_low", "bin_high"
PAGES_COUNT = "pages"
ROLE = "role"

ROLE_LINK_FARM = "link farm"
ROLE_FARM_TARGET = "farm target"
ROLE_SYNDICATION = "syndication"


def rank_histogram(pagerank: DataFrame, bins_per_decade: int = 10, vector_id: int = 0) -> DataFrame:
    """Pages per logarithmic rank bin of one vector: ``bin`` k holds ranks in
    [10^(k/b), 10^((k+1)/b)) for b = ``bins_per_decade``.  Pages with rank 0 (unreachable from a personalised teleport
    set) have no logarithm and are left out.  One row per non-empty bin, ascending."""
    if bins_per_decade <= 0:
        raise ValueError("bins_per_decade must be positive")
    return (
        pagerank.where((F.col(S.VECTOR_ID) == vector_id) & (F.col(S.RANK) > 0))
        .select(F.floor(F.log10(S.RANK) * bins_per_decade).cast("int").alias(BIN))
        .groupBy(BIN).agg(F.count(F.lit(1)).alias(PAGES_COUNT))
        .select(
            BIN,
            F.pow(F.lit(10.0), F.col(BIN) / bins_per_decade).alias(BIN_LOW),
            F.pow(F.lit(10.0), (F.col(BIN) + 1) / bins_per_decade).alias(BIN_HIGH),
            PAGES_COUNT,
        )
        .orderBy(BIN)
    )


def latest_run(rank_runs: DataFrame) -> DataFrame:
    """The most recent row of ``rank_runs`` (by ``started_at``, then ``run_id``)."""
    return rank_runs.orderBy(F.col("started_at").desc(), F.col(S.RUN_ID).desc()).limit(1)


def convergence_history(rank_runs: DataFrame) -> DataFrame:
    """One row per iteration of the latest rank run: ``iteration``, ``l1_change``,
    ``dangling_mass``, ``seconds``, ``active_vectors``, with the run's ``run_id`` and ``tol``."""
    return (
        latest_run(rank_runs)
        .select(S.RUN_ID, "tol", F.explode("history").alias("step"))
        .select(S.RUN_ID, "tol", "step.*")
        .orderBy("iteration")
    )


def top_pages(pagerank: DataFrame, n: int = 20, vector_id: int = 0) -> DataFrame:
    """The ``n`` highest-ranked pages of one vector: ``url``, ``page_id``, ``rank`` (ties by page id)."""
    return (
        pagerank.where(F.col(S.VECTOR_ID) == vector_id)
        .orderBy(F.col(S.RANK).desc(), F.col(S.PAGE_ID))
        .limit(n)
        .select(S.URL, S.PAGE_ID, S.RANK)
    )


def top_domains(domain_authority: DataFrame, domains: DataFrame, n: int = 20) -> DataFrame:
    """The ``n`` domains of highest authority with their score and size: ``domain``,
    ``authority``, ``authority_score`` (0-10), ``pages``, ``linking_domains``."""
    return (
        domain_authority.orderBy(F.col(S.AUTHORITY).desc(), F.col(S.DOMAIN))
        .limit(n)
        .join(domains.select(S.DOMAIN, "pages", S.LINKING_DOMAINS), on=S.DOMAIN, how="left")
        .orderBy(F.col(S.AUTHORITY).desc(), F.col(S.DOMAIN))
        .select(S.DOMAIN, S.AUTHORITY, S.AUTHORITY_SCORE, "pages", S.LINKING_DOMAINS)
    )


def flagged_domains(link_farms: DataFrame, syndication_networks: DataFrame, max_domains: int = 40) -> DataFrame:
    """Domains to review: link farms, the domains they feed, and syndication network members.
    One row per domain with its ``role`` (a farm outranks a target, which outranks a network
    member) and ``group`` (the farm's target, or the network id); the ``max_domains`` farms and
    networks with the most links first."""
    farms = link_farms.select(
        F.col(S.DOMAIN), F.lit(ROLE_LINK_FARM).alias(ROLE), F.col(S.TARGET_DOMAIN).alias("group"),
        F.col("links_to_target").alias("weight"), F.lit(0).alias("priority"),
    )
    targets = link_farms.groupBy(S.TARGET_DOMAIN).agg(F.sum("links_to_target").alias("weight")).select(
        F.col(S.TARGET_DOMAIN).alias(S.DOMAIN), F.lit(ROLE_FARM_TARGET).alias(ROLE),
        F.col(S.TARGET_DOMAIN).alias("group"), F.col("weight"), F.lit(1).alias("priority"),
    )
    networks = syndication_networks.select(
        F.col(S.DOMAIN), F.lit(ROLE_SYNDICATION).alias(ROLE), F.col(S.NETWORK_ID).alias("group"),
        F.col("network_size").alias("weight"), F.lit(2).alias("priority"),
    )
    first_role = Window.partitionBy(S.DOMAIN).orderBy("priority", F.col("weight").desc())
    return (
        farms.unionByName(targets).unionByName(networks)
        .withColumn("choice", F.row_number().over(first_role))
        .where(F.col("choice") == 1)
        .orderBy("priority", F.col("weight").desc(), S.DOMAIN)
        .limit(max_domains)
        .select(S.DOMAIN, ROLE, "group", "weight")
    )


def domain_subgraph(domain_links: DataFrame, domains: DataFrame) -> DataFrame:
    """The ``domain_links`` rows whose both ends are in ``domains`` (a ``domain`` column):
    ``src_domain``, ``dst_domain``, ``links``, ``followed_links``."""
    ends = domains.select(S.DOMAIN).distinct()
    return (
        domain_links
        .join(ends.withColumnRenamed(S.DOMAIN, S.SRC_DOMAIN), on=S.SRC_DOMAIN, how="left_semi")
        .join(ends.withColumnRenamed(S.DOMAIN, S.DST_DOMAIN), on=S.DST_DOMAIN, how="left_semi")
        .select(S.SRC_DOMAIN, S.DST_DOMAIN, S.LINKS_COUNT, "followed_links")
        .orderBy(S.SRC_DOMAIN, S.DST_DOMAIN)
    )


def rejects_by_reason(rejects: DataFrame) -> DataFrame:
    """``reason``, ``records``: how many stored rejects carry each reason code, most first."""
    return rejects.groupBy(S.REASON).agg(F.count(F.lit(1)).alias("records")).orderBy(F.col("records").desc(), S.REASON)


def top_hosts(host_centrality: DataFrame, page_flags: DataFrame, pages: DataFrame, n: int = 20) -> DataFrame:
    """The ``n`` hosts of highest PageRank over the host graph (``linkgraph centrality``) with their
    harmonic centrality and, where the latest flags have a trust vector, the host's relative spam
    mass (Σ PageRank − Σ trust rank) / Σ PageRank over its pages: ``host``, ``pagerank``,
    ``harmonic``, ``rank`` (harmonic position), ``spam_mass`` (null without trust)."""
    top = host_centrality.orderBy(F.col(S.PAGERANK_RANK), F.col(S.REV_HOST)).limit(n)
    host_of = pages.where(F.col(S.HOST).isNotNull()).select(
        S.PAGE_ID, F.array_join(F.reverse(F.split(F.lower(F.col(S.HOST)), r"\.")), ".").alias(S.REV_HOST))
    if S.TRUST_RANK not in page_flags.columns:  # flags written before spam mass existed
        page_flags = page_flags.withColumn(S.TRUST_RANK, F.lit(None).cast("double"))
    spam = (page_flags.where(F.col(S.TRUST_RANK).isNotNull()).join(host_of, on=S.PAGE_ID, how="inner")
            .groupBy(S.REV_HOST).agg(((F.sum(S.RANK) - F.sum(S.TRUST_RANK)) / F.sum(S.RANK)).alias(S.SPAM_MASS)))
    return (
        top.join(spam, on=S.REV_HOST, how="left")
        .orderBy(F.col(S.PAGERANK_RANK), F.col(S.REV_HOST))
        .select(S.REV_HOST, S.PAGERANK_VALUE, S.HARMONIC, S.RANK, S.SPAM_MASS)
    )


def rank_changes_top(rank_changes: DataFrame, n: int = 200) -> DataFrame:
    """The ``n`` nodes of ``rank_changes`` (``linkgraph diff``) best placed in either run (smallest
    of their two positions), with ``node``, both positions and ``change``: what a scatter of
    positions before against after shows."""
    best = F.least(F.col(S.FROM_POSITION), F.col(S.TO_POSITION))
    return (rank_changes.orderBy(best, S.NODE).limit(n)
            .select(S.NODE, S.FROM_POSITION, S.TO_POSITION, S.CHANGE))


def rank_change_counts(rank_changes: DataFrame) -> DataFrame:
    """``change``, ``nodes``: how many nodes of the compared runs each kind of change holds."""
    return rank_changes.groupBy(S.CHANGE).agg(F.count(F.lit(1)).alias("nodes")).orderBy(S.CHANGE)
