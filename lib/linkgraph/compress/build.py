"""Spark side of ``linkgraph compress``: pure ``DataFrame -> DataFrame`` transforms that encode
the links of each block of vertices in parallel (one ``applyInPandas`` group per block).

The vertices are not page ids: :func:`vertex_order` numbers the pages with a link ``0..m-1`` in
``url_key`` order (host reversed, then path), and :func:`in_vertex_order` renumbers the links so.
Page ids are given batch by batch, so after incremental ingests a host's pages are spread over id
ranges and the gaps between successors grow (17% more bits per link after 10 batches of random
hosts, ``bench/order.py``); positions in host order do not depend on how the pages were numbered.
:func:`order_rows` stores the order itself (``links_compressed_order``) for lookups by page id.

``forward`` lists the ``dst_id`` of each ``src_id``; ``reverse`` (the transposed graph) the
``src_id`` of each ``dst_id``.  A block holds consecutive vertices within one range ``[k *
block_size, (k + 1) * block_size)`` and is cut by cumulative arcs too (:func:`arcs_by_block`), so a
hub's list is encoded alone rather than with 65,536 neighbours; the bits of a block depend only on
its own links, so blocks are independent tasks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from linkgraph.compress import bits as B
from linkgraph.compress.bv import BVParams, block_csr, encode_block
from linkgraph.lake import schemas as S
from linkgraph.lake.config import CompressConfig
from linkgraph.lake.ids import host_order

# Page ids the codec accepts: gaps of 2**62 and more would overflow its 64-bit codes.
MAX_PAGE_ID = (1 << 62) - 1

# Table properties of the compressed tables: one block (or chunk) per data file is their layout, so
# Delta must not merge their files after a write (auto compaction, optimized writes).  Delta takes
# the session's spark.databricks.delta.autoCompact.enabled / optimizeWrite.enabled over these, so
# compress also turns both off in the session for its own writes (steps/compress.py).
LAYOUT_PROPERTIES = {"delta.autoOptimize.autoCompact": "false", "delta.autoOptimize.optimizeWrite": "false"}
LAYOUT_SESSION_CONF = {
    "spark.sql.files.maxRecordsPerFile": "1",
    "spark.databricks.delta.autoCompact.enabled": "false",
    "spark.databricks.delta.optimizeWrite.enabled": "false",
    **{f"spark.databricks.delta.properties.defaults.{key[len('delta.'):]}": value
       for key, value in LAYOUT_PROPERTIES.items()},
}

NODE = "node"
SUCCESSOR = "successor"
RANGE = "_range"
POSITION = "position"
KEY = "_key"
VALUE = "_value"

# applyInPandas output: a block row of COMPRESSED_LINKS plus its offsets stream.
ENCODED_BLOCK = StructType(
    [
        *S.COMPRESSED_LINKS.fields,
        StructField("offsets_bit_length", S.COMPRESSED_OFFSETS[S.BIT_LENGTH].dataType, False),
        StructField(S.OFFSETS, S.COMPRESSED_OFFSETS[S.OFFSETS].dataType, False),
    ]
)


def encodable(links: DataFrame) -> Column:
    """True for links whose two page ids the codec can store (``0 <= id <= MAX_PAGE_ID``)."""
    return F.col(S.SRC_ID).between(0, MAX_PAGE_ID) & F.col(S.DST_ID).between(0, MAX_PAGE_ID)


def vertex_order(links: DataFrame, pages: DataFrame | None) -> DataFrame:
    """``(page_id, position)``: the pages at either end of a link numbered ``0..m-1`` in ``url_key``
    order (``ids.host_order``); ids without a row in ``pages`` (or without a key) come after
    them, by page id.  ``pages`` None: all of them in page id order."""
    ends = (links.select(F.col(S.SRC_ID).alias(S.PAGE_ID))
            .union(links.select(F.col(S.DST_ID).alias(S.PAGE_ID))).distinct())
    if pages is None:
        keyed = ends.withColumn(S.URL_KEY, F.lit(None).cast("string"))
    else:
        keyed = ends.join(pages.select(S.PAGE_ID, S.URL_KEY), on=S.PAGE_ID, how="left")
    return host_order(keyed, POSITION)


def in_vertex_order(links: DataFrame, order: DataFrame) -> DataFrame:
    """``links`` (src_id, dst_id) with both ends replaced by their positions in ``order``
    (:func:`vertex_order` of these links, so every end has one)."""
    src = order.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(POSITION).alias("_src"))
    dst = order.select(F.col(S.PAGE_ID).alias(S.DST_ID), F.col(POSITION).alias("_dst"))
    return (links.select(S.SRC_ID, S.DST_ID).join(src, on=S.SRC_ID).join(dst, on=S.DST_ID)
            .select(F.col("_src").alias(S.SRC_ID), F.col("_dst").alias(S.DST_ID)))


def build_columns(config: CompressConfig, links_version: int, pages_version: int = -1) -> dict:
    """The ``COMPRESSION_BUILD_COLUMNS`` values of a build: equal in every row of the four tables
    (``pages_version`` -1: no ``pages`` table, the vertices in page id order)."""
    return {
        S.LINKS_VERSION: int(links_version),
        S.PAGES_VERSION: int(pages_version),
        S.BLOCK_SIZE: int(config.block_size),
        S.WINDOW_SIZE: config.window_size,
        S.MAX_REF_COUNT: config.max_ref_count,
        S.MIN_INTERVAL_LENGTH: config.min_interval_length,
        S.RESIDUAL_CODE: config.residual_code,
        S.BLOCK_MAX_ARCS: int(config.block_max_arcs),
        S.VERTEX_ORDER: S.URL_KEY_ORDER,
    }


def order_rows(order: DataFrame, config: CompressConfig, links_version: int, pages_version: int = -1) -> DataFrame:
    """``COMPRESSED_ORDER`` rows of a :func:`vertex_order`: both directions of the map in chunks of
    ``block_size`` keys, so no row holds more than ``block_size`` pairs."""
    build = build_columns(config, links_version, pages_version)
    chunk = int(config.block_size)
    by_page = order.select(F.lit(S.PAGE_TO_POSITION).alias(S.KIND), F.col(S.PAGE_ID).alias(KEY),
                           F.col(POSITION).alias(VALUE))
    by_position = order.select(F.lit(S.POSITION_TO_PAGE).alias(S.KIND), F.col(POSITION).alias(KEY),
                               F.col(S.PAGE_ID).alias(VALUE))
    pairs = by_page.unionByName(by_position)
    chunked = pairs.withColumn(S.FIRST_ID, F.expr(f"({KEY} div {chunk}) * {chunk}"))

    def encode_chunk(pdf: pd.DataFrame) -> pd.DataFrame:
        return encode_order_chunk(pdf, build)

    return chunked.groupBy(S.KIND, S.FIRST_ID).applyInPandas(encode_chunk, schema=S.COMPRESSED_ORDER)


def encode_order_chunk(pdf: pd.DataFrame, build: dict) -> pd.DataFrame:
    """One ``COMPRESSED_ORDER`` row of the pairs (kind, first_id, _key, _value) of one chunk."""
    pdf = pdf.sort_values(KEY)
    first_id = int(pdf[S.FIRST_ID].iloc[0])
    words, n_bits = B.gamma_encode_pairs(pdf[KEY].to_numpy(np.int64), pdf[VALUE].to_numpy(np.int64), first_id)
    row = {
        S.KIND: pdf[S.KIND].iloc[0],
        S.FIRST_ID: first_id,
        S.NODE_COUNT: len(pdf),
        S.BIT_LENGTH: int(n_bits),
        S.DATA: B.words_to_bytes(words, int(n_bits)),
        **build,
    }
    return pd.DataFrame([row], columns=[f.name for f in S.COMPRESSED_ORDER.fields])


def arcs_by_block(links: DataFrame, direction: str, block_size: int, block_max_arcs: int = 1 << 20) -> DataFrame:
    """(node, successor, block_id, _range): ``links`` seen from the source (forward) or the
    destination (reverse), each arc with the block of its node (``block_id`` = the block's first id).

    Blocks are cut by ids and by cumulative arcs: within the id range ``_range`` (``node div
    block_size``) a node whose range-mates of smaller id have ``before`` arcs in all gets the key
    ``2 * (before div block_max_arcs)``, plus one when its own list has ``block_max_arcs`` arcs or
    more.  Keys grow with the id, so equal keys are runs of consecutive nodes: a block holds fewer
    than ``2 * block_max_arcs`` arcs, and a long list is alone in its block.  The range's first
    block starts at ``_range * block_size`` (as blocks cut by ids alone), a later one at its first
    node.  Every window is partitioned by the range, so the arcs are shuffled once (by range) for
    the windows and the encoding that groups by (range, block)."""
    if direction not in (S.FORWARD, S.REVERSE):
        raise ValueError(f"direction must be {S.FORWARD} or {S.REVERSE}, got {direction!r}")
    node, successor = (S.SRC_ID, S.DST_ID) if direction == S.FORWARD else (S.DST_ID, S.SRC_ID)
    arcs = links.select(
        F.col(node).alias(NODE), F.col(successor).alias(SUCCESSOR),
        F.expr(f"`{node}` div {int(block_size)}").alias(RANGE),
    )
    before = F.rank().over(Window.partitionBy(RANGE).orderBy(NODE)) - 1
    degree = F.count(F.lit(1)).over(Window.partitionBy(RANGE, NODE))
    long_list = (degree >= F.lit(int(block_max_arcs))).cast("long")
    keyed = arcs.withColumn("_before", before).withColumn(
        "_key", F.lit(2) * F.expr(f"_before div {int(block_max_arcs)}") + long_list)
    block_first = F.min(NODE).over(Window.partitionBy(RANGE, "_key"))
    range_first = F.min(NODE).over(Window.partitionBy(RANGE))
    first_id = F.when(block_first == range_first, F.col(RANGE) * F.lit(int(block_size))).otherwise(block_first)
    return keyed.select(NODE, SUCCESSOR, first_id.alias(S.BLOCK_ID), RANGE)


def encode_blocks(arcs: DataFrame, config: CompressConfig, links_version: int, pages_version: int = -1) -> DataFrame:
    """One ``ENCODED_BLOCK`` row per block of ``arcs_by_block`` output."""
    build = build_columns(config, links_version, pages_version)

    def encode_group(pdf: pd.DataFrame) -> pd.DataFrame:
        return encode_block_frame(pdf, config, build)

    # grouped by (range, block): the range partitioning of the windows already clusters them
    return arcs.groupBy(RANGE, S.BLOCK_ID).applyInPandas(encode_group, schema=ENCODED_BLOCK)


def encode_block_frame(pdf: pd.DataFrame, config: CompressConfig, build: dict) -> pd.DataFrame:
    """Encode the arcs of one block (columns node, successor, block_id) into one row."""
    block_id = int(pdf[S.BLOCK_ID].iloc[0])
    first_id = block_id
    indptr, successors = block_csr(pdf[NODE].to_numpy(np.int64), pdf[SUCCESSOR].to_numpy(np.int64), first_id)
    params = BVParams(config.window_size, config.max_ref_count, config.min_interval_length, config.residual_code)
    block = encode_block(indptr, successors, first_id, params)
    offset_words, offset_bits = B.gamma_encode_gaps(block.offsets)
    row = {
        S.BLOCK_ID: block_id,
        S.FIRST_ID: first_id,
        S.NODE_COUNT: block.node_count,
        S.ARC_COUNT: block.arc_count,
        S.BIT_LENGTH: block.bit_length,
        S.DATA: block.to_bytes(),
        **build,
        "offsets_bit_length": int(offset_bits),
        S.OFFSETS: B.words_to_bytes(offset_words, int(offset_bits)),
    }
    return pd.DataFrame([row], columns=[f.name for f in ENCODED_BLOCK.fields])


def block_rows(encoded: DataFrame) -> DataFrame:
    """The ``COMPRESSED_LINKS`` rows of ``encode_blocks`` output."""
    return encoded.select(*[f.name for f in S.COMPRESSED_LINKS.fields])


def offsets_rows(encoded: DataFrame, direction: str) -> DataFrame:
    """The ``COMPRESSED_OFFSETS`` rows of ``encode_blocks`` output."""
    columns = {
        S.DIRECTION: F.lit(direction),
        S.BLOCK_ID: F.col(S.BLOCK_ID),
        S.FIRST_ID: F.col(S.FIRST_ID),
        S.NODE_COUNT: F.col(S.NODE_COUNT),
        S.BIT_LENGTH: F.col("offsets_bit_length"),
        S.OFFSETS: F.col(S.OFFSETS),
        **{c: F.col(c) for c in S.COMPRESSION_BUILD_COLUMNS},
    }
    return encoded.select(*[columns[f.name].alias(f.name) for f in S.COMPRESSED_OFFSETS.fields])
