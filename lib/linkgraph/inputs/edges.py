"""Edge records on their way into ``pages``/``links``/``rejects``: the transform half of ingest,
shared by every input format (crawl formats included, see ``linkgraph.inputs.crawl``).  The ingest
report, a batch's records ranked within their pair (:func:`ranked_batch`), its links resolved to
page ids (:func:`links_with_page_ids`) and the setting their caches are built with
(:func:`uncompressed_cache`).  No table is written here: the write half (the MERGEs, in order) is
``linkgraph.steps.ingest_write``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession

from linkgraph.inputs import ingest as I
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.context import Report, reasons_text
from linkgraph.lake.paths import display


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
