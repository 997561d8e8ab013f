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

from linkgraph.errors import UnreadableDataError
from linkgraph.inputs import readers
from linkgraph.inputs.crawl import load as crawl
from linkgraph.inputs.edges import IngestReport, ingest_arcs, ingest_edges
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.names import INPUT_FORMATS
from linkgraph.lake.paths import display, guess_format, local_path, qualify
from linkgraph.lake.reliability import raise_if_created_concurrently, retry_on_conflict, unreadable_input
from linkgraph.steps.registry import RunPlan, Step, Task, option

log = logging.getLogger(__name__)


def _run(ctx: StepContext, input_path: str, fmt: str) -> IngestReport:
    """Read ``input_path`` in format ``fmt`` and upsert it into the lake's pages/links/rejects."""
    input_path = qualify(ctx.spark, input_path)
    reliability = ctx.config.reliability

    def with_retries(step: Callable[[StepContext], IngestReport]) -> IngestReport:
        return retry_on_conflict(
            lambda: step(ctx.next_step()), what=f"ingest {display(input_path)}",
            attempts=reliability.conflict_attempts, backoff_seconds=reliability.conflict_backoff_seconds,
        )

    if fmt in readers.CRAWL_FORMATS:
        return with_retries(lambda step_ctx: crawl.run(step_ctx, input_path, fmt))
    first_commit = len(ctx.lake.commits)
    try:
        return with_retries(lambda step_ctx: _ingest_once(step_ctx, input_path, fmt))
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


def _ingest_once(ctx: StepContext, input_path: str, fmt: str) -> IngestReport:
    report = IngestReport(source=str(input_path))
    try:
        if fmt == "arcs":
            arcs = readers.read_arcs_input(ctx.spark, input_path, ctx.config.ingest)
            report.skipped_files = arcs.skipped
            ingest_arcs(ctx.lake, ctx.config, arcs.frame, report)
        else:
            raw = readers.read_input(ctx.spark, input_path, fmt, ctx.config.ingest)
            report.skipped_files = raw.skipped
            ingest_edges(ctx.lake, ctx.config, raw.frame, report)
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


def run(ctx: StepContext, params: Params) -> IngestReport:
    """Read ``params.input`` and upsert it into the lake's pages/links/rejects."""
    return _run(ctx, params.input, params.format or guess_format(params.input))


def _with_format(params: Params) -> Params:
    return params if params.format else replace(params, format=guess_format(params.input))


def _for_run(plan: RunPlan, config: Config) -> Params:
    return Params(plan.input_path, plan.fmt)


STEP = Step(
    name="ingest", help="upsert crawl edge records into pages/links/rejects", params=Params, run=run,
    reads=(T.PAGES, T.LINKS), writes=(T.PAGES, T.LINKS, T.REJECTS, T.PAGE_SIGNALS),
    for_run=_for_run, prepare=_with_format,
    tasks=(Task("ingest", ("--input", "{param:input_root}/{ds}", "--format", "{param:input_format}", "--if-present")),),
)
