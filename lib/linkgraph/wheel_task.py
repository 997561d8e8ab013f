"""Entry point of a packaged job run: the ``linkgraph-job`` console script of the wheel.

Databricks' ``python_wheel_task`` calls an entry point function and ignores what it returns, so
``linkgraph.cli.main``'s exit code would be lost there: this wrapper turns a non-zero code into
``SystemExit``, which fails the task run.  The arguments are those of ``linkgraph``
(``linkgraph-job ingest --input … --lake …``).
"""

from __future__ import annotations

from linkgraph.cli import main as cli_main


def main(argv: list[str] | None = None) -> None:
    code = cli_main(argv)
    if code:
        raise SystemExit(code)
