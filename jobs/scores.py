"""spark-submit entry point: ``linkgraph scores`` (page flags, seed scores, scope, frontier).

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 jobs/scores.py --conf conf/cluster.yaml
"""

import sys

from linkgraph.cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(["scores", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
