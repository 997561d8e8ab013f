"""``linkgraph diff --level page|host|domain [--from RUN] [--to RUN]``: what changed between two
rank runs, into ``rank_changes`` (overwrite: the latest comparison).

The runs' ranks are read from the tables as the runs left them, by Delta time travel: the page
level's PageRank from ``pagerank`` (one vector, ``--vector``), the host and domain levels' (and any
level's harmonic centrality, ``--measure harmonic``) from ``<level>_centrality``.  A run is found by
walking the table's versions from the newest down to the first one holding the run's rows (each
step reads one row of one version), so finding the runs reads no more of the log than the versions
written since the earlier run; ``--to`` defaults to the newest run and ``--from`` to the run before
``--to``.  A run whose files a ``VACUUM`` removed can no longer be compared: the command says which
runs it can still reach.

Printed: the nodes of each run, how many are new and vanished, entered and left the top K
(``--top``), moved; the share of the top K both runs hold; Spearman's rho and Kendall's tau-b over
the nodes both runs hold (``linkgraph.rank.changes``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.errors import UsageError
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.rank.changes import CHANGES, ChangeCounts, Correlations, change_counts, correlations, rank_changes
from linkgraph.steps.registry import Step, option

log = logging.getLogger(__name__)

MEASURES = ("pagerank", "harmonic")
KENDALL_NODES = 1_000_000   # Kendall's tau on at most this many common nodes (a hash sample beyond)


@dataclass
class DiffReport(Report):
    level: str
    measure: str
    from_run: str = ""
    to_run: str = ""
    counts: ChangeCounts | None = None
    correlations: Correlations | None = None
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return sum(self.counts.by_change.values()) if self.counts else 0

    def summary(self) -> str:
        counts, corr = self.counts, self.correlations
        if counts is None or corr is None:
            return f"diff level={self.level}: nothing compared"
        changes = " ".join(f"{change}={counts.by_change[change]}" for change in CHANGES)

        def fmt(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.6f}"

        return (f"diff level={self.level} measure={self.measure} from={self.from_run} to={self.to_run}: "
                f"nodes {counts.nodes_before} -> {counts.nodes_after} {changes} "
                f"top_{counts.top_k}_overlap={counts.top_k_overlap:.4f} common={corr.common} "
                f"spearman={fmt(corr.spearman)} kendall_tau={fmt(corr.kendall)} (on {corr.kendall_nodes} nodes) "
                f"in {self.seconds:.1f}s")


def source_table(level: str, measure: str) -> T.Table:
    """The table a level's runs leave their ranks in."""
    if level == "page" and measure == "pagerank":
        return T.PAGERANK
    return T.CENTRALITY[level]


def run_scores(frame: DataFrame, level: str, measure: str, vector: int) -> DataFrame:
    """``(node, page_id, score)`` of one run's rows of ``source_table(level, measure)``."""
    if level == "page" and measure == "pagerank":
        return frame.where(F.col(S.VECTOR_ID) == vector).select(
            F.coalesce(F.col(S.URL), F.col(S.PAGE_ID).cast("string")).alias(S.NODE), S.PAGE_ID,
            F.col(S.RANK).alias(S.SCORE))
    name = S.CENTRALITY_SCHEMAS[level].fields[0].name
    score = S.HARMONIC if measure == "harmonic" else S.PAGERANK_VALUE
    page_id = F.col(S.PAGE_ID) if level == "page" else F.lit(None).cast("long")
    return frame.select(F.col(name).cast("string").alias(S.NODE), page_id.alias(S.PAGE_ID),
                        F.col(score).alias(S.SCORE))


@dataclass
class RunVersions:
    """The runs met walking a table's versions down from the newest: (run id, its newest version)."""

    found: list[tuple[str, int]] = field(default_factory=list)

    def version_of(self, run_id: str) -> int | None:
        return next((version for run, version in self.found if run == run_id), None)

    def after(self, run_id: str) -> str | None:
        """The run written before ``run_id`` (the next one down the versions)."""
        runs = [run for run, _ in self.found]
        index = runs.index(run_id)
        return runs[index + 1] if index + 1 < len(runs) else None


def _run_at(lake: Lake, table: T.Table, version: int) -> str | None:
    row = table.read_version(lake, version).select(S.RUN_ID).limit(1).first()
    return None if row is None else str(row[0])


def find_runs(lake: Lake, table: T.Table, from_run: str | None, to_run: str | None) -> tuple[tuple[str, int], ...]:
    """``((from run, version), (to run, version))``, walking the versions of ``table`` from the
    newest until both are found (``UsageError`` naming the runs reachable when not)."""
    walked = RunVersions()

    def resolved() -> bool:
        to = to_run if to_run is not None else (walked.found[0][0] if walked.found else None)
        if to is None or walked.version_of(to) is None:
            return False
        return (walked.after(to) is not None) if from_run is None else walked.version_of(from_run) is not None

    for version in range(table.current_version(lake), -1, -1):
        try:
            run = _run_at(lake, table, version)
        except Exception as exc:   # noqa: BLE001 - a vacuumed version ends what can be compared
            log.info("diff: %s version %d is no longer readable (%s); older runs cannot be compared",
                     table, version, type(exc).__name__)
            break
        if run is not None and walked.version_of(run) is None:
            walked.found.append((run, version))
        if resolved():
            break
    if not resolved():
        reachable = ", ".join(run for run, _ in walked.found) or "none"
        wanted = f"--from {from_run or 'the run before --to'}, --to {to_run or 'the newest run'}"
        raise UsageError(f"diff: {table} does not hold the runs to compare ({wanted}); "
                         f"runs it still holds, newest first: {reachable}")
    to = to_run if to_run is not None else walked.found[0][0]
    before = from_run if from_run is not None else walked.after(to)
    assert before is not None
    return (before, walked.version_of(before) or 0), (to, walked.version_of(to) or 0)


def _run(ctx: StepContext, params: Params) -> DiffReport:
    lake = ctx.lake
    if params.top <= 0:
        raise UsageError(f"--top must be positive, got {params.top}")
    table = source_table(params.level, params.measure)
    table.require(lake)
    report = DiffReport(level=params.level, measure=params.measure)
    (report.from_run, from_version), (report.to_run, to_version) = find_runs(
        lake, table, params.from_run, params.to_run)

    def scores(run_id: str, version: int) -> DataFrame:
        rows = table.read_version(lake, version).where(F.col(S.RUN_ID) == run_id)
        return run_scores(rows, params.level, params.measure, params.vector)

    changes = rank_changes(scores(report.from_run, from_version), scores(report.to_run, to_version), params.top)
    changes = changes.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.counts = change_counts(changes, params.top)
        report.correlations = correlations(changes, KENDALL_NODES)
        rows = changes.select(*[F.col(c) for c in changes.columns],
                              F.lit(params.level).alias(S.LEVEL), F.lit(params.measure).alias(S.MEASURE),
                              F.lit(report.from_run).alias(S.FROM_RUN), F.lit(report.to_run).alias(S.TO_RUN))
        built_from = json.dumps({"level": params.level, "measure": params.measure, "from_run": report.from_run,
                                 "from_version": from_version, "to_run": report.to_run, "to_version": to_version})
        T.RANK_CHANGES.overwrite(lake, rows.select(*[F.col(f.name).cast(f.dataType) for f in S.RANK_CHANGES.fields]),
                                 built_from=built_from)
    finally:
        changes.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    level: str = option("the runs to compare: page (PageRank runs, the pagerank table), host or domain "
                        "(centrality runs)", choices=S.CENTRALITY_LEVELS, default="page")
    from_run: str | None = option("the earlier run (default: the run before --to)", flag="--from", metavar="RUN")
    to_run: str | None = option("the later run (default: the newest)", flag="--to", metavar="RUN")
    measure: str = option("what is compared: pagerank (default) or harmonic (centrality runs' harmonic "
                          "centrality)", choices=MEASURES, default="pagerank")
    top: int = option("K of the top-K comparisons: entered, left and the top-K overlap (default 100)",
                      metavar="K", default=100)
    vector: int = option("the PageRank vector of a page-level run to compare (default 0, the first)",
                         metavar="ID", default=0)


def run(ctx: StepContext, params: Params) -> DiffReport:
    return _run(ctx, params)


STEP = Step(
    name="diff", help="what changed between two rank runs (entered, left, moved; Spearman, Kendall, top-K "
                      "overlap) into rank_changes",
    params=Params, run=run,
    reads=(T.PAGERANK, *T.CENTRALITY.values()),
    writes=(T.RANK_CHANGES,),
)
