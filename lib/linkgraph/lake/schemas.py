"""Table schemas and column names, declared once and all read from here as ``S.NAME``.

Every Delta table linkgraph writes has a ``StructType`` here; every column name used in more than
one place is a constant here.  Timestamps are UTC ``TimestampType``; ids are ``LongType``.

Declared in this module: the edge record, ``pages``, ``links``, ``rejects``, ``page_signals``,
sitemaps, external authority, seed scores, the frontier, crawl extraction, step runs and the list
of table names.  Re-exported from sibling modules: ``linkgraph.lake.names`` (names code without
pyspark needs), ``linkgraph.lake.schemas_rank`` (PageRank and reward ranking, ``RUN_ID``, ``RANK``)
and ``linkgraph.lake.schemas_graph`` (indexes, host and domain graphs, page flags, compressed link
storage, harmonic centrality).
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from linkgraph.lake import names as _names
from linkgraph.lake import schemas_graph as _graph
from linkgraph.lake import schemas_rank as _rank

# names code without pyspark needs too (linkgraph links --compressed, the CLI's choices): defined in
# linkgraph.lake.names
ARC_COUNT = _names.ARC_COUNT
BIT_LENGTH = _names.BIT_LENGTH
BLOCK_ID = _names.BLOCK_ID
BLOCK_MAX_ARCS = _names.BLOCK_MAX_ARCS
BLOCK_SIZE = _names.BLOCK_SIZE
CENTRALITY_LEVELS = _names.CENTRALITY_LEVELS
COMPRESSION_BUILD_COLUMNS = _names.COMPRESSION_BUILD_COLUMNS
DATA = _names.DATA
DIRECTION = _names.DIRECTION
FIRST_ID = _names.FIRST_ID
FORWARD = _names.FORWARD
KIND = _names.KIND
LINKS_COMPRESSED_FORWARD_TABLE = _names.LINKS_COMPRESSED_FORWARD_TABLE
LINKS_COMPRESSED_OFFSETS_TABLE = _names.LINKS_COMPRESSED_OFFSETS_TABLE
LINKS_COMPRESSED_ORDER_TABLE = _names.LINKS_COMPRESSED_ORDER_TABLE
LINKS_COMPRESSED_REVERSE_TABLE = _names.LINKS_COMPRESSED_REVERSE_TABLE
LINKS_VERSION = _names.LINKS_VERSION
PAGES_VERSION = _names.PAGES_VERSION
MAX_REF_COUNT = _names.MAX_REF_COUNT
MIN_INTERVAL_LENGTH = _names.MIN_INTERVAL_LENGTH
NODE_COUNT = _names.NODE_COUNT
OFFSETS = _names.OFFSETS
PAGES_TABLE = _names.PAGES_TABLE
PAGE_ID = _names.PAGE_ID
PAGE_TO_POSITION = _names.PAGE_TO_POSITION
POSITION_TO_PAGE = _names.POSITION_TO_PAGE
RESIDUAL_CODE = _names.RESIDUAL_CODE
REVERSE = _names.REVERSE
URL = _names.URL
URL_KEY_ORDER = _names.URL_KEY_ORDER
VERTEX_ORDER = _names.VERTEX_ORDER
WINDOW_SIZE = _names.WINDOW_SIZE

# the rankers' tables (PageRank, reward ranking): defined in linkgraph.lake.schemas_rank
RUN_ID = _rank.RUN_ID
RANK = _rank.RANK
VECTOR_ID = _rank.VECTOR_ID
PAGERANK = _rank.PAGERANK
ITERATION = _rank.ITERATION
RANK_RUNS = _rank.RANK_RUNS
RANK_STATE = _rank.RANK_STATE
SCORE = _rank.SCORE
FEED_URL = _rank.FEED_URL
ROUND = _rank.ROUND
REWARD_SCORES = _rank.REWARD_SCORES
FEEDS = _rank.FEEDS
REWARD_RUNS = _rank.REWARD_RUNS
PRUNED_PAGES = _rank.PRUNED_PAGES
REWARD_SCORES_TABLE = _rank.REWARD_SCORES_TABLE
REWARD_RUNS_TABLE = _rank.REWARD_RUNS_TABLE
FEEDS_TABLE = _rank.FEEDS_TABLE
PRUNED_PAGES_TABLE = _rank.PRUNED_PAGES_TABLE
RANK_CHANGES_TABLE = _rank.RANK_CHANGES_TABLE
NODE = _rank.NODE
FROM_SCORE = _rank.FROM_SCORE
TO_SCORE = _rank.TO_SCORE
FROM_POSITION = _rank.FROM_POSITION
TO_POSITION = _rank.TO_POSITION
POSITION_CHANGE = _rank.POSITION_CHANGE
CHANGE = _rank.CHANGE
LEVEL = _rank.LEVEL
MEASURE = _rank.MEASURE
FROM_RUN = _rank.FROM_RUN
TO_RUN = _rank.TO_RUN
RANK_CHANGES = _rank.RANK_CHANGES

# tables built from links and a rank run (indexes, host and domain graphs, page flags, compressed
# link storage, harmonic centrality): defined in linkgraph.lake.schemas_graph
CHUNK = _graph.CHUNK
TARGET_IDS = _graph.TARGET_IDS
TARGET_COUNT = _graph.TARGET_COUNT
SOURCE_IDS = _graph.SOURCE_IDS
SOURCE_COUNT = _graph.SOURCE_COUNT
ANCHORS = _graph.ANCHORS
ANCHOR = _graph.ANCHOR
LINKS_COUNT = _graph.LINKS_COUNT
LINKING_DOMAINS = _graph.LINKING_DOMAINS
EXAMPLE_CONTEXT = _graph.EXAMPLE_CONTEXT
FORWARD_INDEX = _graph.FORWARD_INDEX
REVERSE_INDEX = _graph.REVERSE_INDEX
ANCHOR_ENTRY = _graph.ANCHOR_ENTRY
ANCHOR_INDEX = _graph.ANCHOR_INDEX
REV_HOST = _graph.REV_HOST
DOMAIN = _graph.DOMAIN
SRC_HOST = _graph.SRC_HOST
DST_HOST = _graph.DST_HOST
SRC_DOMAIN = _graph.SRC_DOMAIN
DST_DOMAIN = _graph.DST_DOMAIN
HOSTS = _graph.HOSTS
DOMAINS = _graph.DOMAINS
HOST_LINKS = _graph.HOST_LINKS
DOMAIN_LINKS = _graph.DOMAIN_LINKS
AUTHORITY = _graph.AUTHORITY
AUTHORITY_SCORE = _graph.AUTHORITY_SCORE
DOMAIN_AUTHORITY = _graph.DOMAIN_AUTHORITY
DOMAIN_AUTHORITY_SCHEMA = _graph.DOMAIN_AUTHORITY_SCHEMA
TARGET_DOMAIN = _graph.TARGET_DOMAIN
LINK_FARMS = _graph.LINK_FARMS
NETWORK_ID = _graph.NETWORK_ID
SYNDICATION_NETWORKS = _graph.SYNDICATION_NETWORKS
IMPORTANT = _graph.IMPORTANT
ORPHAN = _graph.ORPHAN
LINK_FARM_DOMAIN = _graph.LINK_FARM_DOMAIN
LINK_FARM_TARGET = _graph.LINK_FARM_TARGET
SYNDICATION_NETWORK = _graph.SYNDICATION_NETWORK
TRUST_RANK = _graph.TRUST_RANK
SPAM_MASS = _graph.SPAM_MASS
SPAM_SUSPECT = _graph.SPAM_SUSPECT
PAGE_FLAGS = _graph.PAGE_FLAGS
DOMAIN_SPAM = _graph.DOMAIN_SPAM
COMPRESSED_LINKS = _graph.COMPRESSED_LINKS
COMPRESSED_OFFSETS = _graph.COMPRESSED_OFFSETS
COMPRESSED_ORDER = _graph.COMPRESSED_ORDER
HARMONIC = _graph.HARMONIC
PAGERANK_VALUE = _graph.PAGERANK_VALUE
PAGERANK_RANK = _graph.PAGERANK_RANK
ITERATIONS = _graph.ITERATIONS
HOST_CENTRALITY_TABLE = _graph.HOST_CENTRALITY_TABLE
DOMAIN_CENTRALITY_TABLE = _graph.DOMAIN_CENTRALITY_TABLE
PAGE_CENTRALITY_TABLE = _graph.PAGE_CENTRALITY_TABLE
CENTRALITY_RUNS_TABLE = _graph.CENTRALITY_RUNS_TABLE
CENTRALITY_TABLES = _graph.CENTRALITY_TABLES
HOST_CENTRALITY = _graph.HOST_CENTRALITY
DOMAIN_CENTRALITY = _graph.DOMAIN_CENTRALITY
PAGE_CENTRALITY = _graph.PAGE_CENTRALITY
CENTRALITY_SCHEMAS = _graph.CENTRALITY_SCHEMAS
CENTRALITY_ITERATION = _graph.CENTRALITY_ITERATION
CENTRALITY_RUNS = _graph.CENTRALITY_RUNS

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

LINK_TYPES = _names.LINK_TYPES
POSITIONS = _names.POSITIONS

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
HOST = "host"
REGISTERED_DOMAIN = "registered_domain"
URL_KEY = _names.URL_KEY
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
# a raw value (and ``detail``) is stored as valid UTF-8 of at most this many characters; a longer or
# invalid one is stored clipped, its original's length in bytes and sha2-256 named in ``detail``
REJECT_FIELD_CHARS = 2000

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
    UNSAFE_XML = "UNSAFE_XML"
    # crawl inputs (WARC/WAT): records that cannot be read or parsed
    TRUNCATED_RECORD = "TRUNCATED_RECORD"
    NON_HTML = "NON_HTML"
    UNDECODABLE_CHARSET = "UNDECODABLE_CHARSET"
    OVERSIZED_PAGE = "OVERSIZED_PAGE"


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

# --- sitemaps, external authority, seed scores, scope and frontier ------------------------------
PRIORITY = "priority"
LASTMOD = "lastmod"
CHANGEFREQ = "changefreq"
SITEMAP = "sitemap"

SITEMAPS = StructType(
    [
        StructField(URL, StringType(), False),          # canonical, like pages.url
        StructField(PRIORITY, DoubleType(), False),     # 0.0-1.0; 0.5 when the entry gives none
        StructField(LASTMOD, TimestampType(), True),    # UTC
        StructField(CHANGEFREQ, StringType(), True),
        StructField(SITEMAP, StringType(), False),      # the file the entry came from
    ]
)

EXTERNAL_AUTHORITY = StructType(
    [
        StructField(DOMAIN, StringType(), False),       # reversed host or registered domain
        StructField(AUTHORITY, DoubleType(), False),    # normalised to [0, 1]
        StructField("raw_value", DoubleType(), True),   # as given (Open PageRank 0-10, harmonic centrality)
        StructField(SOURCE, StringType(), False),       # openpagerank | ccrank, and the file
    ]
)

HOP_DEPTH = "hop_depth"
SEED_SCORE = "seed_score"
SCOPE_SCORE = "scope_score"
IN_SCOPE = "in_scope"

SEED_SCORES = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField("in_links", LongType(), False),              # distinct pages linking in
        StructField("in_links_norm", DoubleType(), False),       # log1p(in_links) / log1p(max in_links)
        StructField(DOMAIN_AUTHORITY, DoubleType(), False),      # [0, 1], blended with external authority
        StructField("sitemap_priority", DoubleType(), False),    # [0, 1]
        StructField(HOP_DEPTH, IntegerType(), True),             # links from the nearest seed; null: unreachable
        StructField("depth_term", DoubleType(), False),          # 1 / (hop_depth + 1); 0 when unreachable
        StructField(SEED_SCORE, DoubleType(), False),
        StructField("domain_hops", IntegerType(), True),         # domain-graph hops from a seed domain
        StructField("domain_affinity", DoubleType(), False),
        StructField("depth_factor", DoubleType(), False),        # max(0, 1 - hop_depth / max_depth)
        StructField(SCOPE_SCORE, DoubleType(), False),
        StructField(IN_SCOPE, BooleanType(), False),
    ]
)

FRONTIER = StructType(
    [
        StructField("position", LongType(), False),              # 1 = fetch first
        StructField(URL, StringType(), False),
        StructField(PAGE_ID, LongType(), True),                  # null: known only from a sitemap
        # seed_score | pagerank | personalized_pagerank | reward
        StructField("priority_source", StringType(), False),
        StructField(PRIORITY, DoubleType(), False),
        StructField(SEED_SCORE, DoubleType(), False),
        StructField(SCOPE_SCORE, DoubleType(), False),
        StructField(HOP_DEPTH, IntegerType(), True),
        StructField("domain_affinity", DoubleType(), False),
        StructField(RUN_ID, StringType(), False),
    ]
)

# Table names inside the lake.
LINKS_TABLE = "links"
REJECTS_TABLE = "rejects"
PAGERANK_TABLE = "pagerank"
RANK_RUNS_TABLE = "rank_runs"
RANK_STATE_TABLE = "rank_state"
PAGE_SIGNALS_TABLE = "page_signals"
FORWARD_INDEX_TABLE = "forward_index"
REVERSE_INDEX_TABLE = "reverse_index"
ANCHOR_INDEX_TABLE = "anchor_index"
HOSTS_TABLE = "hosts"
HOST_LINKS_TABLE = "host_links"
DOMAINS_TABLE = "domains"
DOMAIN_LINKS_TABLE = "domain_links"
DOMAIN_AUTHORITY_TABLE = "domain_authority"
LINK_FARMS_TABLE = "link_farms"
SYNDICATION_NETWORKS_TABLE = "syndication_networks"
PAGE_FLAGS_TABLE = "page_flags"
SITEMAPS_TABLE = "sitemaps"
EXTERNAL_AUTHORITY_TABLE = "external_authority"
SEED_SCORES_TABLE = "seed_scores"
FRONTIER_TABLE = "frontier"

# --- crawl inputs (WARC / WAT extraction, linkgraph.inputs.crawl) ------------------------------------
ROW_KIND = "row_kind"
RECORD_ID = "record_id"
FILE = "file"
LINK_COUNT = "link_count"

# What extraction emits per WARC/WAT file (``linkgraph.inputs.crawl.extract``): one record row per record
# read (row_kind page | redirect | skipped | rejected) plus one ``edge`` row per link found.  Edge
# rows carry the raw edge record; page rows the page_signals values; rejected rows reason/detail.
CRAWL_EXTRACT = StructType(
    [
        StructField(ROW_KIND, StringType(), False),
        StructField(FILE, StringType(), True),
        StructField(RECORD_ID, StringType(), True),
        StructField("record_offset", LongType(), True),        # byte offset of the record in its file
        *RAW_EDGE_RECORD.fields,
        StructField(REASON, StringType(), True),
        StructField(DETAIL, StringType(), True),
        StructField(URL, StringType(), True),
        StructField(TITLE, StringType(), True),
        StructField(TEXT, StringType(), True),
        StructField(FEED_LINKS, ArrayType(StringType()), True),
        StructField(FETCHED_AT, TimestampType(), True),
        StructField(LINK_COUNT, IntegerType(), True),
    ]
)

# --- step runs: what a multi-table step read, recorded before its first write, so that a
# retry of the same run id reads the same table versions (time travel) and ends as one run would.
STEP_RUNS_TABLE = "step_runs"
STEP = "step"
STEP_RUNS = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField(STEP, StringType(), False),
        StructField("started_at", TimestampType(), False),
        StructField("inputs", StringType(), False),     # JSON: table -> Delta version read (null: absent)
    ]
)
