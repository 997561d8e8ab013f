"""Ingest of real crawls from ../shared/data (skipped with a reason when absent)."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from conftest import shared_file
from linkgraph.inputs import readers
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.delta import Lake
from steps_support import ingest_step

HOLLINS_EDGES = 23_875
POLBLOGS_EDGE_RECORDS = 19_090


def test_dat_reader_turns_ids_into_url_edges(spark, tmp_path):
    path = tmp_path / "tiny.dat"
    path.write_text("3 3 1\n1 http://www.a.edu/ \n2 http://www.a.edu/x.html \n3 http://www1/ \n2 1\n3 1\n1 2\n")
    edges = readers.read_edges(spark, str(path), "dat")
    got = sorted((r.from_url, r.to_url) for r in edges.collect())
    assert got == [
        ("http://www.a.edu/", "http://www.a.edu/x.html"),
        ("http://www.a.edu/x.html", "http://www.a.edu/"),
        ("http://www1/", "http://www.a.edu/"),
    ]


def test_gml_reader_gives_host_labels_a_scheme(spark, tmp_path):
    path = tmp_path / "tiny.gml"
    path.write_text(
        'graph [\n directed 1\n node [\n id 1\n label "a.blogspot.com"\n value 0\n source "X"\n ]\n'
        ' node [\n id 2\n label "b.com/blog/ "\n value 1\n ]\n edge [\n source 1\n target 2\n ]\n'
        ' edge [\n source 2\n target 1\n ]\n]\n'
    )
    got = sorted((r.from_url, r.to_url) for r in readers.read_edges(spark, str(path), "gml").collect())
    assert got == [("http://a.blogspot.com", "http://b.com/blog/"), ("http://b.com/blog/", "http://a.blogspot.com")]


@pytest.mark.slow
def test_hollins_ingest_twice_keeps_counts_and_ids(spark, hollins_lake):
    config, first = hollins_lake
    path = shared_file("hollins-2004/hollins.dat")
    lake = Lake(spark, config.lake)
    assert first.read == HOLLINS_EDGES
    # every record is either a link or a reject: nothing is dropped silently
    assert first.links_inserted + first.rejected == HOLLINS_EDGES
    # the two URLs on malformed hosts (www1.hollins, www1) make their edges INVALID_HOST rejects
    assert first.rejected_by_reason.get("INVALID_HOST", 0) > 0
    invalid_hosts = lake.read(S.REJECTS_TABLE).where(F.col(S.REASON) == "INVALID_HOST")
    assert invalid_hosts.where(~(F.col(S.DETAIL).contains("'www1'") | F.col(S.DETAIL).contains("'www1.hollins'"))).count() == 0
    pages_before_rows = lake.read(S.PAGES_TABLE).collect()
    assert {r.registered_domain for r in pages_before_rows} == {"hollins.edu"}

    second = ingest_step(spark, config, str(path), "dat")
    assert (second.read, second.rejected) == (first.read, first.rejected)
    assert (second.upserted, second.pages_inserted, second.rejects_inserted) == (0, 0, 0)
    assertDataFrameEqual(lake.read(S.PAGES_TABLE), spark.createDataFrame(pages_before_rows, S.PAGES))
    assert lake.read(S.LINKS_TABLE).count() == first.links_inserted


@pytest.mark.slow
def test_polblogs_ingest_folds_colliding_labels_and_rejects_duplicates(spark, tmp_path):
    path = shared_file("polblogs/polblogs.gml.gz")
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    report = ingest_step(spark, config, str(path), "gml")
    assert report.read == POLBLOGS_EDGE_RECORDS
    assert report.links_inserted + report.rejected == POLBLOGS_EDGE_RECORDS
    # 65 duplicate records and 3 self-loops in the file; label collisions add a few more of each
    assert report.rejected_by_reason["DUPLICATE_MERGED"] >= 65
    assert report.rejected_by_reason["SELF_LINK"] >= 3
    assert report.links_inserted <= 19_025 - 3
    pages = Lake(spark, config.lake).read(S.PAGES_TABLE)
    assert pages.where(F.col(S.URL) == "http://atrios.blogspot.com/").count() == 1
    assert pages.where(F.col(S.REGISTERED_DOMAIN) == "atrios.blogspot.com").count() >= 1
