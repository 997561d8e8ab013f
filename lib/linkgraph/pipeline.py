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


def _widen_sightings(first: str, last: str) -> tuple[str, dict[str, str]]:
    """MERGE condition and update of a sighting interval: earliest ``first``, latest ``last``.
    The condition is false when the source adds nothing, so a re-run touches no row."""
    condition = f"NOT (t.{first} <=> least(t.{first}, s.{first})) OR NOT (t.{last} <=> greatest(t.{last}, s.{last}))"
    return condition, {first: f"least(t.{first}, s.{first})", last: f"greatest(t.{last}, s.{last})"}


def upsert_pages(lake: Lake, pages: DataFrame, key: str) -> tuple[int, int]:
    """MERGE pages on ``key``: insert new ones, widen first/last seen of known ones."""
    condition, widened = _widen_sightings(S.FIRST_SEEN_AT, S.LAST_SEEN_AT)
    metrics = lake.merge(S.PAGES_TABLE, pages, keys=[key], update_set=widened, update_condition=condition)
    return metrics.inserted, metrics.updated


def upsert_links(lake: Lake, links: DataFrame) -> tuple[int, int]:
    """MERGE links on (src_id, dst_id); a newer sighting replaces anchor/context/type/position."""
    condition, widened = _widen_sightings(S.DISCOVERED_AT, S.LAST_SEEN_AT)
    newer = "(s.last_seen_at > t.last_seen_at OR (t.last_seen_at IS NULL AND s.last_seen_at IS NOT NULL))"
    replaced = {c: f"CASE WHEN {newer} THEN s.{c} ELSE t.{c} END"
                for c in (S.ANCHOR_TEXT, S.CONTEXT_WINDOW, S.LINK_TYPE, S.POSITION)}
    metrics = lake.merge(S.LINKS_TABLE, links, keys=[S.SRC_ID, S.DST_ID], update_set={**replaced, **widened},
                         update_condition=condition)
    return metrics.inserted, metrics.updated


def write_rejects(lake: Lake, rejects: DataFrame) -> int:
    """Insert-only MERGE on ``reject_id``: the same bad record is stored once, however often it
    is ingested."""
    return lake.merge(S.REJECTS_TABLE, rejects, keys=[S.REJECT_ID], update_set={}).inserted


def ingest_step(spark: SparkSession, config: Config, input_path: str, fmt: str) -> IngestReport:
    """Read ``input_path`` in format ``fmt`` and upsert it into the lake's pages/links/rejects.

    Validation (including the input's column check) happens before any table is written.
    """
    # --- crawl inputs (WARC, WAT, Common Crawl graphs): linkgraph.crawl ---
    if fmt in readers.CRAWL_FORMATS:
        from linkgraph.crawl.step import crawl_ingest_step

        return crawl_ingest_step(spark, config, input_path, fmt)
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


# --- PageRank ----------------------------------------------------------------------------------

@dataclass
class PersonalizationSpec:
    """Where teleport vectors come from; empty means uniform (classic PageRank)."""

    seeds: list[list[str]] = field(default_factory=list)
    topics: list[list[str]] = field(default_factory=list)
    table: str | None = None

    def describe(self) -> str | None:
        if self.seeds:
            return "seeds:" + " | ".join(",".join(g) for g in self.seeds)
        if self.topics:
            return "topics:" + " | ".join(",".join(t) for t in self.topics)
        if self.table:
            return f"table:{self.table}"
        return None


@dataclass
class RankRunReport:
    run_id: str
    engine: str
    iterations: int
    converged: bool
    vectors: int
    pages: int
    links_followed: int
    final_l1: float | None
    seconds: float
    resumed_from: int | None = None

    def summary(self) -> str:
        state = "converged" if self.converged else "NOT converged (iteration cap reached)"
        resumed = f", resumed from iteration {self.resumed_from}" if self.resumed_from else ""
        return (
            f"pagerank run {self.run_id}: engine={self.engine} pages={self.pages} links={self.links_followed} "
            f"vectors={self.vectors} iterations={self.iterations} {state} final_l1={self.final_l1:.3g}{resumed} "
            f"in {self.seconds:.1f}s"
        )


def _log_iteration(stat) -> None:
    log.info(
        "pagerank iteration %d: l1_change=%.3e dangling_mass=%.6f active_vectors=%d %.2fs",
        stat.iteration, stat.l1, stat.dangling_mass, stat.active_vectors, stat.seconds,
    )


def pagerank_step(
    spark: SparkSession,
    config: Config,
    personalization: PersonalizationSpec | None = None,
    warm_start: bool = False,
) -> RankRunReport:
    """PageRank over the lake's pages/links; writes ``pagerank`` (overwrite) and ``rank_runs``
    (append).  Config ``rank`` gives engine, damping, tolerance, cap and checkpointing."""
    import hashlib
    import uuid
    from datetime import datetime, timezone

    from linkgraph.rank import teleport as T
    from linkgraph.rank.engine import BlockEngine, RankParams
    from linkgraph.rank.graph import VERTEX, build_rank_graph
    from linkgraph.rank.naive import naive_pagerank
    from linkgraph.rank.state import DeltaStateStore

    started_at = datetime.now(timezone.utc)
    started = time.monotonic()
    rc = config.rank
    personalization = personalization or PersonalizationSpec()
    lake = Lake(spark, config.lake)
    for table in (S.PAGES_TABLE, S.LINKS_TABLE):
        if not lake.exists(table):
            raise readers.InputSchemaError(f"table '{table}' not found in lake {lake.config.path}: run ingest first")
    graph_version = lake.version(S.LINKS_TABLE)
    pages, links = lake.read(S.PAGES_TABLE), lake.read(S.LINKS_TABLE)
    graph = build_rank_graph(pages, links, tuple(rc.exclude_link_types))
    if graph.n == 0:
        raise readers.InputSchemaError("the pages table is empty: nothing to rank")
    graph.edges = graph.edges.persist(StorageLevel.MEMORY_AND_DISK)
    graph.n_edges = graph.edges.count()

    teleport, n_vectors = None, 1
    if personalization.seeds:
        teleport, n_vectors = T.from_seed_urls(graph.vertices, pages, personalization.seeds), len(personalization.seeds)
        T.check_covered(teleport, [",".join(g) for g in personalization.seeds])
    elif personalization.topics:
        teleport, n_vectors = T.from_topics(graph.vertices, pages, links, personalization.topics), len(personalization.topics)
        T.check_covered(teleport, [",".join(t) for t in personalization.topics])
    elif personalization.table:
        teleport, n_vectors = T.from_table(graph.vertices, lake.read(personalization.table))
        T.check_covered(teleport, [f"vector {k}" for k in range(n_vectors)])
    if teleport is not None:
        teleport = teleport.persist(StorageLevel.MEMORY_AND_DISK)

    params = RankParams(
        damping=rc.damping, tol=rc.tol, max_iter=rc.max_iter, blocks=rc.blocks,
        block_max_vertices=rc.block_max_vertices, checkpoint_every=rc.checkpoint_every,
    )
    run_key = hashlib.sha256(
        repr((rc.engine, params, graph_version, graph.n, graph.n_edges, personalization.describe(), warm_start)).encode()
    ).hexdigest()[:16]
    run_id = f"{started_at:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"

    initial = None
    if warm_start and lake.exists(S.PAGERANK_TABLE):
        previous = lake.read(S.PAGERANK_TABLE).select(S.PAGE_ID, S.VECTOR_ID, S.RANK)
        initial = previous.join(graph.vertices, on=S.PAGE_ID, how="inner").select(VERTEX, S.VECTOR_ID, S.RANK)

    if rc.engine == "fast":
        state = DeltaStateStore(lake, S.RANK_STATE_TABLE, run_key)
        result = BlockEngine(spark, params).run(graph, teleport, n_vectors, initial=initial, state=state,
                                                progress=_log_iteration)
    elif rc.engine == "naive":
        if n_vectors != 1:
            raise readers.InputSchemaError("the naive engine computes one vector at a time")
        result = naive_pagerank(graph, params, teleport, progress=_log_iteration)
    else:
        from linkgraph.rank.gf import graphframes_pagerank

        result = graphframes_pagerank(graph, params, teleport, progress=_log_iteration)

    ranks = (
        result.ranks.join(graph.vertices, on=VERTEX, how="inner")
        .join(pages.select(S.PAGE_ID, S.URL), on=S.PAGE_ID, how="left")
        .select(
            F.col(S.PAGE_ID), F.col(S.URL), F.col(S.VECTOR_ID).cast("int"), F.col(S.RANK),
            F.lit(run_id).alias(S.RUN_ID),
        )
    )
    lake.overwrite(S.PAGERANK_TABLE, ranks)
    if rc.engine == "fast":
        state.clear()
    seconds = time.monotonic() - started
    final_l1 = result.history[-1].l1 if result.history else None
    run_row = (
        run_id, started_at.replace(tzinfo=None), rc.engine, rc.damping, rc.tol, rc.max_iter, personalization.describe(),
        n_vectors, bool(initial is not None), result.resumed_from, graph_version, graph.n, graph.n_edges,
        result.iterations, result.converged, [int(i) for i in result.vector_iterations], final_l1, seconds,
        [(h.iteration, h.l1, h.dangling_mass, h.seconds, h.active_vectors) for h in result.history],
    )
    lake.append(S.RANK_RUNS_TABLE, spark.createDataFrame([run_row], S.RANK_RUNS))
    report = RankRunReport(run_id, rc.engine, result.iterations, result.converged, n_vectors, graph.n,
                           graph.n_edges, final_l1, seconds, result.resumed_from)
    log.info(report.summary())
    for cached in (graph.edges, graph.vertices, teleport):
        if cached is not None:
            cached.unpersist()
    return report
