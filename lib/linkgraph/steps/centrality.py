"""``linkgraph centrality --level host|domain|page``: harmonic centrality (HyperBall,
``linkgraph.rank.hyperball``) and PageRank of the host, domain or page graph
(``linkgraph.graph.levelgraph``) into ``host_centrality`` / ``domain_centrality`` / ``page_centrality``
(overwrite, one run) and ``centrality_runs`` (append: parameters, iterations and the per-iteration
history, as ``rank_runs``).

``rank`` orders by harmonic centrality (1 = most central; ties by name), ``pagerank_rank`` by the
PageRank over the same graph (``rank`` config: damping, tolerance, cap), the two columns Common
Crawl publishes for its host and domain graphs.  The PageRank of the host and domain graphs can
weigh each edge (``--weight`` / ``centrality.weight``: ``links``, the page links it stands for, or
``pages``, the distinct pages linking; ``none``, each linked pair once, by default): a source's
rank is then split in proportion to its edges' weights, so one farm page's thousands of links to
a host weigh as they are, not as one site's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.errors import HyperBallTooLarge, UsageError
from linkgraph.graph.levelgraph import DST, NAME, NODE_ID, SRC, WEIGHT_COLUMNS, level_graph, required_tables
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config_analysis import CENTRALITY_WEIGHTS
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.ids import number_in_order
from linkgraph.rank.engine import BlockEngine, RankParams
from linkgraph.rank.graph import VERTEX, RankGraph
from linkgraph.rank.hyperball import BallStep, HyperBall, relative_standard_error, require_fits, size_text
from linkgraph.rank.plan import CentralityCost, centrality_cost
from linkgraph.steps.registry import Step, option, with_params

log = logging.getLogger(__name__)


@dataclass
class CentralityReport(Report):
    run_id: str
    level: str
    registers: int
    weight: str = "none"
    nodes: int = 0
    arcs: int = 0
    iterations: int = 0
    converged: bool = False
    seconds: float = 0.0
    history: list[BallStep] = field(default_factory=list)

    @property
    def rows_written(self) -> int:
        return self.nodes

    def summary(self) -> str:
        state = "converged" if self.converged else "NOT converged (iteration cap reached)"
        weighted = f" weight={self.weight}" if self.weight != "none" else ""
        return (f"centrality run {self.run_id}: level={self.level}{weighted} nodes={self.nodes} arcs={self.arcs} "
                f"registers={self.registers} (relative standard error {relative_standard_error(self.registers):.4f}) "
                f"iterations={self.iterations} {state} in {self.seconds:.1f}s")


def _log_step(step: BallStep) -> None:
    log.info("centrality iteration %d: changed_counters=%d harmonic_added=%.6g %.2fs", step.iteration, step.changed,
             step.added, step.seconds)


def _run(ctx: StepContext, level: str) -> CentralityReport:
    if level not in S.CENTRALITY_LEVELS:
        raise UsageError(f"--level must be one of {', '.join(S.CENTRALITY_LEVELS)}, got {level!r}")
    lake, cc, rc = ctx.lake, ctx.config.centrality, ctx.config.rank
    nodes_table, links_table = required_tables(level)
    if cc.weight != "none" and level not in WEIGHT_COLUMNS:
        raise UsageError(f"--weight {cc.weight} (centrality.weight): the {level} graph has no edge weights; "
                         f"weights apply to the {' and '.join(WEIGHT_COLUMNS)} levels")
    T.require(lake, nodes_table, links_table)
    graph = level_graph(nodes_table.read(lake), links_table.read(lake), level, cc.weight)
    report = CentralityReport(run_id=ctx.run_id, level=level, registers=cc.registers, weight=cc.weight,
                              nodes=graph.n)
    edges = graph.edges.persist(StorageLevel.MEMORY_AND_DISK)
    vertices = graph.vertices.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.arcs = edges.count()
        hyperball = HyperBall(ctx.spark, cc.registers, cc.block_max_nodes, cc.max_iter, cc.single_task,
                              cc.checkpoint_every, block_bytes=rc.block_bytes)
        need = hyperball.needs(graph.n, report.arcs)
        if need.total > rc.block_bytes:
            require_fits(need, rc.block_bytes, f"the {level} graph", _fitting_level(ctx, hyperball, level))
        _require_affordable(ctx, hyperball, level, graph.n, report.arcs)
        balls = hyperball.run(edges.select(SRC, DST), graph.n, progress=_log_step, arcs=report.arcs)
        params = RankParams.from_config(rc)
        ranked = BlockEngine(ctx.spark, params).run(RankGraph(vertices=None, edges=edges, n=graph.n))
        rows = centrality_rows(vertices, balls.harmonic, ranked.ranks, level, balls.iterations, ctx.run_id)
        T.CENTRALITY[level].overwrite(lake, rows)
        report.iterations, report.converged, report.history = balls.iterations, balls.converged, balls.history
    finally:
        edges.unpersist()
        vertices.unpersist()
    report.seconds = ctx.elapsed()
    T.CENTRALITY_RUNS.append(lake, ctx.spark.createDataFrame([_run_row(ctx, report)], S.CENTRALITY_RUNS))
    log.info(report.summary())
    return report


def _cost(ctx: StepContext, nodes: int, arcs: int) -> CentralityCost:
    cc = ctx.config.centrality
    return centrality_cost(nodes, arcs, cc.registers, cc.block_max_nodes, ctx.config.rank.block_bytes)


def _require_affordable(ctx: StepContext, hyperball: HyperBall, level: str, nodes: int, arcs: int) -> None:
    """Refuse, before any iteration, a run that would shuffle more than ``centrality.max_shuffle_bytes``
    (``linkgraph.rank.plan.centrality_cost``), naming what it needs and the levels that fit."""
    cost, limit = _cost(ctx, nodes, arcs), ctx.config.centrality.max_shuffle_bytes
    if not cost.fits(limit):
        raise HyperBallTooLarge(
            f"centrality: HyperBall over the {level} graph ({nodes:,} nodes, {arcs:,} arcs) would need "
            f"{cost.describe()}, over centrality.max_shuffle_bytes ({size_text(limit)}); refused before any "
            f"iteration; {_fitting_level(ctx, hyperball, level)}")


def _fitting_level(ctx: StepContext, hyperball: HyperBall, refused: str) -> str:
    """Which of the other levels' graphs in the lake fit the block budget and the shuffle limit
    (sized from their tables' rows), for the refusal's message."""
    fitting = []
    for level in S.CENTRALITY_LEVELS:
        nodes_table, links_table = required_tables(level)
        if level == refused or not (nodes_table.exists(ctx.lake) and links_table.exists(ctx.lake)):
            continue
        nodes, arcs = nodes_table.read(ctx.lake).count(), links_table.read(ctx.lake).count()
        need, cost = hyperball.needs(nodes, arcs), _cost(ctx, nodes, arcs)
        if need.total <= hyperball.block_bytes and cost.fits(ctx.config.centrality.max_shuffle_bytes):
            fitting.append(f"the {level} level fits ({nodes:,} nodes, {need.describe()}; {cost.describe()})")
    if fitting:
        return "; ".join(fitting)
    return ("no level fits: raise rank.block_bytes or centrality.max_shuffle_bytes, or lower "
            "centrality.registers")


def centrality_rows(vertices: DataFrame, harmonic: DataFrame, ranks: DataFrame, level: str, iterations: int,
                    run_id: str) -> DataFrame:
    """The ``<level>_centrality`` rows: names, harmonic centrality and PageRank with their ranks."""
    schema = S.CENTRALITY_SCHEMAS[level]
    name = schema.fields[0].name
    joined = (
        vertices.select(NODE_ID, NAME)
        .join(harmonic.select(F.col("node").alias(NODE_ID), F.col("harmonic").alias(S.HARMONIC)), on=NODE_ID,
              how="left")
        .join(ranks.where(F.col(S.VECTOR_ID) == 0).select(F.col(VERTEX).alias(NODE_ID),
                                                          F.col(S.RANK).alias(S.PAGERANK_VALUE)),
              on=NODE_ID, how="left")
        .fillna(0.0, subset=[S.HARMONIC, S.PAGERANK_VALUE])
        .withColumn("_by_harmonic", -F.col(S.HARMONIC))
        .withColumn("_by_pagerank", -F.col(S.PAGERANK_VALUE))
    )
    by_harmonic = number_in_order(joined, ["_by_harmonic", NAME], 1, S.RANK)
    both = number_in_order(by_harmonic, ["_by_pagerank", NAME], 1, S.PAGERANK_RANK)
    return both.select(
        F.col(NAME).cast(schema.fields[0].dataType).alias(name), S.HARMONIC, S.RANK, S.PAGERANK_VALUE,
        S.PAGERANK_RANK, F.lit(iterations).alias(S.ITERATIONS), F.lit(run_id).alias(S.RUN_ID),
    ).select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])


def _run_row(ctx: StepContext, report: CentralityReport) -> tuple:
    return (
        report.run_id, ctx.started_at.replace(tzinfo=None), report.level, report.registers,
        relative_standard_error(report.registers), report.nodes, report.arcs, report.iterations, report.converged,
        report.seconds, [(s.iteration, s.changed, s.added, s.seconds) for s in report.history],
    )


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    level: str = option("the graph to rank", required=True, choices=S.CENTRALITY_LEVELS, default="")
    registers: int | None = option("HyperLogLog registers per counter, a power of 2 in 16..65536 "
                                   "(default: centrality.registers, 256)", metavar="M",
                                   config="centrality.registers")
    weight: str | None = option("edge weight of the host or domain PageRank: none (each linked pair once), links "
                                "(the page links between them), pages (the distinct pages linking) "
                                "(default: centrality.weight, none)", choices=CENTRALITY_WEIGHTS,
                                config="centrality.weight")


def run(ctx: StepContext, params: Params) -> CentralityReport:
    return _run(with_params(ctx, params), params.level)


STEP = Step(
    name="centrality", help="harmonic centrality (HyperBall) and PageRank of the host, domain or page graph into "
                            "<level>_centrality", params=Params, run=run,
    reads=(T.PAGES, T.LINKS, T.HOSTS, T.HOST_LINKS, T.DOMAINS, T.DOMAIN_LINKS),
    writes=(*T.CENTRALITY.values(), T.CENTRALITY_RUNS),
    after=("analyze",),
)
