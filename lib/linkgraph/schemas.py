"""Table schemas and column names, declared once.

Every Delta table linkgraph writes has a ``StructType`` here; every column name used in more than
one place is a constant here.  Timestamps are UTC ``TimestampType``; ids are ``LongType``.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

# --- edge record (crawler input) -------------------------------------------------------------
FROM_URL = "from_url"
TO_URL = "to_url"
ANCHOR_TEXT = "anchor_text"
CONTEXT_WINDOW = "context_window"
LINK_TYPE = "link_type"
REL = "rel"
POSITION = "position"
DISCOVERED_AT = "discovered_at"
LAST_SEEN_AT = "last_seen_at"

LINK_TYPES = ("INTERNAL", "EXTERNAL", "NOFOLLOW", "UGC", "SPONSORED")
POSITIONS = ("NAV", "CONTENT", "FOOTER", "SIDEBAR")

REQUIRED_EDGE_COLUMNS = (FROM_URL, TO_URL)
OPTIONAL_EDGE_COLUMNS = (ANCHOR_TEXT, CONTEXT_WINDOW, LINK_TYPE, REL, POSITION, DISCOVERED_AT, LAST_SEEN_AT)

EDGE_RECORD = StructType(
    [
        StructField(FROM_URL, StringType(), False),
        StructField(TO_URL, StringType(), False),
        StructField(ANCHOR_TEXT, StringType(), True),
        StructField(CONTEXT_WINDOW, StringType(), True),
        StructField(LINK_TYPE, StringType(), True),
        StructField(DISCOVERED_AT, TimestampType(), True),
        StructField(LAST_SEEN_AT, TimestampType(), True),
        StructField(POSITION, StringType(), True),
    ]
)

# The raw form every reader produces: all edge columns (plus ``rel``) as strings, so that nothing
# is lost to a failed cast before validation can reject it with a reason.
RAW_EDGE_RECORD = StructType(
    [StructField(name, StringType(), True) for name in REQUIRED_EDGE_COLUMNS + OPTIONAL_EDGE_COLUMNS]
)

# --- pages -----------------------------------------------------------------------------------
PAGE_ID = "page_id"
URL = "url"
HOST = "host"
REGISTERED_DOMAIN = "registered_domain"
URL_KEY = "url_key"
FIRST_SEEN_AT = "first_seen_at"

PAGES = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(HOST, StringType(), True),
        StructField(REGISTERED_DOMAIN, StringType(), True),
        # canonical URL with its host reversed (``edu.stanford.www/biology``): the id order
        StructField(URL_KEY, StringType(), True),
        StructField(FIRST_SEEN_AT, TimestampType(), True),
        StructField(LAST_SEEN_AT, TimestampType(), True),
    ]
)

# --- links -----------------------------------------------------------------------------------
SRC_ID = "src_id"
DST_ID = "dst_id"

LINKS = StructType(
    [
        StructField(SRC_ID, LongType(), False),
        StructField(DST_ID, LongType(), False),
        StructField(ANCHOR_TEXT, StringType(), True),
        StructField(CONTEXT_WINDOW, StringType(), True),
        StructField(LINK_TYPE, StringType(), True),
        StructField(POSITION, StringType(), True),
        StructField(DISCOVERED_AT, TimestampType(), True),
        StructField(LAST_SEEN_AT, TimestampType(), True),
    ]
)

# --- rejects ---------------------------------------------------------------------------------
REJECT_ID = "reject_id"
REASON = "reason"
DETAIL = "detail"
SOURCE = "source"
REJECTED_AT = "rejected_at"

REJECTS = StructType(
    [
        # sha2-256 of source, reason and the raw values: a re-run inserts nothing new
        StructField(REJECT_ID, StringType(), False),
        StructField(SOURCE, StringType(), True),
        StructField(REASON, StringType(), False),
        StructField(DETAIL, StringType(), True),
        *[StructField(f.name, StringType(), True) for f in RAW_EDGE_RECORD.fields],
        StructField(REJECTED_AT, TimestampType(), False),
    ]
)


class Reason:
    """Reason codes written to ``rejects.reason``."""

    NULL_FIELD = "NULL_FIELD"
    MALFORMED_URL = "MALFORMED_URL"
    UNSUPPORTED_SCHEME = "UNSUPPORTED_SCHEME"
    INVALID_HOST = "INVALID_HOST"
    OVERSIZED_FIELD = "OVERSIZED_FIELD"
    INVALID_VALUE = "INVALID_VALUE"
    MALFORMED_TIMESTAMP = "MALFORMED_TIMESTAMP"
    MALFORMED_RECORD = "MALFORMED_RECORD"
    SELF_LINK = "SELF_LINK"
    DUPLICATE_MERGED = "DUPLICATE_MERGED"


# --- ranking ---------------------------------------------------------------------------------
RUN_ID = "run_id"
RANK = "rank"
VECTOR_ID = "vector_id"

PAGERANK = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(VECTOR_ID, IntegerType(), False),
        StructField(RANK, DoubleType(), False),
        StructField(RUN_ID, StringType(), False),
    ]
)

ITERATION = StructType(
    [
        StructField("iteration", IntegerType(), False),
        StructField("l1_change", DoubleType(), False),
        StructField("dangling_mass", DoubleType(), False),
        StructField("seconds", DoubleType(), False),
        StructField("active_vectors", IntegerType(), False),
    ]
)

RANK_RUNS = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField("started_at", TimestampType(), False),
        StructField("engine", StringType(), False),
        StructField("damping", DoubleType(), False),
        StructField("tol", DoubleType(), False),
        StructField("max_iter", IntegerType(), False),
        StructField("personalization", StringType(), True),
        StructField("vectors", IntegerType(), False),
        StructField("warm_start", BooleanType(), False),
        StructField("resumed_from", IntegerType(), True),
        StructField("graph_version", LongType(), True),
        StructField("pages", LongType(), False),
        StructField("links_followed", LongType(), False),
        StructField("iterations", IntegerType(), False),
        StructField("converged", BooleanType(), False),
        StructField("vector_iterations", ArrayType(IntegerType()), False),
        StructField("final_l1_change", DoubleType(), True),
        StructField("seconds", DoubleType(), False),
        StructField("history", ArrayType(ITERATION), False),
    ]
)

# The block engine's rank state of the last checkpointed iteration (``linkgraph.rank.state``).
RANK_STATE = StructType(
    [
        StructField("run_key", StringType(), False),
        StructField("iteration", IntegerType(), False),
        StructField("active", BinaryType(), False),            # bool[K]: vectors still iterating
        StructField("vector_iterations", ArrayType(IntegerType()), False),
        StructField("block", IntegerType(), False),
        StructField("ranks", BinaryType(), False),             # float64[K, block size]
    ]
)

# --- page signals (what the crawler's parser saw on a page; input of the reward ranker) ---------
TITLE = "title"
TEXT = "text"
FEED_LINKS = "feed_links"
FETCHED_AT = "fetched_at"

# One row per crawled page, keyed by canonical ``url``.  Written by the sample crawl and by
# crawl-input ingestion (WARC/WAT); a crawler may supply it as JSON lines of the same columns.
PAGE_SIGNALS = StructType(
    [
        StructField(URL, StringType(), False),
        StructField(TITLE, StringType(), True),
        StructField(TEXT, StringType(), True),
        StructField(FEED_LINKS, ArrayType(StringType()), True),   # absolute URLs of XML feeds linked
        StructField(FETCHED_AT, TimestampType(), True),
    ]
)

# Table names inside the lake.
PAGES_TABLE = "pages"
LINKS_TABLE = "links"
REJECTS_TABLE = "rejects"
PAGERANK_TABLE = "pagerank"
RANK_RUNS_TABLE = "rank_runs"
RANK_STATE_TABLE = "rank_state"
PAGE_SIGNALS_TABLE = "page_signals"

# --- reward ranking (issue 6) -------------------------------------------------------------------
SCORE = "score"
FEED_URL = "feed_url"
ROUND = "round"

# The reward ranker's score per page after the last run (replaced by each run): the crawl
# frontier's ordering key.  Scores are non-negative points.
REWARD_SCORES = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(SCORE, DoubleType(), False),
        StructField(RUN_ID, StringType(), False),
    ]
)

# XML feeds ever linked from a page: a feed's first sighting earns its page the new-feed reward.
FEEDS = StructType(
    [
        StructField(FEED_URL, StringType(), False),               # canonical URL
        StructField("discovered_by", StringType(), True),         # url of the page credited with it
        StructField("discovered_at", TimestampType(), False),     # when the reward run saw it first
        StructField("discovered_run_id", StringType(), False),
        StructField("last_seen_at", TimestampType(), False),      # latest reward run that saw it linked
    ]
)

# One row per round of each reward run; round 0 is the start state (new pages initialised).
# Invariant per row: total_score = total_score_before - total_forgotten + total_rewarded
# + total_initialised, and total_received = total_sent (spreading moves mass, never makes it).
REWARD_RUNS = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField(ROUND, IntegerType(), False),
        StructField("started_at", TimestampType(), False),
        StructField("pages", LongType(), False),
        StructField("new_pages", LongType(), False),
        StructField("send_fraction", DoubleType(), False),
        StructField("forget_rate", DoubleType(), False),
        StructField("rewards_enabled", BooleanType(), False),
        StructField("links_version", LongType(), True),
        StructField("total_score_before", DoubleType(), False),
        StructField("total_sent", DoubleType(), False),
        StructField("total_received", DoubleType(), False),
        StructField("total_forgotten", DoubleType(), False),
        StructField("total_rewarded", DoubleType(), False),
        StructField("total_initialised", DoubleType(), False),
        StructField("total_score", DoubleType(), False),
        StructField("largest_change", DoubleType(), False),
        StructField("seconds", DoubleType(), False),
    ]
)

# What a prune deleted: enough to audit it and to undo it by Delta time travel to the versions
# of ``pages`` and ``links`` read before the deletes (``linkgraph reward --undo-prune RUN_ID``).
PRUNED_PAGES = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(SCORE, DoubleType(), False),
        StructField("links_removed", LongType(), False),          # links with this page at either end
        StructField("pages_version", LongType(), False),          # pages version holding the page
        StructField("links_version", LongType(), False),          # links version holding its links
        StructField("pruned_at", TimestampType(), False),
    ]
)

REWARD_SCORES_TABLE = "reward_scores"
REWARD_RUNS_TABLE = "reward_runs"
FEEDS_TABLE = "feeds"
PRUNED_PAGES_TABLE = "pruned_pages"
