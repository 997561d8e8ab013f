"""Crash safety: SIGKILL the ingest and PageRank jobs (their whole process group: Python driver,
driver JVM, workers) at several points, check that every committed Delta version is complete,
re-run, and compare with an uninterrupted run.

Each killed job runs ``python -m linkgraph.cli`` in its own process and starts its own Spark, so
these tests cost about a Spark start per kill; the re-runs use the test session.  The multi-table
steps that follow ingest (analyze and compress here, the reward run's prune and its undo in
tests/test_reward.py) die in-process instead, right after each of their commits in turn, through
the same crash hook (tests/crash_hook.py, ``LINKGRAPH_CRASH_AFTER_COMMITS``) that SIGKILLs the
ingest job above, launched through tests/crash_launch.py.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from crash_hook import CRASH_AFTER_COMMITS, CRASH_HOOK, LAUNCHER, SimulatedCrash, arm
from linkgraph.cli import main
from linkgraph.lake import schemas as S
from linkgraph.lake.config import load_config
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from reliability_support import (
    CliProcess,
    check_every_version,
    committed,
    crawl_records,
    data_files,
    versions,
    write_conf,
    write_jsonl,
)
from steps_support import ingest_step, pagerank_step

pytestmark = pytest.mark.drill   # minutes of killed jobs: bench/drills.py runs them


def check_core_tables_complete(spark, lake_dir) -> dict[str, int]:
    """Every committed version of pages, links and rejects is readable and internally
    consistent: unique page ids and URLs, one row per link pair whose ids are known pages
    (page ids never change, so the latest pages table is the reference), unique reject ids."""
    all_page_ids = spark.read.format("delta").load(str(lake_dir / S.PAGES_TABLE)).select(S.PAGE_ID)

    def pages_ok(version, pages):
        row = pages.agg(F.count("*").alias("n"), F.countDistinct(S.PAGE_ID).alias("ids"),
                        F.countDistinct(S.URL).alias("urls")).first()
        assert row.n == row.ids == row.urls, (version, row)

    def links_ok(version, links):
        n = links.count()
        assert links.select(S.SRC_ID, S.DST_ID).distinct().count() == n, version
        ends = links.select(F.col(S.SRC_ID).alias(S.PAGE_ID)).union(links.select(F.col(S.DST_ID).alias(S.PAGE_ID)))
        assert ends.join(all_page_ids, on=S.PAGE_ID, how="left_anti").count() == 0, version

    def rejects_ok(version, rejects):
        assert rejects.select(S.REJECT_ID).distinct().count() == rejects.count(), version

    return {
        table: check_every_version(spark, lake_dir / table, check)
        for table, check in ((S.PAGES_TABLE, pages_ok), (S.LINKS_TABLE, links_ok), (S.REJECTS_TABLE, rejects_ok))
    }


def core_tables(spark, lake_dir):
    lake = spark.read.format("delta")
    return (lake.load(str(lake_dir / S.PAGES_TABLE)), lake.load(str(lake_dir / S.LINKS_TABLE)),
            lake.load(str(lake_dir / S.REJECTS_TABLE)).drop(S.REJECTED_AT))


def test_killed_ingest_leaves_complete_versions_and_rerun_matches_uninterrupted(spark, tmp_path):
    source = write_jsonl(tmp_path / "crawl.jsonl", crawl_records())
    lake_dir = tmp_path / "lake"
    conf = write_conf(tmp_path / "job.yaml", lake_dir)
    args = ["ingest", "--input", source, "--format", "jsonl", "--conf", str(conf)]

    # Kill 1: while the pages MERGE writes its files (before or just after its commit).
    job = CliProcess(args, tmp_path / "kill1.log")
    job.kill_when(lambda: bool(data_files(lake_dir / S.PAGES_TABLE)))
    assert not committed(lake_dir / S.LINKS_TABLE, 1), "links were written before the pages MERGE finished"
    check_core_tables_complete(spark, lake_dir)

    # Kill 2: once links are committed, before the rejects MERGE: the job SIGKILLs its own process
    # group right after its links commit (the crash hook, installed by the launcher).
    job = CliProcess(args, tmp_path / "kill2.log", env={CRASH_AFTER_COMMITS: S.LINKS_TABLE}, launcher=LAUNCHER)
    assert job.wait() == -signal.SIGKILL, job.output()[-3000:]
    assert committed(lake_dir / S.LINKS_TABLE, 1) and "crash hook: stopping after commit" in job.output()
    checked = check_core_tables_complete(spark, lake_dir)
    assert checked[S.LINKS_TABLE] >= 2   # the empty table and the committed MERGE

    config = load_config(conf)
    rerun = ingest_step(spark, config, source, "jsonl")
    assert rerun.read == len(crawl_records()) == rerun.written + rerun.rejected
    check_core_tables_complete(spark, lake_dir)

    reference = tmp_path / "reference"
    ingest_step(spark, load_config(write_conf(tmp_path / "ref.yaml", reference)), source, "jsonl")
    for got, expected in zip(core_tables(spark, lake_dir), core_tables(spark, reference), strict=True):
        assertDataFrameEqual(got, expected)


PAGERANK_SECTIONS = {
    # two blocks iterated as Spark jobs (not one task), state saved every 3 iterations, and a
    # tolerance no run reaches, so every run does exactly max_iter iterations
    "rank": {"blocks": 2, "single_task": False, "checkpoint_every": 3, "tol": 1.0e-15, "max_iter": 14},
}


def _iteration_logged(job: CliProcess, iteration: int) -> bool:
    return f"pagerank iteration {iteration}:" in job.output()


def test_killed_pagerank_resumes_from_its_checkpoint_with_the_same_ranks(spark, tmp_path, capsys):
    lake_dir = tmp_path / "lake"
    conf = write_conf(tmp_path / "job.yaml", lake_dir, **PAGERANK_SECTIONS)
    config = load_config(conf)
    ingest_step(spark, config, write_jsonl(tmp_path / "crawl.jsonl", crawl_records()), "jsonl")
    lake = Lake(spark, config.lake)
    n_pages = lake.read(S.PAGES_TABLE).count()

    # Kill once an iteration past the first checkpoint (iteration 3) has been logged.
    job = CliProcess(["pagerank", "--conf", str(conf)], tmp_path / "kill.log")
    job.kill_when(lambda: _iteration_logged(job, 4))
    assert "rank state of iteration 3 saved" in job.output()

    def state_ok(version, state):
        rows = state.groupBy("iteration").count().collect()
        # a version holds no state (created/cleared) or all blocks of exactly one iteration
        assert len(rows) <= 1 and all(r["count"] == 2 for r in rows), (version, rows)

    assert check_every_version(spark, lake_dir / S.RANK_STATE_TABLE, state_ok) >= 1
    saved = lake.read(S.RANK_STATE_TABLE).select("iteration").first().iteration
    assert saved >= 3 and saved % 3 == 0
    assert not lake.exists(S.PAGERANK_TABLE)

    assert main(["pagerank", "--conf", str(conf)]) == 0
    summary = capsys.readouterr().out
    assert f"resumed from iteration {saved}" in summary
    run = lake.read(S.RANK_RUNS_TABLE).first()
    assert run.resumed_from == saved
    assert [h.iteration for h in run.history] == list(range(saved + 1, 15))
    resumed_version = lake.version(S.PAGERANK_TABLE)

    uninterrupted = pagerank_step(spark, config)
    assert uninterrupted.resumed_from is None and uninterrupted.iterations == 14

    def pagerank_ok(version, ranks):
        row = ranks.agg(F.count("*").alias("n"), F.sum(S.RANK).alias("total"), F.countDistinct(S.RUN_ID).alias("runs")).first()
        assert row.n == n_pages and row.runs == 1 and abs(row.total - 1.0) < 1e-9, (version, row)

    assert check_every_version(spark, lake_dir / S.PAGERANK_TABLE, pagerank_ok) == 2
    resumed = (spark.read.format("delta").option("versionAsOf", resumed_version).load(str(lake_dir / S.PAGERANK_TABLE))
               .select(S.PAGE_ID, S.RANK))
    assertDataFrameEqual(resumed, lake.read(S.PAGERANK_TABLE).select(S.PAGE_ID, S.RANK), rtol=1e-12, atol=1e-15)
    assert versions(spark, lake_dir / S.RANK_STATE_TABLE)  # the state table exists and ...
    assert lake.read(S.RANK_STATE_TABLE).count() == 0     # ... is emptied by a finished run


def test_analyze_and_compress_killed_after_each_commit_end_as_the_uninterrupted_run(spark, sample_lake, tmp_path,
                                                                                    monkeypatch):
    """``analyze`` and ``compress`` on a copy of the sample lake without their tables, each dying
    right after every one of its commits in turn (the crash hook of tests/crash_hook.py in
    raise mode: only ``finally`` blocks run on the way out, none writes a table, so each crash
    leaves what a SIGKILL there would), re-run until one attempt finishes.  Each table is written
    once, from the recorded input versions (every crash state mixes no versions), and the tables
    equal those the uninterrupted ``linkgraph run`` of ``sample_lake`` wrote.  Neither step reads
    ``pages`` or ``links`` other than at the version it records.

    Each attempt dies after its first commit, so attempt i+1 is the re-run from the state after
    commit i: a chain covers every boundary (a step resumes from the tables alone)."""
    from delta.tables import DeltaTable

    from linkgraph.steps import analyze, compress

    steps = ((analyze, analyze.ANALYSIS_TABLES), (compress, compress.TABLES))
    rebuilt = {table for _, tables in steps for table in tables}
    lake_dir = tmp_path / "lake"
    shutil.copytree(sample_lake.lake, lake_dir,
                    ignore=lambda directory, names: [n for n in names if n in rebuilt and Path(directory) == sample_lake.lake])
    config = load_config(None).with_lake_path(str(lake_dir))   # `linkgraph run --lake lake`: the built-in defaults
    # pages and links are read only at the versions a step records (time travel), never the latest
    latest = Lake.read

    def read_not_inputs(self, table):
        assert table not in (S.PAGES_TABLE, S.LINKS_TABLE), f"{table} read at its latest version"
        return latest(self, table)

    monkeypatch.setattr(Lake, "read", read_not_inputs)

    for step, tables in steps:
        crashed = []
        while True:
            arm(monkeypatch, "1:raise")
            try:
                step.run(StepContext.create(spark, config), step.Params())
                break
            except SimulatedCrash:
                crashed.append(CRASH_HOOK.tables[-1])
                assert len(crashed) <= len(tables), crashed
        assert crashed == list(tables) and CRASH_HOOK.tables == []   # the last attempt had nothing left to do
    monkeypatch.delenv(CRASH_AFTER_COMMITS)

    inputs = None
    for table in sorted(rebuilt):
        history = DeltaTable.forPath(spark, str(lake_dir / table)).history().select("userMetadata").collect()
        assert len(history) == 1, (table, len(history))   # written once over all attempts
        if table in analyze.ANALYSIS_TABLES:
            inputs = inputs or history[0].userMetadata
            assert history[0].userMetadata == inputs, table   # built from the same pages/links versions
        got = spark.read.format("delta").load(str(lake_dir / table))
        expected = spark.read.format("delta").load(str(sample_lake.lake / table))
        if table == S.DOMAIN_AUTHORITY_TABLE:
            got, expected = got.drop(S.RUN_ID), expected.drop(S.RUN_ID)
        assertDataFrameEqual(got, expected)


def _comparable(df):
    """``df`` without what differs between two runs of the same computation: run ids, times."""
    from pyspark.sql.types import TimestampType

    return df.select(*[f.name for f in df.schema.fields if f.name not in (S.RUN_ID, "discovered_run_id", "seconds")
                       and not isinstance(f.dataType, TimestampType)])


def test_killed_reward_rerun_without_run_id_equals_a_clean_run(spark, tmp_path, capsys):
    """``linkgraph reward`` in its own process, SIGKILLed right after it replaced ``reward_scores``
    (the crash hook through tests/crash_launch.py); ``linkgraph reward`` again, without
    ``--run-id``: the rerun takes over the killed run's lease at once (its process is gone) and
    completes that run instead of applying new rounds on top of its scores.  Every table equals
    the one a clean run writes on a lake built the same way."""
    reward = {"seeds": ["http://www.site0.com/p0", "http://www.site5.com/p3"], "rounds": 3,
              "max_prune_share": 1.0}   # the prune is part of what the rerun must complete
    source = write_jsonl(tmp_path / "crawl.jsonl", crawl_records())
    lakes = {name: tmp_path / name for name in ("killed", "clean")}
    confs = {name: write_conf(tmp_path / f"{name}.yaml", lake, reward=reward) for name, lake in lakes.items()}
    for name in lakes:
        ingest_step(spark, load_config(confs[name]), source, "jsonl")
    assert main(["reward", "--conf", str(confs["clean"])]) == 0

    job = CliProcess(["reward", "--conf", str(confs["killed"])], tmp_path / "kill.log",
                     env={CRASH_AFTER_COMMITS: S.REWARD_SCORES_TABLE}, launcher=LAUNCHER)
    assert job.wait() == -signal.SIGKILL, job.output()[-3000:]
    assert (lakes["killed"] / "_leases" / "reward.json").exists()   # left by the killed run
    capsys.readouterr()
    assert main(["reward", "--conf", str(confs["killed"])]) == 0
    assert "had not finished: completed it instead of starting run" in capsys.readouterr().out

    lake = spark.read.format("delta")
    for table in (S.PAGES_TABLE, S.LINKS_TABLE, S.STEP_RUNS_TABLE, S.REWARD_SCORES_TABLE, S.PRUNED_PAGES_TABLE,
                  S.REWARD_RUNS_TABLE):
        got, expected = (lake.load(str(lakes[name] / table)) for name in ("killed", "clean"))
        assertDataFrameEqual(_comparable(got), _comparable(expected), rtol=1e-12)
