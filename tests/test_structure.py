"""The package's shape, checked statically (no Spark): no import cycle, no private name imported
from another module, table writes only from the steps (and the lake), and one registry of steps (``linkgraph.steps.registry``) from which the CLI,
``linkgraph run``'s order, the Airflow DAG and the Databricks bundle are derived; docs/tables.md is
rendered from the table declarations."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructType

from linkgraph.cli import build_parser
from linkgraph.cli import main as cli_main
from linkgraph.deploy import declared_tables, render_bundle, render_dag, render_tables_doc
from linkgraph.lake import tables as T
from linkgraph.lake.tabledocs import GROUPS, anchor, doc_type, heading
from linkgraph.steps.registry import Registry, Step, option, params_from

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
    assert "linkgraph.lake.session" in graph["linkgraph.cli"]  # function-local imports count
    assert "linkgraph.lake.tables" in graph["linkgraph.inputs.edges"]


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# Layers, lowest first: a module imports only from its own layer or the layers below it.
LAYERS = (
    ("foundation", ("linkgraph", "linkgraph.errors", "linkgraph.urls", "linkgraph.sample")),
    ("lake", ("linkgraph.lake",)),
    ("inputs", ("linkgraph.inputs",)),
    ("rank", ("linkgraph.rank", "linkgraph.compress")),
    ("graph", ("linkgraph.graph",)),
    ("steps", ("linkgraph.steps",)),
    ("explore", ("linkgraph.explore",)),
    ("app", ("linkgraph.cli", "linkgraph.deploy", "linkgraph.wheel_task")),
)


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the longest prefix naming ``module`` or a package above it."""
    best = (-1, -1)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                best = max(best, (len(prefix), index))
    assert best[1] >= 0, f"{module} belongs to no layer of LAYERS"
    return best[1]


def test_every_module_sits_in_a_folder_of_its_layer():
    flat = sorted(m for m in MODULES if m.count(".") == 1 and not _is_package(m))
    assert flat == ["linkgraph.cli", "linkgraph.deploy", "linkgraph.errors", "linkgraph.urlpolicy",
                    "linkgraph.urls", "linkgraph.wheel_task"], flat
    for module in MODULES:
        layer_of(module)


def test_every_folder_of_python_modules_is_a_regular_package():
    """A folder without ``__init__.py`` is a namespace package: it imports from a checkout but not
    from the ``--py-files`` zip."""
    folders = {path.parent for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts}
    missing = sorted(str(folder.relative_to(ROOT)) for folder in folders if not (folder / "__init__.py").is_file())
    assert not missing, missing


def _functions(tree: ast.AST):
    return (node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def test_no_function_is_longer_than_50_lines():
    long = sorted(
        f"{MODULES[module].relative_to(ROOT)}:{fn.lineno} {fn.name} ({fn.end_lineno - fn.lineno + 1} lines)"
        for module in MODULES
        for fn in _functions(ast.parse(MODULES[module].read_text()))
        if fn.end_lineno - fn.lineno + 1 > 50
    )
    assert not long, "\n".join(long)


def test_no_module_is_longer_than_600_lines():
    """A module a reader can hold in their head: one job each (the engine's planner, packer,
    exchange, codec and solver; reward's signals, rounds, runs and prune)."""
    long = sorted(f"{path.relative_to(ROOT)} ({lines} lines)" for path in MODULES.values()
                  if (lines := len(path.read_text().splitlines())) > 600)
    assert not long, "\n".join(long)


def test_imports_are_at_module_level_except_the_clis_lazy_ones():
    """The CLI imports what loads pyspark or numba only for the commands that need them (``--help``
    and Spark-free lookups start fast); every other module imports at its top."""
    inside = sorted(
        f"{MODULES[module].relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}"
        for module in MODULES if module != "linkgraph.cli"
        for fn in _functions(ast.parse(MODULES[module].read_text()))
        for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))
    )
    assert not inside, "\n".join(inside)


def test_imports_point_down_the_layers():
    upward = sorted(
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, targets in import_graph().items()
        for target in targets
        if layer_of(target) > layer_of(module)
    )
    assert not upward, "\n".join(upward)


def test_the_layer_check_sees_an_upward_import():
    assert layer_of("linkgraph.lake.delta") < layer_of("linkgraph.steps.reward") < layer_of("linkgraph.cli")
    assert layer_of("linkgraph.sample") == 0 and layer_of("linkgraph") == 0


def test_no_private_name_imported_from_another_module():
    private = [
        f"{MODULES[module].relative_to(ROOT)}:{line}: from {source} import {name}"
        for module in MODULES
        for source, names, line in _imports(module)
        for name in names
        if name.startswith("_") and not name.startswith("__") and source.startswith("linkgraph")
    ]
    assert not private, "\n".join(private)



# --- table writes only from the steps ---------------------------------------------------------------

# The packages whose modules may call a table write: the steps, and the lake, which defines the writes.
WRITERS = ("linkgraph.steps", "linkgraph.lake")


def _may_write(module: str) -> bool:
    return any(module == package or module.startswith(package + ".") for package in WRITERS)


def _is_lake(node: ast.expr) -> bool:
    """``lake``, ``ctx.lake``, ``self.lake`` or ``Lake(...)``: a ``Lake`` as the package names one
    (every parameter ``lake: Lake``, a context's or a store's ``lake``)."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lower().endswith("lake")


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> name in its module, of every ``from linkgraph... import name as local``."""
    return {alias.asname: alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("linkgraph")
            for alias in node.names if alias.asname}


def _is_table_write(call: ast.Call, methods: set[str], functions: set[str], aliases: dict[str, str]) -> bool:
    """Whether ``call`` writes a table: one of ``functions`` by any name or module (``upsert_links``,
    ``T.write_rejects``, an alias), or one of ``methods`` (those of ``Lake`` and of a ``Table``
    declaration) called on a lake (``lake.merge(...)``) or with one as its first or ``lake``
    argument (``T.PAGES.ensure(lake)``).  A method of another object (``rows.append(x)``) is not."""
    func = call.func
    if isinstance(func, ast.Name):
        return aliases.get(func.id, func.id) in functions
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in functions:
        return True
    lake_argument = (bool(call.args) and _is_lake(call.args[0])) or any(kw.arg == "lake" for kw in call.keywords)
    return func.attr in methods and (_is_lake(func.value) or lake_argument)


def _lake_commit_methods() -> set[str]:
    """The methods of ``Lake`` that make a commit: those calling ``self._committed`` (which records
    every commit ``Lake`` makes), directly or through another of its methods (``_committed_merge``)."""
    tree = ast.parse(MODULES["linkgraph.lake.delta"].read_text())
    lake = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Lake")
    calls = {fn.name: {c.func.attr for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                       and isinstance(c.func.value, ast.Name) and c.func.value.id == "self"}
             for fn in lake.body if isinstance(fn, ast.FunctionDef)}
    assert "_committed" in calls, "Lake no longer records its commits in _committed: update this test"
    writes = {"_committed"}
    while more := {name for name, called in calls.items() if called & writes} - writes:
        writes |= more
    return writes


def table_writes_of_the_lake() -> tuple[set[str], set[str]]:
    """(method names, function names) that write a table, derived from ``linkgraph.lake``: the
    methods of ``Lake`` that commit, then, until none is added, every function of a ``lake`` module
    (``tables.upsert_pages``, ``reliability.guard_new_page_ids``, ...) and every method of its
    classes (``Table.overwrite``, ``Table.replace_run``, ...) whose body calls a table write."""
    methods, functions = _lake_commit_methods(), set()
    defined: list[tuple[set[str], ast.FunctionDef, dict[str, str]]] = []
    for module in (m for m in MODULES if m.startswith("linkgraph.lake.")):
        tree = ast.parse(MODULES[module].read_text())
        aliases = _aliases(tree)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                defined.append((functions, node, aliases))
            elif isinstance(node, ast.ClassDef) and (module, node.name) != ("linkgraph.lake.delta", "Lake"):
                defined.extend((methods, fn, aliases) for fn in node.body if isinstance(fn, ast.FunctionDef))
    added = True
    while added:
        added = False
        for names, fn, aliases in defined:
            if fn.name not in names and any(_is_table_write(c, methods, functions, aliases)
                                            for c in ast.walk(fn) if isinstance(c, ast.Call)):
                names.add(fn.name)
                added = True
    return methods, functions


def table_writes(source: str, methods: set[str], functions: set[str]) -> list[str]:
    """``line: call`` of every table write in a module's ``source``."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    calls = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and _is_table_write(node, methods, functions, aliases)), key=lambda node: node.lineno)
    return [f"{node.lineno}: {ast.unparse(node.func)}(...)" for node in calls]


def test_only_the_steps_and_the_lake_write_tables():
    """Transforms write no table: no module of ``lib/linkgraph`` outside ``linkgraph.steps`` and
    ``linkgraph.lake`` calls a ``Lake`` method that commits (``merge``, ``overwrite``, ...), a
    declaration's write (``T.PAGES.ensure(lake)``, ``replace_run``) or a write function of the lake
    (``upsert_links``, ``write_rejects``, ``guard_new_page_ids``, ...)."""
    methods, functions = table_writes_of_the_lake()
    found = [f"{MODULES[module].relative_to(ROOT)}:{write}" for module in MODULES if not _may_write(module)
             for write in table_writes(MODULES[module].read_text(), methods, functions)]
    assert not found, "table writes outside linkgraph.steps and linkgraph.lake:\n" + "\n".join(found)


A_TRANSFORM_THAT_WRITES = """
from linkgraph.lake import tables as T
from linkgraph.lake.tables import upsert_links as put_links

def transform(lake, ctx, rows, batch):
    batch.append(rows)                       # a list's append: no write
    lake.read("pages").join(rows, "url")     # a read
    T.write_rejects(lake, rows)
    put_links(lake, rows)
    ctx.lake.merge("links", rows, ["src_id", "dst_id"])
    T.PAGERANK.overwrite(lake, rows)
    return T.reject_rows(rows, "source")    # a transform of the lake's module: no write
"""


def test_the_table_write_check_sees_a_write_outside_the_steps():
    methods, functions = table_writes_of_the_lake()
    assert {"merge", "overwrite", "append", "delete_matching", "ensure", "replace_run"} <= methods
    assert not {"read", "read_version", "exists", "current_version", "table_bytes", "last_build"} & methods
    assert {"upsert_pages", "upsert_numbered_pages", "upsert_links", "insert_missing", "write_rejects",
            "ensure_core_tables", "merge_sitemaps", "merge_page_signals", "merge_feeds",
            "replace_external_authority", "guard_new_page_ids", "check_pages_still_there"} <= functions
    assert not {"reject_rows", "count_by_reason", "max_page_id_of", "latest_rank_run_id", "declaration",
                "key_ranges"} & functions
    assert table_writes(A_TRANSFORM_THAT_WRITES, methods, functions) == [
        "8: T.write_rejects(...)", "9: put_links(...)", "10: ctx.lake.merge(...)", "11: T.PAGERANK.overwrite(...)"]
    assert not _may_write("linkgraph.inputs.edges") and not _may_write("linkgraph.rank.engine")
    assert _may_write("linkgraph.steps.ingest_write") and _may_write("linkgraph.lake.tables")

# --- one registry of steps -------------------------------------------------------------------------

@dataclass(frozen=True)
class ToyParams:
    hosts: int = option("hosts to keep", default=3)
    dry_run: bool = option("say what would change, change nothing", default=False)


def _toy_run(ctx, params):  # never called: the toy is only declared
    raise AssertionError("not run")


TOY = Step(name="dedupe-hosts", help="merge duplicate hosts", params=ToyParams, run=_toy_run,
           reads=("pages",), writes=("pages",), after=("analyze",), for_run=lambda plan, config: ToyParams())


def _toy_registry() -> Registry:
    registry = Registry(Registry.default())
    registry.register(TOY)
    return registry


def test_a_new_step_is_one_declaration_everything_else_follows():
    registry = _toy_registry()
    parser = build_parser(registry)
    args = parser.parse_args(["dedupe-hosts", "--hosts", "5", "--dry-run", "--lake", "lake"])
    assert (args.step, args.hosts, args.dry_run, args.lake) == ("dedupe-hosts", 5, True, "lake")
    assert params_from(ToyParams, args) == ToyParams(hosts=5, dry_run=True)
    order = registry.pipeline_order()
    assert order.index("analyze") < order.index("dedupe-hosts")
    assert "dedupe-hosts" not in Registry.default().pipeline_order()
    assert 'Job("dedupe_hosts", "dedupe-hosts", (), upstream=("analyze",))' in render_dag(registry)
    tasks = {task["task_key"]: task for task in yaml.safe_load(render_bundle(registry))["resources"]["jobs"]
             ["linkgraph"]["tasks"]}
    assert tasks["dedupe_hosts"]["depends_on"] == [{"task_key": "analyze"}]
    assert tasks["dedupe_hosts"]["python_wheel_task"]["parameters"][0] == "dedupe-hosts"


def test_run_order_is_a_topological_order_of_after():
    registry = Registry.default()
    order = registry.pipeline_order()
    assert order[0] == "ingest" and set(order) == {step.name for step in registry if step.in_pipeline}
    assert order.index("reward") < min(order.index(name) for name in ("analyze", "compress", "pagerank"))
    assert order.index("pagerank") < order.index("flags") < order.index("scores")
    for name in order:
        for before in registry[name].after:
            assert order.index(before) < order.index(name), (before, name)
    cyclic = Registry([Step("a", "a", ToyParams, _toy_run, after=("b",), for_run=TOY.for_run),
                       Step("b", "b", ToyParams, _toy_run, after=("a",), for_run=TOY.for_run)])
    with pytest.raises(ValueError, match="cycle"):
        cyclic.pipeline_order()


def test_every_step_declares_its_tables_and_a_known_after():
    registry = Registry.default()
    for step in registry:
        assert step.writes or step.name == "export", step.name
        assert set(step.after) <= set(registry.names()), step.name
        assert step.name in build_parser(registry)._subparsers._group_actions[0].choices


@pytest.mark.parametrize(("emit", "committed"), [("dag", "jobs/airflow/linkgraph_dag.py"), ("bundle", "databricks.yml"),
                                              ("local-conf", "conf/local.yaml"),
                                              ("config-doc", "docs/configuration.md"),
                                              ("tables-doc", "docs/tables.md")])
def test_committed_deployment_files_are_what_the_registry_emits(emit, committed, tmp_path):
    """``linkgraph pipeline --emit dag|bundle`` regenerates them; edit the steps, then re-emit.  The
    same for ``local-conf`` and ``config-doc``, rendered from the config keys' declarations, and for
    ``tables-doc``, rendered from the table declarations (edit ``linkgraph.lake.tables``/``tabledocs*``)."""
    assert cli_main(["pipeline", "--emit", emit, "--output", str(tmp_path / "emitted")]) == 0
    assert (tmp_path / "emitted").read_text() == (ROOT / committed).read_text(), (
        f"{committed} differs from the registry: run `linkgraph pipeline --emit {emit} --output {committed}`")


# --- docs/tables.md, rendered from the table declarations -------------------------------------------

def _columns_of(table: T.Table) -> list[str]:
    """The columns of a table: its schema's, and those a later step adds (``doc.added``)."""
    names = table.schema.fieldNames()
    added = table.doc.added.fieldNames() if table.doc.added is not None else []
    return names + [name for name in added if name not in names]


def test_every_column_of_every_declared_table_has_a_meaning():
    """Each column of each table's schema has a one-line meaning in its ``TableDoc``, and no meaning
    is left for a column the table does not have."""
    for name, table in T.TABLES.items():
        doc = table.doc
        assert sorted(doc.columns) == sorted(_columns_of(table)), f"{name}: document exactly its columns"
        blank = [column for column, meaning in doc.columns.items() if not meaning.strip()]
        assert not blank, f"{name}: columns without a meaning: {blank}"
        cells = [doc.row, *doc.columns.values(), doc.write, *doc.writers.values()]
        assert not [cell for cell in cells if "|" in cell or "\n" in cell], f"{name}: a table cell is one line, no |"


def test_every_declared_table_is_in_the_rendered_tables_doc():
    """The page shows every table of ``TABLES`` once (an overview row and a section), from the
    declarations the steps read and write (they are the ``TABLES``' own)."""
    listed = [name for group in GROUPS for name in group.tables]
    assert sorted(listed) == sorted(T.TABLES), "each table in exactly one group of linkgraph.lake.tabledocs.GROUPS"
    declared = declared_tables(Registry.default())
    assert declared.keys() == T.TABLES.keys() and all(declared[n] is T.TABLES[n] for n in declared)
    rendered = render_tables_doc(Registry.default())
    for name, table in T.TABLES.items():
        assert rendered.count(f"\n| [{name}](#{anchor(heading(table))}) | {table.doc.row} |") == 1, name
        assert f"\n### {heading(table)}\n" in rendered, name


def test_the_tables_doc_keeps_the_anchors_other_pages_link_to():
    rendered = render_tables_doc(Registry.default())
    anchors = {anchor(line.lstrip("#").strip()) for line in rendered.splitlines() if line.startswith("#")}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    links = {(page.name, target) for page in pages for target in re.findall(r"tables\.md#([\w-]+)", page.read_text())}
    assert {("crawl-inputs.md", "page_signals"), ("pipeline.md", "tables")} <= links
    assert not [link for link in links if link[1] not in anchors]
    assert anchor("host_centrality, domain_centrality, page_centrality") == "host_centrality-domain_centrality-page_centrality"


def test_tables_doc_written_by_is_the_steps_writes():
    """"written by" lists the steps whose ``writes`` name the table; a table's remark on how a step
    writes it (``TableDoc.writers``) names one of them."""
    registry = Registry.default()
    for name, table in T.TABLES.items():
        writers = {step.name for step in registry if name in step.tables_written()}
        assert writers, f"no step declares that it writes {name}"
        assert set(table.doc.writers) <= writers, (name, set(table.doc.writers) - writers)
    assert written_by_cell(registry, "page_flags") == "flags (also run by analyze, scores)"
    assert written_by_cell(registry, "rank_state") == "pagerank (fast engine)"


def written_by_cell(registry: Registry, table: str) -> str:
    row = next(line for line in render_tables_doc(registry).splitlines() if line.startswith(f"| [{table}]("))
    return row.split(" | ")[3]


def test_tables_sharing_a_section_have_one_shape_and_one_text():
    sections: dict[str, list[T.Table]] = {}
    for table in T.TABLES.values():
        sections.setdefault(heading(table), []).append(table)
    for title, tables in sections.items():
        first = tables[0]
        for other in tables[1:]:
            assert (other.doc.about, other.doc.notes, other.doc.added) == (first.doc.about, first.doc.notes, None), title
            assert len(other.schema.fields) == len(first.schema.fields), title
    order = [name for group in GROUPS for name in group.tables]
    for tables in sections.values():   # shown side by side: next to each other in their group
        positions = sorted(order.index(t.name) for t in tables)
        assert positions == list(range(positions[0], positions[0] + len(positions))), [t.name for t in tables]


def test_the_tables_doc_renders_spark_types_as_the_page_writes_them():
    assert [doc_type(t) for t in (LongType(), IntegerType(), ArrayType(StringType()), ArrayType(StructType()))] == [
        "long", "int", "array<string>", "array<struct>"]


def test_the_cli_and_the_tables_doc_renderer_import_no_pyspark():
    """``linkgraph --help`` and ``links --compressed`` run without pyspark: the CLI imports
    ``linkgraph.deploy`` and with it the tables page's renderer."""
    code = ("import sys, linkgraph.cli, linkgraph.lake.tabledocs, linkgraph.lake.tabledocs_core\n"
            "assert not {'pandas', 'pyspark', 'py4j'} & {m.split('.')[0] for m in sys.modules}")
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_step_names_are_written_once():
    """The pipeline's order exists only as the steps' ``after`` declarations: no tuple or list of
    step names anywhere in lib/, jobs/ or notebooks/."""
    pattern = re.compile(r"""["']ingest["'],\s*["'](?:ingest-sitemaps|analyze)["']""")
    hits = [f"{path.relative_to(ROOT)}" for folder in ("lib", "jobs", "notebooks") for path in (ROOT / folder).rglob("*.py")
            if pattern.search(path.read_text())]
    assert not hits, hits


def test_input_formats_the_cli_offers_are_the_readers():
    """``linkgraph.lake.names`` mirrors ``readers.FORMATS`` so the CLI parser imports no pyspark."""
    from linkgraph.inputs.readers import FORMATS
    from linkgraph.lake.names import INPUT_FORMATS

    assert INPUT_FORMATS == FORMATS
