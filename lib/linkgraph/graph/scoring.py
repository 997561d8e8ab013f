"""Hop depth, seed scores, scope decisions and the crawl frontier (pure DataFrame functions).

    seed_score  = w_in·in_links_norm + w_da·domain_authority + w_sp·sitemap_priority + w_d·depth_term
    scope_score = domain_affinity × depth_factor,          in_scope = scope_score ≥ in_scope_threshold

* ``in_links``: distinct pages linking to the page (every link type); ``in_links_norm`` =
  log1p(in_links) / log1p(max in_links over all pages), 0 when no page has an in-link.
* ``domain_authority``: the page's registered domain in ``domain_authority`` ([0, 1]), blended
  with ``external_authority`` when that table knows the domain (or the page's host):
  (1 − w_ext)·in-house + w_ext·external; 0 when neither knows it.
* ``sitemap_priority``: the page's sitemap entry (0.5 when the entry gives none, the protocol's
  default); ``unlisted_priority`` (default 0) when no sitemap lists it.
* ``hop_depth``: fewest links from a seed page (seeds 0), by breadth-first frontier expansion over
  every link, at most min(``hop_limit``, ``max_depth``) rounds (:func:`hop_rounds`: past
  ``max_depth`` the depth factor, hence the scope score, is 0 whatever the depth); null when
  unreachable within that.  ``depth_term`` = 1/(hop_depth + 1) (0 when null, so a page deeper than
  ``max_depth`` gets 0 rather than a term below 1/(max_depth + 2)).
* ``domain_affinity`` (strategy ``linked_domains``): 1.0 on a seed's host, 0.8 elsewhere on a seed's
  registered domain, 0.3 on a domain one hop from a seed domain in ``domain_links``, 0.1 further
  or unreachable.  Strategy ``registered_domain`` gives 0 beyond the seeds' domains, ``host`` 0
  beyond the seeds' hosts.  ``depth_factor`` = max(0, 1 − hop_depth / max_depth), 0 when null.

Without seed URLs there is no focus to measure scope from (:func:`unscoped_columns`): hop_depth
and domain_hops are null (depth_term 0), and domain_affinity, depth_factor and scope_score are 1,
so every page is in scope and the frontier is every uncrawled page in priority order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow.compute as pc
import scipy.sparse as sparse
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StructField, StructType

from linkgraph.graph.small import (
    ONE_TASK_EDGES,
    arrow_table,
    column_values,
    factorized,
    fits_one_task,
    record_batches,
)
from linkgraph.lake import checkpoints
from linkgraph.lake import schemas as S
from linkgraph.lake.rows import one_row

NODE, DEPTH = "node", "depth"


# A frontier of at most this many nodes is broadcast to the edge partitions (8 bytes a node).
BROADCAST_FRONTIER = 2_000_000
IS_SEED = "_is_seed"


@dataclass(frozen=True)
class Search:
    """A breadth-first search's result: (node, depth) rows and the expansion rounds it ran."""

    depths: DataFrame
    rounds: int


def frontier_search(edges: DataFrame, seeds: DataFrame, limit: int,
                    broadcast_below: int = BROADCAST_FRONTIER,
                    progress: Callable[[int, int], None] | None = None,
                    one_task_below: int = ONE_TASK_EDGES) -> Search:
    """(node, depth) for every node within ``limit`` edges of a seed; ``edges`` is (src, dst),
    ``seeds`` is (node).  One round per depth: the frontier's successors not yet visited become
    the next frontier; it stops when the frontier is empty or after ``limit`` rounds.
    ``progress(depth, reached)`` is called after each round.

    At most ``one_task_below`` edges: every round in one task (:func:`_search_in_one_task`), the
    same depths and rounds.  Otherwise the edges are shuffled once, hash-partitioned by source and
    cached, so a round moves only the frontier: broadcast to every edge partition while it has
    fewer than ``broadcast_below`` nodes, else shuffled to the edges' partitioning.  Each round's
    frontier and visited set are checkpointed reliably (``linkgraph.lake.checkpoints``: the plan
    does not grow with the depth, and a lost executor costs a re-read, not the search); a round's
    cuts replace the previous ones."""
    if fits_one_task(edges, one_task_below):
        return _search_in_one_task(edges, seeds, limit, progress)
    by_source = edges.select("src", "dst").repartition("src").persist(StorageLevel.MEMORY_AND_DISK)
    visited = checkpoints.cut(seeds.select(NODE).distinct().withColumn(DEPTH, F.lit(0)))
    frontier, size, rounds = visited, visited.count(), 0
    try:
        for depth in range(1, limit + 1):
            if size == 0:
                break
            reached = checkpoints.cut(_next_frontier(by_source, frontier, visited, depth, size < broadcast_below))
            rounds += 1
            size = reached.count()
            if size:
                visited = _replace(visited, checkpoints.cut(visited.unionByName(reached)), keep=frontier)
            frontier = _replace(frontier, reached, keep=visited)
            if progress:
                progress(depth, size)
        _replace(frontier, visited, keep=visited)   # the last frontier: read by nothing now
    finally:
        by_source.unpersist()
    return Search(visited, rounds)


def _search_in_one_task(edges: DataFrame, seeds: DataFrame, limit: int,
                        progress: Callable[[int, int], None] | None) -> Search:
    """:func:`frontier_search` of a small graph: the edges and seeds in one task, the rounds on
    arrays there (:func:`_depths_of_batches`), the depths checkpointed; the driver reads one row
    per depth (the nodes reached, for the rounds and ``progress``)."""
    node_type = seeds.schema[NODE].dataType
    rows = edges.select("src", "dst", F.lit(False).alias(IS_SEED)).unionByName(
        seeds.select(F.col(NODE).alias("src"), F.lit(None).cast(edges.schema["dst"].dataType).alias("dst"),
                     F.lit(True).alias(IS_SEED)))
    schema = StructType([StructField(NODE, node_type, True), StructField(DEPTH, IntegerType(), False)])
    depths = checkpoints.cut(rows.coalesce(1).mapInArrow(
        lambda batches: _depths_of_batches(batches, limit, schema), schema))
    reached: dict[int, int] = {row[DEPTH]: row["count"] for row in depths.groupBy(DEPTH).count().collect()}
    # a round runs while the previous depth reached a node: one more than the deepest, at most ``limit``
    rounds = min(limit, max(reached) + 1) if reached else 0
    if progress:
        for depth in range(1, rounds + 1):
            progress(depth, reached.get(depth, 0))
    return Search(depths, rounds)


def _depths_of_batches(batches: Iterator[Any], limit: int, schema: StructType) -> Iterator[Any]:
    """The breadth-first rounds over one task's (src, dst, is_seed) rows: (node, depth) of every
    node within ``limit`` edges of a seed, seeds at depth 0 (a null seed too, never expanded)."""
    table = arrow_table(batches)
    if table is None:
        return
    is_seed = table.column(IS_SEED)
    edges = table.filter(pc.invert(is_seed))
    seeds = table.filter(is_seed).column("src")
    (src, dst, seed_codes), nodes = factorized(column_values(edges.column("src")),
                                               column_values(edges.column("dst")), column_values(seeds))
    n, m = len(nodes), len(src)
    successors = sparse.csr_matrix((np.ones(m, dtype=bool), (src, dst)), shape=(n, n))
    depth = np.full(n, -1, dtype=np.int32)
    frontier = np.unique(seed_codes)
    depth[frontier] = 0
    for d in range(1, limit + 1):
        if frontier.size == 0:
            break
        reached = np.unique(successors[frontier].indices)   # the frontier's rows of the CSR matrix
        frontier = reached[depth[reached] < 0]
        depth[frontier] = d
    found = np.flatnonzero(depth >= 0)
    node_values, depth_values = list(nodes.take(found)), list(depth[found])
    if seeds.null_count:
        node_values.append(None)
        depth_values.append(0)
    yield from record_batches(schema, node_values, depth_values)


def _next_frontier(by_source: DataFrame, frontier: DataFrame, visited: DataFrame, depth: int,
                   broadcast: bool) -> DataFrame:
    """The successors of ``frontier`` not in ``visited``, at ``depth``."""
    sources = frontier.select(F.col(NODE).alias("src"))
    sources = F.broadcast(sources) if broadcast else sources
    return (
        by_source.join(sources, on="src").select(F.col("dst").alias(NODE)).distinct()
        .join(visited, on=NODE, how="left_anti")
        .withColumn(DEPTH, F.lit(depth))
    )


def _replace(old: DataFrame, new: DataFrame, keep: DataFrame) -> DataFrame:
    """``new``, once the checkpoint ``old`` reads is deleted (unless ``keep`` reads the same one:
    the seeds are the first frontier and the first visited set)."""
    if old is not new and old is not keep:
        checkpoints.drop(old)
    return new


def breadth_first_depths(edges: DataFrame, seeds: DataFrame, limit: int) -> DataFrame:
    """The (node, depth) rows of :func:`frontier_search`."""
    return frontier_search(edges, seeds, limit).depths


def hop_search(links: DataFrame, seed_pages: DataFrame, limit: int) -> Search:
    """(page_id, hop_depth) of every page reachable from ``seed_pages`` (page_id) in ≤ ``limit``
    links, and the rounds the search ran (≤ ``limit``)."""
    edges = links.select(F.col(S.SRC_ID).alias("src"), F.col(S.DST_ID).alias("dst"))
    search = frontier_search(edges, seed_pages.select(F.col(S.PAGE_ID).alias(NODE)), limit)
    depths = search.depths.select(F.col(NODE).alias(S.PAGE_ID), F.col(DEPTH).cast("int").alias(S.HOP_DEPTH))
    return Search(depths, search.rounds)


def hop_depths(links: DataFrame, seed_pages: DataFrame, limit: int) -> DataFrame:
    """The (page_id, hop_depth) rows of :func:`hop_search`."""
    return hop_search(links, seed_pages, limit).depths


def hop_rounds(hop_limit: int, max_depth: int) -> int:
    """Rounds of the hop-depth search: depths past ``max_depth`` leave the scope score at 0."""
    return min(hop_limit, max_depth)


def domain_hops(domain_links: DataFrame, seed_domains: DataFrame) -> DataFrame:
    """(domain, domain_hops) for seed domains (0) and the domains they link to (1); others are
    two or more hops away, which is all the affinity table distinguishes."""
    edges = domain_links.select(F.col(S.SRC_DOMAIN).alias("src"), F.col(S.DST_DOMAIN).alias("dst"))
    hops = breadth_first_depths(edges, seed_domains.select(F.col(S.DOMAIN).alias(NODE)), limit=1)
    return hops.select(F.col(NODE).alias(S.DOMAIN), F.col(DEPTH).cast("int").alias("domain_hops"))


def in_link_counts(links: DataFrame) -> DataFrame:
    """(page_id, in_links): distinct linking pages (``links`` holds one row per page pair)."""
    return links.groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).agg(F.count("*").alias("in_links"))


def blended_authority(pages_nodes: DataFrame, in_house: DataFrame, external: DataFrame | None,
                      external_weight: float) -> DataFrame:
    """(page_id, domain_authority): in-house authority of the page's domain, blended with an
    external value for its domain or host where one exists."""
    scored = pages_nodes.join(
        in_house.select(S.DOMAIN, F.col(S.DOMAIN_AUTHORITY).alias("_in_house")), on=S.DOMAIN, how="left")
    if external is None or external_weight == 0.0:
        return scored.select(S.PAGE_ID, F.coalesce("_in_house", F.lit(0.0)).alias(S.DOMAIN_AUTHORITY))
    by_domain = external.select(F.col(S.DOMAIN), F.col(S.AUTHORITY).alias("_ext_domain"))
    by_host = external.select(F.col(S.DOMAIN).alias(S.REV_HOST), F.col(S.AUTHORITY).alias("_ext_host"))
    scored = scored.join(by_domain, on=S.DOMAIN, how="left").join(by_host, on=S.REV_HOST, how="left")
    ext = F.coalesce("_ext_host", "_ext_domain")
    in_house_value = F.coalesce("_in_house", F.lit(0.0))
    blended = (1 - external_weight) * in_house_value + external_weight * ext
    value = F.when(ext.isNull(), in_house_value).otherwise(blended)
    return scored.select(S.PAGE_ID, value.alias(S.DOMAIN_AUTHORITY))


def seed_score_terms(
    pages: DataFrame, in_links: DataFrame, authority: DataFrame, sitemaps: DataFrame | None,
    depths: DataFrame, unlisted_priority: float,
) -> DataFrame:
    """Every page with its four seed-score terms (see the module docstring)."""
    max_in = one_row(in_links.agg(F.max("in_links")))[0] or 0
    in_links_norm = (F.log1p(F.col("in_links")) / F.log1p(F.lit(float(max_in)))) if max_in > 0 else F.lit(0.0)
    scored = (
        pages.select(S.PAGE_ID, S.URL)
        .join(in_links, on=S.PAGE_ID, how="left").fillna(0, subset=["in_links"])
        .withColumn("in_links_norm", in_links_norm)
        .join(authority, on=S.PAGE_ID, how="left").fillna(0.0, subset=[S.DOMAIN_AUTHORITY])
        .join(depths, on=S.PAGE_ID, how="left")
        .withColumn("depth_term", F.coalesce(F.lit(1.0) / (F.col(S.HOP_DEPTH) + 1), F.lit(0.0)))
    )
    if sitemaps is None:
        return scored.withColumn("sitemap_priority", F.lit(float(unlisted_priority)))
    listed = sitemaps.select(S.URL, F.col(S.PRIORITY).alias("sitemap_priority"))
    return scored.join(listed, on=S.URL, how="left").fillna(float(unlisted_priority), subset=["sitemap_priority"])


def seed_score(weights: dict[str, float]) -> Column:
    return (
        F.lit(weights["in_links"]) * F.col("in_links_norm")
        + F.lit(weights["domain_authority"]) * F.col(S.DOMAIN_AUTHORITY)
        + F.lit(weights["sitemap_priority"]) * F.col("sitemap_priority")
        + F.lit(weights["depth"]) * F.col("depth_term")
    )


def domain_affinity(strategy: str, affinity: dict[str, float]) -> Column:
    """Affinity from ``_seed_host`` (page on a seed host) and ``domain_hops`` (0 = a seed's
    registered domain, 1 = linked from one, null = further)."""
    on_seed_host = F.col("_seed_host")
    hops = F.col("domain_hops")
    if strategy == "host":
        return F.when(on_seed_host, affinity["seed_host"]).otherwise(0.0)
    same_domain = F.when(on_seed_host, affinity["seed_host"]).when(hops == 0, affinity["registered_domain"])
    if strategy == "registered_domain":
        return same_domain.otherwise(0.0)
    return same_domain.when(hops == 1, affinity["one_hop"]).otherwise(affinity["farther"])


def scope_columns(scored: DataFrame, nodes: DataFrame, seed_hosts: list[str], hops: DataFrame,
                  strategy: str, affinity: dict[str, float], max_depth: int, threshold: float) -> DataFrame:
    """Adds domain_hops, domain_affinity, depth_factor, scope_score and in_scope."""
    depth_factor = F.coalesce(F.greatest(F.lit(0.0), 1.0 - F.col(S.HOP_DEPTH) / F.lit(float(max_depth))), F.lit(0.0))
    return (
        scored.join(nodes.select(S.PAGE_ID, S.REV_HOST, S.DOMAIN), on=S.PAGE_ID, how="left")
        .withColumn("_seed_host",
                    F.coalesce(F.col(S.REV_HOST).isin(*seed_hosts), F.lit(False)) if seed_hosts else F.lit(False))
        .join(hops, on=S.DOMAIN, how="left")
        .withColumn("domain_affinity", domain_affinity(strategy, affinity).cast("double"))
        .withColumn("depth_factor", depth_factor)
        .withColumn(S.SCOPE_SCORE, F.col("domain_affinity") * F.col("depth_factor"))
        .withColumn(S.IN_SCOPE, F.col(S.SCOPE_SCORE) >= F.lit(threshold))
    )


def unscoped_columns(scored: DataFrame) -> DataFrame:
    """The scope columns of a run without seeds: domain_hops null; domain_affinity, depth_factor
    and scope_score 1; every page in scope."""
    return (
        scored.withColumn("domain_hops", F.lit(None).cast("int"))
        .withColumn("domain_affinity", F.lit(1.0))
        .withColumn("depth_factor", F.lit(1.0))
        .withColumn(S.SCOPE_SCORE, F.lit(1.0))
        .withColumn(S.IN_SCOPE, F.lit(True))
    )


def frontier_candidates(seed_scores: DataFrame, crawled: DataFrame) -> DataFrame:
    """In-scope pages not yet crawled (``crawled``: page_id of pages fetched already)."""
    return seed_scores.where(F.col(S.IN_SCOPE)).join(crawled, on=S.PAGE_ID, how="left_anti")


def sitemap_only_candidates(sitemaps: DataFrame, pages: DataFrame, seed_scores: DataFrame, weights: dict[str, float],
                            max_depth: int, threshold: float, seeded: bool = True) -> DataFrame:
    """In-scope URLs that a sitemap lists but no crawled link has reached (absent from ``pages``).

    A sitemap entry counts as a link from its host's root page (``scheme://host/``): its
    hop_depth is the root's plus one and it shares the root's domain authority and affinity; it
    has no in-links and its own sitemap priority.  URLs whose root page is not a scored page
    cannot be placed and are left out.  Rows have the seed-score columns and a null page_id.
    Without seeds (``seeded`` false) the depth factor is 1, as for every page (:func:`unscoped_columns`).
    """
    listed = sitemaps.join(pages.select(S.URL), on=S.URL, how="left_anti").select(
        S.URL, F.col(S.PRIORITY).alias("sitemap_priority"),
        F.regexp_extract(S.URL, r"^(https?://[^/]+/)", 1).alias("_root"))
    roots = seed_scores.select(F.col(S.URL).alias("_root"), F.col(S.HOP_DEPTH).alias("_root_depth"),
                               S.DOMAIN_AUTHORITY, "domain_hops", "domain_affinity")
    depth_factor = (F.coalesce(F.greatest(F.lit(0.0), 1.0 - F.col(S.HOP_DEPTH) / F.lit(float(max_depth))), F.lit(0.0))
                    if seeded else F.lit(1.0))
    scored = (
        listed.join(roots, on="_root", how="inner")
        .withColumn(S.HOP_DEPTH, (F.col("_root_depth") + 1).cast("int"))
        .withColumn("in_links", F.lit(0).cast("long"))
        .withColumn("in_links_norm", F.lit(0.0))
        .withColumn("depth_term", F.coalesce(F.lit(1.0) / (F.col(S.HOP_DEPTH) + 1), F.lit(0.0)))
        .withColumn(S.SEED_SCORE, seed_score(weights))
        .withColumn("depth_factor", depth_factor)
        .withColumn(S.SCOPE_SCORE, F.col("domain_affinity") * F.col("depth_factor"))
        .withColumn(S.IN_SCOPE, F.col(S.SCOPE_SCORE) >= F.lit(threshold))
        .withColumn(S.PAGE_ID, F.lit(None).cast("long"))
    )
    return scored.where(F.col(S.IN_SCOPE)).drop("_root", "_root_depth")
