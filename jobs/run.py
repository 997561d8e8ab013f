"""spark-submit entry point: ``linkgraph run`` (every pipeline step on one input).

    spark-submit --master spark://127.0.0.1:7077 --packages io.delta:delta-spark_4.2_2.13:4.4.0 \
        --py-files dist/linkgraph-0.1.0-py-files.zip jobs/run.py \
        --conf conf/cluster.yaml --input /data/edges.jsonl --format jsonl --lake /data/lake
"""

import sys

from linkgraph.cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(["run", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
