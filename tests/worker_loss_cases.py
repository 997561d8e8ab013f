"""The iterative steps the worker-loss tier runs on a standalone cluster (``worker_loss_driver.py``)
and, undisturbed, in the tests' local session: each on a tiny hand-made graph, each with a
``progress`` hook the driver pauses in, at ``PAUSE_AT[case]``, while the test kills an executor.

Every case returns its result as sorted tuples (floats compared within ``TOLERANCE[case]``).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from linkgraph.graph.domains import connected_components
from linkgraph.graph.scoring import frontier_search
from linkgraph.lake import schemas as S
from linkgraph.rank import reward as R
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import RankGraph
from linkgraph.rank.hyperball import HyperBall

Progress = Callable[[int], None]

N = 30
CHAIN_END = 6
# a chain 0 → 1 → … → 6 (so searches and label propagation take several rounds) and random links
CHAIN = [(i, i + 1) for i in range(CHAIN_END)]
_rng = random.Random(36)
EDGES = sorted(set(CHAIN) | {(_rng.randrange(CHAIN_END + 1, N), _rng.randrange(N)) for _ in range(60)}
               | {(CHAIN_END, CHAIN_END + 1)})
# iterations of a pagerank case: fixed (tol 0), so both runs do the same sums
RANK_ITERATIONS = 5
RANK = RankParams(tol=1e-300, max_iter=RANK_ITERATIONS, blocks=2, single_task=False, lineage_every=2,
                  checkpoint_every=0)


def _edges(spark):
    return spark.createDataFrame(EDGES, "src long, dst long")


def pagerank(spark, progress: Progress | None) -> list[tuple]:
    graph = RankGraph(vertices=None, edges=_edges(spark), n=N, n_edges=len(EDGES))
    result = BlockEngine(spark, RANK, partitions=2).run(graph, progress=_iterations(progress))
    return sorted((r.vertex, r.vector_id, r[S.RANK]) for r in result.ranks.collect())


def personalised_pagerank(spark, progress: Progress | None) -> list[tuple]:
    graph = RankGraph(vertices=None, edges=_edges(spark), n=N, n_edges=len(EDGES))
    vectors = [(0, 0, 0.5), (0, 13, 0.5), (1, 20, 1.0)]
    teleport = spark.createDataFrame(vectors, "vector_id int, vertex long, weight double")
    result = BlockEngine(spark, RANK, partitions=2).run(graph, teleport=teleport, n_vectors=2,
                                                        progress=_iterations(progress))
    return sorted((r.vertex, r.vector_id, r[S.RANK]) for r in result.ranks.collect())


def reward_rounds(spark, progress: Progress | None) -> list[tuple]:
    links = spark.createDataFrame([(s, d, "INTERNAL", "CONTENT") for s, d in EDGES],
                                  f"{S.SRC_ID} long, {S.DST_ID} long, {S.LINK_TYPE} string, {S.POSITION} string")
    shares = R.neighbour_shares(R.link_weights(links, {"NOFOLLOW": 0.0}, {"FOOTER": 0.5}))
    pages = spark.createDataFrame([(p,) for p in range(N)], f"{S.PAGE_ID} long")
    rewards = spark.createDataFrame([(p, float(p % 3), float(p % 5) / 2) for p in range(N)],
                                    f"{S.PAGE_ID} long, {R.REWARD_FIRST} double, {R.REWARD_LATER} double")
    start = spark.createDataFrame([(p, 1.0 + p % 7) for p in range(N)], f"{S.PAGE_ID} long, {S.SCORE} double")
    final, _ = R.run_rounds(start, R.round_vertices(pages, shares, rewards), shares,
                            R.SpreadParams(send_fraction=0.3, forget_rate=0.1), 4, block_size=15,
                            progress=None if progress is None else lambda stat: progress(stat.round))
    return sorted((r[S.PAGE_ID], r[S.SCORE]) for r in final.collect())


def hop_depth(spark, progress: Progress | None) -> list[tuple]:
    seeds = spark.createDataFrame([(0,)], "node long")
    search = frontier_search(_edges(spark), seeds, limit=6, broadcast_below=0, one_task_below=0,
                             progress=None if progress is None else lambda depth, _: progress(depth))
    return sorted((r.node, r.depth) for r in search.depths.collect())


def components(spark, progress: Progress | None) -> list[tuple]:
    pairs = [(f"d{a:02d}", f"d{b:02d}") for a, b in EDGES if a <= CHAIN_END or b <= CHAIN_END or (a + b) % 3 == 0]
    labels = connected_components(spark.createDataFrame(pairs, "a string, b string"), one_task_below=0,
                                  progress=None if progress is None else lambda round_no, _: progress(round_no))
    return sorted((r.node, r.component) for r in labels.collect())


def centrality(spark, progress: Progress | None) -> list[tuple]:
    balls = HyperBall(spark, registers=16, block_max_nodes=10, max_iter=6, single_task=False, checkpoint_every=2,
                      partitions=2)
    result = balls.run(_edges(spark), N, progress=None if progress is None else lambda step: progress(step.iteration))
    return sorted((r.node, r.harmonic) for r in result.harmonic.collect())


def _iterations(progress: Progress | None):
    return None if progress is None else lambda stat: progress(stat.iteration)


CASES: dict[str, Callable[..., list[tuple]]] = {
    "pagerank": pagerank, "personalised_pagerank": personalised_pagerank, "reward_rounds": reward_rounds,
    "hop_depth": hop_depth, "components": components, "centrality": centrality,
}
# the iteration (round, depth, step) after which the driver pauses for the kill: past a lineage cut
# and before the loop ends
PAUSE_AT = {"pagerank": 3, "personalised_pagerank": 3, "reward_rounds": 2, "hop_depth": 2, "components": 2,
            "centrality": 3}
TOLERANCE = {"pagerank": 1e-12, "personalised_pagerank": 1e-12, "reward_rounds": 1e-9, "hop_depth": 0.0,
             "components": 0.0, "centrality": 1e-9}
