"""``jobs/airflow/linkgraph_dag.py`` loaded by a real Airflow ``DagBag``.

Airflow lives in its own environment (``.venv-airflow``, from ``jobs/airflow/requirements.txt``,
built by the test when missing or outdated): its Spark provider installs ``pyspark-client``, which
would overwrite the pinned ``pyspark``.  The test runs ``tests/airflow_dagbag_probe.py`` with that environment's Python
(``LINKGRAPH_AIRFLOW_PYTHON`` moves it) and checks what the probe reports.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

from linkgraph.lake.packages import DELTA_PACKAGE, EXCLUDED_PACKAGES
from test_deploy import PIPELINE_COMMANDS, PIPELINE_UPSTREAM

REPO = Path(__file__).resolve().parents[1]
AIRFLOW_PYTHON = Path(os.environ.get("LINKGRAPH_AIRFLOW_PYTHON", REPO / ".venv-airflow" / "bin" / "python"))
DAY = "2026-11-29"
VERSION = version("linkgraph")   # the DAG names make dist's files by it

# A DAG file that looks a connection up while being parsed: the probe must catch it.
LOOKUP_AT_PARSE_TIME = '''
from datetime import datetime
from airflow.sdk import DAG, BaseHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

master = BaseHook.get_connection("spark_default").host
with DAG(dag_id="bad", schedule=None, start_date=datetime(2026, 1, 1)):
    SparkSubmitOperator(task_id="job", application="job.py", conf={"spark.master": master})
'''


AIRFLOW_REQUIREMENTS = REPO / "jobs" / "airflow" / "requirements.txt"


def ensure_airflow_venv() -> Path:
    """Airflow's own environment: ``LINKGRAPH_AIRFLOW_PYTHON`` when set, else ``.venv-airflow``,
    (re)built from ``jobs/airflow/requirements.txt`` only when it is missing or was built from
    other requirements (their SHA-256 is kept in ``.venv-airflow/requirements.sha256``).

    Built with uv (a dev dependency): about 300 packages, which pip resolved and installed in
    5-7 minutes on a fresh 2-core machine and uv in about 25 seconds (cold cache)."""
    if "LINKGRAPH_AIRFLOW_PYTHON" in os.environ:
        return AIRFLOW_PYTHON
    # one builder at a time: test processes sharing this checkout (pytest-xdist workers) wait
    with open(REPO / ".venv-airflow.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_airflow_venv_unless_current()


def _build_airflow_venv_unless_current() -> Path:
    import hashlib
    import shutil
    import sys

    venv = REPO / ".venv-airflow"
    stamp = venv / "requirements.sha256"
    wanted = hashlib.sha256(AIRFLOW_REQUIREMENTS.read_bytes()).hexdigest()
    if AIRFLOW_PYTHON.is_file() and stamp.is_file() and stamp.read_text().strip() == wanted:
        return AIRFLOW_PYTHON
    shutil.rmtree(venv, ignore_errors=True)
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "venv", "--quiet", "--python", "python3", str(venv)], check=True, timeout=300)
    subprocess.run([*uv, "pip", "install", "--quiet", "--python", str(AIRFLOW_PYTHON), "-r", str(AIRFLOW_REQUIREMENTS)],
                   check=True, timeout=1200)
    stamp.write_text(wanted + "\n")
    return AIRFLOW_PYTHON


def probe_dagbag(work: Path) -> dict:
    """Airflow's environment (built if needed), then the probe's report on the DAGs and on a bad
    DAG file; ``work`` holds ``AIRFLOW_HOME``.  The ``dagbag_report`` fixture (conftest.py)."""
    ensure_airflow_venv()
    bad = work / "bad-dags"
    bad.mkdir()
    (bad / "bad_dag.py").write_text(LOOKUP_AT_PARSE_TIME)
    env = {**os.environ, "AIRFLOW_HOME": str(work / "home"), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW__CORE__UNIT_TEST_MODE": "True"}
    report = work / "report.json"
    result = subprocess.run(
        [str(AIRFLOW_PYTHON), str(REPO / "tests" / "airflow_dagbag_probe.py"), DAY, str(report),
         str(REPO / "jobs" / "airflow"), str(bad)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = json.loads(report.read_text())
    return {"dags": found[str(REPO / "jobs" / "airflow")], "bad": found[str(bad)], "exit_codes": found["exit_codes"]}


def test_dagbag_loads_both_dags_without_import_errors_or_connection_lookups(dagbag_report):
    report = dagbag_report["dags"]
    assert report["import_errors"] == {}
    assert report["lookups"] == []
    assert set(report["dags"]) == {"linkgraph", "linkgraph_databricks"}


def test_the_probe_catches_a_connection_lookup_at_parse_time(dagbag_report):
    bad = dagbag_report["bad"]
    assert bad["lookups"] == ["BaseHook.get_connection('spark_default',)"]
    (error,) = bad["import_errors"].values()
    assert "RuntimeError: BaseHook.get_connection called while parsing the DAG file" in error


@pytest.mark.parametrize("dag_id", ["linkgraph", "linkgraph_databricks"])
def test_tasks_run_in_pipeline_order_with_retries(dagbag_report, dag_id):
    dag = dagbag_report["dags"]["dags"][dag_id]
    assert dag["schedule"] == "@daily"
    assert {task_id: set(task["upstream"]) for task_id, task in dag["tasks"].items()} == PIPELINE_UPSTREAM
    assert all(task["retries"] == 2 for task in dag["tasks"].values())


def test_spark_submit_tasks_submit_the_step_entry_point_with_the_days_arguments(dagbag_report):
    tasks = dagbag_report["dags"]["dags"]["linkgraph"]["tasks"]
    for task_id, task in tasks.items():
        rendered = task["rendered"]
        assert (task["operator"], task["conn_id"]) == ("LinkgraphSubmit", "spark_default")   # a SparkSubmitOperator
        assert rendered["application"] == "/opt/linkgraph/jobs/step.py"
        assert rendered["application_args"][0] == PIPELINE_COMMANDS[task_id]
        assert rendered["packages"] == DELTA_PACKAGE
        assert rendered["exclude_packages"] == EXCLUDED_PACKAGES
        assert rendered["py_files"] == f"/opt/linkgraph/dist/linkgraph-{VERSION}-py-files.zip"
        assert rendered["name"] == f"linkgraph-{task_id}-{DAY}"
        assert rendered["application_args"][-4:] == ["--conf", "conf/cluster.yaml", "--lake", "s3a://crawl-lake/linkgraph"]
    assert tasks["ingest"]["rendered"]["application_args"][1:6] == [
        "--input", f"s3a://crawl/edges/{DAY}", "--format", "parquet", "--if-present"]
    assert tasks["ingest_sitemaps"]["rendered"]["application_args"][1:4] == [
        "--input", f"s3a://crawl/sitemaps/{DAY}", "--if-present"]
    # a run id per task and day: a retry completes the attempt that died, a re-run of the day
    # finds its finished run
    assert tasks["personalized_pagerank"]["rendered"]["application_args"][1:5] == [
        "--topic", "jobs,career,hr", "--run-id", f"{DAY}-personalized"]
    assert tasks["pagerank"]["rendered"]["application_args"][1:4] == ["--warm-start", "--run-id", f"{DAY}-pagerank"]
    assert tasks["reward"]["rendered"]["application_args"][3:8] == [
        "--signals", f"s3a://crawl/signals/{DAY}", "--if-present", "--run-id", f"{DAY}-reward"]


def test_a_usage_error_fails_the_task_without_retries_and_no_input_skips_it(dagbag_report):
    """The ingest task run by Airflow's operator against a stand-in spark-submit, found through
    the ``spark_home`` param, exiting with each code."""
    assert dagbag_report["exit_codes"] == {
        "0": "none",                      # done
        "1": "AirflowException",          # retried (``retries``)
        "2": "AirflowFailException",      # a usage error: failed at once, a retry would fail alike
        "3": "AirflowSkipException",      # --if-present, no input for the day: skipped
    }


def test_databricks_tasks_are_wheel_tasks_with_an_idempotency_token_per_task_day_and_try(dagbag_report):
    tasks = dagbag_report["dags"]["dags"]["linkgraph_databricks"]["tasks"]
    tokens = set()
    for task_id, task in tasks.items():
        rendered = task["rendered"]
        assert (task["operator"], task["conn_id"]) == ("DatabricksSubmitRunOperator", "databricks_default")
        wheel_task = rendered["json"]["python_wheel_task"]
        assert (wheel_task["package_name"], wheel_task["entry_point"]) == ("linkgraph", "linkgraph-job")
        assert wheel_task["parameters"][0] == PIPELINE_COMMANDS[task_id]
        assert rendered["libraries"] == [{"whl": f"/Workspace/Shared/linkgraph/dist/linkgraph-{VERSION}-py3-none-any.whl"}]
        token = rendered["idempotency_token"]
        assert token == f"linkgraph-{task_id}-{DAY.replace('-', '')}-try1" and len(token) <= 64
        tokens.add(token)
    assert len(tokens) == len(tasks)
    assert f"dbfs:/crawl/edges/{DAY}" in tasks["ingest"]["rendered"]["json"]["python_wheel_task"]["parameters"]
