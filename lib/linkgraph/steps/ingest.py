"""``linkgraph ingest``: an input (edge records, an arc list or a crawl format) into
``pages``/``links``/``rejects``.

Validation (including the input's column check and reading every file to its end) happens before
any table is written; a truncated or corrupt input file stops the step with ``InputSchemaError``
and nothing written.  A data file of the lake's own tables that cannot be read (read only by the
MERGEs) stops it with ``UnreadableDataError``, whose message names the table and what the step had
committed before (``pages`` is committed before ``links`` is read); the step is idempotent, so a
re-run once the file is readable again completes it.  When a
concurrent job commits to one of the tables first, the whole step is re-run (it is idempotent) up
to ``reliability.conflict_attempts`` times, see ``linkgraph.lake.reliability``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from pyspark.sql import functions as F

from linkgraph.errors import UnreadableDataError
from linkgraph.inputs import readers
from linkgraph.inputs.edges import IngestReport
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.lakepolicy import check_lake_policy, url_policy
from linkgraph.lake.names import INPUT_FORMATS
from linkgraph.lake.paths import display, guess_format, list_input_files, local_path, qualify
from linkgraph.lake.reliability import raise_if_created_concurrently, retry_on_conflict, unreadable_input
from linkgraph.steps import ingest_crawl
from linkgraph.steps.ingest_write import ingest_arcs, ingest_edges
from linkgraph.steps.registry import RunPlan, Step, Task, checked_run_id, option
from linkgraph.urlpolicy import UrlPolicy

log = logging.getLogger(__name__)


def _run(ctx: StepContext, input_path: str, fmt: str) -> IngestReport:
    """Read ``input_path`` in format ``fmt`` and upsert it into the lake's pages/links/rejects,
    URLs canonicalised under the config's URL policy, the lake's (``UrlPolicyMismatch`` else)."""
    input_path = qualify(ctx.spark, input_path)
    reliability = ctx.config.reliability
    policy = url_policy(ctx.config, ctx.spark)
    check_lake_policy(ctx.lake, ctx.config.urls)

    def with_retries(step: Callable[[StepContext], IngestReport]) -> IngestReport:
        return retry_on_conflict(
            lambda: step(ctx.next_step()), what=f"ingest {display(input_path)}",
            attempts=reliability.conflict_attempts, backoff_seconds=reliability.conflict_backoff_seconds,
        )

    if fmt in readers.CRAWL_FORMATS:
        return with_retries(lambda step_ctx: ingest_crawl.run(step_ctx, input_path, fmt, policy))
    first_commit = len(ctx.lake.commits)
    try:
        return with_retries(lambda step_ctx: _ingest_once(step_ctx, input_path, fmt, policy))
    except Exception as exc:
        reason = unreadable_input(exc)
        if reason is None:
            raise
        committed: dict[str, int | None] = {}
        for name, version in ctx.lake.commits[first_commit:]:
            committed[name] = version if version is not None else committed.get(name)
        table = _lake_table_named_in(ctx.lake, f"{exc} {getattr(exc, '_stackTrace', None) or ''}")
        if table is None and not committed:
            # The whole input is read (and counted) before the first commit, so an unreadable
            # input file stops the job with nothing written.
            raise readers.InputSchemaError(
                f"input {display(input_path)} cannot be read to its end ({reason}: a truncated or corrupt file); "
                "nothing was ingested"
            ) from None
        unreadable = (f"a data file of table '{table}' in lake {display(ctx.lake.root)}" if table is not None
                      else f"input {display(input_path)}")
        if committed:
            done = ", ".join(t if v is None else f"{t} (version {v})" for t, v in committed.items())
            rest = ", ".join(t for t in CORE_TABLES if t not in committed) or "none"
            outcome = (f"committed before it stopped: {done}; not committed: {rest}. The ingest is idempotent: "
                       "re-running the command once the file is readable again (restored) completes it")
        else:
            outcome = "nothing was ingested; re-run the command once the file is readable again (restored)"
        raise UnreadableDataError(
            f"ingest {display(input_path)}: {unreadable} cannot be read to its end ({reason}: a truncated or "
            f"corrupt file); {outcome}"
        ) from None


def _ingest_once(ctx: StepContext, input_path: str, fmt: str, policy: UrlPolicy) -> IngestReport:
    report = IngestReport(source=str(input_path))
    try:
        if fmt == "arcs":
            arcs = readers.read_arcs_input(ctx.spark, input_path, ctx.config.ingest)
            report.skipped_files = arcs.skipped
            ingest_arcs(ctx.lake, ctx.config, arcs.frame, report, policy)
        else:
            raw = readers.read_input(ctx.spark, input_path, fmt, ctx.config.ingest)
            report.skipped_files = raw.skipped
            ingest_edges(ctx.lake, ctx.config, raw.frame, report, policy)
    except Exception as exc:
        raise_if_created_concurrently(ctx.lake, CORE_TABLES, exc)
        raise
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


CORE_TABLES = (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE)


def _lake_table_named_in(lake: Lake, text: str) -> str | None:
    """The core table whose data file an error message names (a path under the lake), if any."""
    root = local_path(lake.root) or lake.root
    for table in CORE_TABLES:
        if f"{root.rstrip('/')}/{table}/" in text:
            return table
    return None


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    input: str = option("file or directory of edge records", required=True, path="input")
    format: str | None = option("input format (default: from the file extension)", choices=INPUT_FORMATS)
    run_id: str | None = option("run id of the ingest (a scheduler's day): a re-run on the same input files "
                                "finds it finished and writes nothing", metavar="RUN_ID")


@dataclass
class FinishedIngest(Report):
    """An ingest run that finished before on the same input files: nothing was run."""

    run_id: str
    source: str
    input_files: str
    seconds: float = 0.0

    def summary(self) -> str:
        shown = " ".join(word for word in self.input_files.split() if not word.startswith("sha256="))
        return (f"ingest run {self.run_id} {display(self.source)}: finished before on this input ({shown}): "
                f"nothing run in {self.seconds:.1f}s")


INGEST_STEP = "ingest"


def run(ctx: StepContext, params: Params) -> IngestReport | FinishedIngest:
    """Read ``params.input`` and upsert it into the lake's pages/links/rejects.

    With ``run_id`` the run is recorded in ``step_runs`` (step ``ingest``, ``inputs``: the input
    files' fingerprint, :meth:`InputFiles.fingerprint`) once everything is committed, and a run of
    the same id on the same files writes nothing: re-running a scheduler's day leaves the lake as
    the day's first run left it, pages a later step pruned included (a re-ingest would bring them
    back).  Changed input files are ingested again under the same id."""
    fmt = params.format or guess_format(params.input)
    if params.run_id is None:
        return _run(ctx, params.input, fmt)
    run_id = checked_run_id(params.run_id)
    input_path = qualify(ctx.spark, params.input)
    files = list_input_files(ctx.spark, input_path).fingerprint() + f" format={fmt}"
    if _finished_on(ctx.lake, run_id, files):
        finished = FinishedIngest(run_id=run_id, source=input_path, input_files=files, seconds=ctx.elapsed())
        log.info(finished.summary())
        return finished
    report = _run(ctx, params.input, fmt)
    _record_finished(ctx, run_id, files)
    return report


def _finished_on(lake: Lake, run_id: str, files: str) -> bool:
    """Whether ingest run ``run_id`` finished on the input files ``files`` (their fingerprint)."""
    if not T.STEP_RUNS.exists(lake):
        return False
    row = (T.STEP_RUNS.read(lake).where((F.col(S.RUN_ID) == run_id) & (F.col(S.STEP) == INGEST_STEP))
           .select("inputs").first())
    return row is not None and row["inputs"] == files


def _record_finished(ctx: StepContext, run_id: str, files: str) -> None:
    """The ``step_runs`` row of a finished ingest run, replacing the row of its run on other files."""
    row = ctx.spark.createDataFrame([(run_id, INGEST_STEP, ctx.started_at.replace(tzinfo=None), files)], S.STEP_RUNS)
    T.record_step_run(ctx.lake, row)


def _with_format(params: Params) -> Params:
    return params if params.format else replace(params, format=guess_format(params.input))


def _for_run(plan: RunPlan, config: Config) -> Params:
    return Params(plan.input_path, plan.fmt)


STEP = Step(
    name="ingest", help="upsert crawl edge records into pages/links/rejects", params=Params, run=run,
    reads=(T.PAGES, T.LINKS), writes=(T.PAGES, T.LINKS, T.REJECTS, T.PAGE_SIGNALS, T.STEP_RUNS),
    for_run=_for_run, prepare=_with_format,
    tasks=(Task("ingest", ("--input", "{param:input_root}/{ds}", "--format", "{param:input_format}", "--if-present",
                           "--run-id", "{ds}-ingest")),),
)
