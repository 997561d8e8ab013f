"""Harmonic centrality with HyperBall against networkx's exact values, and the
``linkgraph centrality`` / ``linkgraph export`` commands on the sample lake: the Common Crawl
export imports back (``--format ccgraph``) as the same host graph, the BVGraph export reads back
with the project's decoder, the rank file with ``import-authority --format ccrank``."""

from __future__ import annotations

import gzip
import shutil

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from pyspark.sql import functions as F
from scipy.sparse.csgraph import shortest_path

from linkgraph.cli import main
from linkgraph.compress.webgraph import read_bvgraph, read_properties
from linkgraph.errors import HyperBallTooLarge, UsageError
from linkgraph.graph.levelgraph import NAME, NODE_ID, level_graph
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import ConfigError, config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.rank.counters import exact_limit, initial_registers
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import VERTEX, RankGraph
from linkgraph.rank.hyperball import (
    HyperBall,
    budget_block_nodes,
    node_bytes,
    relative_standard_error,
    single_block,
    task_bytes,
)
from linkgraph.rank.plan import centrality_cost
from linkgraph.steps import centrality
from steps_support import ingest_step


def _csr(graph: nx.DiGraph, n: int) -> tuple[np.ndarray, np.ndarray]:
    arcs = np.array(sorted(graph.edges()), dtype=np.int64).reshape(-1, 2)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(arcs[:, 0], minlength=n), out=indptr[1:])
    return indptr, arcs[:, 1].astype(np.int32)


def _check(estimated: np.ndarray, graph: nx.DiGraph, m: int) -> float:
    """Every node within 3 relative standard errors of the exact value; returns the worst error."""
    exact = nx.harmonic_centrality(graph)
    values = np.array([exact[i] for i in range(graph.number_of_nodes())])
    assert np.all(estimated[values == 0] == 0)
    relative = np.abs(estimated - values)[values > 0] / values[values > 0]
    assert relative.max() <= 3 * relative_standard_error(m), relative.max()
    return float(relative.max())


def _exact_harmonic(graph: nx.DiGraph, n: int) -> np.ndarray:
    """Σ_{y≠x} 1/d(y, x) from scipy's breadth-first distances (networkx's definition, faster)."""
    arcs = np.array(sorted(graph.edges()), dtype=np.int64).reshape(-1, 2)
    adjacency = sp.csr_matrix((np.ones(len(arcs)), (arcs[:, 0], arcs[:, 1])), shape=(n, n))
    with np.errstate(divide="ignore"):
        inverse = 1.0 / shortest_path(adjacency, unweighted=True)
    inverse[~np.isfinite(inverse)] = 0.0
    np.fill_diagonal(inverse, 0.0)
    return inverse.sum(axis=0)


def test_relative_standard_error_is_stated():
    assert relative_standard_error(256) == pytest.approx(0.065)
    assert relative_standard_error(1024) == pytest.approx(0.0325)
    with pytest.raises(ConfigError, match=r"centrality\.registers must be a power of 2"):
        config_from_dict({"centrality": {"registers": 300}})


@pytest.mark.parametrize(("n", "m"), [(1000, 256), (1000, 1024)])
def test_hyperball_in_memory_matches_exact_harmonic_centrality(n, m):
    graph = nx.gnm_random_graph(n, 3 * n, directed=True, seed=7)
    harmonic, steps, converged = single_block(*_csr(graph, n), n, m, 1000)
    assert converged and steps[-1].changed == 0
    _check(harmonic, graph, m)


def test_a_ball_whose_two_nodes_share_a_register_is_counted_exactly():
    """y -> x where y's register is x's and no higher: the registers of x's ball do not change, so
    HyperLogLog alone estimates |B_1(x)| = 1 and H(x) = 0; the exact small ball gives H(x) = 1."""
    m = 16
    regs = initial_registers(0, 200, m)
    x = 0
    y = next(i for i in range(1, 200) if np.array_equal(np.maximum(regs[x], regs[i]), regs[x]))
    graph = nx.DiGraph([(y, x)])
    graph.add_nodes_from(range(y + 1))
    harmonic, _, converged = single_block(*_csr(graph, y + 1), y + 1, m, 1000)
    assert converged and harmonic[x] == 1.0 and harmonic[y] == 0.0


def test_hyperball_on_a_sparse_5000_node_graph_is_within_three_standard_errors_everywhere():
    """The default register count on a graph of 5,000 nodes and 5,000 arcs, where most balls are
    tiny: every node within 3 × 1.04/√m of the exact value (before balls of up to
    exact_limit(m) members were counted exactly, 24 nodes were outside, several at 100%)."""
    n, m = 5000, config_from_dict({}).centrality.registers
    assert exact_limit(m) == 16
    graph = nx.gnm_random_graph(n, n, directed=True, seed=2)
    harmonic, _, converged = single_block(*_csr(graph, n), n, m, 1000)
    exact = _exact_harmonic(graph, n)
    assert converged and np.all(harmonic[exact == 0] == 0)
    relative = np.abs(harmonic - exact)[exact > 0] / exact[exact > 0]
    assert relative.max() <= 3 * relative_standard_error(m), relative.max()


def test_hyperball_block_exchange_matches_exact_harmonic_centrality(spark):
    """The distributed path: 3 blocks of 20 nodes, counters exchanged sparsely between them (the
    graph's longest shortest path is 6, so 7 iterations)."""
    n, m = 60, 256
    graph = nx.gnm_random_graph(n, 300, directed=True, seed=3)
    edges = spark.createDataFrame([(int(a), int(b)) for a, b in graph.edges()], "src long, dst long")
    result = HyperBall(spark, m, block_max_nodes=20, single_task=False, checkpoint_every=3).run(edges, n)
    assert result.converged and result.history[-1].changed == 0 and result.iterations == 7
    values = {r["node"]: r["harmonic"] for r in result.harmonic.collect()}
    estimated = np.array([values[i] for i in range(n)])
    _check(estimated, graph, m)
    # the same counters and arithmetic as the one-task path
    one_task, _, _ = single_block(*_csr(graph, n), n, m, 1000)
    np.testing.assert_allclose(estimated, one_task, rtol=1e-12)


def test_hyperball_blocks_are_sized_by_the_byte_budget_and_a_graph_over_it_is_refused_up_front(spark):
    """Blocks hold as many nodes as half the budget has room for (three copies of their
    counters); a graph whose block task needs more than the budget anyway (here: 10 links per node
    and a 16 KiB budget) is refused before any Spark job, with the bytes it would need."""
    m = 256
    assert node_bytes(m) == 256 + 8 * 16 + 4 + 1 + 8
    assert budget_block_nodes(m, 64 << 20, 1_000_000) == (64 << 20) // (2 * 3 * node_bytes(m))
    assert budget_block_nodes(m, 64 << 20, 1000) == 1000
    # at any size the default budget fits a graph of 10 links per node
    assert task_bytes(10**9, 10**10, m, budget_block_nodes(m, 64 << 20, 1_000_000)).total <= 64 << 20
    need = task_bytes(600, 6000, m, budget_block_nodes(m, 16 * 1024, 1_000_000))
    assert need.blocks == 100 and need.block_nodes == 6 and need.total > 16 * 1024
    edges = spark.createDataFrame([(i, (7 * i + j) % 600) for i in range(600) for j in range(10)], "src long, dst long")
    balls = HyperBall(spark, m, block_max_nodes=1_000_000, single_task=False, block_bytes=16 * 1024)
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup()
    with pytest.raises(HyperBallTooLarge, match=r"HyperBall over this graph \(600 nodes\) needs 32\.6 KiB per task "
                                                r"\(100 block\(s\) of 6 nodes.*over the block budget of 16\.0 KiB"):
        balls.run(edges, 600, arcs=6000)
    assert spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs
    assert issubclass(HyperBallTooLarge, UsageError)


def test_centrality_refuses_a_level_over_the_budget_and_names_the_level_that_fits(exported, tmp_path, capsys):
    """``rank.block_bytes`` set so that the sample's page graph (272 pages) is over the budget and
    its host graph is not: the command exits 2 with one line naming both."""
    work, lake = exported
    pages, links = lake.read(S.PAGES_TABLE).count(), lake.read(S.LINKS_TABLE).count()
    hosts, host_links = lake.read(S.HOSTS_TABLE).count(), lake.read(S.HOST_LINKS_TABLE).count()

    def need(budget: int, n: int, arcs: int) -> int:
        return task_bytes(n, arcs, 256, budget_block_nodes(256, budget, 1_000_000)).total

    budget = next(b for b in range(1024, 1 << 22, 256) if need(b, hosts, host_links) <= b < need(b, pages, links))
    conf = tmp_path / "budget.yaml"
    conf.write_text(f"rank:\n  block_bytes: {budget}\n")
    assert main(["centrality", "--level", "page", "--lake", str(work / "lake"), "--conf", str(conf)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"HyperBall over the page graph ({pages} nodes) needs" in line, line
    assert "(rank.block_bytes); refused before any iteration; the host level fits" in line, line


def test_centrality_refuses_a_run_over_the_shuffle_limit_and_names_the_level_that_fits(exported, tmp_path, capsys):
    """Blocks of 50 nodes: the sample's page graph (272 pages, 6 blocks) would ship its block states
    and merged counters every iteration, the host graph (one block) nothing; with
    ``centrality.max_shuffle_bytes`` between the two the page level is refused before any
    iteration, with what it would need, and the host level named as fitting."""
    work, lake = exported
    pages, links = lake.read(S.PAGES_TABLE).count(), lake.read(S.LINKS_TABLE).count()
    page_cost = centrality_cost(pages, links, 256, 50, 64 << 20)
    assert page_cost.blocks == 6 and page_cost.shuffle_bytes > 1 << 20
    conf = tmp_path / "shuffle.yaml"
    conf.write_text("centrality:\n  block_max_nodes: 50\n  max_shuffle_bytes: 1048576\n")
    assert main(["centrality", "--level", "page", "--lake", str(work / "lake"), "--conf", str(conf)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"HyperBall over the page graph ({pages:,} nodes," in line, line
    assert "6 blocks" in line and "over 80 iterations" in line and "core-hours" in line, line
    assert "over centrality.max_shuffle_bytes (1.0 MiB); refused before any iteration; the host level fits" in line


@pytest.fixture(scope="module")
def exported(spark, sample_lake, tmp_path_factory):
    work = tmp_path_factory.mktemp("export")
    lake_dir = work / "lake"
    shutil.copytree(sample_lake.lake, lake_dir)
    assert main(["centrality", "--level", "host", "--lake", str(lake_dir)]) == 0
    for fmt in ("ccgraph", "webgraph"):
        assert main(["export", "--level", "host", "--format", fmt, "--output", str(work / fmt),
                     "--lake", str(lake_dir)]) == 0
    return work, Lake(spark, config_from_dict({"lake": {"path": str(lake_dir)}}).lake)


def _host_graph(lake: Lake) -> tuple[set[str], set[tuple[str, str]]]:
    hosts = {r[0] for r in lake.read(S.HOSTS_TABLE).select(S.REV_HOST).collect()}
    links = {(r[0], r[1]) for r in lake.read(S.HOST_LINKS_TABLE).select(S.SRC_HOST, S.DST_HOST).collect()}
    return hosts, links


def test_host_centrality_table(exported):
    _, lake = exported
    table = lake.read(S.HOST_CENTRALITY_TABLE)
    assert table.columns == [f.name for f in S.HOST_CENTRALITY.fields]
    hosts, _ = _host_graph(lake)
    rows = table.collect()
    assert {r[S.REV_HOST] for r in rows} == hosts
    assert sorted(r[S.RANK] for r in rows) == list(range(1, len(rows) + 1))
    best = min(rows, key=lambda r: r[S.RANK])
    assert best[S.HARMONIC] == max(r[S.HARMONIC] for r in rows)
    assert sum(r[S.PAGERANK_VALUE] for r in rows) == pytest.approx(1.0, abs=1e-6)
    run = lake.read(S.CENTRALITY_RUNS_TABLE).first()
    assert run["level"] == "host" and run["registers"] == 256 and run["converged"]
    assert run[S.ITERATIONS] == len(run["history"]) == rows[0][S.ITERATIONS]


def test_ccgraph_export_imports_back_as_the_same_host_graph(spark, exported, tmp_path):
    work, lake = exported
    hosts, links = _host_graph(lake)
    with gzip.open(work / "ccgraph" / "vertices.txt.gz", "rt") as f:
        vertices = [line.rstrip("\n").split("\t") for line in f]
    assert [int(v[0]) for v in vertices] == list(range(len(hosts)))
    assert [v[1] for v in vertices] == sorted(hosts)  # ids in reversed-host order
    config = config_from_dict({"lake": {"path": str(tmp_path / "imported")}})
    ingest_step(spark, config, str(work / "ccgraph"), "ccgraph")
    imported = Lake(spark, config.lake)
    pages = {r[S.PAGE_ID]: r[S.URL_KEY].rstrip("/") for r in imported.read(S.PAGES_TABLE).collect()}
    assert set(pages.values()) == hosts
    assert {(pages[r[0]], pages[r[1]]) for r in imported.read(S.LINKS_TABLE).select(S.SRC_ID, S.DST_ID).collect()} \
        == links


def test_webgraph_export_reads_back_with_the_decoder(exported):
    work, lake = exported
    hosts, links = _host_graph(lake)
    names = sorted(hosts)
    indptr, successors = read_bvgraph(work / "webgraph" / "host")
    assert int(read_properties(work / "webgraph" / "host")["nodes"]) == len(names)
    decoded = {(names[u], names[int(v)]) for u in range(len(names)) for v in successors[indptr[u]:indptr[u + 1]]}
    assert decoded == links


def test_rank_file_has_common_crawl_columns_and_imports(spark, exported):
    work, lake = exported
    with gzip.open(work / "ccgraph" / "ranks.txt.gz", "rt") as f:
        lines = [line.rstrip("\n").split("\t") for line in f]
    assert lines[0] == ["#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev"]
    table = {r[S.REV_HOST]: r for r in lake.read(S.HOST_CENTRALITY_TABLE).collect()}
    assert [int(line[0]) for line in lines[1:]] == list(range(1, len(table) + 1))
    for pos, value, pr_pos, pr_value, host in lines[1:]:
        row = table[host]
        assert (int(pos), int(pr_pos)) == (row[S.RANK], row[S.PAGERANK_RANK])
        assert (float(value), float(pr_value)) == (row[S.HARMONIC], row[S.PAGERANK_VALUE])
    assert main(["import-authority", "--input", str(work / "ccgraph" / "ranks.txt.gz"), "--format", "ccrank",
                 "--lake", str(work / "lake")]) == 0
    top = lake.read(S.EXTERNAL_AUTHORITY_TABLE).where(F.col(S.AUTHORITY) == 1.0).first()
    assert top is not None and top[S.DOMAIN] == lines[1][4]


@pytest.mark.parametrize(("argv", "fragment"), [
    (["export", "--level", "page", "--format", "ccgraph", "--output", "{tmp}/out"], "argument --level: invalid choice"),
    (["export", "--level", "host", "--format", "csv", "--output", "{tmp}/out"], "argument --format: invalid choice"),
    (["export", "--level", "host", "--format", "ccgraph"], "the following arguments are required: --output"),
    (["centrality", "--level", "site"], "argument --level: invalid choice"),
    (["centrality", "--level", "host", "--registers", "100"], "centrality.registers must be a power of 2"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, argv, fragment):
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main([*args, "--lake", str(tmp_path / "lake")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err


def test_explore_notebook_plots_pagerank_against_harmonic_centrality(exported, tmp_path, monkeypatch):
    import runpy
    import sys
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    work, lake = exported
    notebook = Path(__file__).resolve().parents[1] / "notebooks" / "02_explore_ranks.py"
    figures = tmp_path / "figures"
    monkeypatch.setattr(sys, "argv", [str(notebook), "--lake", str(work / "lake"), "--figures", str(figures),
                                      "--top", "5"])
    ns = runpy.run_path(str(notebook), run_name="__main__")
    hosts = ns["hosts"]
    best = lake.read(S.HOST_CENTRALITY_TABLE).orderBy(S.PAGERANK_RANK).first()
    assert len(hosts) == 5 and hosts["host"].iloc[0] == best[S.REV_HOST]
    assert hosts["pagerank"].is_monotonic_decreasing
    data = (figures / "centrality_spam.png").read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5_000


def test_export_text_is_sorted_in_parallel_and_concatenated_in_key_order(spark, tmp_path):
    """Four range partitions sorted by their own tasks, written as gzip members and concatenated
    in name order: one gzip file, header first, every line in key order."""
    from linkgraph.lake.config import config_from_dict as make_config
    from linkgraph.lake.context import StepContext
    from linkgraph.steps.export import _write_text

    keys = [(int(a), int(b)) for a, b in np.random.default_rng(3).integers(0, 50, size=(400, 2))]
    lines = spark.createDataFrame([(a, b, f"{a}\t{b}") for a, b in keys], "_k1 long, _k2 long, value string")
    ctx = StepContext.create(spark, make_config({"lake": {"path": str(tmp_path / "lake")}}))
    target = tmp_path / "edges.txt.gz"
    _write_text(ctx, lines.repartition(4), str(target), header="#src\tdst")
    with gzip.open(target, "rt") as handle:
        written = handle.read().splitlines()
    assert written[0] == "#src\tdst"
    assert written[1:] == [f"{a}\t{b}" for a, b in sorted(keys)]
    assert not (tmp_path / "edges.txt.gz.parts").exists()
    with open(target, "rb") as handle:   # several gzip members, one per sorted partition
        assert handle.read().count(b"\x1f\x8b\x08") >= 2


# the host graph of the weighted PageRank test: (source, target, page links, linking pages);
# `com.e` links nowhere (its rank is spread as networkx spreads a dangling node's)
WEIGHTED_HOST_LINKS = [("com.a", "com.b", 10, 2), ("com.a", "com.c", 1, 1), ("com.b", "com.c", 3, 3),
                       ("com.c", "com.a", 2, 1), ("com.c", "com.e", 4, 2), ("com.d", "com.a", 5, 5),
                       ("com.d", "com.c", 1, 1)]


@pytest.fixture(scope="module")
def weighted_hosts(spark, tmp_path_factory):
    """A lake holding only ``hosts`` and ``host_links`` of the five hosts above."""
    work = tmp_path_factory.mktemp("weighted")
    config = config_from_dict({"lake": {"path": str(work / "lake")}, "rank": {"tol": 1e-10}})
    lake = Lake(spark, config.lake)
    hosts = sorted({h for s, d, _, _ in WEIGHTED_HOST_LINKS for h in (s, d)})
    T.HOSTS.overwrite(lake, spark.createDataFrame([(h, h, 1, 0, 0, 0, 0, 0, 0) for h in hosts], S.HOSTS))
    T.HOST_LINKS.overwrite(lake, spark.createDataFrame(
        [(s, d, links, links, pages, pages, 1) for s, d, links, pages in WEIGHTED_HOST_LINKS], S.HOST_LINKS))
    return config, lake


def _networkx_pagerank(nodes, index: int | None) -> dict[str, float]:
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_weighted_edges_from((e[0], e[1], 1 if index is None else e[index]) for e in WEIGHTED_HOST_LINKS)
    return nx.pagerank(graph, alpha=0.85, weight="weight", tol=1e-14, max_iter=1000)


@pytest.mark.parametrize(("weight", "index"), [("none", None), ("links", 2), ("pages", 3)])
def test_host_graph_weighted_by_links_or_pages_ranks_as_networkx(spark, weighted_hosts, weight, index):
    """``level_graph(..., weight)``: a host's rank split in proportion to its page links or linking
    pages to each host (networkx's weighted PageRank, which normalises by the weighted
    out-degree); ``none``: each linked pair once."""
    _, lake = weighted_hosts
    graph = level_graph(lake.read(S.HOSTS_TABLE), lake.read(S.HOST_LINKS_TABLE), "host", weight)
    result = BlockEngine(spark, RankParams(tol=1e-12, max_iter=1000)).run(
        RankGraph(vertices=None, edges=graph.edges, n=graph.n))
    names = {r[NODE_ID]: r[NAME] for r in graph.vertices.collect()}
    got = {names[r[VERTEX]]: r[S.RANK] for r in result.ranks.collect()}
    assert got == pytest.approx(_networkx_pagerank(names.values(), index), abs=1e-8)
    # the weights move rank: com.b gets 10 of com.a's 11 links but 2 of its 3 linking pages
    if index is not None:
        assert abs(got["com.b"] - _networkx_pagerank(names.values(), None)["com.b"]) > 0.01


def test_centrality_weight_flag_reaches_the_host_pagerank(spark, weighted_hosts):
    """``Params(weight="links")`` (``--weight links``) gives the links-weighted PageRank column."""
    config, lake = weighted_hosts
    report = centrality.run(StepContext.create(spark, config), centrality.Params(level="host", weight="links"))
    assert "level=host weight=links nodes=5" in report.summary()
    got = {r[S.REV_HOST]: r[S.PAGERANK_VALUE] for r in lake.read(S.HOST_CENTRALITY_TABLE).collect()}
    assert got == pytest.approx(_networkx_pagerank(got, 2), abs=1e-8)


def test_a_weight_on_the_page_graph_is_refused_with_exit_2(weighted_hosts, capsys):
    config, lake = weighted_hosts
    assert main(["centrality", "--level", "page", "--weight", "links", "--lake", config.lake.path]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "the page graph has no edge weights" in line, line
    with pytest.raises(ConfigError, match="centrality.weight must be one of none, links, pages"):
        config_from_dict({"centrality": {"weight": "hosts"}})
