"""Two ingests into one lake at once: Delta serialises their MERGEs; the loser of a race fails with
Delta's conflict error (a clear message naming it) and lands when re-run, and the lake ends up
exactly as if the two batches had been ingested one after the other: no row lost or duplicated."""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType
from pyspark.testing import assertDataFrameEqual

from linkgraph.lake import schemas as S
from linkgraph.lake import tables
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.reliability import ConflictRetriesExhausted, retry_on_conflict
from reliability_support import crawl_records, write_jsonl
from steps_support import ingest_step


def by_url(spark, lake_dir):
    """Pages and links keyed by URL (page ids depend on which batch landed first)."""
    lake = spark.read.format("delta")
    pages = lake.load(str(lake_dir / S.PAGES_TABLE))
    links = lake.load(str(lake_dir / S.LINKS_TABLE))
    src = pages.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(S.URL).alias(S.FROM_URL))
    dst = pages.select(F.col(S.PAGE_ID).alias(S.DST_ID), F.col(S.URL).alias(S.TO_URL))
    link_rows = links.join(src, on=S.SRC_ID, how="inner").join(dst, on=S.DST_ID, how="inner").drop(S.SRC_ID, S.DST_ID)
    rejects = lake.load(str(lake_dir / S.REJECTS_TABLE)).drop(S.REJECTED_AT)
    return pages.drop(S.PAGE_ID), link_rows, rejects


def assert_ids_unique_and_dense(spark, lake_dir):
    pages = spark.read.format("delta").load(str(lake_dir / S.PAGES_TABLE))
    row = pages.agg(F.count("*").alias("n"), F.countDistinct(S.PAGE_ID).alias("ids"),
                    F.countDistinct(S.URL).alias("urls"), F.max(S.PAGE_ID).alias("max_id")).first()
    assert row.n == row.ids == row.urls == row.max_id + 1, row
    links = spark.read.format("delta").load(str(lake_dir / S.LINKS_TABLE))
    assert links.select(S.SRC_ID, S.DST_ID).distinct().count() == links.count()


@pytest.fixture(scope="module")
def batch_files(tmp_path_factory):
    """Two overlapping batches (half of their hosts shared, so each has new pages of its own):
    (their directory, the first file, the second)."""
    base = tmp_path_factory.mktemp("concurrent")
    first = write_jsonl(base / "first.jsonl", crawl_records(seed=1)[:300])
    second = write_jsonl(base / "second.jsonl", crawl_records(seed=2, first_host=6)[:300])
    return base, first, second


@pytest.fixture(scope="module")
def batches(spark, batch_files):
    """The two batches and the lake after ingesting them one after the other."""
    base, first, second = batch_files
    reference = base / "reference"
    config = config_from_dict({"lake": {"path": str(reference)}})
    ingest_step(spark, config, first, "jsonl")
    ingest_step(spark, config, second, "jsonl")
    return base, first, second, reference


@pytest.mark.drill
def test_ingest_held_open_while_another_commits_lands_or_fails_clearly(spark, batches, tmp_path, monkeypatch):
    """Forced overlap: the first ingest's pages MERGE is held open (a UDF in its source waits for a
    flag file) while the second ingest runs and commits.  Either the held one fails with a clear
    conflict message and lands when re-run, or both land; either way nothing is lost or doubled."""
    _, first, second, reference = batches
    lake_dir = tmp_path / "lake"
    no_retry = config_from_dict({"lake": {"path": str(lake_dir)}, "reliability": {"conflict_attempts": 1}})
    entered, release = tmp_path / "entered", tmp_path / "release"

    def wait_for_release(url):
        # runs in a Python worker: the first task to get here holds its MERGE open
        try:
            os.close(os.open(entered, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return True
        while not os.path.exists(release):
            time.sleep(0.05)
        return True

    held = F.udf(wait_for_release, BooleanType())
    original = tables.upsert_numbered_pages

    def upsert_pages_held(lake, pages, *args, **options):
        if threading.current_thread().name == "held-ingest":
            pages = pages.where(held(F.col(S.URL)))
        return original(lake, pages, *args, **options)

    monkeypatch.setattr(tables, "upsert_numbered_pages", upsert_pages_held)
    outcome: dict[str, BaseException | object] = {}

    def run_held():
        try:
            outcome["report"] = ingest_step(spark, no_retry, first, "jsonl")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run_held, name="held-ingest")
    thread.start()
    deadline = time.monotonic() + 600
    while not entered.exists():
        assert thread.is_alive() and time.monotonic() < deadline, outcome
        time.sleep(0.1)
    winner = ingest_step(spark, no_retry, second, "jsonl")
    release.touch()
    thread.join(600)
    assert winner.written + winner.rejected == winner.read

    error = outcome.get("error")
    monkeypatch.setattr(tables, "upsert_numbered_pages", original)
    if error is not None:
        # the held MERGE lost: Delta's conflict (or the page-id guard), one clear message, then a re-run lands
        assert isinstance(error, ConflictRetriesExhausted), error
        message = str(error)
        assert f"ingest {first}: a concurrent job committed to the same Delta table first (Concurrent" in message
        assert "re-run the command" in message
        retried = ingest_step(spark, no_retry, first, "jsonl")
        assert retried.read == retried.written + retried.rejected == 300
    else:
        # both landed: the held MERGE was planned against the table the other ingest left
        report = outcome["report"]
        assert report.read == report.written + report.rejected == 300
    assert_ids_unique_and_dense(spark, lake_dir)
    for got, expected in zip(by_url(spark, lake_dir), by_url(spark, reference), strict=True):
        assertDataFrameEqual(got, expected)


@pytest.mark.drill
def test_simultaneous_ingests_both_land(spark, batches, tmp_path, caplog):
    """Free race on a fresh lake: both jobs start together (table creation races too); with the
    default retries both land, whichever conflicts."""
    _, first, second, reference = batches
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")},
                               "reliability": {"conflict_attempts": 5, "conflict_backoff_seconds": 0.5}})
    reports, errors = {}, {}

    def run(name, path):
        try:
            reports[name] = ingest_step(spark, config, path, "jsonl")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            errors[name] = exc

    caplog.set_level(logging.WARNING, logger="linkgraph.lake.reliability")
    threads = [threading.Thread(target=run, args=(n, p)) for n, p in (("first", first), ("second", second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    assert not errors, {name: f"{type(exc).__name__}: {exc}" for name, exc in errors.items()}
    assert all(r.read == r.written + r.rejected == 300 for r in reports.values())
    retries = [r.getMessage() for r in caplog.records if "retrying the step" in r.getMessage()]
    print(f"conflicts retried: {len(retries)}", *retries, sep="\n")
    assert_ids_unique_and_dense(spark, tmp_path / "lake")
    for got, expected in zip(by_url(spark, tmp_path / "lake"), by_url(spark, reference), strict=True):
        assertDataFrameEqual(got, expected)


@pytest.mark.parametrize("half_created", ["empty log directory", "temporary commit file"])
def test_creating_a_table_another_job_is_creating_waits_for_its_first_commit(spark, tmp_path, half_created):
    """The other job has made the table's ``_delta_log`` but not yet written its first commit (the
    moment the free race above can hit): ``ensure`` waits for that commit instead of failing, and
    does not count the table as its own.  A directory that never becomes a table still fails."""
    import shutil

    from linkgraph.lake.delta import Lake

    other = Lake(spark, config_from_dict({"lake": {"path": str(tmp_path / "other")}}).lake)
    other.ensure(S.REJECTS_TABLE, S.REJECTS)
    first_commit = tmp_path / "other" / S.REJECTS_TABLE / "_delta_log" / f"{0:020d}.json"

    lake = Lake(spark, config_from_dict({"lake": {"path": str(tmp_path / "lake")}}).lake)
    log_dir = tmp_path / "lake" / S.REJECTS_TABLE / "_delta_log"
    log_dir.mkdir(parents=True)
    if half_created == "temporary commit file":
        (log_dir / f".{0:020d}.json.0f1e2d.tmp").write_text("{}")
    committer = threading.Timer(2.0, shutil.copy, (first_commit, log_dir))
    committer.start()
    started = time.monotonic()
    lake.ensure(S.REJECTS_TABLE, S.REJECTS)
    committer.join()
    assert time.monotonic() - started >= 2.0
    assert lake.commits == []
    assert lake.read(S.REJECTS_TABLE).columns == S.REJECTS.fieldNames()

    stray = tmp_path / "lake" / "sitemaps"
    stray.mkdir()
    (stray / "notes.txt").write_text("not a table")
    lake.CREATION_WAIT_SECONDS = 1.0
    with pytest.raises(Exception, match="sitemaps"):
        lake.ensure("sitemaps", S.REJECTS)


@pytest.mark.slow
def test_page_id_guard_removes_its_pages_even_when_its_delete_conflicts(spark, batch_files, tmp_path, monkeypatch):
    """Two ingests numbered new pages from the same maximum and both committed: the later one's
    guard deletes its own new pages; a conflict on that delete is retried, so no id stays shared."""
    from delta.exceptions import ConcurrentAppendException

    from linkgraph.lake.delta import Lake
    from linkgraph.lake.reliability import ConcurrentPageIdException, guard_new_page_ids

    _, first, _ = batch_files
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    ingest_step(spark, config, first, "jsonl")
    lake = Lake(spark, config.lake)
    read_version = lake.current_version(S.PAGES_TABLE)
    next_id = lake.read(S.PAGES_TABLE).agg(F.max(S.PAGE_ID)).first()[0] + 1

    def pages(host):
        return spark.createDataFrame(
            [(next_id + i, f"http://{host}.example.com/{i}", f"{host}.example.com", "example.com",
              f"com.example.{host}/{i}", None, None) for i in range(2)], S.PAGES)

    lake.append(S.PAGES_TABLE, pages("other"))   # the concurrent ingest's new pages
    mine = pages("mine")
    lake.append(S.PAGES_TABLE, mine)             # this ingest's, numbered from the same maximum
    deletes = []
    delete_matching = Lake.delete_matching

    def conflicting_once(self, table, keys_df, keys, **options):
        deletes.append(table)
        if len(deletes) == 1:
            raise ConcurrentAppendException("Files were added to the root of the table by a concurrent update.")
        return delete_matching(self, table, keys_df, keys, **options)

    monkeypatch.setattr(Lake, "delete_matching", conflicting_once)
    with pytest.raises(ConcurrentPageIdException):
        guard_new_page_ids(lake, read_version, mine.select(S.URL, S.PAGE_ID))
    assert deletes == [S.PAGES_TABLE, S.PAGES_TABLE]
    stored = lake.read(S.PAGES_TABLE)
    assert stored.where(F.col(S.HOST) == "mine.example.com").count() == 0
    assert stored.where(F.col(S.HOST) == "other.example.com").count() == 2
    assert stored.select(S.PAGE_ID).distinct().count() == stored.count()


@pytest.mark.parametrize("fmt", ["warc", "wat", "ccgraph"])
def test_crawl_format_ingests_are_retried_on_a_conflict(spark, tmp_path, monkeypatch, fmt):
    """WARC, WAT and ccgraph ingests go through the same conflict retry as edge records: each
    attempt gets a fresh step context (run id and clock)."""
    from delta.exceptions import ConcurrentAppendException

    from linkgraph.steps import ingest_crawl

    attempts = []

    def conflicting_once(ctx, input_path, given_fmt, policy):
        attempts.append((ctx.run_id, given_fmt))
        if len(attempts) == 1:
            raise ConcurrentAppendException("Files were added to the root of the table by a concurrent update.")
        return "landed"

    monkeypatch.setattr(ingest_crawl, "run", conflicting_once)
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")},
                               "reliability": {"conflict_attempts": 2, "conflict_backoff_seconds": 0.0}})
    assert ingest_step(spark, config, str(tmp_path / f"input.{fmt}"), fmt) == "landed"
    assert [f for _, f in attempts] == [fmt, fmt] and attempts[0][0] != attempts[1][0]


def test_retry_reruns_only_on_delta_conflicts():
    from delta.exceptions import ConcurrentAppendException

    calls, waits = [], []

    def step():
        calls.append(1)
        if len(calls) < 3:
            raise ConcurrentAppendException("Files were added to the root of the table by a concurrent update.")
        return "done"

    assert retry_on_conflict(step, "ingest x", attempts=3, backoff_seconds=1.0, sleep=waits.append) == "done"
    assert len(calls) == 3 and len(waits) == 2 and 0.5 <= waits[0] < 1.5 and 1.0 <= waits[1] < 3.0

    calls.clear()
    with pytest.raises(ConflictRetriesExhausted, match=r"ingest x: .*\(ConcurrentAppendException\) on each of 2"):
        retry_on_conflict(step, "ingest x", attempts=2, backoff_seconds=0.0, sleep=waits.append)

    def broken():
        calls.append(1)
        raise ValueError("not a conflict")

    calls.clear()
    with pytest.raises(ValueError):
        retry_on_conflict(broken, "ingest x", attempts=3, backoff_seconds=0.0, sleep=waits.append)
    assert len(calls) == 1


def test_a_core_table_not_yet_readable_but_existing_now_is_a_retried_conflict(spark, tmp_path):
    """``DELTA_TABLE_NOT_FOUND`` for a table another ingest was creating becomes a conflict once
    the table exists; for a table that still does not exist, or another error, nothing changes."""
    from linkgraph.lake.delta import Lake
    from linkgraph.lake.reliability import (
        ConcurrentTableCreationException,
        is_delta_conflict,
        raise_if_created_concurrently,
    )

    lake = Lake(spark, config_from_dict({"lake": {"path": str(tmp_path / "lake")}}).lake)
    tables.ensure_core_tables(lake)
    not_found = RuntimeError(f"[DELTA_TABLE_NOT_FOUND] Delta table `{lake.location(S.PAGES_TABLE)}` doesn't exist.")
    with pytest.raises(ConcurrentTableCreationException) as raised:
        raise_if_created_concurrently(lake, (S.PAGES_TABLE, S.LINKS_TABLE), not_found)
    assert is_delta_conflict(raised.value) and raised.value.__cause__ is not_found

    missing = RuntimeError(f"[DELTA_TABLE_NOT_FOUND] Delta table `{lake.location('frontier')}` doesn't exist.")
    raise_if_created_concurrently(lake, (S.PAGES_TABLE, "frontier"), missing)
    raise_if_created_concurrently(lake, (S.PAGES_TABLE,), ValueError("pages` doesn't exist"))


def test_config_rejects_no_attempts():
    from linkgraph.lake.config import ConfigError

    with pytest.raises(ConfigError, match="reliability.conflict_attempts"):
        config_from_dict({"reliability": {"conflict_attempts": 0}})
    assert dataclasses.asdict(config_from_dict({}).reliability) == {"conflict_attempts": 3, "conflict_backoff_seconds": 2.0}


def test_a_command_in_a_thread_of_its_own_uses_the_process_session_without_owning_it(spark):
    """A notebook's or a test's thread has no active session of its own, yet shares the process's
    SparkContext: ``existing_session`` finds that session there, so ``linkgraph.cli.main`` run in
    such a thread neither builds one (re-applying the project's settings to everyone's) nor, at its
    end, deletes the checkpoints another command in the process is reading."""
    from linkgraph.lake.session import existing_session

    seen = []
    thread = threading.Thread(target=lambda: seen.append(existing_session()))
    thread.start()
    thread.join(60)
    assert seen and seen[0] is not None
    assert seen[0].sparkContext is spark.sparkContext
    assert seen[0].conf.get("spark.sql.shuffle.partitions") == spark.conf.get("spark.sql.shuffle.partitions")
