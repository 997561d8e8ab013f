"""WARC and WAT files into ``CRAWL_EXTRACT`` rows on the executors, and the reports of crawl ingests.

The input's files are listed (Spark's ``binaryFile`` source, without reading them), one Spark task
per file runs :mod:`linkgraph.inputs.crawl.extract` through ``mapInArrow`` and emits
``CRAWL_EXTRACT`` rows (:func:`extract_rows`); nothing but per-category counts reaches the driver
(:func:`count_records`).  No table is written here: ``linkgraph ingest --format warc|wat|ccgraph``
writes the rows (and Common Crawl graphs) to the lake in ``linkgraph.steps.ingest_crawl``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from linkgraph.inputs.crawl import extract as X
from linkgraph.inputs.crawl.files import rows_of_file
from linkgraph.inputs.crawl.rows import list_files
from linkgraph.inputs.edges import IngestReport
from linkgraph.inputs.readers import InputSchemaError
from linkgraph.lake import schemas as S
from linkgraph.lake.paths import display

ROWS_PER_BATCH = 1000
_CATEGORY = "category"


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



# --- Common Crawl graphs --------------------------------------------------------------------------

@dataclass
class CcGraphReport(IngestReport):
    vertices_read: int = 0
    edges_read: int = 0

    def summary(self) -> str:
        return (f"ccgraph {self.source}: vertices read={self.vertices_read} edges read={self.edges_read}\n"
                f"{super().summary()}")
