"""spark-submit entry point: ``linkgraph analyze`` (indexes, host/domain graphs, domain authority,
link farms, syndication networks, page flags).

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 jobs/analyze.py --conf conf/cluster.yaml
"""

import sys

from linkgraph.cli import main

if __name__ == "__main__":
    sys.exit(main(["analyze", *sys.argv[1:]]))
