"""Test support: ``python tests/crash_launch.py ARGS`` runs ``linkgraph ARGS`` with the crash hook
installed (``crash_hook.py``; ``LINKGRAPH_CRASH_AFTER_COMMITS`` in the environment says where it
stops).  Run as a file, so this directory is on ``sys.path`` and ``crash_hook`` imports."""

from __future__ import annotations

import sys

import crash_hook
from linkgraph.cli import main

if __name__ == "__main__":
    crash_hook.install()
    sys.exit(main(sys.argv[1:]))
