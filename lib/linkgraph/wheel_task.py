"""Entry point of a packaged job run: the ``linkgraph-job`` console script of the wheel.

Databricks' ``python_wheel_task`` calls an entry point function and ignores what it returns, so
``linkgraph.cli.main``'s exit code would be lost there: this wrapper turns a non-zero code into
``SystemExit``, which fails the task run.  The arguments are those of ``linkgraph``
(``linkgraph-job ingest --input … --lake …``).  Exit 3 (``--if-present`` found no input for the
day) ends the task run in success: Databricks has no "skipped" outcome, and the tasks after it
change nothing on an unchanged lake.
"""

from __future__ import annotations

from linkgraph.cli import main as cli_main
from linkgraph.errors import EXIT_NO_INPUT


def main(argv: list[str] | None = None) -> None:
    code = cli_main(argv)
    if code == EXIT_NO_INPUT:   # --if-present, no input for the day: done, nothing changed
        return
    if code:
        raise SystemExit(code)
