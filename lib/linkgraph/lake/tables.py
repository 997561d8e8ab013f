"""The lake's tables: one declaration each, and the write rules steps write through.

A table is one :class:`Table`: its name, schema, keys (the columns that identify a row), merge
rule (how a write changes it), retention (how long its rows stay) and documentation (``doc``, a
``linkgraph.lake.tabledocs.TableDoc``: docs/tables.md is rendered from the declarations).  ``TABLES``
holds every declaration by name; the step registry's ``reads``/``writes`` name them.  Column names and the
``StructType`` schemas live in ``linkgraph.lake.schemas``; ``linkgraph.lake.delta.Lake`` does the Delta
transactions.  Steps (``linkgraph.steps``) write only through a declaration's methods
(:meth:`Table.overwrite`, :meth:`Table.append`, :meth:`Table.replace_run`) or this module's MERGE
functions (``upsert_pages``, ``merge_sitemaps``, ...), never through ``Lake`` directly, and read through
its read methods (``T.PAGES.read(lake)``, ``T.LINKS.read_version(lake, v)``: ``linkgraph.lake.tablereads``).

=======================  =====================================================================
``pages``                MERGE by url (or page_id for id-only graphs): insert, widen sightings
``links``                MERGE by (src_id, dst_id): insert, widen sightings, newer one's columns;
                         links to or from pages new in the batch: an insert-only MERGE
``rejects``              insert-only MERGE by reject_id (content-derived: stored once)
``sitemaps``             MERGE by url: a changed entry replaces the stored one
``external_authority``   the rows of one source replaced (``replaceWhere source``)
``page_signals``         MERGE by url; see the two rules below
``feeds``                MERGE by feed_url: insert, move ``last_seen_at``
``seed_scores``,         the rows of one run replaced (``replaceWhere run_id``); the same commit
``page_flags``           deletes the runs beyond ``retention.runs`` (pinned runs stay)
``pagerank``, analysis,  overwrite (one commit each), compressed tables sorted/partitioned by
``frontier``, …          page id where single-page lookups read them
``rank_runs``,           append (run ids are unique)
``reward_runs``,
``pruned_pages``
=======================  =====================================================================
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from linkgraph.lake import keyfilter
from linkgraph.lake import schemas as S
from linkgraph.lake import tabledocs_core as D
from linkgraph.lake import tabledocs_graph as DG
from linkgraph.lake.config import RetentionConfig
from linkgraph.lake.delta import Lake, MergeMetrics
from linkgraph.lake.paths import require_no_foreign_data
from linkgraph.lake.rows import one_row
from linkgraph.lake.tabledocs import TableDoc
from linkgraph.lake.tablereads import TableReads


class Merge(enum.Enum):
    """How a write changes a table: its name in docs/tables.md (the overview's "write") and what it does."""

    MERGE = ("MERGE", "an upsert by the key: new rows inserted, changed rows updated, unchanged rows not touched "
                      "(a rerun commits no change)")
    INSERT_ONLY = ("insert-only", "a MERGE that inserts rows whose key is not stored and leaves stored rows alone")
    OVERWRITE = ("replace", "an overwrite of the whole table in one commit")
    REPLACE_SOURCE = ("replace the source's rows", "an overwrite of the rows of one source (`replaceWhere`), the "
                                                   "other sources' rows are kept")
    REPLACE_RUN = ("replace run", "an overwrite of the rows of one run (`replaceWhere`); the same commit deletes the "
                                  "runs beyond `retention.runs` (see below), the other runs' rows are kept")
    APPEND = ("append", "rows added per run (run ids are unique)")

    def __init__(self, label: str, meaning: str) -> None:
        self.label = label
        self.meaning = meaning


class Retention(enum.Enum):
    """How long a table's rows stay."""

    KEPT = "until a MERGE or delete changes them"
    LATEST = "until the next write replaces the table"
    RUNS = "the last `retention.runs` runs (and the pinned runs); older runs deleted by the write"
    LOG = "every run (one row, or a few, per run)"


@dataclass(frozen=True)
class Table(TableReads):
    """One table of the lake: everything a write to it needs, its reads (``TableReads``), and what
    docs/tables.md says about it (``doc``: ``linkgraph.lake.tabledocs``; ``--emit tables-doc`` renders it)."""

    name: str
    schema: StructType
    keys: tuple[str, ...]
    merge: Merge
    retention: Retention
    doc: TableDoc = field(compare=False)
    cluster_by: tuple[str, ...] = ()   # liquid clustering (with deletion vectors), applied by OPTIMIZE

    def __str__(self) -> str:
        return self.name

    def _check(self, merge: Merge) -> None:
        if self.merge is not merge:
            raise TypeError(f"table {self.name!r} is written by {self.merge.name}, not {merge.name}")

    def ensure(self, lake: Lake, properties: dict[str, str] | None = None) -> None:
        """Create the table empty unless it exists (``NotADeltaTable`` when its location holds
        other data); with ``properties``, as ``Lake.ensure`` sets them."""
        if not lake.uses_catalog:
            require_no_foreign_data(lake.spark, lake.location(self.name), self.name)
        lake.ensure(self.name, self.schema, cluster_by=list(self.cluster_by) or None, properties=properties)

    def overwrite(self, lake: Lake, rows: DataFrame, built_from: str | None = None,
                  replace_where: str | None = None) -> None:
        """Replace the table with ``rows`` in one commit (recording ``built_from``); with
        ``replace_where`` (a SQL predicate) only the rows it matches (one run's rank state)."""
        self._check(Merge.OVERWRITE)
        lake.overwrite(self.name, rows, built_from=built_from, replace_where=replace_where)

    def append(self, lake: Lake, rows: DataFrame) -> None:
        """Append ``rows`` in one commit."""
        self._check(Merge.APPEND)
        lake.append(self.name, rows)

    def delete_matching(self, lake: Lake, keys_df: DataFrame, keys: list[str] | None = None,
                        prune_on: str | None = None) -> MergeMetrics:
        """Delete the rows whose ``keys`` (default: the table's keys) equal a row of ``keys_df``, in
        one MERGE commit (a re-run finds them deleted and commits nothing)."""
        if self.retention is not Retention.KEPT:
            raise TypeError(f"table {self.name!r} is replaced by its writes; rows are not deleted from it")
        return lake.delete_matching(self.name, keys_df, list(self.keys) if keys is None else keys, prune_on=prune_on)

    def replace_run(self, lake: Lake, rows: DataFrame, run_id: str, built_from: str,
                    retention: RetentionConfig) -> list[str]:
        """Replace the rows of run ``run_id`` by ``rows`` (laid out by page id) and delete the runs
        beyond ``retention`` in the same commit; returns the run ids deleted.  A re-run computes
        the same replacement, so it commits the same table."""
        self._check(Merge.REPLACE_RUN)
        dropped: list[str] = []
        replace_where = None
        if lake.exists(self.name):
            dropped = runs_beyond(stored_runs(lake, self.name), run_id, retention)
            replace_where = f"{S.RUN_ID} IN ({', '.join(sql_string(r) for r in [run_id, *dropped])})"
        lake.overwrite(self.name, by_page_id(rows), built_from=built_from, replace_where=replace_where)
        return dropped


def sql_string(value: str) -> str:
    """``value`` as a SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def stored_runs(lake: Lake, table: str) -> list[str]:
    """The distinct run ids a per-run table holds (one small aggregate: retention bounds them)."""
    return [row[S.RUN_ID] for row in lake.read(table).select(S.RUN_ID).distinct().collect()]


def runs_beyond(stored: list[str], run_id: str, retention: RetentionConfig) -> list[str]:
    """The stored runs to delete when ``run_id`` is written: all but the newest ``retention.runs``
    runs (``run_id`` among them; run ids sort by start time), the pinned runs and ``run_id``."""
    newest = sorted({*stored, run_id}, reverse=True)[: retention.runs]
    kept = {*newest, *retention.pinned_runs, run_id}
    return sorted(r for r in stored if r not in kept)


# --- the declarations ---------------------------------------------------------------------------------

PAGES = Table(S.PAGES_TABLE, S.PAGES, (S.PAGE_ID,), Merge.MERGE, Retention.KEPT, D.PAGES, cluster_by=(S.PAGE_ID,))
LINKS = Table(S.LINKS_TABLE, S.LINKS, (S.SRC_ID, S.DST_ID), Merge.MERGE, Retention.KEPT, D.LINKS,
              cluster_by=(S.SRC_ID,))
REJECTS = Table(S.REJECTS_TABLE, S.REJECTS, (S.REJECT_ID,), Merge.INSERT_ONLY, Retention.KEPT, D.REJECTS)
PAGE_SIGNALS = Table(S.PAGE_SIGNALS_TABLE, S.PAGE_SIGNALS, (S.URL,), Merge.MERGE, Retention.KEPT, D.PAGE_SIGNALS)
SITEMAPS = Table(S.SITEMAPS_TABLE, S.SITEMAPS, (S.URL,), Merge.MERGE, Retention.KEPT, D.SITEMAPS)
EXTERNAL_AUTHORITY = Table(S.EXTERNAL_AUTHORITY_TABLE, S.EXTERNAL_AUTHORITY, (S.DOMAIN, S.SOURCE),
                           Merge.REPLACE_SOURCE, Retention.KEPT, D.EXTERNAL_AUTHORITY)
FEEDS = Table(S.FEEDS_TABLE, S.FEEDS, (S.FEED_URL,), Merge.MERGE, Retention.KEPT, D.FEEDS)

PAGERANK = Table(S.PAGERANK_TABLE, S.PAGERANK, (S.PAGE_ID, S.VECTOR_ID), Merge.OVERWRITE, Retention.LATEST,
                 D.PAGERANK)
RANK_RUNS = Table(S.RANK_RUNS_TABLE, S.RANK_RUNS, (S.RUN_ID,), Merge.APPEND, Retention.LOG, D.RANK_RUNS)
RANK_STATE = Table(S.RANK_STATE_TABLE, S.RANK_STATE, ("run_key", "block"), Merge.OVERWRITE, Retention.LATEST,
                   D.RANK_STATE)
RANK_CHANGES = Table(S.RANK_CHANGES_TABLE, S.RANK_CHANGES, (S.NODE,), Merge.OVERWRITE, Retention.LATEST,
                     D.RANK_CHANGES)

FORWARD_INDEX = Table(S.FORWARD_INDEX_TABLE, S.FORWARD_INDEX, (S.PAGE_ID, S.CHUNK), Merge.OVERWRITE,
                      Retention.LATEST, DG.FORWARD_INDEX)
REVERSE_INDEX = Table(S.REVERSE_INDEX_TABLE, S.REVERSE_INDEX, (S.PAGE_ID, S.CHUNK), Merge.OVERWRITE,
                      Retention.LATEST, DG.REVERSE_INDEX)
ANCHOR_INDEX = Table(S.ANCHOR_INDEX_TABLE, S.ANCHOR_INDEX, (S.PAGE_ID,), Merge.OVERWRITE, Retention.LATEST,
                     DG.ANCHOR_INDEX)
HOSTS = Table(S.HOSTS_TABLE, S.HOSTS, (S.REV_HOST,), Merge.OVERWRITE, Retention.LATEST, DG.HOSTS)
HOST_LINKS = Table(S.HOST_LINKS_TABLE, S.HOST_LINKS, (S.SRC_HOST, S.DST_HOST), Merge.OVERWRITE, Retention.LATEST,
                   DG.HOST_LINKS)
DOMAINS = Table(S.DOMAINS_TABLE, S.DOMAINS, (S.DOMAIN,), Merge.OVERWRITE, Retention.LATEST, DG.DOMAINS)
DOMAIN_LINKS = Table(S.DOMAIN_LINKS_TABLE, S.DOMAIN_LINKS, (S.SRC_DOMAIN, S.DST_DOMAIN), Merge.OVERWRITE,
                     Retention.LATEST, DG.DOMAIN_LINKS)
DOMAIN_AUTHORITY = Table(S.DOMAIN_AUTHORITY_TABLE, S.DOMAIN_AUTHORITY_SCHEMA, (S.DOMAIN,), Merge.OVERWRITE,
                         Retention.LATEST, DG.DOMAIN_AUTHORITY)
LINK_FARMS = Table(S.LINK_FARMS_TABLE, S.LINK_FARMS, (S.DOMAIN,), Merge.OVERWRITE, Retention.LATEST, DG.LINK_FARMS)
SYNDICATION_NETWORKS = Table(S.SYNDICATION_NETWORKS_TABLE, S.SYNDICATION_NETWORKS, (S.DOMAIN,),
                             Merge.OVERWRITE, Retention.LATEST, DG.SYNDICATION_NETWORKS)
# what ``analyze`` builds, in the order it writes them
ANALYSIS = (FORWARD_INDEX, REVERSE_INDEX, ANCHOR_INDEX, HOSTS, HOST_LINKS, DOMAINS, DOMAIN_LINKS, DOMAIN_AUTHORITY,
            LINK_FARMS, SYNDICATION_NETWORKS)

PAGE_FLAGS = Table(S.PAGE_FLAGS_TABLE, S.PAGE_FLAGS, (S.RUN_ID, S.PAGE_ID), Merge.REPLACE_RUN, Retention.RUNS,
                   DG.PAGE_FLAGS)
SEED_SCORES = Table(S.SEED_SCORES_TABLE, S.SEED_SCORES, (S.RUN_ID, S.PAGE_ID), Merge.REPLACE_RUN, Retention.RUNS,
                    D.SEED_SCORES)
FRONTIER = Table(S.FRONTIER_TABLE, S.FRONTIER, ("position",), Merge.OVERWRITE, Retention.LATEST, D.FRONTIER)

REWARD_SCORES = Table(S.REWARD_SCORES_TABLE, S.REWARD_SCORES, (S.PAGE_ID,), Merge.OVERWRITE, Retention.LATEST,
                      D.REWARD_SCORES)
REWARD_RUNS = Table(S.REWARD_RUNS_TABLE, S.REWARD_RUNS, (S.RUN_ID, S.ROUND), Merge.APPEND, Retention.LOG,
                    D.REWARD_RUNS)
PRUNED_PAGES = Table(S.PRUNED_PAGES_TABLE, S.PRUNED_PAGES, (S.RUN_ID, S.PAGE_ID), Merge.INSERT_ONLY, Retention.LOG,
                     D.PRUNED_PAGES)
STEP_RUNS = Table(S.STEP_RUNS_TABLE, S.STEP_RUNS, (S.RUN_ID, S.STEP), Merge.INSERT_ONLY, Retention.LOG, D.STEP_RUNS)

CENTRALITY = {level: Table(S.CENTRALITY_TABLES[level], S.CENTRALITY_SCHEMAS[level],
                           (S.CENTRALITY_SCHEMAS[level].fields[0].name,), Merge.OVERWRITE, Retention.LATEST,
                           DG.CENTRALITY[level])
              for level in S.CENTRALITY_LEVELS}
HOST_CENTRALITY, DOMAIN_CENTRALITY, PAGE_CENTRALITY = (CENTRALITY[level] for level in ("host", "domain", "page"))
CENTRALITY_RUNS = Table(S.CENTRALITY_RUNS_TABLE, S.CENTRALITY_RUNS, (S.RUN_ID,), Merge.APPEND, Retention.LOG,
                        DG.CENTRALITY_RUNS)

LINKS_COMPRESSED_FORWARD = Table(S.LINKS_COMPRESSED_FORWARD_TABLE, S.COMPRESSED_LINKS, (S.BLOCK_ID,),
                                 Merge.OVERWRITE, Retention.LATEST, DG.LINKS_COMPRESSED_FORWARD)
LINKS_COMPRESSED_REVERSE = Table(S.LINKS_COMPRESSED_REVERSE_TABLE, S.COMPRESSED_LINKS, (S.BLOCK_ID,),
                                 Merge.OVERWRITE, Retention.LATEST, DG.LINKS_COMPRESSED_REVERSE)
LINKS_COMPRESSED_OFFSETS = Table(S.LINKS_COMPRESSED_OFFSETS_TABLE, S.COMPRESSED_OFFSETS, (S.DIRECTION, S.BLOCK_ID),
                                 Merge.OVERWRITE, Retention.LATEST, DG.LINKS_COMPRESSED_OFFSETS)
LINKS_COMPRESSED_ORDER = Table(S.LINKS_COMPRESSED_ORDER_TABLE, S.COMPRESSED_ORDER, (S.KIND, S.FIRST_ID),
                               Merge.OVERWRITE, Retention.LATEST, DG.LINKS_COMPRESSED_ORDER)
COMPRESSED = (LINKS_COMPRESSED_FORWARD, LINKS_COMPRESSED_REVERSE, LINKS_COMPRESSED_OFFSETS, LINKS_COMPRESSED_ORDER)

TABLES: dict[str, Table] = {table.name: table for table in (
    PAGES, LINKS, REJECTS, PAGE_SIGNALS, SITEMAPS, EXTERNAL_AUTHORITY, FEEDS, PAGERANK, RANK_RUNS, RANK_STATE,
    RANK_CHANGES, *ANALYSIS, PAGE_FLAGS, SEED_SCORES, FRONTIER, REWARD_SCORES, REWARD_RUNS, PRUNED_PAGES, STEP_RUNS,
    *CENTRALITY.values(), CENTRALITY_RUNS, *COMPRESSED)}


def declaration(table: str | Table) -> Table:
    """The declaration of the table named ``table`` (a declaration is returned as is)."""
    if isinstance(table, Table):
        return table
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"no table {table!r} is declared in linkgraph.lake.tables") from None


def require(lake: Lake, *tables: Table) -> None:
    """Stop with ``MissingTableError`` naming the first of ``tables`` the lake does not hold."""
    lake.require(*(table.name for table in tables))


# --- core tables --------------------------------------------------------------------------------
#
# Batch-proportional writes: ``pages`` is clustered by page_id and ``links`` by src_id (liquid
# clustering, applied by ``OPTIMIZE``), both with deletion vectors.  Each MERGE adds the ranges of
# the batch's own key values to its condition (``prune_on``), a predicate every possible match
# satisfies, so Delta reads only the files whose statistics overlap the batch's ids, and changed
# rows are marked in deletion vectors instead of rewriting the files that hold them.

def ensure_core_tables(lake: Lake, pages_properties: dict[str, str] | None = None) -> None:
    """``pages``, ``links`` and ``rejects``; ``pages`` with ``pages_properties`` (ingest's URL policy)."""
    for core in (PAGES, LINKS, REJECTS):
        core.ensure(lake, pages_properties if core is PAGES else None)


def max_page_id_of(pages: DataFrame) -> int:
    """The largest page id of a ``pages`` frame (-1 when it is empty)."""
    value = one_row(pages.agg(F.max(S.PAGE_ID)))[0]
    return -1 if value is None else int(value)


def _widen_sightings(first: str, last: str) -> tuple[str, dict[str, str]]:
    """MERGE condition and update of a sighting interval: earliest ``first``, latest ``last``.
    The condition is false when the source adds nothing, so a re-run touches no row."""
    condition = f"NOT (t.{first} <=> least(t.{first}, s.{first})) OR NOT (t.{last} <=> greatest(t.{last}, s.{last}))"
    return condition, {first: f"least(t.{first}, s.{first})", last: f"greatest(t.{last}, s.{last})"}


def upsert_pages(lake: Lake, pages: DataFrame, key: str, broadcast: bool = False) -> tuple[int, int]:
    """MERGE pages on ``key``: insert new ones, widen first/last seen of known ones.  By page_id
    the MERGE reads only the files of the batch's id ranges.  By url it reads the ``url``,
    ``page_id`` and sighting columns of ``pages`` and marks the widened rows in deletion vectors:
    the columns that are functions of the URL are set from the batch (equal to the stored ones),
    so Delta reads none of them; of the rows read only those a bloom filter of the batch's URLs
    admits (its stored pages and about 1% of the others) reach Delta's shuffles.  ``broadcast``:
    the batch is small enough to broadcast into Delta's joins (:meth:`Lake.merge`)."""
    condition, widened = _widen_sightings(S.FIRST_SEEN_AT, S.LAST_SEEN_AT)
    if key == S.URL:
        widened |= {c: f"s.{c}" for c in (S.HOST, S.REGISTERED_DOMAIN, S.URL_KEY)}
    metrics = lake.merge(PAGES.name, pages, keys=[key], update_set=widened, update_condition=condition,
                         prune_on=S.PAGE_ID if key == S.PAGE_ID else None, filter_keys=key == S.URL,
                         broadcast_source=broadcast)
    return metrics.inserted, metrics.updated


def upsert_numbered_pages(lake: Lake, pages: DataFrame, new_from: int, broadcast: bool = False) -> tuple[int, int]:
    """Upsert the pages of a URL batch whose ids were looked up (``inputs.ingest.pages_with_ids``):
    a page with an id below ``new_from`` carries the id stored for its URL, the others are new.

    First the new pages, by an insert-only MERGE on ``url`` (a URL another ingest stored
    meanwhile is not inserted twice; the MERGE reads the ``url`` column and shuffles of it only
    the rows a bloom filter of the new URLs admits).  Then the known pages' sightings are widened
    by update-only MERGEs on ``page_id``, in slices of ``MERGE_SLICE_KEYS`` ids: each reads the
    id and sighting columns of the files of its id ranges, and its inner joins, with the batch
    broadcast (``broadcast``), shuffle nothing.  A page pruned meanwhile is not brought back (the
    links step's check then re-runs the ingest, which numbers it anew).  A ``pages`` table below
    ``keyfilter.MIN_TABLE_BYTES`` is upserted by one MERGE on ``url`` instead (:func:`upsert_pages`:
    one MERGE costs less than two there).  Returns (inserted, updated)."""
    if lake.table_bytes(PAGES.name) < keyfilter.MIN_TABLE_BYTES:
        return upsert_pages(lake, pages, key=S.URL, broadcast=broadcast)
    new = pages.where(F.col(S.PAGE_ID) >= new_from)
    inserted = lake.merge(PAGES.name, new, keys=[S.URL], update_set={}, filter_keys=True,
                          broadcast_source=broadcast).inserted
    condition, widened = _widen_sightings(S.FIRST_SEEN_AT, S.LAST_SEEN_AT)
    # the URL and its functions set from the batch (equal to the stored ones): Delta reads none of them
    widened |= {c: f"s.{c}" for c in (S.URL, S.HOST, S.REGISTERED_DOMAIN, S.URL_KEY)}
    updated = 0
    for part in key_slices(pages.where(F.col(S.PAGE_ID) < new_from), S.PAGE_ID, MERGE_SLICE_KEYS):
        updated += lake.merge(PAGES.name, part, keys=[S.PAGE_ID], update_set=widened, update_condition=condition,
                              prune_on=S.PAGE_ID, insert=False, filter_keys=True, broadcast_source=broadcast).updated
    return inserted, updated


LINK_TEXT_COLUMNS = (S.ANCHOR_TEXT, S.CONTEXT_WINDOW, S.LINK_TYPE, S.POSITION)
# a sighting newer than the stored one (its text columns replace the stored ones)
_NEWER = (f"(s.{S.LAST_SEEN_AT} > t.{S.LAST_SEEN_AT} "
          f"OR (t.{S.LAST_SEEN_AT} IS NULL AND s.{S.LAST_SEEN_AT} IS NOT NULL))")


def upsert_links(lake: Lake, links: DataFrame, new_from: int | None = None, broadcast: bool = False) -> tuple[int, int]:
    """MERGE links on (src_id, dst_id); a newer sighting replaces anchor/context/type/position.

    The MERGEs read only the files of the batch's src_id ranges.  With ``new_from`` (the first
    page id this ingest inserted, every id from it on being its own: no stored link has an end
    there) the links with such an end are new for certain and go through an insert-only MERGE
    restricted to the files that hold such ids: it reads none of the stored links (only what a
    concurrent ingest may add meanwhile, which Delta then reports as a conflict) and Delta reads
    its source once.

    The others go through :func:`_upsert_known_ends`, whose MERGEs read the key and sighting
    columns of the stored links, never their text, and keep of them only the rows a bloom filter
    of the batch's pairs admits (the matches and about 1% of the others) before Delta's joins
    shuffle them; a batch of more than ``MERGE_SLICE_KEYS`` such pairs in src_id slices
    (:func:`key_slices`), one MERGE commit each (a re-run after a failure between them completes
    the rest).  ``broadcast``: the batch is small enough to broadcast into Delta's joins
    (:meth:`Lake.merge`).  Returns (inserted, updated) over all.
    """
    inserted = 0
    if new_from is not None:
        new_end = (F.col(S.SRC_ID) >= new_from) | (F.col(S.DST_ID) >= new_from)
        inserted = lake.merge(LINKS.name, links.where(new_end), list(LINKS.keys), update_set={},
                              target_filter=f"t.{S.SRC_ID} >= {int(new_from)} OR t.{S.DST_ID} >= {int(new_from)}",
                              broadcast_source=broadcast).inserted
        links = links.where(~new_end)
    known_inserted = updated = 0
    count = links.count()
    slices = key_slices(links, S.SRC_ID, MERGE_SLICE_KEYS, count)
    for part in slices:
        part_inserted, part_updated = _upsert_known_ends(lake, part, broadcast, count if len(slices) == 1 else None)
        known_inserted, updated = known_inserted + part_inserted, updated + part_updated
    return inserted + known_inserted, updated


# Pairs a links MERGE takes at most: the bloom filter of its keys then fits the filter's byte cap
# at about 1% false positives (``linkgraph.lake.keyfilter``).  A larger batch is upserted in
# slices of src_id, one MERGE (and commit) each, each reading the files of its own ids.
MERGE_SLICE_KEYS = 800_000


def key_slices(rows: DataFrame, column: str, keys_per_slice: int, count: int | None = None) -> list[DataFrame]:
    """``rows`` split into half-open ranges of the integer ``column`` of about ``keys_per_slice``
    rows each (approximate quantiles, one small job); ``[rows]`` when it has no more.  The rows of
    one value of ``column`` fall in one slice.  ``count``: the rows of ``rows``, when known."""
    count = rows.count() if count is None else count
    if count <= keys_per_slice:
        return [rows]
    slices = -(-count // keys_per_slice)
    bounds = sorted({int(b) for b in rows.approxQuantile(column, [i / slices for i in range(1, slices)], 0.001)})
    edges: list[int | None] = [None, *bounds, None]
    value = F.col(column)
    return [rows.where((F.lit(True) if low is None else value >= low) & (F.lit(True) if high is None else value < high))
            for low, high in zip(edges, edges[1:], strict=False)]


def _upsert_known_ends(lake: Lake, links: DataFrame, broadcast: bool = False,
                       rows: int | None = None) -> tuple[int, int]:
    """Upsert ``links`` in at most two MERGEs that name no text column of the stored links (with
    deletion vectors Delta then reads only their keys and sighting times, :meth:`Lake.merge`).

    The first inserts new pairs and replaces a pair whose stored sighting is older: every column
    from the batch but ``discovered_at``, the earlier of the two.  A batch row it did neither to
    is a pair whose stored sighting is as new or newer (a re-run, or an old sighting delivered
    late); only then the second, update-only, MERGE widens such a pair's sighting interval (it
    reads the text of the files holding a widened row, which Delta copies).  Returns (inserted,
    updated) over both.  ``rows``: the rows of ``links``, when known.
    """
    first, last = S.DISCOVERED_AT, S.LAST_SEEN_AT
    replaced = {c: f"s.{c}" for c in LINK_TEXT_COLUMNS} | {first: f"least(t.{first}, s.{first})",
                                                             last: f"s.{last}"}
    rows = links.count() if rows is None else rows
    if not rows:
        return 0, 0
    upserted = lake.merge(LINKS.name, links, list(LINKS.keys), update_set=replaced, update_condition=_NEWER,
                          prune_on=S.SRC_ID, filter_keys=True, broadcast_source=broadcast)
    if upserted.inserted + upserted.updated == rows:
        return upserted.inserted, upserted.updated
    condition, widened = _widen_sightings(first, last)
    late = lake.merge(LINKS.name, links, list(LINKS.keys), update_set=widened,
                      update_condition=f"NOT {_NEWER} AND ({condition})", prune_on=S.SRC_ID, insert=False,
                      filter_keys=True, broadcast_source=broadcast)
    return upserted.inserted, upserted.updated + late.updated


def insert_missing(lake: Lake, table: str | Table, rows: DataFrame, keys: list[str] | None = None,
                   filter_keys: bool = False) -> int:
    """Insert-only MERGE on ``keys`` (default: the table's keys; a row already stored is left
    alone), reading only the files of the rows' ranges of the first key and, with
    ``filter_keys``, shuffling of them only the rows a bloom filter of the rows' keys admits
    (:meth:`Lake.merge`); returns rows inserted."""
    declared = declaration(table)
    keys = list(declared.keys) if keys is None else keys
    prune_on = keys[0] if keys[0] in (S.PAGE_ID, S.SRC_ID) else None
    return lake.merge(declared.name, rows, keys=keys, update_set={}, prune_on=prune_on,
                      filter_keys=filter_keys).inserted


def record_step_run(lake: Lake, row: DataFrame) -> None:
    """The ``step_runs`` row of a finished run: inserted, or replacing the row of the same run and
    step recorded on other inputs (a run of the same id on the same inputs commits nothing)."""
    STEP_RUNS.ensure(lake)
    lake.merge(STEP_RUNS.name, row, list(STEP_RUNS.keys),
               update_set={"started_at": "s.started_at", "inputs": "s.inputs"},
               update_condition="NOT (t.inputs <=> s.inputs)")


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
        _detail_with_originals(raw_columns).alias(S.DETAIL),
        *[bounded_text(F.col(c)).alias(c) for c in raw_columns],
    )


def bounded_text(value: Column) -> Column:
    """``value`` as valid UTF-8 (an invalid byte becomes U+FFFD) of at most ``S.REJECT_FIELD_CHARS``
    characters: what ``rejects`` stores of a raw value."""
    return F.substring(F.make_valid_utf8(value), 1, S.REJECT_FIELD_CHARS)


def _detail_with_originals(raw_columns: list[str]) -> Column:
    """``detail`` (bounded) and, for each raw value not stored as it is, its length and hash."""
    notes = []
    for name in raw_columns:
        value = F.col(name)
        altered = ~F.is_valid_utf8(value) | (F.length(value) > S.REJECT_FIELD_CHARS)
        notes.append(F.when(altered, F.format_string(
            f"{name} stored clipped to {S.REJECT_FIELD_CHARS} characters of valid UTF-8; the original has %d bytes, "
            "sha256 %s", F.octet_length(value), F.sha2(value.cast("binary"), 256))))
    detail = bounded_text(F.col(S.DETAIL))
    return F.when(F.coalesce(*notes).isNotNull(), F.concat_ws("; ", detail, *notes)).otherwise(detail)


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
    REJECTS.ensure(lake)
    stamped = rejects.select(*[F.current_timestamp().alias(f.name) if f.name == S.REJECTED_AT else F.col(f.name)
                               for f in REJECTS.schema.fields])
    return insert_missing(lake, REJECTS, stamped, filter_keys=True)


# --- sitemaps, external authority, page signals, feeds ------------------------------------------------

def merge_sitemaps(lake: Lake, entries: DataFrame) -> tuple[int, int]:
    """MERGE sitemap entries by url: a changed entry replaces the stored one, an unchanged one is
    not touched.  Returns (inserted, updated).

    Only the entries that are new or differ from the stored row reach the MERGE (Delta rewrites
    every file holding a matched row, even one its update condition leaves alone), and entries
    that are all stored as they are commit nothing: the table's version, which later steps record
    as their input, stays where it was when a day's sitemaps are ingested again."""
    SITEMAPS.ensure(lake)
    names = [f.name for f in SITEMAPS.schema.fields]
    columns = [c for c in names if c not in SITEMAPS.keys]
    rows = entries.select(*names)
    stored = lake.read(SITEMAPS.name).select(*names)
    same = [F.col(f"s.{c}").eqNullSafe(F.col(f"t.{c}")) for c in names]
    changed_rows = rows.alias("s").join(stored.alias("t"), on=same, how="left_anti")
    if changed_rows.isEmpty():
        return 0, 0
    changed = " OR ".join(f"NOT (t.{c} <=> s.{c})" for c in columns)
    metrics = lake.merge(SITEMAPS.name, changed_rows, keys=list(SITEMAPS.keys), update_condition=changed)
    return metrics.inserted, metrics.updated


def replace_external_authority(lake: Lake, rows: DataFrame, source: str) -> int:
    """Replace the ``external_authority`` rows of ``source``; returns the rows it now holds."""
    replace_where = f"{S.SOURCE} = {sql_string(source)}" if lake.exists(EXTERNAL_AUTHORITY.name) else None
    lake.overwrite(EXTERNAL_AUTHORITY.name, rows, replace_where=replace_where)
    return lake.read(EXTERNAL_AUTHORITY.name).where(F.col(S.SOURCE) == source).count()


_SIGNAL_VALUES = (S.TITLE, S.TEXT, S.FEED_LINKS, S.FETCHED_AT)


def merge_page_signals(lake: Lake, signals: DataFrame) -> tuple[int, int]:
    """``page_signals`` from a crawl (WARC/WAT) or supplied by a crawler (``reward --signals``):
    MERGE by url; a row replaces the stored one when its values differ and it is not older (older:
    both ``fetched_at`` known and the new one earlier), so a correction without a newer fetch
    time lands and writing the same signals twice touches no row.  Returns (inserted, updated)."""
    PAGE_SIGNALS.ensure(lake)
    changed = " OR ".join(f"NOT (t.{c} <=> s.{c})" for c in _SIGNAL_VALUES)
    not_older = f"(s.{S.FETCHED_AT} IS NULL OR t.{S.FETCHED_AT} IS NULL OR s.{S.FETCHED_AT} >= t.{S.FETCHED_AT})"
    metrics = lake.merge(PAGE_SIGNALS.name, signals, keys=list(PAGE_SIGNALS.keys),
                         update_set={c: f"s.{c}" for c in _SIGNAL_VALUES},
                         update_condition=f"({changed}) AND {not_older}")
    return metrics.inserted, metrics.updated


def merge_feeds(lake: Lake, rows: DataFrame) -> None:
    """Insert new feeds, move ``last_seen_at`` of known ones; the first write creates the table
    with its rows (one commit)."""
    if not lake.exists(FEEDS.name):
        lake.overwrite(FEEDS.name, rows.select(*[F.col(f.name).cast(f.dataType) for f in FEEDS.schema.fields]))
        return
    lake.merge(FEEDS.name, rows, keys=list(FEEDS.keys), update_set={S.LAST_SEEN_AT: f"s.{S.LAST_SEEN_AT}"},
               update_condition=f"NOT (t.{S.LAST_SEEN_AT} <=> s.{S.LAST_SEEN_AT})")   # a retry commits nothing


# --- results of a run -----------------------------------------------------------------------------------

def by_page_id(df: DataFrame) -> DataFrame:
    """Range-partitioned and sorted by page_id, so Delta's per-file min/max statistics let a
    single-page lookup skip almost every file."""
    return df.repartitionByRange(S.PAGE_ID).sortWithinPartitions(S.PAGE_ID)


def rank_run_marker(run_id: str) -> str:
    """What a ``pagerank`` commit records as its ``built_from``: the run whose ranks it holds."""
    return json.dumps({S.RUN_ID: run_id})


def latest_rank_run_id(lake: Lake) -> str | None:
    """The run the ``pagerank`` table holds (it is replaced by each run); None before any.

    Read from the Delta log (the run id its last write recorded, :func:`rank_run_marker`), which
    runs no Spark job; a table written without one (by an older release) is read instead."""
    build = lake.last_build(PAGERANK.name)
    if build is None:
        return None
    built_from, rows = build
    try:
        recorded = json.loads(built_from) if built_from else None
    except ValueError:
        recorded = None
    if isinstance(recorded, dict) and isinstance(recorded.get(S.RUN_ID), str):
        return recorded[S.RUN_ID] if rows else None
    first = lake.read(PAGERANK.name).select(S.RUN_ID).first()
    return first[S.RUN_ID] if first else None
