"""spark-submit entry point: topic-sensitive / personalised PageRank, ``linkgraph pagerank`` with
``--topic TERMS``, ``--seeds URLS`` (each repeatable: one vector per flag) or ``--personalization TABLE``.

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 jobs/personalized_pagerank.py \
        --conf conf/cluster.yaml --topic jobs,career --topic hr,hrms

Without one of those flags it stops with exit code 2: uniform PageRank is ``jobs/pagerank.py``.
"""

import sys

from linkgraph.cli import EXIT_USAGE
from linkgraph.cli import main as cli_main

PERSONALIZATION_FLAGS = ("--topic", "--seeds", "--personalization")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not any(arg.split("=", 1)[0] in PERSONALIZATION_FLAGS for arg in argv):
        print("personalized_pagerank: error: pass --topic TERMS, --seeds URLS or --personalization TABLE "
              "(uniform PageRank is jobs/pagerank.py)", file=sys.stderr)
        return EXIT_USAGE
    return cli_main(["pagerank", *argv])


if __name__ == "__main__":
    sys.exit(main())
