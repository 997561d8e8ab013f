"""``linkgraph ingest``: an input (edge records, an arc list or a crawl format) into
``pages``/``links``/``rejects``.

Validation (including the input's column check and reading every file to its end) happens before
any table is written; a truncated or corrupt file stops the step with ``InputSchemaError``.  When a
concurrent job commits to one of the tables first, the whole step is re-run (it is idempotent) up
to ``reliability.conflict_attempts`` times, see ``linkgraph.reliability``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from linkgraph import readers
from linkgraph.paths import display, qualify
from linkgraph.reliability import retry_on_conflict, unreadable_input
from linkgraph.steps import crawl
from linkgraph.steps.context import StepContext
from linkgraph.steps.edges import IngestReport, ingest_arcs, ingest_edges

log = logging.getLogger(__name__)


def run(ctx: StepContext, input_path: str, fmt: str) -> IngestReport:
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
    try:
        return with_retries(lambda step_ctx: _ingest_once(step_ctx, input_path, fmt))
    except Exception as exc:
        # The whole input is read (and counted) before the first commit, so an unreadable file
        # stops the job with nothing written.
        reason = unreadable_input(exc)
        if reason is None:
            raise
        raise readers.InputSchemaError(
            f"input {display(input_path)} cannot be read to its end ({reason}: a truncated or corrupt file); "
            "nothing was ingested"
        ) from None


def _ingest_once(ctx: StepContext, input_path: str, fmt: str) -> IngestReport:
    report = IngestReport(source=str(input_path))
    if fmt == "arcs":
        ingest_arcs(ctx.lake, ctx.config, readers.read_arcs(ctx.spark, input_path), report)
    else:
        raw = readers.read_edges(ctx.spark, input_path, fmt, csv_delimiter=ctx.config.ingest.csv_delimiter)
        ingest_edges(ctx.lake, ctx.config, raw, report)
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report
