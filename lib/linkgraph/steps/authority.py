"""``linkgraph import-authority``: external domain authority (Open PageRank, Common Crawl ranks)
into ``external_authority``, the rows of one source replaced; bad rows go to ``rejects``, and a
file whose share of bad rows passes ``authority.max_reject_share`` replaces nothing (exit 2)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyspark.sql import functions as F

from linkgraph.errors import InputSchemaError, UsageError
from linkgraph.inputs.authority import read_external_authority
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, StepContext
from linkgraph.steps.registry import Step, option

log = logging.getLogger(__name__)


@dataclass
class AuthorityReport(Report):
    source: str
    fmt: str
    rows: int = 0
    imported: int = 0
    rejected: int = 0
    refused: str | None = None
    seconds: float = 0.0

    @property
    def rows_written(self) -> int:
        return self.imported

    def summary(self) -> str:
        line = f"import-authority {self.source}: {self.fmt} imported={self.imported} rejected={self.rejected}"
        return f"{line}; not imported: {self.refused}" if self.refused else line

    def exit_code(self, config: Config) -> int:
        """2 (a usage error) when the file was refused for its share of bad rows."""
        return UsageError.exit_code if self.refused else 0


def _refusal(rows: int, rejected: int, max_share: float, fmt: str) -> str | None:
    """Why a file whose rejected share passes ``authority.max_reject_share`` replaces nothing."""
    if rejected <= max_share * rows:
        return None
    return (f"{rejected} of {rows} rows rejected ({rejected / rows:.0%}), more than authority.max_reject_share "
            f"{max_share}; the {fmt} rows of external_authority left as they were")


def _run(ctx: StepContext, input_path: str, fmt: str) -> AuthorityReport:
    """Replace the ``external_authority`` rows of source ``fmt`` with the file's; bad rows go to
    ``rejects``.  A file with no valid row stops with a usage error, nothing written; one whose
    rejected share passes ``authority.max_reject_share`` writes its rejects and replaces nothing."""
    read = read_external_authority(ctx.spark, input_path, fmt)
    rows, rejected = read.counts()
    if rejected == rows:
        # A wrong delimiter reads every line as one unparsable name: replacing the source's rows
        # with nothing would wipe it and report success.
        raise InputSchemaError(
            f"{input_path}: no valid {fmt} row ({rejected} unreadable; wrong delimiter or format?); "
            f"external_authority left as it was")
    report = AuthorityReport(source=str(input_path), fmt=fmt, rows=rows, rejected=rejected)
    report.refused = _refusal(rows, rejected, ctx.config.authority.max_reject_share, fmt)
    if report.refused is None:
        report.imported = T.replace_external_authority(ctx.lake, read.valid, fmt)
    rejects = T.reject_rows(read.bad.select(S.REASON, S.DETAIL, *T.raw_with_to_url(F.col("_name"))), str(input_path))
    T.write_rejects(ctx.lake, rejects)
    report.seconds = ctx.elapsed()
    (log.warning if report.refused else log.info)(report.summary())
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
