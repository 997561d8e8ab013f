"""``linkgraph diff``: two rank runs compared, node by node, with the correlations scipy gives.

The runs are written as the rank steps leave them (``pagerank`` and ``host_centrality`` replaced by
each run, the earlier run reachable by time travel), with scores chosen by hand: ties, a node only
the earlier run holds, one only the later run holds, and a swap across the top K.
"""

from __future__ import annotations

import re

import pytest
from pyspark.testing import assertDataFrameEqual
from scipy import stats

from linkgraph.cli import main as cli_main
from linkgraph.errors import UsageError
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config, LakeConfig
from linkgraph.lake.context import StepContext
from linkgraph.rank.changes import CHANGES
from linkgraph.steps import diff
from test_notebooks import run_notebook

# (url, score) of two page-level runs; page ids are the position in this list + 1
BEFORE = {"https://a.example/": 0.30, "https://b.example/": 0.25, "https://c.example/": 0.20,
          "https://d.example/": 0.10, "https://e.example/": 0.10, "https://gone.example/": 0.05}
AFTER = {"https://a.example/": 0.22, "https://b.example/": 0.28, "https://c.example/": 0.12,
         "https://d.example/": 0.18, "https://e.example/": 0.10, "https://new.example/": 0.10}
PAGE_IDS = {url: i + 1 for i, url in enumerate([*BEFORE, "https://new.example/"])}


def _write_pagerank(spark, lake, run_id: str, scores: dict[str, float]) -> None:
    rows = [(PAGE_IDS[url], url, 0, score, run_id) for url, score in scores.items()]
    rows += [(PAGE_IDS[url], url, 1, 1.0 - score, run_id) for url, score in scores.items()]  # a second vector
    T.PAGERANK.overwrite(lake, spark.createDataFrame(rows, S.PAGERANK))


@pytest.fixture(scope="module")
def two_runs(spark, tmp_path_factory):
    """A lake whose ``pagerank`` held run r1, then r2 (and ``host_centrality`` h1 then h2)."""
    root = tmp_path_factory.mktemp("diff") / "lake"
    config = Config(lake=LakeConfig(path=str(root)))
    ctx = StepContext.create(spark, config)
    _write_pagerank(spark, ctx.lake, "20261201T000000-00000001", BEFORE)
    _write_pagerank(spark, ctx.lake, "20261202T000000-00000002", AFTER)
    for run_id, values in (("20261201T000000-0000000a", {"com.example.a": 0.6, "com.example.b": 0.4}),
                           ("20261202T000000-0000000b", {"com.example.a": 0.3, "com.example.b": 0.5,
                                                         "org.example.c": 0.2})):
        ranked = sorted(values, key=lambda host: -values[host])
        T.HOST_CENTRALITY.overwrite(ctx.lake, spark.createDataFrame(
            [(host, 1.0, 1 + ranked.index(host), score, 1 + ranked.index(host), 3, run_id)
             for host, score in values.items()], S.HOST_CENTRALITY))
    return config


def _diff(spark, config, **params) -> diff.DiffReport:
    return diff.run(StepContext.create(spark, config), diff.Params(**params))


@pytest.fixture(scope="module")
def page_diff(spark, two_runs):
    """``linkgraph diff`` of the two page-level runs with K = 2, and the ``rank_changes`` it wrote."""
    report = _diff(spark, two_runs, top=2)
    return report, spark.read.format("delta").load(f"{two_runs.lake.path}/rank_changes").collect()


def _positions(scores: dict[str, float]) -> dict[str, int]:
    ordered = sorted(scores, key=lambda url: (-scores[url], url))
    return {url: i + 1 for i, url in enumerate(ordered)}


def test_page_runs_compared_node_by_node(spark, page_diff):
    """Every node of either run, with both positions (ties by URL) and its kind of change."""
    report, written = page_diff
    assert (report.from_run, report.to_run) == ("20261201T000000-00000001", "20261202T000000-00000002")
    before, after = _positions(BEFORE), _positions(AFTER)
    # before: a b c d e gone; after: b a d c e new (d before e and e before new: ties by URL).
    # With K = 2, a and b swap inside the top; e keeps the 5th position.
    expected = {
        "https://a.example/": "moved", "https://b.example/": "moved", "https://c.example/": "moved",
        "https://d.example/": "moved", "https://e.example/": "unchanged", "https://gone.example/": "vanished",
        "https://new.example/": "new",
    }
    assert before["https://e.example/"] == after["https://e.example/"] == 5
    rows = []
    for url, change in expected.items():
        b, a = before.get(url), after.get(url)
        rows.append((url, PAGE_IDS[url], BEFORE.get(url), AFTER.get(url), b, a,
                     None if a is None or b is None else b - a, change, "page", "pagerank",
                     report.from_run, report.to_run))
    assertDataFrameEqual(written, spark.createDataFrame(rows, S.RANK_CHANGES))
    assert report.counts is not None
    assert report.counts.by_change == {c: sum(1 for v in expected.values() if v == c) for c in CHANGES}
    assert report.counts.top_k_overlap == 1.0


def test_correlations_are_scipys_on_the_common_nodes(page_diff):
    """Spearman's rho and Kendall's tau-b (ties averaged) over the pages both runs rank."""
    report, _ = page_diff
    common = [url for url in BEFORE if url in AFTER]
    x, y = [BEFORE[u] for u in common], [AFTER[u] for u in common]
    assert report.correlations is not None
    assert report.correlations.common == len(common)
    assert report.correlations.spearman == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert report.correlations.kendall == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert report.correlations.kendall_nodes == len(common)


def test_the_cli_prints_the_figures_and_names_the_runs(spark, two_runs, capsys):
    """``linkgraph diff --level page --from R1 --to R2 --top 3`` prints the counts and both
    correlations; with K = 3, d (4th -> 3rd) enters the top 3 and c (3rd -> 4th) leaves it."""
    code = cli_main(["diff", "--lake", two_runs.lake.path, "--level", "page", "--from", "20261201T000000-00000001",
                     "--to", "20261202T000000-00000002", "--top", "3"])
    assert code == 0
    out = capsys.readouterr().out
    common = [url for url in BEFORE if url in AFTER]
    x, y = [BEFORE[u] for u in common], [AFTER[u] for u in common]
    assert re.search(r"new=1 vanished=1 entered=1 left=1 moved=2 unchanged=1 top_3_overlap=0\.6667", out), out
    assert f"spearman={stats.spearmanr(x, y).statistic:.6f}" in out
    assert f"kendall_tau={stats.kendalltau(x, y).statistic:.6f}" in out
    table = spark.read.format("delta").load(f"{two_runs.lake.path}/rank_changes")
    changes = {row[S.NODE]: row[S.CHANGE] for row in table.collect()}
    assert (changes["https://d.example/"], changes["https://c.example/"]) == ("entered", "left")


def test_host_runs(spark, two_runs):
    """``--level host`` compares the centrality runs' PageRank of hosts."""
    host = _diff(spark, two_runs, level="host")
    assert (host.from_run, host.to_run) == ("20261201T000000-0000000a", "20261202T000000-0000000b")
    table = spark.read.format("delta").load(f"{two_runs.lake.path}/rank_changes")
    changes = {row[S.NODE]: (row[S.CHANGE], row[S.FROM_POSITION], row[S.TO_POSITION]) for row in table.collect()}
    assert changes == {"com.example.a": ("moved", 1, 2), "com.example.b": ("moved", 2, 1),
                       "org.example.c": ("new", None, 3)}


def test_a_run_the_table_no_longer_holds_is_refused_with_the_runs_it_holds(spark, two_runs):
    with pytest.raises(UsageError, match="runs it still holds, newest first: 20261202T000000-00000002, "
                                         "20261201T000000-00000001"):
        _diff(spark, two_runs, from_run="20261101T000000-deadbeef")


def test_the_explore_notebook_plots_the_last_comparison(spark, two_runs, tmp_path, monkeypatch):
    """notebooks/02_explore_ranks.py draws positions before against after and the counts per kind
    of change from ``rank_changes``, as the last comparison wrote it."""
    report = _diff(spark, two_runs, top=2)
    figures = tmp_path / "figures"
    ns = run_notebook("02_explore_ranks.py", monkeypatch, lake=two_runs.lake.path, figures=figures, top=5)
    counts = ns["change_counts"]
    assert dict(zip(counts["change"], counts["nodes"], strict=True)) == {
        change: n for change, n in report.counts.by_change.items() if n}
    assert len(ns["changes_top"]) == 7 and ns["changes_top"]["node"].iloc[0] == "https://a.example/"
    data = (figures / "rank_changes.png").read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 5_000
