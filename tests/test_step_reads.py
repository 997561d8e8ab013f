"""Steps read tables through their declarations, and read only the tables they declare.

Statically (no Spark): no module of ``linkgraph.steps`` names a table to a ``Lake`` read
(``lake.read(S.PAGES_TABLE)``, ``lake.exists("frontier")``); a step reads through the table's
declaration (``T.PAGES.read(lake)``, ``T.declaration(name).read(lake)``).  At run time (e2e): every
step of the registry, run on a copy of the sample lake with ``Lake``'s reads recorded, reads only
tables its ``reads`` or ``writes`` declare, commits only to tables its ``writes`` declare, and
reads every table its ``reads`` declares."""

from __future__ import annotations

import ast
import dataclasses
import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from linkgraph.errors import MissingTableError
from linkgraph.lake import paths
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config, load_config
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.sample import SAMPLE_SEEDS
from linkgraph.steps.registry import Registry, RunPlan

ROOT = Path(__file__).resolve().parents[1]
STEPS = ROOT / "lib" / "linkgraph" / "steps"

# The methods of ``Lake`` that read a table named by their first argument (``require``: by every
# argument) without committing; a declaration's read methods (``linkgraph.lake.tablereads``) are
# those of them a step needs, applied to its name.
LAKE_READS = ("read", "read_version", "read_or_empty", "require", "exists", "current_version", "version",
              "delta_table", "built_from", "last_build", "rows_written", "versions_since", "table_bytes",
              "table_properties")


# --- static: no step names a table to a Lake read ---------------------------------------------------

def _names_a_table(node: ast.expr) -> bool:
    """A table given by name: a string (``"pages"``, an f-string), a ``*_TABLE`` constant
    (``S.PAGES_TABLE``, ``PAGES_TABLE``) or an entry of a ``*_TABLES`` mapping (``S.CENTRALITY_TABLES[level]``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
        suffix = "_TABLES"
    else:
        suffix = "_TABLE"
    if isinstance(node, ast.Constant | ast.JoinedStr):
        return isinstance(node, ast.JoinedStr) or isinstance(node.value, str)
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.endswith(suffix)


def reads_by_name(source: str) -> list[str]:
    """``line: call`` of every call of a ``Lake`` read method whose first argument (any argument
    of ``require``, or a ``table=`` keyword) names a table rather than giving its declaration."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LAKE_READS):
            continue
        tables = node.args if node.func.attr == "require" else node.args[:1]
        tables = [*tables, *(kw.value for kw in node.keywords if kw.arg == "table")]
        if any(_names_a_table(table) for table in tables):
            found.append((node.lineno, f"{node.lineno}: {ast.unparse(node.func)}(...)"))
    return [call for _, call in sorted(found)]


def test_the_steps_read_tables_through_their_declarations():
    """Every read of a step names the table's declaration (``T.PAGES.read(lake)``), so the
    declarations a step's ``reads`` lists are the tables its code names."""
    assert all(callable(getattr(Lake, method, None)) for method in LAKE_READS)
    assert all(callable(getattr(T.Table, method, None)) for method in LAKE_READS
               if method not in ("delta_table", "versions_since", "table_bytes"))
    found = [f"{path.relative_to(ROOT)}:{call}" for path in sorted(STEPS.rglob("*.py"))
             for call in reads_by_name(path.read_text())]
    assert not found, "steps reading a table by name (read through T.<TABLE> instead):\n" + "\n".join(found)


A_STEP_THAT_READS_BY_NAME = """
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.schemas import LINKS_TABLE

def run(ctx, lake, stream, level, table):
    T.PAGES.read(lake)                                  # through the declaration
    T.declaration(table).read_version(lake, 3)          # a declaration chosen at run time
    T.require(lake, T.PAGES, T.LINKS)
    stream.read(4096)                                   # not a table
    lake.read(S.PAGES_TABLE)
    ctx.lake.read_version(LINKS_TABLE, 3)
    lake.read_or_empty("frontier", S.FRONTIER)
    lake.require(T.PAGES.name, S.LINKS_TABLE)
    ctx.lake.exists(S.CENTRALITY_TABLES[level])
    lake.built_from(table=f"{level}_centrality")
"""


def test_the_read_check_sees_a_read_by_name():
    assert reads_by_name(A_STEP_THAT_READS_BY_NAME) == [
        "11: lake.read(...)", "12: ctx.lake.read_version(...)", "13: lake.read_or_empty(...)",
        "14: lake.require(...)", "15: ctx.lake.exists(...)", "16: lake.built_from(...)"]


def test_a_declaration_reads_its_table_by_its_name_and_schema(spark, lake_dir):
    lake = Lake(spark, load_config(None).with_lake_path(str(lake_dir)).lake)
    assert not T.FRONTIER.exists(lake) and T.FRONTIER.version(lake) is None
    assert T.FRONTIER.read_or_empty(lake).schema == T.FRONTIER.schema
    with pytest.raises(MissingTableError, match="table 'frontier' not found"):
        T.require(lake, T.FRONTIER, T.PAGES)
    T.FRONTIER.ensure(lake)
    assert T.FRONTIER.exists(lake) and T.FRONTIER.current_version(lake) == T.FRONTIER.version(lake) == 0
    assert T.FRONTIER.read(lake).count() == T.FRONTIER.read_version(lake, 0).count() == 0
    with pytest.raises(MissingTableError, match="table 'pages' not found"):
        T.PAGES.require(lake)


# --- at run time: each step reads what it declares ------------------------------------------------

class RecordedReads:
    """The tables each step read (``Lake``'s read methods, whoever called them) and committed."""

    def __init__(self) -> None:
        self.step: str | None = None
        self.read: dict[str, set[str]] = defaultdict(set)
        self.written: dict[str, set[str]] = defaultdict(set)

    def recording(self, method: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(lake: Lake, *args: Any, **kwargs: Any) -> Any:
            if self.step is not None:
                tables = args if method == "require" else args[:1] or (kwargs["table"],)
                self.read[self.step].update(str(table) for table in tables)
            return original(lake, *args, **kwargs)
        return recorded


# a run of a step: its name, its parameters and the config keys it runs with, {section: {key: value}}
Run = tuple[str, Any, dict[str, dict[str, Any]]]


def runs_outside_the_pipeline(tmp_path: Path) -> tuple[list[Run], list[Run]]:
    """The runs before and after ``linkgraph run``'s steps: the steps outside it (an authority
    file before, so ``scores`` reads it; after, each centrality level twice and a diff of each
    level's last two runs, the exports) and runs of its steps on other paths (a warm-started
    PageRank; one with a trust vector, so ``flags`` adds spam mass to ``domains``; a frontier
    ordered by PageRank)."""
    authority = tmp_path / "authority.csv"
    authority.write_text("domain,page_rank_decimal\nexample.com,5.5\nexample.org,2\n")
    seeds = ",".join(SAMPLE_SEEDS)
    before: list[Run] = [("import-authority", {"input": str(authority), "format": "openpagerank"}, {})]
    after: list[Run] = [
        ("pagerank", {"warm_start": True}, {}),
        ("pagerank", {}, {"scores": {"trusted_seeds": list(SAMPLE_SEEDS)}}),
        ("flags", {}, {}),
        ("scores", {"seeds": seeds}, {"scores": {"frontier_priority": "pagerank"}}),
        *[("centrality", {"level": level}, {}) for level in (*S.CENTRALITY_LEVELS, *S.CENTRALITY_LEVELS)],
        *[("diff", {"level": level}, {}) for level in S.CENTRALITY_LEVELS],
        ("diff", {"level": "page", "measure": "harmonic"}, {}),
        *[("export", {"level": level, "format": "ccgraph", "output": str(tmp_path / f"export-{level}")}, {})
          for level in ("host", "domain")],
    ]
    return before, after


def with_keys(config: Config, sections: dict[str, dict[str, Any]]) -> Config:
    """``config`` with the keys of ``sections`` set."""
    return dataclasses.replace(config, **{name: dataclasses.replace(getattr(config, name), **keys)
                                          for name, keys in sections.items()})


@pytest.mark.e2e
def test_each_step_reads_and_writes_only_the_tables_it_declares(spark, sample_lake, tmp_path, monkeypatch):
    """Every step of the registry on a copy of the sample lake (``analyze`` and ``compress``
    without their tables, so they build them rather than find them up to date): the runs before
    ``linkgraph run``'s steps, its steps with the parameters ``linkgraph run`` gives them on the
    sample, then the runs after (``runs_outside_the_pipeline``).  ``Lake``'s reads are recorded
    per step: each table a step reads, by its own code or the lake's functions it calls, is one its
    ``reads`` or ``writes`` declares (a step may read what it writes); each table it commits to is
    in its ``writes``; and each table its ``reads`` declares is read by one of its runs."""
    rebuilt = {table.name for table in (*T.ANALYSIS, *T.COMPRESSED)}
    lake_dir = tmp_path / "lake"
    shutil.copytree(sample_lake.lake, lake_dir, ignore=lambda directory, names: [
        n for n in names if n in rebuilt and Path(directory) == sample_lake.lake])
    config = load_config(None).with_lake_path(str(lake_dir))
    plan = RunPlan(paths.to_uri(str(sample_lake.edges)), "jsonl", paths.to_uri(str(sample_lake.edges.parent / "sitemaps")),
                   list(SAMPLE_SEEDS), on_sample=True)
    registry = Registry.default()
    before, after = runs_outside_the_pipeline(tmp_path)
    runs = [(name, registry[name].params(**params), keys) for name, params, keys in before]
    runs += [(name, registry[name].for_run(plan, config), {}) for name in registry.pipeline_order()]
    runs += [(name, registry[name].params(**params), keys) for name, params, keys in after]
    recorded, ran = RecordedReads(), set()
    for method in LAKE_READS:
        monkeypatch.setattr(Lake, method, recorded.recording(method, getattr(Lake, method)))

    for name, params, keys in runs:
        if params is None or isinstance(params, str):   # a step `linkgraph run` skips (saying why)
            continue
        ctx = StepContext.create(spark, with_keys(config, keys))
        recorded.step = name
        ran.add(name)
        try:
            registry[name].run(ctx, params)
        finally:
            recorded.step = None
        recorded.written[name].update(table for table, _ in ctx.lake.commits)

    assert ran == set(registry.names()), "a step was not run: add its runs to runs_outside_the_pipeline"
    problems = []
    for step in registry:
        declared = {*step.tables_read(), *step.tables_written()}
        for what, tables in (("reads undeclared tables", recorded.read[step.name] - declared),
                             ("commits to tables not in its writes", recorded.written[step.name] - set(step.tables_written())),
                             ("never reads tables of its reads", set(step.tables_read()) - recorded.read[step.name])):
            if tables:
                problems.append(f"{step.name} {what}: {', '.join(sorted(tables))}")
    assert not problems, "\n".join(problems)
