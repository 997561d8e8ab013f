"""The GraphFrames engine: ``GraphFrame.pageRank`` over the same rank graph, for comparison.

Semantics differ from linkgraph's (see README): GraphFrames runs a fixed number of iterations
(``maxIter``) or a per-vertex tolerance, never both; dangling mass is not redistributed each
iteration, ranks are rescaled at the end to sum to 1 here so the two can be compared.  Needs the
GraphFrames JVM package: a local jar (``spark.graphframes_jar`` or ``spark.jars``) or the Maven
coordinate (``spark.graphframes: true``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from graphframes import GraphFrame
from py4j.java_gateway import JavaClass
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.errors import GraphFramesUnavailable
from linkgraph.lake.packages import GRAPHFRAMES_PACKAGE
from linkgraph.lake.schemas import RANK, VECTOR_ID
from linkgraph.rank.engine import IterationStat, RankParams, RankResult
from linkgraph.rank.graph import DST, SRC, VERTEX, RankGraph


def graphframes_pagerank(
    graph: RankGraph, params: RankParams, teleport: DataFrame | None = None,
    progress: Callable[[IterationStat], None] | None = None,
) -> RankResult:
    if teleport is not None:
        raise GraphFramesUnavailable("the graphframes engine computes uniform PageRank only")
    spark = graph.edges.sparkSession
    jvm = spark._jvm
    assert jvm is not None, "a Spark session on a JVM (not Spark Connect)"
    if not isinstance(jvm.org.graphframes.GraphFrame, JavaClass):
        raise GraphFramesUnavailable(
            "GraphFrames JVM package not available in this Spark session: set spark.graphframes_jar to a "
            f"local GraphFrames jar, or spark.graphframes: true ({GRAPHFRAMES_PACKAGE}) where Maven Central "
            "serves it"
        )

    vertices = spark.range(graph.n)
    edges = graph.edges.select(F.col(SRC).alias("src"), F.col(DST).alias("dst"))
    started = time.monotonic()
    result = GraphFrame(vertices, edges).pageRank(resetProbability=1.0 - params.damping, maxIter=params.max_iter)
    ranks = result.vertices.select(F.col("id").alias(VERTEX), F.col("pagerank").alias(RANK)).cache()
    total = ranks.agg(F.sum(RANK)).first()[0]
    stat = IterationStat(params.max_iter, float("nan"), float("nan"), time.monotonic() - started)
    if progress:
        progress(stat)
    return RankResult(
        ranks=ranks.select(VERTEX, F.lit(0).alias(VECTOR_ID), (F.col(RANK) / F.lit(total)).alias(RANK)),
        iterations=params.max_iter, converged=False, vector_iterations=[params.max_iter], history=[stat],
    )
