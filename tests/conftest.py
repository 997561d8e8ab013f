"""One session-scoped local SparkSession (Delta enabled) for the whole suite."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import settings

from linkgraph.config import TINY_DATA_SPARK_CONF

# One fixed profile, so that one run's verdict is every run's: examples are derived from each
# test's source (derandomize), no example database carries state between runs, and each property
# test states its own example count in its @settings.  HYPOTHESIS_PROFILE=explore searches anew.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SHARED_DATA = Path(os.environ.get("LINKGRAPH_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


GRAPHFRAMES_JARS = sorted((SHARED_DATA.parent / "graphframes").glob("graphframes-core-*.jar"))


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
            driver_memory="3g",
            shuffle_partitions=2,
            checkpoint_dir=str(work / "checkpoints"),
            # the shared GraphFrames jar, when present, so the graphframes engine can be tested
            graphframes_jar=str(GRAPHFRAMES_JARS[-1]) if GRAPHFRAMES_JARS else None,
            conf={
                "spark.default.parallelism": "2",
                "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
                "spark.sql.warehouse.dir": str(work / "warehouse"),
                "spark.databricks.delta.snapshotPartitions": "1",
                "spark.sql.adaptive.enabled": "true",
                "spark.sql.execution.arrow.maxRecordsPerBatch": "2000",
                "spark.driver.extraJavaOptions": f"-Dderby.system.home={work}",
                **TINY_DATA_SPARK_CONF,
            },
        )
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def forget_the_modules_delta_logs():
    """After each test module, drop Delta's cache of table logs: one session serves every module,
    and it would otherwise keep the log and latest snapshot of each of the thousands of tables the
    suite writes (a job's session lives for one job and never gathers so many)."""
    yield
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.sparkContext._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()


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
class SampleLake(NamedTuple):
    edges: Path    # the sample's edge records (JSON lines)
    lake: Path     # the lake directory the run wrote
    output: str    # what `linkgraph run` printed


@contextlib.contextmanager
def working_directory(path: Path):
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield path
    finally:
        os.chdir(previous)


@pytest.fixture(scope="session")
def sample_lake(spark, tmp_path_factory) -> SampleLake:
    """`linkgraph run --input input/sample-edges.jsonl --format jsonl --lake lake` typed in a working
    directory as a user would (relative paths), on the built-in sample's edges and without seed
    URLs, once per session.  Shared: tests only read it (copy the directory before writing to it)."""
    from linkgraph.cli import main
    from linkgraph.pipeline import sample_input

    root = tmp_path_factory.mktemp("sample-lake")
    edges = sample_input(root / "input")
    printed = io.StringIO()
    with working_directory(root), contextlib.redirect_stdout(printed):
        assert main(["run", "--input", "input/sample-edges.jsonl", "--format", "jsonl", "--lake", "lake"]) == 0
    return SampleLake(edges, root / "lake", printed.getvalue())


@pytest.fixture(scope="session")
def dist_dir(tmp_path_factory) -> Path:
    """``make dist`` into a temporary directory: the wheel and the ``--py-files`` zip."""
    import subprocess

    out = tmp_path_factory.mktemp("dist")
    repo = Path(__file__).resolve().parents[1]
    subprocess.run(["make", "-C", str(repo), "dist", f"DIST={out}", f"PYTHON={sys.executable}"],
                   check=True, capture_output=True, timeout=600)
    return out
