"""The pipeline on a real Spark standalone cluster (master + 2 workers on loopback, one core and
1 GB each), submitted with ``spark-submit --master spark://127.0.0.1:7077`` like a user would:
the driver, two executors and their Python workers are separate processes, so a driver-side
collect of the graph or a path only the driver can see would break it.  Every Delta table it
writes must equal the local run's of the same input (``sample_lake``): the compressed links bit for
bit, ranks within 1e-9.

One submit of ``jobs/run.py`` on the built-in sample (3,364 records): a few minutes on 2 cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pyspark.testing import assertDataFrameEqual

from linkgraph import schemas as S
from linkgraph.config import LOCAL_SPARK_CONF, TINY_DATA_SPARK_CONF
from linkgraph.packages import DELTA_PACKAGE
from linkgraph.pipeline import ANALYSIS_TABLES
from standalone_cluster import StandaloneCluster

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[1]
RANK_TOLERANCE = 1e-9

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
                S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE)
# what `linkgraph run --input` writes at least: page flags need no seeds; seed scores and the
# frontier do, and none are configured here
EXPECTED_TABLES = {*EXACT_TABLES, S.PAGERANK_TABLE, S.RANK_RUNS_TABLE, *ANALYSIS_TABLES, S.PAGE_FLAGS_TABLE}


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory):
    cluster = StandaloneCluster(tmp_path_factory.mktemp("standalone"), workers=2, cores=1, memory="1g")
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def cluster_config(path: Path, work: Path) -> Path:
    """Job config for spark-submit: no master (spark-submit's), no packages (--packages), the
    local tuning for few cores, a checkpoint directory every process can reach."""
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
    }))
    return path


def test_run_submitted_to_a_standalone_cluster_writes_the_tables_of_the_local_run(
    spark, sample_lake, standalone_cluster, dist_dir, tmp_path
):
    edges, local_lake = sample_lake.edges, sample_lake.lake
    cluster_lake = tmp_path / "lake"
    py_files = next(dist_dir.glob("linkgraph-*-py-files.zip"))
    log = tmp_path / "spark-submit.log"
    result = standalone_cluster.submit(
        str(REPO / "jobs" / "run.py"),
        ["--conf", str(cluster_config(tmp_path / "cluster.yaml", tmp_path)), "--input", str(edges), "--format", "jsonl",
         "--lake", str(cluster_lake)],
        ["--deploy-mode", "client", "--packages", DELTA_PACKAGE, "--py-files", str(py_files),
         "--driver-memory", "1g", "--executor-memory", "768m", "--conf", "spark.executor.cores=1",
         "--conf", "spark.cores.max=2", "--conf", "spark.log.level=WARN"],
        log,
    )
    output = log.read_text(errors="replace")
    assert result.returncode == 0, output[-4000:]
    assert "tables (run took " in output

    # it ran on the cluster: one application with both workers' cores, and both executors ran tasks
    (app,) = standalone_cluster.master_state()["completedapps"]
    assert (app["name"], app["cores"], app["state"]) == ("linkgraph-cluster-test", 2, "FINISHED")
    executor_logs = sorted(standalone_cluster.work_dir.glob("worker-*/app-*/*/stderr"))
    assert len(executor_logs) == 2
    for executor_log in executor_logs:
        assert "Running task" in executor_log.read_text(errors="replace"), executor_log

    def table(lake: Path, name: str):
        return spark.read.format("delta").load(str(lake / name))

    written = {p.name for p in cluster_lake.iterdir() if (p / "_delta_log").is_dir()}
    assert written == {p.name for p in local_lake.iterdir() if (p / "_delta_log").is_dir()}
    assert EXPECTED_TABLES <= written
    for name in sorted(written):
        actual, expected = table(cluster_lake, name), table(local_lake, name)
        if name == S.RANK_RUNS_TABLE:
            actual, expected = actual.select(*RANK_RUN_COLUMNS), expected.select(*RANK_RUN_COLUMNS)
        else:
            actual, expected = actual.drop(*RUN_SPECIFIC.get(name, [])), expected.drop(*RUN_SPECIFIC.get(name, []))
        tolerance = 0.0 if name in EXACT_TABLES else RANK_TOLERANCE
        assertDataFrameEqual(actual, expected, rtol=0.0, atol=tolerance)
    assert table(cluster_lake, S.PAGES_TABLE).count() == 272
    assert table(cluster_lake, S.LINKS_TABLE).count() == 3329
