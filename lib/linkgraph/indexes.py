"""Forward, reverse and anchor-text indexes built from ``links`` (pure DataFrame -> DataFrame).

* ``forward_index``: one row per page with at least one out-link: its targets' page ids, ascending.
* ``reverse_index``: one row per page with at least one in-link: its sources' page ids, ascending.
* ``anchor_index``: one row per linked page: its incoming anchor texts, normalised and counted.

Anchor normalisation (:func:`normalized_anchor`): lower case; every run of whitespace (Unicode
included) becomes one space; leading and trailing characters that are neither letters nor digits
are stripped (``"  Read more »"`` -> ``"read more"``).  An anchor that is null or empty after that is
an *empty* anchor (typically an image link without ``alt``); one listed in
``analysis.boilerplate_anchors`` (compared after normalisation) is *boilerplate*.  Both are counted
per page, neither is indexed.  The remaining anchors are aggregated per (page, anchor) with the
number of links carrying it and the number of distinct registered domains those links come from,
sorted by links (descending, then anchor ascending) and capped at ``analysis.anchor_cap``.  Each entry
keeps one context window (that of the link from the smallest source page id that has one); all
context windows stay queryable in ``links.context_window``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from linkgraph import schemas as S

_KIND = "_anchor_kind"
_USABLE, _EMPTY, _BOILERPLATE = "usable", "empty", "boilerplate"


def forward_index(links: DataFrame) -> DataFrame:
    """(page_id, target_ids, target_count) per source page."""
    return links.groupBy(F.col(S.SRC_ID).alias(S.PAGE_ID)).agg(
        F.array_sort(F.collect_set(S.DST_ID)).alias(S.TARGET_IDS),
    ).select(S.PAGE_ID, S.TARGET_IDS, F.size(S.TARGET_IDS).alias(S.TARGET_COUNT))


def reverse_index(links: DataFrame) -> DataFrame:
    """(page_id, source_ids, source_count) per target page."""
    return links.groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).agg(
        F.array_sort(F.collect_set(S.SRC_ID)).alias(S.SOURCE_IDS),
    ).select(S.PAGE_ID, S.SOURCE_IDS, F.size(S.SOURCE_IDS).alias(S.SOURCE_COUNT))


def normalized_anchor(anchor: Column) -> Column:
    collapsed = F.regexp_replace(F.lower(anchor), r"[\s\p{Z}]+", " ")
    return F.regexp_replace(collapsed, r"^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$", "")


def _anchor_kind(anchor: Column, boilerplate: list[str]) -> Column:
    return (
        F.when(anchor.isNull() | (anchor == ""), F.lit(_EMPTY))
        .when(anchor.isin(*boilerplate) if boilerplate else F.lit(False), F.lit(_BOILERPLATE))
        .otherwise(F.lit(_USABLE))
    )


def anchor_index(links: DataFrame, pages: DataFrame, cap: int, boilerplate: list[str]) -> DataFrame:
    """Incoming anchors per page in the ``anchor_index`` schema (see the module docstring)."""
    normalized_boilerplate = sorted({" ".join(b.lower().split()) for b in boilerplate})
    source_domain = pages.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(S.REGISTERED_DOMAIN).alias("_src_domain"))
    anchors = (
        links.select(S.SRC_ID, S.DST_ID, normalized_anchor(F.col(S.ANCHOR_TEXT)).alias(S.ANCHOR), S.CONTEXT_WINDOW)
        .withColumn(_KIND, _anchor_kind(F.col(S.ANCHOR), normalized_boilerplate))
        .join(source_domain, on=S.SRC_ID, how="left")
    )
    counts = anchors.groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).agg(
        F.count_if(F.col(_KIND) == _USABLE).alias("anchored_links"),
        F.count_if(F.col(_KIND) == _EMPTY).alias("empty_anchors"),
        F.count_if(F.col(_KIND) == _BOILERPLATE).alias("boilerplate_anchors"),
    )
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
    # sort_array orders structs field by field: most links first, then the anchor text
    ranked = per_anchor.groupBy(F.col(S.DST_ID).alias(S.PAGE_ID)).agg(
        F.sort_array(F.collect_list(F.struct(
            (-F.col(S.LINKS_COUNT)).alias("_order"), S.ANCHOR, S.LINKS_COUNT, S.LINKING_DOMAINS, S.EXAMPLE_CONTEXT,
        ))).alias("_ranked"),
    )
    entries = F.transform(
        F.slice("_ranked", 1, cap),
        lambda e: F.struct(
            e[S.ANCHOR].alias(S.ANCHOR), e[S.LINKS_COUNT].alias(S.LINKS_COUNT),
            e[S.LINKING_DOMAINS].alias(S.LINKING_DOMAINS), e[S.EXAMPLE_CONTEXT].alias(S.EXAMPLE_CONTEXT),
        ),
    )
    empty_entries = F.array().cast(S.ANCHOR_INDEX[S.ANCHORS].dataType)
    return counts.join(ranked, on=S.PAGE_ID, how="left").select(
        S.PAGE_ID,
        F.coalesce(entries, empty_entries).alias(S.ANCHORS),
        F.when(F.col("_ranked").isNull(), 0).otherwise(F.size("_ranked")).cast("int").alias("distinct_anchors"),
        "anchored_links", "empty_anchors", "boilerplate_anchors",
    )
