"""External authority inputs, normalised to [0, 1] per reversed domain or host.

* ``openpagerank``: CSV with a header holding ``domain`` and ``page_rank_decimal`` (Open PageRank's
  0-10 decimal rank, as its API and bulk files name it): authority = value / 10.
* ``ccrank``: Common Crawl host- or domain-rank files, tab-separated, header
  ``#harmonicc_pos #harmonicc_val #pr_pos #pr_val #host_rev`` (or ``#domain_rev``), names already
  reversed: authority = (N − harmonicc_pos) / (N − 1) with N the largest position in the file, so
  the best-ranked name is 1.0 and the last 0.0 (positions, not raw values, because harmonic
  centrality values are not comparable across graphs).

Values are read with safe casts (``try_cast``: an unreadable value is null, never an ANSI cast
error that stops the job).  A row with an empty name goes to ``rejects`` as ``NULL_FIELD``; one
whose value is not a finite number, an Open PageRank value outside 0-10, a ``#harmonicc_pos``
that is not a whole number from 1, or a ``#harmonicc_val`` that is not a number, as
``INVALID_VALUE`` with the column and the value in its detail.
"""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph.inputs.hosts import reversed_name
from linkgraph.inputs.readers import InputSchemaError
from linkgraph.lake import schemas as S
from linkgraph.lake.rows import one_row

AUTHORITY_FORMATS = ("openpagerank", "ccrank")
_VALUE, _NAME, _HC = "_value", "_name", "_hc"
_DETAIL_VALUE_CHARS = 100


class AuthorityRows(NamedTuple):
    """One authority file read: its ``valid`` rows in the ``external_authority`` schema (a name
    listed twice keeps its best value), its ``bad`` rows as (reason, detail, name, value), and
    ``checked``, every row with its ``reason`` (null when good), to count them."""

    valid: DataFrame
    bad: DataFrame
    checked: DataFrame

    def counts(self) -> tuple[int, int]:
        """(rows read, rows rejected), one aggregate."""
        row = one_row(self.checked.agg(F.count(F.lit(1)), F.count(S.REASON)))
        return int(row[0]), int(row[1])


def _shown(value: Column) -> Column:
    """A raw value for a reject's detail: quoted, at most ``_DETAIL_VALUE_CHARS`` characters."""
    return F.concat(F.lit("'"), F.substring(F.coalesce(value, F.lit("")), 1, _DETAIL_VALUE_CHARS), F.lit("'"))


def _not_finite(number: Column) -> Column:
    return number.isNull() | F.isnan(number) | number.isin(float("inf"), float("-inf"))


def _name_problem(name: Column) -> Column:
    return F.when(name.isNull() | (F.trim(name) == ""), F.struct(
        F.lit(S.Reason.NULL_FIELD).alias(S.REASON), F.lit("empty name").alias(S.DETAIL)))


def _value_problem(column: str, value: Column, why: str, bad: Column) -> Column:
    return F.when(bad, F.struct(F.lit(S.Reason.INVALID_VALUE).alias(S.REASON),
                                F.concat(F.lit(f"{column} "), _shown(value), F.lit(f" {why}")).alias(S.DETAIL)))


def _checked(named: DataFrame, problems: list[Column]) -> DataFrame:
    """``named`` with ``reason`` and ``detail`` of its first problem (both null for a good row)."""
    first = F.coalesce(*problems)
    return named.withColumn("_problem", first).select(
        "*", F.col("_problem")[S.REASON].alias(S.REASON), F.col("_problem")[S.DETAIL].alias(S.DETAIL)
    ).drop("_problem")


def _open_pagerank(spark: SparkSession, path: str) -> tuple[DataFrame, DataFrame]:
    """(checked rows, valid rows) of an Open PageRank CSV."""
    raw = spark.read.option("header", "true").csv(path)
    missing = [c for c in ("domain", "page_rank_decimal") if c not in raw.columns]
    if missing:
        raise InputSchemaError(f"Open PageRank file {path} is missing column {', '.join(missing)} "
                               f"(found: {', '.join(raw.columns)})")
    named = raw.select(F.col("domain").alias(_NAME), F.col("page_rank_decimal").alias(_VALUE))
    number = F.col(_VALUE).try_cast("double")
    checked = _checked(named, [
        _name_problem(F.col(_NAME)),
        _value_problem("page_rank_decimal", F.col(_VALUE), "is not a number", _not_finite(number)),
        _value_problem("page_rank_decimal", F.col(_VALUE), "is outside 0-10", ~number.between(0.0, 10.0)),
    ])
    valid = checked.where(F.col(S.REASON).isNull()).select(
        reversed_name(F.lower(F.trim(F.col(_NAME)))).alias(S.DOMAIN),
        (number / 10.0).alias(S.AUTHORITY),
        number.alias("raw_value"),
        F.lit("openpagerank").alias(S.SOURCE),
    )
    return checked, valid


def _ccrank(spark: SparkSession, path: str) -> tuple[DataFrame, DataFrame]:
    """(checked rows, valid rows) of a Common Crawl rank file."""
    raw = spark.read.option("sep", "\t").option("header", "true").csv(path)
    names = [c for c in ("#host_rev", "#domain_rev") if c in raw.columns]
    missing = [c for c in ("#harmonicc_pos", "#harmonicc_val") if c not in raw.columns]
    missing += [] if names else ["#host_rev"]
    if missing:
        raise InputSchemaError(f"Common Crawl rank file {path} is missing column {', '.join(missing)} "
                               f"(found: {', '.join(raw.columns)})")
    named = raw.select(F.col(f"`{names[0]}`").alias(_NAME), F.col("`#harmonicc_pos`").alias(_VALUE),
                       F.col("`#harmonicc_val`").alias(_HC))
    position, harmonic = F.col(_VALUE).try_cast("double"), F.col(_HC).try_cast("double")
    not_a_position = _not_finite(position) | (position < 1) | (position % 1 != 0)
    checked = _checked(named, [
        _name_problem(F.col(_NAME)),
        _value_problem("#harmonicc_pos", F.col(_VALUE), "is not a whole number from 1", not_a_position),
        _value_problem("#harmonicc_val", F.col(_HC), "is not a number", _not_finite(harmonic)),
    ])
    good = checked.where(F.col(S.REASON).isNull())
    last = one_row(good.agg(F.max(position)))[0] or 1.0
    valid = good.select(
        F.lower(F.trim(F.col(_NAME))).alias(S.DOMAIN),
        ((F.lit(last) - position) / F.lit(max(last - 1.0, 1.0))).alias(S.AUTHORITY),
        harmonic.alias("raw_value"),
        F.lit("ccrank").alias(S.SOURCE),
    )
    return checked, valid


def read_external_authority(spark: SparkSession, path: str, fmt: str) -> AuthorityRows:
    """The file's valid rows in the ``external_authority`` schema, its bad rows and all rows checked."""
    if fmt == "openpagerank":
        checked, valid = _open_pagerank(spark, path)
    elif fmt == "ccrank":
        checked, valid = _ccrank(spark, path)
    else:
        raise InputSchemaError(f"unknown authority format {fmt!r} (known: {', '.join(AUTHORITY_FORMATS)})")
    bad = checked.where(F.col(S.REASON).isNotNull()).select(S.REASON, S.DETAIL, F.col(_NAME), F.col(_VALUE))
    # a name listed twice keeps its best value, whatever the row order
    best = valid.groupBy(S.DOMAIN, S.SOURCE).agg(F.max(F.struct(S.AUTHORITY, "raw_value")).alias("_best"))
    return AuthorityRows(best.select(S.DOMAIN, "_best.*", S.SOURCE), bad, checked)
