"""The reward rounds' sparse product: per-block score vectors, not per-link joins.

Pages are numbered densely (``vertex_index``) and cut into blocks of ``block_size`` consecutive
vertices.  The neighbour shares are packed once per run: one row per (source block, destination
block, chunk of ``chunk_sources`` consecutive source pages) holding numpy arrays: the local
source of every share, its share, and its slot among the distinct local destinations the row
reaches (``targets``, sorted).  A row holds at most the shares of 2,048 pages into one block of
65,536, so a hub's neighbour list is spread over the destination blocks, never one row of all of
it.  The packed shares are cached and partitioned by source block.

A round is two co-grouped ``applyInPandas`` passes over B (blocks) score rows:

* ``spread``: each source block's scores ``s`` meet its share rows; each row yields the sparse
  partial ``Σ s[src] · share`` per target (``np.bincount`` over the slots), the rows' partials
  for one destination block are summed per target and sent there with the target list, once;
  the block's old scores travel along;
* ``combine``: a block sums the partials it receives into ``received`` (× α) and applies the
  round (``sent``, ``kept``, forgetting, the round's reward) to the whole vector, with the block's
  static columns (``sends``, ``reward_first``, ``reward_later``) packed once per run; it returns
  the new vector and the block's sums for the round's bookkeeping.

Bytes moved per round: the old scores (8 bytes a page) plus, per (source block, destination
page reached), 12 bytes (an int32 target and a float64 partial): at most ``8·n + 12·min(E, B·n)``
for E shares (two per linked page pair), and far less when links stay inside blocks.  The
per-link join shuffled every share (page_id, neighbour_id, share: 24 bytes before row overhead)
to meet its page's score, then the per-link products again before the sum, every round.  The
driver reads one row of B-block sums a round.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, DoubleType, IntegerType, StructField, StructType

from linkgraph.lake import schemas as S
from linkgraph.rank.graph import VERTEX, vertex_index

BLOCK, SB, DB = "block", "sb", "db"
BLOCK_SIZE = 65_536
CHUNK_SOURCES = 2_048

SHARE_BLOCK = StructType(
    [
        StructField(SB, IntegerType(), False),
        StructField(DB, IntegerType(), False),
        StructField("sources", BinaryType(), False),   # int32 local source per share
        StructField("slots", BinaryType(), False),     # int32 index into targets per share
        StructField("shares", BinaryType(), False),    # float64 share per share
        StructField("targets", BinaryType(), False),   # int32 sorted distinct local destinations
    ]
)
STATIC_BLOCK = StructType(
    [
        StructField(BLOCK, IntegerType(), False),
        StructField("sends", BinaryType(), False),         # bool[size]
        StructField("reward_first", BinaryType(), False),  # float64[size]
        StructField("reward_later", BinaryType(), False),  # float64[size]
        StructField("scores", BinaryType(), False),        # float64[size]: the start scores
    ]
)
PARTIAL = StructType(
    [
        StructField(BLOCK, IntegerType(), False),
        StructField("source", IntegerType(), False),  # the source block (the order of the sums)
        StructField("is_old", IntegerType(), False),
        StructField("targets", BinaryType(), True),   # int32 (None for the old scores)
        StructField("values", BinaryType(), False),   # float64
    ]
)
TOTALS = ("total_score_before", "total_sent", "total_received", "total_forgotten", "total_rewarded",
          "total_score", "largest_change")
SCORE_BLOCK = StructType(
    [StructField(BLOCK, IntegerType(), False), StructField("scores", BinaryType(), False)]
    + [StructField(name, DoubleType(), False) for name in TOTALS]
)
ROUND = "round"
ROUND_ROWS = StructType(
    [StructField(BLOCK, IntegerType(), False), StructField(ROUND, IntegerType(), False),
     StructField("scores", BinaryType(), True)]
    + [StructField(name, DoubleType(), False) for name in TOTALS]
)


def _f64(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.float64)


def _i32(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.int32)


def _block_of(column: str, block_size: int):
    return (F.col(column) / block_size).cast("int")


def _local(column: str, block_size: int):
    return (F.col(column) % block_size).cast("int")


class BlockRounds:
    """The packed run: ``index`` (page_id, vertex), ``static`` and ``shares`` blocks (cached),
    ``state`` the current score blocks.  Pages are those of both ``scores`` and ``vertices``;
    shares with an end outside them are left out (the reward step passes the same pages to both).
    """

    def __init__(self, scores: DataFrame, vertices: DataFrame, shares: DataFrame, block_size: int = BLOCK_SIZE,
                 chunk_sources: int = CHUNK_SOURCES) -> None:
        table = scores.select(S.PAGE_ID, F.col(S.SCORE).cast("double").alias(S.SCORE)).join(
            vertices, on=S.PAGE_ID, how="inner")
        index, n = vertex_index(table.select(S.PAGE_ID))
        self.index = index.persist(StorageLevel.MEMORY_AND_DISK)
        self.n, self.block_size = n, max(1, min(block_size, n))
        self.n_blocks = -(-n // self.block_size)
        spark = scores.sparkSession
        self.partitions = max(1, min(self.n_blocks, int(spark.conf.get("spark.sql.shuffle.partitions") or 1)))
        self._persisted: list[DataFrame] = [self.index]
        self.static = self._keep(self._static_blocks(table.join(self.index, on=S.PAGE_ID, how="inner")))
        # read once a round, in order: from local disk, leaving the heap to the rounds' sorts
        self.shares = self._keep(self._share_blocks(shares, chunk_sources), StorageLevel.DISK_ONLY)
        self.state = self.static.select(BLOCK, "scores")

    def _keep(self, df: DataFrame, level: StorageLevel = StorageLevel.MEMORY_AND_DISK) -> DataFrame:
        df = df.persist(level)
        self._persisted.append(df)
        return df

    def release(self) -> None:
        for df in self._persisted:
            df.unpersist()

    def _static_blocks(self, table: DataFrame) -> DataFrame:
        n, block_size = self.n, self.block_size
        rows = table.select(
            _block_of(VERTEX, block_size).alias(BLOCK), _local(VERTEX, block_size).alias("local"),
            S.SCORE, F.col("sends").cast("boolean").alias("sends"), "reward_first", "reward_later")

        def pack(pdf: pd.DataFrame) -> pd.DataFrame:
            block = int(pdf[BLOCK].iat[0])
            local = pdf["local"].to_numpy()
            columns = {}
            for name, dtype in (("sends", bool), ("reward_first", np.float64), ("reward_later", np.float64),
                                ("scores", np.float64)):
                values = np.zeros(max(0, min(block_size, n - block * block_size)), dtype=dtype)
                values[local] = pdf[S.SCORE if name == "scores" else name].to_numpy(dtype=dtype)
                columns[name] = [values.tobytes()]
            return pd.DataFrame({BLOCK: [block], **columns})

        return rows.groupBy(BLOCK).applyInPandas(pack, STATIC_BLOCK).repartition(self.partitions, BLOCK)

    def _share_blocks(self, shares: DataFrame, chunk_sources: int) -> DataFrame:
        block_size = self.block_size
        src = self.index.select(F.col(S.PAGE_ID), F.col(VERTEX).alias("_src"))
        dst = self.index.select(F.col(S.PAGE_ID).alias("neighbour_id"), F.col(VERTEX).alias("_dst"))
        entries = shares.join(src, on=S.PAGE_ID, how="inner").join(dst, on="neighbour_id", how="inner").select(
            _block_of("_src", block_size).alias(SB), _block_of("_dst", block_size).alias(DB),
            _local("_src", block_size).alias("s"), _local("_dst", block_size).alias("d"), F.col("share"),
        )

        def pack(pdf: pd.DataFrame) -> pd.DataFrame:
            # one group per (source block, destination block) pair, cut into rows of at most
            # chunk_sources consecutive source pages (a pandas group per row would cost a Python
            # call per few hundred shares)
            s, d, share = pdf["s"].to_numpy(), pdf["d"].to_numpy(), pdf["share"].to_numpy(dtype=np.float64)
            chunk = s // chunk_sources
            # the shares in one order whatever order the shuffle delivered them in: a round's sums
            # (bincount over them) are then the same bits on every run
            order = np.lexsort((share, d, s, chunk))
            s, d, share, chunk = s[order], d[order], share[order], chunk[order]
            starts = np.flatnonzero(np.r_[True, chunk[1:] != chunk[:-1]])
            rows = []
            for lo, hi in zip(starts, np.r_[starts[1:], len(s)], strict=True):
                targets, slots = np.unique(d[lo:hi], return_inverse=True)
                rows.append((s[lo:hi].astype(np.int32).tobytes(), slots.astype(np.int32).tobytes(),
                             share[lo:hi].tobytes(), targets.astype(np.int32).tobytes()))
            sources, slot_bytes, shares_bytes, target_bytes = zip(*rows, strict=True)
            return pd.DataFrame({SB: int(pdf[SB].iat[0]), DB: int(pdf[DB].iat[0]), "sources": sources,
                                 "slots": slot_bytes, "shares": shares_bytes, "targets": target_bytes})

        return entries.groupBy(SB, DB).applyInPandas(pack, SHARE_BLOCK).repartition(self.partitions, SB)

    def round(self, alpha: float, beta: float, first: bool) -> DataFrame:
        """The next state (score blocks with their round sums); not yet evaluated."""
        combine = _combiner(alpha, beta, "reward_first" if first else "reward_later")
        partials = self.shares.groupBy(SB).cogroup(self.state.groupBy(BLOCK)).applyInPandas(_spread, PARTIAL)
        return partials.groupBy(BLOCK).cogroup(self.static.groupBy(BLOCK)).applyInPandas(combine, SCORE_BLOCK)

    def rounds_in_one_task(self, alpha: float, beta: float, first_round: int, rounds: int) -> DataFrame:
        """Rounds ``first_round`` … ``first_round + rounds - 1`` of a run of one block, all in one
        task: one row per round (``ROUND``, the block's round sums, ``scores`` the vector after
        the round in the last row only, null in the others).  The same kernels as :meth:`round`
        (``_spread`` then the combine) on the same rows in the same order, so the scores and sums
        are those of as many :meth:`round` calls, bit for bit, without a job and a checkpoint per
        round.  The task holds what the one block's rounds hold anyway: its share rows and vectors.
        """
        assert self.n_blocks == 1, "the rounds of more than one block exchange partials between tasks"
        last = first_round + rounds - 1

        def run(key, share_pdf: pd.DataFrame, static_pdf: pd.DataFrame) -> pd.DataFrame:
            state = static_pdf[[BLOCK, "scores"]]
            out = []
            for round_no in range(first_round, last + 1):
                combine = _combiner(alpha, beta, "reward_first" if round_no == 1 else "reward_later")
                state = combine(key, _spread(key, share_pdf, state), static_pdf)
                out.append(state.assign(**{ROUND: round_no, "scores": state["scores"] if round_no == last else None}))
            return pd.concat(out, ignore_index=True)[ROUND_ROWS.fieldNames()]

        return self.shares.groupBy(SB).cogroup(self.static.groupBy(BLOCK)).applyInPandas(run, ROUND_ROWS)

    def scores(self) -> DataFrame:
        """(page_id, score) of the current state."""
        block_size = self.block_size

        def explode(batches):
            for pdf in batches:
                for block, buf in zip(pdf[BLOCK], pdf["scores"], strict=True):
                    values = _f64(buf)
                    vertex = np.arange(len(values), dtype=np.int64) + int(block) * block_size
                    yield pd.DataFrame({VERTEX: vertex, S.SCORE: values})

        exploded = self.state.select(BLOCK, "scores").mapInPandas(explode, f"{VERTEX} long, {S.SCORE} double")
        return exploded.join(self.index, on=VERTEX, how="inner").select(S.PAGE_ID, S.SCORE)


def _spread(key, share_pdf: pd.DataFrame, score_pdf: pd.DataFrame) -> pd.DataFrame:
    """A source block's round output: its old scores, and per destination block one sparse
    partial (the chunks' partials ``Σ s[src] · share`` summed per target)."""
    if score_pdf.empty:
        return pd.DataFrame({BLOCK: [], "source": [], "is_old": [], "targets": [], "values": []})
    scores = _f64(score_pdf["scores"].iat[0])
    source = int(score_pdf[BLOCK].iat[0])
    blocks, kinds = [source], [1]
    targets: list[bytes | None] = [None]
    values = [scores.tobytes()]
    by_block: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    # the rows in one order (destination block, first source; a pair's rows hold disjoint
    # sources), whatever order the cache returns them in, so the partials are summed in one order
    first_source = [int(_i32(sources)[0]) if len(sources) else -1 for sources in share_pdf["sources"]]
    share_pdf = share_pdf.assign(_first=first_source).sort_values([DB, "_first"], kind="stable")
    columns = (share_pdf[DB], share_pdf["sources"], share_pdf["slots"], share_pdf["shares"],
               share_pdf["targets"])
    for db, sources, slots, share, reached in zip(*columns, strict=True):
        weights = scores[_i32(sources)] * _f64(share)
        partial = np.bincount(_i32(slots), weights=weights, minlength=len(reached) // 4)
        by_block.setdefault(int(db), []).append((_i32(reached), partial))
    # one sparse partial per destination block: the chunks' partials summed per target
    for db, pieces in by_block.items():
        if len(pieces) == 1:
            reached_all, summed = pieces[0]
        else:
            reached_all, slot = np.unique(np.concatenate([t for t, _ in pieces]), return_inverse=True)
            summed = np.bincount(slot, weights=np.concatenate([v for _, v in pieces]),
                                 minlength=len(reached_all))
        blocks.append(db)
        kinds.append(0)
        targets.append(reached_all.astype(np.int32).tobytes())
        values.append(summed.tobytes())
    return pd.DataFrame({BLOCK: blocks, "source": [source] * len(blocks), "is_old": kinds, "targets": targets,
                         "values": values})


def _combiner(alpha: float, beta: float, reward_column: str):
    """The combine of a round: a block sums the partials it receives (× α) and applies the round
    (sent, kept, forgetting, the round's reward) to its whole vector."""

    def combine(key, parts: pd.DataFrame, static_pdf: pd.DataFrame) -> pd.DataFrame:
        block = int(static_pdf[BLOCK].iat[0])
        sends = np.frombuffer(static_pdf["sends"].iat[0], dtype=bool)
        reward = _f64(static_pdf[reward_column].iat[0])
        incoming = np.zeros(len(reward))
        old = None
        parts = parts.sort_values("source", kind="stable")   # summed in one order on every run
        for is_old, reached, values in zip(parts["is_old"], parts["targets"], parts["values"], strict=True):
            if is_old:
                old = _f64(values)
            else:
                np.add.at(incoming, _i32(reached), _f64(values))
        assert old is not None, "every block has its old scores among the parts"
        sent = np.where(sends, alpha * old, 0.0)
        received = alpha * incoming
        kept = old - sent + received
        new = (1.0 - beta) * kept + reward
        sums = (old.sum(), sent.sum(), received.sum(), (beta * kept).sum(), reward.sum(), new.sum(),
                float(np.abs(new - old).max()) if len(new) else 0.0)
        return pd.DataFrame({BLOCK: [block], "scores": [new.tobytes()],
                             **{name: [float(value)] for name, value in zip(TOTALS, sums, strict=True)}})

    return combine
