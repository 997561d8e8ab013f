"""PageRank engines side by side on one graph, in one process and one local[2] session.

    python bench/pagerank.py --graph ../shared/data/cnr-2000/cnr-2000.arcs.tsv.gz [--iterations 10]
        [--with-graphframes [--graphframes-jar JAR]]

Runs, on the same arc list: the block engine (linkgraph's default; a graph whose packed links fit
``rank.block_bytes`` is solved inside one task) and the same engine forced to two blocks with a
Spark job per iteration, the naive DataFrame-join PageRank, GraphFrames PageRank (when its JVM
package is on the session: ``--with-graphframes`` puts the shared jar, or ``--graphframes-jar``, on
``spark.jars``) for a fixed number of iterations, and single-process scipy.  Prints seconds per
iteration, edges per second and each engine's max abs difference from scipy after the same
iterations; then the time to convergence (L1 < 1e-6) of the block engine and scipy, and the cost of
ten personalised vectors in one pass against one (``ten_vectors_vs_one``).

With GraphFrames, a fair comparison follows: each of the default engine, the distributed path
(B = 2 and B = 16 forced) and GraphFrames runs once untimed (warm-up), then is timed, packing included, for
``--iterations`` and for ``--long-iterations`` (61: what cnr-2000 needs to converge).  Ends with
``speedup_vs_graphframes=X`` (GraphFrames' time over the default engine's, at the long run;
``nan`` when GraphFrames cannot run here), ``speedup_vs_graphframes_distributed=X`` (the same for
B = 16), ``distributed_b16_vs_b2=Z`` (B = 16 over B = 2 forced, the long run's seconds; with
GraphFrames only) and ``slowdown_vs_scipy=Y`` (time-to-convergence ratio)."""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

import numpy as np
from pyspark.sql import functions as F
from scipy.sparse import csr_matrix

from linkgraph.lake.config import config_from_dict
from linkgraph.lake.session import get_spark
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import RankGraph
from linkgraph.rank.naive import naive_pagerank


def load_arcs(path: str) -> np.ndarray:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        arcs = np.loadtxt(handle, dtype=np.int64, comments=("#", "%"), ndmin=2)
    return np.unique(arcs, axis=0)


def scipy_pagerank(n: int, arcs: np.ndarray, d: float, tol: float, max_iter: int):
    """The documented semantics (uniform start, dangling mass along v every iteration, L1 stop)."""
    out = np.bincount(arcs[:, 0], minlength=n).astype(np.float64)
    weights = 1.0 / out[arcs[:, 0]]
    matrix = csr_matrix((weights, (arcs[:, 1], arcs[:, 0])), shape=(n, n))
    dangling = out == 0
    v = np.full(n, 1.0 / n)
    r = v.copy()
    for iteration in range(1, max_iter + 1):
        new = d * (matrix @ r + r[dangling].sum() * v) + (1 - d) * v
        l1, r = np.abs(new - r).sum(), new
        if l1 < tol:
            return r, iteration
    return r, max_iter


def default_graphframes_jar() -> str | None:
    jars = sorted((Path(__file__).resolve().parents[2] / "shared" / "graphframes").glob("graphframes-core-*.jar"))
    return str(jars[-1]) if jars else None


def ranks_vector(result, n: int) -> np.ndarray:
    pdf = result.ranks.where(F.col("vector_id") == 0).select("vertex", "rank").toPandas()
    out = np.zeros(n)
    out[pdf["vertex"].to_numpy()] = pdf["rank"].to_numpy()
    return out


def fair_comparison(spark, graph: RankGraph, args) -> dict[str, float]:
    """Each engine once untimed (warm-up), then timed, packing included, for ``--iterations`` and
    ``--long-iterations``; returns the long-run seconds per engine."""
    from linkgraph.rank.gf import graphframes_pagerank

    def fast(blocks, single_task):
        def run(iterations):
            params = RankParams(tol=1e-300, max_iter=iterations, blocks=blocks, single_task=single_task,
                                checkpoint_every=0)
            BlockEngine(spark, params).run(graph).ranks.count()
        return run

    def gf(iterations):
        graphframes_pagerank(graph, RankParams(tol=1e-300, max_iter=iterations)).ranks.count()

    engines = {"fast": fast(0, True), "fast-b2": fast(2, False),
               f"fast-b{args.distributed_blocks}": fast(args.distributed_blocks, False), "graphframes": gf}
    long_seconds = {}
    for name, run in engines.items():
        run(args.iterations)  # warm-up, untimed
        for iterations in (args.iterations, args.long_iterations):
            started = time.monotonic()
            run(iterations)
            seconds = time.monotonic() - started
            print(f"warm {name:<12} {iterations:>3} iterations {seconds:8.2f} s ({seconds / iterations:.3f} s/iteration, "
                  "packing included)", flush=True)
        long_seconds[name] = seconds
    long_seconds["fast-b16"] = long_seconds[f"fast-b{args.distributed_blocks}"]
    return long_seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True, help="arc list src<TAB>dst (gzip allowed)")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--blocks", type=int, default=0)
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--long-iterations", type=int, default=61, help="the long timed run (cnr-2000 converges in 61)")
    parser.add_argument("--distributed-blocks", type=int, default=16)
    parser.add_argument("--with-graphframes", action="store_true",
                        help="put the GraphFrames jar on the session (the shared one unless --graphframes-jar)")
    parser.add_argument("--graphframes-jar", default=default_graphframes_jar())
    args = parser.parse_args(argv)

    arcs = load_arcs(args.graph)
    n = int(arcs.max()) + 1
    print(f"graph {args.graph}: {n} vertices, {len(arcs)} arcs", flush=True)
    jar = args.graphframes_jar if args.with_graphframes else None
    config = config_from_dict({"spark": {"master": "local[2]", "graphframes": args.with_graphframes,
                                           "graphframes_jar": jar, "shuffle_partitions": 2}})
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    edges = spark.createDataFrame(arcs.tolist(), "src long, dst long").repartition(4).cache()
    edges.count()
    graph = RankGraph(vertices=None, edges=edges, n=n, n_edges=len(arcs))
    fixed = RankParams(tol=1e-300, max_iter=args.iterations, blocks=args.blocks, checkpoint_every=0)
    per_iteration: dict[str, float] = {}

    started = time.monotonic()
    reference, _ = scipy_pagerank(n, arcs, 0.85, 1e-300, args.iterations)
    per_iteration["scipy"] = (time.monotonic() - started) / args.iterations

    def report(name, result, seconds):
        sec = seconds / args.iterations
        per_iteration[name] = sec
        diff = np.abs(ranks_vector(result, n) - reference).max() if result is not None else float("nan")
        print(f"{name:<12} {sec:9.3f} s/iteration  {len(arcs) / sec:14,.0f} edges/s  max_abs_diff_vs_scipy={diff:.3e}", flush=True)

    def progress(label):
        return lambda s: print(f"  {label} iteration {s.iteration}: l1={s.l1:.3e} {s.seconds:.2f}s", flush=True)

    # wall time of the whole run (packing the links included): what a job pays
    started = time.monotonic()
    result = BlockEngine(spark, fixed).run(graph, progress=progress("fast"))
    result.ranks.count()
    report("fast", result, time.monotonic() - started)
    distributed = RankParams(tol=1e-300, max_iter=args.iterations, blocks=max(args.blocks, 2), checkpoint_every=0,
                             single_task=False)
    started = time.monotonic()
    result = BlockEngine(spark, distributed).run(graph, progress=progress("fast-blocks"))
    result.ranks.count()
    report("fast-blocks", result, time.monotonic() - started)

    if not args.skip_naive:
        result = naive_pagerank(graph, fixed)
        report("naive", result, sum(h.seconds for h in result.history))

    try:
        from linkgraph.rank.gf import GraphFramesUnavailable, graphframes_pagerank

        started = time.monotonic()
        result = graphframes_pagerank(graph, fixed)
        result.ranks.count()
        report("graphframes", result, time.monotonic() - started)
    except GraphFramesUnavailable as exc:
        print(f"graphframes  not run: {exc}", flush=True)
    print(f"scipy        {per_iteration['scipy']:9.3f} s/iteration  {len(arcs) / per_iteration['scipy']:14,.0f} edges/s", flush=True)

    started = time.monotonic()
    _, scipy_iterations = scipy_pagerank(n, arcs, 0.85, 1e-6, 1000)
    scipy_seconds = time.monotonic() - started
    converge = RankParams(tol=1e-6, max_iter=1000, blocks=args.blocks, checkpoint_every=0)
    started = time.monotonic()
    result = BlockEngine(spark, converge).run(graph)
    fast_seconds = time.monotonic() - started
    print(f"to convergence (L1 < 1e-6): fast {result.iterations} iterations {fast_seconds:.1f} s; "
          f"scipy {scipy_iterations} iterations {scipy_seconds:.3f} s", flush=True)
    rng = np.random.default_rng(7)
    seed_sets = [rng.choice(n, size=min(100, n), replace=False) for _ in range(10)]
    teleport = spark.createDataFrame(
        [(k, int(v), 1.0 / len(seeds)) for k, seeds in enumerate(seed_sets) for v in seeds],
        "vector_id int, vertex long, weight double").cache()
    timings = {}
    for vectors in (1, 10):
        started = time.monotonic()
        result = BlockEngine(spark, converge).run(graph, teleport.where(F.col("vector_id") < vectors), vectors)
        result.ranks.count()
        timings[vectors] = time.monotonic() - started
        print(f"personalised, {vectors:>2} vector(s) in one pass: {timings[vectors]:.1f} s, "
              f"iterations per vector {result.vector_iterations}", flush=True)
    fair = fair_comparison(spark, graph, args) if "graphframes" in per_iteration else {}
    print(f"ten_vectors_vs_one={timings[10] / timings[1]:.2f}")
    gf = fair.get("graphframes")
    print(f"speedup_vs_graphframes={gf / fair['fast']:.2f}" if gf else "speedup_vs_graphframes=nan")
    print(f"speedup_vs_graphframes_distributed={gf / fair['fast-b16']:.2f}" if gf
          else "speedup_vs_graphframes_distributed=nan")
    if fair:
        print(f"distributed_b{args.distributed_blocks}_vs_b2={fair['fast-b16'] / fair['fast-b2']:.2f}")
    print(f"slowdown_vs_scipy={fast_seconds / scipy_seconds:.1f}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
