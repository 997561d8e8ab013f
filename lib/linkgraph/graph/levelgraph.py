"""The host, domain or page graph with dense node ids, for harmonic centrality and exports.

Ids follow Common Crawl's convention: dense from 0 in the order of the reversed names (hosts,
registered domains; pages by ``page_id``, which already follows reversed-host order).  Edges are
the distinct pairs of distinct nodes: ``host_links`` / ``domain_links`` (every link, followed or
not, as Common Crawl's graphs) or, for pages, ``links``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.ids import number_in_order

NODE_ID, NAME = "id", "name"
SRC, DST = "src", "dst"
LEVEL_TABLES = {
    "host": (S.HOSTS_TABLE, S.HOST_LINKS_TABLE, S.REV_HOST, S.SRC_HOST, S.DST_HOST),
    "domain": (S.DOMAINS_TABLE, S.DOMAIN_LINKS_TABLE, S.DOMAIN, S.SRC_DOMAIN, S.DST_DOMAIN),
    "page": (S.PAGES_TABLE, S.LINKS_TABLE, S.PAGE_ID, S.SRC_ID, S.DST_ID),
}


@dataclass
class LevelGraph:
    """``vertices``: (id, name[, hosts]); ``edges``: (src, dst) ids; ``n`` nodes."""

    level: str
    vertices: DataFrame
    edges: DataFrame
    n: int


def required_tables(level: str) -> tuple[str, str]:
    nodes, links, *_ = LEVEL_TABLES[level]
    return nodes, links


def level_graph(nodes: DataFrame, links: DataFrame, level: str) -> LevelGraph:
    """The graph of ``level`` from its node table (hosts / domains / pages) and link table."""
    _, _, name, src_name, dst_name = LEVEL_TABLES[level]
    extra = ["hosts"] if level == "domain" else []
    named = nodes.select(F.col(name).alias(NAME), *extra)
    vertices = number_in_order(named, [NAME], 0, NODE_ID).select(NODE_ID, NAME, *extra)
    index = vertices.select(NODE_ID, NAME)
    edges = (
        links.select(F.col(src_name).alias("_s"), F.col(dst_name).alias("_d")).where(F.col("_s") != F.col("_d"))
        .join(index.select(F.col(NAME).alias("_s"), F.col(NODE_ID).alias(SRC)), on="_s", how="inner")
        .join(index.select(F.col(NAME).alias("_d"), F.col(NODE_ID).alias(DST)), on="_d", how="inner")
        .select(SRC, DST).distinct()
    )
    n = vertices.count()
    return LevelGraph(level, vertices, edges, n)
