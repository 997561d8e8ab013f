"""One session-scoped local SparkSession (Delta enabled) for the whole suite."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import settings

import preparations
from linkgraph.lake.config import TINY_DATA_SPARK_CONF

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
    from linkgraph.lake.config import SparkConfig
    from linkgraph.lake.session import get_spark

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
    from linkgraph.lake.config import config_from_dict
    from steps_support import ingest_step

    path = shared_file("hollins-2004/hollins.dat")
    config = config_from_dict({"lake": {"path": str(tmp_path_factory.mktemp("hollins") / "lake")}})
    return config, ingest_step(spark, config, str(path), "dat")


@pytest.fixture(scope="session")
def polblogs_lake(spark, tmp_path_factory):
    """The polblogs blog graph (host-name labels) ingested once into a lake: its config."""
    from linkgraph.lake.config import config_from_dict
    from steps_support import ingest_step

    path = shared_file("polblogs/polblogs.gml.gz")
    config = config_from_dict({"lake": {"path": str(tmp_path_factory.mktemp("polblogs") / "lake")}})
    ingest_step(spark, config, str(path), "gml")
    return config
class SampleLake(NamedTuple):
    edges: Path    # the sample's edge records (JSON lines) the run ingested
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
    """The Quick start's `linkgraph run --lake lake` (the built-in sample crawl: its edges,
    sitemaps, page signals and seeds) typed in a working directory as a user would (a relative
    lake), once per session.  Shared: tests only read it (copy the directory before writing to it)."""
    from linkgraph.cli import main

    root = tmp_path_factory.mktemp("sample-lake")
    printed = io.StringIO()
    with working_directory(root), contextlib.redirect_stdout(printed):
        assert main(["run", "--lake", "lake"]) == 0
    output = printed.getvalue()
    edges = re.search(r"^using the built-in sample crawl: (\S+)$", output, re.M)
    assert edges, output
    return SampleLake(Path(edges[1]), root / "lake", output)


def make_dist() -> Path:
    """``make dist`` into a fresh directory: the wheel and the ``--py-files`` zip."""
    import subprocess

    out = preparations.workdir("dist")
    repo = Path(__file__).resolve().parents[1]
    subprocess.run(["make", "-C", str(repo), "dist", f"DIST={out}", f"PYTHON={sys.executable}"],
                   check=True, capture_output=True, timeout=600)
    return out


def probe_dagbag() -> dict:
    from test_airflow_dag import probe_dagbag as probe

    return probe(preparations.workdir("airflow"))


# fixture -> its preparation, started in the background once the session's tests are known
# (tests/preparations.py); the tests that use one run after all others
BACKGROUND_FIXTURES = {"dist_dir": make_dist, "dagbag_report": probe_dagbag}


@pytest.fixture(scope="session")
def dist_dir() -> Path:
    """The output of ``make dist`` (started in the background): the wheel and the ``--py-files`` zip."""
    return preparations.result("dist_dir", BACKGROUND_FIXTURES["dist_dir"])


@pytest.fixture(scope="session")
def dagbag_report() -> dict:
    """What ``tests/airflow_dagbag_probe.py`` found in Airflow's DagBag (started in the background)."""
    return preparations.result("dagbag_report", BACKGROUND_FIXTURES["dagbag_report"])


def _uses_background_fixture(item: pytest.Item) -> bool:
    return any(name in BACKGROUND_FIXTURES for name in getattr(item, "fixturenames", ()))


# Tiers (markers, selectable with -m): ``unit`` tests run no Spark; ``spark`` tests run transforms
# and steps on the session's SparkSession with hand-built data; ``e2e`` tests run whole commands,
# processes, clusters, notebooks or real data sets.  A module or test marked ``e2e`` (``cluster``,
# ``slow`` and ``drill`` imply it) or using a fixture of E2E_FIXTURES is e2e; else one using
# ``spark`` is spark.  ``drill`` tests (killed jobs, executors, workers) are deselected by the
# default ``-m 'not drill and not e2e'`` of pyproject.toml (CI runs ``-m 'e2e and not drill'`` too) and
# run by ``bench/drills.py``.
TIERS = ("unit", "spark", "e2e")
E2E_FIXTURES = {"sample_lake", "hollins_lake", "polblogs_lake", "dist_dir", "dagbag_report"}


def tier_of(item: pytest.Item) -> str:
    fixtures = set(getattr(item, "fixturenames", ()))
    if any(item.get_closest_marker(name) for name in ("e2e", "cluster", "slow", "drill")) or fixtures & E2E_FIXTURES:
        return "e2e"
    return "spark" if "spark" in fixtures else "unit"


@pytest.fixture(autouse=True)
def unit_tests_start_no_spark(request):
    """A ``unit`` test that starts a SparkContext fails: it belongs to the ``spark`` tier."""
    from pyspark import SparkContext

    before = SparkContext._active_spark_context
    yield
    if request.node.get_closest_marker("unit") and before is None and SparkContext._active_spark_context:
        pytest.fail("a unit-tier test started Spark: request the spark fixture (spark tier) or mark it e2e")


@pytest.hookimpl(tryfirst=True)   # before ``-m`` selects by marker
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test gets its tier's marker; whole modules with a test that waits for a background
    preparation go last, in their order."""
    for item in items:
        tier = tier_of(item)
        if not item.get_closest_marker(tier):
            item.add_marker(getattr(pytest.mark, tier))

    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    waiting = {module(item) for item in items if _uses_background_fixture(item)}
    items.sort(key=lambda item: module(item) in waiting)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    for name, prepare in BACKGROUND_FIXTURES.items():
        if name in wanted:
            preparations.start(name, prepare)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    preparations.shutdown()


def as_links(frame):
    """``frame`` with the columns of ``links`` in their order and types (absent ones null)."""
    from pyspark.sql import functions as F

    from linkgraph.lake import schemas as S

    return frame.select(*[(F.col(f.name) if f.name in frame.columns else F.lit(None)).cast(f.dataType).alias(f.name)
                          for f in S.LINKS.fields])
