"""Edge records and arc lists into ``pages``/``links``/``rejects``: the write half of ingest,
shared by every input format (crawl formats included, see ``linkgraph.inputs.crawl``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph.inputs import ingest as I
from linkgraph.inputs import readers
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, reasons_text
from linkgraph.lake.delta import Lake
from linkgraph.lake.paths import display
from linkgraph.lake.reliability import check_pages_still_there, guard_new_page_ids


@dataclass
class IngestReport(Report):
    source: str
    read: int = 0
    rejected: int = 0
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    pages_inserted: int = 0
    pages_updated: int = 0
    links_inserted: int = 0
    links_updated: int = 0
    rejects_inserted: int = 0
    seconds: float = 0.0
    # records that are a links row after the run (inserted, updated or already stored unchanged):
    # every record read is written or rejected, read = written + rejected
    written: int = 0
    # input files left out, by kind (``symlink``, ``hidden``): see ``linkgraph.lake.paths.list_input_files``
    skipped_files: dict[str, int] = field(default_factory=dict)

    @property
    def upserted(self) -> int:
        return self.links_inserted + self.links_updated

    @property
    def rows_written(self) -> int:
        return self.pages_inserted + self.pages_updated + self.upserted + self.rejects_inserted

    def summary(self) -> str:
        reasons = reasons_text(self.rejected_by_reason)
        return (
            f"ingest {display(self.source)}: read={self.read} upserted={self.upserted} rejected={self.rejected} "
            f"(links +{self.links_inserted} new, {self.links_updated} updated; pages +{self.pages_inserted} new, "
            f"{self.pages_updated} updated; rejects by reason: {reasons}){self._skipped_text()} in {self.seconds:.1f}s"
        )

    def _skipped_text(self) -> str:
        if not self.skipped_files:
            return ""
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.skipped_files.items()))
        return f" skipped_files={sum(self.skipped_files.values())} ({kinds})"


def count_rejects(rejects: DataFrame, report: IngestReport) -> None:
    report.rejected_by_reason = T.count_by_reason(rejects)
    report.rejected = sum(report.rejected_by_reason.values())


COLUMNAR_CACHE_COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"
# per session: (blocks open, the setting before the first of them); ingests may run concurrently
# in threads of one session (a notebook, the concurrency tests), and the last one out restores it
_UNCOMPRESSED_BLOCKS: dict[int, tuple[int, str | None]] = {}
_UNCOMPRESSED_LOCK = threading.Lock()


@contextmanager
def uncompressed_cache(spark: SparkSession) -> Iterator[None]:
    """Frames cached (``persist``) inside the block are stored without Spark's columnar
    compression; the session's setting is restored when the last such block (of any thread) ends.
    Ingest caches rows of long, distinct strings (URLs, anchors), which compress little for much
    CPU.  Compressing the ranked records cost more than ranking them (1M records, local[2]:
    ranking 14.8 s, ranking and caching compressed 24.9 s, uncompressed 17.6 s; 64.0 MB cached
    compressed, 77.5 MB uncompressed).  What does not fit in memory spills to disk
    (MEMORY_AND_DISK)."""
    key = id(spark)
    with _UNCOMPRESSED_LOCK:
        open_blocks, before = _UNCOMPRESSED_BLOCKS.get(key, (0, None))
        if not open_blocks:
            before = spark.conf.get(COLUMNAR_CACHE_COMPRESSED, None)
            spark.conf.set(COLUMNAR_CACHE_COMPRESSED, "false")
        _UNCOMPRESSED_BLOCKS[key] = (open_blocks + 1, before)
    try:
        yield
    finally:
        with _UNCOMPRESSED_LOCK:
            open_blocks, before = _UNCOMPRESSED_BLOCKS.pop(key)
            if open_blocks > 1:
                _UNCOMPRESSED_BLOCKS[key] = (open_blocks - 1, before)
            elif before is None:
                spark.conf.unset(COLUMNAR_CACHE_COMPRESSED)
            else:
                spark.conf.set(COLUMNAR_CACHE_COMPRESSED, before)


def ingest_edges(lake: Lake, config: Config, raw: DataFrame, report: IngestReport) -> None:
    """Validate raw edge records and upsert them: rejects, pages (new ones numbered), links.

    The records are read and validated once (cached) and counted, and ranked within their
    (source, destination) pair (:func:`ranked_batch`: only the records of repeated pairs are
    shuffled).  The rejects are committed first, from a cache of their own (counted by reason;
    every other record is a link), then the pages and the links; the ranked records' caches are
    released once the links have their page ids.
    """
    ranked = ranked_batch(lake.spark, I.validate_edges(raw, config.ingest))
    resolved = batch_pages = rejects = None
    try:
        # the rejects (a few % of the records) are taken from the windowed records (in memory), not
        # from all of them, and cached: their counts, key filter and MERGE read them, not the records
        with uncompressed_cache(lake.spark):
            rejects = I.reject_rows(I.rejected(ranked.rejects_among), report.source).persist(
                StorageLevel.MEMORY_AND_DISK)
        count_rejects(rejects, report)
        report.read = ranked.records
        report.written = report.read - report.rejected
        T.ensure_core_tables(lake)
        report.rejects_inserted = T.write_rejects(lake, rejects)
        rejects.unpersist()
        links = I.representatives(ranked.frame)
        # a batch's pages are at most two per link: the URLs of a batch small enough are broadcast
        # to the scan of ``pages`` (nothing of it is shuffled)
        broadcast_urls = 2 * report.written <= config.ingest.broadcast_pages
        pages_read_version, new_from, batch_pages = _upsert_url_pages(lake, links, report, broadcast_urls)
        # ids as this ingest read and wrote them (a page a concurrent prune deleted since is
        # caught below); the id joins run once for up to two links MERGEs and their key ranges
        resolved = links_with_page_ids(links, batch_pages, config, report.written)
        batch_pages.unpersist()
        ranked.release()
        # a batch whose URLs are broadcast is small enough to broadcast its links into the MERGEs
        report.links_inserted, report.links_updated = T.upsert_links(lake, resolved, new_from=new_from,
                                                                     broadcast=broadcast_urls)
        check_pages_still_there(lake, pages_read_version, resolved)
    finally:
        ranked.release()
        for frame in (batch_pages, resolved, rejects):
            if frame is not None:
                frame.unpersist()


def links_with_page_ids(links: DataFrame, batch_pages: DataFrame, config: Config, links_count: int,
                        hash_of: Callable[[Column], Column] = I.url_hash) -> DataFrame:
    """``I.links_with_ids`` of a batch's ``links_count`` links and its pages, cached (the caller
    unpersists it) and counted: by the hash of their URLs (``hash_of``), unless two of the batch's
    URLs share one, then by URL.  Every page of the batch is an end of one of its links, so two
    URLs sharing a hash give such a link more than one row: a resolved frame of other than
    ``links_count`` rows is dropped and the links are resolved again by URL.  Nothing is shuffled
    to look for collisions.  The (hash, page_id) table is broadcast for at most
    ``ingest.broadcast_page_ids`` pages, a (url, page_id) table for at most
    ``ingest.broadcast_pages``."""
    pages = batch_pages.count()

    def resolved(by_hash: bool) -> tuple[DataFrame, int]:
        limit = config.ingest.broadcast_page_ids if by_hash else config.ingest.broadcast_pages
        with uncompressed_cache(links.sparkSession):
            frame = I.links_with_ids(links, batch_pages, pages <= limit, by_hash=by_hash, hash_of=hash_of)
            frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
        return frame, frame.count()

    by_hash, rows = resolved(by_hash=True)
    if rows == links_count:
        return by_hash
    by_hash.unpersist()
    return resolved(by_hash=False)[0]


@dataclass
class RankedBatch:
    """``I.rank_sightings`` of a batch (``frame``) and the caches it reads (``release`` them);
    ``rejects_among``: the part of ``frame`` that holds every record ``I.rejected`` keeps."""

    frame: DataFrame
    cached: list[DataFrame]
    rejects_among: DataFrame
    records: int = 0  # the records ranked (valid or not)

    def release(self) -> None:
        for frame in self.cached:
            frame.unpersist()


def ranked_batch(spark: SparkSession, validated: DataFrame) -> RankedBatch:
    """``I.rank_sightings`` of ``validated`` with one full-width cache, the validated records in
    the partitions they were read in (nothing of them is shuffled to cache them).  The pairs held
    by more than one record are found by a shuffle of one ``long`` per record; only those pairs'
    records are shuffled and sorted by the window, and their ranked rows cached.  The other
    records are read from the cache as ranked (:func:`I.rank_single_sightings`).  A batch's pairs
    are mostly single, so its full records mostly never leave their task.  The invalid records go
    through the window too (spread by a hash of their fields), so every reject is in the window's
    cache (``rejects_among``), read without the other records.

    The validated records are cached on local disk: a partition is an input split (a Parquet row
    group can hold millions of records), which a block on disk writes and reads as a stream
    where a block in the heap is held whole (10M records in 4 splits, local[2], 4 GB: out of
    memory in the heap, 152 s to rank on disk)."""
    with uncompressed_cache(spark):
        keyed = I.with_pair_key(validated).persist(StorageLevel.DISK_ONLY)
    held = RankedBatch(keyed, [keyed], keyed)
    try:
        # the cache is built by a job of its own: a task building its block of records and
        # aggregating their keys at once competes with itself for memory
        held.records = keyed.count()
        repeated = I.repeated_pair_keys(keyed).persist(StorageLevel.MEMORY_AND_DISK)
        held.cached.append(repeated)
        routed = I.route_by_repetition(keyed, repeated, repeated.count())
        with uncompressed_cache(spark):
            if routed is None:   # Spark Connect: every record through the window
                windowed, single = I.rank_sightings(keyed.drop(I.PAIR_KEY)).persist(StorageLevel.MEMORY_AND_DISK), None
            else:
                windowed = I.rank_sightings(routed[0]).persist(StorageLevel.MEMORY_AND_DISK)
                single = I.rank_single_sightings(routed[1])
        held.cached.append(windowed)
        windowed.count()
    except BaseException:
        held.release()
        raise
    # the records left out of the window are valid and their pair's only one: no reject among them
    held.frame, held.rejects_among = (windowed if single is None else windowed.unionByName(single)), windowed
    return held


def _upsert_url_pages(lake: Lake, links: DataFrame, report: IngestReport,
                      broadcast_urls: bool) -> tuple[int, int | None, DataFrame]:
    """The pages of a batch of links: new URLs numbered after the largest stored id, known ones
    widened; a concurrent ingest that took the same ids is detected (``guard_new_page_ids``).
    Stored pages are looked up by the batch's URLs (``I.look_up_pages``), broadcast when
    ``broadcast_urls``, and the new ones numbered (``I.number_new_pages``).
    Returns the ``pages`` version the ids were read from; the first id given to a new page when
    every id from it on is this ingest's own (no other ingest committed pages meanwhile), else
    None; and the batch's pages with their ids (cached: the caller unpersists it)."""
    pages_read_version = lake.current_version(S.PAGES_TABLE)
    existing = lake.read_version(S.PAGES_TABLE, pages_read_version)
    if existing.where(F.col(S.URL).isNull()).limit(1).count():
        raise readers.InputSchemaError(
            f"lake {lake.root} holds an arc-list graph (pages without URLs); ingest URL edges into a lake of their own"
        )
    first_new_id = T.max_page_id_of(existing) + 1
    # the batch's URLs are aggregated once: the look-up and the numbering both read them, and an
    # uncached aggregate would be computed (and its ends shuffled) once for each
    with uncompressed_cache(lake.spark):
        seen = I.batch_pages(links).persist(StorageLevel.MEMORY_AND_DISK)
        looked_up = I.look_up_pages(seen, existing, broadcast_urls).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            batch_pages = I.number_new_pages(looked_up, first_new_id).persist(StorageLevel.MEMORY_AND_DISK)
            batch_pages.count()
        finally:
            looked_up.unpersist()
            seen.unpersist()
    try:
        report.pages_inserted, report.pages_updated = T.upsert_numbered_pages(lake, batch_pages, first_new_id,
                                                                              broadcast=broadcast_urls)
        alone = guard_new_page_ids(lake, pages_read_version, batch_pages.where(F.col(S.PAGE_ID) >= first_new_id))
    except BaseException:
        batch_pages.unpersist()
        raise
    return pages_read_version, (first_new_id if alone and report.pages_inserted else None), batch_pages


def ingest_arcs(lake: Lake, config: Config, arcs_raw: DataFrame, report: IngestReport) -> None:
    """Validate an arc list (node ids, no URLs) and upsert it into a lake of its own."""
    arcs = I.validate_arcs(arcs_raw, config.ingest).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.read = arcs.count()
        valid, duplicates = I.split_arc_duplicates(arcs.where(F.col(S.REASON).isNull()))
        bad = arcs.where(F.col(S.REASON).isNotNull()).unionByName(duplicates)
        rejects = I.reject_rows(I.arcs_as_raw(bad), report.source).persist(StorageLevel.MEMORY_AND_DISK)
        count_rejects(rejects, report)
        report.written = valid.count()

        T.ensure_core_tables(lake)
        if lake.read(S.PAGES_TABLE).where(F.col(S.URL).isNotNull()).limit(1).count():
            raise readers.InputSchemaError(
                f"lake {lake.root} holds URL pages; an arc list's node ids need a lake of their own"
            )
        report.pages_inserted, report.pages_updated = T.upsert_pages(lake, I.arc_pages(valid), key=S.PAGE_ID)
        report.links_inserted, report.links_updated = T.upsert_links(lake, I.arc_links(valid))
        report.rejects_inserted = T.write_rejects(lake, rejects)
        rejects.unpersist()
    finally:
        arcs.unpersist()
