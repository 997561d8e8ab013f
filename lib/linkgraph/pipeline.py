"""Pipeline steps: read (config) -> transform -> write (Delta).  Each step is what one job runs.

The CLI, the spark-submit entry points in ``jobs/`` and the notebooks all call these functions.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph import ingest as I
from linkgraph import readers
from linkgraph import schemas as S
from linkgraph.config import Config
from linkgraph.io.delta import Lake

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    source: str
    read: int = 0
    rejected: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    pages_inserted: int = 0
    pages_updated: int = 0
    links_inserted: int = 0
    links_updated: int = 0
    rejects_inserted: int = 0
    seconds: float = 0.0

    @property
    def upserted(self) -> int:
        return self.links_inserted + self.links_updated

    def summary(self) -> str:
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(self.rejected_by_reason.items())) or "none"
        return (
            f"ingest {self.source}: read={self.read} upserted={self.upserted} rejected={self.rejected} "
            f"(links +{self.links_inserted} new, {self.links_updated} updated; pages +{self.pages_inserted} new, "
            f"{self.pages_updated} updated; rejects by reason: {reasons}) in {self.seconds:.1f}s"
        )


def ensure_core_tables(lake: Lake) -> None:
    lake.ensure(S.PAGES_TABLE, S.PAGES)
    lake.ensure(S.LINKS_TABLE, S.LINKS)
    lake.ensure(S.REJECTS_TABLE, S.REJECTS)


def _count_rejects(rejects: DataFrame) -> dict[str, int]:
    return {row[S.REASON]: row["count"] for row in rejects.groupBy(S.REASON).count().collect()}


def _max_page_id(lake: Lake) -> int:
    value = lake.read(S.PAGES_TABLE).agg(F.max(S.PAGE_ID)).first()[0]
    return -1 if value is None else int(value)


def upsert_pages(lake: Lake, pages: DataFrame, key: str) -> tuple[int, int]:
    """MERGE pages on ``key``: insert new ones, widen first/last seen of known ones."""
    version_before = lake.version(S.PAGES_TABLE)
    (
        lake.delta_table(S.PAGES_TABLE).alias("t")
        .merge(pages.alias("s"), f"t.{key} = s.{key}")
        .whenMatchedUpdate(
            condition="NOT (t.first_seen_at <=> least(t.first_seen_at, s.first_seen_at)) "
            "OR NOT (t.last_seen_at <=> greatest(t.last_seen_at, s.last_seen_at))",
            set={
                S.FIRST_SEEN_AT: "least(t.first_seen_at, s.first_seen_at)",
                S.LAST_SEEN_AT: "greatest(t.last_seen_at, s.last_seen_at)",
            },
        )
        .whenNotMatchedInsertAll()
        .execute()
    )
    metrics = lake.merge_metrics_since(S.PAGES_TABLE, version_before)
    return metrics.inserted, metrics.updated


def upsert_links(lake: Lake, links: DataFrame) -> tuple[int, int]:
    """MERGE links on (src_id, dst_id); a newer sighting replaces anchor/context/type/position."""
    version_before = lake.version(S.LINKS_TABLE)
    newer = "(s.last_seen_at > t.last_seen_at OR (t.last_seen_at IS NULL AND s.last_seen_at IS NOT NULL))"
    (
        lake.delta_table(S.LINKS_TABLE).alias("t")
        .merge(links.alias("s"), "t.src_id = s.src_id AND t.dst_id = s.dst_id")
        .whenMatchedUpdate(
            condition="NOT (t.discovered_at <=> least(t.discovered_at, s.discovered_at)) "
            "OR NOT (t.last_seen_at <=> greatest(t.last_seen_at, s.last_seen_at))",
            set={
                **{c: f"CASE WHEN {newer} THEN s.{c} ELSE t.{c} END"
                   for c in (S.ANCHOR_TEXT, S.CONTEXT_WINDOW, S.LINK_TYPE, S.POSITION)},
                S.DISCOVERED_AT: "least(t.discovered_at, s.discovered_at)",
                S.LAST_SEEN_AT: "greatest(t.last_seen_at, s.last_seen_at)",
            },
        )
        .whenNotMatchedInsertAll()
        .execute()
    )
    metrics = lake.merge_metrics_since(S.LINKS_TABLE, version_before)
    return metrics.inserted, metrics.updated


def write_rejects(lake: Lake, rejects: DataFrame) -> int:
    """Insert-only MERGE on ``reject_id``: the same bad record is stored once, however often it
    is ingested."""
    metrics = lake.merge(S.REJECTS_TABLE, rejects, keys=[S.REJECT_ID], update_columns=[])
    return metrics.inserted


def ingest_step(spark: SparkSession, config: Config, input_path: str, fmt: str) -> IngestReport:
    """Read ``input_path`` in format ``fmt`` and upsert it into the lake's pages/links/rejects.

    Validation (including the input's column check) happens before any table is written.
    """
    started = time.monotonic()
    report = IngestReport(source=str(input_path))
    lake = Lake(spark, config.lake)
    if fmt == "arcs":
        _ingest_arcs(spark, lake, config, input_path, report)
    else:
        raw = readers.read_edges(spark, input_path, fmt, csv_delimiter=config.ingest.csv_delimiter)
        _ingest_edges(lake, config, raw, report)
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


def _ingest_edges(lake: Lake, config: Config, raw: DataFrame, report: IngestReport) -> None:
    validated = I.validate_edges(raw, config.ingest).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.read = validated.count()
        valid = validated.where(F.col(S.REASON).isNull())
        links, duplicates = I.split_duplicates(valid)
        rejects = I.reject_rows(validated.where(F.col(S.REASON).isNotNull()).unionByName(duplicates), report.source)
        rejects = rejects.persist(StorageLevel.MEMORY_AND_DISK)
        report.rejected_by_reason = _count_rejects(rejects)
        report.rejected = sum(report.rejected_by_reason.values())

        ensure_core_tables(lake)
        existing = lake.read(S.PAGES_TABLE)
        if existing.where(F.col(S.URL).isNull()).limit(1).count():
            raise readers.InputSchemaError(
                f"lake {lake.config.path} holds an arc-list graph (pages without URLs); ingest URL edges into a lake of their own"
            )
        links = links.persist(StorageLevel.MEMORY_AND_DISK)
        pages_batch = I.batch_pages(links)
        new_pages = I.new_pages_with_ids(pages_batch, existing, _max_page_id(lake) + 1)
        known_pages = pages_batch.join(existing.select(S.URL, S.PAGE_ID, S.URL_KEY), on=S.URL, how="inner")
        pages_update = new_pages.unionByName(known_pages.select(*[f.name for f in S.PAGES.fields]))
        report.pages_inserted, report.pages_updated = upsert_pages(lake, pages_update, key=S.URL)

        resolved = I.links_with_ids(links, lake.read(S.PAGES_TABLE))
        report.links_inserted, report.links_updated = upsert_links(lake, resolved)
        report.rejects_inserted = write_rejects(lake, rejects)
        links.unpersist()
        rejects.unpersist()
    finally:
        validated.unpersist()


def _ingest_arcs(spark: SparkSession, lake: Lake, config: Config, input_path: str, report: IngestReport) -> None:
    arcs = I.validate_arcs(readers.read_arcs(spark, input_path), config.ingest).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.read = arcs.count()
        valid, duplicates = I.split_arc_duplicates(arcs.where(F.col(S.REASON).isNull()))
        bad = arcs.where(F.col(S.REASON).isNotNull()).unionByName(duplicates)
        rejects = I.reject_rows(I.arcs_as_raw(bad), report.source).persist(StorageLevel.MEMORY_AND_DISK)
        report.rejected_by_reason = _count_rejects(rejects)
        report.rejected = sum(report.rejected_by_reason.values())

        ensure_core_tables(lake)
        if lake.read(S.PAGES_TABLE).where(F.col(S.URL).isNotNull()).limit(1).count():
            raise readers.InputSchemaError(
                f"lake {lake.config.path} holds URL pages; an arc list's node ids need a lake of their own"
            )
        report.pages_inserted, report.pages_updated = upsert_pages(lake, I.arc_pages(valid), key=S.PAGE_ID)
        report.links_inserted, report.links_updated = upsert_links(lake, I.arc_links(valid))
        report.rejects_inserted = write_rejects(lake, rejects)
        rejects.unpersist()
    finally:
        arcs.unpersist()


def sample_input(directory: str | Path, seed: int = 7) -> Path:
    """Write the built-in sample crawl's edge records as JSON lines under ``directory``."""
    from linkgraph.sample import generate_sample_crawl, write_edges_jsonl

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sample-edges.jsonl"
    write_edges_jsonl(generate_sample_crawl(seed).edges, path)
    return path
