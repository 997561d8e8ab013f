"""``linkgraph ingest-sitemaps``: parse sitemap files (a file or a directory; XML sitemaps and
indexes, text sitemaps, RSS/Atom feeds, each plain or gzipped), one Spark task per batch of files,
and upsert their entries into ``sitemaps`` by URL; bad files and entries go to ``rejects``.  A URL
listed by several sitemaps keeps the entry with the latest lastmod, then the highest priority, then
the first sitemap path.  A file over ``scores.sitemap_max_bytes`` is one reject, its content never
loaded; ``_``/``.``-prefixed files (which Spark's file sources skip) are counted as skipped."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.inputs import sitemaps as SM
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, StepContext, reasons_text
from linkgraph.lake.lakepolicy import check_lake_policy, url_policy
from linkgraph.lake.paths import count_files
from linkgraph.steps.registry import RunPlan, Step, Task, option

log = logging.getLogger(__name__)

PARSED_SITEMAP = (
    "kind string, url string, priority double, lastmod timestamp, changefreq string, sitemap string, "
    "reason string, detail string, raw string"
)
_NULL_VALUES = (("url", "string"), ("priority", "double"), ("lastmod", "timestamp"), ("changefreq", "string"))


@dataclass
class SitemapReport(Report):
    source: str
    files: int = 0
    skipped: int = 0
    entries: int = 0
    rejected: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    unresolved_children: int = 0
    inserted: int = 0
    updated: int = 0
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return self.inserted + self.updated

    def summary(self) -> str:
        reasons = reasons_text(self.rejected_by_reason)
        return (
            f"ingest-sitemaps {self.source}: files={self.files} skipped={self.skipped} entries={self.entries} "
            f"rejected={self.rejected} "
            f"(by reason: {reasons}); sitemaps +{self.inserted} new, {self.updated} updated; "
            f"{self.unresolved_children} listed sitemaps not among the input files; in {self.seconds:.1f}s"
        )


def _limits(ctx: StepContext) -> SM.SitemapLimits:
    config = ctx.config
    return SM.SitemapLimits(max_bytes=config.scores.sitemap_max_bytes,
                            max_line_bytes=config.scores.sitemap_max_line_bytes,
                            max_url_length=config.ingest.max_url_length, url_policy=url_policy(config, ctx.spark))


def _parsed(files: DataFrame, limits: SM.SitemapLimits) -> DataFrame:
    """Every file's rows; a file over ``max_bytes`` (compressed) is one reject whose content is
    never read (``binaryFile`` applies the filter on ``length`` before it loads a file)."""
    readable = files.where(F.col("length") <= limits.max_bytes).select("path", "content")
    parsed = readable.mapInPandas(lambda batches: SM.parse_files(batches, limits), PARSED_SITEMAP)
    too_large = files.where(F.col("length") > limits.max_bytes).select(
        F.lit(SM.REJECT).alias("kind"), *[F.lit(None).cast(t).alias(c) for c, t in _NULL_VALUES],
        F.col("path").alias("sitemap"), F.lit(S.Reason.OVERSIZED_FIELD).alias(S.REASON),
        F.format_string(f"sitemap of %d bytes, larger than {limits.max_bytes}", "length").alias(S.DETAIL),
        F.lit(None).cast("string").alias("raw"))
    return parsed.unionByName(too_large)


def _run(ctx: StepContext, input_path: str) -> SitemapReport:
    report = SitemapReport(source=str(input_path))
    check_lake_policy(ctx.lake, ctx.config.urls)
    files = ctx.spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(str(input_path))
    parsed = _parsed(files, _limits(ctx)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        _count(files, parsed, report)
        report.skipped = count_files(ctx.spark, str(input_path)) - report.files
        bad = parsed.where(F.col("kind") == SM.REJECT).select(
            S.REASON, S.DETAIL, "sitemap", *T.raw_with_to_url(F.col("raw")))
        rejects = T.reject_rows(bad, F.col("sitemap")).persist(StorageLevel.MEMORY_AND_DISK)
        report.rejected_by_reason = T.count_by_reason(rejects)
        report.rejected = sum(report.rejected_by_reason.values())
        entries = best_entries(parsed.where(F.col("kind") == SM.ENTRY))
        report.inserted, report.updated = T.merge_sitemaps(ctx.lake, entries)
        T.write_rejects(ctx.lake, rejects)
        rejects.unpersist()
    finally:
        parsed.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


def _count(files: DataFrame, parsed: DataFrame, report: SitemapReport) -> None:
    """Files, entries and the listed child sitemaps that are not among the input files."""
    report.files = files.count()
    by_kind = {r["kind"]: r["count"] for r in parsed.groupBy("kind").count().collect()}
    report.entries = by_kind.get(SM.ENTRY, 0)
    file_names = {r["path"].rsplit("/", 1)[-1] for r in files.select("path").collect()}
    children = parsed.where(F.col("kind") == SM.CHILD).select("raw").distinct()
    report.unresolved_children = sum(
        1 for r in children.collect() if r["raw"].rstrip("/").rsplit("/", 1)[-1] not in file_names)


def best_entries(entries: DataFrame) -> DataFrame:
    """One entry per URL: the latest lastmod, then the highest priority, then the first sitemap."""
    best = F.max_by(F.struct(S.PRIORITY, S.LASTMOD, S.CHANGEFREQ, S.SITEMAP),
                    F.struct(F.coalesce(S.LASTMOD, F.lit("1900-01-01").cast("timestamp")), S.PRIORITY,
                             F.reverse(S.SITEMAP).alias("_tiebreak")))
    return entries.groupBy(S.URL).agg(best.alias("_e")).select(S.URL, "_e.*")


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    input: str = option("sitemap file or directory of them", required=True, path="input")


def run(ctx: StepContext, params: Params) -> SitemapReport:
    return _run(ctx, params.input)


def _for_run(plan: RunPlan, config: Config) -> Params | None:
    return Params(plan.sitemaps) if plan.sitemaps else None


STEP = Step(
    name="ingest-sitemaps", params=Params,
    help="upsert sitemap entries (XML, indexes, text, RSS/Atom; plain or gzipped) into `sitemaps`",
    run=run, reads=(T.PAGES,), writes=(T.SITEMAPS, T.REJECTS), after=("ingest",), for_run=_for_run,
    tasks=(Task("ingest_sitemaps", ("--input", "{param:sitemaps_root}/{ds}", "--if-present")),),
)
