"""Host and domain graphs, domain authority, link farms, syndication networks and page flags.

Names are reversed as Common Crawl writes them (``www.example.com`` -> ``com.example.www``), so a
sort by name keeps a registered domain's hosts together; IP hosts are kept as they are.  The
registered domain is the Public Suffix List's (private section included), so
``foo.blogspot.com`` and ``bar.blogspot.com`` are two domains.

Counting rules (every link of ``links`` counts once, whatever its type):

* a link is *internal* to a node (host or domain) when both its pages belong to that node, else it
  is an external out-link of the source's node and an external in-link of the target's node;
* ``host_links`` / ``domain_links`` hold one row per ordered pair of distinct nodes with at least
  one link: all links, the links PageRank follows (``rank.exclude_link_types`` excluded), and the
  distinct linking / linked pages;
* ``linking_domains`` of a node counts the other registered domains with a link into it.

Domain authority is PageRank (damping and tolerance of ``rank``) over ``domain_links``, each edge
weighted by its distinct linking pages among followed links (``analysis.authority_weight:
linking_pages``; ``links`` weights by followed link count instead).  Distinct pages rather than
links, so one page with a hundred links to a domain votes once per page, not a hundred times; a
site-wide footer link still votes once per page carrying it.  The 0-10 ``authority_score`` is
10 × the fraction of other domains with strictly lower authority (10 = top, 0 = bottom and every
domain tied with it), ``domain_authority`` = score / 10 is the seed-score input in [0, 1].
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from linkgraph import schemas as S
from linkgraph.ids import number_in_order
from linkgraph.rank.graph import DST, SRC, VERTEX, WEIGHT, RankGraph

_IP_HOST = r"^\[|^[0-9]+(\.[0-9]+){3}$"


def reversed_name(name: Column) -> Column:
    """``www.example.com`` -> ``com.example.www``; IPv4 and bracketed IPv6 hosts unchanged."""
    return F.when(name.rlike(_IP_HOST), name).otherwise(F.array_join(F.reverse(F.split(name, r"\.")), "."))


def page_nodes(pages: DataFrame) -> DataFrame:
    """(page_id, host, domain): each page's reversed host and reversed registered domain (the host
    itself when the PSL gives none, e.g. an IP address)."""
    return pages.where(F.col(S.HOST).isNotNull()).select(
        S.PAGE_ID,
        reversed_name(F.col(S.HOST)).alias(S.REV_HOST),
        reversed_name(F.coalesce(F.col(S.REGISTERED_DOMAIN), F.col(S.HOST))).alias(S.DOMAIN),
    )


def located_links(links: DataFrame, nodes: DataFrame, exclude_link_types: tuple[str, ...]) -> DataFrame:
    """Links with the host and domain of both ends and whether PageRank follows them."""
    followed = (F.col(S.LINK_TYPE).isNull() | ~F.col(S.LINK_TYPE).isin(*exclude_link_types) if exclude_link_types
                else F.lit(True))
    src = nodes.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(S.REV_HOST).alias(S.SRC_HOST),
                       F.col(S.DOMAIN).alias(S.SRC_DOMAIN))
    dst = nodes.select(F.col(S.PAGE_ID).alias(S.DST_ID), F.col(S.REV_HOST).alias(S.DST_HOST),
                       F.col(S.DOMAIN).alias(S.DST_DOMAIN))
    return (
        links.select(S.SRC_ID, S.DST_ID, followed.alias("followed"))
        .join(src, on=S.SRC_ID, how="inner")
        .join(dst, on=S.DST_ID, how="inner")
    )


def node_links(located: DataFrame, src: str, dst: str) -> DataFrame:
    """Edges between distinct nodes (``src``/``dst`` = src_host/dst_host or src_domain/dst_domain)."""
    return (
        located.where(F.col(src) != F.col(dst))
        .groupBy(src, dst)
        .agg(
            F.count("*").alias(S.LINKS_COUNT),
            F.count_if("followed").alias("followed_links"),
            F.count_distinct(S.SRC_ID).alias("src_pages"),
            F.count_distinct(F.when(F.col("followed"), F.col(S.SRC_ID))).alias("followed_src_pages"),
            F.count_distinct(S.DST_ID).alias("dst_pages"),
        )
    )


def _node_stats(nodes: DataFrame, located: DataFrame, name: str, src: str, dst: str, extra: list[Column]) -> DataFrame:
    per_node = nodes.groupBy(F.col(name)).agg(F.count("*").alias("pages"), *extra)
    out_stats = located.groupBy(F.col(src).alias(name)).agg(
        F.count("*").alias("out_links"),
        F.count_if(F.col(src) == F.col(dst)).alias("internal_links"),
        F.count_if(F.col(src) != F.col(dst)).alias("external_out_links"),
    )
    in_stats = located.groupBy(F.col(dst).alias(name)).agg(
        F.count("*").alias("in_links"),
        F.count_if(F.col(src) != F.col(dst)).alias("external_in_links"),
        F.count_distinct(F.when(F.col(S.SRC_DOMAIN) != F.col(S.DST_DOMAIN), F.col(S.SRC_DOMAIN)))
        .alias(S.LINKING_DOMAINS),
    )
    zero = F.lit(0).cast("long")
    joined = per_node.join(out_stats, on=name, how="left").join(in_stats, on=name, how="left")
    return joined.select(
        name, *[c for c in per_node.columns if c not in (name, "pages")], "pages",
        *[F.coalesce(F.col(c), zero).alias(c) for c in
          ("out_links", "in_links", "internal_links", "external_out_links", "external_in_links", S.LINKING_DOMAINS)],
    )


def host_stats(nodes: DataFrame, located: DataFrame) -> DataFrame:
    """The ``hosts`` table: per reversed host, its domain and link statistics."""
    return _node_stats(nodes, located, S.REV_HOST, S.SRC_HOST, S.DST_HOST, [F.first(S.DOMAIN).alias(S.DOMAIN)])


def domain_stats(nodes: DataFrame, located: DataFrame) -> DataFrame:
    """The ``domains`` table: per reversed registered domain, its host count and link statistics."""
    return _node_stats(nodes, located, S.DOMAIN, S.SRC_DOMAIN, S.DST_DOMAIN,
                       [F.count_distinct(S.REV_HOST).alias("hosts")])


# --- domain authority --------------------------------------------------------------------------

def domain_rank_graph(domains: DataFrame, domain_links: DataFrame, weight: str) -> tuple[RankGraph, DataFrame]:
    """The domain graph as a weighted ``RankGraph`` and its (domain, vertex) index.

    ``weight``: ``linking_pages`` (followed distinct source pages) or ``links`` (followed links);
    edges of weight 0 (only unfollowed links) are left out.
    """
    weight_column = "followed_src_pages" if weight == "linking_pages" else "followed_links"
    index = number_in_order(domains.select(S.DOMAIN), [S.DOMAIN], 0, VERTEX).persist(StorageLevel.MEMORY_AND_DISK)
    n = index.count()
    edges = (
        domain_links.where(F.col(weight_column) > 0)
        .join(index.select(F.col(S.DOMAIN).alias(S.SRC_DOMAIN), F.col(VERTEX).alias(SRC)), on=S.SRC_DOMAIN, how="inner")
        .join(index.select(F.col(S.DOMAIN).alias(S.DST_DOMAIN), F.col(VERTEX).alias(DST)), on=S.DST_DOMAIN, how="inner")
        .select(SRC, DST, F.col(weight_column).cast("double").alias(WEIGHT))
    )
    vertices = index.select(F.col(VERTEX).alias(S.PAGE_ID), VERTEX)
    return RankGraph(vertices=vertices, edges=edges, n=n), index


def authority_scale(authority: DataFrame, run_id: str) -> DataFrame:
    """(domain, authority) -> the ``domain_authority`` table (position, 0-10 score, [0, 1] value).

    Distributed: positions come from a range-partitioned sort; ties share the score of the
    domains strictly below them."""
    n = authority.count()
    positioned = number_in_order(
        authority.withColumn("_order", -F.col(S.AUTHORITY)), ["_order", S.DOMAIN], 1, "authority_position"
    )
    lowest_tied = positioned.groupBy(S.AUTHORITY).agg(F.max("authority_position").alias("_last"))
    strictly_lower = F.lit(n) - F.col("_last")
    fraction = strictly_lower / F.lit(max(n - 1, 1))
    return positioned.join(lowest_tied, on=S.AUTHORITY, how="inner").select(
        S.DOMAIN, S.AUTHORITY, "authority_position",
        F.round(10 * fraction, 2).alias(S.AUTHORITY_SCORE),
        F.round(fraction, 4).alias(S.DOMAIN_AUTHORITY),
        F.lit(run_id).alias(S.RUN_ID),
    )


# --- link farms and syndication networks -------------------------------------------------------

def link_farms(domain_links: DataFrame, share: float, min_links: int) -> DataFrame:
    """Domains with ≥ ``min_links`` external out-links of which more than ``share`` go to one domain."""
    per_source = domain_links.groupBy(S.SRC_DOMAIN).agg(
        F.sum(S.LINKS_COUNT).alias("external_out_links"),
        F.max_by(S.DST_DOMAIN, F.struct(S.LINKS_COUNT, F.col(S.DST_DOMAIN))).alias(S.TARGET_DOMAIN),
        F.max(S.LINKS_COUNT).alias("links_to_target"),
    )
    return (
        per_source.withColumn("share", F.col("links_to_target") / F.col("external_out_links"))
        .where((F.col("external_out_links") >= min_links) & (F.col("share") > share))
        .select(F.col(S.SRC_DOMAIN).alias(S.DOMAIN), S.TARGET_DOMAIN, "links_to_target", "external_out_links", "share")
    )


def syndication_pairs(domain_links: DataFrame, min_links: int) -> DataFrame:
    """(a, b) with a < b where each domain sends the other at least ``min_links`` links."""
    heavy = domain_links.where(F.col(S.LINKS_COUNT) >= min_links).select(S.SRC_DOMAIN, S.DST_DOMAIN)
    back = heavy.select(F.col(S.SRC_DOMAIN).alias("_b_src"), F.col(S.DST_DOMAIN).alias("_b_dst"))
    return (
        heavy.join(back, (F.col(S.SRC_DOMAIN) == F.col("_b_dst")) & (F.col(S.DST_DOMAIN) == F.col("_b_src")), "inner")
        .where(F.col(S.SRC_DOMAIN) < F.col(S.DST_DOMAIN))
        .select(F.col(S.SRC_DOMAIN).alias("a"), F.col(S.DST_DOMAIN).alias("b"))
    )


def connected_components(edges: DataFrame, max_iter: int = 1000) -> DataFrame:
    """(node, component) of an undirected graph given as string edges (a, b); the component is
    its smallest node name.

    Min-label propagation: every round each node takes the smallest label among itself and its
    neighbours; it stops when a round changes nothing (at most the graph's diameter rounds).
    Lineage is cut each round with a local checkpoint.  GraphFrames' ``connectedComponents``
    computes the same partition; its JVM package is not needed here.
    """
    both = edges.select("a", "b").unionByName(edges.select(F.col("b").alias("a"), F.col("a").alias("b"))).persist()
    labels = both.select(F.col("a").alias("node")).distinct().withColumn("component", F.col("node")).localCheckpoint()
    for _ in range(max_iter):
        offered = both.join(labels.select(F.col("node").alias("b"), F.col("component").alias("offer")), on="b")
        updated = (
            labels.join(offered.groupBy(F.col("a").alias("node")).agg(F.min("offer").alias("offer")), on="node",
                        how="left")
            .select("node", F.least("component", F.coalesce("offer", "component")).alias("component"))
            .localCheckpoint()
        )
        changed = updated.join(labels.withColumnRenamed("component", "_old"), on="node").where(
            F.col("component") != F.col("_old")).limit(1).count()
        labels = updated
        if not changed:
            break
    both.unpersist()
    return labels


def syndication_networks(pairs: DataFrame) -> DataFrame:
    """The ``syndication_networks`` table: each domain of a reciprocal pair with its network
    (connected component of the pairs), the network's size and the domain's partners."""
    components = connected_components(pairs)
    partners = (
        pairs.select(F.col("a").alias(S.DOMAIN), F.col("b").alias("partner"))
        .unionByName(pairs.select(F.col("b").alias(S.DOMAIN), F.col("a").alias("partner")))
        .groupBy(S.DOMAIN).agg(F.array_sort(F.collect_set("partner")).alias("partners"))
    )
    sizes = components.groupBy("component").agg(F.count("*").alias("network_size"))
    return (
        components.join(sizes, on="component").join(partners, components["node"] == partners[S.DOMAIN])
        .select(F.col("component").alias(S.NETWORK_ID), S.DOMAIN, "network_size", "partners")
    )


# --- page flags --------------------------------------------------------------------------------

_SITE_ROOT = r"^https?://[^/]+/$"


def page_flags(
    pages: DataFrame, located: DataFrame, ranks: DataFrame, farms: DataFrame, networks: DataFrame,
    run_id: str, sigmas: float,
) -> DataFrame:
    """The ``page_flags`` rows of one rank run (``ranks``: page_id, rank of that run's vector 0).

    ``important``: rank > mean + ``sigmas``·σ (population σ) of the run's ranks.
    ``orphan``: no in-link from another page of the same registered domain; a host's root page
    (``scheme://host/``) is the site's entry point and never an orphan.
    ``link_farm_domain`` / ``link_farm_target``, ``syndication_network``: from the page's domain.
    """
    stats = ranks.agg(F.avg(S.RANK).alias("_mean"), F.stddev_pop(S.RANK).alias("_sd"))
    threshold = F.col("_mean") + F.lit(sigmas) * F.col("_sd")
    internal_in = located.where((F.col(S.SRC_DOMAIN) == F.col(S.DST_DOMAIN)) & (F.col(S.SRC_ID) != F.col(S.DST_ID))) \
        .groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).agg(F.count("*").alias("internal_in_links"))
    domain_of = page_nodes(pages).select(S.PAGE_ID, S.DOMAIN)
    return (
        pages.select(S.PAGE_ID, S.URL)
        .join(ranks.select(S.PAGE_ID, S.RANK), on=S.PAGE_ID, how="left")
        .crossJoin(F.broadcast(stats.select(threshold.alias("rank_threshold"))))
        .join(internal_in, on=S.PAGE_ID, how="left")
        .join(domain_of, on=S.PAGE_ID, how="left")
        .join(farms.select(S.DOMAIN, F.col(S.TARGET_DOMAIN).alias(S.LINK_FARM_TARGET)), on=S.DOMAIN, how="left")
        .join(networks.select(S.DOMAIN, F.col(S.NETWORK_ID).alias(S.SYNDICATION_NETWORK)), on=S.DOMAIN, how="left")
        .select(
            F.lit(run_id).alias(S.RUN_ID), S.PAGE_ID, S.URL, S.RANK, "rank_threshold",
            F.coalesce(F.col(S.RANK) > F.col("rank_threshold"), F.lit(False)).alias(S.IMPORTANT),
            F.coalesce(F.col("internal_in_links"), F.lit(0).cast("long")).alias("internal_in_links"),
            ((F.coalesce(F.col("internal_in_links"), F.lit(0)) == 0)
             & ~F.coalesce(F.col(S.URL).rlike(_SITE_ROOT), F.lit(False))).alias(S.ORPHAN),
            F.col(S.LINK_FARM_TARGET).isNotNull().alias(S.LINK_FARM_DOMAIN),
            S.LINK_FARM_TARGET, S.SYNDICATION_NETWORK,
        )
    )
