"""Names that code without pyspark needs: the compressed-link tables and their columns, the pages
table's id and URL, link types and positions (config) and the input formats.

``linkgraph links --compressed`` answers from these tables without Spark (and without importing
pyspark, see ``linkgraph.compress.pages``), so the names live here; ``linkgraph.lake.schemas``
re-exports them beside the ``StructType`` schemas.
"""

from __future__ import annotations

# --- links: the values of link_type and position (config validates against them) -------------
LINK_TYPES = ("INTERNAL", "EXTERNAL", "NOFOLLOW", "UGC", "SPONSORED")
POSITIONS = ("NAV", "CONTENT", "FOOTER", "SIDEBAR")

# --- pages -----------------------------------------------------------------------------------
PAGES_TABLE = "pages"
PAGE_ID = "page_id"
URL = "url"
URL_KEY = "url_key"

# --- compressed link storage (linkgraph compress; linkgraph.compress) --------------------------
BLOCK_ID = "block_id"
FIRST_ID = "first_id"
NODE_COUNT = "node_count"
ARC_COUNT = "arc_count"
BIT_LENGTH = "bit_length"
DATA = "data"
OFFSETS = "offsets"
DIRECTION = "direction"
LINKS_VERSION = "links_version"
PAGES_VERSION = "pages_version"
BLOCK_SIZE = "block_size"
WINDOW_SIZE = "window_size"
MAX_REF_COUNT = "max_ref_count"
MIN_INTERVAL_LENGTH = "min_interval_length"
RESIDUAL_CODE = "residual_code"
BLOCK_MAX_ARCS = "block_max_arcs"
VERTEX_ORDER = "vertex_order"
KIND = "kind"
FORWARD = "forward"
REVERSE = "reverse"

# What a compressed table was built from and how: equal in every row of one build.
COMPRESSION_BUILD_COLUMNS = (LINKS_VERSION, BLOCK_SIZE, WINDOW_SIZE, MAX_REF_COUNT, MIN_INTERVAL_LENGTH, RESIDUAL_CODE,
                             BLOCK_MAX_ARCS, VERTEX_ORDER, PAGES_VERSION)
# How the compressed graph numbers its vertices (the `vertex_order` build column): positions 0..m-1
# of the linked pages in `url_key` order (`linkgraph.lake.ids.host_order`), never the page ids.
URL_KEY_ORDER = "url_key"
# The kinds of `links_compressed_order` rows: page ids -> positions, positions -> page ids.
PAGE_TO_POSITION = "page_to_position"
POSITION_TO_PAGE = "position_to_page"

LINKS_COMPRESSED_FORWARD_TABLE = "links_compressed_forward"
LINKS_COMPRESSED_REVERSE_TABLE = "links_compressed_reverse"
LINKS_COMPRESSED_OFFSETS_TABLE = "links_compressed_offsets"
LINKS_COMPRESSED_ORDER_TABLE = "links_compressed_order"

# --- input formats (linkgraph.inputs.readers.FORMATS, the same tuple; the CLI's --format choices) ------
INPUT_FORMATS: tuple[str, ...] = ("parquet", "jsonl", "csv", "arcs", "dat", "gml", "warc", "wat", "ccgraph")

# --- linkgraph centrality --level ------------------------------------------------------------
CENTRALITY_LEVELS = ("host", "domain", "page")
