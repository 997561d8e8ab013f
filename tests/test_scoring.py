"""Sitemaps, seed scores, scope decisions and the frontier."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from conftest import shared_file
from linkgraph.graph.scoring import BROADCAST_FRONTIER, ONE_TASK_EDGES, domain_affinity, frontier_search, hop_rounds
from linkgraph.inputs.sitemaps import parse_lastmod, parse_sitemap
from linkgraph.lake import checkpoints
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.paths import local_path
from linkgraph.steps import analyze, scores, sitemaps
from steps_support import ingest_step

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*entries: str) -> bytes:
    return f'<?xml version="1.0"?><urlset {NS}>{"".join(entries)}</urlset>'.encode()


def by_kind(rows, kind):
    return [r for r in rows if r["kind"] == kind]


# --- sitemap parsing (no Spark) -----------------------------------------------------------------

def test_sitemap_entries_default_priority_and_reject_bad_values():
    rows = parse_sitemap(urlset(
        "<url><loc>https://Example.com/a#x</loc><lastmod>2026-03-01</lastmod><changefreq>Daily</changefreq></url>",
        "<url><loc>https://example.com/b</loc><priority>0.8</priority><lastmod>2026-03-01T10:00:00+02:00</lastmod></url>",
        "<url><loc>https://example.com/c</loc><priority>1.5</priority></url>",
        "<url><loc>https://example.com/d</loc><priority>high</priority></url>",
        "<url><loc>https://example.com/e</loc><lastmod>yesterday</lastmod></url>",
        "<url><loc>https://example.com/f</loc><changefreq>sometimes</changefreq></url>",
        "<url><priority>0.3</priority></url>",
        "<url><loc>ftp://example.com/g</loc></url>",
    ), "s.xml")
    entries = {r["url"]: (r["priority"], r["lastmod"], r["changefreq"]) for r in by_kind(rows, "entry")}
    assert entries == {
        "https://example.com/a": (0.5, parse_lastmod("2026-03-01"), "daily"),
        "https://example.com/b": (0.8, parse_lastmod("2026-03-01T08:00:00Z"), None),
    }
    assert [(r["reason"], r["raw"]) for r in by_kind(rows, "reject")] == [
        ("INVALID_VALUE", "https://example.com/c"), ("INVALID_VALUE", "https://example.com/d"),
        ("MALFORMED_TIMESTAMP", "https://example.com/e"), ("INVALID_VALUE", "https://example.com/f"),
        ("NULL_FIELD", None), ("UNSUPPORTED_SCHEME", "ftp://example.com/g"),
    ]


def test_sitemap_index_gzip_and_broken_files():
    index = f'<sitemapindex {NS}><sitemap><loc>https://x.example.com/s1.xml.gz</loc></sitemap></sitemapindex>'.encode()
    assert [r["raw"] for r in by_kind(parse_sitemap(index, "i.xml"), "child")] == ["https://x.example.com/s1.xml.gz"]
    gz = gzip.compress(urlset("<url><loc>https://x.example.com/p</loc></url>"))
    assert [r["url"] for r in parse_sitemap(gz, "s1.xml.gz")] == ["https://x.example.com/p"]
    truncated = parse_sitemap(gz[: len(gz) // 2], "cut.xml.gz")
    assert [r["reason"] for r in truncated] == ["MALFORMED_RECORD"]
    assert [r["reason"] for r in parse_sitemap(b"<urlset><url><loc>x</loc></urlset>", "bad.xml")] == ["MALFORMED_RECORD"]
    assert [r["reason"] for r in parse_sitemap(b"<html><body/></html>", "page.xml")] == ["MALFORMED_RECORD"]
    assert [r["reason"] for r in parse_sitemap(urlset("<url><loc>https://x.example.com/big</loc></url>"), "big.xml",
                                               max_bytes=50)] == ["OVERSIZED_FIELD"]


def test_xml_bombs_and_external_entities_are_rejected_unexpanded():
    laughs = b"""<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">
      <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
      <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
      <urlset><url><loc>&lol3;</loc></url></urlset>"""
    xxe = b"""<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>
      <urlset><url><loc>&e;</loc></url></urlset>"""
    for bomb in (laughs, xxe):
        rows = parse_sitemap(bomb, "bomb.xml")
        assert [r["reason"] for r in rows] == ["UNSAFE_XML"]
        assert "root:" not in (rows[0]["detail"] or "")
    zip_bomb = gzip.compress(b"<urlset>" + b" " * 5_000_000 + b"</urlset>")
    assert [r["reason"] for r in parse_sitemap(zip_bomb, "zip-bomb.xml.gz", max_bytes=1_000_000)] == ["OVERSIZED_FIELD"]


def test_real_spark_sitemap_excerpt_defaults_missing_priorities():
    rows = parse_sitemap(shared_file("sitemaps/spark.apache.org-sitemap-excerpt.xml").read_bytes(), "spark.xml")
    entries = by_kind(rows, "entry")
    assert len(entries) == len(rows) == 38
    assert sorted(r["priority"] for r in entries).count(1.0) == 27
    assert sorted(r["priority"] for r in entries).count(0.5) == 11
    assert all(r["lastmod"] is None and r["changefreq"] in ("daily", "weekly") for r in entries)


def test_domain_affinity_table_of_the_design(spark):
    rows = [(True, 0), (False, 0), (False, 1), (False, None)]  # seed host, registered domain, 1 hop, 2+ hops
    df = spark.createDataFrame(rows, "_seed_host boolean, domain_hops int")
    affinity = {"seed_host": 1.0, "registered_domain": 0.8, "one_hop": 0.3, "farther": 0.1}
    got = {strategy: [r[0] for r in df.select(domain_affinity(strategy, affinity)).collect()]
           for strategy in ("linked_domains", "registered_domain", "host")}
    assert got == {"linked_domains": [1.0, 0.8, 0.3, 0.1], "registered_domain": [1.0, 0.8, 0.0, 0.0],
                   "host": [1.0, 0.0, 0.0, 0.0]}


# --- seed scores and scope on a hand-built graph ---------------------------------------------------

def _edge(src, dst):
    return {"from_url": f"http://{src}", "to_url": f"http://{dst}"}


@pytest.fixture(scope="module")
def scored(spark, tmp_path_factory):
    """seed.com/ -> a -> target (depth 2; 3 in-links: a, x.org/1, x.org/2); seed.com/ -> p1..p9
    -> hub.net/h (9 in-links, the maximum); seed.com/ -> blog.seed.com/page and linked.org/page
    (depth 1); linked.org/page -> far.net/x (depth 2, two domain hops).  Sitemap: target 0.8."""
    work = tmp_path_factory.mktemp("scores")
    edges = [_edge("seed.com/", "seed.com/a"), _edge("seed.com/a", "seed.com/target"),
             _edge("x.org/1", "seed.com/target"), _edge("x.org/2", "seed.com/target"),
             _edge("seed.com/", "blog.seed.com/page"), _edge("seed.com/", "linked.org/page"),
             _edge("linked.org/page", "far.net/x")]
    edges += [_edge("seed.com/", f"seed.com/p{i}") for i in range(1, 10)]
    edges += [_edge(f"seed.com/p{i}", "hub.net/h") for i in range(1, 10)]
    (work / "edges.jsonl").write_text("".join(json.dumps(e) + "\n" for e in edges))
    (work / "sitemaps").mkdir()
    (work / "sitemaps" / "sitemap.xml").write_bytes(urlset(
        "<url><loc>http://seed.com/target</loc><priority>0.8</priority></url>",
        "<url><loc>http://seed.com/never-linked</loc></url>"))
    (work / "sitemaps" / "broken.xml").write_bytes(b"<urlset><url>")
    config = config_from_dict({"lake": {"path": str(work / "lake")}, "scores": {"seeds": ["http://seed.com/"]}})
    ingest_step(spark, config, str(work / "edges.jsonl"), "jsonl")
    sitemap_report = sitemaps.run(StepContext.create(spark, config), sitemaps.Params(str(work / "sitemaps")))
    analyze.run(StepContext.create(spark, config), analyze.Params())
    lake = Lake(spark, config.lake)
    # domain authority fixed by hand so the formula can be checked exactly
    authority = lake.read(S.DOMAIN_AUTHORITY_TABLE).withColumn(
        S.DOMAIN_AUTHORITY, F.when(F.col(S.DOMAIN) == "com.seed", 0.5).otherwise(0.1))
    lake.overwrite(S.DOMAIN_AUTHORITY_TABLE, authority.localCheckpoint())
    report = scores.run(StepContext.create(spark, config), scores.Params())
    rows = {r[S.URL]: r.asDict() for r in lake.read(S.SEED_SCORES_TABLE).where(F.col(S.RUN_ID) == report.run_id).collect()}
    return config, lake, report, rows, sitemap_report, work


def test_sitemaps_table_and_rejects(scored):
    config, lake, _, _, report, work = scored
    assert (report.files, report.entries, report.rejected, report.rejected_by_reason) == (2, 2, 1, {"MALFORMED_RECORD": 1})
    assert {(r[S.URL], r[S.PRIORITY]) for r in lake.read(S.SITEMAPS_TABLE).collect()} == {
        ("http://seed.com/target", 0.8), ("http://seed.com/never-linked", 0.5)}
    before = lake.read(S.SITEMAPS_TABLE).collect()
    version_before = lake.version(S.SITEMAPS_TABLE)
    rejects_before = lake.read(S.REJECTS_TABLE).count()
    again = sitemaps.run(StepContext.create(lake.spark, config), sitemaps.Params(str(work / "sitemaps")))
    assert (again.inserted, again.updated, again.rejected) == (0, 0, 1)
    # nothing committed: the steps that record the table's version as their input stay up to date
    assert lake.version(S.SITEMAPS_TABLE) == version_before
    assertDataFrameEqual(lake.read(S.SITEMAPS_TABLE), lake.spark.createDataFrame(before, S.SITEMAPS))
    assert lake.read(S.REJECTS_TABLE).count() == rejects_before


def test_seed_score_equals_the_formula_with_every_term_visible(scored):
    _, _, _, rows, _, _ = scored
    target = rows["http://seed.com/target"]
    assert (target["in_links"], target[S.HOP_DEPTH], target[S.DOMAIN_AUTHORITY], target["sitemap_priority"]) == (3, 2, 0.5, 0.8)
    assert target["in_links_norm"] == pytest.approx(math.log1p(3) / math.log1p(9), abs=1e-12)
    assert target["depth_term"] == pytest.approx(1 / 3, abs=1e-12)
    expected = 0.3 * math.log1p(3) / math.log1p(9) + 0.3 * 0.5 + 0.2 * 0.8 + 0.2 / 3
    assert abs(target[S.SEED_SCORE] - expected) < 1e-9
    root = rows["http://seed.com/"]
    assert (root[S.HOP_DEPTH], root["depth_term"], root["in_links"], root["in_links_norm"]) == (0, 1.0, 0, 0.0)
    assert rows["http://x.org/1"][S.HOP_DEPTH] is None and rows["http://x.org/1"]["depth_term"] == 0.0
    assert rows["http://hub.net/h"]["in_links_norm"] == 1.0


def test_scope_decisions(scored):
    _, _, _, rows, _, _ = scored
    linked = rows["http://linked.org/page"]
    assert (linked["domain_affinity"], linked["depth_factor"]) == (0.3, pytest.approx(0.8))
    assert linked[S.SCOPE_SCORE] == pytest.approx(0.24) and not linked[S.IN_SCOPE]
    blog = rows["http://blog.seed.com/page"]
    assert blog["domain_affinity"] == 0.8 and blog[S.SCOPE_SCORE] == pytest.approx(0.64) and blog[S.IN_SCOPE]
    assert rows["http://seed.com/a"][S.SCOPE_SCORE] == pytest.approx(0.8)
    far = rows["http://far.net/x"]
    assert (far["domain_affinity"], far[S.SCOPE_SCORE], far[S.IN_SCOPE]) == (0.1, pytest.approx(0.06), False)
    assert rows["http://x.org/1"][S.SCOPE_SCORE] == 0.0  # unreachable from the seed: depth factor 0


def test_frontier_holds_in_scope_uncrawled_pages_in_priority_order(scored):
    _, lake, report, rows, _, _ = scored
    frontier = [r.asDict() for r in lake.read(S.FRONTIER_TABLE).orderBy("position").collect()]
    # uncrawled: target and blog.seed.com/page (no out-links), never-linked (only the sitemap knows it:
    # one hop below http://seed.com/, so depth 1 on the seed host, scope 0.8, no page id)
    never_linked = 0.3 * 0 + 0.3 * 0.5 + 0.2 * 0.5 + 0.2 * (1 / 2)
    assert [(r[S.URL], r[S.PAGE_ID] is None) for r in frontier] == [
        ("http://seed.com/target", False), ("http://seed.com/never-linked", True), ("http://blog.seed.com/page", False)]
    assert [r[S.PRIORITY] for r in frontier] == pytest.approx(
        [rows["http://seed.com/target"][S.SEED_SCORE], never_linked, rows["http://blog.seed.com/page"][S.SEED_SCORE]])
    assert (frontier[1][S.HOP_DEPTH], frontier[1][S.SCOPE_SCORE]) == (1, pytest.approx(0.8))
    assert [r["position"] for r in frontier] == [1, 2, 3]
    assert report.frontier == 3


def test_scores_rerun_with_same_inputs_writes_nothing(scored, spark):
    config, lake, _, _, _, _ = scored
    scores.run(StepContext.create(spark, config), scores.Params())  # catch up with anything an earlier test committed to the inputs
    version = lake.version(S.SEED_SCORES_TABLE)
    assert scores.run(StepContext.create(spark, config), scores.Params()).up_to_date
    assert lake.version(S.SEED_SCORES_TABLE) == version


@pytest.mark.e2e
def test_scores_without_seeds_writes_page_flags_and_a_frontier_of_every_uncrawled_page(spark, tmp_path, capsys):
    """``linkgraph scores`` with ``scores.seeds: []`` and no ``--seeds`` on a lake with pages, links
    and a rank run: exit 0; flags first, then seed scores without hop depth (every page in scope,
    scope score 1) and a frontier of the uncrawled pages (no out-link) by seed score."""
    from linkgraph.cli import main
    from steps_support import pagerank_step

    edges = [_edge("a.com/", "a.com/1"), _edge("a.com/", "a.com/2"), _edge("a.com/1", "a.com/2"),
             _edge("b.org/", "a.com/2"), _edge("b.org/", "c.net/x")]
    (tmp_path / "edges.jsonl").write_text("".join(json.dumps(e) + "\n" for e in edges))
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    assert config.scores.seeds == []
    ingest_step(spark, config, str(tmp_path / "edges.jsonl"), "jsonl")
    analyze.run(StepContext.create(spark, config), analyze.Params())
    pagerank_step(spark, config)
    capsys.readouterr()

    assert main(["scores", "--lake", str(tmp_path / "lake")]) == 0
    assert "scores run " in capsys.readouterr().out
    lake = Lake(spark, config.lake)
    assert lake.read(S.PAGE_FLAGS_TABLE).count() == lake.read(S.PAGES_TABLE).count() == 5
    rows = {r[S.URL]: r.asDict() for r in lake.read(S.SEED_SCORES_TABLE).collect()}
    assert len(rows) == 5
    assert all(r[S.IN_SCOPE] and r[S.SCOPE_SCORE] == 1.0 and r[S.HOP_DEPTH] is None and r["depth_term"] == 0.0
               for r in rows.values())
    frontier = [r.asDict() for r in lake.read(S.FRONTIER_TABLE).orderBy("position").collect()]
    # uncrawled: a.com/2 (three in-links, the most) and c.net/x (one)
    assert [r[S.URL] for r in frontier] == ["http://a.com/2", "http://c.net/x"]
    assert [r[S.PRIORITY] for r in frontier] == [rows[r[S.URL]][S.SEED_SCORE] for r in frontier]
    assert frontier[0][S.PRIORITY] > frontier[1][S.PRIORITY]


def test_hop_search_stops_after_max_depth_rounds_broadcast_or_shuffled(spark):
    """A chain 0 -> 1 -> ... -> 9 with a side branch 1 -> 20 -> 21: only depths up to the limit,
    in at most limit + 1 rounds, the same whether the frontier is broadcast or shuffled."""
    chain = [(i, i + 1) for i in range(9)] + [(1, 20), (20, 21), (21, 1)]
    edges = spark.createDataFrame(chain, "src long, dst long")
    seeds = spark.createDataFrame([(0,)], "node long")
    expected = [(0, 0), (1, 1), (2, 2), (20, 2), (3, 3), (21, 3), (4, 4), (5, 5)]
    assert hop_rounds(hop_limit=50, max_depth=5) == 5
    for broadcast_below, one_task_below in ((BROADCAST_FRONTIER, 0), (0, 0), (0, ONE_TASK_EDGES)):
        search = frontier_search(edges, seeds, limit=5, broadcast_below=broadcast_below,
                                 one_task_below=one_task_below)
        assert search.rounds == 5
        assert sorted(tuple(r) for r in search.depths.collect()) == sorted(expected)
        short = frontier_search(edges.where("src < 2"), seeds, limit=5, one_task_below=one_task_below)
        assert (short.rounds, short.depths.count()) == (3, 4)   # two rounds that reach pages, one that finds none


@pytest.mark.parametrize("node_type", ["long", pytest.param("string", marks=pytest.mark.slow)])
def test_hop_search_in_one_task_equals_the_distributed_search(spark, node_type):
    """A graph of at most ``one_task_below`` edges is searched in one task: the same depths,
    rounds and per-round progress as the search of a job per round, on random graphs with
    cycles, self-loops, duplicate edges, unreachable nodes, a seed without edges, a null seed,
    no seeds, no edges and a limit of 0."""
    import random

    rng = random.Random(7)
    node = int if node_type == "long" else (lambda i: f"n{i:03d}")
    schema = f"src {node_type}, dst {node_type}"
    cases = []
    for n, m in ((30, 40), (60, 200), (12, 0)):
        edges = [(node(rng.randrange(n)), node(rng.randrange(n))) for _ in range(m)]
        cases.append((edges, [node(0), node(1), node(99)], 4))
    cases.append((cases[1][0], [node(3), None], 10))
    cases.append((cases[1][0], [], 3))
    cases.append((cases[1][0], [node(5)], 0))
    cases.append(([], [], 2))
    for edges, seeds, limit in cases:
        edges_df = spark.createDataFrame(edges, schema)
        seeds_df = spark.createDataFrame([(s,) for s in seeds], f"node {node_type}")
        results = []
        for one_task_below in (0, ONE_TASK_EDGES):
            rounds: list[tuple[int, int]] = []
            search = frontier_search(edges_df, seeds_df, limit, one_task_below=one_task_below,
                                     progress=lambda depth, reached, seen=rounds: seen.append((depth, reached)))
            depths = sorted((tuple(r) for r in search.depths.collect()), key=lambda r: (r[0] is None, r))
            results.append((search.rounds, rounds, depths, search.depths.schema))
        assert results[0] == results[1], (len(edges), seeds, limit)


def test_hop_search_keeps_only_the_checkpoint_its_result_reads(spark):
    """Each round's frontier and visited set are cut reliably and the cuts they replace deleted:
    after the search the session's checkpoint directory holds one new cut, the one the depths read."""
    root = Path(local_path(spark.sparkContext.getCheckpointDir()))
    before = set(root.iterdir())
    chain = spark.createDataFrame([(i, i + 1) for i in range(6)], "src long, dst long")
    search = frontier_search(chain, spark.createDataFrame([(0,)], "node long"), limit=10, one_task_below=0)
    assert search.depths.count() == 7
    (new,) = set(root.iterdir()) - before
    assert Path(local_path(checkpoints.checkpoint_file(search.depths))) == new


def test_loop_checkpoints_are_written_compressed(spark):
    """The session builder turns on ``spark.checkpoint.compress``: a cut of (page, depth) rows takes
    about 9 bytes a row on disk, where Spark's default (uncompressed) writes about 42."""
    rows = spark.range(50_000).select(F.col("id").alias("node"), (F.col("id") % 7).cast("int").alias("depth"))
    cut = checkpoints.cut(rows.repartition(2))
    files = [f for f in Path(local_path(checkpoints.checkpoint_file(cut))).rglob("*")
             if f.is_file() and not f.name.endswith(".crc")]
    assert spark.sparkContext.getConf().get("spark.checkpoint.compress") == "true"
    assert sum(f.stat().st_size for f in files) / 50_000 < 20
    checkpoints.drop(cut)
