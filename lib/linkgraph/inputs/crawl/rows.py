"""Crawl inputs (WARC/WAT) as rows for the lake: the ``CRAWL_EXTRACT`` rows of the executors split
into raw edge records, ``page_signals`` rows and record-level rejects (pure transforms; what
writes them is ``linkgraph.steps.ingest_crawl``)."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from linkgraph.inputs.crawl import extract as X
from linkgraph.inputs.readers import CORRUPT_RECORD
from linkgraph.lake import schemas as S

assert tuple(f.name for f in S.CRAWL_EXTRACT.fields) == X.COLUMNS, "CRAWL_EXTRACT and extract.COLUMNS differ"


def list_files(spark: SparkSession, input_path: str) -> list[str]:
    """The files under ``input_path`` (a file, or a directory searched recursively; names starting
    with ``.`` or ``_`` are left out, as Spark does).  One string per file, not their content."""
    listing = (
        spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(input_path).select("path")
    )
    return sorted(row["path"] for row in listing.collect())


def edges_as_raw(extracted: DataFrame) -> DataFrame:
    """Edge rows as raw edge records (``RAW_WITH_CORRUPT``), the input of ingest validation."""
    return extracted.where(F.col(S.ROW_KIND) == X.EDGE).select(
        *[F.col(f.name) for f in S.RAW_EDGE_RECORD.fields], F.lit(None).cast("string").alias(CORRUPT_RECORD)
    )


def as_reject_input(rows: DataFrame) -> DataFrame:
    """Record-level rejects with the raw edge columns (the page URL in ``from_url``)."""
    return rows.select(*[F.col(f.name) for f in S.RAW_EDGE_RECORD.fields], S.REASON, S.DETAIL)


def latest_page_signals(pages: DataFrame) -> DataFrame:
    """One ``page_signals`` row per URL: the latest fetch (ties: smallest title, then text)."""
    newest = Window.partitionBy(S.URL).orderBy(
        F.col(S.FETCHED_AT).desc_nulls_last(), F.col(S.TITLE).asc_nulls_last(), F.col(S.TEXT).asc_nulls_last()
    )
    return (
        pages.withColumn("_rank", F.row_number().over(newest))
        .where(F.col("_rank") == 1)
        .select(*[F.col(f.name).cast(f.dataType) for f in S.PAGE_SIGNALS.fields])
    )
