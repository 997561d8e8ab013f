"""``linkgraph ingest --format warc|wat|ccgraph``: extraction on the executors, then the lake.

WARC/WAT: the input's files are listed (Spark's ``binaryFile`` source, without reading them), one
Spark task per file runs :mod:`linkgraph.inputs.crawl.extract` through ``mapInArrow`` and emits
``CRAWL_EXTRACT`` rows; nothing but per-category counts reaches the driver.  The rows are split
into raw edge records (validated and upserted exactly like any other input by
``linkgraph.inputs.edges.ingest_edges``), ``page_signals`` rows (one Delta MERGE by URL, the newer
``fetched_at`` wins) and record-level rejects (one insert-only MERGE into ``rejects``).

ccgraph: a Common Crawl host or domain graph (vertices and edges files) into a lake of its own
(see ``linkgraph.inputs.crawl.ccgraph``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from linkgraph.inputs import readers
from linkgraph.inputs.crawl import extract as X
from linkgraph.inputs.crawl.ccgraph import (
    ccgraph_paths,
    edge_links,
    read_vertices,
    split_edges,
    split_vertices,
    vertex_pages,
)
from linkgraph.inputs.crawl.files import rows_of_file
from linkgraph.inputs.crawl.rows import as_reject_input, edges_as_raw, latest_page_signals, list_files
from linkgraph.inputs.edges import IngestReport, count_rejects, ingest_edges
from linkgraph.inputs.readers import InputSchemaError
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.paths import display

log = logging.getLogger(__name__)

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


def run(ctx: StepContext, input_path: str, fmt: str) -> IngestReport:
    """Ingest WARC or WAT files (``fmt`` warc | wat) or a Common Crawl graph (ccgraph)."""
    if fmt == "ccgraph":
        return run_ccgraph(ctx, input_path)
    config, lake = ctx.config, ctx.lake
    report = CrawlIngestReport(source=str(input_path), input_format=fmt)
    settings = X.ExtractSettings.from_config(config.crawl)
    extracted = extract_rows(ctx.spark, input_path, fmt, settings, report).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count_records(extracted, report)
        ingest_edges(lake, config, edges_as_raw(extracted), report)
        signals = extracted.where(F.col(S.ROW_KIND) == X.PAGE)
        report.page_signals_inserted, report.page_signals_updated = T.merge_page_signals(
            lake, latest_page_signals(signals.where(F.col(S.URL).isNotNull()))
        )
        record_rejects = extracted.where(
            (F.col(S.ROW_KIND) == X.REJECTED) | ((F.col(S.ROW_KIND) == X.PAGE) & F.col(S.REASON).isNotNull())
        )
        report.rejects_inserted += T.write_rejects(lake, T.reject_rows(as_reject_input(record_rejects), report.source))
    finally:
        extracted.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


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


def _check_ccgraph_lake(lake: Lake, pages: DataFrame) -> None:
    """A ccgraph needs a lake of its own: stop when other pages hold the graph's vertex ids."""
    existing = lake.read(S.PAGES_TABLE).select(S.PAGE_ID, F.col(S.URL).alias("_existing_url"))
    clash = existing.join(pages.select(S.PAGE_ID, S.URL), on=S.PAGE_ID, how="inner").where(
        ~F.col("_existing_url").eqNullSafe(F.col(S.URL))
    )
    if clash.limit(1).count():
        raise readers.InputSchemaError(
            f"lake {lake.root} holds other pages at the graph's vertex ids; import a ccgraph into a lake of its own"
        )


def run_ccgraph(ctx: StepContext, input_path: str) -> CcGraphReport:
    spark, config, lake = ctx.spark, ctx.config, ctx.lake
    report = CcGraphReport(source=str(input_path))
    vertex_paths, edge_paths = ccgraph_paths(input_path, spark)
    vertices, vertex_rejects = split_vertices(read_vertices(spark, vertex_paths))
    pages = vertex_pages(vertices).persist(StorageLevel.MEMORY_AND_DISK)
    arcs = readers.read_arcs(spark, edge_paths).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.vertices_read = pages.count() + vertex_rejects.count()
        report.edges_read = arcs.count()
        report.read = report.vertices_read + report.edges_read
        edges, edge_rejects = split_edges(arcs, pages.select(S.PAGE_ID), config)
        rejects = T.reject_rows(vertex_rejects.unionByName(edge_rejects), report.source).persist(
            StorageLevel.MEMORY_AND_DISK
        )
        count_rejects(rejects, report)
        T.ensure_core_tables(lake)
        _check_ccgraph_lake(lake, pages)
        report.pages_inserted, report.pages_updated = T.upsert_pages(lake, pages, key=S.PAGE_ID)
        report.links_inserted, report.links_updated = T.upsert_links(lake, edge_links(edges, pages))
        report.rejects_inserted = T.write_rejects(lake, rejects)
        rejects.unpersist()
    finally:
        pages.unpersist()
        arcs.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report
