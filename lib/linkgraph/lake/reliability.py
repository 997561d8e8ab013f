"""Retrying a pipeline step whose Delta commit lost a race with a concurrent writer.

Two jobs writing the same table at once (two ingests into one lake) are serialised by Delta's
optimistic concurrency control: the second to commit a MERGE that read files the first one changed
fails with one of Delta's ``DeltaConcurrentModificationException`` subclasses
(``ConcurrentAppendException``, ``ProtocolChangedException`` when both create the table, …) and
nothing of that commit is visible.  The unit to retry is the whole step, not the failed MERGE: the
step's later writes were planned from what it read (``pages`` assigns new page ids from the table's
maximum id), and re-planning from the table the winner left is what keeps ids unique.  Steps are
idempotent, so a retry re-does nothing already committed.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from delta import exceptions as delta_errors
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.errors import (
    ConcurrentPageIdException as ConcurrentPageIdException,
)
from linkgraph.errors import (
    ConcurrentPruneException as ConcurrentPruneException,
)
from linkgraph.errors import (
    ConcurrentTableCreationException as ConcurrentTableCreationException,
)
from linkgraph.errors import (
    ConflictRetriesExhausted,
)
from linkgraph.lake import checkpoints
from linkgraph.lake import schemas as S
from linkgraph.lake.rows import one_row

log = logging.getLogger(__name__)

T = TypeVar("T")

GUARD_DELETE_ATTEMPTS = 10


def raise_if_created_concurrently(lake, tables: tuple[str, ...], exc: BaseException) -> None:
    """Raise ``ConcurrentTableCreationException`` from ``exc`` when it is Delta's
    ``DELTA_TABLE_NOT_FOUND`` for one of the lake's ``tables`` that exists now."""
    if "DELTA_TABLE_NOT_FOUND" not in str(exc):
        return
    for table in tables:
        if f"{table}` doesn't exist" in str(exc) and lake.exists(table):
            raise ConcurrentTableCreationException(
                f"table '{table}' was being created by another job when this one read it") from exc


def is_delta_conflict(exc: BaseException) -> bool:
    """True for Delta's concurrent-modification errors (Python wrappers or their JVM class names)."""
    # Delta's Python conflict classes do not share a base class (each derives PySparkException).
    conflicts = tuple(getattr(delta_errors, name) for name in delta_errors.__all__)
    if isinstance(exc, conflicts + (ConcurrentPageIdException, ConcurrentPruneException,
                                    ConcurrentTableCreationException)):
        return True
    # Unconverted JVM errors (e.g. raised inside a py4j call the converter does not see), and
    # conflicts Delta rethrows wrapped (an empty UnsupportedOperationException from
    # DeltaTableV2.withEnrichedUnsupportedTableException whose JVM stack names the conflict).
    text = f"{type(exc).__name__}: {exc} {getattr(exc, '_stackTrace', None) or ''}"
    return "io.delta.exceptions.Concurrent" in text or "DeltaConcurrentModificationException" in text


def conflict_name(exc: BaseException) -> str:
    """The Delta exception class of a conflict, for messages (``ConcurrentAppendException``)."""
    name = type(exc).__name__
    if name.startswith(("Concurrent", "ProtocolChanged", "MetadataChanged")):
        return name
    for token in str(exc).replace(":", " ").split():
        if token.startswith("io.delta.exceptions."):
            return token.rsplit(".", 1)[-1]
    return name


def retry_on_conflict(
    step: Callable[[], T],
    what: str,
    attempts: int,
    backoff_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``step`` and re-run it when it fails with a Delta conflict, at most ``attempts`` times.

    Between attempts it waits ``backoff_seconds`` × attempt number, scaled by a random factor in
    [0.5, 1.5) so that two losers do not collide again in lockstep.  Any other error propagates at
    once.  After the last conflicting attempt raises ``ConflictRetriesExhausted`` naming the step
    and Delta's error.
    """
    for attempt in range(1, attempts + 1):
        try:
            return step()
        except Exception as exc:  # noqa: BLE001 - only conflicts are retried, everything else re-raised
            if not is_delta_conflict(exc):
                raise
            name = conflict_name(exc)
            if attempt == attempts:
                raise ConflictRetriesExhausted(
                    f"{what}: a concurrent job committed to the same Delta table first ({name}) on each of "
                    f"{attempts} attempts; nothing of the failed commits is visible, re-run the command"
                ) from exc
            wait = backoff_seconds * attempt * (0.5 + random.random())
            log.warning("%s: a concurrent job committed to the same Delta table first (%s); retrying the step "
                        "(attempt %d of %d) in %.1fs", what, name, attempt + 1, attempts, wait)
            sleep(wait)
    raise AssertionError("unreachable")  # attempts >= 1 is enforced by ReliabilityConfig


# Messages of the errors a reader raises when a file ends early or is not what its name says
# (Hadoop's gzip codec, Python's gzip module, Parquet, the local file system's .crc checksums).
_UNREADABLE_INPUT = (
    "Unexpected end of input stream", "unexpected end of file", "Compressed file ended before the end-of-stream marker",
    "Not in GZIP format", "not a gzipped file", "incorrect header check", "invalid stored block lengths",
    "is not a Parquet file", "Checksum error",
)


def unreadable_input(exc: BaseException) -> str | None:
    """The reason when ``exc`` says an input file cannot be read to its end (a truncated or
    corrupt compressed file), else None."""
    text = f"{type(exc).__name__}: {exc}"
    for marker in _UNREADABLE_INPUT:
        if marker.lower() in text.lower():
            return marker
    return None


def _others_committed_pages(lake, read_version: int | None) -> bool:
    """True when ``pages`` holds a commit after ``read_version`` that this ``lake`` object did not
    make: a look-up of the versions since the one read (``Lake.versions_since``), never of the
    table's whole history."""
    own = {v for table, v in lake.commits if table == S.PAGES_TABLE and v is not None}
    return any(v not in own for v in lake.versions_since(S.PAGES_TABLE, read_version))


def guard_new_page_ids(lake, read_version: int | None, numbered: DataFrame) -> bool:
    """After the pages MERGE: make sure no page id is used twice.

    New page ids are numbered from ``max(page_id)`` of the ``pages`` version ``read_version``, read
    before the MERGE; Delta's conflict check covers only the MERGE's own read, so another ingest
    committing new pages in between goes unnoticed by Delta and both number from the same maximum.
    The later committer finds the other commit in the table's history; if ids are then shared, it
    deletes its own rows that hold a shared id (``numbered``: url, page_id) in one commit and
    raises ``ConcurrentPageIdException``, which ``retry_on_conflict`` treats as a conflict; the
    re-run numbers those pages anew.  Only rows with a shared id go: a URL both ingests numbered
    alike (same URL, same id) is one row the other ingest inserted and this one only updated.

    Returns True when no other commit came in between: every page id from the first of
    ``numbered`` on is then one this ingest inserted, so no stored link can have an end there
    (``tables.upsert_links`` writes such links with an insert-only MERGE).
    """
    if not _others_committed_pages(lake, read_version):   # only this ingest's own commits (or none)
        return True
    # an id used twice is one of this ingest's new ids: all are >= the smallest of them, so only
    # the files holding such ids are read (and the delete touches only those)
    first_new = one_row(numbered.agg(F.min(S.PAGE_ID)))[0]
    if first_new is None:
        return False
    pages = lake.read_version(S.PAGES_TABLE, lake.current_version(S.PAGES_TABLE))
    shared = (pages.where(F.col(S.PAGE_ID) >= F.lit(first_new))
              .groupBy(S.PAGE_ID).count().where(F.col("count") > 1).select(S.PAGE_ID))
    if not shared.limit(1).count():
        return False
    colliding = numbered.select(S.URL, S.PAGE_ID).join(shared, on=S.PAGE_ID, how="left_semi")
    # The delete must land, or this ingest's pages would keep the shared ids for good: it is
    # idempotent (own url and id only), so it is retried on a conflict of its own.
    retry_on_conflict(
        lambda: lake.delete_matching(S.PAGES_TABLE, colliding, [S.URL, S.PAGE_ID], prune_on=S.PAGE_ID),
        what="page-id guard: removing this ingest's pages with shared ids", attempts=GUARD_DELETE_ATTEMPTS,
        backoff_seconds=0.5,
    )
    raise ConcurrentPageIdException(
        "another ingest committed new pages with the same new page ids while this one ran; "
        "its own pages with those ids were removed"
    )


def check_pages_still_there(lake, read_version: int | None, resolved: DataFrame) -> None:
    """After the links MERGE: make sure no page this ingest links to was deleted meanwhile.

    A prune (``linkgraph reward``) deletes the links of its pages, then the pages.  An ingest that
    resolved its URLs to page ids before that pages DELETE and commits its links after it would
    leave links to missing pages (Delta sees no conflict: different tables).  So when another job
    committed to ``pages`` since the ingest read it (``read_version``), the ingest checks that
    every page id its links (``resolved``: src_id, dst_id) name is still a page (a URL pruned and
    inserted again has a new id); if not, it deletes those links in one commit retried on a conflict, and
    raises ``ConcurrentPruneException``, which ``retry_on_conflict`` treats as a conflict: the re-run
    inserts the pruned URLs as new pages.  Links committed *before* the pages DELETE are removed
    by the prune itself (its last DELETE reads ``links`` after its pages DELETE), so between the
    two no link to a pruned page stays.
    """
    if not _others_committed_pages(lake, read_version):   # only this ingest's own pages commit (or none)
        return
    pages = lake.read_version(S.PAGES_TABLE, lake.current_version(S.PAGES_TABLE))
    ids = pages.select(S.PAGE_ID)
    dangling = (resolved.select(S.SRC_ID, S.DST_ID)
                .join(ids.select(F.col(S.PAGE_ID).alias(S.SRC_ID)), on=S.SRC_ID, how="left_anti")
                .unionByName(resolved.select(S.SRC_ID, S.DST_ID)
                             .join(ids.select(F.col(S.PAGE_ID).alias(S.DST_ID)), on=S.DST_ID, how="left_anti"))
                .distinct())
    if not dangling.limit(1).count():
        return
    # the same rows for every attempt of the delete, also after a lost executor (a reliable cut:
    # recomputing them would read a pages table other jobs change)
    dangling = checkpoints.cut(dangling)
    retry_on_conflict(
        lambda: lake.delete_matching(S.LINKS_TABLE, dangling, [S.SRC_ID, S.DST_ID], prune_on=S.SRC_ID),
        what="removing this ingest's links to pages a concurrent prune deleted", attempts=GUARD_DELETE_ATTEMPTS,
        backoff_seconds=0.5,
    )
    checkpoints.drop(dangling)
    raise ConcurrentPruneException(
        "a concurrent prune deleted pages this ingest links to while it ran; its links to them were removed"
    )
