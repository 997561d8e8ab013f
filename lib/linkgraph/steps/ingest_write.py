"""The write half of ingest, shared by every input format (crawl formats included,
``linkgraph.steps.ingest_crawl``): validated edge records or an arc list into
``pages``/``links``/``rejects``, in that order of commits.

The records are read, validated and ranked by ``linkgraph.inputs`` (``inputs.ingest``,
``inputs.edges``); the MERGEs are the write rules of ``linkgraph.lake.tables``.
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.inputs import ingest as I
from linkgraph.inputs import readers
from linkgraph.inputs.edges import IngestReport, count_rejects, links_with_page_ids, ranked_batch, uncompressed_cache
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.config import Config
from linkgraph.lake.delta import Lake
from linkgraph.lake.lakepolicy import policy_properties
from linkgraph.lake.reliability import check_pages_still_there, guard_new_page_ids
from linkgraph.urlpolicy import UrlPolicy


def ingest_edges(lake: Lake, config: Config, raw: DataFrame, report: IngestReport, policy: UrlPolicy) -> None:
    """Validate raw edge records (URLs canonicalised under ``policy``) and upsert them: rejects,
    pages (new ones numbered), links; ``pages`` records the policy (``lakepolicy``).

    The records are read and validated once (cached) and counted, and ranked within their
    (source, destination) pair (:func:`ranked_batch`: only the records of repeated pairs are
    shuffled).  The rejects are committed first, from a cache of their own (counted by reason;
    every other record is a link), then the pages and the links; the ranked records' caches are
    released once the links have their page ids.
    """
    ranked = ranked_batch(lake.spark, I.validate_edges(raw, config.ingest, policy))
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
        T.ensure_core_tables(lake, policy_properties(config.urls, policy))
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


def _upsert_url_pages(lake: Lake, links: DataFrame, report: IngestReport,
                      broadcast_urls: bool) -> tuple[int, int | None, DataFrame]:
    """The pages of a batch of links: new URLs numbered after the largest stored id, known ones
    widened; a concurrent ingest that took the same ids is detected (``guard_new_page_ids``).
    Stored pages are looked up by the batch's URLs (``I.look_up_pages``), broadcast when
    ``broadcast_urls``, and the new ones numbered (``I.number_new_pages``).
    Returns the ``pages`` version the ids were read from; the first id given to a new page when
    every id from it on is this ingest's own (no other ingest committed pages meanwhile), else
    None; and the batch's pages with their ids (cached: the caller unpersists it)."""
    pages_read_version = T.PAGES.current_version(lake)
    existing = T.PAGES.read_version(lake, pages_read_version)
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


def ingest_arcs(lake: Lake, config: Config, arcs_raw: DataFrame, report: IngestReport, policy: UrlPolicy) -> None:
    """Validate an arc list (node ids, no URLs) and upsert it into a lake of its own (``pages``
    records ``policy`` all the same: a lake has one)."""
    arcs = I.validate_arcs(arcs_raw, config.ingest).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        report.read = arcs.count()
        valid, duplicates = I.split_arc_duplicates(arcs.where(F.col(S.REASON).isNull()))
        bad = arcs.where(F.col(S.REASON).isNotNull()).unionByName(duplicates)
        rejects = I.reject_rows(I.arcs_as_raw(bad), report.source).persist(StorageLevel.MEMORY_AND_DISK)
        count_rejects(rejects, report)
        report.written = valid.count()

        T.ensure_core_tables(lake, policy_properties(config.urls, policy))
        if T.PAGES.read(lake).where(F.col(S.URL).isNotNull()).limit(1).count():
            raise readers.InputSchemaError(
                f"lake {lake.root} holds URL pages; an arc list's node ids need a lake of their own"
            )
        report.pages_inserted, report.pages_updated = T.upsert_pages(lake, I.arc_pages(valid), key=S.PAGE_ID)
        report.links_inserted, report.links_updated = T.upsert_links(lake, I.arc_links(valid))
        report.rejects_inserted = T.write_rejects(lake, rejects)
        rejects.unpersist()
    finally:
        arcs.unpersist()
