"""The pipeline on a real Spark standalone cluster (master + 2 workers on loopback, one core and
1 GB each), submitted with ``spark-submit --master spark://127.0.0.1:7077`` like a user would:
the driver, two executors and their Python workers are separate processes, so a driver-side
collect of the graph or a path only the driver can see would break it.  Every Delta table it
writes must equal the local run's of the same input (``local_run``): the compressed links bit for
bit, ranks within 1e-9.

One submit of ``jobs/step.py run`` on the built-in sample (3,364 records): a few minutes on 2 cores.
Its PageRank runs as Spark jobs over 2 blocks (not inside one task as locally) with a reliable
lineage checkpoint every 5 iterations, and one executor JVM is SIGKILLed once iteration 7 is
logged: Spark recomputes what it held from the last checkpoint, and the ranks still
equal the local run's within 1e-12.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from pyspark.testing import assertDataFrameEqual

from linkgraph.lake import schemas as S
from linkgraph.lake.config import LOCAL_SPARK_CONF, TINY_DATA_SPARK_CONF
from linkgraph.lake.packages import DELTA_PACKAGE, EXCLUDED_PACKAGES
from linkgraph.steps.analyze import ANALYSIS_TABLES
from standalone_cluster import StandaloneCluster

pytestmark = [pytest.mark.cluster, pytest.mark.drill]

REPO = Path(__file__).resolve().parents[1]
RANK_TOLERANCE = 1e-9
PAGERANK_TOLERANCE = 1e-12  # the same sums in another order (blocks, a recomputed partition)
# the cluster run's PageRank: Spark jobs over 2 blocks, a reliable checkpoint every 5 iterations
DISTRIBUTED_RANK = {"blocks": 2, "single_task": False, "lineage_every": 5}
ITERATION_LINE = re.compile(r"pagerank iteration (\d+): ")
KILL_AFTER_ITERATION = 7

# table -> columns that legitimately differ between two runs (wall-clock time, run ids)
RUN_SPECIFIC = {
    S.REJECTS_TABLE: [S.REJECTED_AT],
    S.PAGERANK_TABLE: [S.RUN_ID],
    S.DOMAIN_AUTHORITY_TABLE: [S.RUN_ID],
    S.PAGE_FLAGS_TABLE: [S.RUN_ID],
}
# rank_runs: what the run computed, not when or how long it took
RANK_RUN_COLUMNS = ["engine", "damping", "tol", "max_iter", "vectors", "graph_version", "pages", "links_followed",
                    "iterations", "converged", "vector_iterations"]
# compared with no tolerance: everything but floating-point results of iterations
EXACT_TABLES = (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE, S.LINKS_COMPRESSED_FORWARD_TABLE,
                S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE, S.LINKS_COMPRESSED_ORDER_TABLE)
# what `linkgraph run --input` writes at least: page flags need no seeds; seed scores and the
# frontier do, and none are configured here
EXPECTED_TABLES = {*EXACT_TABLES, S.PAGERANK_TABLE, S.RANK_RUNS_TABLE, *ANALYSIS_TABLES, S.PAGE_FLAGS_TABLE}


class LocalRun(NamedTuple):
    edges: Path    # the built-in sample's edge records
    lake: Path     # what `linkgraph run --input EDGES --format jsonl --lake LAKE` wrote in this process


@pytest.fixture(scope="module")
def local_run(spark, tmp_path_factory) -> LocalRun:
    """The reference: `linkgraph run` on the sample's edges alone (no sitemaps, seeds or page
    signals), in this process's local Spark session."""
    from linkgraph.cli import main
    from linkgraph.sample import write_sample_input

    root = tmp_path_factory.mktemp("local-run")
    edges = write_sample_input(root / "input")
    assert main(["run", "--input", str(edges), "--format", "jsonl", "--lake", str(root / "lake")]) == 0
    return LocalRun(edges, root / "lake")


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory):
    cluster = StandaloneCluster(tmp_path_factory.mktemp("standalone"), workers=2, cores=1, memory="1g")
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def cluster_config(path: Path, work: Path, rank: dict | None = None) -> Path:
    """Job config for spark-submit: no master (spark-submit's), no packages (--packages), the
    local tuning for few cores, a checkpoint directory every process can reach; ``rank``: the
    ``rank`` section, if any."""
    conf = {
        **LOCAL_SPARK_CONF,
        "spark.databricks.delta.snapshotPartitions": "1",
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        **TINY_DATA_SPARK_CONF,
    }
    path.write_text(yaml.safe_dump({
        "spark": {"app_name": "linkgraph-cluster-test", "master": None, "driver_memory": None, "shuffle_partitions": 2,
                  "add_packages": False, "checkpoint_dir": str(work / "checkpoints"), "conf": conf},
        **({"rank": rank} if rank else {}),
    }))
    return path


def kill_an_executor_once_logged(cluster: StandaloneCluster, submitted: subprocess.Popen, log: Path,
                                 iteration: int, timeout_s: float = 1200.0) -> tuple[int | None, int]:
    """SIGKILL one of the cluster's executor JVMs as soon as ``log`` shows PageRank iteration
    ``iteration``; then wait for the submit.  (the killed pid, None if the run ended first; its exit code)."""
    killed = None
    deadline = time.monotonic() + timeout_s
    try:
        while killed is None and submitted.poll() is None and time.monotonic() < deadline:
            logged = [int(i) for i in ITERATION_LINE.findall(log.read_text(errors="replace"))]
            if logged and max(logged) >= iteration:
                killed = cluster.executor_pids()[0]
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.05)
        return killed, submitted.wait(timeout=max(deadline - time.monotonic(), 1.0))
    finally:
        if submitted.poll() is None:
            os.killpg(submitted.pid, signal.SIGKILL)


def test_run_submitted_to_a_standalone_cluster_survives_an_executor_loss_and_writes_the_tables_of_the_local_run(
    spark, local_run, standalone_cluster, dist_dir, tmp_path
):
    edges, local_lake = local_run.edges, local_run.lake
    cluster_lake = tmp_path / "lake"
    py_files = next(dist_dir.glob("linkgraph-*-py-files.zip"))
    log = tmp_path / "spark-submit.log"
    submitted = standalone_cluster.submit_in_background(
        str(REPO / "jobs" / "step.py"),
        ["run", "--conf", str(cluster_config(tmp_path / "cluster.yaml", tmp_path, rank=DISTRIBUTED_RANK)),
         "--input", str(edges), "--format", "jsonl", "--lake", str(cluster_lake)],
        ["--deploy-mode", "client", "--packages", DELTA_PACKAGE, "--exclude-packages", EXCLUDED_PACKAGES,
         "--py-files", str(py_files),
         "--driver-memory", "1g", "--executor-memory", "768m", "--conf", "spark.executor.cores=1",
         "--conf", "spark.cores.max=2", "--conf", "spark.log.level=WARN"],
        log,
    )
    killed, returncode = kill_an_executor_once_logged(standalone_cluster, submitted, log, KILL_AFTER_ITERATION)
    output = log.read_text(errors="replace")
    assert killed is not None, f"the run ended before iteration {KILL_AFTER_ITERATION} was logged: {output[-3000:]}"
    assert returncode == 0, output[-4000:]
    assert "tables (run took " in output
    assert "pagerank: 2 block(s), 1 vector(s) per pass" in output
    assert "Lost executor" in output, output[-4000:]
    assert max(int(i) for i in ITERATION_LINE.findall(output)) > KILL_AFTER_ITERATION

    # it ran on the cluster: one application with both workers' cores; both first executors ran
    # tasks, and the worker that lost one started another
    (app,) = standalone_cluster.master_state()["completedapps"]
    assert (app["name"], app["cores"], app["state"]) == ("linkgraph-cluster-test", 2, "FINISHED")
    executor_logs = sorted(standalone_cluster.work_dir.glob("worker-*/app-*/*/stderr"))
    assert len(executor_logs) == 3, executor_logs
    for executor_log in executor_logs[:2]:
        assert "Running task" in executor_log.read_text(errors="replace"), executor_log

    def table(lake: Path, name: str):
        return spark.read.format("delta").load(str(lake / name))

    # rank_state: the resume state only a run iterated as Spark jobs saves (locally, one task)
    written = {p.name for p in cluster_lake.iterdir() if (p / "_delta_log").is_dir()} - {S.RANK_STATE_TABLE}
    assert written == {p.name for p in local_lake.iterdir() if (p / "_delta_log").is_dir()}
    assert EXPECTED_TABLES <= written
    for name in sorted(written):
        actual, expected = table(cluster_lake, name), table(local_lake, name)
        if name == S.RANK_RUNS_TABLE:
            actual, expected = actual.select(*RANK_RUN_COLUMNS), expected.select(*RANK_RUN_COLUMNS)
        else:
            actual, expected = actual.drop(*RUN_SPECIFIC.get(name, [])), expected.drop(*RUN_SPECIFIC.get(name, []))
        tolerance = 0.0 if name in EXACT_TABLES else PAGERANK_TOLERANCE if name == S.PAGERANK_TABLE else RANK_TOLERANCE
        assertDataFrameEqual(actual, expected, rtol=0.0, atol=tolerance)
    assert table(cluster_lake, S.PAGES_TABLE).count() == 272
    assert table(cluster_lake, S.LINKS_TABLE).count() == 3329

