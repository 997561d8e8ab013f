"""spark-submit entry point: ``linkgraph ingest``.

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 jobs/ingest.py \
        --conf conf/cluster.yaml --input s3a://crawl/edges/2026-11-29 --format parquet
"""

import sys

from linkgraph.cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(["ingest", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
