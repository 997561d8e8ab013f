"""HyperBall harmonic centrality on cnr-2000: time, iterations, and the error against
exact harmonic centrality of sampled nodes.

    python bench/centrality.py [--graph ../shared/data/cnr-2000/cnr-2000.arcs.tsv.gz] [--registers 256]
                               [--block-max-nodes 100000] [--sample 40] [--driver-memory 4g]

cnr-2000 carries no URLs, so there is no host graph to build: the bench runs the engine of
``linkgraph centrality`` on the page graph itself (325,557 nodes, 3,216,152 arcs, self-loops
dropped), once in one task (``single_task``) and once distributed over blocks of
``--block-max-nodes`` nodes (the sparse block exchange), in one local[2] Spark session.  The exact
harmonic centrality of ``--sample`` random nodes is computed by a BFS on the transposed graph
(scipy).  Ends with ``max_relative_error=X`` and ``seconds_distributed=S``.
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, shortest_path

from linkgraph.lake.config import config_from_dict
from linkgraph.rank.hyperball import DEFAULT_BLOCK_BYTES, HyperBall, relative_standard_error
from linkgraph.lake.session import get_spark

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "cnr-2000" / "cnr-2000.arcs.tsv.gz"


def load(path: Path) -> tuple[np.ndarray, int]:
    with gzip.open(path, "rb") as f:
        arcs = np.loadtxt(f, dtype=np.int64).reshape(-1, 2)
    arcs = arcs[arcs[:, 0] != arcs[:, 1]]
    return arcs, int(arcs.max()) + 1


UNBOUNDED_BYTES = 1 << 50


def exact_harmonic(arcs: np.ndarray, n: int, nodes: np.ndarray) -> np.ndarray:
    """Σ 1/d(y, x) over y reaching x: unweighted shortest paths from x on the transposed graph."""
    transposed = sp.csr_matrix((np.ones(len(arcs)), (arcs[:, 1], arcs[:, 0])), shape=(n, n))
    out = np.zeros(len(nodes))
    for i, x in enumerate(nodes):
        reach = breadth_first_order(transposed, int(x), directed=True, return_predecessors=False)
        sub = transposed[reach][:, reach]
        d = shortest_path(sub, method="D", unweighted=True, indices=0)
        d = d[np.isfinite(d) & (d > 0)]
        out[i] = (1.0 / d).sum()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default=str(DEFAULT))
    parser.add_argument("--registers", type=int, default=256)
    parser.add_argument("--block-max-nodes", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--driver-memory", default="4g")
    args = parser.parse_args(argv)
    arcs, n = load(Path(args.graph))
    print(f"graph: {n:,} nodes, {len(arcs):,} arcs (self-loops dropped)", flush=True)
    spark = get_spark(config_from_dict({"spark": {"master": "local[2]", "driver_memory": args.driver_memory,
                                                  "shuffle_partitions": 4}}).spark)
    edges = spark.createDataFrame(
        __import__("pandas").DataFrame({"src": arcs[:, 0], "dst": arcs[:, 1]})).persist()
    edges.count()
    results = {}
    for label, single, block in (("one task", True, n), ("distributed", False, args.block_max_nodes)):
        started = time.monotonic()
        # the one-task run holds the whole graph in one task: a budget that has room for it
        budget = UNBOUNDED_BYTES if single else DEFAULT_BLOCK_BYTES
        result = HyperBall(spark, args.registers, block, single_task=single, block_bytes=budget).run(edges, n)
        values = result.harmonic.toPandas().sort_values("node")["harmonic"].to_numpy()
        seconds = time.monotonic() - started
        results[label] = (values, seconds)
        print(f"{label}: {seconds:.1f}s, {result.iterations} iterations, converged={result.converged}, "
              f"blocks={-(-n // block)}", flush=True)
    rng = np.random.default_rng(1)
    sample = rng.choice(n, size=args.sample, replace=False)
    started = time.monotonic()
    exact = exact_harmonic(arcs, n, sample)
    print(f"exact harmonic centrality of {args.sample} sampled nodes: {time.monotonic() - started:.1f}s")
    estimated = results["distributed"][0][sample]
    positive = exact > 0
    relative = np.abs(estimated[positive] - exact[positive]) / exact[positive]
    rse = relative_standard_error(args.registers)
    print(f"relative standard error stated: {rse:.4f}; sampled nodes: mean relative error {relative.mean():.4f}, "
          f"max {relative.max():.4f} (3 x RSE = {3 * rse:.4f})")
    print(f"one task and distributed agree: {np.allclose(results['one task'][0], results['distributed'][0])}")
    print(f"max_relative_error={relative.max():.4f}")
    print(f"seconds_distributed={results['distributed'][1]:.1f}")


if __name__ == "__main__":
    main()
