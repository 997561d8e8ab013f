"""Table declarations (``linkgraph.lake.tables``): one per table, the steps write through them, and the
per-run tables keep the last ``retention.runs`` runs."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from linkgraph.errors import ConfigError
from linkgraph.lake import names as N
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import RetentionConfig, config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.steps import flags, scores
from linkgraph.steps.registry import Registry
from steps_support import ingest_step

STEPS = Path(T.__file__).parents[1] / "steps"


def test_every_table_name_has_one_declaration_with_its_name_unchanged():
    constants = {value for module in (S, N) for name, value in vars(module).items()
                 if name.endswith("_TABLE") and isinstance(value, str)}
    assert set(T.TABLES) == constants
    for name, table in T.TABLES.items():
        assert table.name == name == str(table)
        assert T.declaration(name) is table
        columns = {f.name for f in table.schema.fields}
        assert set(table.keys) <= columns and set(table.cluster_by) <= columns, name
        assert (table.merge is T.Merge.REPLACE_RUN) == (table.retention is T.Retention.RUNS), name
    assert {t.name for t in T.TABLES.values() if t.retention is T.Retention.RUNS} == {"page_flags", "seed_scores"}
    with pytest.raises(KeyError, match="no table 'nope'"):
        T.declaration("nope")


def test_a_write_by_another_rule_than_the_declared_one_is_refused():
    with pytest.raises(TypeError, match="page_flags.*REPLACE_RUN, not OVERWRITE"):
        T.PAGE_FLAGS.overwrite(None, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pagerank.*OVERWRITE, not APPEND"):
        T.PAGERANK.append(None, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="frontier.*replaced"):
        T.FRONTIER.delete_matching(None, None)  # type: ignore[arg-type]


def test_steps_write_only_through_the_declarations_and_declare_them():
    direct = re.compile(r"\blake\.(overwrite|append|merge|delete_matching|ensure)\(")
    modules = sorted(STEPS.glob("*.py"))
    assert {"ingest.py", "pagerank.py", "rank_state.py"} <= {m.name for m in modules}, STEPS
    for module in modules:
        assert not direct.search(module.read_text()), f"{module.name} writes through Lake"
    for step in Registry.default():
        for table in (*step.reads, *step.writes):
            assert isinstance(table, T.Table), (step.name, table)
            assert T.TABLES[table.name] is table


def test_no_step_runs_another_step():
    step_modules = {m.stem for m in STEPS.glob("*.py") if re.search(r"^STEP = ", m.read_text(), re.M)}
    assert {"ingest", "pagerank", "reward"} <= step_modules, STEPS
    for module in sorted(STEPS.glob("*.py")):
        imported = set(re.findall(r"^from linkgraph\.steps(?: import |\.)(\w+)", module.read_text(), re.M))
        assert not imported & step_modules, f"{module.name} imports the step(s) {imported & step_modules}"
    order = Registry.default().pipeline_order()
    assert order.index("flags") < order.index("scores")


@pytest.mark.parametrize(("stored", "runs", "pinned", "dropped"), [
    (["r1", "r2", "r3"], 2, [], ["r1", "r2"]),      # r4 written: r3 and r4 stay
    (["r1", "r2", "r3"], 2, ["r1"], ["r2"]),         # a pinned run stays whatever its age
    (["r1", "r4"], 1, [], ["r1"]),                   # rewriting r4: itself kept
    (["r5"], 1, [], []),                             # an older run written alongside a newer: both kept
    ([], 3, [], []),
])
def test_runs_beyond_keeps_the_newest_and_the_pinned(stored, runs, pinned, dropped):
    assert T.runs_beyond(stored, "r4", RetentionConfig(runs=runs, pinned_runs=pinned)) == dropped


def test_retention_runs_is_checked_and_loaded():
    assert config_from_dict({"retention": {"runs": 2, "pinned_runs": ["a"]}}).retention == RetentionConfig(2, ["a"])
    with pytest.raises(ConfigError, match=r"retention\.runs must be >= 1"):
        config_from_dict({"retention": {"runs": 0}})


def _rank_run(lake: Lake, spark, run_id: str) -> None:
    """A hand-built ``pagerank`` of run ``run_id``: every page ranked by its id."""
    ranks = lake.read(S.PAGES_TABLE).select(S.PAGE_ID, S.URL, F.lit(0).alias(S.VECTOR_ID),
                                            (F.col(S.PAGE_ID) + 1.0).alias(S.RANK), F.lit(run_id).alias(S.RUN_ID))
    T.PAGERANK.overwrite(lake, ranks.select(*[F.col(f.name).cast(f.dataType) for f in S.PAGERANK.fields]))


def _runs(lake: Lake, table: str) -> set[str]:
    return {r[S.RUN_ID] for r in lake.read(table).select(S.RUN_ID).distinct().collect()}


@pytest.mark.e2e
def test_per_run_tables_keep_the_last_retention_runs_runs(spark, tmp_path):
    """Five runs with ``retention.runs: 2``: the first two and the last by the steps themselves,
    the two between written as the steps write them; the last run's commit drops the older ones."""
    edges = [("a.com/", "a.com/x"), ("a.com/x", "b.org/"), ("b.org/", "a.com/"), ("b.org/", "b.org/y")]
    (tmp_path / "edges.jsonl").write_text("".join(
        json.dumps({"from_url": f"http://{s}", "to_url": f"http://{t}"}) + "\n" for s, t in edges))
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}, "retention": {"runs": 2},
                               "scores": {"seeds": ["http://a.com/"]}})
    ingest_step(spark, config, str(tmp_path / "edges.jsonl"), "jsonl")
    lake = Lake(spark, config.lake)
    T.LINK_FARMS.overwrite(lake, spark.createDataFrame([], S.LINK_FARMS))   # what flags reads of analyze
    ctx = StepContext.create(spark, config)

    def steps_run(i: int) -> None:
        _rank_run(lake, spark, f"20261201T00000{i}-rank")
        flags_report = flags.run(ctx.next_step(), flags.Params())
        assert flags_report.pages == 4 and not flags_report.up_to_date
        report = scores.run(dataclasses.replace(ctx.next_step(), run_id=f"20261201T00000{i}-scores"), scores.Params())
        assert report.pages == 4 and report.flags_run == f"20261201T00000{i}-rank"

    for i in (0, 1):
        steps_run(i)
    for table, kind in ((T.PAGE_FLAGS, "rank"), (T.SEED_SCORES, "scores")):
        written = lake.read(table.name).where(F.col(S.RUN_ID) == f"20261201T000001-{kind}")
        rows = spark.createDataFrame(written.collect(), written.schema)   # 4 rows, read before the table changes
        for i in (2, 3):
            run_id = f"20261201T00000{i}-{kind}"
            table.replace_run(lake, rows.withColumn(S.RUN_ID, F.lit(run_id)), run_id, "test", config.retention)
    steps_run(4)
    assert _runs(lake, S.PAGE_FLAGS_TABLE) == {"20261201T000003-rank", "20261201T000004-rank"}
    assert _runs(lake, S.SEED_SCORES_TABLE) == {"20261201T000003-scores", "20261201T000004-scores"}
    assert lake.read(S.PAGE_FLAGS_TABLE).count() == lake.read(S.SEED_SCORES_TABLE).count() == 8
    # one commit per run: the old runs went in the commits that wrote the new ones
    assert lake.delta_table(S.PAGE_FLAGS_TABLE).history().count() == 5
    # a re-run of the same inputs writes nothing; a pinned run stays when a newer one is written
    assert flags.run(ctx.next_step(), flags.Params()).up_to_date
    kept = lake.read(S.PAGE_FLAGS_TABLE).where(F.col(S.RUN_ID) == "20261201T000004-rank")
    newer = spark.createDataFrame(kept.collect(), kept.schema).withColumn(S.RUN_ID, F.lit("20261201T000005-rank"))
    pinned = RetentionConfig(runs=1, pinned_runs=["20261201T000003-rank"])
    assert T.PAGE_FLAGS.replace_run(lake, newer, "20261201T000005-rank", "test", pinned) == ["20261201T000004-rank"]
    assert _runs(lake, S.PAGE_FLAGS_TABLE) == {"20261201T000003-rank", "20261201T000005-rank"}


DOC_WRITE = {T.Merge.MERGE: "MERGE", T.Merge.INSERT_ONLY: "insert-only", T.Merge.OVERWRITE: "replace",
             T.Merge.REPLACE_RUN: "replace run", T.Merge.APPEND: "append", T.Merge.REPLACE_SOURCE: "replace the source"}


def test_the_tables_page_lists_each_declaration_with_its_keys_and_write_rule():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "tables.md").read_text()
    rows = re.findall(r"^\| \[(\w+)\]\(#[\w-]+\) \| [^|]+ \| ([^|]+) \| [^|]+ \| ([^|]+) \|$", doc, re.M)
    assert {name for name, _, _ in rows} == set(T.TABLES)
    for name, keys, write in rows:
        declared = T.TABLES[name]
        assert set(re.findall(r"`(\w+)`", keys.split("(")[0])) - {S.URL} == set(declared.keys) - {S.URL}, name
        assert write.strip().startswith(DOC_WRITE[declared.merge]), (name, write)
