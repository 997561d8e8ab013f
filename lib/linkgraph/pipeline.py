"""Pipeline steps: read (config) -> transform -> write (Delta).  Each step is what one job runs.

The CLI, the spark-submit entry points in ``jobs/`` and the notebooks all call these functions.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph import ingest as I
from linkgraph import readers
from linkgraph import schemas as S
from linkgraph.config import Config
from linkgraph.errors import ScoresError
from linkgraph.io.delta import Lake
from linkgraph.paths import display, qualify
from linkgraph.rank.graph import VERTEX as VERTEX_COLUMN
from linkgraph.reliability import guard_new_page_ids

log = logging.getLogger(__name__)


def new_run_id(started_at: datetime | None = None) -> str:
    """``20261130T012200-1a2b3c4d``: the start time (UTC) and a random suffix; sorts by start."""
    started_at = started_at or datetime.now(timezone.utc)
    return f"{started_at:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def reasons_text(by_reason: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(by_reason.items())) or "none"


def latest_rank_run_id(lake: Lake) -> str | None:
    """The run the ``pagerank`` table holds (it is replaced by each run); None before any."""
    if not lake.exists(S.PAGERANK_TABLE):
        return None
    first = lake.read(S.PAGERANK_TABLE).select(S.RUN_ID).first()
    return first[S.RUN_ID] if first else None


def _raw_with_to_url(to_url) -> list:
    """The raw edge-record columns of a reject row that is not an edge: all null but ``to_url``."""
    return [(to_url if f.name == S.TO_URL else F.lit(None)).cast("string").alias(f.name) for f in S.RAW_EDGE_RECORD.fields]


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
    # records that are a links row after the run (inserted, updated or already stored unchanged):
    # every record read is written or rejected, read = written + rejected
    written: int = 0

    @property
    def upserted(self) -> int:
        return self.links_inserted + self.links_updated

    def summary(self) -> str:
        reasons = reasons_text(self.rejected_by_reason)
        return (
            f"ingest {display(self.source)}: read={self.read} upserted={self.upserted} rejected={self.rejected} "
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

    Validation (including the input's column check and reading every file to its end) happens before
    any table is written; a truncated or corrupt file stops the step with ``InputSchemaError``.  When a
    concurrent job commits to one of the tables first, the whole step is re-run (it is idempotent)
    up to ``reliability.conflict_attempts`` times, see ``linkgraph.reliability``.
    """
    input_path = qualify(spark, input_path)
    # --- crawl inputs (WARC, WAT, Common Crawl graphs): linkgraph.crawl ---
    if fmt in readers.CRAWL_FORMATS:
        from linkgraph.crawl.step import crawl_ingest_step

        return crawl_ingest_step(spark, config, input_path, fmt)

    from linkgraph.reliability import retry_on_conflict, unreadable_input

    try:
        return retry_on_conflict(
            lambda: _ingest_step_once(spark, config, input_path, fmt), what=f"ingest {display(input_path)}",
            attempts=config.reliability.conflict_attempts, backoff_seconds=config.reliability.conflict_backoff_seconds,
        )
    except Exception as exc:
        # The whole input is read (and counted) before the first commit, so an unreadable file
        # stops the job with nothing written.
        reason = unreadable_input(exc)
        if reason is None:
            raise
        raise readers.InputSchemaError(
            f"input {display(input_path)} cannot be read to its end ({reason}: a truncated or corrupt file); nothing was ingested"
        ) from None


def _ingest_step_once(spark: SparkSession, config: Config, input_path: str, fmt: str) -> IngestReport:
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
        pages_read_version = lake.version(S.PAGES_TABLE)
        existing = lake.read(S.PAGES_TABLE)
        if existing.where(F.col(S.URL).isNull()).limit(1).count():
            raise readers.InputSchemaError(
                f"lake {lake.root} holds an arc-list graph (pages without URLs); ingest URL edges into a lake of their own"
            )
        links = links.persist(StorageLevel.MEMORY_AND_DISK)
        report.written = links.count()
        pages_batch = I.batch_pages(links)
        new_pages = I.new_pages_with_ids(pages_batch, existing, _max_page_id(lake) + 1)
        known_pages = pages_batch.join(existing.select(S.URL, S.PAGE_ID, S.URL_KEY), on=S.URL, how="inner")
        pages_update = new_pages.unionByName(known_pages.select(*[f.name for f in S.PAGES.fields]))
        report.pages_inserted, report.pages_updated = upsert_pages(lake, pages_update, key=S.URL)
        guard_new_page_ids(lake, pages_read_version, new_pages)

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
        report.written = valid.count()

        ensure_core_tables(lake)
        if lake.read(S.PAGES_TABLE).where(F.col(S.URL).isNotNull()).limit(1).count():
            raise readers.InputSchemaError(
                f"lake {lake.root} holds URL pages; an arc list's node ids need a lake of their own"
            )
        report.pages_inserted, report.pages_updated = upsert_pages(lake, I.arc_pages(valid), key=S.PAGE_ID)
        report.links_inserted, report.links_updated = upsert_links(lake, I.arc_links(valid))
        report.rejects_inserted = write_rejects(lake, rejects)
        rejects.unpersist()
    finally:
        arcs.unpersist()


def sample_input(directory: str | Path, seed: int = 7) -> Path:
    """Write the built-in sample crawl under ``directory``: edge records as JSON lines (the path
    returned), page signals as ``sample-pages.jsonl`` and its sitemaps as XML in ``sitemaps/``."""
    from linkgraph.sample import generate_sample_crawl, write_edges_jsonl, write_pages_jsonl, write_sitemaps_xml

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    crawl = generate_sample_crawl(seed)
    path = directory / "sample-edges.jsonl"
    write_edges_jsonl(crawl.edges, path)
    write_pages_jsonl(crawl.pages, directory / "sample-pages.jsonl")
    write_sitemaps_xml(crawl.sitemaps, directory / "sitemaps")
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
    lake.require(S.PAGES_TABLE, S.LINKS_TABLE)
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
        block_max_vertices=rc.block_max_vertices, checkpoint_every=rc.checkpoint_every, single_task=rc.single_task,
    )
    run_key = hashlib.sha256(
        repr((rc.engine, params, graph_version, graph.n, graph.n_edges, personalization.describe(), warm_start)).encode()
    ).hexdigest()[:16]
    run_id = new_run_id(started_at)

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


# --- indexes and domain analysis -----------------------------------------------------------------

ANALYSIS_TABLES = (
    S.FORWARD_INDEX_TABLE, S.REVERSE_INDEX_TABLE, S.ANCHOR_INDEX_TABLE, S.HOSTS_TABLE, S.HOST_LINKS_TABLE,
    S.DOMAINS_TABLE, S.DOMAIN_LINKS_TABLE, S.DOMAIN_AUTHORITY_TABLE, S.LINK_FARMS_TABLE,
    S.SYNDICATION_NETWORKS_TABLE,
)


@dataclass
class AnalysisReport:
    inputs: str
    up_to_date: bool = False
    domain_analysis: bool = True
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> str:
        if self.up_to_date:
            return f"analyze: tables already built from these inputs ({self.inputs}); nothing written"
        counts = " ".join(f"{table}={rows}" for table, rows in self.rows.items())
        scope = "" if self.domain_analysis else " (arc-list lake: no hosts, so no domain analysis)"
        return f"analyze: {counts}{scope} in {self.seconds:.1f}s"


def _analysis_inputs(lake: Lake, config: Config) -> str:
    import json

    inputs = {
        S.PAGES_TABLE: lake.version(S.PAGES_TABLE), S.LINKS_TABLE: lake.version(S.LINKS_TABLE),
        "analysis": dataclasses.asdict(config.analysis),
        "rank": {"damping": config.rank.damping, "tol": config.rank.tol,
                 "exclude_link_types": list(config.rank.exclude_link_types)},
    }
    return json.dumps(inputs, sort_keys=True)


def _by_page_id(df: DataFrame) -> DataFrame:
    """Range-partitioned and sorted by page_id, so Delta's per-file min/max statistics let a
    single-page lookup skip almost every file."""
    return df.repartitionByRange(S.PAGE_ID).sortWithinPartitions(S.PAGE_ID)


def analyze_step(spark: SparkSession, config: Config) -> AnalysisReport:
    """Build the indexes, host/domain graphs, domain authority, link farms and syndication
    networks from the lake's pages/links.

    Every table is rebuilt in one overwrite commit each, recording its inputs (table versions,
    config); when all of them already record the current inputs nothing is written.
    """
    from linkgraph import domains as D
    from linkgraph import indexes as X
    from linkgraph.rank.engine import BlockEngine, RankParams

    started = time.monotonic()
    ac = config.analysis
    lake = Lake(spark, config.lake)
    lake.require(S.PAGES_TABLE, S.LINKS_TABLE)
    report = AnalysisReport(inputs=_analysis_inputs(lake, config))
    if all(lake.built_from(table) == report.inputs for table in ANALYSIS_TABLES):
        report.up_to_date = True
        return report

    pages, links = lake.read(S.PAGES_TABLE), lake.read(S.LINKS_TABLE)

    def write(table: str, df: DataFrame) -> None:
        lake.overwrite(table, df, built_from=report.inputs)
        report.rows[table] = lake.rows_written(table)
        log.info("analyze: wrote %s (%d rows)", table, report.rows[table])

    write(S.FORWARD_INDEX_TABLE, _by_page_id(X.forward_index(links)))
    write(S.REVERSE_INDEX_TABLE, _by_page_id(X.reverse_index(links)))
    write(S.ANCHOR_INDEX_TABLE, _by_page_id(X.anchor_index(links, pages, ac.anchor_cap, ac.boilerplate_anchors)))

    nodes = D.page_nodes(pages).persist(StorageLevel.MEMORY_AND_DISK)
    if nodes.limit(1).count() == 0:
        report.domain_analysis = False
        nodes.unpersist()
        report.seconds = time.monotonic() - started
        return report
    located = D.located_links(links, nodes, tuple(config.rank.exclude_link_types)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        write(S.HOSTS_TABLE, D.host_stats(nodes, located).orderBy(S.REV_HOST))
        write(S.HOST_LINKS_TABLE, D.node_links(located, S.SRC_HOST, S.DST_HOST).orderBy(S.SRC_HOST, S.DST_HOST))
        write(S.DOMAINS_TABLE, D.domain_stats(nodes, located).orderBy(S.DOMAIN))
        write(S.DOMAIN_LINKS_TABLE, D.node_links(located, S.SRC_DOMAIN, S.DST_DOMAIN).orderBy(S.SRC_DOMAIN, S.DST_DOMAIN))
        domains, domain_links = lake.read(S.DOMAINS_TABLE), lake.read(S.DOMAIN_LINKS_TABLE)

        graph, index = D.domain_rank_graph(domains, domain_links, ac.authority_weight)
        params = RankParams(damping=config.rank.damping, tol=config.rank.tol, max_iter=ac.authority_max_iter,
                            block_max_vertices=config.rank.block_max_vertices)
        result = BlockEngine(spark, params).run(graph)
        authority = result.ranks.join(index, on=VERTEX_COLUMN, how="inner").select(S.DOMAIN, F.col(S.RANK).alias(S.AUTHORITY))
        run_id = new_run_id()
        log.info("analyze: domain authority over %d domains: %d iterations, converged=%s",
                 graph.n, result.iterations, result.converged)
        write(S.DOMAIN_AUTHORITY_TABLE, D.authority_scale(authority, run_id))
        index.unpersist()

        farms = D.link_farms(domain_links, ac.link_farm_share, ac.link_farm_min_links)
        write(S.LINK_FARMS_TABLE, farms)
        write(S.SYNDICATION_NETWORKS_TABLE,
              D.syndication_networks(D.syndication_pairs(domain_links, ac.syndication_min_links)))

    finally:
        located.unpersist()
        nodes.unpersist()
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


LINK_DIRECTIONS = ("out", "in", "anchors")


def _page_id_of(lake: Lake, pages: DataFrame, url: str) -> int:
    from linkgraph.urls import canonicalize

    canonical = canonicalize(url)
    if canonical.url is None:
        raise LookupError(f"not a valid URL ({canonical.reason}: {canonical.detail}): {url}")
    found = pages.where(F.col(S.URL) == canonical.url).select(S.PAGE_ID).first()
    if found is None:
        raise LookupError(f"no page {canonical.url} in lake {lake.root}")
    return found[S.PAGE_ID]


def lookup_links_compressed(spark: SparkSession, config: Config, direction: str, url: str, limit: int) -> list[dict]:
    """``out``/``in`` neighbours of one page from the compressed graph (``ConnectivityIndex``):
    the first ``limit`` as dicts of url and page_id, in id order; URL <-> id through ``pages``."""
    from linkgraph.compress import ConnectivityIndex

    lake = Lake(spark, config.lake)
    lake.require(S.PAGES_TABLE, S.LINKS_COMPRESSED_FORWARD_TABLE)
    pages = lake.read(S.PAGES_TABLE)
    page_id = _page_id_of(lake, pages, url)
    index = ConnectivityIndex.load(lake)
    ids = (index.out_links if direction == "out" else index.in_links)(page_id)[:limit]
    urls = {r[S.PAGE_ID]: r[S.URL] for r in pages.where(F.col(S.PAGE_ID).isin([int(i) for i in ids])).collect()}
    return [{S.URL: urls.get(int(i)), S.PAGE_ID: int(i)} for i in ids]


def lookup_links(spark: SparkSession, config: Config, direction: str, url: str) -> DataFrame:
    """What the indexes say about one page: ``out`` (url, page_id of each target), ``in`` (each
    source) or ``anchors`` (anchor, links, linking_domains, example_context), in index order.

    ``url`` is canonicalised like ingest; an unknown or malformed URL raises ``LookupError``.
    """

    lake = Lake(spark, config.lake)
    lake.require(S.PAGES_TABLE, S.FORWARD_INDEX_TABLE, S.REVERSE_INDEX_TABLE, S.ANCHOR_INDEX_TABLE)
    pages = lake.read(S.PAGES_TABLE)
    page_id = _page_id_of(lake, pages, url)
    if direction == "anchors":
        row = lake.read(S.ANCHOR_INDEX_TABLE).where(F.col(S.PAGE_ID) == page_id)
        return row.select(F.posexplode(S.ANCHORS).alias("position", "entry")).select(
            "position", "entry.*").orderBy("position").drop("position")
    table, ids = (S.FORWARD_INDEX_TABLE, S.TARGET_IDS) if direction == "out" else (S.REVERSE_INDEX_TABLE, S.SOURCE_IDS)
    neighbours = lake.read(table).where(F.col(S.PAGE_ID) == page_id).select(
        F.posexplode(ids).alias("position", S.PAGE_ID))
    return neighbours.join(pages.select(S.PAGE_ID, S.URL), on=S.PAGE_ID, how="left").orderBy("position").select(
        S.URL, S.PAGE_ID)


# --- sitemaps, external authority, seed scores, scope and frontier --------------------------------

@dataclass
class SitemapReport:
    source: str
    files: int = 0
    entries: int = 0
    rejected: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    unresolved_children: int = 0
    inserted: int = 0
    updated: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        reasons = reasons_text(self.rejected_by_reason)
        return (
            f"ingest-sitemaps {self.source}: files={self.files} entries={self.entries} rejected={self.rejected} "
            f"(by reason: {reasons}); sitemaps +{self.inserted} new, {self.updated} updated; "
            f"{self.unresolved_children} listed sitemaps not among the input files; in {self.seconds:.1f}s"
        )


_PARSED_SITEMAP = (
    "kind string, url string, priority double, lastmod timestamp, changefreq string, sitemap string, "
    "reason string, detail string, raw string"
)


def ingest_sitemaps_step(spark: SparkSession, config: Config, input_path: str) -> SitemapReport:
    """Parse sitemap files (a file or a directory, ``.xml`` or gzipped, indexes included), one
    Spark task per batch of files, and upsert their entries into ``sitemaps`` by URL; bad files
    and entries go to ``rejects``.  A URL listed by several sitemaps keeps the entry with the
    latest lastmod, then the highest priority, then the first sitemap path."""
    from linkgraph import sitemaps as SM

    started = time.monotonic()
    report = SitemapReport(source=str(input_path))
    lake = Lake(spark, config.lake)
    max_bytes = config.scores.sitemap_max_bytes
    files = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(str(input_path))
    parsed = files.select("path", "content").mapInPandas(
        lambda batches: SM.parse_files(batches, max_bytes), _PARSED_SITEMAP).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.files = files.count()
        by_kind = {r["kind"]: r["count"] for r in parsed.groupBy("kind").count().collect()}
        report.entries = by_kind.get(SM.ENTRY, 0)
        file_names = {r["path"].rsplit("/", 1)[-1] for r in files.select("path").collect()}
        children = parsed.where(F.col("kind") == SM.CHILD).select("raw").distinct()
        report.unresolved_children = sum(
            1 for r in children.collect() if r["raw"].rstrip("/").rsplit("/", 1)[-1] not in file_names)

        entries = parsed.where(F.col("kind") == SM.ENTRY)
        best = F.max_by(F.struct(S.PRIORITY, S.LASTMOD, S.CHANGEFREQ, S.SITEMAP),
                        F.struct(F.coalesce(S.LASTMOD, F.lit("1900-01-01").cast("timestamp")), S.PRIORITY,
                                 F.reverse(S.SITEMAP).alias("_tiebreak")))
        unique = entries.groupBy(S.URL).agg(best.alias("_e")).select(S.URL, "_e.*")
        bad = parsed.where(F.col("kind") == SM.REJECT).select(S.REASON, S.DETAIL, "sitemap", *_raw_with_to_url(F.col("raw")))
        rejects = I.reject_rows(bad, F.col("sitemap")).persist(StorageLevel.MEMORY_AND_DISK)
        report.rejected_by_reason = _count_rejects(rejects)
        report.rejected = sum(report.rejected_by_reason.values())

        lake.ensure(S.SITEMAPS_TABLE, S.SITEMAPS)
        lake.ensure(S.REJECTS_TABLE, S.REJECTS)
        columns = [f.name for f in S.SITEMAPS.fields if f.name != S.URL]
        changed = " OR ".join(f"NOT (t.{c} <=> s.{c})" for c in columns)
        metrics = lake.merge(S.SITEMAPS_TABLE, unique.select(*[f.name for f in S.SITEMAPS.fields]), keys=[S.URL],
                             update_condition=changed)
        report.inserted, report.updated = metrics.inserted, metrics.updated
        write_rejects(lake, rejects)
        rejects.unpersist()
    finally:
        parsed.unpersist()
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


def import_authority_step(spark: SparkSession, config: Config, input_path: str, fmt: str) -> tuple[int, int]:
    """Replace the ``external_authority`` rows of source ``fmt`` with the file's; returns
    (rows imported, rows rejected)."""
    from linkgraph.authority import read_external_authority

    lake = Lake(spark, config.lake)
    valid, bad = read_external_authority(spark, input_path, fmt)
    rejects = I.reject_rows(bad.select(S.REASON, S.DETAIL, *_raw_with_to_url(F.col("_name"))), str(input_path))
    replace_where = f"{S.SOURCE} = '{fmt}'" if lake.exists(S.EXTERNAL_AUTHORITY_TABLE) else None
    lake.overwrite(S.EXTERNAL_AUTHORITY_TABLE, valid, replace_where=replace_where)
    lake.ensure(S.REJECTS_TABLE, S.REJECTS)
    write_rejects(lake, rejects)
    imported = lake.read(S.EXTERNAL_AUTHORITY_TABLE).where(F.col(S.SOURCE) == fmt).count()
    return imported, bad.count()


@dataclass
class ScoresReport:
    run_id: str | None
    inputs: str
    up_to_date: bool = False
    seeds_found: int = 0
    pages: int = 0
    in_scope: int = 0
    frontier: int = 0
    flags_run: str | None = None
    seconds: float = 0.0

    def summary(self) -> str:
        if self.up_to_date:
            return "scores: seed_scores and frontier already built from these inputs; nothing written"
        return (f"scores run {self.run_id}: seeds found={self.seeds_found} pages={self.pages} in_scope={self.in_scope} "
                f"frontier={self.frontier} in {self.seconds:.1f}s")


@dataclass
class FlagsReport:
    """What ``flags_step`` did for the latest rank run (``rank_run`` None: nothing to flag yet)."""

    rank_run: str | None
    skipped: str | None = None
    up_to_date: bool = False
    pages: int = 0
    important: int = 0
    orphan: int = 0
    link_farm: int = 0
    syndication: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        if self.skipped:
            return f"flags: no page_flags ({self.skipped})"
        if self.up_to_date:
            return f"flags: page_flags of rank run {self.rank_run} already built from these inputs; nothing written"
        return (f"flags: page_flags of rank run {self.rank_run}: pages={self.pages} important={self.important} "
                f"orphan={self.orphan} link_farm={self.link_farm} syndication={self.syndication} in {self.seconds:.1f}s")


def _flags_inputs(lake: Lake, config: Config, rank_run_id: str) -> str:
    import json

    tables = (S.PAGES_TABLE, S.LINKS_TABLE, S.LINK_FARMS_TABLE, S.SYNDICATION_NETWORKS_TABLE)
    inputs = {table: lake.version(table) for table in tables}
    inputs.update({S.PAGERANK_TABLE: rank_run_id, "important_sigmas": config.analysis.important_sigmas,
                   "exclude_link_types": list(config.rank.exclude_link_types)})
    return json.dumps(inputs, sort_keys=True)


def flags_step(spark: SparkSession, config: Config) -> FlagsReport:
    """``page_flags`` of the latest rank run: important, orphan, link-farm and syndication flags
    (``domains.page_flags``).  Needs a rank run and the domain analysis (``link_farms``), no
    seeds; the run's rows are replaced in one commit, and nothing is written when they already
    record the current inputs."""
    from linkgraph import domains as D

    started = time.monotonic()
    lake = Lake(spark, config.lake)
    lake.require(S.PAGES_TABLE, S.LINKS_TABLE)
    rank_run_id = latest_rank_run_id(lake)
    if rank_run_id is None:
        return FlagsReport(rank_run=None, skipped="no rank run yet: run linkgraph pagerank")
    if not lake.exists(S.LINK_FARMS_TABLE):
        return FlagsReport(rank_run=rank_run_id, skipped="no domain analysis (an arc-list lake, or analyze not run)")
    report = FlagsReport(rank_run=rank_run_id)
    inputs = _flags_inputs(lake, config, rank_run_id)
    if lake.built_from(S.PAGE_FLAGS_TABLE) == inputs:
        report.up_to_date = True
        return report
    pages, links = lake.read(S.PAGES_TABLE), lake.read(S.LINKS_TABLE)
    located = D.located_links(links, D.page_nodes(pages), tuple(config.rank.exclude_link_types))
    ranks = lake.read(S.PAGERANK_TABLE).where(F.col(S.VECTOR_ID) == 0)
    networks = lake.read_or_empty(S.SYNDICATION_NETWORKS_TABLE, S.SYNDICATION_NETWORKS)
    flags = D.page_flags(pages, located, ranks, lake.read(S.LINK_FARMS_TABLE), networks, rank_run_id,
                         config.analysis.important_sigmas)
    replace_where = f"{S.RUN_ID} = '{rank_run_id}'" if lake.exists(S.PAGE_FLAGS_TABLE) else None
    lake.overwrite(S.PAGE_FLAGS_TABLE, _by_page_id(flags), built_from=inputs, replace_where=replace_where)
    counts = lake.read(S.PAGE_FLAGS_TABLE).where(F.col(S.RUN_ID) == rank_run_id).agg(
        F.count(F.lit(1)), F.count_if(S.IMPORTANT), F.count_if(S.ORPHAN), F.count_if(S.LINK_FARM_DOMAIN),
        F.count_if(F.col(S.SYNDICATION_NETWORK).isNotNull())).first()
    report.pages, report.important, report.orphan, report.link_farm, report.syndication = (int(c) for c in counts)
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


def _canonical_seeds(seeds: list[str]) -> list:
    from linkgraph.urls import canonicalize

    canonical = []
    for i, seed in enumerate(seeds):
        result = canonicalize(seed)
        if result.url is None:
            raise ScoresError(f"scores.seeds[{i}] is not a valid URL ({result.reason}): {seed!r}")
        canonical.append(result)
    return canonical


def _scores_inputs(lake: Lake, config: Config, rank_run_id: str | None) -> str:
    import json

    tables = (S.PAGES_TABLE, S.LINKS_TABLE, S.SITEMAPS_TABLE, S.DOMAIN_AUTHORITY_TABLE, S.DOMAIN_LINKS_TABLE,
              S.EXTERNAL_AUTHORITY_TABLE, S.LINK_FARMS_TABLE, S.SYNDICATION_NETWORKS_TABLE, S.PAGE_SIGNALS_TABLE,
              S.REWARD_SCORES_TABLE)
    inputs = {table: lake.version(table) for table in tables}
    inputs.update({S.PAGERANK_TABLE: rank_run_id, "scores": dataclasses.asdict(config.scores),
                   "important_sigmas": config.analysis.important_sigmas})
    return json.dumps(inputs, sort_keys=True)


def _frontier_priority(lake: Lake, config: Config, candidates: DataFrame) -> tuple[DataFrame, str]:
    sc = config.scores
    source = sc.frontier_priority
    if source == "seed_score":
        return candidates.withColumn(S.PRIORITY, F.col(S.SEED_SCORE)), source
    if source == "reward":
        lake.require(S.REWARD_SCORES_TABLE)
        reward = lake.read(S.REWARD_SCORES_TABLE).select(S.PAGE_ID, F.col(S.SCORE).alias(S.PRIORITY))
        return candidates.join(reward, on=S.PAGE_ID, how="left").fillna(0.0, subset=[S.PRIORITY]), source
    lake.require(S.PAGERANK_TABLE, S.RANK_RUNS_TABLE)
    ranks = lake.read(S.PAGERANK_TABLE)
    run_id = latest_rank_run_id(lake)
    run = lake.read(S.RANK_RUNS_TABLE).where(F.col(S.RUN_ID) == run_id).first()
    personalised = run is not None and run["personalization"] is not None
    if personalised != (source == "personalized_pagerank"):
        kind = "personalised" if personalised else "uniform"
        raise ScoresError(f"scores.frontier_priority is {source}, but the latest rank run {run_id} is {kind}; "
                          f"run `linkgraph pagerank` {'without' if personalised else 'with'} --topic/--seeds first")
    vector = ranks.where(F.col(S.VECTOR_ID) == sc.frontier_vector).select(S.PAGE_ID, F.col(S.RANK).alias(S.PRIORITY))
    return candidates.join(vector, on=S.PAGE_ID, how="left").fillna(0.0, subset=[S.PRIORITY]), source


def scores_step(spark: SparkSession, config: Config, seeds: list[str] | None = None) -> ScoresReport:
    """Page flags of the latest rank run (``flags_step``), seed scores with their scope decision
    (one row per page per run in ``seed_scores``) and the current ``frontier``.  Needs
    ``scores.seeds`` (or ``seeds``); uses domain analysis, sitemaps, external authority and
    rank/reward scores where those tables exist.  Nothing is written when every output records
    the current inputs."""
    from linkgraph import domains as D
    from linkgraph import scoring as SC
    from linkgraph.urls import reverse_host

    started = time.monotonic()
    sc = config.scores
    lake = Lake(spark, config.lake)
    lake.require(S.PAGES_TABLE, S.LINKS_TABLE)
    seeds = list(seeds if seeds is not None else sc.seeds)
    if not seeds:
        raise ScoresError("scores.seeds is empty: hop depth, scope and the frontier are measured from seed URLs")
    canonical_seeds = _canonical_seeds(seeds)
    flags_run = flags_step(spark, config).rank_run
    rank_run_id = latest_rank_run_id(lake)
    inputs = _scores_inputs(lake, config, rank_run_id) + f" seeds={sorted(s.url for s in canonical_seeds)}"
    if all(lake.built_from(table) == inputs for table in (S.SEED_SCORES_TABLE, S.FRONTIER_TABLE)):
        return ScoresReport(run_id=None, inputs=inputs, up_to_date=True, flags_run=flags_run)
    run_id = new_run_id()
    report = ScoresReport(run_id=run_id, inputs=inputs, flags_run=flags_run)

    pages, links = lake.read(S.PAGES_TABLE), lake.read(S.LINKS_TABLE)
    nodes = D.page_nodes(pages).persist(StorageLevel.MEMORY_AND_DISK)
    optional = {t: lake.read(t) if lake.exists(t) else None for t in (
        S.DOMAIN_AUTHORITY_TABLE, S.DOMAIN_LINKS_TABLE, S.EXTERNAL_AUTHORITY_TABLE, S.SITEMAPS_TABLE,
        S.LINK_FARMS_TABLE, S.SYNDICATION_NETWORKS_TABLE, S.PAGE_SIGNALS_TABLE)}
    try:
        seed_urls = [s.url for s in canonical_seeds]
        seed_pages = pages.where(F.col(S.URL).isin(*seed_urls)).select(S.PAGE_ID).persist()
        report.seeds_found = seed_pages.count()
        if report.seeds_found < len(set(seed_urls)):
            log.warning("scores: %d of %d seed URLs are not in the pages table", len(set(seed_urls)) - report.seeds_found,
                        len(set(seed_urls)))
        depths = SC.hop_depths(links, seed_pages, sc.hop_limit)
        in_house = optional[S.DOMAIN_AUTHORITY_TABLE]
        if in_house is None:
            in_house = spark.createDataFrame([], f"{S.DOMAIN} string, {S.DOMAIN_AUTHORITY} double")
        authority = SC.blended_authority(nodes, in_house, optional[S.EXTERNAL_AUTHORITY_TABLE],
                                         sc.external_authority_weight)
        terms = SC.seed_score_terms(pages, SC.in_link_counts(links), authority, optional[S.SITEMAPS_TABLE], depths,
                                    sc.unlisted_priority)
        scored = terms.withColumn(S.SEED_SCORE, SC.seed_score(sc.weights))
        seed_hosts = sorted({reverse_host(s.host) for s in canonical_seeds})
        seed_domains = spark.createDataFrame(
            [(reverse_host(s.registered_domain or s.host),) for s in canonical_seeds], f"{S.DOMAIN} string")
        domain_links = optional[S.DOMAIN_LINKS_TABLE]
        if domain_links is None:
            domain_links = spark.createDataFrame([], f"{S.SRC_DOMAIN} string, {S.DST_DOMAIN} string")
        scoped = SC.scope_columns(scored, nodes, seed_hosts, SC.domain_hops(domain_links, seed_domains),
                                  sc.scope_strategy, sc.affinity, sc.max_depth, sc.in_scope_threshold)
        seed_scores = scoped.withColumn(S.RUN_ID, F.lit(run_id)).select(
            *[F.col(f.name).cast(f.dataType) for f in S.SEED_SCORES.fields])
        replace_where = f"{S.RUN_ID} = '{run_id}'" if lake.exists(S.SEED_SCORES_TABLE) else None
        lake.overwrite(S.SEED_SCORES_TABLE, _by_page_id(seed_scores), built_from=inputs, replace_where=replace_where)

        this_run = lake.read(S.SEED_SCORES_TABLE).where(F.col(S.RUN_ID) == run_id)
        counts = this_run.agg(F.count("*").alias("pages"), F.count_if(S.IN_SCOPE).alias("in_scope")).first()
        report.pages, report.in_scope = counts["pages"], counts["in_scope"]
        crawled = links.select(F.col(S.SRC_ID).alias(S.PAGE_ID)).distinct()
        if optional[S.PAGE_SIGNALS_TABLE] is not None:
            fetched = optional[S.PAGE_SIGNALS_TABLE].join(pages, on=S.URL).select(S.PAGE_ID)
            crawled = crawled.unionByName(fetched).distinct()
        candidates = SC.frontier_candidates(this_run, crawled)
        if optional[S.SITEMAPS_TABLE] is not None:
            listed_only = SC.sitemap_only_candidates(optional[S.SITEMAPS_TABLE], pages, this_run, sc.weights,
                                                     sc.max_depth, sc.in_scope_threshold)
            candidates = candidates.unionByName(listed_only, allowMissingColumns=True)
        candidates, source = _frontier_priority(lake, config, candidates)
        ordered = I.number_in_order(candidates.withColumn("_order", -F.col(S.PRIORITY)), ["_order", S.URL], 1, "position")
        frontier = ordered.withColumn("priority_source", F.lit(source)).select(
            *[F.col(f.name).cast(f.dataType) for f in S.FRONTIER.fields])
        lake.overwrite(S.FRONTIER_TABLE, frontier.orderBy("position"), built_from=inputs)
        report.frontier = lake.read(S.FRONTIER_TABLE).count()
        seed_pages.unpersist()
    finally:
        nodes.unpersist()
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report


def export_frontier(spark: SparkSession, config: Config, top: int) -> list[dict]:
    """The first ``top`` frontier rows (position order) as dicts, for export by the CLI."""
    lake = Lake(spark, config.lake)
    lake.require(S.FRONTIER_TABLE)
    rows = lake.read(S.FRONTIER_TABLE).orderBy("position").limit(top).collect()
    return [row.asDict() for row in rows]
# --- compressed link storage -------------------------------------------------------------------

@dataclass
class CompressReport:
    """What ``compress_step`` did.  Bits count the compressed lists only (as WebGraph's
    ``.graph`` file), not the offsets index."""

    links_version: int
    arcs: int = 0
    forward_bits: int = 0
    reverse_bits: int = 0
    forward_blocks: int = 0
    reverse_blocks: int = 0
    rejected: int = 0
    offsets_bits: int = 0
    tables_written: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def bits_per_link(self, bits: int) -> float:
        return bits / self.arcs if self.arcs else 0.0

    def summary(self) -> str:
        written = ", ".join(self.tables_written) if self.tables_written else "none (up to date)"
        return (
            f"compress links@v{self.links_version}: arcs={self.arcs} "
            f"forward_bits_per_link={self.bits_per_link(self.forward_bits):.3f} "
            f"reverse_bits_per_link={self.bits_per_link(self.reverse_bits):.3f} "
            f"offsets_bits_per_link={self.bits_per_link(self.offsets_bits):.3f} "
            f"blocks={self.forward_blocks}+{self.reverse_blocks} rejected={self.rejected} "
            f"tables written: {written} in {self.seconds:.1f}s"
        )


def _compressed_table_state(lake: Lake, table: str) -> tuple[tuple | None, int, int, int]:
    """(build columns shared by every row, or None when missing, mixed or empty; blocks; arcs;
    bits) of a compressed table, in one small aggregation."""
    if not lake.exists(table):
        return None, 0, 0, 0
    df = lake.read(table)
    arcs = F.sum(S.ARC_COUNT) if S.ARC_COUNT in df.columns else F.lit(0)
    rows = (df.groupBy(*S.COMPRESSION_BUILD_COLUMNS)
            .agg(F.count(F.lit(1)).alias("blocks"), arcs.alias("arcs"), F.sum(S.BIT_LENGTH).alias("bits"))
            .limit(2).collect())
    if len(rows) != 1:
        return None, 0, 0, 0
    row = rows[0]
    return tuple(row[c] for c in S.COMPRESSION_BUILD_COLUMNS), int(row["blocks"]), int(row["arcs"]), int(row["bits"])


def compress_step(spark: SparkSession, config: Config) -> CompressReport:
    """Encode the lake's ``links`` into ``links_compressed_forward``, ``links_compressed_reverse``
    and their offsets index ``links_compressed_offsets`` (one overwrite commit each).

    A table already built from the current ``links`` version with the current ``compress``
    parameters is left alone, so a re-run changes nothing and a run killed between two commits is
    completed by the next one.  Links whose page ids the codec cannot store (outside
    ``[0, 2**62)``) go to ``rejects`` as INVALID_VALUE.
    """
    from linkgraph.compress import build as CB

    started = time.monotonic()
    lake = Lake(spark, config.lake)
    lake.require(S.LINKS_TABLE)
    cc = config.compress
    version = lake.version(S.LINKS_TABLE)
    report = CompressReport(links_version=version)
    wanted = (version, cc.block_size, cc.window_size, cc.max_ref_count, cc.min_interval_length, cc.residual_code)
    links = lake.read(S.LINKS_TABLE).select(S.SRC_ID, S.DST_ID)
    tables = (S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE)
    states = {table: _compressed_table_state(lake, table) for table in tables}
    if any(state[0] is None for state in states.values()) and not links.limit(1).count():
        # no links: empty tables are the up-to-date result (they carry no build row to compare)
        stale = [t for t in tables if not lake.exists(t) or states[t][0] is not None]
    else:
        stale = [t for t in tables if states[t][0] != wanted]

    totals = {t: states[t][1:] for t in tables}
    encoded: dict[str, DataFrame] = {}
    if stale:
        bad = links.where(~CB.encodable(links))
        report.rejected = bad.count()
        if report.rejected:
            detail = f"page id outside [0, {CB.MAX_PAGE_ID}]: cannot be compressed"
            raw = bad.select(
                F.col(S.SRC_ID).cast("string").alias(S.FROM_URL), F.col(S.DST_ID).cast("string").alias(S.TO_URL),
                *[F.lit(None).cast("string").alias(c) for c in S.OPTIONAL_EDGE_COLUMNS],
                F.lit(S.Reason.INVALID_VALUE).alias(S.REASON), F.lit(detail).alias(S.DETAIL),
            )
            lake.ensure(S.REJECTS_TABLE, S.REJECTS)
            write_rejects(lake, I.reject_rows(raw, f"{lake.location(S.LINKS_TABLE)}@v{version}"))
        good = links.where(CB.encodable(links))
        need = {
            S.FORWARD: S.LINKS_COMPRESSED_FORWARD_TABLE in stale or S.LINKS_COMPRESSED_OFFSETS_TABLE in stale,
            S.REVERSE: S.LINKS_COMPRESSED_REVERSE_TABLE in stale or S.LINKS_COMPRESSED_OFFSETS_TABLE in stale,
        }
        offsets_bits = 0
        for direction, table in ((S.FORWARD, S.LINKS_COMPRESSED_FORWARD_TABLE), (S.REVERSE, S.LINKS_COMPRESSED_REVERSE_TABLE)):
            if not need[direction]:
                continue
            arcs = CB.arcs_by_block(good, direction, cc.block_size)
            encoded[direction] = CB.encode_blocks(arcs, cc, version).persist(StorageLevel.MEMORY_AND_DISK)
            blocks, arc_count, bits, direction_offsets_bits = encoded[direction].agg(
                F.count(F.lit(1)), F.coalesce(F.sum(S.ARC_COUNT), F.lit(0)), F.coalesce(F.sum(S.BIT_LENGTH), F.lit(0)),
                F.coalesce(F.sum("offsets_bit_length"), F.lit(0))).first()
            totals[table] = (int(blocks), int(arc_count), int(bits))
            offsets_bits += int(direction_offsets_bits)
            if table in stale:
                lake.overwrite(table, CB.block_rows(encoded[direction]))
                report.tables_written.append(table)
        if S.LINKS_COMPRESSED_OFFSETS_TABLE in stale:
            offsets = CB.offsets_rows(encoded[S.FORWARD], S.FORWARD).unionByName(
                CB.offsets_rows(encoded[S.REVERSE], S.REVERSE))
            lake.overwrite(S.LINKS_COMPRESSED_OFFSETS_TABLE, offsets)
            report.tables_written.append(S.LINKS_COMPRESSED_OFFSETS_TABLE)
            totals[S.LINKS_COMPRESSED_OFFSETS_TABLE] = (0, 0, offsets_bits)

    report.forward_blocks, report.arcs, report.forward_bits = totals[S.LINKS_COMPRESSED_FORWARD_TABLE]
    report.reverse_blocks, _, report.reverse_bits = totals[S.LINKS_COMPRESSED_REVERSE_TABLE]
    report.offsets_bits = totals[S.LINKS_COMPRESSED_OFFSETS_TABLE][2]
    for cached in encoded.values():
        cached.unpersist()
    report.seconds = time.monotonic() - started
    log.info(report.summary())
    return report
