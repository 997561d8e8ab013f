"""Reward rounds: the block product (``linkgraph.rank.spread``) against a per-link join.

    python bench/reward_rounds.py [--pages 200K] [--links 1M] [--rounds 3] [--block-size 65536]

One local[2] session.  A random graph (70% of links within a "host" of 100 consecutive ids, 30% to
a random page, weights from link types and positions) and random scores and rewards; both round
implementations run ``--rounds`` rounds from the same start.  Prints per implementation the
seconds and the shuffle bytes written per round (Spark REST API, as bench/scale.py), then the
largest difference of any final score and of any round total.  The per-link join (every share
joined with its page's score, grouped by neighbour) exists only here, as the reference to compare with.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.session import get_spark
from linkgraph.rank import reward as R

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import ShuffleMeter, parse_size  # noqa: E402  (bench/scale.py's meter)


def per_link_rounds(scores: DataFrame, vertices: DataFrame, shares: DataFrame, params: R.SpreadParams,
                    rounds: int, after_round) -> tuple[DataFrame, list[tuple[float, ...]]]:
    """The rounds as a join of every share with its page's score, grouped by neighbour."""
    alpha, beta = float(params.send_fraction), float(params.forget_rate)
    shares = shares.persist(StorageLevel.MEMORY_AND_DISK)
    current = scores
    totals = []
    for round_no in range(1, rounds + 1):
        received = (shares.join(current, on=S.PAGE_ID, how="inner")
                    .groupBy(F.col(R.NEIGHBOUR_ID).alias(S.PAGE_ID))
                    .agg(F.sum(F.lit(alpha) * F.col(S.SCORE) * F.col(R.SHARE)).alias("received")))
        reward = F.col(R.REWARD_FIRST) if round_no == 1 else F.col(R.REWARD_LATER)
        step = (current.select(S.PAGE_ID, F.col(S.SCORE).alias("old")).join(vertices, on=S.PAGE_ID, how="inner")
                .join(received, on=S.PAGE_ID, how="left")
                .select(S.PAGE_ID, "old",
                        F.when(F.col(R.SENDS), F.lit(alpha) * F.col("old")).otherwise(0.0).alias("sent"),
                        F.coalesce("received", F.lit(0.0)).alias("received"), reward.alias("rewarded"))
                .withColumn("kept", F.col("old") - F.col("sent") + F.col("received"))
                .withColumn(S.SCORE, (1.0 - beta) * F.col("kept") + F.col("rewarded"))
                .localCheckpoint(eager=True))
        row = step.agg(F.sum("old"), F.sum("sent"), F.sum("received"), (F.sum("kept") * beta), F.sum("rewarded"),
                       F.sum(S.SCORE), F.max(F.abs(F.col(S.SCORE) - F.col("old")))).first()
        totals.append(tuple(float(v) for v in row))
        after_round()
        current = step.select(S.PAGE_ID, S.SCORE)
    shares.unpersist()
    return current, totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="200K")
    parser.add_argument("--links", default="1M")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--block-size", type=int, default=65536)
    parser.add_argument("--driver-memory", default="2g")
    args = parser.parse_args(argv)
    n, n_links = parse_size(args.pages), parse_size(args.links)
    workdir = Path(tempfile.mkdtemp(prefix="linkgraph-bench-reward-"))
    config = config_from_dict({"spark": {
        "master": "local[2]", "shuffle_partitions": 8, "driver_memory": args.driver_memory,
        "checkpoint_dir": str(workdir / "checkpoints"),
        "conf": {"spark.ui.enabled": "true", "spark.ui.showConsoleProgress": "false",
                 "spark.ui.retainedStages": "100000", "spark.ui.retainedJobs": "100000"}}})
    spark = get_spark(config.spark)
    spark.sparkContext.setLogLevel("ERROR")
    shuffle = ShuffleMeter(spark)
    print(f"reward rounds bench: pages={n:,} links={n_links:,} rounds={args.rounds} block_size={args.block_size:,} "
          f"local[2]; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    try:
        near = (F.floor(F.col("src") / 100) * 100 + F.pmod(F.xxhash64("id", F.lit(1)), F.lit(100))).cast("long")
        far = F.pmod(F.xxhash64("id", F.lit(2)), F.lit(n)).cast("long")
        links = (spark.range(n_links).withColumn("src", F.pmod(F.xxhash64("id", F.lit(0)), F.lit(n)).cast("long"))
                 .select(F.col("src").alias(S.SRC_ID),
                         F.least(F.when(F.rand(3) < 0.7, near).otherwise(far), F.lit(n - 1)).alias(S.DST_ID),
                         F.when(F.rand(4) < 0.1, "NOFOLLOW").otherwise("INTERNAL").alias(S.LINK_TYPE),
                         F.when(F.rand(5) < 0.2, "FOOTER").otherwise("CONTENT").alias(S.POSITION))
                 .dropDuplicates([S.SRC_ID, S.DST_ID]))
        shares = R.neighbour_shares(R.link_weights(links, {"NOFOLLOW": 0.0}, {"FOOTER": 0.5})).persist()
        pages = spark.range(n).select(F.col("id").alias(S.PAGE_ID))
        rewards = pages.select(S.PAGE_ID, (F.rand(6) * 5).alias(R.REWARD_FIRST), (F.rand(7) * 5).alias(R.REWARD_LATER))
        vertices = R.round_vertices(pages, shares, rewards).persist()
        start = pages.select(S.PAGE_ID, (F.rand(8) * 10).alias(S.SCORE)).persist()
        print(f"shares={shares.count():,} pages={vertices.count():,} start={start.count():,}", flush=True)
        params = R.SpreadParams(0.1, 0.1)

        def mib(values: list[int]) -> str:
            return " ".join(f"{v / 2**20:.1f}" for v in values)

        shuffle.mark()
        per_round: list[int] = []
        started = time.monotonic()
        marks = [time.monotonic()]

        def after_round() -> None:
            per_round.append(shuffle.mark())
            marks.append(time.monotonic())

        old, old_totals = per_link_rounds(start, vertices, shares, params, args.rounds, after_round)
        print(f"per-link join : {time.monotonic() - started:7.1f} s  shuffle per round (MiB): {mib(per_round)}",
              flush=True)
        seconds = [b - a for a, b in zip(marks, marks[1:], strict=False)]
        print("per-link join seconds per round: " + " ".join(f"{x:.1f}" for x in seconds), flush=True)
        per_round = []
        started = time.monotonic()
        new, history = R.run_rounds(start, vertices, shares, params, args.rounds, block_size=args.block_size,
                                    progress=lambda stat: per_round.append(shuffle.mark()))
        print(f"block product : {time.monotonic() - started:7.1f} s  shuffle per round (MiB): {mib(per_round)} "
              "(round 1 includes packing the shares)", flush=True)
        print("block product seconds per round: " + " ".join(f"{stat.seconds:.1f}" for stat in history), flush=True)

        diff = old.join(new.withColumnRenamed(S.SCORE, "new"), on=S.PAGE_ID, how="full").agg(
            F.max(F.abs(F.col(S.SCORE) - F.col("new"))), F.count("*")).first()
        totals = [abs(a - b) for stat, old_row in zip(history, old_totals, strict=True)
                  for a, b in zip((stat.total_score_before, stat.total_sent, stat.total_received,
                                   stat.total_forgotten, stat.total_rewarded, stat.total_score,
                                   stat.largest_change), old_row, strict=True)]
        print(f"largest score difference {diff[0]:.3g} over {diff[1]:,} pages; largest total difference "
              f"{max(totals):.3g}")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
