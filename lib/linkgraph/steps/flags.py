"""``page_flags`` of the latest rank run: important, orphan, link-farm and syndication flags
(``domains.page_flags``).  Needs a rank run and the domain analysis (``link_farms``), no seeds;
the run's rows are replaced in one commit, and nothing is written when they already record the
current inputs.

When the rank run has a trust vector (``scores.trusted_seeds``), the pages also get their spam
mass (``linkgraph.graph.spam``) and ``domains`` is rewritten once with the per-domain sums and mass
(keeping the analysis' ``built_from``, so ``analyze`` still finds itself up to date)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.graph import domains as D
from linkgraph.graph import spam as SP
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.rows import one_row
from linkgraph.lake.tables import latest_rank_run_id
from linkgraph.steps.registry import NoParams, Step, no_params

log = logging.getLogger(__name__)


@dataclass
class FlagsReport(Report):
    """What ``flags`` did for the latest rank run (``rank_run`` None: nothing to flag yet)."""

    rank_run: str | None
    skipped: str | None = None
    up_to_date: bool = False
    pages: int = 0
    important: int = 0
    orphan: int = 0
    link_farm: int = 0
    syndication: int = 0
    spam_suspect: int | None = None   # None: the rank run has no trust vector
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return 0 if self.skipped or self.up_to_date else self.pages

    @property
    def quiet(self) -> bool:
        return self.rank_run is None

    def summary(self) -> str:
        if self.skipped:
            return f"flags: no page_flags ({self.skipped})"
        if self.up_to_date:
            return f"flags: page_flags of rank run {self.rank_run} already built from these inputs; nothing written"
        return (f"flags: page_flags of rank run {self.rank_run}: pages={self.pages} important={self.important} "
                f"orphan={self.orphan} link_farm={self.link_farm} syndication={self.syndication} "
                + ("" if self.spam_suspect is None else f"spam_suspect={self.spam_suspect} ")
                + f"in {self.seconds:.1f}s")


def has_trust_vector(lake: Lake, rank_run_id: str) -> bool:
    """Whether the rank run is uniform with a trust vector (vector 1, ``steps.pagerank``)."""
    if not T.RANK_RUNS.exists(lake):
        return False
    runs = T.RANK_RUNS.read(lake).where(F.col(S.RUN_ID) == rank_run_id)
    run = runs.select("personalization", "vectors").first()
    return run is not None and run["personalization"] is None and run["vectors"] == 2


def _write_domain_spam(lake: Lake, config: Config, page_spam: DataFrame, pages: DataFrame) -> None:
    """``domains`` rewritten with the run's per-domain spam mass, in one commit that keeps the
    analysis' ``built_from``."""
    if not T.DOMAINS.exists(lake):
        return
    spam = SP.domain_spam(page_spam, D.page_nodes(pages), config.analysis.spam_mass_threshold)
    domains = SP.with_domain_spam(T.DOMAINS.read(lake), spam)
    T.DOMAINS.overwrite(lake, domains.repartitionByRange(S.DOMAIN).sortWithinPartitions(S.DOMAIN),
                        built_from=T.DOMAINS.built_from(lake))


def flags_inputs(lake: Lake, config: Config, rank_run_id: str) -> str:
    tables = (T.PAGES, T.LINKS, T.LINK_FARMS, T.SYNDICATION_NETWORKS)
    inputs: dict[str, object] = {table.name: table.version(lake) for table in tables}
    inputs.update({S.PAGERANK_TABLE: rank_run_id, "important_sigmas": config.analysis.important_sigmas,
                   "exclude_link_types": list(config.rank.exclude_link_types)})
    inputs["spam_mass_threshold"] = config.analysis.spam_mass_threshold
    inputs["good_fraction"] = config.analysis.good_fraction
    return json.dumps(inputs, sort_keys=True)


def run(ctx: StepContext, params: Params) -> FlagsReport:
    lake, config = ctx.lake, ctx.config
    T.require(lake, T.PAGES, T.LINKS)
    rank_run_id = latest_rank_run_id(lake)
    if rank_run_id is None:
        return FlagsReport(rank_run=None, skipped="no rank run yet: run linkgraph pagerank")
    if not T.LINK_FARMS.exists(lake):
        return FlagsReport(rank_run=rank_run_id, skipped="no domain analysis (an arc-list lake, or analyze not run)")
    report = FlagsReport(rank_run=rank_run_id)
    inputs = flags_inputs(lake, config, rank_run_id)
    if T.PAGE_FLAGS.built_from(lake) == inputs:
        report.up_to_date = True
        return report
    pages, links = T.PAGES.read(lake), T.LINKS.read(lake)
    located = D.located_links(links, D.page_nodes(pages), tuple(config.rank.exclude_link_types))
    ranks = T.PAGERANK.read(lake).where(F.col(S.VECTOR_ID) == 0)
    networks = T.SYNDICATION_NETWORKS.read_or_empty(lake)
    flags = D.page_flags(pages, located, ranks, T.LINK_FARMS.read(lake), networks, rank_run_id,
                         config.analysis.important_sigmas)
    spam = None
    if has_trust_vector(lake, rank_run_id):
        trust = T.PAGERANK.read(lake).where(F.col(S.VECTOR_ID) == 1)
        spam = SP.page_spam(ranks, trust, config.analysis.spam_mass_threshold, config.analysis.good_fraction)
    T.PAGE_FLAGS.replace_run(lake, SP.with_page_spam(flags, spam), rank_run_id, inputs, config.retention)
    if spam is not None:
        _write_domain_spam(lake, config, T.PAGE_FLAGS.read(lake).where(F.col(S.RUN_ID) == rank_run_id), pages)
    counts = one_row(T.PAGE_FLAGS.read(lake).where(F.col(S.RUN_ID) == rank_run_id).agg(
        F.count(F.lit(1)), F.count_if(S.IMPORTANT), F.count_if(S.ORPHAN), F.count_if(S.LINK_FARM_DOMAIN),
        F.count_if(F.col(S.SYNDICATION_NETWORK).isNotNull()), F.count_if(S.SPAM_SUSPECT)))
    report.pages, report.important, report.orphan, report.link_farm, report.syndication = (int(c) for c in counts[:5])
    report.spam_suspect = int(counts[5]) if spam is not None else None
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


# --- the step's declaration -------------------------------------------------------------------------

Params = NoParams


STEP = Step(
    name="flags", help="page flags (important, orphan, link farm, syndication, spam mass) of the latest rank run",
    params=Params, run=run,
    reads=(T.PAGES, T.LINKS, T.PAGERANK, T.RANK_RUNS, T.LINK_FARMS, T.SYNDICATION_NETWORKS, T.DOMAINS),
    writes=(T.PAGE_FLAGS, T.DOMAINS), after=("analyze", "pagerank", "reward"), for_run=no_params, tasks=(),
)
