"""The rank graph: pages as dense vertex indices 0..n-1 and the links PageRank walks.

Semantics (documented in README):

* vertices are all pages of the ``pages`` table (also pages that are only link targets);
* links whose ``link_type`` is in ``exclude_link_types`` (default NOFOLLOW, UGC, SPONSORED) are
  not followed; ``links`` holds at most one row per page pair, so duplicates never count twice;
* a self-link (only present with ``ingest.self_links: keep``) is an ordinary out-link, as in
  networkx;
* a page with no followed out-link is dangling.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.ids import host_order, number_in_order
from linkgraph.lake.rows import one_row

VERTEX = "vertex"
SRC, DST = "src", "dst"
WEIGHT = "weight"


@dataclass
class RankGraph:
    """``vertices``: (page_id, vertex); ``edges``: (src, dst[, weight]) vertex indices (an optional
    positive ``weight`` splits a source's rank in proportion; without it, evenly); ``n`` vertices;
    ``n_edges`` once counted."""

    vertices: DataFrame | None
    edges: DataFrame
    n: int
    n_edges: int | None = None

    @property
    def page_vertices(self) -> DataFrame:
        """``vertices`` of a page graph (``build_rank_graph``); other graphs have none."""
        if self.vertices is None:
            raise ValueError("this rank graph has no page vertices")
        return self.vertices


def vertex_index(pages: DataFrame) -> tuple[DataFrame, int]:
    """Map page ids to dense indices.  Pages with URLs are indexed in host order
    (``ids.host_order``: by ``url_key``), so a host's pages share a rank block however incremental
    ingests numbered them; otherwise (no ``url_key`` column, or none set) ids already dense
    (0..n-1) are used as they are."""
    has_keys = S.URL_KEY in pages.columns
    stats = one_row(pages.agg(F.count("*").alias("n"), F.max(S.PAGE_ID).alias("max_id"),
                              F.min(S.PAGE_ID).alias("min_id"),
                              (F.count(S.URL_KEY) if has_keys else F.lit(0)).alias("keyed")))
    n = int(stats["n"])
    if stats["keyed"]:
        return host_order(pages, VERTEX), n
    ids = pages.select(S.PAGE_ID)
    if n == 0 or (stats["min_id"] == 0 and stats["max_id"] == n - 1):
        return ids.withColumn(VERTEX, F.col(S.PAGE_ID)), n
    return number_in_order(ids, [S.PAGE_ID], 0, VERTEX), n


def followed_links(links: DataFrame, exclude_link_types: tuple[str, ...]) -> DataFrame:
    if not exclude_link_types:
        return links
    return links.where(F.col(S.LINK_TYPE).isNull() | ~F.col(S.LINK_TYPE).isin(*exclude_link_types))


def build_rank_graph(pages: DataFrame, links: DataFrame, exclude_link_types: tuple[str, ...]) -> RankGraph:
    vertices, n = vertex_index(pages)
    vertices = vertices.persist()
    followed = followed_links(links, exclude_link_types).select(S.SRC_ID, S.DST_ID)
    edges = (
        followed.join(vertices.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(VERTEX).alias(SRC)), on=S.SRC_ID,
                      how="inner")
        .join(vertices.select(F.col(S.PAGE_ID).alias(S.DST_ID), F.col(VERTEX).alias(DST)), on=S.DST_ID, how="inner")
        .select(SRC, DST)
    )
    return RankGraph(vertices=vertices, edges=edges, n=n)
