"""`linkgraph run` on the built-in sample crawl: the Quick start's first command, end to end."""

from __future__ import annotations

from pyspark.sql import functions as F

from linkgraph import schemas as S
from linkgraph.cli import main
from linkgraph.sample import generate_sample_crawl


def test_run_on_builtin_sample_writes_readable_delta_tables(spark, tmp_path, capsys):
    lake = tmp_path / "lake"
    assert main(["run", "--lake", str(lake)]) == 0
    out = capsys.readouterr().out
    assert "tables:" in out and str(lake / "pages") in out

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
