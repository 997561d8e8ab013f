"""One session-scoped local SparkSession (Delta enabled) for the whole suite."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

SHARED_DATA = Path(os.environ.get("LINKGRAPH_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def shared_file(relative: str) -> Path:
    """A file of ../shared/data, or skip the test with the reason."""
    path = SHARED_DATA / relative
    if not path.is_file():
        pytest.skip(f"shared data set not available: {path} (set LINKGRAPH_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def spark():
    from linkgraph.config import SparkConfig
    from linkgraph.session import get_spark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    work = Path(tempfile.mkdtemp(prefix="linkgraph-test-spark-"))
    session = get_spark(
        SparkConfig(
            app_name="linkgraph-tests",
            master="local[2]",
            driver_memory="2g",
            shuffle_partitions=2,
            checkpoint_dir=str(work / "checkpoints"),
            conf={
                "spark.default.parallelism": "2",
                "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
                "spark.sql.warehouse.dir": str(work / "warehouse"),
                "spark.databricks.delta.snapshotPartitions": "1",
                "spark.sql.adaptive.enabled": "true",
                "spark.sql.execution.arrow.maxRecordsPerBatch": "2000",
                "spark.driver.extraJavaOptions": f"-Dderby.system.home={work}",
            },
        )
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
def lake_dir(tmp_path) -> Path:
    return tmp_path / "lake"


@pytest.fixture(scope="session")
def hollins_lake(spark, tmp_path_factory):
    """The real Hollins crawl ingested once into a lake: (config, first IngestReport)."""
    from linkgraph.config import config_from_dict
    from linkgraph.pipeline import ingest_step

    path = shared_file("hollins-2004/hollins.dat")
    config = config_from_dict({"lake": {"path": str(tmp_path_factory.mktemp("hollins") / "lake")}})
    return config, ingest_step(spark, config, str(path), "dat")


@pytest.fixture(scope="session")
def polblogs_lake(spark, tmp_path_factory):
    """The polblogs blog graph (host-name labels) ingested once into a lake: its config."""
    from linkgraph.config import config_from_dict
    from linkgraph.pipeline import ingest_step

    path = shared_file("polblogs/polblogs.gml.gz")
    config = config_from_dict({"lake": {"path": str(tmp_path_factory.mktemp("polblogs") / "lake")}})
    ingest_step(spark, config, str(path), "gml")
    return config
# --- sample lake (issue 9: notebooks and the standalone-cluster comparison) ---
@pytest.fixture(scope="session")
def sample_lake(spark, tmp_path_factory) -> tuple[Path, Path]:
    """``linkgraph run`` on the built-in sample crawl, once per session: (edges file, lake dir).
    Shared: tests only read it (copy the directory before writing to it)."""
    from linkgraph.cli import main
    from linkgraph.pipeline import sample_input

    root = tmp_path_factory.mktemp("sample-lake")
    edges = sample_input(root / "input")
    lake = root / "lake"
    assert main(["run", "--input", str(edges), "--format", "jsonl", "--lake", str(lake)]) == 0
    return edges, lake


@pytest.fixture(scope="session")
def dist_dir(tmp_path_factory) -> Path:
    """``make dist`` into a temporary directory: the wheel and the ``--py-files`` zip."""
    import subprocess

    out = tmp_path_factory.mktemp("dist")
    repo = Path(__file__).resolve().parents[1]
    subprocess.run(["make", "-C", str(repo), "dist", f"DIST={out}", f"PYTHON={sys.executable}"],
                   check=True, capture_output=True, timeout=600)
    return out
