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
linking_pages``; ``links`` weights by followed link count instead, ``none`` counts each pair
once).  Distinct pages rather than links, so one page with a hundred links to a domain votes once
per page, not a hundred times; a site-wide footer link still votes once per page carrying it.
The 0-10 ``authority_score`` is 10 × the fraction of other domains with strictly lower authority
(10 = top, 0 = bottom and every domain tied with it), ``domain_authority`` = score / 10 is the
seed-score input in [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import scipy.sparse as sparse
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType
from scipy.sparse.csgraph import connected_components as components_of

from linkgraph.graph.small import (
    ONE_TASK_EDGES,
    arrow_table,
    column_values,
    factorized,
    fits_one_task,
    record_batches,
)
from linkgraph.inputs.hosts import reversed_name
from linkgraph.lake import checkpoints
from linkgraph.lake import schemas as S
from linkgraph.lake.config_analysis import DEFAULT_MAX_LIST_ENTRIES
from linkgraph.lake.ids import number_in_order
from linkgraph.rank.graph import DST, SRC, VERTEX, WEIGHT, RankGraph

FOLLOWED = "followed"


def page_nodes(pages: DataFrame) -> DataFrame:
    """(page_id, host, domain): each page's reversed host and reversed registered domain (the host
    itself when the PSL gives none, e.g. an IP address)."""
    return pages.where(F.col(S.HOST).isNotNull()).select(
        S.PAGE_ID,
        reversed_name(F.col(S.HOST)).alias(S.REV_HOST),
        reversed_name(F.coalesce(F.col(S.REGISTERED_DOMAIN), F.col(S.HOST))).alias(S.DOMAIN),
    )


def located_links(links: DataFrame, nodes: DataFrame, exclude_link_types: tuple[str, ...]) -> DataFrame:
    """Links with the host and domain names of both ends and whether PageRank follows them (for
    page flags; the analysis uses the narrower :func:`located_link_ids`)."""
    src = nodes.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(S.REV_HOST).alias(S.SRC_HOST),
                       F.col(S.DOMAIN).alias(S.SRC_DOMAIN))
    dst = nodes.select(F.col(S.PAGE_ID).alias(S.DST_ID), F.col(S.REV_HOST).alias(S.DST_HOST),
                       F.col(S.DOMAIN).alias(S.DST_DOMAIN))
    return (
        links.select(S.SRC_ID, S.DST_ID, _followed(exclude_link_types).alias(FOLLOWED))
        .join(src, on=S.SRC_ID, how="inner")
        .join(dst, on=S.DST_ID, how="inner")
    )


def _followed(exclude_link_types: tuple[str, ...]) -> Column:
    return (F.col(S.LINK_TYPE).isNull() | ~F.col(S.LINK_TYPE).isin(*exclude_link_types) if exclude_link_types
            else F.lit(True))


# --- integer host and domain ids ----------------------------------------------------------------
# Per link the analysis carries four long ids rather than four names (a 10B-link crawl would
# persist ~1.3 TB of names); names come back from the two dictionaries on the aggregated rows.
# Ids are dense and follow name order, so a table sorted by id is sorted by name.

HOST_ID, DOMAIN_ID = "host_id", "domain_id"
LEVELS = {"host": (HOST_ID, S.REV_HOST, S.SRC_HOST, S.DST_HOST),
          "domain": (DOMAIN_ID, S.DOMAIN, S.SRC_DOMAIN, S.DST_DOMAIN)}


def _src(column: str) -> str:
    return f"src_{column}"


def _dst(column: str) -> str:
    return f"dst_{column}"


@dataclass
class NodeIds:
    """``pages``: (page_id, host_id, domain_id); ``hosts``: (host_id, host); ``domains``:
    (domain_id, domain) -- the dictionaries."""

    pages: DataFrame
    hosts: DataFrame
    domains: DataFrame

    def dictionary(self, level: str) -> DataFrame:
        return self.hosts if level == "host" else self.domains

    def persist(self) -> NodeIds:
        for df in (self.pages, self.hosts, self.domains):
            df.persist(StorageLevel.MEMORY_AND_DISK)
        return self

    def unpersist(self) -> None:
        for df in (self.pages, self.hosts, self.domains):
            df.unpersist()


def node_ids(nodes: DataFrame) -> NodeIds:
    """Dense ids in name order for the hosts and domains of ``page_nodes`` output."""
    hosts = number_in_order(nodes.select(S.REV_HOST).distinct(), [S.REV_HOST], 0, HOST_ID)
    domains = number_in_order(nodes.select(S.DOMAIN).distinct(), [S.DOMAIN], 0, DOMAIN_ID)
    pages = nodes.join(hosts, on=S.REV_HOST, how="inner").join(domains, on=S.DOMAIN, how="inner").select(
        S.PAGE_ID, HOST_ID, DOMAIN_ID)
    return NodeIds(pages, hosts, domains)


def located_link_ids(links: DataFrame, ids: NodeIds, exclude_link_types: tuple[str, ...]) -> DataFrame:
    """(src_id, dst_id, followed, src_host_id, src_domain_id, dst_host_id, dst_domain_id)."""
    src = ids.pages.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(HOST_ID).alias(_src(HOST_ID)),
                           F.col(DOMAIN_ID).alias(_src(DOMAIN_ID)))
    dst = ids.pages.select(F.col(S.PAGE_ID).alias(S.DST_ID), F.col(HOST_ID).alias(_dst(HOST_ID)),
                           F.col(DOMAIN_ID).alias(_dst(DOMAIN_ID)))
    return (
        links.select(S.SRC_ID, S.DST_ID, _followed(exclude_link_types).alias(FOLLOWED))
        .join(src, on=S.SRC_ID, how="inner")
        .join(dst, on=S.DST_ID, how="inner")
    )


def _named(df: DataFrame, dictionary: DataFrame, id_column: str, name: str, as_id: str, as_name: str) -> DataFrame:
    names = dictionary.select(F.col(id_column).alias(as_id), F.col(name).alias(as_name))
    return df.join(names, on=as_id, how="inner")


def node_links(located: DataFrame, ids: NodeIds, level: str) -> DataFrame:
    """Edges between distinct nodes of ``level`` (host or domain), named as ``host_links`` /
    ``domain_links``.  Exact distinct counts without Spark's expand of every link: links are
    first aggregated per (pair, source page) -- which gives the source-page counts -- and, apart,
    per (pair, target page)."""
    id_column, name, src_name, dst_name = LEVELS[level]
    src_id, dst_id = _src(id_column), _dst(id_column)
    external = located.where(F.col(src_id) != F.col(dst_id))
    per_source = external.groupBy(src_id, dst_id, S.SRC_ID).agg(
        F.count(F.lit(1)).alias("_links"), F.count_if(FOLLOWED).alias("_followed"))
    by_sources = per_source.groupBy(src_id, dst_id).agg(
        F.sum("_links").alias(S.LINKS_COUNT),
        F.sum("_followed").alias("followed_links"),
        F.count(F.lit(1)).alias("src_pages"),
        F.count_if(F.col("_followed") > 0).alias("followed_src_pages"),
    )
    by_targets = external.select(src_id, dst_id, S.DST_ID).distinct().groupBy(src_id, dst_id).agg(
        F.count(F.lit(1)).alias("dst_pages"))
    pairs = by_sources.join(by_targets, on=[src_id, dst_id], how="inner")
    named = _named(_named(pairs, ids.dictionary(level), id_column, name, src_id, src_name),
                   ids.dictionary(level), id_column, name, dst_id, dst_name)
    return named.select(src_name, dst_name, S.LINKS_COUNT, "followed_links", "src_pages", "followed_src_pages",
                        "dst_pages")


def _node_stats(nodes: DataFrame, located: DataFrame, ids: NodeIds, level: str, extra: list[Column]) -> DataFrame:
    id_column, name, _, _ = LEVELS[level]
    src, dst = _src(id_column), _dst(id_column)
    per_node = nodes.groupBy(F.col(name)).agg(F.count("*").alias("pages"), *extra)
    out_stats = located.groupBy(F.col(src).alias(id_column)).agg(
        F.count("*").alias("out_links"),
        F.count_if(F.col(src) == F.col(dst)).alias("internal_links"),
        F.count_if(F.col(src) != F.col(dst)).alias("external_out_links"),
    )
    src_domain, dst_domain = _src(DOMAIN_ID), _dst(DOMAIN_ID)
    in_stats = located.groupBy(F.col(dst).alias(id_column)).agg(
        F.count("*").alias("in_links"),
        F.count_if(F.col(src) != F.col(dst)).alias("external_in_links"),
    )
    # other registered domains linking in: distinct (node, source domain) pairs, then a count
    linking = (
        located.where(F.col(src_domain) != F.col(dst_domain))
        .select(F.col(dst).alias(id_column), src_domain).distinct()
        .groupBy(id_column).agg(F.count(F.lit(1)).alias(S.LINKING_DOMAINS))
    )
    stats = (out_stats.join(in_stats, on=id_column, how="full").join(linking, on=id_column, how="left")
             .join(ids.dictionary(level), on=id_column, how="inner").drop(id_column))
    zero = F.lit(0).cast("long")
    joined = per_node.join(stats, on=name, how="left")
    return joined.select(
        name, *[c for c in per_node.columns if c not in (name, "pages")], "pages",
        *[F.coalesce(F.col(c), zero).alias(c) for c in
          ("out_links", "in_links", "internal_links", "external_out_links", "external_in_links", S.LINKING_DOMAINS)],
    )


def host_stats(nodes: DataFrame, located: DataFrame, ids: NodeIds) -> DataFrame:
    """The ``hosts`` table: per reversed host, its domain and link statistics."""
    return _node_stats(nodes, located, ids, "host", [F.first(S.DOMAIN).alias(S.DOMAIN)])


def domain_stats(nodes: DataFrame, located: DataFrame, ids: NodeIds) -> DataFrame:
    """The ``domains`` table: per reversed registered domain, its host count and link statistics."""
    return _node_stats(nodes, located, ids, "domain", [F.count_distinct(S.REV_HOST).alias("hosts")])


# --- domain authority --------------------------------------------------------------------------

def domain_rank_graph(domains: DataFrame, domain_links: DataFrame, weight: str) -> tuple[RankGraph, DataFrame]:
    """The domain graph as a weighted ``RankGraph`` and its (domain, vertex) index.

    ``weight``: ``linking_pages`` (followed distinct source pages), ``links`` (followed links) or
    ``none`` (each pair with a followed link once); pairs with only unfollowed links are left out.
    """
    weight_column = "followed_src_pages" if weight == "linking_pages" else "followed_links"
    weight_value = F.lit(1.0) if weight == "none" else F.col(weight_column).cast("double")
    index = number_in_order(domains.select(S.DOMAIN), [S.DOMAIN], 0, VERTEX).persist(StorageLevel.MEMORY_AND_DISK)
    n = index.count()
    edges = (
        domain_links.where(F.col(weight_column) > 0)
        .join(index.select(F.col(S.DOMAIN).alias(S.SRC_DOMAIN), F.col(VERTEX).alias(SRC)), on=S.SRC_DOMAIN, how="inner")
        .join(index.select(F.col(S.DOMAIN).alias(S.DST_DOMAIN), F.col(VERTEX).alias(DST)), on=S.DST_DOMAIN, how="inner")
        .select(SRC, DST, weight_value.alias(WEIGHT))
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


def connected_components(edges: DataFrame, max_iter: int = 1000,
                         progress: Callable[[int, int], None] | None = None,
                         one_task_below: int = ONE_TASK_EDGES) -> DataFrame:
    """(node, component) of an undirected graph given as string edges (a, b); the component is
    its smallest node name.

    At most ``one_task_below`` edges: the components in one task (:func:`_components_of_batches`,
    checkpointed once; ``progress(1, 0)``).  Otherwise min-label propagation: every round each
    node takes the smallest label among itself and its neighbours; it stops when a round changes
    nothing (at most the graph's diameter rounds).  ``progress(round, changed)`` is called after
    each round (``changed``: 1 if any label changed, else 0).  Each round's labels are
    checkpointed reliably (``linkgraph.lake.checkpoints``), replacing the previous round's: the
    plan stays one round deep and a lost executor costs a re-read.
    GraphFrames' ``connectedComponents`` computes the same partition; its JVM package is not needed.
    """
    if fits_one_task(edges, one_task_below):
        schema = StructType([StructField("node", edges.schema["a"].dataType, True),
                             StructField("component", edges.schema["a"].dataType, True)])
        labels = checkpoints.cut(edges.select("a", "b").coalesce(1).mapInArrow(
            lambda batches: _components_of_batches(batches, schema), schema))
        if progress:
            progress(1, 0)
        return labels
    both = edges.select("a", "b").unionByName(edges.select(F.col("b").alias("a"), F.col("a").alias("b"))).persist()
    labels = checkpoints.cut(both.select(F.col("a").alias("node")).distinct().withColumn("component", F.col("node")))
    try:
        for round_no in range(1, max_iter + 1):
            updated = checkpoints.cut(_propagate_labels(both, labels))
            changed = updated.join(labels.withColumnRenamed("component", "_old"), on="node").where(
                F.col("component") != F.col("_old")).limit(1).count()
            checkpoints.drop(labels)
            labels = updated
            if progress:
                progress(round_no, changed)
            if not changed:
                break
    finally:
        both.unpersist()
    return labels


def _components_of_batches(batches: Iterator[Any], schema: StructType) -> Iterator[Any]:
    """(node, component) of one task's undirected (a, b) edges, as label propagation gives them:
    each node labelled with the smallest node of its component; an edge with a null end links
    nothing (its other end is a node, the null end a node of its own labelled null)."""
    table = arrow_table(batches)
    if table is None:
        return
    a_column, b_column = table.column("a"), table.column("b")
    # an edge with a null end: its other end is a node (as the propagation's distinct ``a``s and
    # ``b``s are), but no edge
    whole = pc.and_(pc.is_valid(a_column), pc.is_valid(b_column))
    (a, b, loose), nodes = factorized(column_values(a_column.filter(whole)), column_values(b_column.filter(whole)),
                                      np.concatenate([column_values(a_column.filter(pc.invert(whole))),
                                                      column_values(b_column.filter(pc.invert(whole)))]))
    n = len(nodes)
    _, labels = components_of(sparse.csr_matrix((np.ones(len(a), dtype=bool), (a, b)), shape=(n, n)),
                              directed=False)
    node_values = list(nodes)
    component_values = list(pd.Series(nodes).groupby(labels).transform("min"))
    if a_column.null_count or b_column.null_count:   # the null end is a node of its own, labelled null
        node_values.append(None)
        component_values.append(None)
    yield from record_batches(schema, node_values, component_values)


def _propagate_labels(both: DataFrame, labels: DataFrame) -> DataFrame:
    """One round: each node's smallest label among its own and its neighbours' (``both``: a, b
    in both directions)."""
    offered = both.join(labels.select(F.col("node").alias("b"), F.col("component").alias("offer")), on="b")
    return (
        labels.join(offered.groupBy(F.col("a").alias("node")).agg(F.min("offer").alias("offer")), on="node",
                    how="left")
        .select("node", F.least("component", F.coalesce("offer", "component")).alias("component"))
    )


def syndication_networks(pairs: DataFrame, max_partners: int = DEFAULT_MAX_LIST_ENTRIES) -> DataFrame:
    """The ``syndication_networks`` table: each domain of a reciprocal pair with its network
    (connected component of the pairs), the network's size and the domain's partners (the first
    ``max_partners`` by name: ``analysis.max_list_entries``, picked by a window before the list)."""
    # read three times (the size probe of the components, the components, the partners): computed once
    pairs = checkpoints.cut(pairs)
    components = connected_components(pairs)
    by_name = Window.partitionBy(S.DOMAIN).orderBy("partner")
    partners = (
        pairs.select(F.col("a").alias(S.DOMAIN), F.col("b").alias("partner"))
        .unionByName(pairs.select(F.col("b").alias(S.DOMAIN), F.col("a").alias("partner")))
        .distinct()
        .withColumn("_rank", F.row_number().over(by_name)).where(F.col("_rank") <= max_partners)
        .groupBy(S.DOMAIN).agg(F.array_sort(F.collect_list("partner")).alias("partners"))
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
