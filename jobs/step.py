"""spark-submit entry point of every step: ``jobs/step.py STEP [flags]`` runs ``linkgraph STEP
[flags]`` in the session spark-submit started (any ``linkgraph`` command works: ``run``, ``frontier``).

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 --py-files dist/linkgraph-0.1.0-py-files.zip \\
        jobs/step.py ingest --conf conf/cluster.yaml --input s3a://crawl/edges/2026-11-29 --format parquet
"""

import sys

from linkgraph.cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
