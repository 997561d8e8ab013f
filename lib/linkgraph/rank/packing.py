"""The rank engine's inputs packed per block: links, dangling masks and teleport weights.

Links are weighted by their source's out-weight (:func:`transition_weights`: ``1/outdeg``, or
``w / Σ w`` with a ``weight`` column) and packed once per (source block, destination block) pair
(:func:`pack_edges`), hypersparse (DCSR: only the destination rows that receive a link) unless a
dense row pointer over every row of the destination block is smaller, in chunks of at most
``block_bytes``; a hub's in-links are cut across chunks like any other.  A chunk is the record
("E", destination block, rows, indptr, indices, weights): int32 local destination rows (empty:
dense), int32[rows + 1] row pointer, int32 local source per link, float64 weight per link.
Each block's dangling mask ("D", bool[size]) comes from its chunks (:func:`dangling_blocks`).

Teleport entries of a pass's vectors are packed per block as ("T", int32 vectors, int32 locals,
float64 weights) chunks (:func:`teleport_blocks`); a vector uniform over all pages is one marker
row at ``teleport.UNIFORM_VERTEX`` (:func:`uniform_vectors`), never n entries: the block's task
broadcasts 1/n (:func:`teleport_vector`).  Every RDD here is partitioned by block
(``blocks.by_block``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd
from pyspark import RDD
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

from linkgraph.lake.schemas import VECTOR_ID
from linkgraph.rank.blocks import BLOCK, LINK_BYTES, ROW_BYTES, BlockPlan, by_block
from linkgraph.rank.codec import f64, i32
from linkgraph.rank.graph import DST, SRC, VERTEX, WEIGHT, RankGraph
from linkgraph.rank.teleport import UNIFORM_VERTEX

SB, DB = "sb", "db"
EDGE_CHUNK = StructType(
    [
        StructField(SB, IntegerType(), False),
        StructField(DB, IntegerType(), False),
        StructField("rows", BinaryType(), False),     # int32 local destination rows (empty: all rows, dense)
        StructField("indptr", BinaryType(), False),   # int32[rows + 1]
        StructField("indices", BinaryType(), False),  # int32 local source index per link
        StructField("weights", BinaryType(), False),  # float64 1/outdeg(source) per link
    ]
)
TELEPORT_CHUNK = StructType(
    [
        StructField(BLOCK, IntegerType(), False),
        StructField("vectors", BinaryType(), False),  # int32 vector per entry
        StructField("locals", BinaryType(), False),   # int32 local vertex per entry
        StructField("weights", BinaryType(), False),  # float64 teleport weight per entry
    ]
)


def transition_weights(edges: DataFrame) -> DataFrame:
    """(src, dst, w): each link's share of its source's out-weight, ``1/outdeg`` when the edges
    carry no ``weight`` column, else ``weight / Σ weight`` over the source's links (weights > 0)."""
    link_weight = F.col(WEIGHT).cast("double") if WEIGHT in edges.columns else F.lit(1.0)
    weighted = edges.select(SRC, DST, link_weight.alias(WEIGHT))
    out_weight = weighted.groupBy(SRC).agg(F.sum(WEIGHT).alias("out_weight"))
    return weighted.join(out_weight, on=SRC, how="inner").select(
        SRC, DST, (F.col(WEIGHT) / F.col("out_weight")).alias("w"))


def pack_edges(graph: RankGraph, plan: BlockPlan, budget: int) -> RDD:
    """(source block, ("E", destination block, rows, indptr, indices, weights)) per chunk of at
    most ``budget`` bytes, partitioned by source block."""
    starts = np.asarray(plan.starts, dtype=np.int64)
    max_links = max(1, (budget - 8) // (LINK_BYTES + ROW_BYTES))

    def assign(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            src, dst = pdf[SRC].to_numpy(np.int64), pdf[DST].to_numpy(np.int64)
            sb = np.searchsorted(starts, src, side="right") - 1
            db = np.searchsorted(starts, dst, side="right") - 1
            yield pd.DataFrame({SB: sb.astype(np.int32), DB: db.astype(np.int32),
                                "s": (src - starts[sb]).astype(np.int32), "d": (dst - starts[db]).astype(np.int32),
                                "w": pdf["w"].to_numpy(np.float64)})

    def pack(pdf: pd.DataFrame) -> pd.DataFrame:
        sb, db = int(pdf[SB].iat[0]), int(pdf[DB].iat[0])
        size = int(starts[db + 1] - starts[db])
        s_all, d_all = pdf["s"].to_numpy(np.int32), pdf["d"].to_numpy(np.int32)
        order = np.lexsort((s_all, d_all))
        s_all, d_all, w_all = s_all[order], d_all[order], pdf["w"].to_numpy(np.float64)[order]
        out: dict[str, list] = {SB: [], DB: [], "rows": [], "indptr": [], "indices": [], "weights": []}
        for lo in range(0, len(order), max_links):
            d = d_all[lo:lo + max_links]
            rows, first = np.unique(d, return_index=True)
            if 2 * len(rows) < size:    # hypersparse is smaller than a row pointer over every row
                indptr = np.append(first, len(d)).astype(np.int32)
                row_bytes = rows.astype(np.int32).tobytes()
            else:
                indptr = np.zeros(size + 1, dtype=np.int32)
                np.cumsum(np.bincount(d, minlength=size), out=indptr[1:])
                row_bytes = b""
            out[SB].append(sb)
            out[DB].append(db)
            out["rows"].append(row_bytes)
            out["indptr"].append(indptr.tobytes())
            out["indices"].append(s_all[lo:lo + max_links].tobytes())
            out["weights"].append(w_all[lo:lo + max_links].tobytes())
        return pd.DataFrame(out)

    assigned_schema = f"{SB} int, {DB} int, s int, d int, w double"
    packed = (transition_weights(graph.edges).mapInPandas(assign, assigned_schema)
              .groupBy(SB, DB).applyInPandas(pack, EDGE_CHUNK))
    return by_block(packed.rdd.map(
        lambda row: (row[0], ("E", row[1], bytes(row[2]), bytes(row[3]), bytes(row[4]), bytes(row[5])))
    ), plan.n_blocks)


def dangling_blocks(edges: RDD, plan: BlockPlan) -> RDD:
    """(block, ("D", bool[size])) per block: vertices with no packed out-link."""
    starts = plan.starts

    def build(block: int, items: Iterable) -> Iterator:
        has_out = np.zeros(starts[block + 1] - starts[block], dtype=bool)
        for _, value in items:
            has_out[i32(value[4])] = True
        yield block, ("D", (~has_out).tobytes())

    return edges.mapPartitionsWithIndex(build, preservesPartitioning=True)


def teleport_blocks(teleport: DataFrame, plan: BlockPlan, first_vector: int, vectors: int, budget: int) -> RDD:
    """(block, ("T", vectors, locals, weights)) chunks of the teleport entries of vectors
    ``first_vector .. first_vector + vectors − 1`` (renumbered from 0), partitioned by block."""
    starts = np.asarray(plan.starts, dtype=np.int64)
    per_chunk = max(1, budget // 16)
    selected = teleport.where(F.col(VECTOR_ID).between(first_vector, first_vector + vectors - 1)
                              & (F.col(VERTEX) != UNIFORM_VERTEX)).select(
        F.col(VERTEX).cast("long").alias(VERTEX), (F.col(VECTOR_ID) - first_vector).cast("int").alias(VECTOR_ID),
        F.col("weight").cast("double").alias("weight"))

    def assign(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            vertex = pdf[VERTEX].to_numpy(np.int64)
            block = np.searchsorted(starts, vertex, side="right") - 1
            yield pd.DataFrame({BLOCK: block.astype(np.int32), "local": (vertex - starts[block]).astype(np.int32),
                                VECTOR_ID: pdf[VECTOR_ID].to_numpy(np.int32), "weight": pdf["weight"].to_numpy()})

    def pack(pdf: pd.DataFrame) -> pd.DataFrame:
        block = int(pdf[BLOCK].iat[0])
        vec, loc = pdf[VECTOR_ID].to_numpy(np.int32), pdf["local"].to_numpy(np.int32)
        wt = pdf["weight"].to_numpy(np.float64)
        chunks = range(0, len(pdf), per_chunk)
        return pd.DataFrame({
            BLOCK: [block] * len(chunks),
            "vectors": [vec[lo:lo + per_chunk].tobytes() for lo in chunks],
            "locals": [loc[lo:lo + per_chunk].tobytes() for lo in chunks],
            "weights": [wt[lo:lo + per_chunk].tobytes() for lo in chunks],
        })

    packed = (selected.mapInPandas(assign, f"{BLOCK} int, local int, {VECTOR_ID} int, weight double")
              .groupBy(BLOCK).applyInPandas(pack, TELEPORT_CHUNK))
    return by_block(packed.rdd.map(
        lambda row: (row[0], ("T", bytes(row[1]), bytes(row[2]), bytes(row[3])))
    ), plan.n_blocks)


def teleport_vector(entries: list | None, vectors: int, size: int, n: int,
                    uniform: np.ndarray | None = None) -> np.ndarray | float:
    """A block's teleport weights: float64[K, size] of its entries, 1/n in the rows of the vectors
    ``uniform`` marks; with no entries at all (every vector uniform) the scalar 1/n.  The uniform
    vector is implicit: numpy broadcasts 1/n, and no table or shuffle holds n entries of it."""
    if entries is None:
        return 1.0 / n
    v = np.zeros((vectors, size))
    for _, vec, loc, wt in entries:
        np.add.at(v, (i32(vec), i32(loc)), f64(wt))
    if uniform is not None and uniform.any():
        v[uniform] = 1.0 / n
    return v


def uniform_vectors(teleport: DataFrame, first_vector: int, vectors: int) -> np.ndarray:
    """bool[vectors]: which of vectors ``first_vector ..`` are uniform over all pages, marked in
    ``teleport`` by one row at ``teleport.UNIFORM_VERTEX`` (at most K rows reach the driver)."""
    mask = np.zeros(vectors, dtype=bool)
    marked = teleport.where((F.col(VERTEX) == UNIFORM_VERTEX)
                            & F.col(VECTOR_ID).between(first_vector, first_vector + vectors - 1))
    for row in marked.select(VECTOR_ID).distinct().collect():
        mask[row[0] - first_vector] = True
    return mask


def chunk_rows(value: tuple) -> int:
    """Destination rows an ("E", ...) chunk reaches."""
    if value[2]:
        return len(value[2]) // 4
    return int(np.count_nonzero(np.diff(i32(value[3]))))
