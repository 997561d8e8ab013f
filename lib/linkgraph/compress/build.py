"""Spark side of ``linkgraph compress``: pure ``DataFrame -> DataFrame`` transforms that encode
the links of each block of page ids in parallel (one ``applyInPandas`` group per block).

``forward`` lists the ``dst_id`` of each ``src_id``; ``reverse`` (the transposed graph) the
``src_id`` of each ``dst_id``.  A block holds consecutive page ids within one range ``[k *
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

from linkgraph import schemas as S
from linkgraph.config import CompressConfig

# Page ids the codec accepts: gaps of 2**62 and more would overflow its 64-bit codes.
MAX_PAGE_ID = (1 << 62) - 1

NODE = "node"
SUCCESSOR = "successor"
RANGE = "_range"

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


def encode_blocks(arcs: DataFrame, config: CompressConfig, links_version: int) -> DataFrame:
    """One ``ENCODED_BLOCK`` row per block of ``arcs_by_block`` output."""
    build = {
        S.LINKS_VERSION: int(links_version),
        S.BLOCK_SIZE: int(config.block_size),
        S.WINDOW_SIZE: config.window_size,
        S.MAX_REF_COUNT: config.max_ref_count,
        S.MIN_INTERVAL_LENGTH: config.min_interval_length,
        S.RESIDUAL_CODE: config.residual_code,
        S.BLOCK_MAX_ARCS: int(config.block_max_arcs),
    }

    def encode_group(pdf: pd.DataFrame) -> pd.DataFrame:
        return encode_block_frame(pdf, config, build)

    # grouped by (range, block): the range partitioning of the windows already clusters them
    return arcs.groupBy(RANGE, S.BLOCK_ID).applyInPandas(encode_group, schema=ENCODED_BLOCK)


def encode_block_frame(pdf: pd.DataFrame, config: CompressConfig, build: dict) -> pd.DataFrame:
    """Encode the arcs of one block (columns node, successor, block_id) into one row."""
    from linkgraph.compress import bits as B
    from linkgraph.compress.bv import BVParams, encode_block

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


def block_csr(nodes: np.ndarray, successors: np.ndarray, first_id: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of arcs (nodes[i] -> successors[i]) over nodes ``first_id ..`` up to the last node
    with an arc: rows sorted, repeated arcs stored once."""
    order = np.lexsort((successors, nodes))
    nodes, successors = nodes[order], successors[order]
    if len(nodes) > 1:
        distinct = np.ones(len(nodes), dtype=bool)
        distinct[1:] = (nodes[1:] != nodes[:-1]) | (successors[1:] != successors[:-1])
        nodes, successors = nodes[distinct], successors[distinct]
    local = nodes - first_id
    node_count = int(local[-1]) + 1 if len(local) else 0
    indptr = np.zeros(node_count + 1, dtype=np.int64)
    np.cumsum(np.bincount(local, minlength=node_count), out=indptr[1:])
    return indptr, successors


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
