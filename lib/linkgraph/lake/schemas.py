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

from linkgraph.lake import names as _names

# names code without pyspark needs too (linkgraph links --compressed): defined in linkgraph.lake.names
ARC_COUNT = _names.ARC_COUNT
BIT_LENGTH = _names.BIT_LENGTH
BLOCK_ID = _names.BLOCK_ID
BLOCK_MAX_ARCS = _names.BLOCK_MAX_ARCS
BLOCK_SIZE = _names.BLOCK_SIZE
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
        StructField("saved_at", TimestampType(), True),        # UTC; state older than a day is dropped
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

# --- indexes (built from links) ---------------------------------------------------------------
CHUNK = "chunk"
TARGET_IDS = "target_ids"
TARGET_COUNT = "target_count"
SOURCE_IDS = "source_ids"
SOURCE_COUNT = "source_count"
ANCHORS = "anchors"
ANCHOR = "anchor"
LINKS_COUNT = "links"
LINKING_DOMAINS = "linking_domains"
EXAMPLE_CONTEXT = "example_context"

FORWARD_INDEX = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(CHUNK, IntegerType(), False),                       # 0, 1, ... in id order
        StructField(TARGET_IDS, ArrayType(LongType(), False), False),   # ascending, distinct, ≤ max_list_entries
        StructField(TARGET_COUNT, IntegerType(), False),                # the page's total, every chunk
    ]
)
REVERSE_INDEX = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(CHUNK, IntegerType(), False),                       # 0, 1, ... in id order
        StructField(SOURCE_IDS, ArrayType(LongType(), False), False),   # ascending, distinct, ≤ max_list_entries
        StructField(SOURCE_COUNT, IntegerType(), False),                # the page's total, every chunk
    ]
)
ANCHOR_ENTRY = StructType(
    [
        StructField(ANCHOR, StringType(), False),            # normalised anchor text
        StructField(LINKS_COUNT, LongType(), False),         # incoming links carrying it
        StructField(LINKING_DOMAINS, LongType(), False),     # distinct registered domains among them
        StructField(EXAMPLE_CONTEXT, StringType(), True),    # the context window of one such link
    ]
)
ANCHOR_INDEX = StructType(
    [
        StructField(PAGE_ID, LongType(), False),
        StructField(ANCHORS, ArrayType(ANCHOR_ENTRY, False), False),   # most links first, capped
        StructField("distinct_anchors", IntegerType(), False),         # before the cap
        StructField("anchored_links", LongType(), False),              # links with a usable anchor
        StructField("empty_anchors", LongType(), False),
        StructField("boilerplate_anchors", LongType(), False),
    ]
)

# --- host and domain graphs (names reversed: com.example.www) ----------------------------------
REV_HOST = "host"
DOMAIN = "domain"
SRC_HOST, DST_HOST = "src_host", "dst_host"
SRC_DOMAIN, DST_DOMAIN = "src_domain", "dst_domain"


def _node_stats(name: str, extra: list[StructField]) -> StructType:
    return StructType(
        [
            StructField(name, StringType(), False),
            *extra,
            StructField("pages", LongType(), False),
            StructField("out_links", LongType(), False),
            StructField("in_links", LongType(), False),
            StructField("internal_links", LongType(), False),          # both ends inside this node
            StructField("external_out_links", LongType(), False),
            StructField("external_in_links", LongType(), False),
            StructField(LINKING_DOMAINS, LongType(), False),           # other registered domains linking in
        ]
    )


HOSTS = _node_stats(REV_HOST, [StructField(DOMAIN, StringType(), True)])
DOMAINS = _node_stats(DOMAIN, [StructField("hosts", LongType(), False)])


def _edge_stats(src: str, dst: str) -> StructType:
    return StructType(
        [
            StructField(src, StringType(), False),
            StructField(dst, StringType(), False),
            StructField(LINKS_COUNT, LongType(), False),
            StructField("followed_links", LongType(), False),    # link types PageRank follows
            StructField("src_pages", LongType(), False),         # distinct linking pages
            StructField("followed_src_pages", LongType(), False),
            StructField("dst_pages", LongType(), False),         # distinct linked pages
        ]
    )


HOST_LINKS = _edge_stats(SRC_HOST, DST_HOST)
DOMAIN_LINKS = _edge_stats(SRC_DOMAIN, DST_DOMAIN)

AUTHORITY = "authority"
AUTHORITY_SCORE = "authority_score"
DOMAIN_AUTHORITY = "domain_authority"

DOMAIN_AUTHORITY_SCHEMA = StructType(
    [
        StructField(DOMAIN, StringType(), False),
        StructField(AUTHORITY, DoubleType(), False),          # PageRank over the domain graph, sums to 1
        StructField("authority_position", LongType(), False), # 1 = highest
        StructField(AUTHORITY_SCORE, DoubleType(), False),    # 0-10, decile style (10 x percentile)
        StructField(DOMAIN_AUTHORITY, DoubleType(), False),   # authority_score / 10, in [0, 1]
        StructField(RUN_ID, StringType(), False),
    ]
)

TARGET_DOMAIN = "target_domain"
LINK_FARMS = StructType(
    [
        StructField(DOMAIN, StringType(), False),
        StructField(TARGET_DOMAIN, StringType(), False),
        StructField("links_to_target", LongType(), False),
        StructField("external_out_links", LongType(), False),
        StructField("share", DoubleType(), False),
    ]
)

NETWORK_ID = "network_id"
SYNDICATION_NETWORKS = StructType(
    [
        StructField(NETWORK_ID, StringType(), False),    # the smallest member domain: stable across runs
        StructField(DOMAIN, StringType(), False),
        StructField("network_size", LongType(), False),
        StructField("partners", ArrayType(StringType(), False), False),   # reciprocal high-volume partners
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

# --- page flags (one row per page per rank run) -------------------------------------------------
IMPORTANT = "important"
ORPHAN = "orphan"
LINK_FARM_DOMAIN = "link_farm_domain"
LINK_FARM_TARGET = "link_farm_target"
SYNDICATION_NETWORK = "syndication_network"
# spam mass (TrustRank, Gyöngyi et al. 2004/2006; linkgraph.graph.spam): trust_rank is the core-based PageRank
# p' = good_fraction x PageRank personalised on the trusted pages, spam_mass = (rank - trust_rank) / rank <= 1
TRUST_RANK = "trust_rank"
SPAM_MASS = "spam_mass"
SPAM_SUSPECT = "spam_suspect"

PAGE_FLAGS = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField(PAGE_ID, LongType(), False),
        StructField(URL, StringType(), True),
        StructField(RANK, DoubleType(), True),
        StructField("rank_threshold", DoubleType(), True),   # mean + k·σ of the run's ranks
        StructField(IMPORTANT, BooleanType(), False),
        StructField("internal_in_links", LongType(), False),
        StructField(ORPHAN, BooleanType(), False),
        StructField(LINK_FARM_DOMAIN, BooleanType(), False),
        StructField(LINK_FARM_TARGET, StringType(), True),
        StructField(SYNDICATION_NETWORK, StringType(), True),
        StructField(TRUST_RANK, DoubleType(), True),         # null: the rank run had no trust vector
        StructField(SPAM_MASS, DoubleType(), True),
        StructField(SPAM_SUSPECT, BooleanType(), False),
    ]
)

# The columns ``flags`` adds to ``domains`` when the rank run has a trust vector: sums of the
# domain's pages' PageRank and trust rank, and the relative spam mass of those sums.
DOMAIN_SPAM = StructType(
    [
        StructField(DOMAIN, StringType(), False),
        StructField(RANK, DoubleType(), True),
        StructField(TRUST_RANK, DoubleType(), True),
        StructField(SPAM_MASS, DoubleType(), True),
        StructField(SPAM_SUSPECT, BooleanType(), False),
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

# --- compressed link storage (linkgraph compress; linkgraph.compress) --------------------------

_COMPRESSION_BUILD_FIELDS = [
    StructField(LINKS_VERSION, LongType(), False),          # Delta version of `links` encoded
    StructField(BLOCK_SIZE, LongType(), False),             # vertex positions per block
    StructField(WINDOW_SIZE, IntegerType(), False),
    StructField(MAX_REF_COUNT, IntegerType(), False),
    StructField(MIN_INTERVAL_LENGTH, IntegerType(), False),
    StructField(RESIDUAL_CODE, StringType(), False),        # gamma | delta | zetaK
    StructField(BLOCK_MAX_ARCS, LongType(), False),         # arcs per block, a longer list alone
    StructField(VERTEX_ORDER, StringType(), False),         # url_key: vertices are host-order positions
    StructField(PAGES_VERSION, LongType(), False),          # Delta version of `pages` ordered by (-1: none)
]

# The compressed graph's vertices are not page ids but positions 0..m-1 of the m pages with a link,
# in url_key order (host reversed, then path; pages without a key after them by page id): so a
# host's pages are neighbours however many ingests numbered them.  `links_compressed_order` maps
# between the two.
#
# One row per block of positions [first_id, first_id + node_count): the successor lists (forward:
# dst positions of each src; reverse: src positions of each dst) as one Boldi-Vigna (WebGraph BVGraph) bit
# stream, most significant bit first, `bit_length` bits long.  Blocks are cut by ids and arcs: a
# block lies within one id range [k * block_size, (k + 1) * block_size) and holds fewer than
# 2 * block_max_arcs arcs, except a list of block_max_arcs or more, which is alone in its block.
# The range's first block starts at k * block_size, a later one at its first page with a list;
# `block_id = first_id`.  `node_count` ends at the block's last page with a list.
COMPRESSED_LINKS = StructType(
    [
        StructField(BLOCK_ID, LongType(), False),
        StructField(FIRST_ID, LongType(), False),
        StructField(NODE_COUNT, LongType(), False),
        StructField(ARC_COUNT, LongType(), False),
        StructField(BIT_LENGTH, LongType(), False),
        StructField(DATA, BinaryType(), False),
        *_COMPRESSION_BUILD_FIELDS,
    ]
)

# The offsets index: per (direction, block) the bit offset of every list in the block's stream
# (node_count + 1 values, the last one the stream length), as gamma-coded gaps exactly like
# WebGraph's `.offsets` file; `bit_length` is the length of this offsets stream.
COMPRESSED_OFFSETS = StructType(
    [
        StructField(DIRECTION, StringType(), False),        # forward | reverse
        StructField(BLOCK_ID, LongType(), False),
        StructField(FIRST_ID, LongType(), False),
        StructField(NODE_COUNT, LongType(), False),
        StructField(BIT_LENGTH, LongType(), False),
        StructField(OFFSETS, BinaryType(), False),
        *_COMPRESSION_BUILD_FIELDS,
    ]
)

# The vertex order of the compressed graph, in chunks of the key range [first_id, first_id +
# block_size): `page_to_position` rows list the page ids of the chunk that have a position with
# their positions, `position_to_page` rows the positions of the chunk with their page ids.  `data`
# is one bit stream of `node_count` (key, value) pairs: the gap from the previous key (from
# first_id for the first; minus one after it) and the signed difference from the previous value
# (from 0 for the first, folded onto the naturals), both gamma-coded.
COMPRESSED_ORDER = StructType(
    [
        StructField(KIND, StringType(), False),             # page_to_position | position_to_page
        StructField(FIRST_ID, LongType(), False),
        StructField(NODE_COUNT, LongType(), False),         # pairs in the chunk
        StructField(BIT_LENGTH, LongType(), False),
        StructField(DATA, BinaryType(), False),
        *_COMPRESSION_BUILD_FIELDS,
    ]
)


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

# --- reward ranking ------------------------------------------------------------------------------
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

# --- harmonic centrality and graph exports (linkgraph centrality / export) -----------------------
HARMONIC = "harmonic"
PAGERANK_VALUE = "pagerank"
PAGERANK_RANK = "pagerank_rank"
ITERATIONS = "iterations"
CENTRALITY_LEVELS = _names.CENTRALITY_LEVELS
HOST_CENTRALITY_TABLE = "host_centrality"
DOMAIN_CENTRALITY_TABLE = "domain_centrality"
PAGE_CENTRALITY_TABLE = "page_centrality"
CENTRALITY_RUNS_TABLE = "centrality_runs"
CENTRALITY_TABLES = {"host": HOST_CENTRALITY_TABLE, "domain": DOMAIN_CENTRALITY_TABLE, "page": PAGE_CENTRALITY_TABLE}


def _centrality(name: StructField) -> StructType:
    """One row per node: harmonic centrality (HyperBall estimate) and its rank (1 = most central),
    the PageRank over the same graph and its rank, the run's iterations and id."""
    return StructType(
        [
            name,
            StructField(HARMONIC, DoubleType(), False),
            StructField(RANK, LongType(), False),
            StructField(PAGERANK_VALUE, DoubleType(), False),
            StructField(PAGERANK_RANK, LongType(), False),
            StructField(ITERATIONS, IntegerType(), False),
            StructField(RUN_ID, StringType(), False),
        ]
    )


HOST_CENTRALITY = _centrality(StructField(REV_HOST, StringType(), False))
DOMAIN_CENTRALITY = _centrality(StructField(DOMAIN, StringType(), False))
PAGE_CENTRALITY = _centrality(StructField(PAGE_ID, LongType(), False))
CENTRALITY_SCHEMAS = {"host": HOST_CENTRALITY, "domain": DOMAIN_CENTRALITY, "page": PAGE_CENTRALITY}

CENTRALITY_ITERATION = StructType(
    [
        StructField("iteration", IntegerType(), False),          # = the distance t whose ball was added
        StructField("changed_counters", LongType(), False),
        StructField("harmonic_added", DoubleType(), False),      # Σ over nodes of (|B(t)| - |B(t-1)|) / t
        StructField("seconds", DoubleType(), False),
    ]
)

CENTRALITY_RUNS = StructType(
    [
        StructField(RUN_ID, StringType(), False),
        StructField("started_at", TimestampType(), False),
        StructField("level", StringType(), False),
        StructField("registers", IntegerType(), False),
        StructField("relative_standard_error", DoubleType(), False),   # 1.04 / sqrt(registers)
        StructField("nodes", LongType(), False),
        StructField("arcs", LongType(), False),
        StructField(ITERATIONS, IntegerType(), False),
        StructField("converged", BooleanType(), False),                # no counter changed in the last one
        StructField("seconds", DoubleType(), False),
        StructField("history", ArrayType(CENTRALITY_ITERATION), False),
    ]
)
