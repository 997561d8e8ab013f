"""Forward, reverse and anchor-text indexes built from ``links`` (pure DataFrame -> DataFrame).

* ``forward_index``: rows (page_id, chunk) per page with at least one out-link: its targets' page
  ids, ascending, ``analysis.max_list_entries`` per chunk (chunk 0, 1, ... in id order), and the
  page's total ``target_count`` on every chunk row.
* ``reverse_index``: the same per page with at least one in-link, of its sources.
* ``anchor_index``: one row per linked page: its incoming anchor texts, normalised and counted.

Anchor normalisation (:func:`normalized_anchor`): lower case; every run of whitespace (Unicode
included) becomes one space; leading and trailing characters that are neither letters nor digits
are stripped (``"  Read more »"`` -> ``"read more"``).  An anchor that is null or empty after that is
an *empty* anchor (typically an image link without ``alt``); one listed in
``analysis.boilerplate_anchors`` (compared after normalisation) is *boilerplate*.  Both are counted
per page, neither is indexed.  The remaining anchors are aggregated per (page, anchor) with the
number of links carrying it and the number of distinct registered domains those links come from,
sorted by links (descending, then anchor ascending) and capped at ``analysis.anchor_cap`` (and
``analysis.max_list_entries``) by a window over those per-anchor rows before any list is built.  Each entry
keeps one context window (that of the link from the smallest source page id that has one); all
context windows stay queryable in ``links.context_window``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.config_analysis import DEFAULT_MAX_LIST_ENTRIES

_KIND = "_anchor_kind"
_USABLE, _EMPTY, _BOILERPLATE = "usable", "empty", "boilerplate"


def _chunked_lists(links: DataFrame, node: str, neighbour: str, ids: str, count: str, max_entries: int) -> DataFrame:
    """(page_id, chunk, ids, count): each node's distinct neighbours in ascending order, cut into
    chunks of at most ``max_entries`` ids (chunk 0 the smallest); ``count`` is the node's total.

    Each neighbour's chunk comes from its dense rank within the node (a window sorted by id, which
    spills rather than holding a hub's list), so no intermediate row holds more than
    ``max_entries`` ids either."""
    position = F.dense_rank().over(Window.partitionBy(S.PAGE_ID).orderBy("_id")) - 1
    chunks = (
        links.select(F.col(node).alias(S.PAGE_ID), F.col(neighbour).alias("_id"))
        .withColumn(S.CHUNK, (position / F.lit(max_entries)).cast("int"))
        .groupBy(S.PAGE_ID, S.CHUNK)
        .agg(F.array_sort(F.collect_set("_id")).alias(ids))
    )
    total = F.sum(F.size(ids)).over(Window.partitionBy(S.PAGE_ID)).cast("int")
    return chunks.select(S.PAGE_ID, S.CHUNK, ids, total.alias(count))


def forward_index(links: DataFrame, max_entries: int = DEFAULT_MAX_LIST_ENTRIES) -> DataFrame:
    """(page_id, chunk, target_ids, target_count) per source page and chunk of its targets."""
    return _chunked_lists(links, S.SRC_ID, S.DST_ID, S.TARGET_IDS, S.TARGET_COUNT, max_entries)


def reverse_index(links: DataFrame, max_entries: int = DEFAULT_MAX_LIST_ENTRIES) -> DataFrame:
    """(page_id, chunk, source_ids, source_count) per target page and chunk of its sources."""
    return _chunked_lists(links, S.DST_ID, S.SRC_ID, S.SOURCE_IDS, S.SOURCE_COUNT, max_entries)


def normalized_anchor(anchor: Column) -> Column:
    collapsed = F.regexp_replace(F.lower(anchor), r"[\s\p{Z}]+", " ")
    return F.regexp_replace(collapsed, r"^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$", "")


def _anchor_kind(anchor: Column, boilerplate: list[str]) -> Column:
    return (
        F.when(anchor.isNull() | (anchor == ""), F.lit(_EMPTY))
        .when(anchor.isin(*boilerplate) if boilerplate else F.lit(False), F.lit(_BOILERPLATE))
        .otherwise(F.lit(_USABLE))
    )


def _classified_anchors(links: DataFrame, pages: DataFrame, boilerplate: list[str]) -> DataFrame:
    """(src_id, dst_id, anchor, context_window, kind, source domain) of every link."""
    normalized_boilerplate = sorted({" ".join(b.lower().split()) for b in boilerplate})
    source_domain = pages.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(S.REGISTERED_DOMAIN).alias("_src_domain"))
    return (
        links.select(S.SRC_ID, S.DST_ID, normalized_anchor(F.col(S.ANCHOR_TEXT)).alias(S.ANCHOR), S.CONTEXT_WINDOW)
        .withColumn(_KIND, _anchor_kind(F.col(S.ANCHOR), normalized_boilerplate))
        .join(source_domain, on=S.SRC_ID, how="left")
    )


def _top_anchors(anchors: DataFrame, cap: int) -> DataFrame:
    """(page_id, _ranked, _distinct): each page's ``cap`` usable anchors with most links, ranked,
    and its count of distinct usable anchors."""
    per_anchor = (
        anchors.where(F.col(_KIND) == _USABLE)
        .groupBy(S.DST_ID, S.ANCHOR)
        .agg(
            F.count("*").alias(S.LINKS_COUNT),
            F.count_distinct("_src_domain").alias(S.LINKING_DOMAINS),
            F.min_by(S.CONTEXT_WINDOW, F.when(F.col(S.CONTEXT_WINDOW).isNotNull(), F.col(S.SRC_ID)))
            .alias(S.EXAMPLE_CONTEXT),
        )
    )
    # top ``cap`` per page by a window over the per-anchor rows, so no list ever holds more
    by_links = Window.partitionBy(S.DST_ID).orderBy(F.desc(S.LINKS_COUNT), S.ANCHOR)
    every = by_links.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    top = (
        per_anchor.withColumn("_rank", F.row_number().over(by_links))
        .withColumn("_distinct", F.count(F.lit(1)).over(every))
        .where(F.col("_rank") <= cap)
    )
    # sort_array orders structs field by field: the rank, i.e. most links first, then the anchor
    return top.groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).agg(
        F.sort_array(F.collect_list(F.struct(
            F.col("_rank").alias("_order"), S.ANCHOR, S.LINKS_COUNT, S.LINKING_DOMAINS, S.EXAMPLE_CONTEXT,
        ))).alias("_ranked"),
        F.max("_distinct").alias("_distinct"),
    )


def anchor_index(links: DataFrame, pages: DataFrame, cap: int, boilerplate: list[str],
                 max_entries: int = DEFAULT_MAX_LIST_ENTRIES) -> DataFrame:
    """Incoming anchors per page in the ``anchor_index`` schema (see the module docstring); at most
    ``min(cap, max_entries)`` entries per row."""
    anchors = _classified_anchors(links, pages, boilerplate)
    counts = anchors.groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).agg(
        F.count_if(F.col(_KIND) == _USABLE).alias("anchored_links"),
        F.count_if(F.col(_KIND) == _EMPTY).alias("empty_anchors"),
        F.count_if(F.col(_KIND) == _BOILERPLATE).alias("boilerplate_anchors"),
    )
    ranked = _top_anchors(anchors, min(cap, max_entries))
    entries = F.transform(
        "_ranked",
        lambda e: F.struct(
            e[S.ANCHOR].alias(S.ANCHOR), e[S.LINKS_COUNT].alias(S.LINKS_COUNT),
            e[S.LINKING_DOMAINS].alias(S.LINKING_DOMAINS), e[S.EXAMPLE_CONTEXT].alias(S.EXAMPLE_CONTEXT),
        ),
    )
    empty_entries = F.array().cast(S.ANCHOR_INDEX[S.ANCHORS].dataType)
    return counts.join(ranked, on=S.PAGE_ID, how="left").select(
        S.PAGE_ID,
        F.coalesce(entries, empty_entries).alias(S.ANCHORS),
        F.coalesce(F.col("_distinct"), F.lit(0)).cast("int").alias("distinct_anchors"),
        "anchored_links", "empty_anchors", "boilerplate_anchors",
    )
