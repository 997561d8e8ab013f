"""The fixed cost of each step of ``linkgraph run`` on the built-in sample crawl, in one warm session.

    python bench/fixed_cost.py [--lake DIR] [--compare-with OTHER_LAKE] [--jobs] [--conf KEY=VALUE ...]

Starts Spark with the settings ``linkgraph run`` uses on the sample (the built-in local config
plus ``TINY_DATA_SPARK_CONF``) and times the start (``spark_start_seconds``), then runs every step
of ``Registry.default().pipeline_order()`` with the parameters its ``for_run`` gives for the
sample's run plan (its edges, sitemaps and seeds), as ``linkgraph run`` does.  Per step it prints
one line: wall seconds; the Spark jobs, stages and tasks the step ran (from the Spark REST API of
the session's UI, after the listener bus has drained: tasks and stages that ran, skipped ones left
out); of those tasks, how many ran in Delta's snapshot jobs (the log replay of a table's state,
``spark.databricks.delta.snapshotPartitions`` tasks per stage); the Delta commits (new
``_delta_log/<version>.json`` files of every table under the lake); and the driver-side seconds,
the wall time minus the time during which at least one of the step's jobs was running (their
``submissionTime`` to ``completionTime``; the same as their summed durations where no two jobs
overlap).  Then the totals and ``sample_pipeline_seconds=`` (all steps, Spark already started)
and ``spark_start_seconds=`` as the last lines.

The sample is written to ``<tmp>/linkgraph-bench-fixed-cost-sample`` (the same path every run, since
``rejects`` and ``sitemaps`` record their input files' paths; two runs at once would share it).
``--lake DIR`` keeps the lake (it must not exist or be empty; default: a temporary one, removed
afterwards).  ``--compare-with OTHER_LAKE`` compares every table of the two lakes after the run:
the same tables, and in each the same rows (as a multiset) once the columns that record when or in
which run something happened are dropped (``IGNORED_COLUMNS``); it prints each table that differs
and ``tables_identical=N/M``, so that a change meant to leave results alone can be checked against
a lake written before it.  ``--jobs`` prints, per step, its jobs grouped by description;
``--conf KEY=VALUE`` (repeatable) sets a Spark setting over the sample's, to try one before
changing it.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import json
import pstats
import shutil
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from pyspark.sql import SparkSession

from linkgraph.lake import paths
from linkgraph.lake.config import TINY_DATA_SPARK_CONF, load_config
from linkgraph.lake.context import StepContext
from linkgraph.lake.session import clean_checkpoints, get_spark
from linkgraph.sample import SAMPLE_SEEDS, write_sample_input
from linkgraph.steps.registry import Registry, RunPlan

SAMPLE_DIR = "linkgraph-bench-fixed-cost-sample"  # under the temporary directory, rewritten by each run

# Columns that differ between two runs of the same input: times, durations, run ids and what
# carries them (a rank run's iteration history holds its seconds).  ``(table, column)`` or
# ``(None, column)`` for every table.
IGNORED_COLUMNS = {
    (None, "started_at"), (None, "seconds"), (None, "history"), (None, "run_id"), (None, "pruned_at"),
    (None, "rejected_at"), (None, "saved_at"),
    ("feeds", "discovered_at"), ("feeds", "last_seen_at"), ("feeds", "discovered_run_id"),
}


@dataclasses.dataclass
class Cost:
    seconds: float = 0.0
    jobs: int = 0
    stages: int = 0
    tasks: int = 0
    snapshot_tasks: int = 0
    commits: int = 0
    driver_seconds: float = 0.0

    def add(self, other: Cost) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def line(self, name: str) -> str:
        return (f"{name:<16} {self.seconds:7.2f} s  jobs {self.jobs:4d}  stages {self.stages:4d}  "
                f"tasks {self.tasks:5d} (snapshot {self.snapshot_tasks:5d})  commits {self.commits:3d}  "
                f"driver {self.driver_seconds:6.2f} s")


class JobMeter:
    """The session's jobs since the last mark, from the REST API at the UI port."""

    def __init__(self, spark: SparkSession):
        sc = spark.sparkContext
        if not sc.uiWebUrl:
            raise SystemExit("the Spark UI is off (spark.ui.enabled): no REST API to count jobs with")
        self.sc = sc
        self.url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/jobs"
        self.last_job = max((j["jobId"] for j in self._jobs()), default=-1)

    def _drain(self) -> None:
        """Wait until the listener bus has delivered every event (the REST API reads what it recorded)."""
        try:
            self.sc._jsc.sc().listenerBus().waitUntilEmpty(60_000)
        except Exception:  # noqa: BLE001 - the bus's method is Spark-internal; fall back to a pause
            time.sleep(1.0)

    def _jobs(self) -> list[dict]:
        self._drain()
        with urllib.request.urlopen(self.url, timeout=60) as response:
            return json.load(response)

    def mark(self) -> list[dict]:
        """The jobs that started since the last mark, oldest first."""
        new = sorted((j for j in self._jobs() if j["jobId"] > self.last_job), key=lambda j: j["jobId"])
        if new:
            self.last_job = new[-1]["jobId"]
        return new


def _time(text: str | None) -> float | None:
    """Seconds since the epoch of a REST API time such as ``2026-12-04T04:01:25.123GMT``."""
    if not text:
        return None
    stamp = datetime.strptime(text.removesuffix("GMT"), "%Y-%m-%dT%H:%M:%S.%f")
    return stamp.replace(tzinfo=timezone.utc).timestamp()


def busy_seconds(jobs: list[dict]) -> float:
    """Seconds during which at least one of ``jobs`` was running (the union of their intervals)."""
    spans = sorted((s, e) for s, e in ((_time(j.get("submissionTime")), _time(j.get("completionTime")))
                                       for j in jobs) if s is not None and e is not None)
    total, end = 0.0, float("-inf")
    for start, stop in spans:
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def print_timeline(jobs: list[dict], step_started: float) -> None:
    """Each job: when it started (seconds into the step), its seconds, the driver-side gap
    since the previous job ended, and its description."""
    previous_end = step_started
    for job in jobs:
        start, end = _time(job.get("submissionTime")), _time(job.get("completionTime"))
        if start is None or end is None:
            continue
        kind = (job.get("description") or job.get("name") or "")[:90]
        print(f"      at {start - step_started:6.2f} s  job {end - start:5.2f} s  gap {start - previous_end:5.2f} s  "
              f"{kind}", flush=True)
        previous_end = max(previous_end, end)


def is_snapshot_job(job: dict) -> bool:
    text = f"{job.get('name', '')} {job.get('description', '')}".lower()
    return "snapshot" in text


def job_tasks(job: dict) -> int:
    return int(job["numCompletedTasks"]) + int(job["numFailedTasks"]) + int(job["numKilledTasks"])


def commits(lake: Path) -> int:
    """Delta commits (``_delta_log/<version>.json``) of every table under ``lake``."""
    return sum(1 for log in lake.rglob("_delta_log") for f in log.glob("*.json") if f.stem.isdigit())


def tables(lake: Path) -> dict[str, Path]:
    """Every Delta table under ``lake`` by its path relative to the lake."""
    return {str(log.parent.relative_to(lake)): log.parent for log in sorted(lake.rglob("_delta_log"))}


def compare_lakes(spark: SparkSession, lake: Path, other: Path) -> tuple[int, int]:
    """(identical tables, tables of either lake), printing each difference."""
    mine, theirs = tables(lake), tables(other)
    names = sorted(set(mine) | set(theirs))
    identical = 0
    for name in names:
        if name not in mine or name not in theirs:
            print(f"  differs: {name} only in {lake if name in mine else other}", flush=True)
            continue
        a = spark.read.format("delta").load(str(mine[name]))
        b = spark.read.format("delta").load(str(theirs[name]))
        leaf = Path(name).name
        if a.schema != b.schema:
            print(f"  differs: {name} schema", flush=True)
            continue
        kept = [c for c in a.columns if (None, c) not in IGNORED_COLUMNS and (leaf, c) not in IGNORED_COLUMNS]
        a, b = a.select(*kept), b.select(*kept)
        rows_a, rows_b = a.count(), b.count()
        only_a = a.exceptAll(b).count()
        only_b = b.exceptAll(a).count()
        if rows_a == rows_b and only_a == 0 and only_b == 0:
            identical += 1
        else:
            print(f"  differs: {name} rows {rows_a} / {rows_b}, only here {only_a}, only there {only_b}", flush=True)
    return identical, len(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", help="keep the lake here (must not exist or be empty; default: a temporary one)")
    parser.add_argument("--compare-with", metavar="DIR", help="a lake to compare every table's rows with afterwards")
    parser.add_argument("--jobs", action="store_true", help="print each step's jobs grouped by description")
    parser.add_argument("--profile", metavar="STEP", action="append", default=[],
                        help="profile this step's driver-side Python (cProfile; repeatable): the 25 "
                             "functions of most cumulative seconds, py4j waits included")
    parser.add_argument("--timeline", metavar="STEP", action="append", default=[],
                        help="print this step's jobs in order (repeatable): seconds since the step "
                             "started, the job's seconds and the gap before it (driver-side), its description")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting over the sample's (repeatable): to try one before changing it")
    args = parser.parse_args(argv)

    lake = Path(args.lake) if args.lake else Path(tempfile.mkdtemp(prefix="linkgraph-bench-fixed-cost-"))
    if lake.exists() and any(lake.iterdir()):
        parser.error(f"--lake {lake} is not empty")
    if args.compare_with and not tables(Path(args.compare_with)):
        parser.error(f"--compare-with {args.compare_with} holds no Delta table")
    # one path for every run: ``rejects`` and ``sitemaps`` record the input files' paths
    workdir = Path(tempfile.gettempdir()) / SAMPLE_DIR
    shutil.rmtree(workdir, ignore_errors=True)

    # ``linkgraph run`` on the sample: the built-in config, the lake, TINY_DATA_SPARK_CONF, its run plan
    config = load_config(None).with_lake_path(str(lake))
    config = dataclasses.replace(config, spark=dataclasses.replace(
        config.spark, conf={**config.spark.conf, **TINY_DATA_SPARK_CONF, **dict(c.split("=", 1) for c in args.conf)}))
    input_path = write_sample_input(workdir)
    plan = RunPlan(paths.to_uri(str(input_path)), "jsonl", paths.to_uri(str(input_path.parent / "sitemaps")),
                   list(SAMPLE_SEEDS), on_sample=True)
    print(f"sample: {input_path}; lake: {lake}", flush=True)
    print("session: " + ", ".join(f"{k}={v}" for k, v in sorted(config.spark.conf.items()))
          + f", spark.sql.shuffle.partitions={config.spark.shuffle_partitions}", flush=True)

    started = time.monotonic()
    spark = get_spark(config.spark)
    ctx = StepContext.create(spark, config)
    spark_start = time.monotonic() - started
    print(f"spark: {spark.sparkContext.master} ready in {spark_start:.1f}s", flush=True)
    meter = JobMeter(spark)

    registry = Registry.default()
    costs: dict[str, Cost] = {}
    pipeline_started = time.monotonic()
    for name in registry.pipeline_order():
        step = registry[name]
        params = step.for_run(plan, config) if step.for_run is not None else None
        if params is None:
            continue
        if isinstance(params, str):
            print(params, flush=True)
            continue
        commits_before = commits(lake)
        t0 = time.monotonic()
        profiler = cProfile.Profile() if name in args.profile else None
        if profiler:
            profiler.enable()
        summary = step.run(ctx.next_step(), params).summary()
        seconds = time.monotonic() - t0
        if profiler:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        jobs = meter.mark()
        cost = Cost(seconds=seconds, jobs=len(jobs),
                    stages=sum(int(j["numCompletedStages"]) + int(j["numFailedStages"]) for j in jobs),
                    tasks=sum(job_tasks(j) for j in jobs),
                    snapshot_tasks=sum(job_tasks(j) for j in jobs if is_snapshot_job(j)),
                    commits=commits(lake) - commits_before,
                    driver_seconds=max(seconds - busy_seconds(jobs), 0.0))
        costs[name] = cost
        if name in args.timeline:
            print_timeline(jobs, time.time() - seconds)
        print(f"  {summary}", flush=True)
        print(cost.line(name), flush=True)
        if args.jobs:
            kinds: Counter[str] = Counter()
            counts: Counter[str] = Counter()
            for j in jobs:
                kind = (j.get("description") or j.get("name") or "")[:100]
                kinds[kind] += job_tasks(j)
                counts[kind] += 1
            for kind, tasks in kinds.most_common():
                print(f"      {counts[kind]:4d} jobs {tasks:5d} tasks  {kind}", flush=True)
    pipeline_seconds = time.monotonic() - pipeline_started

    total = Cost()
    for cost in costs.values():
        total.add(cost)
    print(total.line("total"), flush=True)
    identical = None
    if args.compare_with:
        identical = compare_lakes(spark, lake, Path(args.compare_with))
    clean_checkpoints(spark)
    spark.stop()
    shutil.rmtree(workdir, ignore_errors=True)
    if not args.lake:
        shutil.rmtree(lake, ignore_errors=True)

    print(f"total_jobs={total.jobs}")
    print(f"total_stages={total.stages}")
    print(f"total_tasks={total.tasks}")
    print(f"total_snapshot_tasks={total.snapshot_tasks}")
    print(f"total_commits={total.commits}")
    print(f"total_driver_seconds={total.driver_seconds:.2f}")
    if identical is not None:
        print(f"tables_identical={identical[0]}/{identical[1]}")
    print(f"sample_pipeline_seconds={pipeline_seconds:.2f}")
    print(f"spark_start_seconds={spark_start:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
