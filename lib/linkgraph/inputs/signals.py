"""Page signals a crawler supplies (README "Page signals input"): read, check and split into
``page_signals`` rows and rejects; and the built-in sample's signals.  Pure transforms but the
read; ``linkgraph.steps.reward`` writes them (``tables.merge_page_signals``)."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

from linkgraph.inputs import ingest as I
from linkgraph.inputs.readers import CORRUPT_RECORD, InputSchemaError
from linkgraph.lake import schemas as S
from linkgraph.lake.paths import local_path
from linkgraph.lake.tables import reject_rows
from linkgraph.sample import SITES, generate_sample_crawl, write_pages_jsonl
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy

SAMPLE_SOURCE = "builtin-sample-signals"

# JSON lines a crawler supplies (README "Page signals input"); everything but ``feed_links`` is
# read as a string so that a bad value can be rejected with its raw text.
RAW_PAGE_SIGNAL = StructType(
    [
        StructField(S.URL, StringType(), True),
        StructField(S.TITLE, StringType(), True),
        StructField(S.TEXT, StringType(), True),
        StructField(S.FEED_LINKS, ArrayType(StringType()), True),
        StructField(S.FETCHED_AT, StringType(), True),
        StructField(CORRUPT_RECORD, StringType(), True),
    ]
)


def read_page_signals(spark: SparkSession, path: str) -> DataFrame:
    """Raw page-signal JSON lines (``RAW_PAGE_SIGNAL``); an unreadable line keeps its text in
    ``_corrupt_record``."""
    local = local_path(path)
    if local is not None and not Path(local).exists():
        raise InputSchemaError(f"page signals not found: {path}")
    return (
        spark.read.schema(RAW_PAGE_SIGNAL)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
        .json(path)
    )


def _problem(condition: Column, reason: Column | str, detail: Column | str) -> Column:
    reason_col = F.lit(reason) if isinstance(reason, str) else reason
    detail_col = F.lit(detail) if isinstance(detail, str) else detail
    return F.when(condition, F.struct(reason_col.alias(S.REASON),
                                      F.concat(F.lit("page signal: "), detail_col).alias(S.DETAIL)))


def signal_reject_rows(rows: DataFrame, bad_feed: Column | None, source: str) -> DataFrame:
    """Rejected page signals in the ``rejects`` shape: the page URL in ``from_url``, a rejected
    feed link in ``to_url``, the raw ``fetched_at`` in ``last_seen_at``."""
    shaped = rows.select(
        F.col(S.URL).alias(S.FROM_URL),
        (bad_feed if bad_feed is not None else F.lit(None).cast("string")).alias(S.TO_URL),
        *[F.lit(None).cast("string").alias(c) for c in (S.ANCHOR_TEXT, S.CONTEXT_WINDOW, S.LINK_TYPE, S.REL, S.POSITION,
                                                        S.DISCOVERED_AT)],
        F.col(S.FETCHED_AT).alias(S.LAST_SEEN_AT),
        S.REASON, S.DETAIL,
    )
    return reject_rows(shaped, source)


def check_page_signals(raw: DataFrame, policy: UrlPolicy = DEFAULT_POLICY) -> DataFrame:
    """Raw page signals plus the canonical page URL under ``policy`` (``_page`` struct), the parsed
    ``_fetched`` time and ``reason``/``detail`` of a record that cannot be used (null otherwise)."""
    checked = (
        raw.withColumn("_page", I.canonical_url_udf(policy)(F.col(S.URL)))
        .withColumn("_fetched", F.try_to_timestamp(F.trim(F.col(S.FETCHED_AT))))
    )
    problem = F.coalesce(
        _problem(F.col(CORRUPT_RECORD).isNotNull(), S.Reason.MALFORMED_RECORD, F.substring(CORRUPT_RECORD, 1, 2000)),
        _problem(F.col("_page.reason").isNotNull(), F.col("_page.reason"),
                 F.coalesce(F.col("_page.detail"), F.lit(""))),
        _problem(F.col(S.FETCHED_AT).isNotNull() & F.col("_fetched").isNull(), S.Reason.MALFORMED_TIMESTAMP,
                 F.concat(F.lit("fetched_at is not a timestamp: "), F.substring(S.FETCHED_AT, 1, 100))),
    )
    return checked.withColumn("_problem", problem).select(
        "*", F.col("_problem.reason").alias(S.REASON), F.col("_problem.detail").alias(S.DETAIL)
    ).drop("_problem")


def split_page_signals(checked: DataFrame, source: str,
                       policy: UrlPolicy = DEFAULT_POLICY) -> tuple[DataFrame, DataFrame]:
    """``(signals, rejects)`` of ``check_page_signals`` output.

    ``signals`` is in the ``PAGE_SIGNALS`` schema, one row per canonical URL, with the canonical,
    distinct, sorted feed links.  Rejected (reasons as for edges): an unreadable line
    (MALFORMED_RECORD), a page URL that does not canonicalise (NULL_FIELD, MALFORMED_URL, …), an
    unparsable ``fetched_at`` (MALFORMED_TIMESTAMP), a second row for the same URL (the latest
    ``fetched_at`` is kept; DUPLICATE_MERGED), and single feed links that do not canonicalise (the
    page is kept without them; canonicalised under ``policy``).  ``checked`` is read twice: persist
    it for large inputs.
    """
    bad_pages = checked.where(F.col(S.REASON).isNotNull())

    latest = Window.partitionBy("_page.url").orderBy(
        F.col("_fetched").desc_nulls_last(), F.col(S.TITLE).asc_nulls_last(), F.col(S.TEXT).asc_nulls_last(),
        F.col(S.URL),
    )
    ranked = checked.where(F.col(S.REASON).isNull()).withColumn("_order", F.row_number().over(latest))
    duplicates = ranked.where(F.col("_order") > 1).withColumn(S.REASON, F.lit(S.Reason.DUPLICATE_MERGED)).withColumn(
        S.DETAIL, F.concat(F.lit("page signal: merged into the latest signal of "), F.col("_page.url"))
    )
    kept = ranked.where(F.col("_order") == 1)

    feeds = kept.select(
        F.col("_page.url").alias("_canonical"), S.URL, S.FETCHED_AT, F.explode(S.FEED_LINKS).alias("_raw_feed")
    ).withColumn("_feed", I.canonical_url_udf(policy)(F.col("_raw_feed")))
    bad_feeds = feeds.where(F.col("_feed.reason").isNotNull()).select(
        S.URL, S.FETCHED_AT, "_raw_feed", F.col("_feed.reason").alias(S.REASON),
        F.concat(F.lit("page signal: feed link: "), F.coalesce(F.col("_feed.detail"), F.lit(""))).alias(S.DETAIL),
    )
    good_feeds = (
        feeds.where(F.col("_feed.reason").isNull())
        .groupBy("_canonical")
        .agg(F.array_sort(F.collect_set("_feed.url")).alias("_feeds"))
    )
    signals = kept.join(good_feeds, kept["_page.url"] == good_feeds["_canonical"], how="left").select(
        F.col("_page.url").alias(S.URL),
        F.col(S.TITLE),
        F.col(S.TEXT),
        F.coalesce(F.col("_feeds"), F.array().cast(ArrayType(StringType()))).alias(S.FEED_LINKS),
        F.col("_fetched").alias(S.FETCHED_AT),
    )
    rejects = (
        signal_reject_rows(bad_pages, None, source)
        .unionByName(signal_reject_rows(duplicates, None, source))
        .unionByName(signal_reject_rows(bad_feeds, F.col("_raw_feed"), source))
    )
    return signals, rejects


# --- the built-in sample ----------------------------------------------------------------------

def sample_signal_rows(seed: int = 7) -> list[dict]:
    """The sample crawl's page signals as input rows; ``fetched_at`` is the page's latest fetch
    (the latest ``last_seen_at`` of its links; null for a page without links, e.g. a PDF)."""
    crawl = generate_sample_crawl(seed)
    fetched: dict[str, str] = {}
    for edge in crawl.edges:
        if edge["last_seen_at"] and edge["last_seen_at"] > fetched.get(edge["from_url"], ""):
            fetched[edge["from_url"]] = edge["last_seen_at"]
    return [{**page, S.FETCHED_AT: fetched.get(page["url"])} for page in crawl.pages]


def write_sample_signals(directory: str | Path, seed: int = 7) -> Path:
    """Write the sample's page signals as JSON lines (the documented input format)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sample-page-signals.jsonl"
    write_pages_jsonl(sample_signal_rows(seed), path)
    return path


def sample_seed_urls() -> list[str]:
    """Seeds of the sample's job crawl: the home pages of the sample sites that publish a job feed."""
    return [f"{site.scheme}://{site.host}/" for site in SITES if site.feeds]
