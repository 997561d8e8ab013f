"""Does the vertex order decay with incremental ingests?  The same generated graph ingested at once
and in batches of random hosts, compared on the rank engine's intra-block link fraction and on
forward bits per link of the link codec.

    python bench/order.py [--edges N] [--batches 10] [--blocks 16]

Page ids are given in ``url_key`` order batch by batch, so after incremental ingests a host's
pages are spread over id ranges.  Three orders are measured: page ids of the graph ingested at
once (the reference), page ids after ``--batches`` ingests of random hosts, and the host order
(``linkgraph.ids.host_order``, what ``rank.graph.vertex_index`` uses) after those ingests.
``--blocks`` equal vertex ranges stand for the rank engine's blocks (at this size the engine
itself would use one); bits per link are those of ``compress.build.encode_blocks`` (forward
direction, default codec settings) over the links renumbered in each order.  Ends with
``order_decay_intra=X`` and ``order_decay_bits=Y``: host order after the batches over the
reference (1.00 = no decay).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph import schemas as S
from linkgraph.compress import build as CB
from linkgraph.config import CompressConfig, config_from_dict
from linkgraph.ids import host_order
from linkgraph.io.delta import Lake
from linkgraph.pipeline import ingest_step
from linkgraph.rows import one_row
from linkgraph.session import get_spark

sys.path.insert(0, str(Path(__file__).parent))
from ingest import generate_edges  # noqa: E402  (bench/ingest.py)

POSITION = "position"


def measure(links: DataFrame, order: DataFrame, n: int, blocks: int) -> tuple[float, float]:
    """(intra-block link fraction, forward bits per link) of ``links`` renumbered by ``order``
    (page_id, position)."""
    src = order.select(F.col(S.PAGE_ID).alias(S.SRC_ID), F.col(POSITION).alias("_src"))
    dst = order.select(F.col(S.PAGE_ID).alias(S.DST_ID), F.col(POSITION).alias("_dst"))
    arcs = (links.select(S.SRC_ID, S.DST_ID).join(src, on=S.SRC_ID, how="inner").join(dst, on=S.DST_ID, how="inner")
            .select(F.col("_src").alias(S.SRC_ID), F.col("_dst").alias(S.DST_ID)))
    block_size = -(-n // blocks)
    intra = one_row(arcs.agg(F.avg((F.expr(f"{S.SRC_ID} div {block_size}") ==
                                    F.expr(f"{S.DST_ID} div {block_size}")).cast("double"))))[0]
    config = CompressConfig()
    encoded = CB.encode_blocks(CB.arcs_by_block(arcs, S.FORWARD, config.block_size), config, 0)
    bits, count = one_row(encoded.agg(F.sum(S.BIT_LENGTH), F.sum(S.ARC_COUNT)))
    return float(intra), int(bits) / int(count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=200_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards)")
    args = parser.parse_args(argv)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-order-"))
    spark: SparkSession = get_spark(config_from_dict({"spark": {"master": "local[2]"}}).spark)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        source = str(workdir / "edges.parquet")
        generate_edges(spark, args.edges, source)
        edges = spark.read.parquet(source)
        host = F.regexp_extract("from_url", r"^http://www\.host(\d+)\.com/", 1)
        batch = F.abs(F.hash(host, F.lit(42))) % args.batches
        once = config_from_dict({"lake": {"path": str(workdir / "once")}})
        batched = config_from_dict({"lake": {"path": str(workdir / "batched")}})
        started = time.monotonic()
        ingest_step(spark, once, source, "parquet")
        print(f"ingested at once in {time.monotonic() - started:.0f} s", flush=True)
        started = time.monotonic()
        for b in range(args.batches):
            part = str(workdir / f"batch-{b}.parquet")
            edges.where(batch == b).write.mode("overwrite").parquet(part)
            ingest_step(spark, batched, part, "parquet")
        print(f"ingested in {args.batches} batches of random hosts in {time.monotonic() - started:.0f} s", flush=True)

        results = {}
        for name, config, ordering in (("at once, page ids", once, "ids"), ("batches, page ids", batched, "ids"),
                                       ("batches, host order", batched, "host")):
            lake = Lake(spark, config.lake)
            pages, links = lake.read(S.PAGES_TABLE), lake.read(S.LINKS_TABLE)
            n = pages.count()
            order = (host_order(pages, POSITION) if ordering == "host"
                     else pages.select(S.PAGE_ID, F.col(S.PAGE_ID).alias(POSITION)))
            results[name] = measure(links, order, n, args.blocks)
            print(f"{name:22s}: intra-block links {results[name][0]:.4f}, forward bits/link {results[name][1]:.3f} "
                  f"({n} pages, {args.blocks} blocks)", flush=True)
        reference, decayed, host = (results[k] for k in ("at once, page ids", "batches, page ids",
                                                          "batches, host order"))
        print(f"page-id order after batches / at once: intra {decayed[0] / reference[0]:.3f}, "
              f"bits {decayed[1] / reference[1]:.3f}")
        print(f"order_decay_intra={host[0] / reference[0]:.3f}")
        print(f"order_decay_bits={host[1] / reference[1]:.3f}")
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
