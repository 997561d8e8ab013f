"""Run by ``test_airflow_dag.py`` with the Python of Airflow's own environment (``.venv-airflow``):
load each DAG folder with a real ``DagBag`` while every connection and Variable look-up raises,
and write, as JSON to a file (one entry per folder), the import errors, the look-ups attempted, each task's operator, upstream tasks
and retries, and a few template fields rendered for one day.

    .venv-airflow/bin/python tests/airflow_dagbag_probe.py 2026-11-29 report.json jobs/airflow [more folders]

(Airflow logs to standard output, hence the file.)
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import tempfile
from types import SimpleNamespace
from unittest import mock

# (module, class, method): the ways a DAG file could reach a connection or a Variable
LOOKUPS = (
    ("airflow.sdk", "BaseHook", "get_connection"),
    ("airflow.sdk", "Connection", "get"),
    ("airflow.models.connection", "Connection", "get_connection_from_secrets"),
    ("airflow.sdk", "Variable", "get"),
    ("airflow.models.variable", "Variable", "get"),
)
RENDERED = ("application", "existing_cluster_id", "application_args", "packages", "exclude_packages", "py_files", "name",
            "idempotency_token", "json", "libraries", "run_name")


def refusing(name: str, attempts: list[str]):
    def lookup(*args, **kwargs):
        attempts.append(f"{name}{args!r}")
        raise RuntimeError(f"{name} called while parsing the DAG file")

    return lookup


def probe(dag_folder: str, day: str) -> dict:
    attempts: list[str] = []
    with contextlib.ExitStack() as patches:
        for module_name, class_name, method in LOOKUPS:
            try:
                owner = getattr(importlib.import_module(module_name), class_name)
            except (ImportError, AttributeError):
                continue
            patches.enter_context(mock.patch.object(owner, method, refusing(f"{class_name}.{method}", attempts)))
        try:
            from airflow.dag_processing.dagbag import DagBag
        except ImportError:  # Airflow < 3.1
            from airflow.models.dagbag import DagBag
        bag = DagBag(dag_folder=dag_folder)

    report = {"import_errors": {str(k): v for k, v in bag.import_errors.items()}, "lookups": attempts, "dags": {}}
    for dag_id, dag in bag.dags.items():
        params = {key: dag.params[key] for key in dag.params}
        tasks = {}
        for task in dag.tasks:
            context = {"ds": day, "ds_nodash": day.replace("-", ""), "params": params, "dag": dag, "task": task,
                       "ti": SimpleNamespace(try_number=1), "run_id": f"scheduled__{day}T00:00:00+00:00"}
            rendered = {field: task.render_template(getattr(task, field), context)
                        for field in RENDERED if field in task.template_fields and getattr(task, field, None) is not None}
            tasks[task.task_id] = {
                "operator": type(task).__name__,
                "upstream": sorted(task.upstream_task_ids),
                "retries": task.retries,
                "conn_id": getattr(task, "_conn_id", None) or getattr(task, "databricks_conn_id", None),
                "rendered": rendered,
            }
        report["dags"][dag_id] = {"schedule": str(dag.schedule), "tasks": tasks}
    return report


def exit_code_outcomes(dag_folder: str, day: str) -> dict:
    """The ``linkgraph`` DAG's ingest task executed against a stand-in ``spark-submit`` (first on
    the PATH the task builds from its ``spark_home`` param) that exits with a given code: the
    exception class each code ends the task with ("none" for success)."""
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow < 3.1
        from airflow.models.dagbag import DagBag
    dag = DagBag(dag_folder=dag_folder).dags["linkgraph"]
    home = tempfile.mkdtemp()
    os.makedirs(os.path.join(home, "bin"))
    submit = os.path.join(home, "bin", "spark-submit")
    with open(submit, "w") as script:
        script.write('#!/bin/sh\necho "stand-in spark-submit $*"\nexit "$LINKGRAPH_PROBE_EXIT"\n')
    os.chmod(submit, 0o755)
    os.environ["AIRFLOW_CONN_SPARK_DEFAULT"] = "spark://local"
    outcomes = {}
    for code in (0, 1, 2, 3):
        os.environ["LINKGRAPH_PROBE_EXIT"] = str(code)
        task = dag.get_task("ingest").prepare_for_execution()
        params = {key: dag.params[key] for key in dag.params}
        params["spark_home"] = home
        context = {"ds": day, "ds_nodash": day.replace("-", ""), "params": params, "dag": dag, "task": task,
                   "ti": SimpleNamespace(try_number=1), "run_id": f"scheduled__{day}T00:00:00+00:00"}
        task.render_template_fields(context)
        try:
            task.execute(context)
            outcomes[str(code)] = "none"
        except Exception as exc:  # what the task runner would see
            outcomes[str(code)] = type(exc).__name__
    return outcomes


def main(day: str, report_path: str, *dag_folders: str) -> None:
    report = {folder: probe(folder, day) for folder in dag_folders}
    report["exit_codes"] = exit_code_outcomes(dag_folders[0], day)
    with open(report_path, "w") as out:
        json.dump(report, out, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:])
