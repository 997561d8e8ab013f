"""Edge ingestion transforms: validate, canonicalise, classify, deduplicate, assign page ids.

Pure ``DataFrame -> DataFrame`` functions; ``linkgraph.steps.ingest`` does the reads and the Delta
writes (``number_in_order`` is defined in ``linkgraph.lake.ids``, ``reject_rows`` in ``linkgraph.lake.tables``;
both are importable from here too).  The contract of a validated frame (``validate_edges``) is: the raw
columns, the canonical
endpoint columns (``src_url``, ``src_host``, ``src_domain``, ``dst_…``), parsed timestamps, the
final ``link_type`` and ``position``, and ``reason``/``detail`` (null for a usable record).

Policies (documented in README):

* duplicates: one ``links`` row per (source page, destination page).  Within a batch the sighting
  with the latest ``last_seen_at`` (then the lexicographically smallest anchor) is the
  representative; the others are written to ``rejects`` as DUPLICATE_MERGED, their timestamps still
  widening ``discovered_at`` (earliest) and ``last_seen_at`` (latest).  Across runs a newer sighting
  replaces anchor, context, type and position.
* self-links: rejected as SELF_LINK unless ``ingest.self_links: keep``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pyarrow as pa
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.functions import arrow_udf
from pyspark.sql.types import StringType, StructField, StructType

from linkgraph import urls
from linkgraph.inputs.readers import CORRUPT_RECORD
from linkgraph.lake import schemas as S
from linkgraph.lake.config import IngestConfig
from linkgraph.lake.ids import number_in_order
from linkgraph.lake.keyfilter import bloom_filter_subquery
from linkgraph.lake.tables import reject_rows as reject_rows

SRC_URL, SRC_HOST, SRC_DOMAIN = "src_url", "src_host", "src_domain"
DST_URL, DST_HOST, DST_DOMAIN = "dst_url", "dst_host", "dst_domain"
DISCOVERED, LAST_SEEN = "discovered_ts", "last_seen_ts"

CANONICAL_URL = StructType(
    [
        StructField("url", StringType(), True),
        StructField("host", StringType(), True),
        StructField("registered_domain", StringType(), True),
        StructField("reason", StringType(), True),
        StructField("detail", StringType(), True),
    ]
)


@functools.lru_cache(maxsize=8)
def canonical_url_udf(policy: urls.UrlPolicy = urls.DEFAULT_POLICY) -> Callable[[Column], Column]:
    """Arrow-batched ``urls.canonicalize`` under ``policy`` (``urls.canonicalize_arrow``: the
    common shape costs no Python per URL, hosts are looked up once per distinct host).  The
    policy, a user Public Suffix List's text included, travels to the workers in the UDF's
    closure; each worker process builds its extractor and host cache once per policy."""

    def canonical(raw_urls: pa.Array) -> pa.Array:
        return urls.canonicalize_arrow(raw_urls, policy)

    return arrow_udf(canonical, CANONICAL_URL)  # type: ignore[call-overload]  # stubs: functionType forms only


canonical_url = canonical_url_udf()


# the host of a canonical URL (``urls.canonicalize``'s invariants): a bracketed IPv6 literal, or
# everything up to ":port" or the path
_URL_HOST = r"^https?://(\[[^\]]*\]|[^/:]*)"
_IPV4_HOST = f"^{urls.IPV4_SHAPE}$"


def host_of(canonical_url: Column) -> Column:
    """The host of a canonical URL (what ``urls.canonicalize`` gave with it); null for null."""
    return F.regexp_extract(canonical_url, _URL_HOST, 1)


def url_key(canonical_url: Column) -> Column:
    """``urls.url_key`` of a canonical URL with Spark's built-in functions (no Python): the host
    reversed label by label (an IP address kept as it is), then what follows the host (``:port``,
    path and query; a canonical URL always has a path), then ``" https"`` for https URLs."""
    host = host_of(canonical_url)
    is_ip = host.startswith("[") | host.rlike(_IPV4_HOST)
    reversed_host = F.when(is_ip, host).otherwise(F.array_join(F.reverse(F.split(host, r"\.")), "."))
    after_host = F.regexp_replace(canonical_url, _URL_HOST, "")
    https = F.when(canonical_url.startswith("https:"), F.lit(" https")).otherwise(F.lit(""))
    return F.concat(reversed_host, after_host, https)


def _reject(condition: Column, reason: str, detail: Column | str) -> Column:
    detail_col = F.lit(detail) if isinstance(detail, str) else detail
    return F.when(condition, F.struct(F.lit(reason).alias("reason"), detail_col.alias("detail")))


def _oversized(column: str, limit: int) -> Column:
    return _reject(
        F.length(column) > limit,
        S.Reason.OVERSIZED_FIELD,
        F.format_string(f"{column} has %d characters (limit {limit})", F.length(column)),
    )


def _parse_timestamp(column: str) -> Column:
    return F.try_to_timestamp(F.trim(F.col(column)))


def _bad_timestamp(column: str, parsed: str) -> Column:
    return _reject(
        F.col(column).isNotNull() & F.col(parsed).isNull(),
        S.Reason.MALFORMED_TIMESTAMP,
        F.concat(F.lit(f"{column} is not a timestamp: "), F.substring(column, 1, 100)),
    )


# --- invalid UTF-8 (reliability) ---
def _invalid_utf8() -> Column:
    """A value with invalid UTF-8 bytes (kept as they are by the text reader, decoded to U+FFFD by
    the CSV reader) is not what the crawler saw, so the record is rejected instead of stored with
    replacement characters.

    Checked on all fields at once (one short expression: per-field checks made the generated code
    too large for the JIT); the first bad field is looked for only in a rejected record."""
    columns = [f.name for f in S.RAW_EDGE_RECORD.fields]

    def broken(value: Column) -> Column:
        return ~F.is_valid_utf8(value) | value.contains("\ufffd")

    fields = F.array(*[F.struct(F.lit(c).alias("name"), F.col(c).alias("value")) for c in columns])
    first_bad = F.filter(fields, lambda field: broken(field["value"]))[0]["name"]
    return _reject(broken(F.concat_ws("", *columns)), S.Reason.MALFORMED_RECORD,
                   F.concat(F.lit("invalid UTF-8 in "), first_bad))


# --- timestamp range (reliability) ---
# No crawler saw a link before the Web existed, and a sighting centuries ahead is a broken clock or
# a mis-scaled epoch; fixed bounds (not "now") keep re-runs of the same input deterministic.
EARLIEST_TIMESTAMP = "1990-01-01 00:00:00"
LATEST_TIMESTAMP = "2100-01-01 00:00:00"


def _timestamp_out_of_range(column: str, parsed: str) -> Column:
    value = F.col(parsed)
    return _reject(
        (value < F.lit(EARLIEST_TIMESTAMP).cast("timestamp")) | (value >= F.lit(LATEST_TIMESTAMP).cast("timestamp")),
        S.Reason.MALFORMED_TIMESTAMP,
        F.concat(F.lit(f"{column} outside [{EARLIEST_TIMESTAMP[:10]}, {LATEST_TIMESTAMP[:10]}): "),
                 F.substring(column, 1, 100)),
    )


def _rel_types(rel: Column) -> Column:
    """The rel-derived type by precedence SPONSORED > UGC > NOFOLLOW, else null."""
    values = F.split(F.lower(F.coalesce(rel, F.lit(""))), r"[\s,]+")
    return (
        F.when(F.array_contains(values, "sponsored"), F.lit("SPONSORED"))
        .when(F.array_contains(values, "ugc"), F.lit("UGC"))
        .when(F.array_contains(values, "nofollow"), F.lit("NOFOLLOW"))
    )


def classify_link_type(df: DataFrame) -> DataFrame:
    """Set ``link_type``: a declared NOFOLLOW/UGC/SPONSORED (from ``rel`` or ``link_type``, most
    specific wins), else INTERNAL when both ends share a registered domain, else EXTERNAL."""
    given = F.upper(F.trim(F.col(S.LINK_TYPE)))
    declared_values = F.concat_ws(" ", F.col(S.REL), F.when(given.isin("NOFOLLOW", "UGC", "SPONSORED"), given))
    by_domain = F.when(F.col(SRC_DOMAIN) == F.col(DST_DOMAIN), F.lit("INTERNAL")).otherwise(F.lit("EXTERNAL"))
    return df.withColumn(S.LINK_TYPE, F.coalesce(_rel_types(declared_values), by_domain))


def _canonical_problem(end: Column, column: str) -> Column:
    return F.when(end["reason"].isNotNull(), F.struct(end["reason"].alias("reason"),
                                                     F.concat(F.lit(f"{column}: "), end["detail"]).alias("detail")))


def _field_problems(config: IngestConfig) -> list[Column]:
    """Checks of the record as read: unreadable, invalid UTF-8, over a length limit, bad URLs."""
    return [
        _reject(F.col(CORRUPT_RECORD).isNotNull(), S.Reason.MALFORMED_RECORD, F.substring(CORRUPT_RECORD, 1, 2000)),
        _invalid_utf8(),
        _oversized(S.FROM_URL, config.max_url_length),
        _oversized(S.TO_URL, config.max_url_length),
        _oversized(S.ANCHOR_TEXT, config.max_anchor_length),
        _oversized(S.CONTEXT_WINDOW, config.max_context_length),
        _canonical_problem(F.col("_src"), S.FROM_URL),
        _canonical_problem(F.col("_dst"), S.TO_URL),
    ]


def _value_problems(config: IngestConfig) -> list[Column]:
    """Checks of the values: timestamps, position, link type, self-links."""
    given_type = F.upper(F.trim(F.col(S.LINK_TYPE)))
    position = F.upper(F.trim(F.col(S.POSITION)))
    return [
        _bad_timestamp(S.DISCOVERED_AT, DISCOVERED),
        _bad_timestamp(S.LAST_SEEN_AT, LAST_SEEN),
        _timestamp_out_of_range(S.DISCOVERED_AT, DISCOVERED),
        _timestamp_out_of_range(S.LAST_SEEN_AT, LAST_SEEN),
        _reject(
            F.col(DISCOVERED).isNotNull() & F.col(LAST_SEEN).isNotNull() & (F.col(LAST_SEEN) < F.col(DISCOVERED)),
            S.Reason.INVALID_VALUE,
            "last_seen_at is earlier than discovered_at",
        ),
        _reject(
            position.isNotNull() & ~position.isin(*S.POSITIONS),
            S.Reason.INVALID_VALUE,
            F.concat(F.lit("position not one of " + "|".join(S.POSITIONS) + ": "), F.substring(S.POSITION, 1, 100)),
        ),
        _reject(
            given_type.isNotNull() & ~given_type.isin(*S.LINK_TYPES),
            S.Reason.INVALID_VALUE,
            F.concat(F.lit("link_type not one of " + "|".join(S.LINK_TYPES) + ": "), F.substring(S.LINK_TYPE, 1, 100)),
        ),
        _reject(
            F.lit(config.self_links == "reject") & (F.col("_src")["url"] == F.col("_dst")["url"]),
            S.Reason.SELF_LINK,
            "from_url and to_url are the same page",
        ),
    ]


def _valid_text(column: str) -> Column:
    """``column`` when it is valid UTF-8, else null: the Arrow UDF decodes only valid text (the
    invalid value is rejected as MALFORMED_RECORD by ``_invalid_utf8``, which comes first)."""
    return F.when(F.is_valid_utf8(F.col(column)), F.col(column))


def validate_edges(raw: DataFrame, config: IngestConfig, policy: urls.UrlPolicy = urls.DEFAULT_POLICY) -> DataFrame:
    """Canonicalise both endpoints under ``policy``, parse and check every field, attach
    ``reason``/``detail``.

    The first failing check (in the order of ``_field_problems`` then ``_value_problems``) gives
    the reason; nothing is filtered here.
    """
    src, dst = F.col("_src"), F.col("_dst")
    canonical = canonical_url_udf(policy)
    checked = raw.withColumns({
        "_src": canonical(_valid_text(S.FROM_URL)),
        "_dst": canonical(_valid_text(S.TO_URL)),
        DISCOVERED: _parse_timestamp(S.DISCOVERED_AT),
        LAST_SEEN: _parse_timestamp(S.LAST_SEEN_AT),
    })
    problem = F.coalesce(*_field_problems(config), *_value_problems(config))
    # one projection per group of columns (each withColumn call is one more analysis of the plan)
    validated = (
        checked.withColumns({
            "_problem": problem,
            SRC_URL: src["url"], SRC_HOST: src["host"], SRC_DOMAIN: src["registered_domain"],
            DST_URL: dst["url"], DST_HOST: dst["host"], DST_DOMAIN: dst["registered_domain"],
            S.POSITION: F.upper(F.trim(F.col(S.POSITION))),
        })
        .transform(classify_link_type)
        .withColumns({S.REASON: F.col("_problem.reason"), S.DETAIL: F.col("_problem.detail")})
    )
    return validated.drop("_src", "_dst", "_problem")


RANK = "_rank"


def rank_sightings(validated: DataFrame) -> DataFrame:
    """``validated`` plus ``_rank``: among the valid records of a (src_url, dst_url) pair, 1 for
    the representative sighting (latest ``last_seen_at``, then the lexicographically smallest
    anchor, ...), 2, 3, ... for the others, whose discovery and sighting times are widened to the
    pair's earliest and latest; null for an invalid record.

    One shuffle (of the whole records) and one sort: all window functions share one ordered
    specification, led by a 64-bit hash of the pair (URLs share long prefixes such as
    ``https://www.``, so a sort led by them compares strings for nearly every two records).
    Invalid records are spread over the tasks by a hash of their raw fields instead of piling up
    under one null key.  The hosts, functions of the canonical URLs, are
    left out of the shuffled rows and taken from the URLs after it.
    """
    valid = F.col(S.REASON).isNull()
    raw_columns = [f.name for f in S.RAW_EDGE_RECORD.fields]
    pair = Window.partitionBy(F.col("_pair_hash"), F.col(SRC_URL), F.col(DST_URL), F.col("_spread")).orderBy(
        F.col(LAST_SEEN).desc_nulls_last(), F.col(S.ANCHOR_TEXT).asc_nulls_last(),
        F.col(S.CONTEXT_WINDOW).asc_nulls_last(), F.col(S.POSITION).asc_nulls_last(),
        F.col(S.LINK_TYPE).asc_nulls_last(), F.col(S.FROM_URL), F.col(S.TO_URL))
    whole_pair = pair.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    return (
        validated.drop(SRC_HOST, DST_HOST)
        .withColumn("_spread", F.when(~valid, F.xxhash64(CORRUPT_RECORD, *raw_columns)))
        .withColumn("_pair_hash", F.xxhash64(SRC_URL, DST_URL, "_spread"))
        .withColumns({
            RANK: F.when(valid, F.row_number().over(pair)),
            DISCOVERED: F.when(valid, F.min(DISCOVERED).over(whole_pair)).otherwise(F.col(DISCOVERED)),
            LAST_SEEN: F.when(valid, F.max(LAST_SEEN).over(whole_pair)).otherwise(F.col(LAST_SEEN)),
        })
        .withColumns({SRC_HOST: host_of(F.col(SRC_URL)), DST_HOST: host_of(F.col(DST_URL))})
        .select(*validated.columns, RANK)
    )


PAIR_KEY = "_pair_key"


def with_pair_key(validated: DataFrame) -> DataFrame:
    """``validated`` plus ``_pair_key``: a 64-bit hash of a valid record's (src_url, dst_url), null
    for an invalid one; computed where the records are (no shuffle)."""
    valid = F.col(S.REASON).isNull()
    return validated.withColumn(PAIR_KEY, F.when(valid, F.xxhash64(SRC_URL, DST_URL)))


def repeated_pair_keys(keyed: DataFrame) -> DataFrame:
    """The pair keys (:func:`with_pair_key`) held by more than one record: one ``long`` per record
    is shuffled (partially aggregated first), nothing else of the records."""
    counts = keyed.where(F.col(PAIR_KEY).isNotNull()).groupBy(PAIR_KEY).count()
    return counts.where(F.col("count") > 1).select(PAIR_KEY)


def route_by_repetition(keyed: DataFrame, repeated: DataFrame,
                        repeated_count: int) -> tuple[DataFrame, DataFrame] | None:
    """``keyed`` (:func:`with_pair_key`) split, without a shuffle, into the invalid records with
    the valid ones whose pair may be repeated, and the others (valid, each its pair's only
    record), both without the key; None without a JVM session.

    ``repeated``: :func:`repeated_pair_keys` of ``keyed`` (``repeated_count`` rows).  A record
    whose key a bloom filter of ``repeated`` rejects is its pair's only record (a bloom filter has
    no false negatives, and the records of one pair share their key).  The first part holds every
    record of a repeated pair, every invalid record and about 1% of the single ones: all the
    rejects (:func:`rejected`) are among its records.  The filter is built from ``repeated`` read
    in one task per million keys (a filter per task is what its aggregate shuffles)."""
    valid = F.col(S.REASON).isNull()
    if repeated_count == 0:
        maybe_repeated: Column | None = F.lit(False)
    else:
        tasks = max(1, -(-repeated_count // 1_000_000))
        maybe_repeated = bloom_filter_subquery(repeated.coalesce(tasks), [PAIR_KEY], [PAIR_KEY], repeated_count)
    if maybe_repeated is None:
        return None
    routed = ~valid | maybe_repeated   # an invalid record's key, and so its filter test, is null
    return keyed.where(routed).drop(PAIR_KEY), keyed.where(~routed).drop(PAIR_KEY)


def rank_single_sightings(single: DataFrame) -> DataFrame:
    """:func:`rank_sightings` of records whose valid ones are each their pair's only record: rank 1
    and times unchanged for a valid record, null for an invalid one (nothing is shuffled)."""
    return single.withColumn(RANK, F.when(F.col(S.REASON).isNull(), F.lit(1)))


def rank_repeated_sightings(keyed: DataFrame, repeated: DataFrame, repeated_count: int) -> DataFrame:
    """:func:`rank_sightings` of ``keyed`` (:func:`with_pair_key`; the key is dropped) where only
    the records of the pairs that may be repeated are shuffled and sorted by the window
    (:func:`route_by_repetition`); every record through the window without a JVM session."""
    routed = route_by_repetition(keyed, repeated, repeated_count)
    if routed is None:
        return rank_sightings(keyed.drop(PAIR_KEY))
    maybe_repeated, single = routed
    return rank_sightings(maybe_repeated).unionByName(rank_single_sightings(single))


def representatives(ranked: DataFrame) -> DataFrame:
    """The links of :func:`rank_sightings`' output: one record per pair, times widened."""
    return ranked.where(F.col(RANK) == 1).drop(RANK)


def rejected(ranked: DataFrame) -> DataFrame:
    """The records of :func:`rank_sightings`' output that are not links: the invalid ones with their
    reason, the other sightings of a pair as DUPLICATE_MERGED."""
    duplicate = F.col(RANK) > 1
    return ranked.where(F.col(RANK).isNull() | duplicate).select(
        *[c for c in ranked.columns if c not in (RANK, S.REASON, S.DETAIL)],
        F.when(duplicate, F.lit(S.Reason.DUPLICATE_MERGED)).otherwise(F.col(S.REASON)).alias(S.REASON),
        F.when(duplicate, F.concat(F.lit("merged into link "), F.col(SRC_URL), F.lit(" -> "), F.col(DST_URL)))
        .otherwise(F.col(S.DETAIL)).alias(S.DETAIL),
    )


def split_duplicates(valid: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Collapse valid records to one per (src_url, dst_url).

    Returns ``(links, duplicates)``: the representative sighting per pair with the earliest
    discovery and latest sighting over all its records, and the other records with reason
    DUPLICATE_MERGED (:func:`rank_sightings`).
    """
    ranked = rank_sightings(valid)
    return representatives(ranked), rejected(ranked)


DOMAIN_LENGTH = "_domain_length"


def batch_pages(links: DataFrame) -> DataFrame:
    """One row per canonical URL seen at either end of a link, with first/last sighting:
    (url, ``_domain_length``, first_seen_at, last_seen_at).

    One pass over ``links`` (both ends exploded from each row).  Only the URL, the length of its
    registered domain and the two times are shuffled: the host is a function of the canonical URL
    (:func:`host_of`) and the registered domain its suffix of that length, both rebuilt where they
    are needed (:func:`with_url_columns`).  The length, a function of the URL too, is grouped by
    (it changes no group), so every aggregation buffer is fixed-width: Spark aggregates by hash
    instead of sorting the URLs."""
    def end(url: str, domain: str) -> Column:
        return F.struct(F.col(url).alias(S.URL), F.length(domain).alias(DOMAIN_LENGTH))

    ends = links.select(F.explode(F.array(end(SRC_URL, SRC_DOMAIN), end(DST_URL, DST_DOMAIN))).alias("_end"),
                        DISCOVERED, LAST_SEEN).select("_end.*", DISCOVERED, LAST_SEEN)
    return ends.groupBy(S.URL, DOMAIN_LENGTH).agg(
        F.min(DISCOVERED).alias(S.FIRST_SEEN_AT),
        F.max(LAST_SEEN).alias(S.LAST_SEEN_AT),
    )


def with_url_columns(pages: DataFrame) -> DataFrame:
    """``pages`` (:func:`batch_pages`' columns and a page id) in the ``pages`` schema: host,
    registered domain and url_key computed from the URL and the domain's length."""
    host = host_of(F.col(S.URL))
    derived = {S.HOST: host, S.REGISTERED_DOMAIN: F.right(host, F.col(DOMAIN_LENGTH)), S.URL_KEY: url_key(F.col(S.URL))}
    return pages.select(*[derived.get(f.name, F.col(f.name)).cast(f.dataType).alias(f.name) for f in S.PAGES.fields])


def pages_with_ids(pages_batch: DataFrame, existing_pages: DataFrame, first_id: int,
                   broadcast_urls: bool = True) -> DataFrame:
    """The pages of the batch (:func:`batch_pages`) in the ``pages`` schema: a URL already in
    ``existing_pages`` with its stored id, a new one numbered from ``first_id`` in ``url_key``
    order (host reversed): :func:`number_new_pages` of :func:`look_up_pages`."""
    return number_new_pages(look_up_pages(pages_batch, existing_pages, broadcast_urls), first_id)


def look_up_pages(pages_batch: DataFrame, existing_pages: DataFrame, broadcast_urls: bool = True) -> DataFrame:
    """The pages of the batch (:func:`batch_pages`) with ``_stored_id``, the page id of a URL
    already in ``existing_pages`` (null for a new one).  The stored pages are looked up by the
    batch's own URLs (:func:`stored_ids_of`: the ``url`` and ``page_id`` columns of ``pages``
    filtered where they are read), so nothing of ``pages`` but the batch's own stored rows is
    shuffled (and, with ``broadcast_urls``, not even those: they are broadcast to the batch's
    pages)."""
    stored = stored_ids_of(pages_batch, existing_pages, broadcast_urls)
    return pages_batch.join(F.broadcast(stored) if broadcast_urls else stored, on=S.URL, how="left")


def number_new_pages(looked_up: DataFrame, first_id: int) -> DataFrame:
    """The pages of :func:`look_up_pages` in the ``pages`` schema: a known page with its stored
    id, the new ones numbered densely from ``first_id`` in ``url_key`` order.  Only the new
    pages' narrow rows are sorted, by ``url_key`` computed from the URL as they are sorted (it is
    not shuffled).  ``looked_up`` is read twice (cache it); ``first_id`` must exceed every stored
    id."""
    known = F.col("_stored_id").isNotNull()
    new = number_in_order(looked_up.where(~known), [url_key(F.col(S.URL)), F.col(S.URL)], first_id, S.PAGE_ID)
    stored = looked_up.where(known).withColumn(S.PAGE_ID, F.col("_stored_id"))
    return with_url_columns(new.unionByName(stored))


def stored_ids_of(pages_batch: DataFrame, existing_pages: DataFrame, broadcast_urls: bool = True) -> DataFrame:
    """(url, ``_stored_id``) of the stored pages whose URL is one of the batch's: the stored
    pages' ``url`` and ``page_id`` columns semi-joined with the batch's URLs (distinct already).
    With ``broadcast_urls`` (the batch's URLs fit every task) the URLs are broadcast and the
    stored columns filtered where they are read: nothing of ``pages`` is shuffled.  Otherwise both
    are shuffled by URL, the stored side first filtered where it is read by a bloom filter of the
    batch's URLs (:func:`linkgraph.lake.keyfilter.bloom_filter_subquery`): about the batch's
    stored rows and 1% of the others are shuffled."""
    urls = pages_batch.select(S.URL)
    stored = existing_pages.select(S.URL, F.col(S.PAGE_ID).alias("_stored_id"))
    if broadcast_urls:
        return stored.join(F.broadcast(urls), on=S.URL, how="left_semi")
    # the stored rows a bloom filter of the batch's URLs admits, before the shuffle
    bloom = bloom_filter_subquery(urls, [S.URL], [S.URL], pages_batch.count())
    return (stored if bloom is None else stored.where(bloom)).join(urls, on=S.URL, how="left_semi")


def new_pages_with_ids(pages_batch: DataFrame, existing_pages: DataFrame, first_id: int) -> DataFrame:
    """Pages of the batch not yet in ``existing_pages``, numbered from ``first_id`` in
    ``url_key`` order (host reversed), in the ``pages`` schema."""
    return pages_with_ids(pages_batch, existing_pages, first_id).where(F.col(S.PAGE_ID) >= first_id)


SHUFFLE_HASH = "shuffle_hash"
SRC_HASH, DST_HASH = "_src_hash", "_dst_hash"


def url_hash(url: Column) -> Column:
    """The 64-bit key a link takes its page ids by: ``xxhash64`` of the canonical URL.  Two URLs
    of one batch share it with a probability of about n^2 / 2^65 (1e-7 for 2M pages); a batch
    where they do is resolved by URL (``linkgraph.inputs.edges.links_with_page_ids``)."""
    return F.xxhash64(url)


def links_with_ids(links: DataFrame, ids: DataFrame, broadcast_ids: bool = False,
                   by_hash: bool = False, hash_of: Callable[[Column], Column] = url_hash) -> DataFrame:
    """Resolve both endpoint URLs to page ids; the result is in the ``links`` schema.

    ``ids``: (url, page_id) of every URL of the batch (and maybe others: a link whose end has no
    id is dropped).  With ``by_hash`` the ends are matched by a 64-bit hash of their URL
    (``hash_of``) instead of the URL, with the same result when no two URLs of ``ids`` share a
    hash (where two do, a link with an end at one of them takes a row for each).  With ``broadcast_ids``
    (``ids`` small enough to reach every task whole: as Spark builds them, about 270 bytes a page
    by 50-character URLs, 100 by hash) each record takes both ids where it is, by two broadcast
    hash joins: the records are not shuffled.  Otherwise the ids are resolved on narrow frames,
    the batch's (source, destination) key pairs, and the full records are joined once, to their
    pair (links hold one row per pair).
    """
    if by_hash:
        links = links.withColumns({SRC_HASH: hash_of(F.col(SRC_URL)), DST_HASH: hash_of(F.col(DST_URL))})
        src_key, dst_key, id_key = SRC_HASH, DST_HASH, hash_of(F.col(S.URL))
    else:
        src_key, dst_key, id_key = SRC_URL, DST_URL, F.col(S.URL)
    src_ids = ids.select(id_key.alias(src_key), F.col(S.PAGE_ID).alias(S.SRC_ID))
    dst_ids = ids.select(id_key.alias(dst_key), F.col(S.PAGE_ID).alias(S.DST_ID))
    if broadcast_ids:
        resolved = (links.join(F.broadcast(src_ids), on=src_key, how="inner")
                    .join(F.broadcast(dst_ids), on=dst_key, how="inner"))
    else:
        # hash joins that build on the side of distinct keys (ids, pairs): the records are not sorted
        pairs = (links.select(src_key, dst_key).join(src_ids.hint(SHUFFLE_HASH), on=src_key, how="inner")
                 .join(dst_ids.hint(SHUFFLE_HASH), on=dst_key, how="inner"))
        resolved = links.join(pairs.hint(SHUFFLE_HASH), on=[src_key, dst_key], how="inner")
    return resolved.select(
        S.SRC_ID, S.DST_ID, S.ANCHOR_TEXT, S.CONTEXT_WINDOW, S.LINK_TYPE, S.POSITION,
        F.col(DISCOVERED).alias(S.DISCOVERED_AT), F.col(LAST_SEEN).alias(S.LAST_SEEN_AT),
    )


# --- arcs (integer node ids) -------------------------------------------------------------------

def validate_arcs(arcs: DataFrame, config: IngestConfig) -> DataFrame:
    """Attach ``reason``/``detail`` to integer arcs: unreadable lines and (by policy) self-loops."""
    problem = F.coalesce(
        _reject(F.col(CORRUPT_RECORD).isNotNull(), S.Reason.MALFORMED_RECORD, F.substring(CORRUPT_RECORD, 1, 2000)),
        _reject(F.lit(config.self_links == "reject") & (F.col("src") == F.col("dst")), S.Reason.SELF_LINK,
                "source and destination are the same node"),
    )
    return arcs.withColumn("_problem", problem).select(
        "src", "dst", CORRUPT_RECORD,
        F.col("_problem.reason").alias(S.REASON), F.col("_problem.detail").alias(S.DETAIL),
    )


def arcs_as_raw(arcs: DataFrame) -> DataFrame:
    """Rejected arcs in raw edge-record shape (node ids as the URL strings)."""
    return arcs.select(
        F.coalesce(F.col("src").cast("string"), F.col(CORRUPT_RECORD)).alias(S.FROM_URL),
        F.col("dst").cast("string").alias(S.TO_URL),
        *[F.lit(None).cast("string").alias(c) for c in S.OPTIONAL_EDGE_COLUMNS],
        S.REASON, S.DETAIL,
    )


def split_arc_duplicates(valid: DataFrame) -> tuple[DataFrame, DataFrame]:
    pair = Window.partitionBy("src", "dst")
    ranked = valid.withColumn("_rank", F.row_number().over(pair.orderBy("src")))
    duplicates = (
        ranked.where(F.col("_rank") > 1)
        .withColumn(S.REASON, F.lit(S.Reason.DUPLICATE_MERGED))
        .withColumn(S.DETAIL, F.lit("repeated arc"))
        .drop("_rank")
    )
    return ranked.where(F.col("_rank") == 1).drop("_rank"), duplicates


def arc_pages(arcs: DataFrame) -> DataFrame:
    """Pages of an arc list: node ids are page ids; URLs are unknown (null)."""
    ids = arcs.select(F.col("src").alias(S.PAGE_ID)).union(arcs.select(F.col("dst").alias(S.PAGE_ID))).distinct()
    return ids.select(*[(F.col(S.PAGE_ID) if f.name == S.PAGE_ID else F.lit(None)).cast(f.dataType).alias(f.name)
                        for f in S.PAGES.fields])


def arc_links(arcs: DataFrame) -> DataFrame:
    return arcs.select(*[
        (F.col("src") if f.name == S.SRC_ID else F.col("dst") if f.name == S.DST_ID else F.lit(None))
        .cast(f.dataType).alias(f.name) for f in S.LINKS.fields
    ])
