"""``linkgraph scores``: seed scores with their scope decision (one row per page per run in
``seed_scores``) and the current ``frontier``.

Seeds come from ``--seeds`` or ``scores.seeds``.  Without any, there is no focus to measure hop
depth and scope from: every page gets its in-link, authority and sitemap terms (hop depth null,
depth term 0), is in scope with scope score 1 (``linkgraph.graph.scoring.unscoped_columns``), and
the frontier holds every uncrawled page in priority order.  Uses domain analysis, sitemaps,
external authority, the page flags ``flags`` wrote (it runs after ``flags``; the ``scores``
subcommand runs ``flags`` first, ``Step.before``) and rank/reward scores where those tables exist.
Nothing is written when every output records the current inputs.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.errors import ScoresError
from linkgraph.graph import domains as D
from linkgraph.graph import scoring as SC
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.ids import number_in_order
from linkgraph.lake.lakepolicy import url_policy
from linkgraph.lake.rows import one_row
from linkgraph.lake.tables import latest_rank_run_id
from linkgraph.steps.registry import RunPlan, Step, Task, checked_run_id, option
from linkgraph.urls import CanonicalUrl, canonical_seed_urls, reverse_host

log = logging.getLogger(__name__)

OPTIONAL_INPUTS = (T.DOMAIN_AUTHORITY, T.DOMAIN_LINKS, T.EXTERNAL_AUTHORITY, T.SITEMAPS, T.LINK_FARMS,
                   T.SYNDICATION_NETWORKS, T.PAGE_SIGNALS)


@dataclass
class ScoresReport(Report):
    run_id: str | None
    inputs: str
    up_to_date: bool = False
    seeds_found: int = 0
    pages: int = 0
    in_scope: int = 0
    frontier: int = 0
    hop_rounds: int = 0
    flags_run: str | None = None
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return 0 if self.up_to_date else self.pages + self.frontier

    def summary(self) -> str:
        if self.up_to_date:
            return "scores: seed_scores and frontier already built from these inputs; nothing written"
        return (f"scores run {self.run_id}: seeds found={self.seeds_found} pages={self.pages} in_scope={self.in_scope} "
                f"frontier={self.frontier} hop_rounds={self.hop_rounds} in {self.seconds:.1f}s")


def scores_inputs(lake: Lake, config: Config, rank_run_id: str | None) -> str:
    tables = (T.PAGES, T.LINKS, T.SITEMAPS, T.DOMAIN_AUTHORITY, T.DOMAIN_LINKS, T.EXTERNAL_AUTHORITY, T.LINK_FARMS,
              T.SYNDICATION_NETWORKS, T.PAGE_SIGNALS, T.REWARD_SCORES, T.PAGE_FLAGS)
    inputs: dict[str, object] = {table.name: table.version(lake) for table in tables}
    inputs.update({S.PAGERANK_TABLE: rank_run_id, "scores": dataclasses.asdict(config.scores),
                   "important_sigmas": config.analysis.important_sigmas})
    return json.dumps(inputs, sort_keys=True)


def _run(ctx: StepContext, seeds: list[str] | None = None) -> ScoresReport:
    lake = ctx.lake
    T.require(lake, T.PAGES, T.LINKS)
    seeds = list(seeds if seeds is not None else ctx.config.scores.seeds)
    canonical = canonical_seed_urls(seeds, "scores.seeds", url_policy(ctx.config, ctx.spark))
    if not canonical:
        log.info("scores: no seed URLs (scores.seeds, --seeds): every page is in scope, without hop depth")
    flags_run = flags_of_rank_run(lake)
    seed_urls = sorted(str(s.url) for s in canonical)
    inputs = scores_inputs(lake, ctx.config, latest_rank_run_id(lake)) + f" seeds={seed_urls}"
    if all(table.built_from(lake) == inputs for table in (T.SEED_SCORES, T.FRONTIER)):
        return ScoresReport(run_id=None, inputs=inputs, up_to_date=True, flags_run=flags_run)
    report = ScoresReport(run_id=ctx.run_id, inputs=inputs, flags_run=flags_run)
    pages, links = T.PAGES.read(lake), T.LINKS.read(lake)
    optional = {t.name: t.read(lake) if t.exists(lake) else None for t in OPTIONAL_INPUTS}
    nodes = D.page_nodes(pages).persist(StorageLevel.MEMORY_AND_DISK)
    seed_pages = _seed_pages(pages, canonical, report)
    try:
        seed_scores = _seed_scores(ctx, canonical, seed_pages, pages, links, nodes, optional, report)
        T.SEED_SCORES.replace_run(lake, seed_scores, ctx.run_id, inputs, ctx.config.retention)
        this_run = T.SEED_SCORES.read(lake).where(F.col(S.RUN_ID) == ctx.run_id)
        counts = one_row(this_run.agg(F.count("*").alias("pages"), F.count_if(S.IN_SCOPE).alias("in_scope")))
        report.pages, report.in_scope = counts["pages"], counts["in_scope"]
        T.FRONTIER.overwrite(lake, _frontier(ctx, this_run, pages, links, optional, seeded=bool(canonical)),
                             built_from=inputs)
        report.frontier = T.FRONTIER.read(lake).count()
    finally:
        seed_pages.unpersist()
        nodes.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


def flags_of_rank_run(lake: Lake) -> str | None:
    """The latest rank run when ``page_flags`` holds its flags (written by ``flags``), else None."""
    rank_run_id = latest_rank_run_id(lake)
    if rank_run_id is None or not T.PAGE_FLAGS.exists(lake):
        return None
    flagged = T.PAGE_FLAGS.read(lake).where(F.col(S.RUN_ID) == rank_run_id).limit(1).count()
    return rank_run_id if flagged else None


def _seed_pages(pages: DataFrame, seeds: list[CanonicalUrl], report: ScoresReport) -> DataFrame:
    """The page ids of the seeds (persisted), counted into the report."""
    seed_urls = [s.url for s in seeds]
    matching = F.col(S.URL).isin(*seed_urls) if seed_urls else F.lit(False)
    seed_pages = pages.where(matching).select(S.PAGE_ID).persist()
    report.seeds_found = seed_pages.count()
    if report.seeds_found < len(set(seed_urls)):
        log.warning("scores: %d of %d seed URLs are not in the pages table", len(set(seed_urls)) - report.seeds_found,
                    len(set(seed_urls)))
    return seed_pages


def _seed_scores(ctx: StepContext, seeds: list[CanonicalUrl], seed_pages: DataFrame, pages: DataFrame,
                 links: DataFrame, nodes: DataFrame, optional: dict[str, DataFrame | None],
                 report: ScoresReport) -> DataFrame:
    """This run's ``seed_scores`` rows: score terms, the weighted score and the scope decision;
    the hop search's rounds go into ``report``."""
    sc, spark = ctx.config.scores, ctx.spark
    in_house = optional[S.DOMAIN_AUTHORITY_TABLE]
    if in_house is None:
        in_house = spark.createDataFrame([], f"{S.DOMAIN} string, {S.DOMAIN_AUTHORITY} double")
    authority = SC.blended_authority(nodes, in_house, optional[S.EXTERNAL_AUTHORITY_TABLE],
                                     sc.external_authority_weight)
    search = SC.hop_search(links, seed_pages, SC.hop_rounds(sc.hop_limit, sc.max_depth))
    report.hop_rounds = search.rounds
    terms = SC.seed_score_terms(pages, SC.in_link_counts(links), authority, optional[S.SITEMAPS_TABLE],
                                search.depths, sc.unlisted_priority)
    scored = terms.withColumn(S.SEED_SCORE, SC.seed_score(sc.weights))
    if not seeds:
        return _with_run_id(SC.unscoped_columns(scored), ctx.run_id)
    seed_hosts = sorted({reverse_host(str(s.host)) for s in seeds})
    seed_domains = spark.createDataFrame(
        [(reverse_host(str(s.registered_domain or s.host)),) for s in seeds], f"{S.DOMAIN} string")
    domain_links = optional[S.DOMAIN_LINKS_TABLE]
    if domain_links is None:
        domain_links = spark.createDataFrame([], f"{S.SRC_DOMAIN} string, {S.DST_DOMAIN} string")
    scoped = SC.scope_columns(scored, nodes, seed_hosts, SC.domain_hops(domain_links, seed_domains),
                              sc.scope_strategy, sc.affinity, sc.max_depth, sc.in_scope_threshold)
    return _with_run_id(scoped, ctx.run_id)


def _with_run_id(scoped: DataFrame, run_id: str) -> DataFrame:
    return scoped.withColumn(S.RUN_ID, F.lit(run_id)).select(
        *[F.col(f.name).cast(f.dataType) for f in S.SEED_SCORES.fields])


def _frontier(ctx: StepContext, this_run: DataFrame, pages: DataFrame, links: DataFrame,
              optional: dict[str, DataFrame | None], seeded: bool = True) -> DataFrame:
    """The ``frontier``: pages not crawled yet (and sitemap-only URLs) in priority order."""
    sc = ctx.config.scores
    crawled = links.select(F.col(S.SRC_ID).alias(S.PAGE_ID)).distinct()
    signals = optional[S.PAGE_SIGNALS_TABLE]
    if signals is not None:
        crawled = crawled.unionByName(signals.join(pages, on=S.URL).select(S.PAGE_ID)).distinct()
    candidates = SC.frontier_candidates(this_run, crawled)
    sitemaps = optional[S.SITEMAPS_TABLE]
    if sitemaps is not None:
        listed_only = SC.sitemap_only_candidates(sitemaps, pages, this_run, sc.weights, sc.max_depth,
                                                 sc.in_scope_threshold, seeded=seeded)
        candidates = candidates.unionByName(listed_only, allowMissingColumns=True)
    candidates, source = _frontier_priority(ctx.lake, ctx.config, candidates)
    ordered = number_in_order(candidates.withColumn("_order", -F.col(S.PRIORITY)), ["_order", S.URL], 1, "position")
    return ordered.withColumn("priority_source", F.lit(source)).select(
        *[F.col(f.name).cast(f.dataType) for f in S.FRONTIER.fields]).orderBy("position")


def _frontier_priority(lake: Lake, config: Config, candidates: DataFrame) -> tuple[DataFrame, str]:
    sc = config.scores
    source = sc.frontier_priority
    if source == "seed_score":
        return candidates.withColumn(S.PRIORITY, F.col(S.SEED_SCORE)), source
    if source == "reward":
        T.REWARD_SCORES.require(lake)
        reward = T.REWARD_SCORES.read(lake).select(S.PAGE_ID, F.col(S.SCORE).alias(S.PRIORITY))
        return candidates.join(reward, on=S.PAGE_ID, how="left").fillna(0.0, subset=[S.PRIORITY]), source
    T.require(lake, T.PAGERANK, T.RANK_RUNS)
    ranks = T.PAGERANK.read(lake)
    run_id = latest_rank_run_id(lake)
    run = T.RANK_RUNS.read(lake).where(F.col(S.RUN_ID) == F.lit(run_id)).first()
    personalised = run is not None and run["personalization"] is not None
    if personalised != (source == "personalized_pagerank"):
        kind = "personalised" if personalised else "uniform"
        raise ScoresError(f"scores.frontier_priority is {source}, but the latest rank run {run_id} is {kind}; "
                          f"run `linkgraph pagerank` {'without' if personalised else 'with'} --topic/--seeds first")
    vector = ranks.where(F.col(S.VECTOR_ID) == sc.frontier_vector).select(S.PAGE_ID, F.col(S.RANK).alias(S.PRIORITY))
    return candidates.join(vector, on=S.PAGE_ID, how="left").fillna(0.0, subset=[S.PRIORITY]), source


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    seeds: str | None = option("comma-separated seed URLs (default: scores.seeds)", metavar="URLS")
    run_id: str | None = option("run id of the seed scores (a scheduler's day; default: a new one)",
                                metavar="RUN_ID")


def run(ctx: StepContext, params: Params) -> ScoresReport:
    if params.run_id is not None:
        ctx = dataclasses.replace(ctx, run_id=checked_run_id(params.run_id))
    seeds = [url.strip() for url in params.seeds.split(",") if url.strip()] if params.seeds else None
    return _run(ctx, seeds)


def _for_run(plan: RunPlan, config: Config) -> Params | str:
    if not plan.seeds:
        return "scores: seed_scores and frontier skipped (no seed URLs: set scores.seeds in the config)"
    return Params(",".join(plan.seeds))


STEP = Step(
    name="scores", help="page flags, seed scores, scope decisions and the crawl frontier", params=Params, run=run,
    reads=(T.PAGES, T.LINKS, T.PAGE_FLAGS, T.PAGERANK, T.RANK_RUNS, T.REWARD_SCORES,
           *OPTIONAL_INPUTS),
    writes=(T.SEED_SCORES, T.FRONTIER), after=("flags", "reward", "ingest-sitemaps"), for_run=_for_run,
    before=("flags",), tasks=(Task("scores", ("--run-id", "{ds}-scores")),),
)
