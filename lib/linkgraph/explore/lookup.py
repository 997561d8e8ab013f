"""``linkgraph links`` and ``linkgraph frontier``: answers read from the lake's indexes, the
compressed graph and the frontier (nothing is written)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.compress import ConnectivityIndex
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.lakepolicy import url_policy
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy
from linkgraph.urls import canonicalize

LINK_DIRECTIONS = ("out", "in", "anchors")


def page_id_of(lake: Lake, pages: DataFrame, url: str, policy: UrlPolicy = DEFAULT_POLICY) -> int:
    """The page id of ``url`` canonicalised like ingest (under ``policy``, the config's); ``LookupError``
    when malformed or unknown."""
    canonical = canonicalize(url, policy)
    if canonical.url is None:
        raise LookupError(f"not a valid URL ({canonical.reason}: {canonical.detail}): {url}")
    found = pages.where(F.col(S.URL) == canonical.url).select(S.PAGE_ID).first()
    if found is None:
        raise LookupError(f"no page {canonical.url} in lake {lake.root}")
    return found[S.PAGE_ID]


def links(ctx: StepContext, direction: str, url: str) -> DataFrame:
    """What the indexes say about one page: ``out`` (url, page_id of each target), ``in`` (each
    source) or ``anchors`` (anchor, links, linking_domains, example_context), in index order.

    ``url`` is canonicalised like ingest; an unknown or malformed URL raises ``LookupError``.
    """
    lake = ctx.lake
    T.require(lake, T.PAGES, T.FORWARD_INDEX, T.REVERSE_INDEX, T.ANCHOR_INDEX)
    pages = T.PAGES.read(lake)
    page_id = page_id_of(lake, pages, url, url_policy(ctx.config, ctx.spark))
    if direction == "anchors":
        row = T.ANCHOR_INDEX.read(lake).where(F.col(S.PAGE_ID) == page_id)
        return row.select(F.posexplode(S.ANCHORS).alias("position", "entry")).select(
            "position", "entry.*").orderBy("position").drop("position")
    table, ids = (T.FORWARD_INDEX, S.TARGET_IDS) if direction == "out" else (T.REVERSE_INDEX, S.SOURCE_IDS)
    # the page's rows are chunks of at most analysis.max_list_entries ids: chunk order, then position
    neighbours = table.read(lake).where(F.col(S.PAGE_ID) == page_id).select(
        S.CHUNK, F.posexplode(ids).alias("position", S.PAGE_ID))
    return neighbours.join(pages.select(S.PAGE_ID, S.URL), on=S.PAGE_ID, how="left").orderBy(
        S.CHUNK, "position").select(S.URL, S.PAGE_ID)


def links_compressed(ctx: StepContext, direction: str, url: str, limit: int) -> list[dict]:
    """``out``/``in`` neighbours of one page from the compressed graph (``ConnectivityIndex.open``):
    the first ``limit`` in url_key order (the graph's vertex order: only their order chunks are
    read, however long the list) as dicts of url and page_id, in id order; URL <-> id through
    ``pages``."""
    lake = ctx.lake
    T.require(lake, T.PAGES, T.LINKS_COMPRESSED_FORWARD)
    pages = T.PAGES.read(lake)
    page_id = page_id_of(lake, pages, url, url_policy(ctx.config, ctx.spark))
    index = ConnectivityIndex.open(lake)   # reads the block holding the page, not the whole graph
    ids = (index.out_links if direction == "out" else index.in_links)(page_id, limit=limit)
    urls = {r[S.PAGE_ID]: r[S.URL] for r in pages.where(F.col(S.PAGE_ID).isin([int(i) for i in ids])).collect()}
    return [{S.URL: urls.get(int(i)), S.PAGE_ID: int(i)} for i in ids]


def frontier(ctx: StepContext, top: int) -> list[dict]:
    """The first ``top`` frontier rows (position order) as dicts, for export by the CLI."""
    T.FRONTIER.require(ctx.lake)
    rows = T.FRONTIER.read(ctx.lake).orderBy("position").limit(top).collect()
    return [row.asDict() for row in rows]
