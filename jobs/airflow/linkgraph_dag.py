"""Airflow DAGs of the linkgraph pipeline: one task per job, daily, in dependency order

    ingest → analyze → pagerank ┐
                     personalized_pagerank ├→ scores → compress
                     reward ┘

* ``linkgraph`` submits each job with ``SparkSubmitOperator`` (``spark-submit jobs/<job>.py`` to the
  cluster of the ``spark_default`` connection, Delta's ``--packages``, the package zip as
  ``--py-files``);
* ``linkgraph_databricks`` runs each job as a one-off Databricks run (``DatabricksSubmitRunOperator``)
  of a Python wheel task on the ``linkgraph`` wheel, with an idempotency token per task, day and
  try, so a submission repeated after a lost response does not start a second run.

Parse time does nothing but declare operators: no linkgraph or pyspark import, no connection or
Variable look-up (the operators resolve their connection when they run).  Run-specific values are
templates: the day's input is ``{{ params.input_root }}/{{ ds }}``; everything else is a DAG
param with a default, overridable per run.  The jobs are idempotent (Delta MERGE / replace), so a
retry or a re-run of a day changes nothing that is already right.

Install ``jobs/airflow/requirements.txt`` in Airflow's environment; copy this file to the DAG folder.

Caveat: ``pagerank`` and ``personalized_pagerank`` both replace the one ``pagerank`` table today
(older runs stay reachable by Delta time travel and in ``rank_runs``), so in parallel the later
commit is what ``scores`` reads; give personalised vectors a table of their own before relying on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.databricks.operators.databricks import DatabricksSubmitRunOperator
from airflow.sdk import DAG, Param

# Must equal linkgraph.packages.DELTA_PACKAGE (the test checks); linkgraph itself is not imported here.
DELTA_PACKAGE = "io.delta:delta-spark_4.2_2.13:4.4.0"
LINKGRAPH_VERSION = "0.1.0"


@dataclass(frozen=True)
class Job:
    """One pipeline job: its task id, ``linkgraph`` subcommand, extra arguments (Jinja
    templates) and the tasks it waits for."""

    task_id: str
    command: str
    arguments: tuple[str, ...] = ()
    upstream: tuple[str, ...] = ()

    @property
    def script(self) -> str:
        return f"{self.task_id}.py"


JOBS = (
    Job("ingest", "ingest", ("--input", "{{ params.input_root }}/{{ ds }}", "--format", "{{ params.input_format }}")),
    Job("analyze", "analyze", upstream=("ingest",)),
    Job("pagerank", "pagerank", ("--warm-start",), upstream=("analyze",)),
    Job("personalized_pagerank", "pagerank", ("--topic", "{{ params.topic }}"), upstream=("analyze",)),
    # the DAG run's id: a retried task completes the attempt that died instead of starting over
    Job("reward", "reward", ("--rounds", "{{ params.reward_rounds }}", "--run-id", "{{ run_id }}"),
        upstream=("analyze",)),
    Job("scores", "scores", upstream=("pagerank", "personalized_pagerank", "reward")),
    Job("compress", "compress", upstream=("scores",)),
)

COMMON_ARGUMENTS = ("--conf", "{{ params.conf }}", "--lake", "{{ params.lake }}")

DEFAULT_ARGS = {
    "owner": "linkgraph",
    "retries": 2,
    "retry_delay": timedelta(minutes=10),
    "execution_timeout": timedelta(hours=6),
}

PARAMS = {
    "input_root": Param("s3a://crawl/edges", type="string", description="daily edge records under <input_root>/<ds>"),
    "input_format": Param("parquet", enum=["parquet", "jsonl", "csv", "arcs", "dat", "gml"]),
    "lake": Param("s3a://crawl-lake/linkgraph", type="string", description="lake holding the Delta tables"),
    "conf": Param("conf/cluster.yaml", type="string", description="linkgraph config YAML as the driver sees it"),
    "topic": Param("jobs,career,hr", type="string", description="topic terms of the personalised PageRank"),
    "reward_rounds": Param(10, type="integer", minimum=0),
}


def _wire(tasks: dict[str, object]) -> None:
    for job in JOBS:
        for upstream in job.upstream:
            tasks[upstream] >> tasks[job.task_id]


def _arguments(job: Job) -> list[str]:
    return [*job.arguments, *COMMON_ARGUMENTS]


with DAG(
    dag_id="linkgraph",
    description="linkgraph pipeline on a Spark cluster (spark-submit)",
    schedule="@daily",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        **PARAMS,
        "jobs_dir": Param("/opt/linkgraph/jobs", type="string", description="jobs/*.py on the Airflow worker"),
        "py_files": Param(f"/opt/linkgraph/dist/linkgraph-{LINKGRAPH_VERSION}-py-files.zip", type="string",
                          description="make dist's package zip"),
    },
    tags=["linkgraph", "spark"],
) as spark_submit_dag:
    _wire({
        job.task_id: SparkSubmitOperator(
            task_id=job.task_id,
            conn_id="spark_default",
            application=f"{{{{ params.jobs_dir }}}}/{job.script}",
            application_args=_arguments(job),
            packages=DELTA_PACKAGE,
            py_files="{{ params.py_files }}",
            name=f"linkgraph-{job.task_id}-{{{{ ds }}}}",
            conf={"spark.sql.session.timeZone": "UTC"},
        )
        for job in JOBS
    })


with DAG(
    dag_id="linkgraph_databricks",
    description="linkgraph pipeline on Databricks (one wheel-task run per job)",
    schedule="@daily",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    params={
        **PARAMS,
        "lake": Param("dbfs:/linkgraph/lake", type="string"),
        "input_root": Param("dbfs:/crawl/edges", type="string"),
        "conf": Param("/Workspace/Shared/linkgraph/conf/databricks.yaml", type="string"),
        "cluster_id": Param("", type="string", description="existing all-purpose or job cluster to run on"),
        "wheel": Param(f"/Workspace/Shared/linkgraph/dist/linkgraph-{LINKGRAPH_VERSION}-py3-none-any.whl",
                       type="string"),
    },
    tags=["linkgraph", "databricks"],
) as databricks_dag:
    _wire({
        job.task_id: DatabricksSubmitRunOperator(
            task_id=job.task_id,
            databricks_conn_id="databricks_default",
            run_name=f"linkgraph-{job.task_id}-{{{{ ds }}}}",
            existing_cluster_id="{{ params.cluster_id }}",
            libraries=[{"whl": "{{ params.wheel }}"}],
            json={"python_wheel_task": {
                "package_name": "linkgraph",
                "entry_point": "linkgraph-job",
                "parameters": [job.command, *_arguments(job)],
            }},
            # at most 64 characters; a retry (new try number) is a new run, a lost response is not
            idempotency_token=f"linkgraph-{job.task_id}-{{{{ ds_nodash }}}}-try{{{{ ti.try_number }}}}",
        )
        for job in JOBS
    })
