"""docs/tables.md, rendered from the table declarations: what the page says about each table (a
:class:`TableDoc`, the ``doc`` of its declaration in ``linkgraph.lake.tables``), its parts
(:data:`GROUPS`), its text about no one table (:data:`TABLES_INTRO`) and the rendering.

``linkgraph pipeline --emit tables-doc --output docs/tables.md`` writes the page
(``linkgraph.deploy.render_tables_doc``, which adds "written by" from the steps' ``writes``).  Column
types and whether a column may be null come from the schemas, the write rule from the declaration's
``Merge``, the rest from the :class:`TableDoc`.  The ``TableDoc`` of each table is in
``linkgraph.lake.tabledocs_core`` (core, ranking, scores and frontier, reward tables) or
``linkgraph.lake.tabledocs_graph`` (analysis, page flags, compressed links, centrality).  Text is
Markdown; a multi-line text is indented like a docstring (rendered dedented), a one-line text is a
cell of a Markdown table (no ``|``).  No pyspark is imported here: the CLI imports this module, and
the declarations reach it from the steps of the registry.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from linkgraph.lake.names import COMPRESSION_BUILD_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql.types import ArrayType, DataType, StructField, StructType

    from linkgraph.lake.tables import Table

TABLES_DOC = "docs/tables.md"
TABLES_DOC_COMMAND = f"linkgraph pipeline --emit tables-doc --output {TABLES_DOC}"


@dataclass(frozen=True)
class TableDoc:
    """The documentation of one table: its overview row, its section and the meaning of every column.

    ``columns`` maps each column of the table's schema (and of ``added``) to a one-line meaning;
    whether the column may be null is the schema's, rendered after the meaning ("; not null").
    ``writers`` says how a step writes the table when that needs saying (step name -> "fast
    engine"); the steps themselves are those whose ``writes`` name the table.  Tables with the same
    ``section`` heading share one section (same ``about`` and ``notes``, columns of the same
    positions shown side by side: ``target_ids`` / ``source_ids``)."""

    row: str                                    # what one row is, for the overview ("canonical URL")
    about: str                                  # the section's text above the columns
    columns: Mapping[str, str]                  # column -> meaning, every column of the schema
    notes: str = ""                             # the section's text below the columns
    writers: Mapping[str, str] = field(default_factory=dict)   # step -> how it writes the table
    write: str = ""                             # said after the write rule in the overview
    unique: tuple[str, ...] = ()                # columns unique besides the keys
    section: str = ""                           # the heading of a section shared with other tables
    added: StructType | None = None             # columns a later step adds (flags' spam columns)
    added_about: str = ""                       # when and by whom ``added`` is added


@dataclass(frozen=True)
class Group:
    """A part of docs/tables.md: its heading and text, and its tables in the order it shows them.

    ``shared`` columns, which every table of the group has, are shown once below the group's text
    and stand as one row named ``shared_label`` in each table's columns."""

    title: str
    about: str
    tables: tuple[str, ...]
    shared: tuple[str, ...] = ()
    shared_label: str = ""


GROUPS = (
    Group("Core tables", "", ("pages", "links", "rejects", "page_signals", "sitemaps", "external_authority")),
    Group("Ranking tables", "Ranking in detail: [ranking](ranking.md).",
          ("pagerank", "rank_runs", "rank_state", "rank_changes")),
    Group("Analysis tables", """
        Written by `analyze`, each replaced in one commit that records its inputs. Semantics:
        [pipeline](pipeline.md#analyze). No row holds more than `analysis.max_list_entries` (65,536) array
        entries.""",
          ("forward_index", "reverse_index", "anchor_index", "hosts", "domains", "host_links", "domain_links",
           "domain_authority", "link_farms", "syndication_networks")),
    Group("Decision tables", "", ("page_flags", "seed_scores", "frontier")),
    Group("Reward tables", """
        Written by `linkgraph reward` (and by `linkgraph run` when `reward.in_run` asks for it). Rules:
        [ranking](ranking.md).""", ("reward_scores", "reward_runs", "feeds", "pruned_pages", "step_runs")),
    Group("Compressed link tables", """
        Written by `compress`, each replaced in one commit; one block (or chunk) per data file, so a
        single-page lookup reads one file per table. The graph's vertices are not page ids but positions
        0..m−1 of the m pages with a link, in `url_key` order; `links_compressed_order` maps between the
        two. Format in detail: [compression](compression.md).

        Every row of the four tables also carries the build columns, equal in every row of one build:""",
          ("links_compressed_forward", "links_compressed_reverse", "links_compressed_offsets",
           "links_compressed_order"), shared=COMPRESSION_BUILD_COLUMNS, shared_label="build columns"),
    Group("Centrality tables", """
        Written by `linkgraph centrality --level host|domain|page`. Algorithm: [ranking](ranking.md).""",
          ("host_centrality", "domain_centrality", "page_centrality", "centrality_runs")),
)


# The page's text about no one table; @@...@@ is rendered from the declarations (RETENTION below).
TABLES_INTRO = f"""# Tables

<!-- Rendered from the table declarations by `{TABLES_DOC_COMMAND}`: edit
lib/linkgraph/lake/tables.py and lib/linkgraph/lake/tabledocs*.py, then run it again. -->

Every table linkgraph writes is a Delta table at `<lake>/<name>`, or `[catalog.]schema.<name>`
when `lake.schema` is set. Each table is one declaration in `lib/linkgraph/lake/tables.py` (a `Table`:
name, schema, keys, write rule, retention and its documentation, kept in
`lib/linkgraph/lake/tabledocs_core.py` and `tabledocs_graph.py`; `TABLES` lists them all), and steps
write only through it; this page is rendered from the declarations. Schemas are Spark `StructType`s
in `lib/linkgraph/lake/schemas.py`; the types below are theirs, and "not null" ends the meaning of a
column the schema declares non-nullable. Timestamps are UTC; ids are `long`. Read a table with Spark:

```python
spark.read.format("delta").load("lake/links").show()
```

What each step reads and writes, and when: [pipeline](pipeline.md). How a write survives crashes
and concurrent jobs: [reliability](reliability.md).

**How a table is written** (the "write" column below):

| write | meaning |
|---|---|
@@WRITE_RULES@@

A `run_id` is a step's run id, such as `20261130T012200-1a2b3c4d`: its UTC start time and a random
suffix, so run ids sort by start time. `analyze`, `flags`, `scores` and `compress` record what a
table was built from in the user metadata of its commit (visible in `DESCRIBE HISTORY`). While a
command runs, the lake directory also holds `_checkpoints` (removed when the command ends; see
`spark.checkpoint_dir`).

@@RETENTION@@

## Overview

| table | one row per | key | written by | write |
|---|---|---|---|---|
@@OVERVIEW@@

`linkgraph pagerank --personalization TABLE` reads a table you provide (`page_id`, `weight`[,
`vector_id`]); see [ranking](ranking.md)."""


# The retention paragraph of TABLES_INTRO: @@...@@ are the tables of each ``Retention``.
RETENTION = (
    "**Retention.** The per-run tables, @@PER_RUN@@ (one row per page per run), keep the newest "
    "`retention.runs` runs (default 3) and the runs listed in `retention.pinned_runs`: the commit that writes a "
    "run also deletes the older ones, so a table holds at most `retention.runs` runs plus the pinned ones, and a "
    "write killed midway leaves the previous version, old runs and all. Runs are ordered by run id (start time, "
    "to the second). The run logs (@@RUN_LOGS@@: a row or a few per run) keep every run; the other tables hold "
    "the latest build or are merged. See [configuration](configuration.md#retention).")


def doc_type(data_type: DataType) -> str:
    """A Spark type as the page writes it: ``long``, ``int``, ``array<string>``; a struct is
    ``struct`` (the column's meaning names its fields)."""
    name = data_type.typeName()
    if name == "array":
        return f"array<{doc_type(cast('ArrayType', data_type).elementType)}>"
    return {"integer": "int"}.get(name, name)


def anchor(heading: str) -> str:
    """The anchor the docs site (Python-Markdown's ``toc``) gives an ASCII heading."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


def heading(table: Table) -> str:
    """The heading of the section that shows ``table``."""
    return table.doc.section or table.name


def _code(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _overview_row(table: Table, written_by: str) -> str:
    doc = table.doc
    keys = _code(table.keys) + (f" ({_code(doc.unique)} unique)" if doc.unique else "")
    write = f"{table.merge.label} {doc.write}".strip()
    return f"| [{table.name}](#{anchor(heading(table))}) | {doc.row} | {keys} | {written_by} | {write} |"


def _intro(tables: list[Table], written_by: Callable[[Table], str]) -> str:
    """The page up to its first group: the write rules of the tables' ``Merge``, the per-run tables
    and run logs by their ``Retention``, one overview row per table."""
    rules = dict.fromkeys(rule for table in tables for rule in type(table.merge))
    runs, logs = ([t.name for t in tables if t.retention.name == kind] for kind in ("RUNS", "LOG"))
    retention = RETENTION.replace("@@PER_RUN@@", " and ".join(f"`{name}`" for name in runs))
    retention = textwrap.fill(retention.replace("@@RUN_LOGS@@", _code(logs)), width=100, break_long_words=False,
                              break_on_hyphens=False)
    return (TABLES_INTRO.replace("@@WRITE_RULES@@", "\n".join(f"| {r.label} | {r.meaning} |" for r in rules))
            .replace("@@RETENTION@@", retention)
            .replace("@@OVERVIEW@@", "\n".join(_overview_row(table, written_by(table)) for table in tables)))


def _cell(values: list[str]) -> str:
    """The cell of one column of tables shown side by side: their value, or their values joined by `` / ``."""
    return values[0] if len(set(values)) == 1 else " / ".join(values)


def _column_row(tables: list[Table], fields: list[StructField]) -> str:
    """The row of the columns ``fields``: one per table of ``tables``, at the same position."""
    meaning = _cell([table.doc.columns[f.name] for table, f in zip(tables, fields, strict=True)])
    not_null = "" if any(f.nullable for f in fields) else "; not null"
    return (f"| {_cell([f'`{f.name}`' for f in fields])} | {_cell([f'`{doc_type(f.dataType)}`' for f in fields])} "
            f"| {meaning}{not_null} |")


def _columns(tables: list[Table], positions: list[list[StructField]], shared: Group | None = None) -> str:
    """The column table of ``tables`` (``positions``: their fields, position by position); the
    columns of the ``shared`` group stand as one row."""
    rows = ["| column | type | meaning |", "|---|---|---|"]
    for fields in positions:
        if shared is None or fields[0].name not in shared.shared:
            rows.append(_column_row(tables, fields))
        elif not rows[-1].startswith(f"| {shared.shared_label} |"):
            rows.append(f"| {shared.shared_label} | | see above |")
    return "\n".join(rows)


def _section(tables: list[Table], group: Group) -> str:
    """The section of ``tables``: one table, or several of the same shape sharing a heading."""
    first = tables[0]
    doc = first.doc
    about = inspect.cleandoc(doc.about)
    if first.cluster_by:
        about += f"\nClustered by {_code(first.cluster_by)} (liquid clustering, deletion vectors on)."
    positions = [list(fields) for fields in zip(*(t.schema.fields for t in tables), strict=True)]
    parts = [f"### {heading(first)}", about, _columns(tables, positions, group if group.shared else None)]
    if doc.added is not None:
        added = [[f] for f in doc.added.fields if f.name not in first.schema.fieldNames()]
        parts += [inspect.cleandoc(doc.added_about), _columns([first], added)]
    if doc.notes:
        parts.append(inspect.cleandoc(doc.notes))
    return "\n\n".join(parts)


def _group(group: Group, tables: Mapping[str, Table]) -> str:
    """A part of the page: its heading and text, its shared columns, its tables' sections."""
    parts = [f"## {group.title}"] + ([inspect.cleandoc(group.about)] if group.about else [])
    members = [tables[name] for name in group.tables]
    if group.shared:
        parts.append(_columns(members[:1], [[f] for f in members[0].schema.fields if f.name in group.shared]))
    sections: dict[str, list[Table]] = {}
    for table in members:
        sections.setdefault(heading(table), []).append(table)
    parts += [_section(section, group) for section in sections.values()]
    return "\n\n".join(parts)


def render_tables_page(tables: Mapping[str, Table], written_by: Callable[[Table], str]) -> str:
    """docs/tables.md: the tables of :data:`GROUPS` in its order, from their declarations in ``tables``
    (by name); ``written_by`` gives a table's "written by" cell."""
    missing = [name for group in GROUPS for name in group.tables if name not in tables]
    if missing:
        raise ValueError(f"{TABLES_DOC} shows tables that are not declared: {', '.join(missing)}")
    ordered = [tables[name] for group in GROUPS for name in group.tables]
    return "\n\n".join([_intro(ordered, written_by), *(_group(group, tables) for group in GROUPS)]) + "\n"
