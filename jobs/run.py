"""spark-submit entry point: ``linkgraph run`` (every pipeline step on one input)."""

import sys

from linkgraph.cli import main

if __name__ == "__main__":
    sys.exit(main(["run", *sys.argv[1:]]))
