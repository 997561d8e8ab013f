"""Deployment files derived from the step registry: the Airflow DAG and the Databricks bundle.

``linkgraph pipeline --emit dag|bundle`` writes them; the committed ``jobs/airflow/linkgraph_dag.py``
and ``databricks.yml`` are its output (a test fails when they differ).  Each is a template shipped
with the package (``linkgraph/templates``) whose task list is rendered from
``Registry.deployed_tasks``: one task per deployment ``Task`` of each pipeline step, waiting for the
tasks of the steps it runs after.  Task arguments carry placeholders (``{ds}``, ``{run_id}``,
``{param:NAME}``) that each scheduler spells its own way.  No pyspark is imported here.
``--emit tables-doc`` writes ``docs/tables.md``, rendered from the declarations of the tables the
steps read and write (``linkgraph.lake.tabledocs``), "written by" from the steps' ``writes``.
``--emit local-conf|config-doc`` writes ``conf/local.yaml`` and ``docs/configuration.md``, rendered
from the config keys' declarations (``linkgraph.lake.configdoc``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING

from linkgraph import __version__
from linkgraph.lake.configdoc import render_config_doc, render_local_conf
from linkgraph.lake.packages import DELTA_PACKAGE, PROVIDED_BY_SPARK
from linkgraph.lake.tabledocs import render_tables_page

if TYPE_CHECKING:
    from linkgraph.lake.tables import Table
    from linkgraph.steps.registry import Registry

_PLACEHOLDER = re.compile(r"\{(ds|run_id|param:[a-z_]+)\}")

# placeholder -> its spelling in an Airflow template and in a Databricks job
AIRFLOW = {"ds": "{{ ds }}", "run_id": "{{ run_id }}", "param": "{{{{ params.{} }}}}"}
DATABRICKS = {"ds": "{{job.parameters.ds}}", "run_id": "job-{{job.run_id}}", "param": "${{var.{}}}"}


def render_argument(argument: str, spelling: dict[str, str]) -> str:
    """``argument`` with its placeholders spelled for one scheduler."""
    def spell(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("param:"):
            return spelling["param"].format(name.split(":", 1)[1])
        return spelling[name]

    return _PLACEHOLDER.sub(spell, argument)


def _template(name: str) -> str:
    return (resources.files("linkgraph") / "templates" / name).read_text()


def _picture(registry: Registry) -> str:
    """One line per task: ``upstream, … → task``."""
    rows = registry.deployed_tasks()
    width = max(len(task.task_id) for _, task, _ in rows)
    return "\n    ".join(f"{task.task_id:<{width}} after {', '.join(upstream) or 'nothing'}"
                         for _, task, upstream in rows)


def render_dag(registry: Registry) -> str:
    """The Airflow DAG file (``jobs/airflow/linkgraph_dag.py``) of ``registry``'s pipeline."""
    jobs = []
    for step, task, upstream in registry.deployed_tasks():
        arguments = tuple(render_argument(a, AIRFLOW) for a in task.arguments)
        head = f"    Job({_py(task.task_id)}, {_py(step.name)}, {_py(arguments)},"
        if len(head) > 119:   # one argument pair per line
            pairs = [", ".join(map(json.dumps, group)) for group in _flag_groups(arguments)]
            head = (f"    Job({_py(task.task_id)}, {_py(step.name)}, (\n"
                    + "".join(f"        {pair},\n" for pair in pairs) + "    ),")
        tail = f"upstream={_py(tuple(upstream))}),"
        last = head.rsplit("\n", 1)[-1]
        jobs.append(f"{head} {tail}" if len(last) + len(tail) < 120 else f"{head}\n        {tail}")
    text = (_template("linkgraph_dag.py.tmpl").replace("@@JOBS@@", "\n".join(jobs))
            .replace("@@PICTURE@@", _picture(registry))
            .replace("@@DELTA_PACKAGE@@", DELTA_PACKAGE)
            .replace("@@PROVIDED_BY_SPARK@@", "(\n" + "".join(f"    {_py(p)},\n" for p in PROVIDED_BY_SPARK) + ")")
            .replace("@@VERSION@@", __version__))
    return text


def _flag_groups(arguments: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Arguments grouped as a flag and its value (a switch alone)."""
    groups: list[tuple[str, ...]] = []
    for argument in arguments:
        if groups and groups[-1][-1].startswith("--") and not argument.startswith("--"):
            groups[-1] = (*groups[-1], argument)
        else:
            groups.append((argument,))
    return groups


def _py(value: str | tuple[str, ...]) -> str:
    """A string or a tuple of strings as Python source, in double quotes."""
    if isinstance(value, str):
        return json.dumps(value)
    return "(" + ", ".join(map(json.dumps, value)) + ("," if len(value) == 1 else "") + ")"


def _bundle_task(command: str, task_id: str, arguments: list[str], upstream: list[str]) -> str:
    common = ["--conf", "${workspace.file_path}/conf/databricks.yaml", "--lake", "${var.lake}"]
    parameters = ", ".join(json.dumps(p) for p in [command, *arguments, *common])
    depends = (f"          depends_on: [{', '.join('{task_key: ' + u + '}' for u in upstream)}]\n"
               if upstream else "")
    return (f"        - task_key: {task_id}\n{depends}"
            "          job_cluster_key: linkgraph\n"
            "          max_retries: 2\n"
            "          libraries: [{whl: ./dist/*.whl}]\n"
            "          python_wheel_task:\n"
            "            package_name: linkgraph\n"
            "            entry_point: linkgraph-job\n"
            f"            parameters: [{parameters}]")


def render_bundle(registry: Registry) -> str:
    """The Databricks Asset Bundle (``databricks.yml``) of ``registry``'s pipeline."""
    tasks = [_bundle_task(step.name, task.task_id, [render_argument(a, DATABRICKS) for a in task.arguments],
                          upstream)
             for step, task, upstream in registry.deployed_tasks()]
    return _template("databricks.yml.tmpl").replace("@@TASKS@@", "\n".join(tasks))


# --- docs/tables.md ---------------------------------------------------------------------------------

def declared_tables(registry: Registry) -> dict[str, Table]:
    """The table declarations the registry's steps read or write, by name."""
    return {table.name: table for step in registry for table in (*step.reads, *step.writes)}


def written_by(registry: Registry, table: Table) -> str:
    """The "written by" of ``table`` in docs/tables.md: the steps whose ``writes`` name it, in
    pipeline order (the others after, by name), each with how it writes the table
    (``table.doc.writers``) and the steps whose subcommands run it too (their ``then``/``before``)."""
    order = registry.pipeline_order()
    steps = sorted((step for step in registry if table.name in step.tables_written()),
                   key=lambda step: (order.index(step.name) if step.name in order else len(order), step.name))
    cells = []
    for step in steps:
        runners = [other.name for other in registry if step.name in (*other.then, *other.before)]
        remarks = [table.doc.writers.get(step.name, ""), f"also run by {', '.join(runners)}" if runners else ""]
        remark = "; ".join(r for r in remarks if r)
        cells.append(f"{step.name} ({remark})" if remark else step.name)
    return ", ".join(cells)


def render_tables_doc(registry: Registry) -> str:
    """docs/tables.md (``linkgraph.lake.tabledocs``), from the declarations of the tables the steps
    read and write and, for "written by", the steps' ``writes``."""
    return render_tables_page(declared_tables(registry), lambda table: written_by(registry, table))


EMITTERS: dict[str, Callable[[Registry], str]] = {"dag": render_dag, "bundle": render_bundle,
                                                  "tables-doc": render_tables_doc}
# conf/local.yaml and docs/configuration.md, rendered from the config keys' declarations (no registry needed)
EMITTERS["local-conf"] = lambda _registry: render_local_conf()
EMITTERS["config-doc"] = lambda _registry: render_config_doc()
