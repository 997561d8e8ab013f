"""Does the vertex order decay with incremental ingests?  The same generated graph ingested at once
and in batches of random hosts, compared on the rank engine's intra-block link fraction and on
forward bits per link of the link codec.

    python bench/order.py [--edges N] [--batches 10] [--blocks 16] [--ids-only]

Page ids are given in ``url_key`` order batch by batch, so after incremental ingests a host's
pages are spread over id ranges.  Three orders are measured: page ids of the graph ingested at
once (the reference), page ids after ``--batches`` ingests of random hosts, and the orders the
project uses after those ingests: the host order of the rank engine (``linkgraph.lake.ids.host_order``,
what ``rank.graph.vertex_index`` uses) for the intra-block fraction, the compression's vertex order
(``compress.build.vertex_order``: the linked pages in the same order) for the bits.
``--blocks`` equal vertex ranges stand for the rank engine's blocks (at this size the engine
itself would use one); bits per link are those of ``compress.build.encode_blocks`` (forward
direction, default codec settings) over the links renumbered in each order.  Without
``--ids-only``, ``linkgraph compress`` then runs on both lakes and the bits are those of its
``links_compressed_forward`` tables.  Ends with ``order_decay_intra=X`` and ``order_decay_bits=Y``:
after the batches over the reference (1.00 = no decay).

``--ids-only`` skips the Delta writes: the batches go through ingest's own transforms
(``validate_edges``, ``split_duplicates``, ``batch_pages``, ``new_pages_with_ids``,
``links_with_ids``) with the pages numbered so far kept in memory, which gives the same page ids
as the ingests in a fraction of the time.
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

from linkgraph.compress import build as CB
from linkgraph.inputs import ingest as I
from linkgraph.inputs import readers
from linkgraph.lake import schemas as S
from linkgraph.lake.config import CompressConfig, IngestConfig, config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.lake.ids import host_order
from linkgraph.lake.rows import one_row
from linkgraph.lake.session import get_spark, use_checkpoint_dir
from linkgraph.steps import compress, ingest

sys.path.insert(0, str(Path(__file__).parent))
from ingest import generate_edges  # noqa: E402  (bench/ingest.py)


def measure(links: DataFrame, order: DataFrame, n: int, blocks: int) -> tuple[float, float]:
    """(intra-block link fraction, forward bits per link) of ``links`` renumbered by ``order``
    (page_id, position)."""
    arcs = CB.in_vertex_order(links, order)
    block_size = -(-n // blocks)
    intra = one_row(arcs.agg(F.avg((F.expr(f"{S.SRC_ID} div {block_size}") ==
                                    F.expr(f"{S.DST_ID} div {block_size}")).cast("double"))))[0]
    config = CompressConfig()
    encoded = CB.encode_blocks(CB.arcs_by_block(arcs, S.FORWARD, config.block_size), config, 0)
    bits, count = one_row(encoded.agg(F.sum(S.BIT_LENGTH), F.sum(S.ARC_COUNT)))
    return float(intra), int(bits) / int(count)


def report(once: tuple[DataFrame, DataFrame], batched: tuple[DataFrame, DataFrame], blocks: int) -> tuple[float, float]:
    """Prints the three orders' figures; returns (intra, bits) of the project's orders after the
    batches over the reference."""
    results = {}
    for name, (pages, links), ordering in (("at once, page ids", once, "ids"), ("batches, page ids", batched, "ids"),
                                            ("batches, host order", batched, "host")):
        n = pages.count()
        if ordering == "host":
            intra = measure(links, host_order(pages, CB.POSITION), n, blocks)[0]
            bits = measure(links, CB.vertex_order(links, pages), n, blocks)[1]
            results[name] = (intra, bits)
        else:
            results[name] = measure(links, pages.select(S.PAGE_ID, F.col(S.PAGE_ID).alias(CB.POSITION)), n, blocks)
        print(f"{name:22s}: intra-block links {results[name][0]:.4f}, forward bits/link {results[name][1]:.3f} "
              f"({n} pages, {blocks} blocks)", flush=True)
    reference, decayed, host = (results[k] for k in ("at once, page ids", "batches, page ids", "batches, host order"))
    print(f"page-id order after batches / at once: intra {decayed[0] / reference[0]:.3f}, "
          f"bits {decayed[1] / reference[1]:.3f}")
    return host[0] / reference[0], host[1] / reference[1]


def numbered_in_batches(spark: SparkSession, source: str, batches: int) -> dict[str, tuple[DataFrame, DataFrame]]:
    """(pages, links) with page ids as ingest gives them, at once and in ``batches`` batches of
    random source hosts, without writing tables."""
    raw = readers.read_edges(spark, source, "parquet")
    valid = I.validate_edges(raw, IngestConfig()).where(F.col(S.REASON).isNull())
    links, _ = I.split_duplicates(valid)
    links = links.localCheckpoint(eager=True)
    empty = spark.createDataFrame([], S.PAGES)
    at_once = I.new_pages_with_ids(I.batch_pages(links), empty, 0).localCheckpoint(eager=True)
    pages = empty
    batch = F.abs(F.hash(F.col(I.SRC_HOST), F.lit(42))) % batches
    for b in range(batches):
        numbered = pages.count()
        new = I.new_pages_with_ids(I.batch_pages(links.where(batch == b)), pages, numbered)
        pages = pages.unionByName(new).localCheckpoint(eager=True)
    return {"once": (at_once, I.links_with_ids(links, at_once)), "batched": (pages, I.links_with_ids(links, pages))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=200_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--ids-only", action="store_true", help="number pages as ingest does, without Delta writes")
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one, removed afterwards)")
    args = parser.parse_args(argv)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="linkgraph-bench-order-"))
    spark: SparkSession = get_spark(config_from_dict({"spark": {"master": "local[2]"}}).spark)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        source = str(workdir / "edges.parquet")
        generate_edges(spark, args.edges, source)
        if args.ids_only:
            use_checkpoint_dir(spark, str(workdir / "checkpoints"))
            graphs = numbered_in_batches(spark, source, args.batches)
            intra, bits = report(graphs["once"], graphs["batched"], args.blocks)
            print(f"order_decay_intra={intra:.3f}")
            print(f"order_decay_bits={bits:.3f}")
            return 0
        edges = spark.read.parquet(source)
        host = F.regexp_extract("from_url", r"^http://www\.host(\d+)\.com/", 1)
        batch = F.abs(F.hash(host, F.lit(42))) % args.batches
        once = config_from_dict({"lake": {"path": str(workdir / "once")}})
        batched = config_from_dict({"lake": {"path": str(workdir / "batched")}})
        started = time.monotonic()
        ingest.run(StepContext.create(spark, once), ingest.Params(source, "parquet"))
        print(f"ingested at once in {time.monotonic() - started:.0f} s", flush=True)
        started = time.monotonic()
        for b in range(args.batches):
            part = str(workdir / f"batch-{b}.parquet")
            edges.where(batch == b).write.mode("overwrite").parquet(part)
            ingest.run(StepContext.create(spark, batched), ingest.Params(part, "parquet"))
        print(f"ingested in {args.batches} batches of random hosts in {time.monotonic() - started:.0f} s", flush=True)

        graphs = {}
        for name, config in (("once", once), ("batched", batched)):
            lake = Lake(spark, config.lake)
            graphs[name] = (lake.read(S.PAGES_TABLE), lake.read(S.LINKS_TABLE))
        intra, _ = report(graphs["once"], graphs["batched"], args.blocks)
        forward = {}
        for name, config in (("once", once), ("batched", batched)):
            compressed = compress.run(StepContext.create(spark, config), compress.Params())
            forward[name] = compressed.bits_per_link(compressed.forward_bits)
            print(f"linkgraph compress, ingested {name}: {compressed.summary()}", flush=True)
        print(f"order_decay_intra={intra:.3f}")
        print(f"order_decay_bits={forward['batched'] / forward['once']:.3f}")
    finally:
        spark.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
