"""The fixed cost of a distributed iteration's stage against a GraphFrames PageRank iteration, in
one local[2] session with the GraphFrames jar.

    python bench/task_floor.py --graph ../shared/data/cnr-2000/cnr-2000.arcs.tsv.gz [--blocks 16]

Times GraphFrames PageRank on the graph (``--warm-iterations`` to warm up, then
``--iterations``, 61 by default: what cnr-2000 needs) and, after each, Spark jobs of one stage of
empty Python tasks (``mapPartitionsWithIndex`` returning one value, then ``count``: no shuffle,
no data) over 2 and over ``--blocks`` partitions: a lower bound on one iteration of the block
engine's distributed path with that many blocks, which also shuffles the partial sums.  Ends with
``empty_stage_b{B}_seconds=``, ``graphframes_iteration_seconds=`` and ``floor_share=`` (the first
over the second: an engine of one Python task per block cannot be more than ``1/floor_share``
times faster than GraphFrames per iteration here).
"""

from __future__ import annotations

import argparse
import sys
import time

from pagerank import default_graphframes_jar, load_arcs

from linkgraph.lake.config import config_from_dict
from linkgraph.lake.session import get_spark
from linkgraph.rank.engine import RankParams
from linkgraph.rank.gf import graphframes_pagerank
from linkgraph.rank.graph import RankGraph


def empty_stage_seconds(spark, partitions: int, jobs: int) -> float:
    """Mean seconds of a job of one stage of ``partitions`` Python tasks that do nothing."""
    rdd = spark.sparkContext.parallelize(range(partitions), partitions)
    started = time.monotonic()
    for _ in range(jobs):
        rdd.mapPartitionsWithIndex(lambda index, _: [index]).count()
    return (time.monotonic() - started) / jobs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True, help="arc list src<TAB>dst (gzip allowed)")
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--warm-iterations", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=61)
    parser.add_argument("--jobs", type=int, default=20, help="empty jobs timed per partition count")
    parser.add_argument("--graphframes-jar", default=default_graphframes_jar())
    args = parser.parse_args(argv)

    arcs = load_arcs(args.graph)
    n = int(arcs.max()) + 1
    config = config_from_dict({"spark": {"master": "local[2]", "graphframes": True,
                                           "graphframes_jar": args.graphframes_jar, "shuffle_partitions": 2}})
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    edges = spark.createDataFrame(arcs.tolist(), "src long, dst long").repartition(4).cache()
    edges.count()
    graph = RankGraph(vertices=None, edges=edges, n=n, n_edges=len(arcs))
    for partitions in (2, args.blocks):
        empty_stage_seconds(spark, partitions, 3)
    figures = {}
    for label, iterations in (("warm-up", args.warm_iterations), ("timed", args.iterations)):
        started = time.monotonic()
        graphframes_pagerank(graph, RankParams(tol=1e-300, max_iter=iterations)).ranks.count()
        per_iteration = (time.monotonic() - started) / iterations
        two, many = (empty_stage_seconds(spark, p, args.jobs) for p in (2, args.blocks))
        print(f"{label}: GraphFrames {per_iteration:.3f} s/iteration ({iterations} iterations); empty stage of 2 "
              f"Python tasks {two:.3f} s, of {args.blocks} {many:.3f} s", flush=True)
        figures = {"graphframes": per_iteration, "two": two, "many": many}
    print(f"empty_stage_b2_seconds={figures['two']:.3f}")
    print(f"empty_stage_b{args.blocks}_seconds={figures['many']:.3f}")
    print(f"graphframes_iteration_seconds={figures['graphframes']:.3f}")
    print(f"floor_share={figures['many'] / figures['graphframes']:.2f}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
