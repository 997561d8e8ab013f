"""The package's shape, checked statically (no Spark): no import cycle, no private name imported
from another module, and one pipeline order (``linkgraph.steps.PIPELINE``) that notebook 01, the
Airflow DAG and the Databricks bundle agree with."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from linkgraph.cli import COMMANDS
from linkgraph.steps import PIPELINE

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lib" / "linkgraph"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _type_checking_only(tree: ast.AST) -> set[int]:
    """Ids of the import nodes under ``if TYPE_CHECKING:`` (never run, so no runtime cycle)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def _imports(module: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) of every import in ``module``, function-local
    ones included; relative imports resolved."""
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    skipped = _type_checking_only(tree)
    base = module if _is_package(module) else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend((alias.name, [], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                anchor = base.split(".")[: len(base.split(".")) - node.level + 1]
                source = ".".join([*anchor, source] if source else anchor)
            found.append((source, [alias.name for alias in node.names], node.lineno))
    return found


def _targets(module: str, source: str, names: list[str]) -> set[str]:
    """The package modules an import loads: the module itself (or the submodules named from a
    package) and the packages above it that the importer is not already inside."""
    loaded = {f"{source}.{name}" for name in names if f"{source}.{name}" in MODULES}
    if source in MODULES and (not names or len(loaded) < len(names)):
        loaded.add(source)
    for target in list(loaded):
        parts = target.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if parent in MODULES and not module.startswith(parent + "."):
                loaded.add(parent)
    loaded.discard(module)
    return loaded


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module in MODULES:
        for source, names, _ in _imports(module):
            if source == "linkgraph" or source.startswith("linkgraph."):
                graph[module] |= _targets(module, source, names)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_checks_see_a_cycle_and_the_package():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    graph = import_graph()
    assert "linkgraph.steps.ingest" in graph["linkgraph.cli"]  # function-local imports count
    assert "linkgraph.tables" in graph["linkgraph.steps.edges"]


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_private_name_imported_from_another_module():
    private = [
        f"{MODULES[module].relative_to(ROOT)}:{line}: from {source} import {name}"
        for module in MODULES
        for source, names, line in _imports(module)
        for name in names
        if name.startswith("_") and not name.startswith("__") and source.startswith("linkgraph")
    ]
    assert not private, "\n".join(private)


# --- one pipeline order ---------------------------------------------------------------------------

# PIPELINE steps that the deployments (DAG, bundle, notebook) do not run as tasks of their own
NOT_A_DEPLOYED_TASK = {
    "ingest-sitemaps": "needs a sitemaps input; the daily jobs ingest edge records only",
    "flags": "no command of its own: `linkgraph analyze` and `linkgraph scores` write page_flags",
}


def _agrees_with_pipeline(commands: dict[str, str], upstream: dict[str, list[str]]) -> None:
    """Every task runs a PIPELINE step (or the one ``flags`` is folded into), every dependency
    runs forward in PIPELINE order, and every step but the documented ones has a task."""
    for task, command in commands.items():
        assert command in PIPELINE, f"task {task} runs {command!r}, not a PIPELINE step"
    for task, before in upstream.items():
        for earlier in before:
            assert PIPELINE.index(commands[earlier]) < PIPELINE.index(commands[task]), (
                f"{earlier} ({commands[earlier]}) runs before {task} ({commands[task]}), against PIPELINE {PIPELINE}")
    missing = set(PIPELINE) - set(commands.values()) - set(NOT_A_DEPLOYED_TASK)
    assert not missing, f"PIPELINE steps without a task: {sorted(missing)}"


def _airflow_jobs() -> tuple[dict[str, str], dict[str, list[str]]]:
    tree = ast.parse((ROOT / "jobs" / "airflow" / "linkgraph_dag.py").read_text())
    jobs = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "JOBS" for t in node.targets))
    commands, upstream = {}, {}
    for call in jobs.elts:
        args = [ast.literal_eval(a) for a in call.args]
        keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        commands[args[0]] = args[1]
        upstream[args[0]] = list(keywords.get("upstream", args[3] if len(args) > 3 else ()))
    return commands, upstream


def _bundle_tasks() -> tuple[dict[str, str], dict[str, list[str]]]:
    bundle = yaml.safe_load((ROOT / "databricks.yml").read_text())
    commands, upstream = {}, {}
    for job in bundle["resources"]["jobs"].values():
        for task in job["tasks"]:
            wheel = task.get("python_wheel_task")
            if wheel is None or wheel.get("entry_point") != "linkgraph-job":
                continue  # the notebooks of the bundle read the lake; they are no pipeline step
            commands[task["task_key"]] = wheel["parameters"][0]
            upstream[task["task_key"]] = [d["task_key"] for d in task.get("depends_on", [])]
    return commands, upstream


def test_pipeline_steps_are_known():
    assert len(set(PIPELINE)) == len(PIPELINE)
    assert set(PIPELINE) - set(COMMANDS) == {"flags"}


def test_airflow_dag_follows_the_pipeline_order():
    commands, upstream = _airflow_jobs()
    assert commands["ingest"] == "ingest"
    _agrees_with_pipeline(commands, upstream)


def test_databricks_bundle_follows_the_pipeline_order():
    commands, upstream = _bundle_tasks()
    assert commands
    _agrees_with_pipeline(commands, upstream)
    assert (commands, upstream) == _airflow_jobs(), "the bundle and the Airflow DAG run different tasks"


def test_notebook_01_offers_the_steps_in_pipeline_order():
    tree = ast.parse((ROOT / "notebooks" / "01_run_pipeline.py").read_text())
    offered = next(
        ast.literal_eval(node.value.generators[0].iter) for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pipeline_steps"
                                                for t in node.targets)
    )
    assert list(offered) == [step for step in PIPELINE if step in offered]
    assert set(PIPELINE) - set(offered) == set(NOT_A_DEPLOYED_TASK)


def test_input_formats_the_cli_offers_are_the_readers():
    """``linkgraph.names`` mirrors ``readers.FORMATS`` so the CLI parser imports no pyspark."""
    from linkgraph.names import INPUT_FORMATS
    from linkgraph.readers import FORMATS

    assert INPUT_FORMATS == FORMATS
