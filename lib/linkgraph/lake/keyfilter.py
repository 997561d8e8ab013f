"""Bloom filters of a batch's keys: the rows of a large table a batch can match, selected where the
table is read, before any shuffle.

A MERGE (or a join) of a small batch with a large table shuffles the rows of the table it reads;
with a test of ``xxhash64(<the table's key columns>)`` against a bloom filter of the batch's keys
in its condition, a row whose key is not the batch's is dropped in the scan instead.  A bloom
filter has no false negatives, so the condition is unchanged; its false positives (about
``fpp``) are what is shuffled beyond the matches.

Two forms:

* :func:`bloom_filter_condition`: the filter object itself in the predicate, for Delta MERGE
  conditions, which allow no subquery.  It is tested by the filter's own ``mightContainLong``
  (Catalyst's ``Invoke`` on an object literal), not by Spark's ``BloomFilterMightContain``, whose
  filter argument must be constant: Spark folds that argument to a binary literal before the
  MERGE runs, and Delta records the condition as text in the commit's ``commitInfo``, the
  literal as hex.  An object literal prints as its class and hash code, so the predicate Delta
  records (and the plan text) holds no bits of the filter.  The filter travels with every task of
  the MERGE, so its size is capped (``max_bytes``); a batch with more keys than the cap holds at
  ``fpp`` gets a filter with more false positives, never a larger one.
* :func:`bloom_filter_subquery`: the filter computed by a scalar subquery over the batch
  (Spark's ``BloomFilterMightContain``, what its runtime filters use), for DataFrame joins:
  nothing of its size reaches the driver or the plan text.

Both need the classic (JVM-backed) session; over Spark Connect they return None and the caller
runs without the filter (same result, more shuffled).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from py4j.java_gateway import JavaClass
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

log = logging.getLogger(__name__)

# A MERGE into a table smaller than this runs without a filter: shuffling the key rows of such a
# table costs less than the pass over the batch that builds the filter (a few seconds of fixed
# cost per MERGE on a small lake).  The incremental bench sets it to 0 (the cluster regime).
MIN_TABLE_BYTES = 64 << 20

FALSE_POSITIVE_RATE = 0.01
# 1 MiB: 8.4M bits, at 1% false positives about 870,000 keys; each task of a MERGE carries it
MAX_FILTER_BYTES = 1 << 20


def filter_bits(keys: int, fpp: float = FALSE_POSITIVE_RATE, max_bytes: int = MAX_FILTER_BYTES) -> int:
    """Bits of a bloom filter for ``keys`` keys at false-positive rate ``fpp``, at most
    ``8 * max_bytes`` (at least 64)."""
    optimal = math.ceil(-max(keys, 1) * math.log(fpp) / (math.log(2) ** 2))
    return max(64, min(optimal, 8 * max_bytes))


def _jvm_parts(frame: DataFrame) -> tuple[Any, Any, Any] | None:
    """(jvm, catalyst expressions package, ExpressionUtils) of a classic session whose Spark has
    the classes used here (4.x), else None."""
    jvm = getattr(frame.sparkSession, "_jvm", None)
    if jvm is None or not hasattr(frame, "_jdf"):
        return None
    expressions = jvm.org.apache.spark.sql.catalyst.expressions
    utils_class = getattr(jvm.org.apache.spark.sql.classic, "ExpressionUtils$")
    if not (isinstance(utils_class, JavaClass) and isinstance(expressions.BloomFilterMightContain, JavaClass)):
        log.warning("this Spark has no BloomFilterMightContain/ExpressionUtils: MERGEs run without key filters")
        return None
    return jvm, expressions, utils_class.__getattr__("MODULE$")


def _might_contain(parts: tuple[Any, Any, Any], bloom_filter: Column, target_columns: Sequence[str]) -> Column:
    _, expressions, utils = parts
    value = utils.expression(F.xxhash64(*[F.col(c) for c in target_columns])._jc)
    return Column(utils.column(expressions.BloomFilterMightContain(utils.expression(bloom_filter._jc), value)))


def bloom_filter_condition(source: DataFrame, source_columns: Sequence[str], target_columns: Sequence[str],
                           keys: int, max_bytes: int = MAX_FILTER_BYTES) -> Column | None:
    """A predicate on ``target_columns`` that holds for every row whose values equal those of
    ``source_columns`` in a row of ``source`` (and, falsely, for about 1% of the others when
    ``source`` has at most ``keys`` distinct keys and the filter fits ``max_bytes``).

    One aggregate over ``source`` builds the filter (each task a filter of the final size; the
    driver merges them); the predicate holds the filter object, whose text is its class and hash
    code (see the module's docstring).  None without a JVM session."""
    parts = _jvm_parts(source)
    if parts is None:
        return None
    jvm, expressions, utils = parts
    built = source._jdf.stat().bloomFilter(F.xxhash64(*[F.col(c) for c in source_columns])._jc,
                                           max(int(keys), 1), filter_bits(keys, max_bytes=max_bytes))
    log.debug("bloom filter of %d keys: %d bits, expected false positives %.4f", keys, built.bitSize(),
              built.expectedFpp())
    types = jvm.org.apache.spark.sql.types
    filter_class = jvm.java.lang.Class.forName("org.apache.spark.util.sketch.BloomFilter")
    held = expressions.Literal(built, types.ObjectType(filter_class))
    value = utils.expression(F.xxhash64(*[F.col(c) for c in target_columns])._jc)
    scala_list = jvm.scala.jdk.javaapi.CollectionConverters.asScala
    # Invoke(target, method, type, arguments, argument types, propagateNull, returnNullable, deterministic)
    test = expressions.objects.Invoke(held, "mightContainLong", types.DataTypes.BooleanType,
                                      scala_list([value]).toList(), scala_list([]).toList(), True, False, True)
    return Column(utils.column(test))


def bloom_filter_subquery(source: DataFrame, source_columns: Sequence[str], target_columns: Sequence[str],
                          keys: int) -> Column | None:
    """As :func:`bloom_filter_condition`, the filter computed by a scalar subquery over
    ``source`` when the query runs (Spark's ``bloom_filter_agg``): for a DataFrame filter or join,
    not a MERGE condition.  Its size follows ``keys`` (no cap: it never reaches the driver)."""
    parts = _jvm_parts(source)
    if parts is None:
        return None
    jvm = parts[0]
    column_object = getattr(jvm.org.apache.spark.sql, "Column$").__getattr__("MODULE$")
    arguments = [F.xxhash64(*[F.col(c) for c in source_columns]), F.lit(max(int(keys), 1)).cast("long"),
                 F.lit(filter_bits(keys, max_bytes=1 << 40)).cast("long")]
    scala_arguments = jvm.scala.jdk.javaapi.CollectionConverters.asScala([a._jc for a in arguments]).toList()
    aggregate = Column(column_object.internalFn("bloom_filter_agg", scala_arguments))
    return _might_contain(parts, source.agg(aggregate.alias("bloom_filter")).scalar(), target_columns)
