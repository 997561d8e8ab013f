"""External authority inputs, normalised to [0, 1] per reversed domain or host.

* ``openpagerank``: CSV with a header holding ``domain`` and ``page_rank_decimal`` (Open PageRank's
  0-10 decimal rank, as its API and bulk files name it): authority = value / 10.
* ``ccrank``: Common Crawl host- or domain-rank files, tab-separated, header
  ``#harmonicc_pos #harmonicc_val #pr_pos #pr_val #host_rev`` (or ``#domain_rev``), names already
  reversed: authority = (N − harmonicc_pos) / (N − 1) with N the largest position in the file, so
  the best-ranked name is 1.0 and the last 0.0 (positions, not raw values, because harmonic
  centrality values are not comparable across graphs).

Rows with an empty name, a non-numeric value or an Open PageRank value outside 0-10 go to
``rejects`` (``NULL_FIELD`` / ``INVALID_VALUE``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from linkgraph.inputs.hosts import reversed_name
from linkgraph.inputs.readers import InputSchemaError
from linkgraph.lake import schemas as S
from linkgraph.lake.rows import one_row

AUTHORITY_FORMATS = ("openpagerank", "ccrank")
_VALUE, _NAME = "_value", "_name"


def _problem(name: Column, value: Column, valid_range: tuple[float, float] | None) -> Column:
    numeric = value.cast("double")
    bad_range = F.lit(False) if valid_range is None else ~numeric.between(*valid_range)
    return (
        F.when(name.isNull() | (F.trim(name) == ""), F.lit(S.Reason.NULL_FIELD))
        .when(numeric.isNull() | F.isnan(numeric) | bad_range, F.lit(S.Reason.INVALID_VALUE))
    )


def read_external_authority(spark: SparkSession, path: str, fmt: str) -> tuple[DataFrame, DataFrame]:
    """(valid rows in the ``external_authority`` schema, bad rows as (reason, detail, name, value))."""
    if fmt == "openpagerank":
        raw = spark.read.option("header", "true").csv(path)
        missing = [c for c in ("domain", "page_rank_decimal") if c not in raw.columns]
        if missing:
            raise InputSchemaError(f"Open PageRank file {path} is missing column {', '.join(missing)} "
                                   f"(found: {', '.join(raw.columns)})")
        named = raw.select(F.col("domain").alias(_NAME), F.col("page_rank_decimal").alias(_VALUE))
        problem = _problem(F.col(_NAME), F.col(_VALUE), (0.0, 10.0))
        checked = named.withColumn(S.REASON, problem)
        valid = checked.where(F.col(S.REASON).isNull()).select(
            reversed_name(F.lower(F.trim(F.col(_NAME)))).alias(S.DOMAIN),
            (F.col(_VALUE).cast("double") / 10.0).alias(S.AUTHORITY),
            F.col(_VALUE).cast("double").alias("raw_value"),
            F.lit(fmt).alias(S.SOURCE),
        )
    elif fmt == "ccrank":
        raw = spark.read.option("sep", "\t").option("header", "true").csv(path)
        names = [c for c in ("#host_rev", "#domain_rev") if c in raw.columns]
        missing = [c for c in ("#harmonicc_pos", "#harmonicc_val") if c not in raw.columns]
        missing += [] if names else ["#host_rev"]
        if missing:
            raise InputSchemaError(f"Common Crawl rank file {path} is missing column {', '.join(missing)} "
                                   f"(found: {', '.join(raw.columns)})")
        named = raw.select(F.col(f"`{names[0]}`").alias(_NAME), F.col("`#harmonicc_pos`").alias(_VALUE),
                           F.col("`#harmonicc_val`").alias("_hc"))
        checked = named.withColumn(S.REASON, _problem(F.col(_NAME), F.col(_VALUE), None))
        good = checked.where(F.col(S.REASON).isNull())
        last = one_row(good.agg(F.max(F.col(_VALUE).cast("double"))))[0] or 1.0
        valid = good.select(
            F.lower(F.trim(F.col(_NAME))).alias(S.DOMAIN),
            ((F.lit(last) - F.col(_VALUE).cast("double")) / F.lit(max(last - 1.0, 1.0))).alias(S.AUTHORITY),
            F.col("_hc").cast("double").alias("raw_value"),
            F.lit(fmt).alias(S.SOURCE),
        )
    else:
        raise InputSchemaError(f"unknown authority format {fmt!r} (known: {', '.join(AUTHORITY_FORMATS)})")
    bad = checked.where(F.col(S.REASON).isNotNull()).select(
        S.REASON, F.concat(F.lit("authority value "), F.coalesce(F.col(_VALUE), F.lit("null"))).alias(S.DETAIL),
        F.col(_NAME), F.col(_VALUE))
    # a name listed twice keeps its best value, whatever the row order
    best = valid.groupBy(S.DOMAIN, S.SOURCE).agg(F.max(F.struct(S.AUTHORITY, "raw_value")).alias("_best"))
    return best.select(S.DOMAIN, "_best.*", S.SOURCE), bad
