"""Graphs small enough for one task: the loops of ``scoring`` (hop depth) and ``domains``
(connected components) run every round inside one task on arrays when a graph has at most
``ONE_TASK_EDGES`` edges, instead of a job, a shuffle and checkpoints per round.

A task holds the edges as two arrays of node codes and a CSR matrix: about 50 bytes an edge in
its Python worker (~50 MB at the bound), whatever the node type (ids or names).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

ONE_TASK_EDGES = 1_000_000


def fits_one_task(edges: DataFrame, bound: int) -> bool:
    """True when ``edges`` has at most ``bound`` rows (a bound of 0: never).  One job that reads
    at most ``bound + 1`` rows, whatever the table's size."""
    return bound > 0 and edges.limit(bound + 1).count() <= bound


def arrow_table(batches: Iterator[Any]) -> Any:
    """One task's Arrow record batches as one table (None: no rows)."""
    received = list(batches)
    if not received:   # an empty partition sends no batch
        return None
    table = pa.Table.from_batches(received)
    return table if table.num_rows else None


def column_values(column: Any) -> Any:
    """An Arrow column's non-null values as a numpy array (ids as integers, names as objects)."""
    return column.drop_null().to_numpy(zero_copy_only=False)


def factorized(*arrays: Any) -> tuple[list[Any], Any]:
    """The node codes of each array (0..n-1, one code per distinct value over all of them) and
    the n distinct values, in order of first appearance."""
    codes, nodes = pd.factorize(np.concatenate(arrays))
    parts, start = [], 0
    for array in arrays:
        parts.append(codes[start:start + len(array)])
        start += len(array)
    return parts, nodes


def record_batches(schema: StructType, *columns: list[Any]) -> Iterator[Any]:
    """``columns`` (lists of values, None for null) as Arrow record batches of ``schema``."""
    arrow_schema = to_arrow_schema(schema)
    arrays = [pa.array(values, type=field.type) for values, field in zip(columns, arrow_schema, strict=True)]
    yield from pa.Table.from_arrays(arrays, schema=arrow_schema).to_batches()
