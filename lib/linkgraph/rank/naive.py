"""The textbook DataFrame PageRank: one join of every edge with the rank vector per iteration.

Kept as the reference point the block engine is measured against (``bench/pagerank.py``); same
semantics as ``linkgraph.rank.engine`` for a single vector, uniform start.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.lake import checkpoints
from linkgraph.lake.rows import one_row
from linkgraph.lake.schemas import RANK, VECTOR_ID
from linkgraph.rank.engine import IterationStat, RankParams, RankResult
from linkgraph.rank.graph import DST, SRC, VERTEX, RankGraph
from linkgraph.rank.packing import transition_weights


def naive_pagerank(
    graph: RankGraph, params: RankParams, teleport: DataFrame | None = None,
    progress: Callable[[IterationStat], None] | None = None,
) -> RankResult:
    """Each iteration's ranks are checkpointed reliably (``linkgraph.lake.checkpoints``), replacing the
    previous iteration's: a lost executor costs a re-read of them, never the run."""
    spark = graph.edges.sparkSession
    n = graph.n
    vertices = spark.range(n).select(F.col("id").alias(VERTEX))
    edges = transition_weights(graph.edges).cache()
    dangling = vertices.join(edges.select(F.col(SRC).alias(VERTEX)).distinct(), on=VERTEX, how="left_anti").cache()
    v = _teleport(vertices, teleport, n).cache()
    ranks = checkpoints.cut(vertices.withColumn(RANK, F.lit(1.0 / n)))
    history, converged, iteration = [], False, 0
    while iteration < params.max_iter:
        started = time.monotonic()
        iteration += 1
        mass = one_row(ranks.join(dangling, on=VERTEX, how="inner").agg(F.sum(RANK)))[0] or 0.0
        new = checkpoints.cut(_step(edges, ranks, v, mass, params.damping))
        l1 = one_row(new.join(ranks.withColumnRenamed(RANK, "old"), on=VERTEX, how="inner").agg(
            F.sum(F.abs(F.col(RANK) - F.col("old")))))[0]
        checkpoints.drop(ranks)
        ranks = new
        stat = IterationStat(iteration, float(l1), float(mass), time.monotonic() - started)
        history.append(stat)
        if progress:
            progress(stat)
        if l1 < params.tol:
            converged = True
            break
    return RankResult(
        ranks=ranks.select(VERTEX, F.lit(0).alias(VECTOR_ID), RANK),
        iterations=iteration, converged=converged,
        vector_iterations=[iteration], history=history,
    )


def _teleport(vertices: DataFrame, teleport: DataFrame | None, n: int) -> DataFrame:
    """(vertex, v): the uniform teleport vector, or vector 0 of ``teleport``."""
    if teleport is None:
        return vertices.withColumn("v", F.lit(1.0 / n))
    return vertices.join(teleport.where(F.col(VECTOR_ID) == 0).select(VERTEX, F.col("weight").alias("v")),
                         on=VERTEX, how="left").fillna(0.0, subset=["v"])


def _step(edges: DataFrame, ranks: DataFrame, v: DataFrame, mass: float, d: float) -> DataFrame:
    """One power iteration: (vertex, rank) from ``ranks`` and the dangling ``mass``."""
    incoming = (
        edges.join(ranks.select(F.col(VERTEX).alias(SRC), RANK), on=SRC, how="inner")
        .groupBy(F.col(DST).alias(VERTEX)).agg(F.sum(F.col(RANK) * F.col("w")).alias("incoming"))
    )
    rank = d * (F.coalesce("incoming", F.lit(0.0)) + F.lit(mass) * F.col("v")) + (1 - d) * F.col("v")
    return v.join(incoming, on=VERTEX, how="left").select(VERTEX, rank.alias(RANK))
