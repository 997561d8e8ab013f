"""``linkgraph pagerank``: PageRank (or topic-sensitive PageRank) over the lake's pages/links;
writes ``pagerank`` (overwrite) and ``rank_runs`` (append).  Config ``rank`` gives engine,
damping, tolerance, cap and checkpointing.

A uniform run with ``scores.trusted_seeds`` (fast engine) computes two vectors in one pass:
vector 0 the PageRank, vector 1 the PageRank personalised on the trusted pages (TrustRank; both
sum to 1; ``linkgraph.graph.spam``)."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.errors import EmptyTeleportError, MissingTableError, UsageError
from linkgraph.inputs import readers
from linkgraph.lake import schemas as S
from linkgraph.lake import tables
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.lakepolicy import url_policy
from linkgraph.rank import teleport as T
from linkgraph.rank.engine import BlockEngine, IterationStat, RankParams, RankResult
from linkgraph.rank.gf import graphframes_pagerank
from linkgraph.rank.graph import VERTEX, RankGraph, build_rank_graph
from linkgraph.rank.naive import naive_pagerank
from linkgraph.steps.rank_state import DeltaStateStore
from linkgraph.steps.registry import RunPlan, Step, Task, checked_run_id, comma_groups, option, with_params
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy
from linkgraph.urls import canonical_seed_urls

log = logging.getLogger(__name__)


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
class RankRunReport(Report):
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
    done_before: bool = False   # a run of this id had finished on the same links version: nothing run

    @property
    def rows_written(self) -> int:
        return 0 if self.done_before else self.pages * self.vectors

    def exit_code(self, config: Config) -> int:
        return 0 if self.converged else config.rank.not_converged_exit_code

    def summary(self) -> str:
        state = "converged" if self.converged else "NOT converged (iteration cap reached)"
        resumed = f", resumed from iteration {self.resumed_from}" if self.resumed_from else ""
        if self.done_before:
            resumed += ", finished before on this links version: nothing run"
        return (
            f"pagerank run {self.run_id}: engine={self.engine} pages={self.pages} links={self.links_followed} "
            f"vectors={self.vectors} iterations={self.iterations} {state} final_l1={self.final_l1:.3g}{resumed} "
            f"in {self.seconds:.1f}s"
        )


def _run(ctx: StepContext, personalization: PersonalizationSpec | None = None,
        warm_start: bool = False) -> RankRunReport:
    """Rank the pinned ``links`` version: graph, teleport vectors, the engine, then the writes."""
    rc, lake = ctx.config.rank, ctx.lake
    personalization = personalization or PersonalizationSpec()
    tables.require(lake, tables.PAGES, tables.LINKS)
    graph_version = tables.LINKS.version(lake)
    pages, links = tables.PAGES.read(lake), tables.LINKS.read(lake)
    graph = build_rank_graph(pages, links, tuple(rc.exclude_link_types))
    if graph.n == 0:
        raise readers.InputSchemaError("the pages table is empty: nothing to rank")
    graph.edges = graph.edges.persist(StorageLevel.MEMORY_AND_DISK)
    graph.n_edges = graph.edges.count()
    policy = url_policy(ctx.config, ctx.spark)
    teleport, n_vectors = teleport_vectors(lake, graph, pages, links, personalization, policy)
    trusted = _trusted_seeds(ctx, personalization, policy)
    if trusted:
        teleport, n_vectors = trust_teleport(graph, pages, trusted, policy)
    params = RankParams.from_config(rc)
    # "host_order": vertices numbered by url_key, so a rank state saved by a version that numbered
    # them by page id is never resumed
    key = (rc.engine, params, graph_version, graph.n, graph.n_edges, personalization.describe(), warm_start,
           tuple(trusted), "host_order")
    run_key = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
    initial = _warm_start(lake, graph) if warm_start else None
    result = _rank(ctx, graph, params, teleport, n_vectors, initial, run_key)
    report = RankRunReport(ctx.run_id, rc.engine, result.iterations, result.converged, n_vectors, graph.n,
                           graph.n_edges, result.history[-1].l1 if result.history else None, ctx.elapsed(),
                           result.resumed_from)
    tables.RANK_RUNS.append(lake, ctx.spark.createDataFrame(
        [_run_row(ctx, report, personalization, initial is not None, graph_version, result)], S.RANK_RUNS))
    log.info(report.summary())
    for cached in (graph.edges, graph.vertices, teleport):
        if cached is not None:
            cached.unpersist()
    return report


def finished_run(lake: Lake, run_id: str) -> RankRunReport | None:
    """The report of run ``run_id`` when ``rank_runs`` records it on the current ``links``
    version (a re-run of a scheduler's day finds its own run); else None."""
    if not tables.RANK_RUNS.exists(lake) or not tables.LINKS.exists(lake):
        return None
    row = (tables.RANK_RUNS.read(lake)
           .where((F.col(S.RUN_ID) == run_id) & (F.col("graph_version") == F.lit(tables.LINKS.version(lake))))
           .first())
    if row is None:
        return None
    return RankRunReport(run_id, row["engine"], row["iterations"], row["converged"], row["vectors"], row["pages"],
                         row["links_followed"], row["final_l1_change"], 0.0, row["resumed_from"], done_before=True)


def teleport_vectors(lake: Lake, graph: RankGraph, pages: DataFrame, links: DataFrame,
                     personalization: PersonalizationSpec,
                     policy: UrlPolicy = DEFAULT_POLICY) -> tuple[DataFrame | None, int]:
    """(teleport vectors persisted, or None for uniform; how many vectors); seed URLs are
    canonicalised under ``policy``."""
    teleport, n_vectors = None, 1
    if personalization.seeds:
        teleport = T.from_seed_urls(graph.page_vertices, pages, personalization.seeds, policy)
        n_vectors = len(personalization.seeds)
        T.check_covered(teleport, [",".join(g) for g in personalization.seeds])
    elif personalization.topics:
        teleport = T.from_topics(graph.page_vertices, pages, links, personalization.topics)
        n_vectors = len(personalization.topics)
        T.check_covered(teleport, [",".join(t) for t in personalization.topics])
    elif personalization.table:   # a table of the user's, not one the lake declares
        if not lake.exists(personalization.table):
            raise MissingTableError(f"--personalization table '{personalization.table}' not found in lake {lake.root}")
        teleport, n_vectors = T.from_table(graph.page_vertices, lake.read(personalization.table))
        T.check_covered(teleport, [f"vector {k}" for k in range(n_vectors)])
    if teleport is not None:
        teleport = teleport.persist(StorageLevel.MEMORY_AND_DISK)
    return teleport, n_vectors


def _trusted_seeds(ctx: StepContext, personalization: PersonalizationSpec, policy: UrlPolicy) -> list[str]:
    """The canonical trusted seed URLs when this run computes a trust vector (else [])."""
    seeds = ctx.config.scores.trusted_seeds
    if not seeds:
        return []
    if personalization.describe() is not None:
        log.warning("pagerank: scores.trusted_seeds ignored: spam mass needs a uniform run (no --seeds/--topic)")
        return []
    if ctx.config.rank.engine != "fast":
        log.warning("pagerank: scores.trusted_seeds ignored: the %s engine computes one vector", ctx.config.rank.engine)
        return []
    return sorted({str(c.url) for c in canonical_seed_urls(list(seeds), "scores.trusted_seeds", policy)})


def trust_teleport(graph: RankGraph, pages: DataFrame, trusted: list[str],
                   policy: UrlPolicy = DEFAULT_POLICY) -> tuple[DataFrame, int]:
    """(teleport vectors persisted: 0 uniform over all pages, 1 uniform over the trusted pages; 2)."""
    uniform = T.uniform_vector(pages.sparkSession, 0)   # implicit: one marker row, not n entries
    trust = T.from_seed_urls(graph.page_vertices, pages, [trusted], policy).withColumn(S.VECTOR_ID, F.lit(1))
    teleport = uniform.unionByName(trust).persist(StorageLevel.MEMORY_AND_DISK)
    core = teleport.where(F.col(S.VECTOR_ID) == 1).count()
    if core == 0:
        teleport.unpersist()
        raise EmptyTeleportError(f"scores.trusted_seeds: no trusted seed is a page of the lake: {', '.join(trusted)}")
    log.info("pagerank: trust vector over %d trusted pages", core)
    return teleport, 2


def _warm_start(lake: Lake, graph: RankGraph) -> DataFrame | None:
    """The previous run's ranks of the graph's vertices (None before any run)."""
    if not tables.PAGERANK.exists(lake):
        return None
    previous = tables.PAGERANK.read(lake).select(S.PAGE_ID, S.VECTOR_ID, S.RANK)
    return previous.join(graph.page_vertices, on=S.PAGE_ID, how="inner").select(VERTEX, S.VECTOR_ID, S.RANK)


def _log_iteration(stat: IterationStat) -> None:
    log.info(
        "pagerank iteration %d: l1_change=%.3e dangling_mass=%.6f active_vectors=%d %.2fs",
        stat.iteration, stat.l1, stat.dangling_mass, stat.active_vectors, stat.seconds,
    )


def _rank(ctx: StepContext, graph: RankGraph, params: RankParams, teleport: DataFrame | None, n_vectors: int,
          initial: DataFrame | None, run_key: str) -> RankResult:
    """Run the configured engine and replace ``pagerank`` with its ranks."""
    engine, lake = ctx.config.rank.engine, ctx.lake
    state = DeltaStateStore(lake, tables.RANK_STATE, run_key) if engine == "fast" else None
    if state is not None:
        result = BlockEngine(ctx.spark, params).run(graph, teleport, n_vectors, initial=initial, state=state,
                                                    progress=_log_iteration)
    elif engine == "naive":
        if n_vectors != 1:
            raise readers.InputSchemaError("the naive engine computes one vector at a time")
        result = naive_pagerank(graph, params, teleport, progress=_log_iteration)
    else:
        result = graphframes_pagerank(graph, params, teleport, progress=_log_iteration)
    pages = tables.PAGES.read(lake)
    tables.PAGERANK.overwrite(lake, page_ranks(result.ranks, graph.page_vertices, pages, ctx.run_id),
                              built_from=tables.rank_run_marker(ctx.run_id))
    if state is not None:
        state.clear()
    return result


def page_ranks(ranks: DataFrame, vertices: DataFrame, pages: DataFrame, run_id: str) -> DataFrame:
    """Engine ranks (vertex, vector_id, rank) as ``pagerank`` rows."""
    return (
        ranks.join(vertices, on=VERTEX, how="inner")
        .join(pages.select(S.PAGE_ID, S.URL), on=S.PAGE_ID, how="left")
        .select(
            F.col(S.PAGE_ID), F.col(S.URL), F.col(S.VECTOR_ID).cast("int"), F.col(S.RANK),
            F.lit(run_id).alias(S.RUN_ID),
        )
    )


def _run_row(ctx: StepContext, report: RankRunReport, personalization: PersonalizationSpec, warm: bool,
             graph_version: int | None, result: RankResult) -> tuple:
    """The run's ``rank_runs`` row."""
    rc = ctx.config.rank
    return (
        report.run_id, ctx.started_at.replace(tzinfo=None), rc.engine, rc.damping, rc.tol, rc.max_iter,
        personalization.describe(), report.vectors, warm, result.resumed_from, graph_version, report.pages,
        report.links_followed, result.iterations, result.converged, [int(i) for i in result.vector_iterations],
        report.final_l1, report.seconds,
        [(h.iteration, h.l1, h.dangling_mass, h.seconds, h.active_vectors) for h in result.history],
    )


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    engine: str | None = option("default: rank.engine (fast)", choices=("fast", "graphframes", "naive"),
                                config="rank.engine")
    topic: list[str] = option("comma-separated topic terms; repeat for several vectors computed in one pass",
                              metavar="TERMS", group="teleport", default=[])
    seeds: list[str] = option("comma-separated seed URLs; repeat for several vectors computed in one pass",
                              metavar="URLS", group="teleport", default=[])
    personalization: str | None = option("lake table of (page_id, weight[, vector_id])", metavar="TABLE",
                                         group="teleport")
    tol: float | None = option("stop when the L1 change is below this (default 1e-6)", config="rank.tol")
    max_iter: int | None = option("iteration cap (default 100)", config="rank.max_iter")
    warm_start: bool = option("start from the previous run's ranks", default=False)
    run_id: str | None = option("run id to use (a scheduler's day): a run of this id that finished on the current "
                                "links version is not run again", metavar="RUN_ID")

    def personalization_spec(self) -> PersonalizationSpec:
        return PersonalizationSpec(seeds=comma_groups(self.seeds), topics=comma_groups(self.topic),
                                   table=self.personalization)


def run(ctx: StepContext, params: Params) -> RankRunReport:
    ctx = with_params(ctx, params)
    if ctx.config.rank.engine == "graphframes" and params.tol is not None:
        raise UsageError("--tol does not apply to the graphframes engine, which runs --max-iter iterations "
                         "(rank.max_iter): leave --tol out")
    if params.run_id is not None:
        ctx = dataclasses.replace(ctx, run_id=checked_run_id(params.run_id))
        done = finished_run(ctx.lake, params.run_id)
        if done is not None:
            log.info(done.summary())
            return done
    return _run(ctx, params.personalization_spec(), warm_start=params.warm_start)


def _for_run(plan: RunPlan, config: Config) -> Params:
    return Params()


STEP = Step(
    name="pagerank", help="PageRank / topic-sensitive PageRank over the lake's links", params=Params, run=run,
    reads=(tables.PAGES, tables.LINKS, tables.RANK_STATE, tables.PAGERANK),
    writes=(tables.PAGERANK, tables.RANK_RUNS, tables.RANK_STATE),
    after=("analyze",), for_run=_for_run,
    # in this order: the uniform run commits `pagerank` last, so flags, scores and the next day's
    # warm start read it; each task's run id follows from the day, so a re-run finds its run
    tasks=(Task("personalized_pagerank", ("--topic", "{param:topic}", "--run-id", "{ds}-personalized")),
           Task("pagerank", ("--warm-start", "--run-id", "{ds}-pagerank"), after=("personalized_pagerank",))),
)
