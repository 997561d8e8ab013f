"""The crawl formats' part of ``linkgraph ingest`` (``--format warc|wat|ccgraph``): what
``linkgraph.inputs.crawl`` extracts, written to the lake.

WARC/WAT: the ``CRAWL_EXTRACT`` rows of ``linkgraph.inputs.crawl.load.extract_rows`` (one Spark task
per file) are split into raw edge records (validated and upserted exactly like any other input by
``linkgraph.steps.ingest_write.ingest_edges``), ``page_signals`` rows (one Delta MERGE by URL, the
newer ``fetched_at`` wins) and record-level rejects (one insert-only MERGE into ``rejects``).

ccgraph: a Common Crawl host or domain graph (vertices and edges files) into a lake of its own
(see ``linkgraph.inputs.crawl.ccgraph``).
"""

from __future__ import annotations

import logging

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

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
from linkgraph.inputs.crawl.load import CcGraphReport, CrawlIngestReport, count_records, extract_rows
from linkgraph.inputs.crawl.rows import as_reject_input, edges_as_raw, latest_page_signals
from linkgraph.inputs.edges import IngestReport, count_rejects
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.lakepolicy import policy_properties
from linkgraph.steps.ingest_write import ingest_edges
from linkgraph.urlpolicy import UrlPolicy

log = logging.getLogger(__name__)


def run(ctx: StepContext, input_path: str, fmt: str, policy: UrlPolicy) -> IngestReport:
    """Ingest WARC or WAT files (``fmt`` warc | wat) or a Common Crawl graph (ccgraph), URLs
    canonicalised under ``policy``."""
    if fmt == "ccgraph":
        return run_ccgraph(ctx, input_path, policy)
    config, lake = ctx.config, ctx.lake
    report = CrawlIngestReport(source=str(input_path), input_format=fmt)
    settings = X.ExtractSettings.from_config(config.crawl, policy)
    extracted = extract_rows(ctx.spark, input_path, fmt, settings, report).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count_records(extracted, report)
        ingest_edges(lake, config, edges_as_raw(extracted), report, policy)
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


def _check_ccgraph_lake(lake: Lake, pages: DataFrame) -> None:
    """A ccgraph needs a lake of its own: stop when other pages hold the graph's vertex ids."""
    existing = T.PAGES.read(lake).select(S.PAGE_ID, F.col(S.URL).alias("_existing_url"))
    clash = existing.join(pages.select(S.PAGE_ID, S.URL), on=S.PAGE_ID, how="inner").where(
        ~F.col("_existing_url").eqNullSafe(F.col(S.URL))
    )
    if clash.limit(1).count():
        raise readers.InputSchemaError(
            f"lake {lake.root} holds other pages at the graph's vertex ids; import a ccgraph into a lake of its own"
        )


def run_ccgraph(ctx: StepContext, input_path: str, policy: UrlPolicy) -> CcGraphReport:
    """Import a Common Crawl host or domain graph into a lake of its own."""
    spark, config, lake = ctx.spark, ctx.config, ctx.lake
    report = CcGraphReport(source=str(input_path))
    vertex_paths, edge_paths = ccgraph_paths(input_path, spark)
    vertices, vertex_rejects = split_vertices(read_vertices(spark, vertex_paths))
    pages = vertex_pages(vertices, policy).persist(StorageLevel.MEMORY_AND_DISK)
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
        T.ensure_core_tables(lake, policy_properties(config.urls, policy))
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
