"""spark-submit entry point: ``linkgraph pagerank`` (uniform PageRank over the lake's links).

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 jobs/pagerank.py \
        --conf conf/cluster.yaml --warm-start
"""

import sys

from linkgraph.cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(["pagerank", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
