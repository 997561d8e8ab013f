"""Bytes of the loops' reliable checkpoints, compressed (``spark.checkpoint.compress``, as the
session builder sets it) against uncompressed (Spark's default), on the same rows.

    python bench/checkpoints.py [--pages 1000000] [--hosts 2000]

Each setting runs in a child process of its own (the setting is read when the SparkContext
starts), local[2], with a checkpoint directory of its own, on generated pages (URLs of
``--hosts`` hosts, a few path shapes; the same rows for both settings) and, when present, the
real URLs of ``../shared/data/hollins-2004/hollins.dat``.  It checkpoints what the loops
checkpoint at scale:

* ``host_order``: the pages (page id, URL key) sorted by their URL key and numbered
  (``linkgraph.lake.ids.number_in_order``: the vertex order of the rank blocks and of compress);
* ``frontier``: (page id, depth) rows, as hop depth's ``visited`` (``linkgraph.lake.checkpoints.cut``).

Per setting and checkpoint one line of bytes and bytes per row; last lines
``<checkpoint>_compressed_vs_uncompressed=`` (bytes with compression over bytes without).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HOLLINS = Path(__file__).resolve().parents[2] / "shared" / "data" / "hollins-2004" / "hollins.dat"


def tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.name.endswith(".crc"))


def generated_pages(spark, pages: int, hosts: int):
    from pyspark.sql import functions as F

    host = F.concat(F.lit("https://www.site"), (F.col("id") % hosts).cast("string"), F.lit(".example.com"))
    path = F.element_at(F.array(F.lit("/news/"), F.lit("/blog/2026/"), F.lit("/products/item-"), F.lit("/tag/")),
                        (F.col("id") % 4 + 1).cast("int"))
    url = F.concat(host, path, (F.col("id") * 7919 % 1000003).cast("string"), F.lit(".html"))
    return spark.range(pages).select(url.alias("url"))


def real_pages(spark):
    if not HOLLINS.is_file():
        return None
    urls = [line.split(None, 1)[1].strip() for line in HOLLINS.read_text(errors="replace").splitlines()
            if line[:1].isdigit() and len(line.split(None, 1)) == 2 and "://" in line]
    return spark.createDataFrame([(u,) for u in urls], "url STRING") if urls else None


def measure(compress: bool, pages: int, hosts: int) -> dict[str, dict[str, int]]:
    """Child: checkpoint each input's numbering and frontier; bytes written per checkpoint."""
    from pyspark.sql import functions as F

    from linkgraph.inputs.ingest import url_key
    from linkgraph.lake import checkpoints, ids
    from linkgraph.lake.config import SparkConfig
    from linkgraph.lake.session import get_spark

    work = Path(tempfile.mkdtemp(prefix="linkgraph-bench-checkpoints-"))
    spark = get_spark(SparkConfig(master="local[2]", shuffle_partitions=8, checkpoint_dir=str(work),
                                  conf={"spark.checkpoint.compress": str(compress).lower()}))
    found: dict[str, dict[str, int]] = {}
    inputs = {"generated": generated_pages(spark, pages, hosts), "hollins": real_pages(spark)}
    for name, urls in inputs.items():
        if urls is None:
            continue
        rows = urls.select(F.monotonically_increasing_id().alias("page_id"), "url",
                           url_key(F.col("url")).alias("url_key")).cache()
        count = rows.count()
        before = tree_bytes(work)
        ids.host_order(rows).count()
        found[f"{name}_host_order"] = {"rows": count, "bytes": tree_bytes(work) - before}
        before = tree_bytes(work)
        frontier = checkpoints.cut(rows.select(F.col("page_id").alias("node"),
                                               (F.col("page_id") % 7).cast("int").alias("depth")))
        frontier.count()
        found[f"{name}_frontier"] = {"rows": count, "bytes": tree_bytes(work) - before}
        rows.unpersist()
    spark.stop()
    shutil.rmtree(work, ignore_errors=True)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--child", choices=("on", "off"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child == "on", args.pages, args.hosts)))
        return 0
    results = {}
    for setting in ("off", "on"):
        child = subprocess.run([sys.executable, __file__, "--child", setting, "--pages", str(args.pages),
                                "--hosts", str(args.hosts)], capture_output=True, text=True, check=True)
        results[setting] = json.loads(child.stdout.strip().splitlines()[-1])
        for checkpoint, figures in results[setting].items():
            print(f"compress={setting} {checkpoint}: rows={figures['rows']} bytes={figures['bytes']} "
                  f"bytes_per_row={figures['bytes'] / max(1, figures['rows']):.1f}", flush=True)
    for checkpoint in results["on"]:
        ratio = results["on"][checkpoint]["bytes"] / max(1, results["off"][checkpoint]["bytes"])
        print(f"{checkpoint}_compressed_vs_uncompressed={ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
