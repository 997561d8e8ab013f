"""``linkgraph compress``: encode the lake's ``links`` into ``links_compressed_forward``,
``links_compressed_reverse``, their offsets index ``links_compressed_offsets`` and the vertex
order ``links_compressed_order`` (one overwrite commit each), one block or chunk per data file so
that a single-page lookup reads one file per table (``ConnectivityIndex.open``).  The graph's
vertices are the linked pages' positions in ``url_key`` order (``compress.build.vertex_order``),
so its bits per link do not depend on how incremental ingests numbered the pages.

A table already built from the current ``links`` and ``pages`` versions with the current
``compress`` parameters is left alone, so a re-run changes nothing and a run killed between two
commits is completed by the next one (a new ``pages`` version alone, e.g. an ingest that only
widened last-seen times, rebuilds all four: the order is computed from it).  Links whose page ids
the codec cannot store (outside ``[0, 2**62)``) go to ``rejects`` as INVALID_VALUE.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.compress import build as CB
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import Report, StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.rows import one_row
from linkgraph.steps.registry import NoParams, Step, no_params

log = logging.getLogger(__name__)

# the names of the tables ``compress`` writes (declared in ``linkgraph.lake.tables.COMPRESSED``)
TABLES = tuple(table.name for table in T.COMPRESSED)
DIRECTIONS = ((S.FORWARD, S.LINKS_COMPRESSED_FORWARD_TABLE), (S.REVERSE, S.LINKS_COMPRESSED_REVERSE_TABLE))


@dataclass
class CompressReport(Report):
    """What ``compress`` did.  Forward and reverse bits count the compressed lists only (as
    WebGraph's ``.graph`` file); the offsets index and the vertex order are counted apart."""

    links_version: int
    arcs: int = 0
    forward_bits: int = 0
    reverse_bits: int = 0
    forward_blocks: int = 0
    reverse_blocks: int = 0
    rejected: int = 0
    offsets_bits: int = 0
    order_bits: int = 0
    tables_written: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def bits_per_link(self, bits: int) -> float:
        return bits / self.arcs if self.arcs else 0.0

    def summary(self) -> str:
        written = ", ".join(self.tables_written) if self.tables_written else "none (up to date)"
        return (
            f"compress links@v{self.links_version}: arcs={self.arcs} "
            f"forward_bits_per_link={self.bits_per_link(self.forward_bits):.3f} "
            f"reverse_bits_per_link={self.bits_per_link(self.reverse_bits):.3f} "
            f"offsets_bits_per_link={self.bits_per_link(self.offsets_bits):.3f} "
            f"order_bits_per_link={self.bits_per_link(self.order_bits):.3f} "
            f"blocks={self.forward_blocks}+{self.reverse_blocks} rejected={self.rejected} "
            f"tables written: {written} in {self.seconds:.1f}s"
        )


def compressed_table_state(lake: Lake, table: str | T.Table) -> tuple[tuple | None, int, int, int]:
    """(build columns shared by every row, or None when missing, mixed or empty; blocks; arcs;
    bits) of a compressed table, in one small aggregation."""
    declared = T.declaration(table)
    if not declared.exists(lake):
        return None, 0, 0, 0
    df = declared.read(lake)
    if any(c not in df.columns for c in S.COMPRESSION_BUILD_COLUMNS):   # built by an older version
        return None, 0, 0, 0
    arcs = F.sum(S.ARC_COUNT) if S.ARC_COUNT in df.columns else F.lit(0)
    rows = (df.groupBy(*S.COMPRESSION_BUILD_COLUMNS)
            .agg(F.count(F.lit(1)).alias("blocks"), arcs.alias("arcs"), F.sum(S.BIT_LENGTH).alias("bits"))
            .limit(2).collect())
    if len(rows) != 1:
        return None, 0, 0, 0
    row = rows[0]
    return tuple(row[c] for c in S.COMPRESSION_BUILD_COLUMNS), int(row["blocks"]), int(row["arcs"]), int(row["bits"])


def run(ctx: StepContext, params: Params) -> CompressReport:
    lake, cc = ctx.lake, ctx.config.compress
    version = T.LINKS.current_version(lake)
    # the pages version the vertex order is computed from, recorded like the links version
    pages_version = T.PAGES.current_version(lake) if T.PAGES.exists(lake) else -1
    report = CompressReport(links_version=version)
    wanted = tuple(CB.build_columns(cc, version, pages_version)[c] for c in S.COMPRESSION_BUILD_COLUMNS)
    links = T.LINKS.read_version(lake, version).select(S.SRC_ID, S.DST_ID)   # the version recorded
    states = {table: compressed_table_state(lake, table) for table in TABLES}
    if any(state[0] is None for state in states.values()) and not links.limit(1).count():
        # no links: empty tables are the up-to-date result (they carry no build row to compare)
        stale = [t for t in TABLES if not T.declaration(t).exists(lake) or states[t][0] is not None]
    else:
        stale = [t for t in TABLES if states[t][0] != wanted]
    totals = {t: states[t][1:] for t in TABLES}
    persisted: list[DataFrame] = []
    if stale:
        report.rejected = _reject_unencodable(lake, links, version)
        pages = T.PAGES.read_version(lake, pages_version) if pages_version >= 0 else None
        persisted = _write_stale(ctx, links.where(CB.encodable(links)), pages, (version, pages_version), stale, totals,
                                 report)
    report.forward_blocks, report.arcs, report.forward_bits = totals[S.LINKS_COMPRESSED_FORWARD_TABLE]
    report.reverse_blocks, _, report.reverse_bits = totals[S.LINKS_COMPRESSED_REVERSE_TABLE]
    report.offsets_bits = totals[S.LINKS_COMPRESSED_OFFSETS_TABLE][2]
    report.order_bits = totals[S.LINKS_COMPRESSED_ORDER_TABLE][2]
    for cached in persisted:
        cached.unpersist()
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


def _reject_unencodable(lake: Lake, links: DataFrame, version: int) -> int:
    """Links the codec cannot store, written to ``rejects``; returns how many."""
    bad = links.where(~CB.encodable(links))
    rejected = bad.count()
    if rejected:
        detail = f"page id outside [0, {CB.MAX_PAGE_ID}]: cannot be compressed"
        raw = bad.select(
            F.col(S.SRC_ID).cast("string").alias(S.FROM_URL), F.col(S.DST_ID).cast("string").alias(S.TO_URL),
            *[F.lit(None).cast("string").alias(c) for c in S.OPTIONAL_EDGE_COLUMNS],
            F.lit(S.Reason.INVALID_VALUE).alias(S.REASON), F.lit(detail).alias(S.DETAIL),
        )
        T.write_rejects(lake, T.reject_rows(raw, f"{lake.location(S.LINKS_TABLE)}@v{version}"))
    return rejected


@contextmanager
def _one_row_per_file(ctx: StepContext) -> Iterator[None]:
    """Writes inside store one row per data file: each block (or its offsets) alone in a file whose
    Delta statistics (min/max first_id, block_id, direction) let a lookup read just that file.
    Auto compaction and optimized writes are off for these writes (``CB.LAYOUT_SESSION_CONF``: the
    session's settings take precedence over table properties), and a table created here gets
    ``CB.LAYOUT_PROPERTIES``."""
    previous: dict[str, str | None] = {key: ctx.spark.conf.get(key, None) for key in CB.LAYOUT_SESSION_CONF}
    for key, value in CB.LAYOUT_SESSION_CONF.items():
        ctx.spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                ctx.spark.conf.unset(key)
            else:
                ctx.spark.conf.set(key, old)


def _write_blocks(ctx: StepContext, table: str, rows: DataFrame) -> None:
    """Overwrite ``table`` with ``rows``, one row per data file, and keep that layout: the table
    properties ``CB.LAYOUT_PROPERTIES`` set on a table that lacks them (made by an older version)."""
    lake, declared = ctx.lake, T.declaration(table)
    with _one_row_per_file(ctx):
        declared.overwrite(lake, rows)
    current = declared.table_properties(lake)
    missing = {k: v for k, v in CB.LAYOUT_PROPERTIES.items() if current.get(k) != v}
    if missing:
        where = lake.location(table) if lake.uses_catalog else f"delta.`{lake.location(table)}`"
        settings = ", ".join(f"'{k}' = '{v}'" for k, v in missing.items())
        ctx.spark.sql(f"ALTER TABLE {where} SET TBLPROPERTIES ({settings})")


def _write_stale(ctx: StepContext, good: DataFrame, pages: DataFrame | None, versions: tuple[int, int],
                 stale: list[str], totals: dict[str, tuple[int, int, int]], report: CompressReport) -> list[DataFrame]:
    """Encode the directions a stale table needs and overwrite the stale tables (``versions``: of
    links and pages); returns the frames it persisted (the vertex order, the encoded blocks)."""
    lake, cc = ctx.lake, ctx.config.compress
    offsets_stale = S.LINKS_COMPRESSED_OFFSETS_TABLE in stale
    encoded: dict[str, DataFrame] = {}
    offsets_bits = 0
    order = CB.vertex_order(good, pages).persist(StorageLevel.MEMORY_AND_DISK)
    vertex_links = CB.in_vertex_order(good, order)
    for direction, table in DIRECTIONS:
        if table not in stale and not offsets_stale:
            continue
        arcs = CB.arcs_by_block(vertex_links, direction, cc.block_size, cc.block_max_arcs)
        encoded[direction] = CB.encode_blocks(arcs, cc, *versions).persist(StorageLevel.MEMORY_AND_DISK)
        blocks, arc_count, bits, direction_offsets_bits = one_row(encoded[direction].agg(
            F.count(F.lit(1)), F.coalesce(F.sum(S.ARC_COUNT), F.lit(0)), F.coalesce(F.sum(S.BIT_LENGTH), F.lit(0)),
            F.coalesce(F.sum("offsets_bit_length"), F.lit(0))))
        totals[table] = (int(blocks), int(arc_count), int(bits))
        offsets_bits += int(direction_offsets_bits)
        if table in stale:
            _write_blocks(ctx, table, CB.block_rows(encoded[direction]).sortWithinPartitions(S.BLOCK_ID))
            report.tables_written.append(table)
    if offsets_stale:
        offsets = CB.offsets_rows(encoded[S.FORWARD], S.FORWARD).unionByName(
            CB.offsets_rows(encoded[S.REVERSE], S.REVERSE))
        _write_blocks(ctx, S.LINKS_COMPRESSED_OFFSETS_TABLE, offsets)
        report.tables_written.append(S.LINKS_COMPRESSED_OFFSETS_TABLE)
        totals[S.LINKS_COMPRESSED_OFFSETS_TABLE] = (0, 0, offsets_bits)
    if S.LINKS_COMPRESSED_ORDER_TABLE in stale:
        _write_blocks(ctx, S.LINKS_COMPRESSED_ORDER_TABLE, CB.order_rows(order, cc, *versions))
        report.tables_written.append(S.LINKS_COMPRESSED_ORDER_TABLE)
        totals[S.LINKS_COMPRESSED_ORDER_TABLE] = compressed_table_state(lake, S.LINKS_COMPRESSED_ORDER_TABLE)[1:]
    return [order, *encoded.values()]


# --- the step's declaration -------------------------------------------------------------------------

Params = NoParams


STEP = Step(
    name="compress", help="Boldi-Vigna compressed forward and reverse link graphs of the lake's links",
    params=Params, run=run, reads=(T.PAGES, T.LINKS), writes=(*T.COMPRESSED, T.REJECTS),
    after=("ingest", "reward"), for_run=no_params,
)
