"""Batch-proportional writes: key ranges in MERGE conditions, clustered tables with
deletion vectors, the insert-only path of links to new pages, and checkpoint locations."""

from __future__ import annotations

from datetime import datetime

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType
from pyspark.testing import assertDataFrameEqual

from conftest import as_links
from linkgraph.inputs import ingest as I
from linkgraph.inputs.edges import ranked_batch
from linkgraph.lake import keyfilter
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import LakeConfig
from linkgraph.lake.delta import Lake, close_smallest_gaps, key_ranges, ranges_condition
from linkgraph.lake.keyfilter import bloom_filter_condition, bloom_filter_subquery, filter_bits
from linkgraph.lake.session import checkpoint_dir_of_lake

DAY1, DAY2 = datetime(2026, 1, 1), datetime(2026, 1, 2)

# The batch-scale behaviour of ingest's MERGEs, key filters and slices runs minutes of small ingests:
# those tests are in the e2e tier; the pure helpers stay in the quick one.
batch_scale = pytest.mark.slow


def test_close_smallest_gaps_keeps_the_largest():
    ranges = [(1, 3), (10, 11), (50, 50), (1000, 1000)]
    assert close_smallest_gaps(ranges, 4) == ranges
    assert close_smallest_gaps(ranges, 3) == [(1, 11), (50, 50), (1000, 1000)]
    assert close_smallest_gaps(ranges, 2) == [(1, 50), (1000, 1000)]
    assert close_smallest_gaps(ranges, 1) == [(1, 1000)]
    assert ranges_condition("t.x", []) == "false"
    assert ranges_condition("t.x", [(1, 2), (5, 5)]) == "(t.x BETWEEN 1 AND 2 OR t.x BETWEEN 5 AND 5)"


@batch_scale
def test_key_ranges_cover_every_value(spark):
    df = spark.createDataFrame([(v,) for v in (1, 2, 3, 10, 11, 50, 1000)] + [(None,)], "id LONG")
    assert key_ranges(df, "id", max_ranges=3) == [(1, 11), (50, 50), (1000, 1000)]
    assert key_ranges(df, "id", max_ranges=2) == [(1, 50), (1000, 1000)]
    assert key_ranges(df.where("id IS NULL"), "id") == []


def _link(src, dst, anchor, seen):
    return Row(src_id=src, dst_id=dst, anchor_text=anchor, context_window=None, link_type="INTERNAL",
               position=None, discovered_at=DAY1, last_seen_at=seen)


def _last_merge_metrics(lake):
    return lake.delta_table(S.LINKS_TABLE).history(1).first()["operationMetrics"]


@batch_scale
def test_links_merge_reads_and_touches_only_the_batch_files(spark, tmp_path):
    """Four files of ten sources each; a batch updating one link of sources 10-19 and adding links
    of a page new in the batch: the MERGE conditions select one stored file and none, no file is
    rewritten (a deletion vector marks the updated row) and the other rows stay as they were."""
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    T.ensure_core_tables(lake)
    props = lake.delta_table(S.LINKS_TABLE).detail().first()["properties"]
    assert props.get("delta.enableDeletionVectors") == "true"
    stored = [_link(s, (s + 1) % 40, f"a{s}", DAY1) for s in range(40)]
    for part in range(4):
        lake.append(S.LINKS_TABLE, spark.createDataFrame(stored[part * 10:(part + 1) * 10], S.LINKS).coalesce(1))
    # what the two MERGE conditions below select of the stored files
    assert len(lake.read(S.LINKS_TABLE).where("src_id BETWEEN 12 AND 12").inputFiles()) == 1
    assert len(lake.read(S.LINKS_TABLE).where("src_id >= 40 OR dst_id >= 40").inputFiles()) == 0

    batch = spark.createDataFrame([_link(12, 13, "newer", DAY2), _link(40, 3, "new page", DAY2),
                                   _link(5, 40, "to new page", DAY2)], S.LINKS)
    inserted, updated = T.upsert_links(lake, batch, new_from=40)
    assert (inserted, updated) == (2, 1)

    history = lake.delta_table(S.LINKS_TABLE).history(2).orderBy("version").collect()
    new_pages_merge, recrawl_merge = history
    assert ">= 40) OR (dst_id#" in new_pages_merge["operationParameters"]["predicate"]
    assert new_pages_merge["operationMetrics"]["numTargetRowsInserted"] == "2"
    # the recrawl MERGE's condition carries the batch's src_id range, which only one stored file overlaps
    assert ">= 12) AND (src_id#" in recrawl_merge["operationParameters"]["predicate"]
    metrics = recrawl_merge["operationMetrics"]
    assert (metrics["numTargetFilesRemoved"], metrics["numTargetDeletionVectorsAdded"]) == ("0", "1")

    expected = [r for r in stored if r.src_id != 12] + [_link(12, 13, "newer", DAY2), _link(40, 3, "new page", DAY2),
                                                       _link(5, 40, "to new page", DAY2)]
    assertDataFrameEqual(lake.read(S.LINKS_TABLE), spark.createDataFrame(expected, S.LINKS))

    # the same batch again changes nothing
    assert T.upsert_links(lake, batch) == (0, 0)


def _sql_executions(spark) -> list:
    """The SQL executions the driver's status store holds (it keeps the latest
    ``spark.sql.ui.retainedExecutions``), once its listener has caught up."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return [executions.apply(i) for i in range(executions.size())]


def _executions(spark) -> int:
    """The id of the latest SQL execution (-1 for none)."""
    return max((e.executionId() for e in _sql_executions(spark)), default=-1)


def _read_schemas_since(spark, last_before: int) -> list[str]:
    """The ``ReadSchema`` of every file scan of the SQL executions after ``last_before``."""
    plans = [e.physicalPlanDescription() for e in _sql_executions(spark) if e.executionId() > last_before]
    return [line.split("ReadSchema: ", 1)[1] for plan in plans for line in plan.splitlines() if "ReadSchema: " in line]


@batch_scale
def test_a_recrawl_reads_no_text_of_the_stored_links_and_a_late_sighting_only_widens(spark, tmp_path):
    """Newer sightings replace a pair's text and new pairs are inserted by MERGEs that read the
    stored links' keys and sighting times, never their anchor or context; a sighting older than
    the stored one (delivered late) only widens the pair's interval, keeping its text."""
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    T.ensure_core_tables(lake)
    stored = [_link(s, s + 1, f"a{s}", DAY2) for s in range(10)]
    lake.append(S.LINKS_TABLE, spark.createDataFrame(stored, S.LINKS).coalesce(1))
    day3, day0 = datetime(2026, 1, 3), datetime(2025, 12, 31)

    before = _executions(spark)
    recrawl = spark.createDataFrame([_link(1, 2, "newer", day3), _link(1, 5, "new pair", day3)], S.LINKS)
    assert T.upsert_links(lake, recrawl) == (1, 1)
    schemas = _read_schemas_since(spark, before)
    links_scans = [schema for schema in schemas if "src_id" in schema]
    assert links_scans and not [schema for schema in links_scans if "anchor_text" in schema or "context" in schema]

    late = _link(3, 4, "late", DAY1).asDict() | {"discovered_at": day0}
    assert T.upsert_links(lake, spark.createDataFrame([Row(**late)], S.LINKS)) == (0, 1)
    expected = ([r for r in stored if r.src_id not in (1, 3)]
                + [_link(1, 2, "newer", day3), _link(1, 5, "new pair", day3)]
                + [Row(**(_link(3, 4, "a3", DAY2).asDict() | {"discovered_at": day0}))])
    assertDataFrameEqual(lake.read(S.LINKS_TABLE), spark.createDataFrame(expected, S.LINKS))
    # both again: nothing changes
    assert T.upsert_links(lake, recrawl.unionByName(spark.createDataFrame([Row(**late)], S.LINKS))) == (0, 0)


def _page(page_id, url, first, last):
    host = url.split("/")[2]
    return Row(page_id=page_id, url=url, host=host, registered_domain=host, url_key=f"{host}{page_id}",
               first_seen_at=first, last_seen_at=last)


@batch_scale
def test_the_pages_merge_reads_the_url_and_sightings_not_the_url_derived_columns(spark, tmp_path):
    """A batch's known page is widened and a new one inserted by a MERGE on ``url`` that reads the
    stored pages' url, id and sighting times, never their host, domain or key (set from the
    batch, which computes them from the same URL)."""
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    T.ensure_core_tables(lake)
    stored = [_page(i, f"http://h{i}.com/", DAY1, DAY1) for i in range(5)]
    lake.append(S.PAGES_TABLE, spark.createDataFrame(stored, S.PAGES).coalesce(1))
    before = _executions(spark)
    batch = spark.createDataFrame([_page(2, "http://h2.com/", DAY2, DAY2), _page(5, "http://h5.com/", DAY2, DAY2)],
                                  S.PAGES)
    assert T.upsert_pages(lake, batch, key=S.URL) == (1, 1)
    pages_scans = [schema for schema in _read_schemas_since(spark, before) if "first_seen_at" in schema]
    assert pages_scans and not [schema for schema in pages_scans if "host" in schema or "url_key" in schema]
    expected = [r for r in stored if r.page_id != 2] + [_page(2, "http://h2.com/", DAY1, DAY2),
                                                        _page(5, "http://h5.com/", DAY2, DAY2)]
    assertDataFrameEqual(lake.read(S.PAGES_TABLE), spark.createDataFrame(expected, S.PAGES))


@batch_scale
def test_numbered_pages_insert_the_new_urls_and_widen_the_known_by_id(spark, tmp_path, monkeypatch):
    """A batch's pages with their looked-up ids: the new one (id from ``new_from`` on) inserted by
    URL, the known one widened by id through a MERGE that reads its id and sighting times, never
    its URL or what derives from it; a known page no longer stored (pruned meanwhile) is not
    brought back; the same batch again changes nothing.  (A table this small takes one MERGE on
    ``url`` unless the threshold says otherwise.)"""
    monkeypatch.setattr(keyfilter, "MIN_TABLE_BYTES", 0)
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    T.PAGES.ensure(lake)
    stored = [_page(i, f"http://h{i}.com/", DAY1, DAY1) for i in range(5)]
    lake.append(S.PAGES_TABLE, spark.createDataFrame(stored, S.PAGES).coalesce(1))
    batch = spark.createDataFrame([_page(2, "http://h2.com/", DAY2, DAY2), _page(4, "http://h4.com/", DAY1, DAY1),
                                   _page(7, "http://pruned.com/", DAY2, DAY2), _page(9, "http://h9.com/", DAY2, DAY2)],
                                  S.PAGES)
    before = _executions(spark)
    assert T.upsert_numbered_pages(lake, batch, new_from=9) == (1, 1)
    widening_scans = [schema for schema in _read_schemas_since(spark, before) if "first_seen_at" in schema]
    assert widening_scans and not [schema for schema in widening_scans if "url" in schema or "host" in schema]
    expected = [r for r in stored if r.page_id != 2] + [_page(2, "http://h2.com/", DAY1, DAY2),
                                                        _page(9, "http://h9.com/", DAY2, DAY2)]
    assertDataFrameEqual(lake.read(S.PAGES_TABLE), spark.createDataFrame(expected, S.PAGES))
    assert T.upsert_numbered_pages(lake, batch, new_from=9) == (0, 0)


@batch_scale
def test_prune_delete_reads_only_the_files_of_its_keys(spark, tmp_path):
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    T.ensure_core_tables(lake)
    stored = [_link(s, s + 1, f"a{s}", DAY1) for s in range(30)]
    for part in range(3):
        lake.append(S.LINKS_TABLE, spark.createDataFrame(stored[part * 10:(part + 1) * 10], S.LINKS).coalesce(1))
    doomed = spark.createDataFrame([(25, 26), (27, 28)], "src_id LONG, dst_id LONG")
    assert lake.delete_matching(S.LINKS_TABLE, doomed, [S.SRC_ID, S.DST_ID], prune_on=S.SRC_ID).deleted == 2
    metrics = _last_merge_metrics(lake)
    assert (metrics["numTargetFilesRemoved"], metrics["numTargetDeletionVectorsAdded"]) == ("0", "1")
    assert lake.read(S.LINKS_TABLE).count() == 28


def test_checkpoints_default_to_the_lake():
    assert checkpoint_dir_of_lake("s3a://crawl-lake/linkgraph/") == "s3a://crawl-lake/linkgraph/_checkpoints"
    assert checkpoint_dir_of_lake("file:/data/lake") == "file:/data/lake/_checkpoints"


@batch_scale
def test_url_key_and_host_in_spark_equal_python(spark):
    """Ingest keys new pages, and takes the hosts of ranked records from their URLs, with Spark's
    built-in functions; they give ``urls.url_key`` and ``canonicalize``'s host, for names, IP
    literals, ports, paths, queries and both schemes (one frame, one collect)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from linkgraph import urls
    from linkgraph.inputs.ingest import host_of, url_key
    from test_urls import FAST_PATH_CASES

    raw = [*FAST_PATH_CASES, "https://www.stanford.edu/biology?a=1", "http://example.com:8080/", "https://10.0.0.1:8443/x",
           "http://[::1]:8080/x", "https://[2001:db8::1]/a?b=c:d", "http://a.b.c.example.co.uk/x/y?z=1&w=/v",
           "http://example.com/a:b/c", "https://xn--bcher-kva.example.com/%C3%A9?%20", "http://1.2.3.4:81/"]
    drawn: list[str] = []

    hosts = st.sampled_from(["a.com", "www.Example.co.uk", "b_c.d-e.example.org", "1.2.3.4", "[::1]", "[2001:DB8::1]",
                             "bücher.example.com", "blogspot.com"])
    ports = st.sampled_from(["", ":80", ":443", ":8080", ":0"])

    @settings(max_examples=150, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(["http://", "HTTPS://"]), hosts, ports, st.text(alphabet="abAB09.-_:/?#%@ &=~é", max_size=25))
    def draw(scheme: str, host: str, port: str, rest: str) -> None:
        drawn.append(f"{scheme}{host}{port}/{rest}")

    draw()
    canonical = sorted({c.url for c in map(urls.canonicalize, raw + drawn) if c.url is not None})
    assert len(canonical) > 60
    frame = spark.createDataFrame([(u,) for u in canonical], "url STRING")
    got = {row["url"]: (row["key"], row["host"])
           for row in frame.select("url", url_key(F.col("url")).alias("key"), host_of(F.col("url")).alias("host")).collect()}
    assert got == {u: (urls.url_key(u), urls.canonicalize(u).host) for u in canonical}


@batch_scale
def test_canonical_url_udf_gives_canonicalize_per_record(spark):
    """The Arrow UDF ingest canonicalises each record's endpoints with (no join, no distinct):
    what ``canonicalize`` gives, through Spark, nulls and rejects included."""
    from linkgraph import urls
    from linkgraph.inputs.ingest import canonical_url
    from test_urls import FAST_PATH_CASES

    cases = [*FAST_PATH_CASES, "http://Example.com:80/x", "http://www.example.com/a/./b", "http://a.b.example.com/x?y",
             "http://a.example.com/x?y=\u00e9", "https://a.example.com/x?y z", "http://www.example.com/x/"]
    raw = spark.createDataFrame([(u,) for u in cases], "from_url STRING")
    got = [tuple(r[0]) for r in raw.select(canonical_url("from_url")).collect()]
    assert sorted(got, key=repr) == sorted((tuple(urls.canonicalize(u)) for u in cases), key=repr)


@batch_scale
def test_host_order_keeps_hosts_contiguous_whatever_the_ids(spark):
    """Ids given batch by batch interleave hosts; the order by url_key does not ('.' sorts
    before '/': a host's subdomains come right before its own pages)."""
    from linkgraph.lake.ids import host_order

    pages = spark.createDataFrame(
        [(0, "com.a/x"), (1, "com.b/x"), (2, "com.a/y"), (3, None), (4, "com.b/a"), (5, "com.a.www/")],
        "page_id LONG, url_key STRING")
    expected = spark.createDataFrame([(5, 0), (0, 1), (2, 2), (4, 3), (1, 4), (3, 5)], "page_id LONG, position LONG")
    assertDataFrameEqual(host_order(pages), expected)


@batch_scale
def test_numbering_by_an_expression_sorts_a_column_computed_once_per_row(spark):
    """New pages are numbered in url_key order; the key is an expression of the URL, which the
    sort must not evaluate in its comparisons (twice per comparison, regular expressions)."""
    from linkgraph.lake.ids import number_in_order, range_sorted

    urls = spark.createDataFrame([("https://a.example.org/",), ("http://b.example.com/x",),
                                  ("http://a.example.com/y",), ("http://a.example.com/",)], "url STRING")
    keys = [I.url_key(F.col("url")), F.col("url")]
    expected = spark.createDataFrame([("http://a.example.com/", 10), ("http://a.example.com/y", 11),
                                      ("http://b.example.com/x", 12), ("https://a.example.org/", 13)],
                                     "url STRING, page_id LONG")
    assertDataFrameEqual(number_in_order(urls, keys, 10, "page_id"), expected)
    plan = range_sorted(urls, keys)._jdf.queryExecution().executedPlan().toString()
    sorts = [line for line in plan.splitlines() if line.lstrip(" +-:").startswith("Sort ")]
    assert sorts and not any("regexp" in line for line in sorts), plan
    assert "rangepartitioning(" in plan and "regexp" in plan, plan


def _cached_bytes(spark, column: str) -> int:
    """Bytes (memory and disk) Spark holds for the cached frames whose plan names ``column``."""
    return sum(info.memSize() + info.diskSize() for info in spark.sparkContext._jsc.sc().getRDDStorageInfo()
               if f" AS {column}#" in info.name())


@batch_scale
def test_uncompressed_cache_stores_without_compression_and_restores_the_setting(spark):
    from pyspark.sql import functions as F

    from linkgraph.inputs.edges import COLUMNAR_CACHE_COMPRESSED, uncompressed_cache

    def cached_size(column: str, uncompressed: bool) -> int:
        frame = spark.range(20_000, numPartitions=1).select(F.lit("http://www.example.com/" * 4).alias(column))
        if uncompressed:
            with uncompressed_cache(spark):
                frame = frame.persist()
        else:
            frame = frame.persist()
        frame.count()
        size = _cached_bytes(spark, column)
        frame.unpersist(blocking=True)
        return size

    setting = spark.conf.get(COLUMNAR_CACHE_COMPRESSED, None)
    assert setting in (None, "true"), setting
    compressed, plain = cached_size("probe_compressed", False), cached_size("probe_uncompressed", True)
    # 20,000 copies of a 92-character string: a few KB compressed, over 1.8 MB as they are
    assert plain > 1_800_000 > 100 * compressed > 0, (plain, compressed)
    assert spark.conf.get(COLUMNAR_CACHE_COMPRESSED, None) == setting

    # two ingests in threads of one session: the setting is restored when the last block ends,
    # whichever ends first
    first, second = uncompressed_cache(spark), uncompressed_cache(spark)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert spark.conf.get(COLUMNAR_CACHE_COMPRESSED) == "false"
    second.__exit__(None, None, None)
    assert spark.conf.get(COLUMNAR_CACHE_COMPRESSED, None) == setting


@batch_scale
def test_links_take_the_same_ids_by_broadcast_and_by_shuffle(spark):
    from datetime import datetime as dt

    day = dt(2026, 1, 1)
    links = spark.createDataFrame(
        [("http://a.com/", "http://b.com/", "to b", None, "EXTERNAL", "CONTENT", day, day),
         ("http://b.com/", "http://a.com/", "to a", "ctx", "EXTERNAL", None, day, day),
         ("http://a.com/", "http://c.com/", "no id for c", None, "EXTERNAL", None, day, day)],
        f"{I.SRC_URL} string, {I.DST_URL} string, anchor_text string, context_window string, link_type string, "
        f"position string, {I.DISCOVERED} timestamp, {I.LAST_SEEN} timestamp")
    ids = spark.createDataFrame([("http://a.com/", 7), ("http://b.com/", 3)], "url string, page_id long")
    expected = [Row(src_id=7, dst_id=3, anchor_text="to b", context_window=None, link_type="EXTERNAL",
                    position="CONTENT", discovered_at=day, last_seen_at=day),
                Row(src_id=3, dst_id=7, anchor_text="to a", context_window="ctx", link_type="EXTERNAL",
                    position=None, discovered_at=day, last_seen_at=day)]
    for broadcast_ids in (True, False):
        for by_hash in (True, False):
            assertDataFrameEqual(I.links_with_ids(links, ids, broadcast_ids, by_hash=by_hash), expected)


@batch_scale
def test_links_take_their_ids_by_url_when_two_urls_of_the_batch_share_a_hash(spark):
    """With a hash under which two of the batch's URLs collide (their length), matching by hash
    gives a link both pages' ids; the ingest sees more rows than links and matches by URL."""
    from datetime import datetime as dt

    from linkgraph.inputs.edges import links_with_page_ids
    from linkgraph.lake.config import Config

    def length_hash(url):
        return F.length(url).cast("long")

    day = dt(2026, 1, 1)
    links = spark.createDataFrame(
        [("http://a.com/", "http://b.com/", "to b", None, "EXTERNAL", None, day, day),
         ("http://b.com/", "http://ccc.com/", "to c", None, "EXTERNAL", None, day, day)],
        f"{I.SRC_URL} string, {I.DST_URL} string, anchor_text string, context_window string, link_type string, "
        f"position string, {I.DISCOVERED} timestamp, {I.LAST_SEEN} timestamp")
    pages = spark.createDataFrame([("http://a.com/", 7), ("http://b.com/", 3), ("http://ccc.com/", 5)],
                                  "url string, page_id long")
    # matched by the colliding hash, each link takes both ids of every length-13 end: 4 + 2 rows
    assert I.links_with_ids(links, pages, by_hash=True, hash_of=length_hash).count() == 6
    expected = [Row(src_id=7, dst_id=3, anchor_text="to b"), Row(src_id=3, dst_id=5, anchor_text="to c")]
    for hash_of in (length_hash, I.url_hash):
        resolved = links_with_page_ids(links, pages, Config(), 2, hash_of)
        assertDataFrameEqual(resolved.select("src_id", "dst_id", "anchor_text"), expected)
        resolved.unpersist()


@batch_scale
def test_sightings_of_a_pair_are_ranked_latest_then_smallest_anchor_with_widened_times(spark):
    """One pair seen three times (two forms of its source URL), another once, one invalid record:
    the representative is the latest sighting, the smaller anchor breaking the tie; every sighting
    of the pair carries the pair's earliest discovery and latest sighting; an invalid record has no
    rank and keeps its own times."""
    from linkgraph.inputs import ingest as I
    from linkgraph.lake.config import IngestConfig

    def record(from_url, to_url, anchor, discovered, last_seen):
        values = {S.FROM_URL: from_url, S.TO_URL: to_url, S.ANCHOR_TEXT: anchor,
                  S.DISCOVERED_AT: f"{discovered}T12:00:00Z", S.LAST_SEEN_AT: f"{last_seen}T12:00:00Z"}
        return tuple(values.get(f.name) for f in S.RAW_EDGE_RECORD.fields) + (None,)

    raw = spark.createDataFrame(
        [record("http://a.com/x", "http://b.com/y", "zeta", "2026-01-02", "2026-01-03"),
         record("http://A.com:80/x", "http://b.com/y", "alpha", "2026-01-01", "2026-01-03"),
         record("http://a.com/x", "http://b.com/y", "first", "2025-12-30", "2026-01-02"),
         record("http://b.com/y", "http://a.com/x", "back", "2026-01-05", "2026-01-06"),
         record("mailto:someone@a.com", "http://b.com/y", "invalid", "2026-01-07", "2026-01-08")],
        StructType([*S.RAW_EDGE_RECORD.fields, StructField(I.CORRUPT_RECORD, StringType())]))
    validated = I.validate_edges(raw, IngestConfig())
    expected = [
        Row(anchor_text="alpha", _rank=1, discovered="2025-12-30", last_seen="2026-01-03"),
        Row(anchor_text="zeta", _rank=2, discovered="2025-12-30", last_seen="2026-01-03"),
        Row(anchor_text="first", _rank=3, discovered="2025-12-30", last_seen="2026-01-03"),
        Row(anchor_text="back", _rank=1, discovered="2026-01-05", last_seen="2026-01-06"),
        Row(anchor_text="invalid", _rank=None, discovered="2026-01-07", last_seen="2026-01-08"),
    ]
    # every record through the window, and only the repeated pairs' (the ingest's way)
    routed = ranked_batch(spark, validated)
    for ranked in (I.rank_sightings(validated), routed.frame):
        got = ranked.select(S.ANCHOR_TEXT, I.RANK, F.date_format(I.DISCOVERED, "yyyy-MM-dd").alias("discovered"),
                            F.date_format(I.LAST_SEEN, "yyyy-MM-dd").alias("last_seen"))
        assertDataFrameEqual(got, expected)
    # the rejects (two other sightings, the invalid record) are all in the window's part
    rejects = I.rejected(routed.rejects_among).select(S.ANCHOR_TEXT, S.REASON)
    assertDataFrameEqual(rejects, I.rejected(routed.frame).select(S.ANCHOR_TEXT, S.REASON))
    assert sorted(row[S.REASON] for row in rejects.collect()) == ["DUPLICATE_MERGED", "DUPLICATE_MERGED", "UNSUPPORTED_SCHEME"]
    routed.release()


@batch_scale
def test_a_batch_of_single_pairs_ranks_without_shuffling_its_records(spark):
    """2,000 records of distinct pairs (an anchor of 320 hex digits each) and three records of one
    pair: ranked as the window ranks them, and what is shuffled is a few bytes per record (the
    pair keys), not the records (the window alone shuffles over 200 bytes per record)."""
    from linkgraph.lake.config import IngestConfig

    fields = [f.name for f in S.RAW_EDGE_RECORD.fields]
    rows = spark.range(0, 2_003, 1, 4).select(
        F.concat(F.lit("http://a.com/p"), F.least(F.col("id"), F.lit(2_000)).cast("string")).alias(S.FROM_URL),
        F.lit("http://b.com/").alias(S.TO_URL),
        F.concat(*[F.sha2(F.concat(F.col("id").cast("string"), F.lit(salt)), 256) for salt in "abcde"])
        .alias(S.ANCHOR_TEXT),
        F.lit("2026-01-01T00:00:00Z").alias(S.DISCOVERED_AT), F.lit("2026-01-02T00:00:00Z").alias(S.LAST_SEEN_AT))
    raw = rows.select(*[F.col(c) if c in rows.columns else F.lit(None).cast("string").alias(c) for c in fields],
                      F.lit(None).cast("string").alias(I.CORRUPT_RECORD))
    validated = I.validate_edges(raw, IngestConfig())
    before = _executions(spark)
    windowed = I.rank_sightings(validated).persist()
    windowed.count()
    window_bytes = _shuffle_bytes_since(spark, before)
    before = _executions(spark)
    routed = ranked_batch(spark, validated)
    routed_bytes = _shuffle_bytes_since(spark, before)
    assertDataFrameEqual(routed.frame, windowed)
    assert routed.frame.where(F.col(I.RANK) > 1).count() == 2
    assert window_bytes > 2_000 * 200 and routed_bytes < window_bytes / 10, (window_bytes, routed_bytes)
    routed.release()
    windowed.unpersist()


# --- bloom filters of a batch's keys -------------------------------------------------------------

def test_filter_bits_follow_the_keys_up_to_the_cap():
    assert filter_bits(1_000) == 9_586          # -n ln(0.01) / ln(2)^2, rounded up
    assert filter_bits(0) == filter_bits(1) == 64
    assert filter_bits(10**9, max_bytes=1 << 20) == 8 << 20


@batch_scale
def test_a_bloom_filter_admits_every_key_of_the_batch_and_few_others(spark):
    batch = spark.range(0, 100_000, 100).select(F.col("id").alias("src_id"), (F.col("id") % 7).alias("dst_id"))
    table = spark.range(100_000).select(F.col("id").alias("src_id"), (F.col("id") % 7).alias("dst_id"))
    for bloom in (bloom_filter_condition(batch, ["src_id", "dst_id"], ["src_id", "dst_id"], 1_000),
                  bloom_filter_subquery(batch, ["src_id", "dst_id"], ["src_id", "dst_id"], 1_000)):
        admitted = table.where(bloom)
        assert admitted.join(batch, ["src_id", "dst_id"], "left_anti").count() <= 0.03 * 99_000
        assert batch.join(admitted, ["src_id", "dst_id"], "left_anti").count() == 0   # no false negative


def _shuffle_records_since(spark, last_before: int) -> int:
    """Records written to shuffles by the SQL executions after ``last_before`` (SQL metrics)."""
    store = spark._jsparkSession.sharedState().statusStore()
    total = 0
    for execution in _sql_executions(spark):
        if execution.executionId() <= last_before:
            continue
        values = {}
        iterator = store.executionMetrics(execution.executionId()).iterator()
        while iterator.hasNext():
            entry = iterator.next()
            values[int(entry._1())] = entry._2()
        nodes = store.planGraph(execution.executionId()).allNodes()
        for node in (nodes.apply(i) for i in range(nodes.size())):
            metrics = node.metrics()
            for metric in (metrics.apply(i) for i in range(metrics.size())):
                if metric.name() == "shuffle records written":
                    text = (values.get(int(metric.accumulatorId())) or "0").replace(",", "")
                    total += int(text.split("\n")[-1].split(" ")[0] if "\n" in text else text)
    return total


_SIZE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def _shuffle_bytes_since(spark, last_before: int) -> int:
    """Bytes written to shuffles by the SQL executions after ``last_before`` (SQL metrics)."""
    store = spark._jsparkSession.sharedState().statusStore()
    total = 0
    for execution in _sql_executions(spark):
        if execution.executionId() <= last_before:
            continue
        values = {}
        iterator = store.executionMetrics(execution.executionId()).iterator()
        while iterator.hasNext():
            entry = iterator.next()
            values[int(entry._1())] = entry._2()
        nodes = store.planGraph(execution.executionId()).allNodes()
        for node in (nodes.apply(i) for i in range(nodes.size())):
            metrics = node.metrics()
            for metric in (metrics.apply(i) for i in range(metrics.size())):
                text = values.get(int(metric.accumulatorId()))
                if metric.name() == "shuffle bytes written" and text:
                    number, unit = text.split("\n")[-1].split(" ")[:2]
                    total += int(float(number.replace(",", "")) * _SIZE_UNITS[unit])
    return total


@batch_scale
def test_a_merge_with_a_bloom_filter_shuffles_the_matches_not_the_table(spark, tmp_path, monkeypatch):
    """The same upsert of 20 links (10 stored) into 20,000 with and without ``filter_keys``: the
    same table after it, but with the filter the MERGE's joins shuffle tens of stored rows (the
    matches and about 1% of the others), without it every one, in each join (automatic
    broadcasts off, as for a batch of millions on a cluster); with the batch broadcast too, fewer
    still."""
    stored = as_links(spark.range(20_000).select((F.col("id") % 2_000).alias("src_id"),
                                              (F.col("id") / 2_000).cast("long").alias("dst_id"),
                                              F.lit("old").alias("anchor_text")))
    batch = as_links(spark.createDataFrame([(s * 100, 3 if s < 10 else 50, "new") for s in range(20)],
                                        "src_id LONG, dst_id LONG, anchor_text STRING"))
    # a table this small is merged without a filter, unless the threshold says otherwise
    small = Lake(spark, LakeConfig(path=str(tmp_path / "lake-small")))
    T.LINKS.ensure(small)
    small.append(S.LINKS_TABLE, stored.coalesce(4))
    assert small.table_bytes(S.LINKS_TABLE) < keyfilter.MIN_TABLE_BYTES
    small.merge(S.LINKS_TABLE, batch, [S.SRC_ID, S.DST_ID], update_set={S.ANCHOR_TEXT: "s.anchor_text"},
                filter_keys=True)
    assert "mightContainLong(" not in small.delta_table(S.LINKS_TABLE).history(1).first()["operationParameters"]["predicate"]
    monkeypatch.setattr(keyfilter, "MIN_TABLE_BYTES", 0)

    results, shuffled = [], []
    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")   # the cluster regime: no batch is small
    for filtered, broadcast in ((False, False), (True, False), (True, True)):
        lake = Lake(spark, LakeConfig(path=str(tmp_path / f"lake-{filtered}-{broadcast}")))
        T.LINKS.ensure(lake)   # deletion vectors: a MERGE rewrites no stored row
        lake.append(S.LINKS_TABLE, stored.coalesce(4))
        before = _executions(spark)
        metrics = lake.merge(S.LINKS_TABLE, batch, [S.SRC_ID, S.DST_ID], update_set={S.ANCHOR_TEXT: "s.anchor_text"},
                             filter_keys=filtered, broadcast_source=broadcast)
        shuffled.append(_shuffle_records_since(spark, before))
        assert (metrics.inserted, metrics.updated) == (10, 10), metrics
        results.append(lake.read(S.LINKS_TABLE))
        predicate = lake.delta_table(S.LINKS_TABLE).history(1).first()["operationParameters"]["predicate"]
        assert ("mightContainLong(" in predicate) == filtered
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
    assertDataFrameEqual(results[1], results[0])
    assertDataFrameEqual(results[2], results[0])
    unfiltered, filtered_records, broadcast_records = shuffled
    assert unfiltered >= 5_000 and filtered_records < 1_000, shuffled
    # broadcast, the batch is shuffled only by the join that finds the inserts
    assert broadcast_records < filtered_records, shuffled


@batch_scale
def test_a_batch_larger_than_a_slice_is_upserted_slice_by_slice(spark, tmp_path, monkeypatch):
    """With two pairs a MERGE, five known-end pairs (three newer sightings, two new pairs) are
    upserted in src_id slices, one MERGE commit each, to the table one MERGE would give; the same
    batch again changes nothing."""
    monkeypatch.setattr(T, "MERGE_SLICE_KEYS", 2)
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    T.LINKS.ensure(lake)
    stored = [_link(s, s + 1, f"a{s}", DAY1) for s in range(10)]
    lake.append(S.LINKS_TABLE, spark.createDataFrame(stored, S.LINKS).coalesce(1))
    before = lake.current_version(S.LINKS_TABLE)
    changed = [_link(1, 2, "newer", DAY2), _link(4, 5, "newer", DAY2), _link(7, 8, "newer", DAY2),
               _link(2, 9, "new", DAY2), _link(8, 1, "new", DAY2)]
    batch = spark.createDataFrame(changed, S.LINKS)
    assert len(T.key_slices(batch, S.SRC_ID, 2)) == 3
    assert T.upsert_links(lake, batch) == (2, 3)
    assert lake.current_version(S.LINKS_TABLE) - before == 3
    kept = [r for r in stored if r.src_id not in (1, 4, 7)]
    assertDataFrameEqual(lake.read(S.LINKS_TABLE), spark.createDataFrame(kept + changed, S.LINKS))
    assert T.upsert_links(lake, batch) == (0, 0)


@batch_scale
def test_aggregates_over_an_in_memory_cache_read_it_in_few_tasks(spark):
    """A key filter or key ranges built over a batch cached in memory read it in one task per
    million rows (each task's partial filter is shuffled at the filter's full size); a frame that
    is computed, or cached on disk only, keeps its tasks (fewer would compute it)."""
    from pyspark import StorageLevel

    from linkgraph.lake.delta import fewer_tasks

    cached = spark.range(0, 10_000, 1, 8).persist(StorageLevel.MEMORY_AND_DISK)
    computed = spark.range(1, 10_001, 1, 8)   # not the cached plan (a cache serves every equal plan)
    on_disk = spark.range(2, 10_002, 1, 8).persist(StorageLevel.DISK_ONLY)
    try:
        assert fewer_tasks(cached.where(F.col("id") > 5), 10_000).rdd.getNumPartitions() == 1
        assert fewer_tasks(cached, 2_500_000).rdd.getNumPartitions() == 3
        assert fewer_tasks(computed, 10_000).rdd.getNumPartitions() == 8
        assert fewer_tasks(on_disk, 10_000).rdd.getNumPartitions() == 8
        bloom = bloom_filter_condition(fewer_tasks(cached, 10_000), ["id"], ["id"], 10_000)
        assert cached.where(bloom).count() == 10_000
    finally:
        cached.unpersist()
        on_disk.unpersist()
