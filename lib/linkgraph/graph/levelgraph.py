"""The host, domain or page graph with dense node ids, for harmonic centrality and exports.

Ids follow Common Crawl's convention: dense from 0 in the order of the reversed names (hosts,
registered domains; pages by ``page_id``, which already follows reversed-host order).  Edges are
the distinct pairs of distinct nodes: ``host_links`` / ``domain_links`` (every link, followed or
not, as Common Crawl's graphs) or, for pages, ``links``; host and domain edges can carry a weight
(the pair's page links or linking pages) for a weighted PageRank.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.ids import number_in_order
from linkgraph.rank.graph import WEIGHT

NODE_ID, NAME = "id", "name"
SRC, DST = "src", "dst"
LEVEL_TABLES = {
    "host": (S.HOSTS_TABLE, S.HOST_LINKS_TABLE, S.REV_HOST, S.SRC_HOST, S.DST_HOST),
    "domain": (S.DOMAINS_TABLE, S.DOMAIN_LINKS_TABLE, S.DOMAIN, S.SRC_DOMAIN, S.DST_DOMAIN),
    "page": (S.PAGES_TABLE, S.LINKS_TABLE, S.PAGE_ID, S.SRC_ID, S.DST_ID),
}
# centrality.weight -> the column of host_links / domain_links that weighs an edge
WEIGHT_COLUMNS = {level: {"links": S.LINKS_COUNT, "pages": "src_pages"} for level in ("host", "domain")}


@dataclass
class LevelGraph:
    """``vertices``: (id, name[, hosts]); ``edges``: (src, dst[, weight]) ids; ``n`` nodes."""

    level: str
    vertices: DataFrame
    edges: DataFrame
    n: int


def required_tables(level: str) -> tuple[T.Table, T.Table]:
    """The declarations of the node table and the link table of ``level``'s graph."""
    nodes, links, *_ = LEVEL_TABLES[level]
    return T.declaration(nodes), T.declaration(links)


def level_graph(nodes: DataFrame, links: DataFrame, level: str, weight: str = "none") -> LevelGraph:
    """The graph of ``level`` from its node table (hosts / domains / pages) and link table.

    ``weight`` (host and domain levels; ``centrality.weight``): ``none`` gives (src, dst) edges;
    ``links`` and ``pages`` add a ``weight`` column, the pair's page links (``links``) or distinct
    linking pages (``src_pages``) of its ``host_links`` / ``domain_links`` row (always ≥ 1)."""
    _, _, name, src_name, dst_name = LEVEL_TABLES[level]
    if weight != "none" and level not in WEIGHT_COLUMNS:
        raise ValueError(f"the {level} graph has no edge weights (weight {weight!r})")
    extra = ["hosts"] if level == "domain" else []
    named = nodes.select(F.col(name).alias(NAME), *extra)
    vertices = number_in_order(named, [NAME], 0, NODE_ID).select(NODE_ID, NAME, *extra)
    index = vertices.select(NODE_ID, NAME)
    weights = [F.col(WEIGHT_COLUMNS[level][weight]).cast("double").alias(WEIGHT)] if weight != "none" else []
    pairs = (
        links.select(F.col(src_name).alias("_s"), F.col(dst_name).alias("_d"), *weights)
        .where(F.col("_s") != F.col("_d"))
        .join(index.select(F.col(NAME).alias("_s"), F.col(NODE_ID).alias(SRC)), on="_s", how="inner")
        .join(index.select(F.col(NAME).alias("_d"), F.col(NODE_ID).alias(DST)), on="_d", how="inner")
    )
    edges = (pairs.groupBy(SRC, DST).agg(F.sum(WEIGHT).alias(WEIGHT)) if weights
             else pairs.select(SRC, DST).distinct())
    n = vertices.count()
    return LevelGraph(level, vertices, edges, n)
