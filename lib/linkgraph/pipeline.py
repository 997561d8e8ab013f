"""Deprecated function-per-step entry points: each name below is a thin shim over
``linkgraph.steps`` (one module per step, ``run(ctx, ...)``) that builds a ``StepContext`` per call.
New code imports ``linkgraph.steps.<step>`` and builds one ``StepContext`` per command.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from linkgraph.config import Config
from linkgraph.errors import ScoresError as ScoresError
from linkgraph.ids import new_run_id as new_run_id
from linkgraph.sample import write_sample_input
from linkgraph.steps import analyze, authority, compress, flags, ingest, lookup, pagerank, scores, sitemaps
from linkgraph.steps.analyze import ANALYSIS_TABLES as ANALYSIS_TABLES
from linkgraph.steps.analyze import AnalysisReport as AnalysisReport
from linkgraph.steps.compress import CompressReport as CompressReport
from linkgraph.steps.context import StepContext
from linkgraph.steps.context import reasons_text as reasons_text
from linkgraph.steps.edges import IngestReport as IngestReport
from linkgraph.steps.flags import FlagsReport as FlagsReport
from linkgraph.steps.lookup import LINK_DIRECTIONS as LINK_DIRECTIONS
from linkgraph.steps.pagerank import PersonalizationSpec as PersonalizationSpec
from linkgraph.steps.pagerank import RankRunReport as RankRunReport
from linkgraph.steps.scores import ScoresReport as ScoresReport
from linkgraph.steps.sitemaps import SitemapReport as SitemapReport
from linkgraph.tables import ensure_core_tables as ensure_core_tables
from linkgraph.tables import latest_rank_run_id as latest_rank_run_id
from linkgraph.tables import upsert_links as upsert_links
from linkgraph.tables import upsert_pages as upsert_pages
from linkgraph.tables import write_rejects as write_rejects


def _ctx(spark: SparkSession, config: Config) -> StepContext:
    return StepContext.create(spark, config)


def ingest_step(spark: SparkSession, config: Config, input_path: str, fmt: str) -> IngestReport:
    return ingest.run(_ctx(spark, config), input_path, fmt)


def sample_input(directory: str | Path, seed: int = 7) -> Path:
    return write_sample_input(directory, seed)


def pagerank_step(spark: SparkSession, config: Config, personalization: PersonalizationSpec | None = None,
                  warm_start: bool = False) -> RankRunReport:
    return pagerank.run(_ctx(spark, config), personalization, warm_start)


def analyze_step(spark: SparkSession, config: Config) -> AnalysisReport:
    return analyze.run(_ctx(spark, config))


def flags_step(spark: SparkSession, config: Config) -> FlagsReport:
    return flags.run(_ctx(spark, config))


def scores_step(spark: SparkSession, config: Config, seeds: list[str] | None = None) -> ScoresReport:
    return scores.run(_ctx(spark, config), seeds)


def ingest_sitemaps_step(spark: SparkSession, config: Config, input_path: str) -> SitemapReport:
    return sitemaps.run(_ctx(spark, config), input_path)


def import_authority_step(spark: SparkSession, config: Config, input_path: str, fmt: str) -> tuple[int, int]:
    """(rows imported, rows rejected)."""
    report = authority.run(_ctx(spark, config), input_path, fmt)
    return report.imported, report.rejected


def compress_step(spark: SparkSession, config: Config) -> CompressReport:
    return compress.run(_ctx(spark, config))


def lookup_links(spark: SparkSession, config: Config, direction: str, url: str) -> DataFrame:
    return lookup.links(_ctx(spark, config), direction, url)


def lookup_links_compressed(spark: SparkSession, config: Config, direction: str, url: str, limit: int) -> list[dict]:
    return lookup.links_compressed(_ctx(spark, config), direction, url, limit)


def export_frontier(spark: SparkSession, config: Config, top: int) -> list[dict]:
    return lookup.frontier(_ctx(spark, config), top)
