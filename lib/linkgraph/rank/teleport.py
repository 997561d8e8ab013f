"""Teleport (personalisation) vectors for topic-sensitive PageRank.

A vector is a set of (vertex, weight) rows, normalised to sum 1; ``vector_id`` numbers the K
vectors computed in one pass.  Sources: seed URLs (canonicalised like ingest), topic terms matched
case-insensitively on word boundaries in a page's URL or in the anchor texts of its in-links, or a
table of (page_id, weight[, vector_id]).  A vector that covers no page is an error.

The uniform vector (every page 1/n) is never materialised: ``uniform_vector`` is one row at
``UNIFORM_VERTEX``, which the rank engine reads as "1/n everywhere" (``packing.uniform_vectors``).
"""

from __future__ import annotations

import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph.errors import EmptyTeleportError
from linkgraph.lake import schemas as S
from linkgraph.lake.rows import one_row
from linkgraph.lake.schemas import VECTOR_ID
from linkgraph.rank.graph import VERTEX
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy
from linkgraph.urls import canonicalize

UNIFORM_VERTEX = -1   # a teleport row at this vertex stands for its vector uniform over all pages


def uniform_vector(spark: SparkSession, vector_id: int) -> DataFrame:
    """(vector_id, vertex, weight): vector ``vector_id`` uniform over every page, as one marker row."""
    return spark.createDataFrame([(vector_id, UNIFORM_VERTEX, 1.0)], f"{VECTOR_ID} int, {VERTEX} long, weight double")


def normalise(raw: DataFrame) -> DataFrame:
    """(vector_id, vertex, weight) with weights summing to 1 per vector; non-positive weights dropped."""
    positive = raw.where(F.col("weight") > 0).groupBy(VECTOR_ID, VERTEX).agg(F.sum("weight").alias("weight"))
    totals = positive.groupBy(VECTOR_ID).agg(F.sum("weight").alias("total"))
    return positive.join(totals, on=VECTOR_ID, how="inner").select(
        F.col(VECTOR_ID).cast("int"), F.col(VERTEX).cast("long"), (F.col("weight") / F.col("total")).alias("weight")
    )


def check_covered(teleport: DataFrame, labels: list[str]) -> None:
    covered = {r[VECTOR_ID] for r in teleport.select(VECTOR_ID).distinct().collect()}
    missing = [labels[k] for k in range(len(labels)) if k not in covered]
    if missing:
        raise EmptyTeleportError(f"personalisation vector matches no page: {', '.join(missing)}")


def from_seed_urls(vertices: DataFrame, pages: DataFrame, seed_groups: list[list[str]],
                   policy: UrlPolicy = DEFAULT_POLICY) -> DataFrame:
    """One vector per group of seed URLs (canonicalised under ``policy``), uniform over the seeds
    that are known pages."""
    spark = pages.sparkSession
    rows = []
    for k, group in enumerate(seed_groups):
        for url in group:
            canonical = canonicalize(url, policy).url
            if canonical:
                rows.append((k, canonical))
    seeds = spark.createDataFrame(rows, f"{VECTOR_ID} int, {S.URL} string")
    matched = (seeds.join(pages.select(S.URL, S.PAGE_ID), on=S.URL, how="inner")
               .join(vertices, on=S.PAGE_ID, how="inner"))
    return normalise(matched.select(VECTOR_ID, VERTEX, F.lit(1.0).alias("weight")))


def from_topics(vertices: DataFrame, pages: DataFrame, links: DataFrame, topics: list[list[str]]) -> DataFrame:
    """One vector per topic (a list of terms): uniform over pages whose URL or in-link anchor
    text contains any term as a word (case-insensitive)."""
    parts = []
    for k, terms in enumerate(topics):
        pattern = "(?i)\\b(" + "|".join(re.escape(t.strip()) for t in terms if t.strip()) + ")\\b"
        by_url = pages.where(F.col(S.URL).rlike(pattern)).select(S.PAGE_ID)
        by_anchor = links.where(F.col(S.ANCHOR_TEXT).rlike(pattern)).select(F.col(S.DST_ID).alias(S.PAGE_ID))
        parts.append(by_url.union(by_anchor).distinct().select(F.lit(k).alias(VECTOR_ID), S.PAGE_ID))
    matched = parts[0]
    for part in parts[1:]:
        matched = matched.unionByName(part)
    matched = matched.join(vertices, on=S.PAGE_ID, how="inner")
    return normalise(matched.select(VECTOR_ID, VERTEX, F.lit(1.0).alias("weight")))


def from_table(vertices: DataFrame, table: DataFrame) -> tuple[DataFrame, int]:
    """A (page_id, weight[, vector_id]) table; returns the vectors and their count K."""
    for column in (S.PAGE_ID, "weight"):
        if column not in table.columns:
            raise EmptyTeleportError(f"personalisation table lacks column '{column}'")
    if VECTOR_ID not in table.columns:
        table = table.withColumn(VECTOR_ID, F.lit(0))
    matched = table.join(vertices, on=S.PAGE_ID, how="inner")
    teleport = normalise(matched.select(VECTOR_ID, VERTEX, F.col("weight").cast("double")))
    k = one_row(table.agg(F.max(VECTOR_ID)))[0]
    return teleport, (0 if k is None else int(k) + 1)
