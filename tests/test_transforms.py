"""The pure transforms behind analyze and scores, on tiny hand-built DataFrames with the expected
rows written out (no Delta, no step): link farms, syndication networks, hop depths, in-link counts
and the frontier."""

from __future__ import annotations

import pytest
from pyspark.sql import Row
from pyspark.testing import assertDataFrameEqual

from linkgraph.graph import domains as D
from linkgraph.graph import scoring as SC
from linkgraph.lake import schemas as S


def domain_links(spark, rows: list[tuple[str, str, int]]):
    """``domain_links`` rows from (src_domain, dst_domain, links); the other counts mirror links."""
    full = [(src, dst, n, n, n, n, n) for src, dst, n in rows]
    return spark.createDataFrame(full, S.DOMAIN_LINKS)


def test_link_farm_needs_more_than_the_share_to_one_target_and_enough_links(spark):
    links = domain_links(spark, [
        ("farm.com", "target.com", 19), ("farm.com", "other.com", 1),       # 19/20 = 0.95 > 0.9, 20 links
        ("edge.com", "target.com", 18), ("edge.com", "other.com", 2),       # 18/20 = 0.9: not more than 0.9
        ("small.com", "target.com", 5),                                     # share 1.0 but only 5 links
        ("spread.com", "a.com", 10), ("spread.com", "b.com", 10),
    ])
    farms = D.link_farms(links, share=0.9, min_links=20)
    expected = [Row(domain="farm.com", target_domain="target.com", links_to_target=19, external_out_links=20,
                    share=0.95)]
    assertDataFrameEqual(farms, expected)


@pytest.mark.slow
def test_components_in_one_task_equal_label_propagation(spark):
    """A graph of at most ``one_task_below`` edges gets its components in one task: the same
    (node, component) rows as min-label propagation, on random graphs of names and of ids with
    chains, self-loops, duplicate and reversed edges, an edge with a null end, and no edges."""
    import random

    rng = random.Random(3)
    cases = []
    for n, m in ((40, 25), (80, 60)):
        cases.append(("string", [(f"d{rng.randrange(n):02d}", f"d{rng.randrange(n):02d}") for _ in range(m)]))
    cases.append(("long", [(rng.randrange(50), rng.randrange(50)) for _ in range(30)]))
    cases.append(("string", [("b", "a"), ("c", "b"), ("a", "c"), ("x", None), ("y", "y")]))
    cases.append(("string", []))
    for node_type, edges in cases:
        df = spark.createDataFrame(edges, f"a {node_type}, b {node_type}")
        got = [sorted(D.connected_components(df, one_task_below=bound).collect(),
                      key=lambda r: (r[0] is None, r[0] or 0)) for bound in (0, 10_000)]
        assert got[0] == got[1], edges


def test_syndication_networks_join_reciprocal_heavy_pairs_into_components(spark):
    links = domain_links(spark, [
        ("x.com", "y.com", 3), ("y.com", "x.com", 4),      # reciprocal, both >= 3
        ("y.com", "z.com", 3), ("z.com", "y.com", 3),      # reciprocal: z joins x and y
        ("p.com", "q.com", 9), ("q.com", "p.com", 2),      # q sends too few back
        ("u.com", "v.com", 5),                             # one way only
    ])
    networks = D.syndication_networks(D.syndication_pairs(links, min_links=3))
    expected = [
        Row(network_id="x.com", domain="x.com", network_size=3, partners=["y.com"]),
        Row(network_id="x.com", domain="y.com", network_size=3, partners=["x.com", "z.com"]),
        Row(network_id="x.com", domain="z.com", network_size=3, partners=["y.com"]),
    ]
    assertDataFrameEqual(networks, expected)


def test_hop_depths_are_shortest_distances_up_to_the_limit(spark):
    # 0 -> 1 -> 2 -> 3 -> 4, a shortcut 0 -> 3, a cycle 2 -> 1, and 5 -> 0 (not reachable from 0)
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 3), (2, 1), (5, 0)]
    links = spark.createDataFrame(edges, f"{S.SRC_ID} long, {S.DST_ID} long")
    seeds = spark.createDataFrame([(0,)], f"{S.PAGE_ID} long")
    depths = SC.hop_depths(links, seeds, limit=2)
    assertDataFrameEqual(depths, [Row(page_id=0, hop_depth=0), Row(page_id=1, hop_depth=1),
                                  Row(page_id=3, hop_depth=1), Row(page_id=2, hop_depth=2),
                                  Row(page_id=4, hop_depth=2)])
    assertDataFrameEqual(SC.hop_depths(links, seeds, limit=0), [Row(page_id=0, hop_depth=0)])


def test_in_link_counts_and_frontier(spark):
    links = spark.createDataFrame([(1, 2), (3, 2), (2, 3)], f"{S.SRC_ID} long, {S.DST_ID} long")
    assertDataFrameEqual(SC.in_link_counts(links), [Row(page_id=2, in_links=2), Row(page_id=3, in_links=1)])

    scored = spark.createDataFrame([(1, True), (2, True), (3, False)], f"{S.PAGE_ID} long, {S.IN_SCOPE} boolean")
    crawled = spark.createDataFrame([(1,)], f"{S.PAGE_ID} long")
    assertDataFrameEqual(SC.frontier_candidates(scored, crawled), [Row(page_id=2, in_scope=True)])
