"""The Databricks notebooks executed end to end against the sample lake, as plain Python with the
local ``dbutils`` stand-in, and the queries and figures they are made of."""

from __future__ import annotations

import math
import runpy
import shutil
import sys
from datetime import datetime
from pathlib import Path

import matplotlib
import matplotlib.text
import pandas as pd
import pytest
from pyspark.testing import assertDataFrameEqual

from linkgraph.explore import plots
from linkgraph.explore import queries as explore
from linkgraph.explore.widgets import LocalWidgets, WidgetError, widget_values
from linkgraph.lake import schemas as S
from linkgraph.sample import generate_sample_crawl

matplotlib.use("Agg")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_notebook(name: str, monkeypatch, **widgets: str) -> dict:
    """Execute ``notebooks/<name>`` as a script, its widgets given as ``--name value`` arguments;
    return the notebook's global variables."""
    arguments = [item for key, value in widgets.items() for item in (f"--{key}", str(value))]
    monkeypatch.setattr(sys, "argv", [str(NOTEBOOKS / name), *arguments])
    namespace = runpy.run_path(str(NOTEBOOKS / name), run_name="__main__")
    assert "dbutils" in namespace and type(namespace["dbutils"]).__name__ == "LocalDbutils"
    return namespace


def assert_pngs(directory: Path, names: set[str]) -> None:
    assert {p.name for p in directory.iterdir()} == {f"{n}.png" for n in names}
    for name in names:
        data = (directory / f"{name}.png").read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5_000, name


def test_run_pipeline_notebook_reruns_the_steps_and_draws_timings_and_rejects(spark, sample_lake, tmp_path, monkeypatch):
    edges, lake = sample_lake.edges, sample_lake.lake
    copy = tmp_path / "lake"
    shutil.copytree(lake, copy)

    def rows(table: str) -> int:
        return spark.read.format("delta").load(str(copy / table)).count()

    before = {t: rows(t) for t in (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE)}
    figures = tmp_path / "figures"
    # the lake's own input again (ingest only, to stay cheap): nothing may be added
    ns = run_notebook("01_run_pipeline.py", monkeypatch, lake=copy, input=edges, format="jsonl", steps="ingest",
                      figures=figures)
    assert list(ns["timings"]["step"]) == ["ingest"] and list(ns["timings"]["exit_code"]) == [0]
    assert {t: rows(t) for t in before} == before
    rejects = dict(zip(ns["rejects"]["reason"], ns["rejects"]["records"], strict=True))
    assert rejects == generate_sample_crawl().expected_rejects
    assert_pngs(figures, {"pipeline_steps", "rejects_by_reason"})


def test_run_pipeline_notebook_refuses_an_unknown_step(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown steps \\['rank'\\]"):
        run_notebook("01_run_pipeline.py", monkeypatch, lake=tmp_path / "lake", steps="ingest,rank",
                     figures=tmp_path / "figures")
    assert not (tmp_path / "lake").exists()


def test_explore_ranks_notebook_draws_distribution_convergence_and_tops(spark, sample_lake, tmp_path, monkeypatch):
    lake = sample_lake.lake
    figures = tmp_path / "figures"
    ns = run_notebook("02_explore_ranks.py", monkeypatch, lake=lake, figures=figures, top=5)
    pagerank = spark.read.format("delta").load(str(lake / S.PAGERANK_TABLE))
    run = spark.read.format("delta").load(str(lake / S.RANK_RUNS_TABLE)).first()

    assert ns["histogram"]["pages"].sum() == pagerank.count() == 272
    assert list(ns["history"]["iteration"]) == list(range(1, run["iterations"] + 1))
    assert ns["history"]["l1_change"].iloc[-1] < run["tol"] <= ns["history"]["l1_change"].iloc[-2]
    best = pagerank.orderBy(pagerank[S.RANK].desc()).first()
    assert (ns["pages"]["url"].iloc[0], ns["pages"]["rank"].iloc[0]) == (best[S.URL], best[S.RANK])
    assert len(ns["pages"]) == 5 and ns["pages"]["rank"].is_monotonic_decreasing
    assert len(ns["domains"]) == 5 and ns["domains"]["authority_score"].iloc[0] == 10.0
    assert_pngs(figures, {"rank_distribution", "convergence", "top_pages", "top_domains"})


def test_link_farm_review_notebook_draws_the_flagged_domain_subgraph(spark, sample_lake, tmp_path, monkeypatch):
    lake = sample_lake.lake
    figures = tmp_path / "figures"
    ns = run_notebook("03_link_farm_review.py", monkeypatch, lake=lake, figures=figures)
    farms = spark.read.format("delta").load(str(lake / S.LINK_FARMS_TABLE))
    networks = spark.read.format("delta").load(str(lake / S.SYNDICATION_NETWORKS_TABLE))
    flagged = dict(zip(ns["flagged"]["domain"], ns["flagged"]["role"], strict=True))
    assert farms.count() > 0 and networks.count() > 0     # the sample crawl has both
    for farm in farms.collect():   # a handful of rows
        assert flagged[farm[S.DOMAIN]] == explore.ROLE_LINK_FARM
        assert flagged[farm[S.TARGET_DOMAIN]] in (explore.ROLE_LINK_FARM, explore.ROLE_FARM_TARGET)
    assert {r[S.DOMAIN] for r in networks.collect()} <= set(flagged)
    assert len(ns["edges"]) > 0
    assert set(ns["edges"]["src_domain"]) | set(ns["edges"]["dst_domain"]) <= set(flagged)
    assert_pngs(figures, {"domain_subgraph"})


def test_link_farm_review_notebook_says_so_on_its_figure_when_nothing_is_flagged(spark, tmp_path, monkeypatch):
    figures = tmp_path / "figures"
    ns = run_notebook("03_link_farm_review.py", monkeypatch, lake=tmp_path / "empty-lake", figures=figures)
    assert ns["flagged"].empty and ns["edges"].empty
    assert "no link farms or syndication networks found" in ns["fig"].axes[0].texts[0].get_text()
    assert_pngs(figures, {"domain_subgraph"})


# --- the pieces --------------------------------------------------------------------------------

def test_rank_histogram_counts_pages_per_logarithmic_bin(spark):
    ranks = spark.createDataFrame(
        [(1, None, 0, 0.5, "r"), (2, None, 0, 0.05, "r"), (3, None, 0, 0.04, "r"), (4, None, 0, 0.0, "r"),
         (1, None, 1, 0.9, "r")],
        S.PAGERANK,
    )
    expected = spark.createDataFrame([(-2, 0.01, 0.1, 2), (-1, 0.1, 1.0, 1)],
                                     "bin int, bin_low double, bin_high double, pages long")
    assertDataFrameEqual(explore.rank_histogram(ranks, bins_per_decade=1), expected, checkRowOrder=True)
    assert explore.rank_histogram(ranks, bins_per_decade=10, vector_id=1).first()["bin"] == -1   # log10(0.9) = -0.046


def test_flagged_domains_gives_each_domain_its_strongest_role(spark):
    farms = spark.createDataFrame([("farm.example", "target.example", 19, 20, 0.95)], S.LINK_FARMS)
    networks = spark.createDataFrame(
        [("a.example", "a.example", 3, ["b.example"]), ("a.example", "b.example", 3, ["a.example", "target.example"]),
         ("a.example", "target.example", 3, ["b.example"]), ("a.example", "farm.example", 3, ["b.example"])],
        S.SYNDICATION_NETWORKS,
    )
    expected = spark.createDataFrame(
        [("farm.example", "link farm", "target.example", 19), ("target.example", "farm target", "target.example", 19),
         ("a.example", "syndication", "a.example", 3), ("b.example", "syndication", "a.example", 3)],
        "domain string, role string, group string, weight long",
    )
    assertDataFrameEqual(explore.flagged_domains(farms, networks), expected, checkRowOrder=True)
    assert explore.flagged_domains(farms, networks, max_domains=2).count() == 2


def test_convergence_history_is_the_latest_runs_iterations(spark):
    def run(run_id: str, started: datetime, l1s: list[float]) -> tuple:
        history = [(i + 1, l1, 0.1, 0.5, 1) for i, l1 in enumerate(l1s)]
        return (run_id, started, "fast", 0.85, 1e-3, 100, None, 1, False, None, 3, 4, 5, len(l1s), True, [len(l1s)],
                l1s[-1], 1.0, history)

    runs = spark.createDataFrame([run("old", datetime(2026, 1, 1), [0.5, 0.1, 1e-4]),
                                  run("new", datetime(2026, 2, 1), [0.4, 2e-4])], S.RANK_RUNS)
    got = explore.convergence_history(runs).toPandas()
    assert list(got["run_id"]) == ["new", "new"] and list(got["iteration"]) == [1, 2]
    assert list(got["l1_change"]) == [0.4, 2e-4]


def test_widgets_come_from_arguments_then_environment_then_defaults():
    values = widget_values(["--lake", "/data/lake", "--max-domains=12", "stray"],
                           {"LINKGRAPH_WIDGET_LAKE": "/env/lake", "LINKGRAPH_WIDGET_TOP": "7", "OTHER": "x"})
    assert values == {"lake": "/data/lake", "max_domains": "12", "top": "7"}
    widgets = LocalWidgets(values)
    widgets.text("lake", "lake")
    widgets.text("figures", "figures")
    widgets.dropdown("top", "20", ["7", "20"])
    assert widgets.getAll() == {"lake": "/data/lake", "figures": "figures", "top": "7"}
    with pytest.raises(WidgetError):
        widgets.get("conf")
    with pytest.raises(WidgetError):
        LocalWidgets({"top": "9"}).dropdown("top", "20", ["7", "20"])


def test_subgraph_layout_keeps_groups_together_and_draws_one_arrow_per_domain_link():
    position = plots.circle_layout(["a", "t", "b", "f"], ["g2", "g1", "g2", "g1"])
    order = sorted(position, key=lambda name: math.atan2(position[name][1], position[name][0]) % math.tau)
    assert order == ["f", "t", "a", "b"]
    nodes = pd.DataFrame({"domain": ["f", "t"], "role": ["link farm", "farm target"], "group": ["t", "t"]})
    edges = pd.DataFrame({"src_domain": ["f"], "dst_domain": ["t"], "links": [19], "followed_links": [19]})
    ax = plots.domain_subgraph_figure(nodes, edges).axes[0]
    assert len([t for t in ax.texts if isinstance(t, matplotlib.text.Annotation)]) == 1
    assert {t.get_text() for t in ax.texts} >= {"f", "t"}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["link farm (1)", "farm target (1)"]


def test_the_sample_input_goes_to_the_users_cache_not_a_fixed_tmp_path(tmp_path):
    """Notebook 01 writes the built-in sample under the user's cache directory (a place of the
    user's own, stable across re-runs), not under a fixed name in the shared temporary directory."""
    from linkgraph.explore.widgets import sample_input_dir

    assert sample_input_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "linkgraph" / "sample"
    assert sample_input_dir({}) == Path.home() / ".cache" / "linkgraph" / "sample"
    for notebook in NOTEBOOKS.glob("*.py"):
        source = notebook.read_text()
        assert "/tmp" not in source and "gettempdir" not in source, notebook.name
    assert "sample_input(sample_input_dir())" in (NOTEBOOKS / "01_run_pipeline.py").read_text()
