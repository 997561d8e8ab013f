"""Schemas and column names of the tables built from ``links`` and a rank run: the indexes,
the host and domain graphs (domain authority, link farms, syndication networks), page flags,
compressed link storage and harmonic centrality.

``linkgraph.lake.schemas`` re-exports every name here (read them as ``S.NAME``).  The index, host and
domain graph and page-flag tables' names are in its list of table names, the compressed tables' and
their columns' in ``linkgraph.lake.names``.
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

from linkgraph.lake.names import (
    ARC_COUNT,
    BIT_LENGTH,
    BLOCK_ID,
    BLOCK_MAX_ARCS,
    BLOCK_SIZE,
    DATA,
    DIRECTION,
    FIRST_ID,
    KIND,
    LINKS_VERSION,
    MAX_REF_COUNT,
    MIN_INTERVAL_LENGTH,
    NODE_COUNT,
    OFFSETS,
    PAGE_ID,
    PAGES_VERSION,
    RESIDUAL_CODE,
    URL,
    VERTEX_ORDER,
    WINDOW_SIZE,
)
from linkgraph.lake.schemas_rank import RANK, RUN_ID

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

# --- harmonic centrality and graph exports (linkgraph centrality / export) -----------------------
HARMONIC = "harmonic"
PAGERANK_VALUE = "pagerank"
PAGERANK_RANK = "pagerank_rank"
ITERATIONS = "iterations"
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
