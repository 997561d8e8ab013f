"""``linkgraph ingest --format warc|wat|ccgraph``: extraction on the executors, then the lake.

WARC/WAT: the input's files are listed (Spark's ``binaryFile`` source, without reading them), one
Spark task per file runs :mod:`linkgraph.crawl.extract` through ``mapInArrow`` and emits
``CRAWL_EXTRACT`` rows; nothing but per-category counts reaches the driver.  The rows are split
into raw edge records (validated and upserted exactly like any other input by
``linkgraph.steps.edges.ingest_edges``), ``page_signals`` rows (one Delta MERGE by URL, the newer
``fetched_at`` wins) and record-level rejects (one insert-only MERGE into ``rejects``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from linkgraph import ingest as I
from linkgraph import schemas as S
from linkgraph.config import Config
from linkgraph.crawl import extract as X
from linkgraph.crawl.ccgraph import ingest_ccgraph
from linkgraph.io.delta import Lake
from linkgraph.paths import display
from linkgraph.readers import CORRUPT_RECORD, InputSchemaError
from linkgraph.steps.edges import IngestReport, ingest_edges
from linkgraph.tables import merge_fetched_page_signals, write_rejects

log = logging.getLogger(__name__)

ROWS_PER_BATCH = 1000
_CATEGORY = "category"

assert tuple(f.name for f in S.CRAWL_EXTRACT.fields) == X.COLUMNS, "CRAWL_EXTRACT and extract.COLUMNS differ"


@dataclass
class CrawlIngestReport(IngestReport):
    """An ingest report plus the record-level counts of WARC/WAT extraction.

    ``records_read = pages_parsed + redirects + records_skipped + records_rejected``.
    """

    input_format: str = "warc"
    files: int = 0
    records_read: int = 0
    pages_parsed: int = 0
    redirects: int = 0
    pages_without_links: int = 0
    skipped_by_kind: dict[str, int] = field(default_factory=dict)
    records_rejected_by_reason: dict[str, int] = field(default_factory=dict)
    edges_extracted: int = 0
    page_signals_inserted: int = 0
    page_signals_updated: int = 0
    page_signals_rejected: int = 0

    @property
    def records_parsed(self) -> int:
        return self.pages_parsed + self.redirects

    @property
    def records_skipped(self) -> int:
        return sum(self.skipped_by_kind.values())

    @property
    def records_rejected(self) -> int:
        return sum(self.records_rejected_by_reason.values())

    def records_summary(self) -> str:
        def listing(counts: dict[str, int]) -> str:
            return ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "none"

        return (
            f"{self.input_format} {display(self.source)}: files={self.files} records read={self.records_read} = "
            f"parsed={self.records_parsed} + skipped={self.records_skipped} + rejected={self.records_rejected} "
            f"(parsed: {self.pages_parsed} HTML pages of which {self.pages_without_links} without links, "
            f"{self.redirects} redirects; skipped: {listing(self.skipped_by_kind)}; "
            f"rejected: {listing(self.records_rejected_by_reason)}); edges extracted={self.edges_extracted}; "
            f"page_signals +{self.page_signals_inserted} new, {self.page_signals_updated} updated, "
            f"{self.page_signals_rejected} rejected"
        )

    def summary(self) -> str:
        return f"{self.records_summary()}\n{super().summary()}"


def crawl_ingest_step(spark: SparkSession, config: Config, input_path: str, fmt: str) -> IngestReport:
    """Ingest WARC or WAT files (``fmt`` warc | wat) or a Common Crawl graph (ccgraph)."""
    if fmt == "ccgraph":
        return ingest_ccgraph(spark, config, input_path)
    started = time.monotonic()
    report = CrawlIngestReport(source=str(input_path), input_format=fmt)
    lake = Lake(spark, config.lake)
    settings = X.ExtractSettings(config.crawl.max_page_bytes, config.crawl.max_text_chars, config.crawl.context_chars)
    extracted = extract_rows(spark, input_path, fmt, settings, report).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count_records(extracted, report)
        ingest_edges(lake, config, edges_as_raw(extracted), report)
        signals = extracted.where(F.col(S.ROW_KIND) == X.PAGE)
        report.page_signals_inserted, report.page_signals_updated = merge_fetched_page_signals(
            lake, latest_page_signals(signals.where(F.col(S.URL).isNotNull()))
        )
        record_rejects = extracted.where(
            (F.col(S.ROW_KIND) == X.REJECTED) | ((F.col(S.ROW_KIND) == X.PAGE) & F.col(S.REASON).isNotNull())
        )
        report.rejects_inserted += write_rejects(lake, I.reject_rows(as_reject_input(record_rejects), report.source))
    finally:
        extracted.unpersist()
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


def list_files(spark: SparkSession, input_path: str) -> list[str]:
    """The files under ``input_path`` (a file, or a directory searched recursively; names starting
    with ``.`` or ``_`` are left out, as Spark does).  One string per file, not their content."""
    listing = (
        spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(input_path).select("path")
    )
    return sorted(row["path"] for row in listing.collect())


def extract_rows(spark: SparkSession, input_path: str, fmt: str, settings: X.ExtractSettings,
                 report: CrawlIngestReport) -> DataFrame:
    """``CRAWL_EXTRACT`` rows of every file of the input, one Spark task per file."""
    files = list_files(spark, input_path)
    if not files:
        raise InputSchemaError(f"no files found under {input_path}")
    report.files = len(files)
    paths = spark.createDataFrame(spark.sparkContext.parallelize([(p,) for p in files], len(files)), "path string")
    arrow_schema = to_arrow_schema(S.CRAWL_EXTRACT, timezone="UTC")

    def extract_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from linkgraph.crawl.files import rows_of_file

        for batch in batches:
            for path in batch.column("path").to_pylist():
                buffer = []
                for row in rows_of_file(path, fmt, settings):
                    buffer.append(row)
                    if len(buffer) >= ROWS_PER_BATCH:
                        yield pa.RecordBatch.from_pylist(buffer, schema=arrow_schema)
                        buffer = []
                if buffer:
                    yield pa.RecordBatch.from_pylist(buffer, schema=arrow_schema)

    return paths.mapInArrow(extract_partition, S.CRAWL_EXTRACT)


def count_records(extracted: DataFrame, report: CrawlIngestReport) -> None:
    """Fill the report's record counts with one aggregate (a few rows reach the driver)."""
    kind = F.col(S.ROW_KIND)
    category = F.when(kind == X.SKIPPED, F.col(S.DETAIL)).when(kind == X.REJECTED, F.col(S.REASON))
    counts = (
        extracted.groupBy(kind.alias(S.ROW_KIND), category.alias(_CATEGORY))
        .agg(F.count(F.lit(1)).alias("n"), F.sum(F.when(F.col(S.LINK_COUNT) == 0, 1).otherwise(0)).alias("no_links"))
        .collect()
    )
    for row in counts:
        n = int(row["n"])
        if row[S.ROW_KIND] == X.EDGE:
            report.edges_extracted += n
            continue
        report.records_read += n
        if row[S.ROW_KIND] == X.PAGE:
            report.pages_parsed += n
            report.pages_without_links += int(row["no_links"])
        elif row[S.ROW_KIND] == X.REDIRECT:
            report.redirects += n
        elif row[S.ROW_KIND] == X.SKIPPED:
            report.skipped_by_kind[row[_CATEGORY]] = report.skipped_by_kind.get(row[_CATEGORY], 0) + n
        else:
            report.records_rejected_by_reason[row[_CATEGORY]] = n


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
