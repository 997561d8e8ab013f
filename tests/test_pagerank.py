"""PageRank engines against hand-worked values, networkx and properties."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from conftest import shared_file
from linkgraph.cli import main
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.delta import Lake
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import RankGraph
from linkgraph.rank.naive import naive_pagerank
from linkgraph.steps import pagerank
from linkgraph.steps.rank_state import DeltaStateStore
from steps_support import pagerank_step


def rank_graph(spark, n, edges):
    df = spark.createDataFrame(sorted(set(edges)), "src long, dst long")
    return RankGraph(vertices=None, edges=df, n=n, n_edges=len(set(edges)))


def teleport_df(spark, vectors):
    rows = [(k, v, w) for k, vec in enumerate(vectors) for v, w in vec.items()]
    return spark.createDataFrame(rows, "vector_id int, vertex long, weight double")


def as_matrix(result, n, k=1):
    out = np.zeros((k, n))
    for row in result.ranks.collect():
        out[row.vector_id, row.vertex] = row["rank"]
    return out


def power_iteration(n, edges, d=0.85, tol=1e-6, max_iter=100, v=None):
    """The documented semantics, in plain numpy (uniform start, L1 stop)."""
    edges = sorted(set(edges))
    out = np.zeros(n)
    for a, _ in edges:
        out[a] += 1
    v = np.full(n, 1.0 / n) if v is None else v
    r = np.full(n, 1.0 / n)
    for it in range(1, max_iter + 1):
        new = np.zeros(n)
        for a, b in edges:
            new[b] += r[a] / out[a]
        new = d * (new + r[out == 0].sum() * v) + (1 - d) * v
        l1, r = np.abs(new - r).sum(), new
        if l1 < tol:
            return r, it
    return r, max_iter


# A -> B, A -> C, B -> C; C is dangling.  Solving
#   rA = .05 + .85·rC/3,  rB = .05 + .85·(rA/2 + rC/3),  rC = .05 + .85·(rA/2 + rB + rC/3)
# by hand gives the values below.
HAND_EDGES = [(0, 1), (0, 2), (1, 2)]
HAND_RANKS = [0.1975796, 0.2815510, 0.5208694]


@pytest.mark.parametrize("blocks", [1, 2])
def test_block_engine_matches_hand_worked_ranks(spark, blocks):
    result = BlockEngine(spark, RankParams(tol=1e-12, blocks=blocks)).run(rank_graph(spark, 3, HAND_EDGES))
    got = as_matrix(result, 3)[0]
    assert result.converged
    assert np.allclose(got, HAND_RANKS, atol=1e-7)
    assert got.sum() == pytest.approx(1.0, abs=1e-12)
    assert [h.iteration for h in result.history] == list(range(1, result.iterations + 1))


def test_naive_engine_matches_hand_worked_ranks(spark):
    result = naive_pagerank(rank_graph(spark, 3, HAND_EDGES), RankParams(tol=1e-12))
    assert np.allclose(as_matrix(result, 3)[0], HAND_RANKS, atol=1e-7)


def test_same_iterations_as_reference_and_cap_reports_not_converged(spark):
    rng = np.random.default_rng(3)
    n = 40
    edges = [(int(a), int(b)) for a, b in rng.integers(0, n, size=(150, 2)) if a != b and a < 30]
    reference, iterations = power_iteration(n, edges)
    result = BlockEngine(spark, RankParams(blocks=3)).run(rank_graph(spark, n, edges))
    assert result.iterations == iterations and result.converged
    assert np.abs(as_matrix(result, n)[0] - reference).max() < 1e-12

    capped = BlockEngine(spark, RankParams(max_iter=5, blocks=2)).run(rank_graph(spark, n, edges))
    assert capped.iterations == 5 and not capped.converged
    assert np.abs(as_matrix(capped, n)[0] - power_iteration(n, edges, max_iter=5)[0]).max() < 1e-12


def test_personalised_vectors_in_one_pass_match_networkx(spark):
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (4, 0)]
    n = 5
    vectors = [{0: 1.0}, {3: 1.0, 4: 3.0}, {v: 1.0 for v in range(n)}]
    result = BlockEngine(spark, RankParams(tol=1e-12, blocks=2)).run(
        rank_graph(spark, n, edges), teleport_df(spark, [{k: w / sum(vec.values()) for k, w in vec.items()} for vec in vectors]),
        n_vectors=3,
    )
    got = as_matrix(result, n, 3)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    for k, vec in enumerate(vectors):
        expected = nx.pagerank(graph, alpha=0.85, personalization=vec, tol=1e-14, max_iter=1000)
        assert np.abs(got[k] - [expected[i] for i in range(n)]).max() < 1e-9, k
    assert len(result.vector_iterations) == 3 and result.converged


small_graphs = st.integers(min_value=2, max_value=12).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))
)


@pytest.mark.slow
@settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=small_graphs, seed=st.integers(0, 1000))
def test_properties_sum_to_one_non_negative_relabel_invariant(spark, graph, seed):
    n, edges = graph
    edges = [(a, b) for a, b in edges if a != b]
    result = as_matrix(BlockEngine(spark, RankParams(tol=1e-12, blocks=2)).run(rank_graph(spark, n, edges)), n)[0]
    assert result.sum() == pytest.approx(1.0, abs=1e-9)
    assert (result >= 0).all()
    perm = np.random.default_rng(seed).permutation(n)
    relabelled = as_matrix(
        BlockEngine(spark, RankParams(tol=1e-12, blocks=1)).run(rank_graph(spark, n, [(int(perm[a]), int(perm[b])) for a, b in edges])), n
    )[0]
    assert np.abs(relabelled[perm] - result).max() < 1e-9


def test_rank_state_is_kept_per_run_and_a_finished_run_clears_only_its_own(spark, tmp_path):
    """Two runs (a uniform and a personalised one) checkpointing into one lake: neither
    overwrites nor clears the other's state; a finished run also drops state older than a day."""
    from datetime import datetime, timedelta

    from linkgraph.steps import rank_state

    lake = Lake(spark, config_from_dict({"lake": {"path": str(tmp_path / "lake")}}).lake)
    blocks = spark.createDataFrame([(0, b"\x00" * 8), (1, b"\x01" * 8)], "block int, ranks binary")
    uniform, personal = (DeltaStateStore(lake, "rank_state", key) for key in ("uniform", "personal"))
    uniform.save(10, blocks, [True], [10])
    personal.save(20, blocks, [True, False], [20, 7])
    uniform.save(30, blocks, [True], [30])    # replaces its own rows only
    assert uniform.load(2)[0] == 30 and personal.load(2)[0] == 20
    assert lake.read("rank_state").count() == 4

    stale = blocks.select(F.lit("killed-long-ago").alias("run_key"), F.lit(5).alias("iteration"),
                          F.lit(b"\x01").alias("active"), F.array(F.lit(5)).alias("vector_iterations"), "block", "ranks",
                          F.lit(datetime.utcnow() - timedelta(days=2)).cast("timestamp").alias("saved_at"))
    lake.append("rank_state", stale)
    uniform.clear()
    assert uniform.load(2) is None
    assert personal.load(2)[0] == 20
    assert {r.run_key for r in lake.read("rank_state").collect()} == {"personal"}
    assert rank_state.STALE_STATE_AFTER == timedelta(days=1)


@pytest.mark.drill
def test_killed_run_resumes_from_checkpoint_with_same_ranks(spark, tmp_path):
    rng = np.random.default_rng(5)
    n = 60
    edges = [(int(a), int(b)) for a, b in rng.integers(0, n, size=(200, 2)) if a != b]
    graph = rank_graph(spark, n, edges)
    params = RankParams(tol=1e-14, max_iter=40, blocks=2, checkpoint_every=10)
    uninterrupted = as_matrix(BlockEngine(spark, params).run(graph), n)[0]

    lake = Lake(spark, config_from_dict({"lake": {"path": str(tmp_path / "lake")}}).lake)
    store = DeltaStateStore(lake, "rank_state", "run-1")

    class Killed(Exception):
        pass

    def kill_after_21(stat):
        if stat.iteration == 21:
            raise Killed

    with pytest.raises(Killed):
        BlockEngine(spark, params).run(graph, state=store, progress=kill_after_21)
    resumed = BlockEngine(spark, params).run(graph, state=store)
    assert resumed.resumed_from == 20
    assert resumed.history[0].iteration == 21
    assert np.abs(as_matrix(resumed, n)[0] - uninterrupted).max() < 1e-15


@pytest.mark.slow
def test_hollins_pagerank_matches_networkx_and_records_run(spark, hollins_lake, capsys):
    config, _ = hollins_lake
    lake = Lake(spark, config.lake)
    assert main(["pagerank", "--lake", config.lake.path, "--tol", "1e-6"]) == 0
    assert "converged" in capsys.readouterr().out

    pages = [r.page_id for r in lake.read(S.PAGES_TABLE).select(S.PAGE_ID).collect()]
    links = [(r.src_id, r.dst_id) for r in lake.read(S.LINKS_TABLE).select(S.SRC_ID, S.DST_ID).collect()]
    graph = nx.DiGraph()
    graph.add_nodes_from(pages)
    graph.add_edges_from(links)
    expected = nx.pagerank(graph, alpha=0.85, tol=1e-12, max_iter=1000)
    got = {r.page_id: r["rank"] for r in lake.read(S.PAGERANK_TABLE).collect()}
    assert len(got) == len(pages)
    # L1 change < 1e-6 at the stop bounds every rank's distance to the fixed point well below 1e-6
    assert max(abs(got[p] - expected[p]) for p in pages) < 1e-6

    run = lake.read(S.RANK_RUNS_TABLE).orderBy(F.desc("started_at")).first()
    assert run.converged and run.engine == "fast" and run.graph_version == lake.version(S.LINKS_TABLE)
    assert run.iterations == len(run.history) and run.history[-1].l1_change < 1e-6
    assert run.pages == len(pages)


@pytest.mark.slow
def test_topic_vectors_and_empty_vector_error(spark, hollins_lake, capsys):
    config, _ = hollins_lake
    report = pagerank_step(spark, config, pagerank.Params(topic=["admissions", "library,books"]))
    assert report.converged and report.vectors == 2
    lake = Lake(spark, config.lake)
    sums = {r.vector_id: r.total for r in lake.read(S.PAGERANK_TABLE).groupBy(S.VECTOR_ID).agg(F.sum(S.RANK).alias("total")).collect()}
    assert sums.keys() == {0, 1} and all(abs(t - 1) < 1e-9 for t in sums.values())

    code = main(["pagerank", "--lake", config.lake.path, "--topic", "zzzunmatchedterm"])
    assert code == 2
    assert "matches no page: zzzunmatchedterm" in capsys.readouterr().err


def test_graphframes_engine_without_its_jar_stops_with_a_clear_error(spark, tmp_path, capsys):
    from linkgraph.rank.gf import GraphFramesUnavailable, graphframes_pagerank

    if spark._jvm.org.graphframes.GraphFrame.__class__.__name__ == "JavaClass":
        pytest.skip("GraphFrames JVM package present: the engine runs")
    with pytest.raises(GraphFramesUnavailable, match="GraphFrames JVM package not available"):
        graphframes_pagerank(rank_graph(spark, 3, HAND_EDGES), RankParams())


def test_warm_start_from_converged_ranks_saves_iterations(spark):
    rng = np.random.default_rng(9)
    n = 50
    edges = [(int(a), int(b)) for a, b in rng.integers(0, n, size=(180, 2)) if a != b]
    graph = rank_graph(spark, n, edges)
    params = RankParams(tol=1e-10, blocks=2)
    cold = BlockEngine(spark, params).run(graph)
    cold_ranks = as_matrix(cold, n)[0]
    warm = BlockEngine(spark, params).run(graph, initial=cold.ranks)
    assert warm.converged and warm.iterations == 1
    assert np.abs(as_matrix(warm, n)[0] - cold_ranks).max() < 1e-10
    # a previous run that knew only the first 40 pages: the others start at 1/n, then renormalised
    partial = BlockEngine(spark, params).run(graph, initial=cold.ranks.where("vertex < 40"))
    assert partial.converged
    assert np.abs(as_matrix(partial, n)[0] - cold_ranks).max() < 1e-9


@pytest.mark.slow
def test_cnr_2000_single_task_solve_matches_scipy(spark):
    """The whole real graph (325,557 pages, 3,216,152 links) in one block, solved in one task."""
    import pandas as pd
    from scipy.sparse import csr_matrix

    path = shared_file("cnr-2000/cnr-2000.arcs.tsv.gz")
    arcs = pd.read_csv(path, sep="\t", header=None, names=["src", "dst"], comment="#", dtype="int64")
    arcs = arcs.drop_duplicates().reset_index(drop=True)
    n = int(max(arcs["src"].max(), arcs["dst"].max())) + 1
    out = np.bincount(arcs["src"], minlength=n).astype(float)
    matrix = csr_matrix((1.0 / out[arcs["src"]], (arcs["dst"], arcs["src"])), shape=(n, n))
    dangling, v, r = out == 0, np.full(n, 1.0 / n), np.full(n, 1.0 / n)
    for iteration in range(1, 1000):
        new = 0.85 * (matrix @ r + r[dangling].sum() * v) + 0.15 * v
        l1, r = np.abs(new - r).sum(), new
        if l1 < 1e-6:
            expected_iterations = iteration
            break
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    try:
        graph = RankGraph(vertices=None, edges=spark.createDataFrame(arcs), n=n, n_edges=len(arcs))
        result = BlockEngine(spark, RankParams(tol=1e-6, max_iter=1000)).run(graph)
        got = result.ranks.toPandas().sort_values("vertex")["rank"].to_numpy()
    finally:
        spark.conf.unset("spark.sql.execution.arrow.pyspark.enabled")
    assert result.converged and result.iterations == expected_iterations
    assert [h.iteration for h in result.history] == list(range(1, expected_iterations + 1))
    assert np.abs(got - r).max() < 1e-12


@pytest.mark.slow
def test_polblogs_pagerank_matches_networkx(spark, polblogs_lake):
    config = polblogs_lake
    report = pagerank_step(spark, config)
    assert report.converged
    lake = Lake(spark, config.lake)
    graph = nx.DiGraph()
    graph.add_nodes_from(r.page_id for r in lake.read(S.PAGES_TABLE).select(S.PAGE_ID).collect())
    graph.add_edges_from((r.src_id, r.dst_id) for r in lake.read(S.LINKS_TABLE).select(S.SRC_ID, S.DST_ID).collect())
    expected = nx.pagerank(graph, alpha=0.85, tol=1e-12, max_iter=1000)
    got = {r.page_id: r["rank"] for r in lake.read(S.PAGERANK_TABLE).collect()}
    assert got.keys() == expected.keys()
    assert max(abs(got[p] - expected[p]) for p in got) < 1e-6


def host_graph(n_hosts=40, pages=15, seed=11):
    """Pages grouped by host (consecutive ids), most links inside the host, and one hub page
    (vertex 3) that a quarter of all pages link to; the last host's pages are dangling."""
    rng = np.random.default_rng(seed)
    n = n_hosts * pages
    edges = set()
    for v in range(n - pages):
        host = v // pages
        for _ in range(4):
            edges.add((v, host * pages + int(rng.integers(pages))))
        edges.add((v, int(rng.integers(n))))
        if rng.random() < 0.25:
            edges.add((v, 3))
    return n, [(a, b) for a, b in sorted(edges) if a != b]


def test_forced_block_counts_give_identical_ranks(spark):
    n, edges = host_graph()
    graph = rank_graph(spark, n, edges)
    reference = power_iteration(n, edges, tol=1e-300, max_iter=4)[0]
    ranks = {}
    for blocks, single_task in ((1, True), (3, False), (8, False)):
        result = BlockEngine(spark, RankParams(tol=1e-300, max_iter=4, blocks=blocks, single_task=single_task)).run(graph)
        assert result.blocks == blocks and result.iterations == 4
        ranks[blocks] = as_matrix(result, n)[0]
    assert np.abs(ranks[1] - reference).max() < 1e-12
    assert np.abs(ranks[3] - ranks[1]).max() <= 1e-12
    assert np.abs(ranks[8] - ranks[1]).max() <= 1e-12


def test_lineage_cut_checkpoints_compressed_ranks_only_and_keeps_the_ranks(spark):
    """B = 3, a lineage cut every 2 of 5 iterations: the ranks are the power iteration's, and
    what is checkpointed is the rank blocks alone, zstd-compressed (a record holds no partial
    sum and unpacks to the ranks' exact bytes)."""
    from linkgraph.rank.codec import pack_rank_record, unpack_rank_record

    n, edges = host_graph()
    graph = rank_graph(spark, n, edges)
    result = BlockEngine(spark, RankParams(tol=1e-300, max_iter=5, blocks=3, single_task=False, lineage_every=2,
                                           checkpoint_every=0)).run(graph)
    assert result.iterations == 5
    assert np.abs(as_matrix(result, n)[0] - power_iteration(n, edges, tol=1e-300, max_iter=5)[0]).max() < 1e-12
    ranks = np.full((2, 5000), 1.0 / 7e5) * (1 + np.random.default_rng(0).random(5000) * 1e-3)
    packed = pack_rank_record(("R", ranks.tobytes(), None, None))
    assert packed[0] == "Z" and len(packed[1]) < 0.8 * ranks.nbytes
    assert unpack_rank_record(packed)[1] == ranks.tobytes()


def _tasks_run(spark, group: str) -> int:
    """Tasks completed by the jobs of ``group`` (a stage shared by several jobs counted once)."""
    tracker = spark.sparkContext.statusTracker()
    stages = {s for job in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(job).stageIds}
    return sum(info.numCompletedTasks for info in map(tracker.getStageInfo, stages) if info is not None)


def test_an_iteration_is_one_stage_of_one_task_per_block(spark):
    """Distributed, B = 3, no lineage checkpoint: three more iterations run exactly 3 × B more
    tasks (one stage of one task per block per iteration; no stage that only reads the shuffle
    back), and the ranks are those of the power iteration."""
    n, edges = host_graph()
    graph = rank_graph(spark, n, edges)
    tasks = {}
    for max_iter in (3, 6):
        group = f"linkgraph-test-iteration-stages-{max_iter}"
        spark.sparkContext.setJobGroup(group, "tasks per iteration")
        try:
            result = BlockEngine(spark, RankParams(tol=1e-300, max_iter=max_iter, blocks=3, single_task=False,
                                                   lineage_every=0, checkpoint_every=0)).run(graph)
            ranks = as_matrix(result, n)[0]
        finally:
            for key in ("spark.jobGroup.id", "spark.job.description"):
                spark.sparkContext.setLocalProperty(key, None)
        assert result.blocks == 3 and result.iterations == max_iter
        assert np.abs(ranks - power_iteration(n, edges, tol=1e-300, max_iter=max_iter)[0]).max() < 1e-12
        tasks[max_iter] = _tasks_run(spark, group)
    assert tasks[6] - tasks[3] == 3 * 3, tasks


def test_byte_budget_cuts_blocks_and_bounds_every_value(spark):
    n, edges = host_graph(n_hosts=10, pages=10)
    graph = rank_graph(spark, n, edges)
    budget = 1024  # bytes: the hub's in-links and every source block's links are cut to fit
    result = BlockEngine(spark, RankParams(tol=1e-300, max_iter=3, block_bytes=budget)).run(graph)
    assert result.blocks >= math.ceil((12 * len(edges) + 16 * n) / budget)
    assert 0 < result.max_value_bytes <= budget
    assert np.abs(as_matrix(result, n)[0] - power_iteration(n, edges, tol=1e-300, max_iter=3)[0]).max() < 1e-12


def test_plan_by_bytes_one_task_identity_blocks_and_default_parallelism():
    from linkgraph.rank.blocks import plan_blocks

    fits = plan_blocks(1000, 5000, RankParams(block_bytes=12 * 5000 + 8 * 1000), 1, cores=2)
    assert fits.single_task and fits.starts == (0, 1000)
    # one byte less: distributed, at least 3 blocks per core, ranges covering every vertex once
    plan = plan_blocks(1000, 5000, RankParams(block_bytes=12 * 5000 + 8 * 1000 - 1), 1, cores=2,
                       bucket_links=np.full(1000, 5))
    assert not plan.single_task and plan.n_blocks >= 6
    assert plan.starts[0] == 0 and plan.starts[-1] == 1000 and all(np.diff(plan.starts) > 0)
    forced = plan_blocks(10, 40, RankParams(blocks=4), 1, cores=2, bucket_links=np.array([40] + [0] * 9))
    assert forced.n_blocks == 4 and forced.starts == (0, 1, 2, 3, 10)


def test_graphframes_engine_matches_fast_engine(spark):
    """Without dangling pages GraphFrames' PageRank (ranks summing to n, start 1) is ours times n,
    iteration for iteration."""
    from linkgraph.rank.gf import graphframes_pagerank

    if spark._jvm.org.graphframes.GraphFrame.__class__.__name__ != "JavaClass":
        pytest.skip("no GraphFrames jar in this session (spark.graphframes_jar; the suite uses "
                    "../shared/graphframes/graphframes-core-*.jar when present)")
    n, edges = 30, [(v, (v + 1) % 30) for v in range(30)] + [(v, (3 * v + 7) % 30) for v in range(0, 30, 2)] + [(5, 0)]
    graph = rank_graph(spark, n, edges)
    params = RankParams(tol=1e-300, max_iter=15)
    fast = as_matrix(BlockEngine(spark, params).run(graph), n)[0]
    gf = as_matrix(graphframes_pagerank(graph, params), n)[0]
    assert np.abs(gf - fast).max() < 1e-12
    assert np.abs(fast - power_iteration(n, edges, tol=1e-300, max_iter=15)[0]).max() < 1e-12


def test_partial_entries_are_distinct_source_block_destination_page_pairs(spark):
    """Blocks {0, 1} and {2, 3} (equal link bytes): 0→2 and 1→2 leave one source block for the
    same page, so they are one partial entry per iteration; 2→0 and 3→0 likewise."""
    edges = [(0, 2), (1, 2), (0, 3), (2, 0), (3, 0), (3, 1)]
    result = BlockEngine(spark, RankParams(tol=1e-300, max_iter=3, blocks=2, single_task=False)).run(
        rank_graph(spark, 4, edges))
    assert result.blocks == 2 and result.iterations == 3
    assert result.exchange_rows == 4
    assert np.abs(as_matrix(result, 4)[0] - power_iteration(4, edges, tol=1e-300, max_iter=3)[0]).max() < 1e-12


def test_rank_params_come_from_every_field_of_the_rank_config():
    """One way from config to an engine: every ``RankParams`` field is the ``rank`` key of its
    name (centrality once left out ``block_bytes``, analyze four of them)."""
    import dataclasses

    config = config_from_dict({"rank": {"damping": 0.8, "tol": 1e-3, "max_iter": 7, "blocks": 3,
                                        "block_max_vertices": 11, "checkpoint_every": 4, "single_task": False,
                                        "block_bytes": 4096, "lineage_every": 5}})
    params = RankParams.from_config(config.rank)
    assert {f.name: getattr(params, f.name) for f in dataclasses.fields(RankParams)} == {
        "damping": 0.8, "tol": 1e-3, "max_iter": 7, "blocks": 3, "block_max_vertices": 11, "checkpoint_every": 4,
        "single_task": False, "block_bytes": 4096, "lineage_every": 5}
    assert RankParams.from_config(config.rank, max_iter=2).max_iter == 2


@pytest.mark.slow
def test_params_given_to_run_are_honoured_and_tol_is_refused_where_it_does_not_apply(spark, tmp_path):
    """``pagerank.run(ctx, Params(tol=…, max_iter=…))`` — the idiom of tests and benches — means
    what the flags mean; ``--tol`` with the graphframes engine (a fixed iteration count) is a
    usage error, whether the engine comes from the flag or the config."""
    from linkgraph.errors import UsageError
    from linkgraph.lake.context import StepContext

    edges = tmp_path / "edges.jsonl"
    edges.write_text("".join(
        f'{{"from_url": "http://a{i % 7}.example.com/", "to_url": "http://a{(i * 3 + 1) % 7}.example.com/p{i}"}}\n'
        for i in range(30)))
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    from steps_support import ingest_step
    ingest_step(spark, config, str(edges), "jsonl")
    loose = pagerank_step(spark, config, pagerank.Params(tol=1e-3))
    capped = pagerank_step(spark, config, pagerank.Params(max_iter=1))
    strict = pagerank_step(spark, config, pagerank.Params())
    assert loose.converged and strict.converged and not capped.converged
    assert capped.iterations == 1 < loose.iterations < strict.iterations
    assert strict.final_l1 < 1e-6 and 1e-6 <= loose.final_l1 < 1e-3
    with pytest.raises(UsageError, match="--tol does not apply to the graphframes engine"):
        pagerank_step(spark, config, pagerank.Params(engine="graphframes", tol=1e-3))
    graphframes = config_from_dict({"lake": {"path": str(tmp_path / "lake")}, "rank": {"engine": "graphframes"}})
    with pytest.raises(UsageError, match="--tol does not apply"):
        pagerank.run(StepContext.create(spark, graphframes), pagerank.Params(tol=1e-3))
