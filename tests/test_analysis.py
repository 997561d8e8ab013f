"""Indexes, host/domain graphs, domain authority, link farms, syndication networks and page flags.

The hand-built crawl below is small enough to check every expectation by hand:

* farm.com's four pages send 20 external links: 19 to target.com, 1 to other.org -> link farm;
* a-news.com and b-news.net link 50 times each way (plus 20 links each to wiki.org) -> one
  syndication network, and at 50/70 neither is a link farm;
* site.com/lonely has one in-link, from other.org -> the only orphan (every other non-root page
  has a link from its own site; roots are entry points);
* target.com/t1's incoming anchors: "Best  Widgets" and "best widgets " (one anchor, 2 links),
  "Widgets »" from its own root, one boilerplate "Click Here" and one empty anchor.
"""

from __future__ import annotations

import contextlib
import io
import json

import networkx as nx
import numpy as np
import pytest
from pyspark.sql import functions as F

from linkgraph.cli import main
from linkgraph.explore import lookup
from linkgraph.graph.domains import domain_rank_graph
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import VERTEX
from linkgraph.steps import analyze, compress, scores
from steps_support import ingest_step, pagerank_step


def _edge(src: str, dst: str, anchor: str | None = None, context: str | None = None) -> dict:
    return {"from_url": f"http://{src}", "to_url": f"http://{dst}", "anchor_text": anchor, "context_window": context}


def hand_built_crawl() -> list[dict]:
    edges = []
    farm = [f"farm.com/p{i}" for i in range(1, 5)]
    targets = [f"target.com/t{i}" for i in range(1, 6)]
    edges += [_edge("farm.com/", p, "farm page") for p in farm]
    t1_anchors = {"farm.com/p1": "Best  Widgets", "farm.com/p2": "best widgets ", "farm.com/p3": "Click Here",
                  "farm.com/p4": ""}
    for p in farm:
        for t in targets:
            if (p, t) == ("farm.com/p4", "target.com/t5"):
                edges.append(_edge(p, "other.org/x", "other"))
            else:
                anchor = t1_anchors[p] if t == "target.com/t1" else f"widget {t[-1]}"
                edges.append(_edge(p, t, anchor, f"... {anchor} from {p} ..." if p == "farm.com/p1" else None))
    edges += [_edge("target.com/", t, "Widgets »" if t.endswith("t1") else "item") for t in targets]

    a_pages = [f"a-news.com/a{i}" for i in range(1, 11)]
    b_pages = [f"b-news.net/b{i}" for i in range(1, 11)]
    edges += [_edge("a-news.com/", a, "story") for a in a_pages]
    edges += [_edge("b-news.net/", b, "story") for b in b_pages]
    edges += [_edge(a, b, "partner story") for a in a_pages for b in b_pages[:5]]
    edges += [_edge(b, a, "partner story") for b in b_pages for a in a_pages[:5]]
    edges += [_edge(a, w, "wiki") for a in a_pages for w in ("wiki.org/w1", "wiki.org/w2")]
    edges += [_edge(b, w, "wiki") for b in b_pages for w in ("wiki.org/w1", "wiki.org/w2")]
    edges += [_edge("wiki.org/", w, "article") for w in ("wiki.org/w1", "wiki.org/w2")]

    edges += [_edge("site.com/", "site.com/a", "a"), _edge("site.com/a", "site.com/b", "b"),
              _edge("other.org/", "other.org/x", "x"), _edge("other.org/x", "site.com/lonely", "lonely"),
              _edge("other.org/x", "site.com/", "site")]
    return edges


@pytest.fixture(scope="module")
def analyzed(spark, tmp_path_factory):
    work = tmp_path_factory.mktemp("analysis")
    path = work / "edges.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in hand_built_crawl()))
    config = config_from_dict({"lake": {"path": str(work / "lake")}})
    ingest_step(spark, config, str(path), "jsonl")
    analyze.run(StepContext.create(spark, config), analyze.Params())
    pagerank_step(spark, config)
    # `linkgraph analyze` after a rank run: the analysis is up to date, the page flags are written
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["analyze", "--lake", str(work / "lake")]) == 0
    assert "analyze: tables already built from these inputs" in printed.getvalue()
    assert "flags: page_flags of rank run" in printed.getvalue()
    report = scores.run(StepContext.create(spark, config), scores.Params(seeds="http://site.com/"))
    return config, Lake(spark, config.lake), report


def _rows(lake: Lake, table: str, *columns: str) -> set[tuple]:
    return {tuple(r) for r in lake.read(table).select(*columns).collect()}


def test_link_farm_is_exactly_the_domain_sending_19_of_20_links_to_one_target(analyzed):
    _, lake, _ = analyzed
    assert _rows(lake, S.LINK_FARMS_TABLE, S.DOMAIN, S.TARGET_DOMAIN, "links_to_target", "external_out_links",
                 "share") == {("com.farm", "com.target", 19, 20, 0.95)}


def test_pair_linking_50_times_each_way_forms_one_syndication_network(analyzed):
    _, lake, _ = analyzed
    assert _rows(lake, S.SYNDICATION_NETWORKS_TABLE, S.NETWORK_ID, S.DOMAIN, "network_size") == {
        ("com.a-news", "com.a-news", 2), ("com.a-news", "net.b-news", 2)}
    assert _rows(lake, S.DOMAIN_LINKS_TABLE, S.SRC_DOMAIN, S.DST_DOMAIN, S.LINKS_COUNT, "src_pages", "dst_pages") >= {
        ("com.a-news", "net.b-news", 50, 10, 5), ("net.b-news", "com.a-news", 50, 10, 5),
        ("com.farm", "com.target", 19, 4, 5), ("com.farm", "org.other", 1, 1, 1)}


def test_page_flags_match_the_written_expectation(analyzed, spark):
    _, lake, report = analyzed
    flags = lake.read(S.PAGE_FLAGS_TABLE)
    assert {r[S.RUN_ID] for r in flags.select(S.RUN_ID).distinct().collect()} == {report.flags_run}
    assert {r[S.URL] for r in flags.where(S.ORPHAN).collect()} == {"http://site.com/lonely"}
    farm_pages = {r[S.URL] for r in flags.where(F.col(S.LINK_FARM_TARGET) == "com.target").collect()}
    assert farm_pages == {"http://farm.com/"} | {f"http://farm.com/p{i}" for i in range(1, 5)}
    assert flags.where(S.LINK_FARM_DOMAIN).count() == 5
    networks = {(r[S.URL].split("/")[2], r[S.SYNDICATION_NETWORK]) for r in flags.where(F.col(S.SYNDICATION_NETWORK).isNotNull()).collect()}
    assert networks == {("a-news.com", "com.a-news"), ("b-news.net", "com.a-news")}
    # important: rank above mean + 2 sigma of the same run, recomputed here with numpy
    ranks = {r[S.URL]: r[S.RANK] for r in lake.read(S.PAGERANK_TABLE).collect()}
    values = np.array(list(ranks.values()))
    expected = {url for url, rank in ranks.items() if rank > values.mean() + 2 * values.std()}
    assert expected and {r[S.URL] for r in flags.where(S.IMPORTANT).collect()} == expected


def test_host_and_domain_aggregates(analyzed):
    _, lake, _ = analyzed
    farm = lake.read(S.DOMAINS_TABLE).where(F.col(S.DOMAIN) == "com.farm").first().asDict()
    assert farm == {S.DOMAIN: "com.farm", "hosts": 1, "pages": 5, "out_links": 24, "in_links": 4, "internal_links": 4,
                    "external_out_links": 20, "external_in_links": 0, S.LINKING_DOMAINS: 0}
    target = lake.read(S.HOSTS_TABLE).where(F.col(S.REV_HOST) == "com.target").first().asDict()
    assert target == {S.REV_HOST: "com.target", S.DOMAIN: "com.target", "pages": 6, "out_links": 5, "in_links": 24,
                      "internal_links": 5, "external_out_links": 0, "external_in_links": 19, S.LINKING_DOMAINS: 1}
    authority = {r[S.DOMAIN]: r for r in lake.read(S.DOMAIN_AUTHORITY_TABLE).collect()}
    assert set(authority) == {"com.farm", "com.target", "com.a-news", "net.b-news", "org.wiki", "com.site", "org.other"}
    assert sum(r[S.AUTHORITY] for r in authority.values()) == pytest.approx(1.0, abs=1e-9)
    assert max(authority.values(), key=lambda r: r[S.AUTHORITY])[S.AUTHORITY_SCORE] == 10.0
    assert authority["com.farm"][S.AUTHORITY_SCORE] == 0.0  # no in-links: the bottom
    assert all(0.0 <= r[S.DOMAIN_AUTHORITY] <= 1.0 for r in authority.values())


def test_anchor_index_normalises_counts_and_drops_boilerplate(analyzed, spark):
    config, lake, _ = analyzed
    t1 = lake.read(S.PAGES_TABLE).where(F.col(S.URL) == "http://target.com/t1").first()[S.PAGE_ID]
    row = lake.read(S.ANCHOR_INDEX_TABLE).where(F.col(S.PAGE_ID) == t1).first()
    assert [tuple(e) for e in row[S.ANCHORS]] == [
        ("best widgets", 2, 1, "... Best  Widgets from farm.com/p1 ..."),
        ("widgets", 1, 1, None),
    ]
    assert (row["distinct_anchors"], row["anchored_links"], row["empty_anchors"], row["boilerplate_anchors"]) == (2, 3, 1, 1)
    anchors = lookup.links(StepContext.create(spark, config), "anchors", "HTTP://Target.com/t1#top").collect()
    assert [r[S.ANCHOR] for r in anchors] == ["best widgets", "widgets"]


def test_forward_and_reverse_lookups(analyzed, spark, capsys):
    config, _, _ = analyzed
    out = [r[S.URL] for r in lookup.links(StepContext.create(spark, config), "out", "http://other.org/x").collect()]
    assert sorted(out) == ["http://site.com/", "http://site.com/lonely"]
    assert main(["links", "in", "http://target.com/t5", "--lake", config.lake.path]) == 0
    assert capsys.readouterr().out.split() == [f"http://farm.com/p{i}" for i in range(1, 4)] + ["http://target.com/"]
    assert main(["links", "in", "http://nowhere.example/", "--lake", config.lake.path]) == 2
    capsys.readouterr()
    compress.run(StepContext.create(spark, config), compress.Params())
    assert main(["links", "in", "http://target.com/t5", "--compressed", "--lake", config.lake.path]) == 0
    assert capsys.readouterr().out.split() == [f"http://farm.com/p{i}" for i in range(1, 4)] + ["http://target.com/"]
    assert main(["links", "out", "http://other.org/x", "--compressed", "--lake", config.lake.path]) == 0
    assert sorted(capsys.readouterr().out.split()) == ["http://site.com/", "http://site.com/lonely"]


def test_rerun_with_same_inputs_writes_nothing(analyzed, spark):
    config, lake, _ = analyzed
    versions = {t: lake.version(t) for t in (S.HOSTS_TABLE, S.FORWARD_INDEX_TABLE, S.DOMAIN_AUTHORITY_TABLE)}
    again = analyze.run(StepContext.create(spark, config), analyze.Params())
    assert again.up_to_date
    assert {t: lake.version(t) for t in versions} == versions


def test_links_in_on_hollins_lists_the_same_sources_as_a_filter_on_links(spark, hollins_lake, capsys):
    """The look-ups' three index tables, built from the real crawl as ``analyze`` builds them (its
    host and domain tables are not needed here)."""
    config, _ = hollins_lake
    lake = Lake(spark, config.lake)
    links, pages = lake.read(S.LINKS_TABLE), lake.read(S.PAGES_TABLE)
    for table, rows in analyze.index_tables(links, pages, config.analysis).items():
        T.declaration(table).overwrite(lake, rows)
    busiest = links.groupBy(S.DST_ID).count().orderBy(F.desc("count"), S.DST_ID).first()[S.DST_ID]
    url = pages.where(F.col(S.PAGE_ID) == busiest).first()[S.URL]
    expected = {r[S.URL] for r in links.where(F.col(S.DST_ID) == busiest)
                .join(pages, links[S.SRC_ID] == pages[S.PAGE_ID]).select(S.URL).collect()}
    assert main(["links", "in", url, "--lake", config.lake.path, "--limit", "100000"]) == 0
    printed = capsys.readouterr().out.split()
    assert len(printed) == len(expected) > 50
    assert set(printed) == expected


def test_polblogs_domain_authority_keeps_blogspot_subdomains_apart(spark, polblogs_lake):
    config = polblogs_lake
    analyze.run(StepContext.create(spark, config), analyze.Params())
    authority = Lake(spark, config.lake).read(S.DOMAIN_AUTHORITY_TABLE)
    blogspot = authority.where(F.col(S.DOMAIN).startswith("com.blogspot."))
    assert authority.where(F.col(S.DOMAIN) == "com.blogspot").count() == 0
    assert blogspot.count() > 300
    top = authority.orderBy("authority_position").limit(10).collect()
    assert top[0][S.AUTHORITY_SCORE] == 10.0
    assert any(r[S.DOMAIN].startswith("com.blogspot.") for r in top)


# --- bounded rows: a hub larger than analysis.max_list_entries ------------------------------------

HUB, MAX_ENTRIES = 100, 4


def _hub_links(spark):
    """Page 100 has in-links from pages 1..10 (anchors "a0".."a5" with 5, 1, 1, 1, 1, 1 links)
    and page 1 links to 100 and to 201..205."""
    anchors = ["a0"] * 5 + ["a1", "a2", "a3", "a4", "a5"]
    rows = [(src, HUB, anchors[src - 1], None) for src in range(1, 11)]
    rows += [(1, dst, "x", None) for dst in range(201, 206)]
    return spark.createDataFrame(rows, f"{S.SRC_ID} long, {S.DST_ID} long, {S.ANCHOR_TEXT} string, "
                                       f"{S.CONTEXT_WINDOW} string")


def test_index_rows_of_a_hub_hold_at_most_max_list_entries_ids(spark):
    from pyspark.testing import assertDataFrameEqual

    from linkgraph.graph import indexes as X

    links = _hub_links(spark)
    reverse = X.reverse_index(links, MAX_ENTRIES).where(F.col(S.PAGE_ID) == HUB)
    assertDataFrameEqual(reverse, spark.createDataFrame(
        [(HUB, 0, [1, 2, 3, 4], 10), (HUB, 1, [5, 6, 7, 8], 10), (HUB, 2, [9, 10], 10)],
        reverse.schema))
    forward = X.forward_index(links, MAX_ENTRIES).where(F.col(S.PAGE_ID) == 1)
    assertDataFrameEqual(forward, spark.createDataFrame(
        [(1, 0, [100, 201, 202, 203], 6), (1, 1, [204, 205], 6)], forward.schema))
    pages = spark.createDataFrame([(i, "x.com") for i in range(1, 11)], f"{S.PAGE_ID} long, {S.REGISTERED_DOMAIN} string")
    row = X.anchor_index(links, pages, 50, [], MAX_ENTRIES).where(F.col(S.PAGE_ID) == HUB).first()
    assert [(e[S.ANCHOR], e[S.LINKS_COUNT]) for e in row[S.ANCHORS]] == [("a0", 5), ("a1", 1), ("a2", 1), ("a3", 1)]
    assert (row["distinct_anchors"], row["anchored_links"]) == (6, 10)


def test_links_in_pages_through_every_chunk_of_a_hub(spark, tmp_path, capsys):
    from linkgraph.graph import indexes as X

    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    lake = Lake(spark, config.lake)
    links = _hub_links(spark)
    urls = {i: f"http://example.com/p{i}" for i in [*range(1, 11), HUB, *range(201, 206)]}
    lake.overwrite(S.PAGES_TABLE, spark.createDataFrame(list(urls.items()), f"{S.PAGE_ID} long, {S.URL} string"))
    lake.overwrite(S.FORWARD_INDEX_TABLE, X.forward_index(links, MAX_ENTRIES))
    # chunks written in reverse order: the answer's order comes from (chunk, position), not the files
    lake.overwrite(S.REVERSE_INDEX_TABLE, X.reverse_index(links, MAX_ENTRIES).orderBy(F.desc(S.CHUNK)).coalesce(1))
    lake.overwrite(S.ANCHOR_INDEX_TABLE, spark.createDataFrame([], S.ANCHOR_INDEX))
    assert main(["links", "in", urls[HUB], "--lake", config.lake.path, "--limit", "100"]) == 0
    assert capsys.readouterr().out.split() == [urls[i] for i in range(1, 11)]
    assert main(["links", "in", urls[HUB], "--lake", config.lake.path, "--limit", "6"]) == 0
    captured = capsys.readouterr()
    assert captured.out.split() == [urls[i] for i in range(1, 7)]
    assert "more than 6 rows" in captured.err


# (source domain, target domain, followed links, followed distinct linking pages); `net.d` has only
# unfollowed links to `com.a` (left out of the authority graph), `org.e` links nowhere
AUTHORITY_DOMAIN_LINKS = [("com.a", "com.b", 12, 2), ("com.a", "com.c", 1, 1), ("com.b", "com.c", 4, 4),
                          ("com.c", "com.a", 3, 1), ("com.c", "org.e", 6, 3), ("net.d", "com.a", 0, 0),
                          ("net.d", "com.c", 2, 2)]


@pytest.mark.parametrize(("weight", "index"), [("linking_pages", 3), ("links", 2), ("none", None)])
def test_domain_authority_weights_equal_networkx_weighted_pagerank(spark, weight, index):
    """``analysis.authority_weight`` (``analyze --authority-weight``): each followed domain pair
    weighted by its linking pages, its links, or once; PageRank against networkx's weighted one."""
    domains = sorted({d for s, t, _, _ in AUTHORITY_DOMAIN_LINKS for d in (s, t)})
    links = spark.createDataFrame([(s, t, links, links, pages, pages, 1) for s, t, links, pages in AUTHORITY_DOMAIN_LINKS],
                                  S.DOMAIN_LINKS)
    graph, index_df = domain_rank_graph(spark.createDataFrame([(d,) for d in domains], f"{S.DOMAIN} string"),
                                        links, weight)
    result = BlockEngine(spark, RankParams(tol=1e-12, max_iter=1000)).run(graph)
    got = {r[S.DOMAIN]: r[S.RANK] for r in result.ranks.join(index_df, on=VERTEX).collect()}
    expected_graph = nx.DiGraph()
    expected_graph.add_nodes_from(domains)
    expected_graph.add_weighted_edges_from((s, t, 1 if index is None else e[index])
                                           for e in AUTHORITY_DOMAIN_LINKS for s, t in [e[:2]] if e[2] > 0)
    assert got == pytest.approx(nx.pagerank(expected_graph, alpha=0.85, tol=1e-14, max_iter=1000), abs=1e-8)
