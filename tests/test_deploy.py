"""Deployment artefacts without Spark: the spark-submit entry points, ``make dist``, the wheel
task entry point, the Databricks bundle and the notebooks' source format."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from linkgraph.steps.registry import Registry

REPO = Path(__file__).resolve().parents[1]

# the pipeline's deployment tasks, from the step registry (which the DAG and the bundle are
# generated from): task -> the tasks it waits for, and task -> the linkgraph command it runs
PIPELINE_UPSTREAM = {task.task_id: set(upstream) for _, task, upstream in Registry.default().deployed_tasks()}
PIPELINE_COMMANDS = {task.task_id: step.name for step, task, _ in Registry.default().deployed_tasks()}


def _waits_for(task: str, before: str) -> bool:
    """True when ``task`` runs only after ``before`` (directly or through other tasks)."""
    upstream = PIPELINE_UPSTREAM[task]
    return before in upstream or any(_waits_for(other, before) for other in upstream)


def test_the_deployed_tasks_run_in_the_orders_the_lake_needs():
    """The orders the shipped pipeline depends on, whatever steps are added: the reward run's
    prune deletes pages and links, so everything that reads the graph follows it; both rank tasks
    replace `pagerank` and the uniform run commits last, so scores and the flags read it."""
    assert PIPELINE_UPSTREAM["ingest"] == set()
    for task in PIPELINE_UPSTREAM.keys() - {"ingest", "reward", "ingest_sitemaps"}:
        assert _waits_for(task, "reward"), task
    assert _waits_for("reward", "ingest") and _waits_for("ingest_sitemaps", "ingest")
    assert _waits_for("pagerank", "personalized_pagerank")
    assert _waits_for("scores", "pagerank") and _waits_for("scores", "ingest_sitemaps")
    assert PIPELINE_COMMANDS["personalized_pagerank"] == "pagerank"


def load_job(name: str):
    spec = importlib.util.spec_from_file_location(f"linkgraph_job_{name}", REPO / "jobs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("command", ["ingest", "pagerank", "run", "frontier"])
def test_the_job_entry_point_runs_the_linkgraph_command_it_is_given(command, monkeypatch):
    module = load_job("step")
    calls = []
    monkeypatch.setattr(module, "cli_main", lambda argv: calls.append(argv) or 0)
    arguments = [command, "--lake", "/data/lake", "--conf", "conf/cluster.yaml"]
    assert module.main(arguments) == 0
    assert calls == [arguments]

    monkeypatch.setattr(sys, "argv", ["jobs/step.py", *arguments])
    assert module.main() == 0
    assert calls[-1] == arguments


def test_jobs_holds_one_entry_point():
    assert sorted(p.name for p in (REPO / "jobs").glob("*.py")) == ["step.py"]


def test_wheel_entry_point_fails_the_run_on_a_non_zero_exit_code(monkeypatch, tmp_path, capsys):
    from linkgraph import wheel_task

    monkeypatch.chdir(tmp_path)   # no conf/local.yaml here: built-in defaults
    with pytest.raises(SystemExit) as stopped:
        wheel_task.main(["ingest", "--input", str(tmp_path / "missing.jsonl"), "--lake", str(tmp_path / "lake")])
    assert stopped.value.code == 2
    assert "input not found" in capsys.readouterr().err
    # --if-present without the day's input: the task run ends in success (Databricks has no skip)
    assert wheel_task.main(["ingest", "--input", str(tmp_path / "missing"), "--if-present",
                            "--lake", str(tmp_path / "lake")]) is None
    monkeypatch.setattr(wheel_task, "cli_main", lambda argv: 0)
    assert wheel_task.main(["analyze"]) is None


def test_make_dist_builds_the_wheel_and_an_importable_py_files_zip(dist_dir):
    version = next(line.split('"')[1] for line in (REPO / "pyproject.toml").read_text().splitlines()
                   if line.startswith("version = "))
    wheel = dist_dir / f"linkgraph-{version}-py3-none-any.whl"
    py_files = dist_dir / f"linkgraph-{version}-py-files.zip"
    assert wheel.is_file() and py_files.is_file()

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = archive.read(f"linkgraph-{version}.dist-info/entry_points.txt").decode()
    package_modules = {str(p.relative_to(REPO / "lib")) for p in (REPO / "lib" / "linkgraph").rglob("*.py")}
    assert package_modules <= names
    assert "linkgraph-job = linkgraph.wheel_task:main" in entry_points

    # --py-files puts the zip first on the path: the package must import from inside it
    probe = f"import sys; sys.path.insert(0, {str(py_files)!r}); import linkgraph.cli, linkgraph.lake.session; print(linkgraph.cli.__file__)"
    located = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.strip()
    assert located.startswith(str(py_files) + "/linkgraph/")


def test_databricks_bundle_runs_every_job_as_a_wheel_task_in_pipeline_order():
    bundle = yaml.safe_load((REPO / "databricks.yml").read_text())
    job = bundle["resources"]["jobs"]["linkgraph"]
    tasks = {task["task_key"]: task for task in job["tasks"]}
    assert set(tasks) == set(PIPELINE_UPSTREAM)
    for key, task in tasks.items():
        assert {d["task_key"] for d in task.get("depends_on", [])} == PIPELINE_UPSTREAM[key], key
        wheel_task = task["python_wheel_task"]
        assert wheel_task["package_name"] == "linkgraph"
        assert wheel_task["entry_point"] == "linkgraph-job"
        parameters = wheel_task["parameters"]
        assert parameters[0] == PIPELINE_COMMANDS[key]
        assert "--lake" in parameters and "--conf" in parameters
        assert task["libraries"] == [{"whl": "./dist/*.whl"}]
    assert "{{job.parameters.ds}}" in " ".join(tasks["ingest"]["python_wheel_task"]["parameters"])
    assert "linkgraph-job" in (REPO / "pyproject.toml").read_text()
    # the bundle's config file loads
    from linkgraph.lake.config import load_config

    config = load_config(REPO / "conf" / "databricks.yaml")
    assert config.spark.master is None and config.lake.path == "dbfs:/linkgraph/lake"
    for notebook_task in bundle["resources"]["jobs"]["linkgraph_review"]["tasks"]:
        assert (REPO / notebook_task["notebook_task"]["notebook_path"]).is_file()


NOTEBOOKS = sorted((REPO / "notebooks").glob("*.py"))


def test_notebooks_are_in_databricks_source_format():
    assert [p.name for p in NOTEBOOKS] == ["01_run_pipeline.py", "02_explore_ranks.py", "03_link_farm_review.py"]
    for path in NOTEBOOKS:
        text = path.read_text()
        assert text.startswith("# Databricks notebook source\n"), path.name
        cells = text.split("\n# COMMAND ----------\n")
        assert len(cells) >= 4, path.name
        assert any(cell.lstrip().startswith("# MAGIC %md") for cell in cells), path.name
        assert "dbutils.widgets.text(" in text and "from linkgraph" in text, path.name
        compile(text, str(path), "exec")
