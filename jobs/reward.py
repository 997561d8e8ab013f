"""spark-submit entry point: ``linkgraph reward`` (reward-distribution ranking rounds and pruning).

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 jobs/reward.py \
        --conf conf/cluster.yaml --rounds 10 --signals s3a://crawl/page-signals/2026-11-29
"""

import sys

from linkgraph.cli import main

if __name__ == "__main__":
    sys.exit(main(["reward", *sys.argv[1:]]))
