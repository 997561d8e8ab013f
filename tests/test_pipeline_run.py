"""`linkgraph run` on the built-in sample crawl: the Quick start's first command, end to end."""

from __future__ import annotations

import json
import re

from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.cli import main
from conftest import working_directory
from linkgraph.sample import generate_sample_crawl
from linkgraph.lake.config import load_config
from linkgraph.steps.registry import Registry, RunPlan


# the session's line, then each step's progress line, which starts with the step's name and a
# space or a colon, in the order of `linkgraph run` (the registry's)
STEP_LINES = ("spark", *Registry.default().pipeline_order())


def test_run_on_builtin_sample_writes_readable_delta_tables(spark, sample_lake):
    """The Quick start's `linkgraph run --lake lake`, typed in a working directory (a relative
    lake): the session's ``sample_lake``."""
    lake, out = sample_lake.lake, sample_lake.output
    assert "tables (run took " in out and f"{lake / 'pages'}\n" in out
    for table in ("sitemaps", "domain_authority", "page_flags", "seed_scores", "frontier"):
        assert f"{lake / table}\n" in out
    # one progress line per step, in pipeline order, each with its time
    lines = [next(line for line in out.splitlines() if re.match(rf"{re.escape(name)}[ :]", line))
             for name in STEP_LINES]
    assert [out.index(line) for line in lines] == sorted(out.index(line) for line in lines)
    assert all(re.search(r" in \d+\.\ds$", line) for line in lines[1:]), lines

    sample = generate_sample_crawl()
    links = spark.read.format("delta").load(str(lake / "links"))
    pages = spark.read.format("delta").load(str(lake / "pages"))
    rejects = spark.read.format("delta").load(str(lake / "rejects"))

    by_reason = {r[S.REASON]: r["count"] for r in rejects.groupBy(S.REASON).count().collect()}
    assert by_reason == sample.expected_rejects
    assert links.count() == len(sample.edges) - sum(sample.expected_rejects.values())
    # ids are dense 0..n-1 and every link end is a page
    n_pages = pages.count()
    assert pages.agg(F.min(S.PAGE_ID), F.max(S.PAGE_ID)).first() == (0, n_pages - 1)
    assert links.join(pages, links[S.DST_ID] == pages[S.PAGE_ID], "left_anti").count() == 0
    assert {r[S.LINK_TYPE] for r in links.select(S.LINK_TYPE).distinct().collect()} == set(S.LINK_TYPES)


def test_frontier_top_100_on_the_sample_is_in_scope_uncrawled_and_ordered(spark, sample_lake, capsys):
    lake = sample_lake.lake
    assert main(["frontier", "--top", "100", "--lake", str(lake)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert 0 < len(rows) <= 100
    read = lambda table: spark.read.format("delta").load(str(lake / table))  # noqa: E731
    links, pages, signals = read("links"), read("pages"), read("page_signals")
    crawled = {r[S.SRC_ID] for r in links.select(S.SRC_ID).distinct().collect()}
    crawled |= {r[S.PAGE_ID] for r in signals.join(pages, on=S.URL).select(S.PAGE_ID).collect()}
    by_url = {r[S.URL]: r for r in read("seed_scores").collect()}
    sitemap_only = {r[S.URL] for r in read("sitemaps").join(pages, on=S.URL, how="left_anti").collect()}
    for row in rows:
        assert row[S.SCOPE_SCORE] >= 0.3
        if row[S.PAGE_ID] is None:   # known only from a sitemap: never fetched
            assert row[S.URL] in sitemap_only
        else:
            assert by_url[row[S.URL]][S.IN_SCOPE] and row[S.PAGE_ID] not in crawled
    priorities = [r[S.PRIORITY] for r in rows]
    assert priorities == sorted(priorities, reverse=True)
    assert [r["position"] for r in rows] == list(range(1, len(rows) + 1))
    # every in-scope uncrawled page is in the frontier (the sample's is shorter than 100)
    expected = {u for u, r in by_url.items() if r[S.IN_SCOPE] and r[S.PAGE_ID] not in crawled}
    assert expected <= {r[S.URL] for r in rows} or len(rows) == 100


def test_run_on_the_samples_page_flags_counts_what_the_flags_line_says(spark, sample_lake):
    flags_line = next(line for line in sample_lake.output.splitlines() if line.startswith("flags: "))
    read = lambda table: spark.read.format("delta").load(str(sample_lake.lake / table))  # noqa: E731
    flags, pages = read(S.PAGE_FLAGS_TABLE), read(S.PAGES_TABLE)
    assert flags.count() == pages.count() == 272
    counts = flags.agg(F.count_if(S.IMPORTANT), F.count_if(S.LINK_FARM_DOMAIN)).first()
    assert f"pages=272 important={counts[0]} " in flags_line and f"link_farm={counts[1]} " in flags_line
    assert counts[0] > 0 and counts[1] > 0   # the sample has a link farm and a few hubs


def test_run_on_a_crawl_without_seeds_runs_every_step_but_scores_and_says_what_needs_seeds():
    """Without seed URLs `linkgraph run` prints why instead of running ``scores``; every other step
    of the pipeline (``flags`` included) takes no seeds, and ``reward`` runs on the sample only."""
    registry, config = Registry.default(), load_config(None)
    plan = RunPlan("edges.jsonl", "jsonl", None, [], on_sample=False)
    planned = {name: registry[name].for_run(plan, config) for name in registry.pipeline_order()}
    assert planned["scores"] == "scores: seed_scores and frontier skipped (no seed URLs: set scores.seeds in the config)"
    assert planned["reward"] is None and planned["ingest-sitemaps"] is None   # the sample's own; no --sitemaps
    runs = {name for name, params in planned.items() if params is not None and not isinstance(params, str)}
    assert runs == {"ingest", "analyze", "pagerank", "compress", "flags"}


def test_frontier_output_accepts_a_relative_path_and_a_file_uri(spark, sample_lake, tmp_path, capsys):
    lake = sample_lake.lake
    with working_directory(tmp_path):
        assert main(["frontier", "--top", "5", "--format", "csv", "--output", "top.csv", "--lake", str(lake)]) == 0
    assert main(["frontier", "--top", "5", "--format", "csv", "--output", f"file://{tmp_path}/uri.csv",
                 "--lake", f"file://{lake}"]) == 0
    relative, uri = (tmp_path / "top.csv").read_text(), (tmp_path / "uri.csv").read_text()
    assert relative == uri and relative.startswith("position,url,priority,")
    assert len(relative.splitlines()) == 6
