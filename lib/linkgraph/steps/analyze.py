"""``linkgraph analyze``: the indexes, host/domain graphs, domain authority, link farms and
syndication networks of the lake's pages/links.

Every table is rebuilt in one overwrite commit each, recording its inputs (table versions,
config); when all of them already record the current inputs nothing is written.  A table that
already records them (written by an earlier run that was killed before it finished) is kept,
so a re-run after a crash writes only the tables that run did not commit.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.graph import domains as D
from linkgraph.graph import indexes as X
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.config_analysis import AUTHORITY_WEIGHTS, AnalysisConfig
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.ids import new_run_id
from linkgraph.lake.tables import by_page_id
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import VERTEX
from linkgraph.steps.registry import RunPlan, Step, option, with_params

log = logging.getLogger(__name__)

# the names of the tables ``analyze`` writes (declared in ``linkgraph.lake.tables.ANALYSIS``)
ANALYSIS_TABLES = tuple(table.name for table in T.ANALYSIS)


@dataclass
class AnalysisReport(Report):
    inputs: str
    up_to_date: bool = False
    domain_analysis: bool = True
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return sum(self.rows.values())

    def summary(self) -> str:
        if self.up_to_date:
            return f"analyze: tables already built from these inputs ({self.inputs}); nothing written"
        counts = " ".join(f"{table}={rows}" for table, rows in self.rows.items())
        scope = "" if self.domain_analysis else " (arc-list lake: no hosts, so no domain analysis)"
        return f"analyze: {counts}{scope} in {self.seconds:.1f}s"


def analysis_inputs(lake: Lake, config: Config) -> str:
    inputs = {
        S.PAGES_TABLE: T.PAGES.version(lake), S.LINKS_TABLE: T.LINKS.version(lake),
        "analysis": dataclasses.asdict(config.analysis),
        "rank": {"damping": config.rank.damping, "tol": config.rank.tol,
                 "exclude_link_types": list(config.rank.exclude_link_types)},
    }
    return json.dumps(inputs, sort_keys=True)


Write = Callable[[str, DataFrame], None]


def run(ctx: StepContext, params: Params) -> AnalysisReport:
    """Indexes, then (for a lake with hosts) the host and domain graphs and what is built on them."""
    ctx = with_params(ctx, params)
    lake, ac = ctx.lake, ctx.config.analysis
    T.require(lake, T.PAGES, T.LINKS)
    report = AnalysisReport(inputs=analysis_inputs(lake, ctx.config))
    # what each table's last commit recorded (one look-up each): tables already built from these
    # inputs, by this run's killed predecessor, are kept
    previous = {table.name: table.last_build(lake) for table in T.ANALYSIS}
    if all(last is not None and last[0] == report.inputs for last in previous.values()):
        report.up_to_date = True
        return report
    # read the versions recorded in ``inputs`` (a commit landing meanwhile is not mixed in)
    versions = json.loads(report.inputs)
    pages = T.PAGES.read_version(lake, versions[S.PAGES_TABLE])
    links = T.LINKS.read_version(lake, versions[S.LINKS_TABLE])

    def built(table: str) -> bool:
        """True when ``table`` was already built from these inputs (by a run killed later)."""
        last = previous[table]
        if last is None or last[0] != report.inputs:
            return False
        report.rows[table] = last[1]
        log.info("analyze: %s already built from these inputs; kept", table)
        return True

    def write(table: str, df: DataFrame) -> None:
        if built(table):
            return
        declared = T.declaration(table)
        declared.overwrite(lake, df, built_from=report.inputs)
        report.rows[table] = declared.rows_written(lake)
        log.info("analyze: wrote %s (%d rows)", table, report.rows[table])

    for table, rows in index_tables(links, pages, ac).items():
        write(table, rows)

    nodes = D.page_nodes(pages).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        if nodes.limit(1).count() == 0:
            report.domain_analysis = False
            report.seconds = ctx.elapsed()
            return report
        _domain_analysis(ctx, nodes, links, write, built)
    finally:
        nodes.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


def index_tables(links: DataFrame, pages: DataFrame, ac: AnalysisConfig) -> dict[str, DataFrame]:
    """The look-ups' tables, laid out by page id (a page's lookup reads one file): forward and
    reverse id lists in chunks of ``max_list_entries``, and each page's anchor texts."""
    chunked = (S.PAGE_ID, S.CHUNK)
    return {
        S.FORWARD_INDEX_TABLE: by_page_id(X.forward_index(links, ac.max_list_entries)).sortWithinPartitions(*chunked),
        S.REVERSE_INDEX_TABLE: by_page_id(X.reverse_index(links, ac.max_list_entries)).sortWithinPartitions(*chunked),
        S.ANCHOR_INDEX_TABLE: by_page_id(
            X.anchor_index(links, pages, ac.anchor_cap, ac.boilerplate_anchors, ac.max_list_entries)),
    }


def _domain_analysis(ctx: StepContext, nodes: DataFrame, links: DataFrame, write: Write,
                     built: Callable[[str], bool]) -> None:
    """Host and domain graphs over integer host/domain ids (names joined back on the aggregates).

    Tables are clustered rather than globally sorted: ``hosts``/``domains`` range-partitioned by
    name (lookups by name skip files), the link tables sorted within their partitions (they are
    read whole, by joins and aggregates, never in a stored order)."""
    lake, ac = ctx.lake, ctx.config.analysis
    ids = D.node_ids(nodes).persist()
    located = D.located_link_ids(links, ids, tuple(ctx.config.rank.exclude_link_types))
    located = located.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        write(S.HOSTS_TABLE, _by_name(D.host_stats(nodes, located, ids), S.REV_HOST))
        write(S.HOST_LINKS_TABLE, D.node_links(located, ids, "host").sortWithinPartitions(S.SRC_HOST, S.DST_HOST))
        write(S.DOMAINS_TABLE, _by_name(D.domain_stats(nodes, located, ids), S.DOMAIN))
        write(S.DOMAIN_LINKS_TABLE,
              D.node_links(located, ids, "domain").sortWithinPartitions(S.SRC_DOMAIN, S.DST_DOMAIN))
        domains, domain_links = T.DOMAINS.read(lake), T.DOMAIN_LINKS.read(lake)
        if not built(S.DOMAIN_AUTHORITY_TABLE):   # its PageRank is the costly part: not run again
            _write_domain_authority(ctx, domains, domain_links, write)
        write(S.LINK_FARMS_TABLE, D.link_farms(domain_links, ac.link_farm_share, ac.link_farm_min_links))
        write(S.SYNDICATION_NETWORKS_TABLE,
              D.syndication_networks(D.syndication_pairs(domain_links, ac.syndication_min_links),
                                     ac.max_list_entries))
    finally:
        located.unpersist()
        ids.unpersist()


def _by_name(df: DataFrame, name: str) -> DataFrame:
    return df.repartitionByRange(name).sortWithinPartitions(name)


def _write_domain_authority(ctx: StepContext, domains: DataFrame, domain_links: DataFrame, write: Write) -> None:
    """PageRank over the weighted domain graph, scaled (``domains.authority_scale``)."""
    ac, rc = ctx.config.analysis, ctx.config.rank
    graph, index = D.domain_rank_graph(domains, domain_links, ac.authority_weight)
    params = RankParams.from_config(rc, max_iter=ac.authority_max_iter)
    result = BlockEngine(ctx.spark, params).run(graph)
    authority = result.ranks.join(index, on=VERTEX, how="inner").select(S.DOMAIN, F.col(S.RANK).alias(S.AUTHORITY))
    log.info("analyze: domain authority over %d domains: %d iterations, converged=%s",
             graph.n, result.iterations, result.converged)
    write(S.DOMAIN_AUTHORITY_TABLE, D.authority_scale(authority, new_run_id()))
    index.unpersist()


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    authority_weight: str | None = option("how domain authority weighs a domain-graph edge: linking_pages (its "
                                          "distinct linking pages), links (its followed links) or none (once) "
                                          "(default: analysis.authority_weight, linking_pages)",
                                          choices=AUTHORITY_WEIGHTS, config="analysis.authority_weight")


def _for_run(plan: RunPlan, config: Config) -> Params:
    """``linkgraph run`` analyzes with the config's weight."""
    return Params()


STEP = Step(
    name="analyze", help="indexes, host/domain graphs, domain authority, link farms, syndication networks and "
                         "page flags", params=Params, run=run,
    reads=(T.PAGES, T.LINKS), writes=T.ANALYSIS,
    after=("ingest", "reward"), for_run=_for_run, then=("flags",),
)
