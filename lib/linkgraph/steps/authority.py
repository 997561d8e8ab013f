"""``linkgraph import-authority``: external domain authority (Open PageRank, Common Crawl ranks)
into ``external_authority``, the rows of one source replaced."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyspark.sql import functions as F

from linkgraph import schemas as S
from linkgraph import tables as T
from linkgraph.authority import read_external_authority
from linkgraph.errors import InputSchemaError
from linkgraph.steps.context import Report, StepContext
from linkgraph.steps.registry import Step, option

log = logging.getLogger(__name__)


@dataclass
class AuthorityReport(Report):
    source: str
    fmt: str
    imported: int = 0
    rejected: int = 0
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return self.imported

    def summary(self) -> str:
        return f"import-authority {self.source}: {self.fmt} imported={self.imported} rejected={self.rejected}"


def _run(ctx: StepContext, input_path: str, fmt: str) -> AuthorityReport:
    """Replace the ``external_authority`` rows of source ``fmt`` with the file's; bad rows go to
    ``rejects``."""
    valid, bad = read_external_authority(ctx.spark, input_path, fmt)
    if not valid.limit(1).count():
        # A wrong delimiter reads every line as one unparsable name: replacing the source's rows
        # with nothing would wipe it and report success.
        rejected = bad.count()
        raise InputSchemaError(
            f"{input_path}: no valid {fmt} row ({rejected} unreadable; wrong delimiter or format?); "
            f"external_authority left as it was")
    rejects = T.reject_rows(bad.select(S.REASON, S.DETAIL, *T.raw_with_to_url(F.col("_name"))), str(input_path))
    report = AuthorityReport(source=str(input_path), fmt=fmt)
    report.imported = T.replace_external_authority(ctx.lake, valid, fmt)
    T.write_rejects(ctx.lake, rejects)
    report.rejected = bad.count()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    input: str = option("Open PageRank CSV or Common Crawl rank file", required=True, path="input")
    format: str = option("the file's format", required=True, choices=("openpagerank", "ccrank"), default="")


def run(ctx: StepContext, params: Params) -> AuthorityReport:
    return _run(ctx, params.input, params.format)


STEP = Step(
    name="import-authority", help="import external domain authority into `external_authority`", params=Params,
    run=run, writes=(T.EXTERNAL_AUTHORITY, T.REJECTS),
)
