"""Ingest end to end on a hand-checked batch: canonical pages and ids, merged links, rejects."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from pyspark.sql import Row
from pyspark.testing import assertDataFrameEqual

from linkgraph.cli import main
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.delta import Lake
from steps_support import ingest_step

BATCH_1 = [
    # duplicate pair (after canonicalisation): the later sighting is the representative
    {"from_url": "http://Example.com:80/a/./b#x", "to_url": "https://www.example.com/c", "anchor_text": "C page",
     "position": "content", "discovered_at": "2026-01-01T00:00:00Z", "last_seen_at": "2026-01-02T00:00:00Z"},
    {"from_url": "http://example.com/a/b", "to_url": "https://www.example.com/c", "anchor_text": "C again",
     "position": "NAV", "discovered_at": "2025-12-01T00:00:00Z", "last_seen_at": "2026-01-03T00:00:00Z"},
    {"from_url": "http://example.com/a/b", "to_url": "http://other.org/", "anchor_text": "other",
     "rel": "nofollow ugc", "position": "FOOTER"},
    {"from_url": "http://blog.example.com/post", "to_url": "https://www.bbc.co.uk/news", "anchor_text": "BBC",
     "link_type": "sponsored", "position": "CONTENT"},
    {"from_url": "http://atrios.blogspot.com/", "to_url": "http://other.blogspot.com/"},
    {"from_url": "http://b\u00fccher.example.com/", "to_url": "http://example.com/a/b", "rel": "noopener"},
    # bad records, one per reason
    {"from_url": "http://example.com/a/b", "to_url": "mailto:x@example.com"},
    {"from_url": "http://www1/x", "to_url": "http://example.com/"},
    {"from_url": "http://example.com/", "to_url": "http://example.com/#top"},
    "this is not json",
    {"from_url": "http://example.com/", "to_url": "http://other.org/", "discovered_at": "yesterday"},
    {"from_url": "http://example.com/", "to_url": None},
    {"from_url": "http://example.com/", "to_url": "http://other.org/x", "anchor_text": "x" * 1001},
    {"from_url": "http://example.com/", "to_url": "http://other.org/y", "position": "HEADER"},
    {"from_url": "http://exa mple.com/", "to_url": "http://other.org/"},
]

# url_key order: host reversed, so a host's pages are contiguous ('.' sorts before '/').
EXPECTED_IDS = {
    "http://atrios.blogspot.com/": 0,
    "http://other.blogspot.com/": 1,
    "http://blog.example.com/post": 2,
    "https://www.example.com/c": 3,
    "http://xn--bcher-kva.example.com/": 4,
    "http://example.com/a/b": 5,
    "http://other.org/": 6,
    "https://www.bbc.co.uk/news": 7,
}


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def write_jsonl(path, records) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return str(path)


@pytest.fixture(scope="module")
def ingested(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("ingest")
    config = config_from_dict({"lake": {"path": str(base / "lake")}})
    batch = write_jsonl(base / "batch1.jsonl", BATCH_1)
    first = ingest_step(spark, config, batch, "jsonl")
    lake = Lake(spark, config.lake)
    snapshot = {t: lake.read(t).collect() for t in (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE)}
    second = ingest_step(spark, config, batch, "jsonl")
    return config, lake, base, first, second, snapshot


def test_report_counts(ingested):
    _, _, _, first, _, _ = ingested
    assert first.read == len(BATCH_1)
    assert first.links_inserted == 5
    assert first.rejected == len(BATCH_1) - 5
    assert first.rejected_by_reason == {
        "DUPLICATE_MERGED": 1, "UNSUPPORTED_SCHEME": 1, "INVALID_HOST": 1, "SELF_LINK": 1,
        "MALFORMED_RECORD": 1, "MALFORMED_TIMESTAMP": 1, "NULL_FIELD": 1, "OVERSIZED_FIELD": 1,
        "INVALID_VALUE": 1, "MALFORMED_URL": 1,
    }
    assert first.pages_inserted == len(EXPECTED_IDS)


def test_pages_have_canonical_urls_and_ids_in_reversed_host_order(ingested, spark):
    _, lake, _, _, _, _ = ingested
    pages = lake.read(S.PAGES_TABLE).select(S.URL, S.PAGE_ID, S.HOST, S.REGISTERED_DOMAIN)
    expected_domains = {
        "http://atrios.blogspot.com/": ("atrios.blogspot.com", "atrios.blogspot.com"),
        "http://other.blogspot.com/": ("other.blogspot.com", "other.blogspot.com"),
        "http://blog.example.com/post": ("blog.example.com", "example.com"),
        "https://www.example.com/c": ("www.example.com", "example.com"),
        "http://xn--bcher-kva.example.com/": ("xn--bcher-kva.example.com", "example.com"),
        "http://example.com/a/b": ("example.com", "example.com"),
        "http://other.org/": ("other.org", "other.org"),
        "https://www.bbc.co.uk/news": ("www.bbc.co.uk", "bbc.co.uk"),
    }
    expected = spark.createDataFrame(
        [Row(url=u, page_id=i, host=expected_domains[u][0], registered_domain=expected_domains[u][1])
         for u, i in EXPECTED_IDS.items()],
        pages.schema,
    )
    assertDataFrameEqual(pages, expected)


def test_links_are_merged_and_classified(ingested, spark):
    _, lake, _, _, _, _ = ingested
    links = lake.read(S.LINKS_TABLE)
    ids = EXPECTED_IDS
    expected = spark.createDataFrame(
        [
            (ids["http://example.com/a/b"], ids["https://www.example.com/c"], "C again", None, "INTERNAL", "NAV",
             ts("2025-12-01 00:00:00"), ts("2026-01-03 00:00:00")),
            (ids["http://example.com/a/b"], ids["http://other.org/"], "other", None, "UGC", "FOOTER", None, None),
            (ids["http://blog.example.com/post"], ids["https://www.bbc.co.uk/news"], "BBC", None, "SPONSORED",
             "CONTENT", None, None),
            (ids["http://atrios.blogspot.com/"], ids["http://other.blogspot.com/"], None, None, "EXTERNAL", None,
             None, None),
            (ids["http://xn--bcher-kva.example.com/"], ids["http://example.com/a/b"], None, None, "INTERNAL", None,
             None, None),
        ],
        S.LINKS,
    )
    assertDataFrameEqual(links, expected)


def test_rejects_keep_raw_values_and_reason(ingested):
    _, lake, _, _, _, _ = ingested
    rejects = {r[S.REASON]: r for r in lake.read(S.REJECTS_TABLE).collect()}
    assert rejects["UNSUPPORTED_SCHEME"][S.TO_URL] == "mailto:x@example.com"
    assert rejects["INVALID_HOST"][S.FROM_URL] == "http://www1/x"
    assert rejects["MALFORMED_RECORD"][S.DETAIL] == "this is not json"
    assert rejects["OVERSIZED_FIELD"][S.DETAIL] == "anchor_text has 1001 characters (limit 1000)"
    assert rejects["DUPLICATE_MERGED"][S.FROM_URL] == "http://Example.com:80/a/./b#x"
    assert rejects["NULL_FIELD"][S.DETAIL].startswith("to_url")
    assert all(r[S.SOURCE].endswith("batch1.jsonl") for r in rejects.values())


def test_reingest_changes_nothing(ingested):
    _, lake, _, _, second, snapshot = ingested
    assert second.upserted == 0 and second.pages_inserted == 0 and second.pages_updated == 0
    assert second.rejects_inserted == 0
    for table, rows in snapshot.items():
        assert sorted(map(tuple, lake.read(table).collect())) == sorted(map(tuple, rows)), table


def test_new_batch_keeps_ids_and_updates_newer_sighting(ingested, spark):
    config, lake, base, _, _, _ = ingested
    batch = write_jsonl(base / "batch2.jsonl", [
        {"from_url": "http://aaa.com/", "to_url": "http://example.com/a/b"},
        {"from_url": "http://example.com/a/b", "to_url": "https://www.example.com/c", "anchor_text": "C newest",
         "position": "CONTENT", "discovered_at": "2026-01-15T00:00:00Z", "last_seen_at": "2026-02-01T00:00:00Z"},
    ])
    report = ingest_step(spark, config, batch, "jsonl")
    assert (report.links_inserted, report.links_updated, report.pages_inserted) == (1, 1, 1)
    ids = {r[S.URL]: r[S.PAGE_ID] for r in lake.read(S.PAGES_TABLE).collect()}
    assert ids == {**EXPECTED_IDS, "http://aaa.com/": 8}
    updated = lake.read(S.LINKS_TABLE).where(f"src_id = {ids['http://example.com/a/b']} "
                                               f"AND dst_id = {ids['https://www.example.com/c']}").first()
    assert updated[S.ANCHOR_TEXT] == "C newest" and updated[S.POSITION] == "CONTENT"
    assert updated[S.DISCOVERED_AT] == ts("2025-12-01 00:00:00")
    assert updated[S.LAST_SEEN_AT] == ts("2026-02-01 00:00:00")


def test_csv_with_rel_column(spark, tmp_path):
    path = tmp_path / "edges.csv"
    path.write_text(
        "from_url,to_url,anchor_text,rel,position\n"
        "http://a.com/,http://b.com/,B,sponsored nofollow,SIDEBAR\n"
        "http://a.com/,http://a.com/x,X,,NAV\n"
    )
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    report = ingest_step(spark, config, str(path), "csv")
    assert (report.read, report.links_inserted, report.rejected) == (2, 2, 0)
    types = {r[S.ANCHOR_TEXT]: r[S.LINK_TYPE] for r in Lake(spark, config.lake).read(S.LINKS_TABLE).collect()}
    assert types == {"B": "SPONSORED", "X": "INTERNAL"}


def test_missing_required_column_stops_with_exit_2(spark, tmp_path, capsys):
    path = tmp_path / "edges.csv"
    path.write_text("from_url,target\nhttp://a.com/,http://b.com/\n")
    lake = tmp_path / "lake"
    assert main(["ingest", "--input", str(path), "--format", "csv", "--lake", str(lake)]) == 2
    err = capsys.readouterr().err
    assert "missing required column 'to_url'" in err
    assert not lake.exists()


def test_arcs_node_ids_become_page_ids(spark, tmp_path):
    path = tmp_path / "graph.arcs"
    path.write_text("# a comment\n0\t1\n0\t2\n1\t2\n2\t2\n0\t1\nx y\n3 0\n")
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    report = ingest_step(spark, config, str(path), "arcs")
    assert report.rejected_by_reason == {"SELF_LINK": 1, "DUPLICATE_MERGED": 1, "MALFORMED_RECORD": 1}
    lake = Lake(spark, config.lake)
    assert sorted((r.src_id, r.dst_id) for r in lake.read(S.LINKS_TABLE).collect()) == [(0, 1), (0, 2), (1, 2), (3, 0)]
    assert sorted(r.page_id for r in lake.read(S.PAGES_TABLE).collect()) == [0, 1, 2, 3]
    again = ingest_step(spark, config, str(path), "arcs")
    assert again.upserted == 0 and again.pages_inserted == 0 and again.rejects_inserted == 0


@pytest.mark.e2e
def test_a_day_ingested_again_by_its_run_id_writes_nothing_until_its_files_change(spark, tmp_path, capsys):
    """``--run-id``: the run's second ingest of the same files commits nothing, so a page pruned
    after the first stays pruned; changed files are ingested again under the same id."""
    lake_dir, day = tmp_path / "lake", tmp_path / "2026-11-16"
    day.mkdir()
    write_jsonl(day / "part-0.jsonl", BATCH_1[:6])
    command = ["ingest", "--input", str(day), "--format", "jsonl", "--run-id", "2026-11-16-ingest",
               "--lake", str(lake_dir)]
    assert main(command) == 0
    lake = Lake(spark, config_from_dict({"lake": {"path": str(lake_dir)}}).lake)
    assert lake.read(S.PAGES_TABLE).count() == 8
    # a later step of the day deletes a page (as a reward run's prune does)
    lake.delta_table(S.PAGES_TABLE).delete("url = 'http://other.org/'")
    versions = {t: lake.current_version(t) for t in (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE)}
    capsys.readouterr()

    assert main(command) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(f"ingest run 2026-11-16-ingest {day}: finished before on this input (files=1 bytes=")
    assert line.split(" in ")[0].endswith("format=jsonl): nothing run")
    assert {t: lake.current_version(t) for t in versions} == versions
    assert lake.read(S.PAGES_TABLE).where("url = 'http://other.org/'").count() == 0

    write_jsonl(day / "part-1.jsonl", BATCH_1[6:7])   # the day's input grew
    assert main(command) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(f"ingest {day}: read=7 ")
    assert lake.read(S.PAGES_TABLE).where("url = 'http://other.org/'").count() == 1
    recorded = lake.read(S.STEP_RUNS_TABLE).where("step = 'ingest'").collect()
    assert [(r[S.RUN_ID], r["inputs"].split(" ")[0]) for r in recorded] == [("2026-11-16-ingest", "files=2")]
