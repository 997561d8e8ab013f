"""The lake's tables and their write rules: each table is written here by one rule.

Schemas and names are declared in ``linkgraph.lake.schemas``; ``linkgraph.lake.delta.Lake`` does the
Delta transactions.  This module says *how* each table changes: which MERGE keys and conditions,
which rows an overwrite replaces, what is appended.  Steps (``linkgraph.steps``) call these and
nothing else to write.

=======================  =====================================================================
``pages``                MERGE by url (or page_id for id-only graphs): insert, widen sightings
``links``                MERGE by (src_id, dst_id): insert, widen sightings, newer one's columns;
                         links to or from pages new in the batch: an insert-only MERGE
``rejects``              insert-only MERGE by reject_id (content-derived: stored once)
``sitemaps``             MERGE by url: a changed entry replaces the stored one
``external_authority``   the rows of one source replaced (``replaceWhere source``)
``page_signals``         MERGE by url; see the two rules below
``feeds``                MERGE by feed_url: insert, move ``last_seen_at``
``seed_scores``,         the rows of one run replaced (``replaceWhere run_id``)
``page_flags``
``pagerank``, analysis,  overwrite (one commit each), compressed tables sorted/partitioned by
``frontier``, …          page id where single-page lookups read them
``rank_runs``,           append (run ids are unique)
``reward_runs``,
``pruned_pages``
=======================  =====================================================================
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.delta import Lake
from linkgraph.lake.rows import one_row

# --- core tables --------------------------------------------------------------------------------
#
# Batch-proportional writes: ``pages`` is clustered by page_id and ``links`` by src_id (liquid
# clustering, applied by ``OPTIMIZE``), both with deletion vectors.  Each MERGE adds the ranges of
# the batch's own key values to its condition (``prune_on``), a predicate every possible match
# satisfies, so Delta reads only the files whose statistics overlap the batch's ids, and changed
# rows are marked in deletion vectors instead of rewriting the files that hold them.

CLUSTER_BY = {S.PAGES_TABLE: [S.PAGE_ID], S.LINKS_TABLE: [S.SRC_ID]}


def ensure_core_tables(lake: Lake) -> None:
    lake.ensure(S.PAGES_TABLE, S.PAGES, cluster_by=CLUSTER_BY[S.PAGES_TABLE])
    lake.ensure(S.LINKS_TABLE, S.LINKS, cluster_by=CLUSTER_BY[S.LINKS_TABLE])
    lake.ensure(S.REJECTS_TABLE, S.REJECTS)


def max_page_id_of(pages: DataFrame) -> int:
    """The largest page id of a ``pages`` frame (-1 when it is empty)."""
    value = one_row(pages.agg(F.max(S.PAGE_ID)))[0]
    return -1 if value is None else int(value)


def _widen_sightings(first: str, last: str) -> tuple[str, dict[str, str]]:
    """MERGE condition and update of a sighting interval: earliest ``first``, latest ``last``.
    The condition is false when the source adds nothing, so a re-run touches no row."""
    condition = f"NOT (t.{first} <=> least(t.{first}, s.{first})) OR NOT (t.{last} <=> greatest(t.{last}, s.{last}))"
    return condition, {first: f"least(t.{first}, s.{first})", last: f"greatest(t.{last}, s.{last})"}


def upsert_pages(lake: Lake, pages: DataFrame, key: str) -> tuple[int, int]:
    """MERGE pages on ``key``: insert new ones, widen first/last seen of known ones.  The rows
    carry their page ids (by url: the stored id of a known URL), so the MERGE reads only the files
    of the batch's id ranges and marks the widened rows in deletion vectors; a concurrent ingest's
    pages numbered from the same first id lie in those ranges, which Delta reports as a conflict."""
    condition, widened = _widen_sightings(S.FIRST_SEEN_AT, S.LAST_SEEN_AT)
    metrics = lake.merge(S.PAGES_TABLE, pages, keys=[key], update_set=widened, update_condition=condition,
                         prune_on=S.PAGE_ID)
    return metrics.inserted, metrics.updated


def upsert_links(lake: Lake, links: DataFrame, new_from: int | None = None) -> tuple[int, int]:
    """MERGE links on (src_id, dst_id); a newer sighting replaces anchor/context/type/position.

    The MERGE reads only the files of the batch's src_id ranges.  With ``new_from`` (the first
    page id this ingest inserted, every id from it on being its own: no stored link has an end
    there) the links with such an end are new for certain and go through an insert-only MERGE
    restricted to the files that hold such ids: it reads none of the stored links (only what a
    concurrent ingest may add meanwhile, which Delta then reports as a conflict) and Delta reads
    its source once.  Returns (inserted, updated) over both.
    """
    inserted = 0
    if new_from is not None:
        new_end = (F.col(S.SRC_ID) >= new_from) | (F.col(S.DST_ID) >= new_from)
        inserted = lake.merge(S.LINKS_TABLE, links.where(new_end), [S.SRC_ID, S.DST_ID], update_set={},
                              target_filter=f"t.{S.SRC_ID} >= {int(new_from)} OR t.{S.DST_ID} >= {int(new_from)}",
                              ).inserted
        links = links.where(~new_end)
    condition, widened = _widen_sightings(S.DISCOVERED_AT, S.LAST_SEEN_AT)
    newer = "(s.last_seen_at > t.last_seen_at OR (t.last_seen_at IS NULL AND s.last_seen_at IS NOT NULL))"
    replaced = {c: f"CASE WHEN {newer} THEN s.{c} ELSE t.{c} END"
                for c in (S.ANCHOR_TEXT, S.CONTEXT_WINDOW, S.LINK_TYPE, S.POSITION)}
    metrics = lake.merge(S.LINKS_TABLE, links, [S.SRC_ID, S.DST_ID], update_set={**replaced, **widened},
                         update_condition=condition, prune_on=S.SRC_ID)
    return inserted + metrics.inserted, metrics.updated


def insert_missing(lake: Lake, table: str, rows: DataFrame, keys: list[str]) -> int:
    """Insert-only MERGE on ``keys`` (a row already stored is left alone), reading only the files
    of the rows' ranges of the first key; returns rows inserted."""
    prune_on = keys[0] if keys[0] in (S.PAGE_ID, S.SRC_ID) else None
    return lake.merge(table, rows, keys=keys, update_set={}, prune_on=prune_on).inserted


# --- rejects --------------------------------------------------------------------------------------

def reject_rows(rows: DataFrame, source: str | Column) -> DataFrame:
    """Rows carrying a ``reason`` in the ``rejects`` table's shape but ``rejected_at`` (which
    :func:`write_rejects` stamps), with a content-derived id; ``source`` is the input's path, or a
    column of it when rows come from several files.

    The time is left out because a cached frame holding ``current_timestamp()`` is recomputed from
    its input, cache ignored, once a frame it was derived from is unpersisted (Spark 4.2)."""
    raw_columns = [f.name for f in S.RAW_EDGE_RECORD.fields]
    source = F.lit(source) if isinstance(source, str) else source
    identity = F.concat_ws(
        "\u0001",
        source,
        F.col(S.REASON),
        F.coalesce(F.col(S.DETAIL), F.lit("")),
        *[F.coalesce(F.col(c), F.lit("\u0000")) for c in raw_columns],
    )
    return rows.select(
        F.sha2(identity, 256).alias(S.REJECT_ID),
        source.alias(S.SOURCE),
        S.REASON,
        S.DETAIL,
        *raw_columns,
    )


def raw_with_to_url(to_url: Column) -> list[Column]:
    """The raw edge-record columns of a reject row that is not an edge: all null but ``to_url``."""
    return [(to_url if f.name == S.TO_URL else F.lit(None)).cast("string").alias(f.name)
            for f in S.RAW_EDGE_RECORD.fields]


def count_by_reason(rejects: DataFrame) -> dict[str, int]:
    """Reject rows per reason (one small aggregate)."""
    return {row[S.REASON]: row["count"] for row in rejects.groupBy(S.REASON).count().collect()}


def write_rejects(lake: Lake, rejects: DataFrame) -> int:
    """Insert-only MERGE of :func:`reject_rows` on ``reject_id``, stamped with the time of the
    write: the same bad record is stored once, however often it is ingested."""
    lake.ensure(S.REJECTS_TABLE, S.REJECTS)
    stamped = rejects.select(*[F.current_timestamp().alias(f.name) if f.name == S.REJECTED_AT else F.col(f.name)
                               for f in S.REJECTS.fields])
    return insert_missing(lake, S.REJECTS_TABLE, stamped, [S.REJECT_ID])


# --- sitemaps, external authority, page signals, feeds ------------------------------------------------

def merge_sitemaps(lake: Lake, entries: DataFrame) -> tuple[int, int]:
    """MERGE sitemap entries by url: a changed entry replaces the stored one, an unchanged one is
    not touched.  Returns (inserted, updated)."""
    lake.ensure(S.SITEMAPS_TABLE, S.SITEMAPS)
    columns = [f.name for f in S.SITEMAPS.fields if f.name != S.URL]
    changed = " OR ".join(f"NOT (t.{c} <=> s.{c})" for c in columns)
    metrics = lake.merge(S.SITEMAPS_TABLE, entries.select(*[f.name for f in S.SITEMAPS.fields]), keys=[S.URL],
                         update_condition=changed)
    return metrics.inserted, metrics.updated


def replace_external_authority(lake: Lake, rows: DataFrame, source: str) -> int:
    """Replace the ``external_authority`` rows of ``source``; returns the rows it now holds."""
    replace_where = f"{S.SOURCE} = '{source}'" if lake.exists(S.EXTERNAL_AUTHORITY_TABLE) else None
    lake.overwrite(S.EXTERNAL_AUTHORITY_TABLE, rows, replace_where=replace_where)
    return lake.read(S.EXTERNAL_AUTHORITY_TABLE).where(F.col(S.SOURCE) == source).count()


_SIGNAL_VALUES = (S.TITLE, S.TEXT, S.FEED_LINKS, S.FETCHED_AT)


def merge_page_signals(lake: Lake, signals: DataFrame) -> tuple[int, int]:
    """``page_signals`` from a crawl (WARC/WAT) or supplied by a crawler (``reward --signals``):
    MERGE by url; a row replaces the stored one when its values differ and it is not older (older:
    both ``fetched_at`` known and the new one earlier), so a correction without a newer fetch
    time lands and writing the same signals twice touches no row.  Returns (inserted, updated)."""
    lake.ensure(S.PAGE_SIGNALS_TABLE, S.PAGE_SIGNALS)
    changed = " OR ".join(f"NOT (t.{c} <=> s.{c})" for c in _SIGNAL_VALUES)
    not_older = f"(s.{S.FETCHED_AT} IS NULL OR t.{S.FETCHED_AT} IS NULL OR s.{S.FETCHED_AT} >= t.{S.FETCHED_AT})"
    metrics = lake.merge(S.PAGE_SIGNALS_TABLE, signals, keys=[S.URL], update_set={c: f"s.{c}" for c in _SIGNAL_VALUES},
                         update_condition=f"({changed}) AND {not_older}")
    return metrics.inserted, metrics.updated


def merge_feeds(lake: Lake, rows: DataFrame) -> None:
    """Insert new feeds, move ``last_seen_at`` of known ones; the first write creates the table
    with its rows (one commit)."""
    if not lake.exists(S.FEEDS_TABLE):
        lake.overwrite(S.FEEDS_TABLE, rows.select(*[F.col(f.name).cast(f.dataType) for f in S.FEEDS.fields]))
        return
    lake.merge(S.FEEDS_TABLE, rows, keys=[S.FEED_URL], update_set={S.LAST_SEEN_AT: f"s.{S.LAST_SEEN_AT}"},
               update_condition=f"NOT (t.{S.LAST_SEEN_AT} <=> s.{S.LAST_SEEN_AT})")   # a retry commits nothing


# --- results of a run -----------------------------------------------------------------------------------

def by_page_id(df: DataFrame) -> DataFrame:
    """Range-partitioned and sorted by page_id, so Delta's per-file min/max statistics let a
    single-page lookup skip almost every file."""
    return df.repartitionByRange(S.PAGE_ID).sortWithinPartitions(S.PAGE_ID)


def replace_run(lake: Lake, table: str, rows: DataFrame, run_id: str, built_from: str) -> None:
    """Replace the rows of run ``run_id`` (one commit; the table's other runs stay), laid out by page id."""
    replace_where = f"{S.RUN_ID} = '{run_id}'" if lake.exists(table) else None
    lake.overwrite(table, by_page_id(rows), built_from=built_from, replace_where=replace_where)


def latest_rank_run_id(lake: Lake) -> str | None:
    """The run the ``pagerank`` table holds (it is replaced by each run); None before any."""
    if not lake.exists(S.PAGERANK_TABLE):
        return None
    first = lake.read(S.PAGERANK_TABLE).select(S.RUN_ID).first()
    return first[S.RUN_ID] if first else None
