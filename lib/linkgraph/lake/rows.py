"""Small driver-side results: the one row of a global aggregate."""

from __future__ import annotations

from pyspark.sql import DataFrame, Row


def one_row(df: DataFrame) -> Row:
    """The single row of ``df`` (a global aggregation, or a Delta history of one commit).

    ``DataFrame.first()`` is typed ``Row | None``; a global aggregate always has its one row, so a
    missing one is a bug, reported as such."""
    row = df.first()
    if row is None:
        raise RuntimeError("expected one row (a global aggregate), got none")
    return row
