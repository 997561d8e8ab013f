"""A deployment rehearsal: the generated Airflow DAG, run by a real Airflow, submitting every job
with spark-submit to a real Spark standalone cluster, one DAG run per day of a growing crawl.

    python bench/rehearsal.py [--days 14] [--workdir DIR] [--kill-days 3,9] [--no-reruns]

It deploys as docs/deploy.md tells a user to:

* ``make dist`` (the wheel and the ``--py-files`` zip);
* a Spark standalone master and 2 workers on loopback, started and stopped by this script by PID
  (``tests/standalone_cluster.py``, the worker-loss drills' cluster);
* Airflow 3 in its own environment from ``jobs/airflow/requirements.txt`` (``.venv-airflow``, as
  the DAG test builds it), SQLite, no examples; the ``spark_default`` connection to that master;
* the generated DAG file (``jobs/airflow/linkgraph_dag.py``) copied into the DAG folder, its
  params set once per run (``--conf`` of ``airflow dags test``): input roots, lake, conf, jobs
  folder, package zip, Spark home and Python;
* ``conf/cluster.yaml`` scaled down by one factor, ``SCALE`` (executors of 8 cores become
  executors of 1 core): every per-core budget stays as shipped (Python memory per worker, JVM heap
  per core, shuffle partitions per core), so what fails on a cluster for want of memory per core
  fails here too.

The input is ``linkgraph.sample.days``: the sample crawl as daily batches (it grows, new hosts
appear, a link farm on day 5, a mirror network on day 9, WARC and WAT days, one day's input
empty and one absent).  Each day is ``airflow dags test linkgraph <ds>``; afterwards the script
checks that every task succeeded (or, on the day without input, that ingest and everything after
it were skipped), that ``pages`` and ``links`` shrank only by what ``pruned_pages`` records, that
ranks sum to 1 and converged, that ``page_flags`` and ``seed_scores`` belong to the uniform rank
run of the day, that the link farm is flagged from the day it appears, and prints one line of
figures: seconds per task, the lake's Delta log bytes and the drivers' peak JVM heap (from Spark's
event logs).  Then it runs the day again and checks that no table's content changed (timing
columns aside).  On the ``--kill-days``, the first SIGKILLs a worker (its JVM and its executor)
during ``pagerank`` and the second the driver (the spark-submit JVM) during ``ingest``, as soon as
it has committed the first of the batch's tables (the batch half-written); Airflow's
retry completes the day, and its tables are compared with an undisturbed run of the same day on a
copy of the lake.

Last line: ``days_ok=… reruns_identical=… kills_recovered=… max_log_bytes=… max_driver_heap_mb=…
last_vs_second_day_seconds=…`` (a day's seconds on the last day over the second day: a day costs
its batch, not the lake's age).  Exit status 0 when every day passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from standalone_cluster import LOOPBACK, StandaloneCluster, spark_home  # noqa: E402
from test_airflow_dag import ensure_airflow_venv  # noqa: E402

# conf/cluster.yaml plans executors of 8 cores; here each executor has 1 core, and every figure
# that is "per executor" is divided by this factor (per-core budgets unchanged)
SCALE = 8
CLUSTER_CORES = 400          # the plan's cores (conf/cluster.yaml): partitions per core = 2400 / 400
WORKERS = 2
WORKER_CORES = 1
DAG_ID = "linkgraph"
TOPIC = "jobs,career,hr"
RETRY_DELAY_SECONDS = 5
# columns that record when or how long, not what: left out of the content comparisons
TIMING_COLUMNS = {"seconds", "started_at", "pruned_at", "rejected_at", "history", "saved_at"}
# and per table: `feeds`' sighting times; analyze names each domain-authority computation with a
# run id of its own (a re-run with unchanged inputs writes nothing, so keeps it; a run after a kill
# computes it again under a new id, with the same content)
TIMING_BY_TABLE = {"feeds": {"discovered_at", "last_seen_at"}, "domain_authority": {"run_id"}}
TRANSIENT_TABLES = {"rank_state", "_checkpoints", "_leases"}


def megabytes(text: str) -> float:
    """'5149m' / '5g' -> MiB."""
    unit = text[-1].lower()
    return float(text[:-1]) * (1024 if unit == "g" else 1) if unit in "gm" else float(text) / 2**20


def scaled_conf(lake: Path, events: Path) -> dict:
    """``conf/cluster.yaml`` with the executors divided by ``SCALE`` and this machine's lake."""
    conf = yaml.safe_load((REPO / "conf" / "cluster.yaml").read_text())
    spark = conf["spark"]
    settings = spark["conf"]
    cores = int(settings["spark.executor.cores"])
    for key in ("spark.executor.memory", "spark.executor.memoryOverhead"):
        if key in settings:
            settings[key] = f"{max(1, round(megabytes(settings[key]) / SCALE))}m"
    settings["spark.executor.cores"] = str(cores // SCALE)
    settings.update({
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        "spark.eventLog.logStageExecutorMetrics": "true",
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
    })
    cores = WORKERS * WORKER_CORES
    spark["shuffle_partitions"] = max(1, round(spark["shuffle_partitions"] / CLUSTER_CORES * cores))
    # Delta replays a table's log in 50 tasks (its default), one wave on the plan's 400 cores
    settings["spark.databricks.delta.snapshotPartitions"] = str(max(1, round(50 / CLUSTER_CORES * cores)))
    spark["add_packages"] = False   # spark-submit --packages gives the jars, as on a cluster
    conf["lake"] = {"path": str(lake), "catalog": None, "schema": None}
    return conf


@dataclass
class Deployment:
    """The rehearsal's folders, cluster and Airflow environment."""

    work: Path
    cluster: StandaloneCluster
    airflow_python: Path
    conf_file: Path
    lake: Path
    events: Path
    inputs: Path
    env: dict[str, str] = field(default_factory=dict)

    def params(self, day_format: str, lake: Path | None = None) -> dict:
        version = next(line.split('"')[1] for line in (REPO / "pyproject.toml").read_text().splitlines()
                       if line.startswith("version = "))
        return {
            "input_root": str(self.inputs / "edges"),
            "sitemaps_root": str(self.inputs / "sitemaps"),
            "signals_root": str(self.inputs / "signals"),
            "input_format": day_format,
            "lake": str(lake or self.lake),
            "conf": str(self.conf_file),
            "jobs_dir": str(REPO / "jobs"),
            "py_files": str(REPO / "dist" / f"linkgraph-{version}-py-files.zip"),
            "spark_home": str(spark_home()),
            "python": sys.executable,
            "topic": TOPIC,
        }

    def airflow(self, *args: str, timeout: float = 7200) -> subprocess.CompletedProcess:
        airflow = self.airflow_python.parent / "airflow"
        return subprocess.run([str(airflow), *args], env=self.env, capture_output=True, text=True, timeout=timeout)


def deploy(work: Path) -> Deployment:
    """make dist, the cluster, Airflow's environment and home, the DAG file and the config."""
    subprocess.run(["make", "dist", f"PYTHON={sys.executable}"], cwd=REPO, check=True, capture_output=True)
    airflow_python = ensure_airflow_venv()
    settings = yaml.safe_load((REPO / "conf" / "cluster.yaml").read_text())["spark"]["conf"]
    heap = megabytes(settings["spark.executor.memory"]) / SCALE
    cluster = StandaloneCluster(work / "cluster", workers=WORKERS, cores=WORKER_CORES, memory=f"{round(heap)}m")
    cluster.start()
    lake, events, inputs = work / "lake", work / "events", work / "inputs"
    events.mkdir(parents=True, exist_ok=True)
    conf_file = work / "cluster-scaled.yaml"
    conf_file.write_text(yaml.safe_dump(scaled_conf(lake, events), sort_keys=False))
    dags = work / "dags"
    dags.mkdir(exist_ok=True)
    shutil.copy(REPO / "jobs" / "airflow" / "linkgraph_dag.py", dags / "linkgraph_dag.py")
    home = work / "airflow"
    env = {
        **cluster.environment(),
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT": "120",
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": f"spark://{LOOPBACK}",
                                                  "port": cluster.master_port}),
        "LINKGRAPH_RETRY_DELAY_SECONDS": str(RETRY_DELAY_SECONDS),
    }
    env.pop("PYSPARK_DRIVER_PYTHON", None)   # the DAG's `python` param decides
    deployment = Deployment(work, cluster, airflow_python, conf_file, lake, events, inputs, env)
    migrated = deployment.airflow("db", "migrate", timeout=900)
    if migrated.returncode != 0:
        raise SystemExit(f"airflow db migrate failed: {migrated.stderr[-2000:]}")
    return deployment


# --- what a day left: read with a local Spark session of this process -------------------------

def spark_session(work: Path):
    """A small local session with Delta (this process's, apart from the cluster's jobs)."""
    from linkgraph.lake.config import SparkConfig
    from linkgraph.lake.session import get_spark

    return get_spark(SparkConfig(master="local[1]", shuffle_partitions=2, driver_memory="1g",
                                 checkpoint_dir=str(work / "checker-checkpoints")))


def tables_of(lake: Path) -> list[str]:
    return sorted(p.parent.name for p in lake.glob("*/_delta_log") if p.parent.name not in TRANSIENT_TABLES)


def snapshot(spark, lake: Path) -> dict[str, tuple[int, int]]:
    """Per table: (rows, an order-free digest of its rows without the timing columns)."""
    from pyspark.sql import functions as F

    found = {}
    for table in tables_of(lake):
        df = spark.read.format("delta").load(str(lake / table))
        skip = TIMING_COLUMNS | TIMING_BY_TABLE.get(table, set())
        columns = [c for c in df.columns if c not in skip]
        row = df.select(F.xxhash64(F.to_json(F.struct(*columns))).cast("decimal(38,0)").alias("h")).agg(
            F.count(F.lit(1)).alias("rows"), F.sum("h").alias("digest")).first()
        found[table] = (int(row["rows"]), int(row["digest"] or 0))
    return found


def _rows(spark, lake: Path, table: str):
    path = lake / table
    return spark.read.format("delta").load(str(path)) if (path / "_delta_log").is_dir() else None


def check_day(spark, lake: Path, day, states: dict[str, dict], before: dict | None, max_prune_share: float,
              farm_hosts: set[str]) -> list[str]:
    """What must hold after the DAG run of ``day`` (module docstring); the problems found."""
    from pyspark.sql import functions as F

    problems = []
    if not states:
        return [f"no DAG run found for {day.ds}"]
    if day.absent:
        wrong = {t: r["state"] for t, r in states.items() if r["state"] != "skipped"}
        if wrong:
            problems.append(f"no input: every task should be skipped, found {wrong}")
        return problems
    # a day without sitemaps skips ingest_sitemaps alone
    wrong = {t: r["state"] for t, r in states.items()
             if r["state"] != "success" and not (r["state"] == "skipped" and t == "ingest_sitemaps")}
    if wrong:
        problems.append(f"tasks not successful: {wrong}")
    reward_run, rank_run = f"{day.ds}-reward", f"{day.ds}-pagerank"
    pruned = _rows(spark, lake, "pruned_pages")
    pruned_today = pruned.where(F.col("run_id") == reward_run).count() if pruned is not None else 0
    if before is not None and "pages" in before:
        pages_before = before["pages"][0]
        pages_now = _rows(spark, lake, "pages").count()
        if pages_now < pages_before - pruned_today:
            problems.append(f"pages shrank from {pages_before} to {pages_now} with {pruned_today} pruned")
        if pruned_today > max_prune_share * pages_before:
            problems.append(f"{pruned_today} pages pruned of {pages_before}: above reward.max_prune_share")
    ranks = _rows(spark, lake, "pagerank")
    if ranks is None:
        return problems + ["no pagerank table"]
    held = {r["run_id"] for r in ranks.select("run_id").distinct().collect()}
    if held != {rank_run}:
        problems.append(f"pagerank holds runs {held}, not {rank_run}")
    total = ranks.where(F.col("vector_id") == 0).agg(F.sum("rank")).first()[0] or 0.0
    if abs(total - 1.0) > 1e-6:
        problems.append(f"ranks sum to {total}")
    runs = _rows(spark, lake, "rank_runs").where(F.col("run_id").isin(rank_run, f"{day.ds}-personalized"))
    converged = {r["run_id"]: r["converged"] for r in runs.collect()}
    if converged != {rank_run: True, f"{day.ds}-personalized": True}:
        problems.append(f"rank runs of the day: {converged}")
    flags = _rows(spark, lake, "page_flags")
    if flags is None or not flags.where(F.col("run_id") == rank_run).limit(1).count():
        problems.append(f"page_flags has no rows of {rank_run}")
    if farm_hosts and flags is not None:
        # every page of the farm's hosts flagged: a link farm domain or a member of a network
        host = F.lower(F.parse_url(F.col("url"), F.lit("HOST")))
        farm_pages = flags.where((F.col("run_id") == rank_run) & host.isin(*sorted(farm_hosts)))
        unflagged = farm_pages.where(~F.col("link_farm_domain") & F.col("syndication_network").isNull())
        if not farm_pages.limit(1).count() or unflagged.limit(1).count():
            hosts = sorted({r["h"] for r in unflagged.select(host.alias("h")).collect()})
            problems.append(f"link farm pages not flagged (hosts {hosts or sorted(farm_hosts)})")
    return problems


# --- what a day left ---------------------------------------------------------------------------

def task_states(deployment: Deployment, ds: str) -> dict[str, dict]:
    """The task instances of the DAG run of ``ds``: state, seconds, tries."""
    runs = _json_rows(deployment.airflow("dags", "list-runs", DAG_ID, "-o", "json").stdout)
    found = sorted((r for r in runs if str(r.get("logical_date", "")).startswith(ds)),
                   key=lambda r: str(r.get("run_after", "")))
    if not found:
        return {}
    states = deployment.airflow("tasks", "states-for-dag-run", DAG_ID, found[-1]["run_id"], "-o", "json")
    rows = {row["task_id"]: row for row in _json_rows(states.stdout)}
    for row in rows.values():
        start, end = row.get("start_date"), row.get("end_date")
        row["duration"] = ((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
                           if start and end else 0.0)
    return rows


def _json_rows(output: str) -> list[dict]:
    """The JSON list an ``airflow … -o json`` command printed among its log lines."""
    for line in output.splitlines():
        if line.strip().startswith("["):
            return json.loads(line)
    return []


def log_bytes(lake: Path) -> int:
    """Bytes of every Delta log file of the lake."""
    return sum(f.stat().st_size for f in lake.glob("*/_delta_log/*") if f.is_file())


def driver_heap_mb(events: Path, since: float) -> float:
    """The largest driver JVM heap (MiB) recorded by the event logs written after ``since``."""
    peak = 0
    for log in events.iterdir():
        if log.stat().st_mtime < since:
            continue
        with open(log, errors="replace") as lines:
            for line in lines:
                if '"driver"' not in line or "JVMHeapMemory" not in line:
                    continue
                event = json.loads(line)
                if event.get("Executor ID") != "driver":
                    continue
                metrics = event.get("Executor Metrics") or {}
                peak = max(peak, int(metrics.get("JVMHeapMemory", 0)))
    return peak / 2**20


@dataclass
class DayResult:
    ds: str
    ok: bool
    seconds: float
    problems: list[str]
    task_seconds: dict[str, float]
    log_bytes: int
    driver_heap_mb: float


def run_day(deployment: Deployment, day, lake: Path | None = None, kill: str | None = None) -> tuple[bool, str, float]:
    """``airflow dags test`` of one day (``kill``: 'worker' or 'driver' SIGKILLed mid-task)."""
    params = deployment.params(day.fmt or "jsonl", lake)
    killer = None
    if kill is not None:
        killer = threading.Thread(target=KILLERS[kill], args=(deployment,), daemon=True)
        killer.start()
    started = time.monotonic()
    result = deployment.airflow("dags", "test", DAG_ID, day.ds, "-c", json.dumps(params))
    seconds = time.monotonic() - started
    if killer is not None:
        killer.join(timeout=5)
    return result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:], seconds


def _process_with(*fragments: bytes, timeout: float = 1800) -> int | None:
    """The pid of the first process whose command line holds every one of ``fragments`` (polled)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if all(fragment in cmdline for fragment in fragments):
                return int(proc.name)
        time.sleep(0.5)
    return None


KILLED: list[str] = []


def kill_worker_during_pagerank(deployment: Deployment) -> None:
    """When the uniform pagerank's driver has run 20 s, SIGKILL worker 0 (its JVM and its
    executors), then start a new worker in its place."""
    pid = _process_with(b"jobs/step.py\x00pagerank\x00--warm-start")
    if pid is None:
        return
    time.sleep(20)
    worker = deployment.cluster.processes[1]
    executors = deployment.cluster.executor_pids()
    for victim in [worker.pid, *executors[:1]]:
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass
    KILLED.append(f"worker {worker.pid} and executor {executors[:1]} during pagerank")
    deployment.cluster.restart_worker(0)


def kill_driver_during_ingest(deployment: Deployment) -> None:
    """When ingest's spark-submit JVM (the driver, client mode) has committed rows of the first of
    the day's batch tables (a new Delta log version of ``rejects``, ``pages`` or ``links`` that adds
    files: rejects go first, then pages, then links), SIGKILL it: the batch is left half-written,
    and the retry must finish it with the tables an undisturbed run leaves."""
    pid = _process_with(b"org.apache.spark.deploy.SparkSubmit", b"step.py\x00ingest\x00")
    if pid is None:
        return
    before = _batch_commits(deployment.lake)
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline and _batch_commits(deployment.lake) <= before:
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.1)
    committed = sorted(_batch_commits(deployment.lake) - before)
    try:
        os.kill(pid, signal.SIGKILL)
        KILLED.append(f"driver {pid} during ingest, after its commit of {', '.join(committed)}")
    except ProcessLookupError:
        pass


def _batch_commits(lake: Path) -> set[str]:
    """The commits (``table/version``) of the tables an ingest writes that add data files (not
    the creation of an empty table)."""
    return {f"{log.parent.parent.name}/{log.stem}" for table in ("rejects", "pages", "links")
            for log in (lake / table / "_delta_log").glob("*.json") if '{"add":' in log.read_text()}


KILLERS = {"worker": kill_worker_during_pagerank, "driver": kill_driver_during_ingest}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--workdir", help="keep everything here (default: a temporary folder, removed)")
    parser.add_argument("--kill-days", default=None,
                        help="days of the worker kill and of the driver kill (default: 3,9; 2 with --days < 9)")
    parser.add_argument("--no-reruns", action="store_true", help="do not run each day a second time")
    args = parser.parse_args(argv)
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="linkgraph-rehearsal-"))
    work.mkdir(parents=True, exist_ok=True)
    kill_days = _kill_days(args.kill_days, args.days)
    from linkgraph.sample.days import write_crawl_days

    deployment = deploy(work)
    results: list[DayResult] = []
    reruns_identical = kills_recovered = 0
    try:
        days = write_crawl_days(deployment.inputs, days=args.days)
        spark = spark_session(work)
        before = None
        farm_hosts: set[str] = set()
        max_prune_share = float(yaml.safe_load(deployment.conf_file.read_text())["reward"].get("max_prune_share", 1.0))
        for day in days:
            kill = kill_days.get(day.index)
            reference = None
            if kill is not None:
                reference = _undisturbed(deployment, day, spark)
            since = time.time()
            ok, output, seconds = run_day(deployment, day, kill=kill)
            states = task_states(deployment, day.ds)
            problems = [] if ok else [f"dags test failed: {output[-1500:]}"]
            farm_hosts |= set(day.link_farm_hosts)
            problems += check_day(spark, deployment.lake, day, states, before, max_prune_share, farm_hosts)
            after = snapshot(spark, deployment.lake)
            if reference is not None:
                differing = sorted(t for t in set(reference) | set(after) if reference.get(t) != after.get(t))
                if differing:
                    problems.append(f"after the {kill} kill, tables differ from an undisturbed run: {differing}")
                else:
                    kills_recovered += 1
            result = DayResult(day.ds, not problems, seconds, problems,
                               {task: float(row.get("duration") or 0) for task, row in states.items()},
                               log_bytes(deployment.lake), driver_heap_mb(deployment.events, since))
            if not args.no_reruns:
                rerun_ok, rerun_output, _ = run_day(deployment, day)
                again = snapshot(spark, deployment.lake)
                differing = sorted(t for t in set(after) | set(again) if after.get(t) != again.get(t))
                if rerun_ok and not differing:
                    reruns_identical += 1
                else:
                    result.problems.append(f"re-run changed {differing}" if rerun_ok
                                           else f"re-run failed: {rerun_output[-1500:]}")
                    result.ok = False
            results.append(result)
            before = after
            _print_day(day, result, KILLED if kill else [])
    finally:
        deployment.cluster.stop()
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return _summary(results, reruns_identical, kills_recovered)


def _kill_days(text: str | None, days: int) -> dict[int, str]:
    if text is None:
        chosen = [3, 9] if days >= 9 else [2]
    else:
        chosen = [int(d) for d in text.split(",") if d.strip()]
    return {day: kind for day, kind in zip(chosen, ("worker", "driver"), strict=False) if day <= days}


def _undisturbed(deployment: Deployment, day, spark) -> dict:
    """The tables an undisturbed run of ``day`` leaves on a copy of the lake."""
    copy = deployment.work / "lake-undisturbed"
    shutil.rmtree(copy, ignore_errors=True)
    if deployment.lake.exists():
        shutil.copytree(deployment.lake, copy)
    ok, output, _ = run_day(deployment, day, lake=copy)
    if not ok:
        raise SystemExit(f"the undisturbed run of {day.ds} failed: {output[-2000:]}")
    return snapshot(spark, copy)


def _print_day(day, result: DayResult, killed: list[str]) -> None:
    tasks = " ".join(f"{task}={seconds:.0f}s" for task, seconds in sorted(result.task_seconds.items()))
    status = "ok" if result.ok else "FAILED"
    print(f"day {day.index} {day.ds} {day.fmt or 'absent'}: {status} seconds={result.seconds:.0f} "
          f"log_bytes={result.log_bytes} driver_heap_mb={result.driver_heap_mb:.0f} {tasks}"
          + (f" killed: {'; '.join(killed)}" if killed else ""), flush=True)
    for problem in result.problems:
        print(f"  problem: {problem}", flush=True)


def _summary(results: list[DayResult], reruns_identical: int, kills_recovered: int) -> int:
    days_ok = sum(r.ok for r in results)
    max_log = max((r.log_bytes for r in results), default=0)
    max_heap = max((r.driver_heap_mb for r in results), default=0.0)
    ratio = results[-1].seconds / results[1].seconds if len(results) >= 2 and results[1].seconds else float("nan")
    print(f"days_ok={days_ok} reruns_identical={reruns_identical} kills_recovered={kills_recovered} "
          f"max_log_bytes={max_log} max_driver_heap_mb={max_heap:.0f} last_vs_second_day_seconds={ratio:.2f}")
    return 0 if days_ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
