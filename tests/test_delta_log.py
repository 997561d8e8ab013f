"""What the Delta log costs: look-ups of the commits since a version read touch only those
commits, and a MERGE with a key filter commits a small ``commitInfo``."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from conftest import as_links
from linkgraph.lake import keyfilter
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import LakeConfig
from linkgraph.lake.delta import Lake
from linkgraph.lake.reliability import check_pages_still_there, guard_new_page_ids


def _pages(spark, ids, host):
    return spark.createDataFrame(
        [(i, f"http://{host}.example.com/{i}", f"{host}.example.com", "example.com", f"com.example.{host}/{i}",
          None, None) for i in ids], S.PAGES)


def _commit_file(table_dir: Path, version: int) -> Path:
    return table_dir / "_delta_log" / f"{version:020d}.json"


def test_the_commits_since_a_version_read_are_looked_up_without_reading_older_ones(spark, tmp_path):
    """A pages table with 30 commits, checkpointed at the version an ingest read and every commit
    file up to it made unreadable: the versions since, the page-id guard and the prune check still
    work (they read the two newest commits only), where the table's whole history cannot be read."""
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    T.PAGES.ensure(lake)
    lake.append(S.PAGES_TABLE, _pages(spark, range(1, 29), "old"))
    table_dir = tmp_path / "lake" / S.PAGES_TABLE
    for i in range(27):   # commits that change a table property only (no Spark job)
        spark.sql(f"ALTER TABLE delta.`{table_dir}` SET TBLPROPERTIES ('linkgraph.test.commit' = '{i}')")
    read = lake.current_version(S.PAGES_TABLE)
    assert read == 28
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(table_dir)).checkpoint()
    for version in range(read + 1):
        _commit_file(table_dir, version).write_text("{not a commit\n")

    other = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    other.append(S.PAGES_TABLE, _pages(spark, [29], "other"))    # another ingest's new page
    mine = _pages(spark, [30], "mine")
    lake.append(S.PAGES_TABLE, mine)                               # this ingest's
    assert lake.versions_since(S.PAGES_TABLE, read) == [29, 30]
    assert lake.versions_since(S.PAGES_TABLE, 30) == []
    assert [r.version for r in lake.delta_table(S.PAGES_TABLE).history(2).collect()] == [30, 29]
    with pytest.raises(Exception, match="(?i)json"):
        lake.delta_table(S.PAGES_TABLE).history().collect()

    # another commit since the version read: both checks look at the pages, and find nothing wrong
    assert guard_new_page_ids(lake, read, mine.select(S.URL, S.PAGE_ID)) is False
    resolved = spark.createDataFrame([(29, 30), (1, 30)], "src_id LONG, dst_id LONG")
    check_pages_still_there(lake, read, resolved)
    # none since: no look at the pages at all
    assert guard_new_page_ids(lake, 30, mine.select(S.URL, S.PAGE_ID)) is True
    assert lake.read(S.PAGES_TABLE).count() == 30


def test_a_merge_with_a_key_filter_records_no_filter_bytes_in_its_commit(spark, tmp_path, monkeypatch):
    """A MERGE whose condition holds a key filter of the largest size (1 MiB) commits a JSON file
    of a few kB: the predicate Delta records names the filter, it does not spell it out; the
    table after it is the one an unfiltered MERGE gives."""
    monkeypatch.setattr(keyfilter, "MIN_TABLE_BYTES", 0)
    # every filter as large as a batch of ~870,000 keys gets
    monkeypatch.setattr(keyfilter, "filter_bits",
                        lambda keys, fpp=keyfilter.FALSE_POSITIVE_RATE, max_bytes=keyfilter.MAX_FILTER_BYTES:
                        8 * max_bytes)

    stored = as_links(spark.range(2_000).select((F.col("id") % 200).alias("src_id"),
                                             (F.col("id") / 200).cast("long").alias("dst_id"),
                                             F.lit("old").alias("anchor_text")))
    batch = as_links(spark.createDataFrame([(s * 10, 3 if s < 10 else 50, "new") for s in range(20)],
                                        "src_id LONG, dst_id LONG, anchor_text STRING"))
    results, sizes = [], []
    for filtered in (False, True):
        lake = Lake(spark, LakeConfig(path=str(tmp_path / f"lake-{filtered}")))
        T.LINKS.ensure(lake)
        lake.append(S.LINKS_TABLE, stored.coalesce(2))
        metrics = lake.merge(S.LINKS_TABLE, batch, [S.SRC_ID, S.DST_ID], update_set={S.ANCHOR_TEXT: "s.anchor_text"},
                             filter_keys=filtered)
        assert (metrics.inserted, metrics.updated) == (10, 10), metrics
        predicate = lake.delta_table(S.LINKS_TABLE).history(1).first()["operationParameters"]["predicate"]
        assert ("mightContainLong(" in predicate) == filtered, predicate
        sizes.append(_commit_file(tmp_path / f"lake-{filtered}" / S.LINKS_TABLE, metrics.version).stat().st_size)
        results.append(lake.read(S.LINKS_TABLE))
    assertDataFrameEqual(results[1], results[0])
    unfiltered, filtered = sizes
    assert filtered < 64 << 10 and filtered - unfiltered < 1 << 10, sizes


def test_what_a_table_was_built_from_survives_the_compaction_commits_after_its_write(spark, tmp_path):
    """Auto compaction (on in conf/cluster.yaml) commits an ``OPTIMIZE`` right after a write; an
    ``OPTIMIZE`` run by hand adds another.  Neither changes a row, so the table's ``built_from``
    and the rows its build wrote stay those of the write: a step that finds its inputs unchanged
    writes nothing (instead of rebuilding, and so moving every later step's inputs)."""
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    spark.conf.set("spark.databricks.delta.autoCompact.enabled", "true")
    spark.conf.set("spark.databricks.delta.autoCompact.minNumFiles", "2")
    try:
        lake.overwrite(S.PAGES_TABLE, _pages(spark, range(1, 41), "a").repartition(4), built_from="inputs v1")
    finally:
        spark.conf.set("spark.databricks.delta.autoCompact.enabled", "false")
        spark.conf.unset("spark.databricks.delta.autoCompact.minNumFiles")
    lake.delta_table(S.PAGES_TABLE).optimize().executeCompaction()   # nothing left to compact: no commit
    lake.append(S.PAGES_TABLE, _pages(spark, [41], "b"))
    lake.overwrite(S.PAGES_TABLE, lake.read(S.PAGES_TABLE).repartition(3), built_from="inputs v2")
    lake.delta_table(S.PAGES_TABLE).optimize().executeCompaction()
    operations = [row.operation for row in lake.delta_table(S.PAGES_TABLE).history().collect()]
    assert operations[:2] == ["OPTIMIZE", "WRITE"] and "OPTIMIZE" in operations[2:], operations

    assert lake.built_from(S.PAGES_TABLE) == "inputs v2"
    assert lake.rows_written(S.PAGES_TABLE) == 41
    assert lake.last_build(S.PAGES_TABLE) == ("inputs v2", 41)
    assert lake.version(S.PAGES_TABLE) == len(operations) - 1   # the version is still the newest


def _ranks(spark, run_id, n):
    return spark.createDataFrame([(i, 0, 1.0 / n, f"http://a.example.com/{i}", run_id) for i in range(n)],
                                 "page_id LONG, vector_id INT, rank DOUBLE, url STRING, run_id STRING")


def test_the_rank_run_a_step_reads_comes_from_the_log_without_a_spark_job(spark, tmp_path):
    """``flags`` and ``scores`` ask which rank run ``pagerank`` holds: the run id its write recorded
    is read from the Delta log, no job; a table written without one (an older release) is read."""
    lake = Lake(spark, LakeConfig(path=str(tmp_path / "lake")))
    assert T.latest_rank_run_id(lake) is None
    T.PAGERANK.overwrite(lake, _ranks(spark, "older", 3).select(*S.PAGERANK.fieldNames()))
    assert T.latest_rank_run_id(lake) == "older"
    T.PAGERANK.overwrite(lake, _ranks(spark, "2026-11-17-pagerank", 3).select(*S.PAGERANK.fieldNames()),
                         built_from=T.rank_run_marker("2026-11-17-pagerank"))
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("rank-run-look-up", "the rank run id, from the log")
    try:
        assert T.latest_rank_run_id(lake) == "2026-11-17-pagerank"
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert list(tracker.getJobIdsForGroup("rank-run-look-up")) == []
    T.PAGERANK.overwrite(lake, _ranks(spark, "empty", 0).select(*S.PAGERANK.fieldNames()),
                         built_from=T.rank_run_marker("empty"))
    assert T.latest_rank_run_id(lake) is None
