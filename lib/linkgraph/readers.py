"""Readers: turn an input path of a given format into raw edge records.

Every reader returns a DataFrame with the ``RAW_EDGE_RECORD`` columns (all strings, so a bad value
survives to be rejected with a reason) plus ``_corrupt_record``: the raw text of a record the format
parser could not read, else null.  ``arcs`` is different: it yields integer node ids
(``src``, ``dst``) that become page ids, see ``read_arcs``.

Formats:

* ``parquet`` / ``jsonl`` / ``csv``: the edge record's columns by name; ``rel`` may replace or
  accompany ``link_type``; unknown extra columns are ignored.  A missing required column is an
  ``InputSchemaError`` (for jsonl the first 1,000 records are inspected).
* ``arcs``: text lines ``src<TAB or space>dst`` (LAW/SNAP arc lists, gzip allowed); lines starting
  with ``#`` or ``%`` are comments.
* ``dat``: a "url graph" file as distributed for the Hollins crawl: a header line ``<nodes> <edges>``,
  node lines ``<id> <url>`` and edge lines ``<src_id> <dst_id>``.
* ``gml``: GML graphs whose node ``label`` is a URL or host name (the polblogs data set).  GML is
  not splittable, so this reader parses on the driver; it is meant for small graphs.
"""

from __future__ import annotations

import gzip
import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from linkgraph import schemas as S
from linkgraph.errors import InputSchemaError
from linkgraph.paths import read_bytes

CORRUPT_RECORD = "_corrupt_record"
FORMATS: tuple[str, ...] = ("parquet", "jsonl", "csv", "arcs", "dat", "gml")
ARC_SRC = "src"
ARC_DST = "dst"
JSON_SCHEMA_PROBE_RECORDS = 1000

RAW_WITH_CORRUPT = StructType([*S.RAW_EDGE_RECORD.fields, StructField(CORRUPT_RECORD, StringType(), True)])




def check_required_columns(columns: list[str], source: str) -> None:
    missing = [c for c in S.REQUIRED_EDGE_COLUMNS if c not in columns]
    if missing:
        raise InputSchemaError(
            f"input {source} is missing required column {', '.join(repr(m) for m in missing)} "
            f"(found: {', '.join(columns) or 'none'})"
        )


def to_raw_edges(df: DataFrame) -> DataFrame:
    """Project any frame holding edge-record columns onto ``RAW_WITH_CORRUPT`` (strings)."""
    present = set(df.columns)
    return df.select(
        *[
            (F.col(f.name).cast("string") if f.name in present else F.lit(None).cast("string")).alias(f.name)
            for f in RAW_WITH_CORRUPT.fields
        ]
    )


def read_edges(spark: SparkSession, path: str, fmt: str, csv_delimiter: str = ",") -> DataFrame:
    """Raw edge records from ``path`` in format ``fmt`` (one of parquet, jsonl, csv, dat, gml)."""
    if fmt == "parquet":
        df = spark.read.parquet(path)
        check_required_columns(df.columns, path)
        return to_raw_edges(df)
    if fmt == "jsonl":
        probe = spark.read.text(path).limit(JSON_SCHEMA_PROBE_RECORDS)
        columns = spark.read.json(probe.rdd.map(lambda row: row.value)).columns
        if not columns:  # an empty file (or only blank lines): no records, nothing to reject
            return spark.createDataFrame([], RAW_WITH_CORRUPT)
        if columns != [CORRUPT_RECORD]:
            # JSON objects were found: they must carry the required fields.  When every probed
            # line is malformed there are no fields to check, and each line is a MALFORMED_RECORD.
            check_required_columns([c for c in columns if c != CORRUPT_RECORD], path)
        df = (
            spark.read.schema(RAW_WITH_CORRUPT)
            .option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
            .json(path)
        )
        return to_raw_edges(df)
    if fmt == "csv":
        header = spark.read.option("header", True).option("sep", csv_delimiter).csv(path).columns
        if not header:  # an empty file: not even a header line, no records
            return spark.createDataFrame([], RAW_WITH_CORRUPT)
        check_required_columns(header, path)
        schema = StructType(
            [StructField(c, StringType(), True) for c in header] + [StructField(CORRUPT_RECORD, StringType(), True)]
        )
        df = (
            spark.read.schema(schema)
            .option("header", True)
            .option("sep", csv_delimiter)
            .option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
            .csv(path)
        )
        # Spark flags a row with too many or too few fields only when it parses every column; the
        # header's columns the job does not use would be pruned, so the corrupt-record column is
        # made to depend on them (a length is never negative, but the optimizer cannot tell).
        unused = [c for c in header if c not in RAW_WITH_CORRUPT.fieldNames()]
        if unused:
            parsed = F.length(F.concat_ws("\u0001", *[F.col(f"`{c}`") for c in unused])) >= 0
            df = df.withColumn(CORRUPT_RECORD, F.when(parsed, F.col(CORRUPT_RECORD)))
        return to_raw_edges(df)
    if fmt == "dat":
        return read_url_graph_dat(spark, path)
    if fmt == "gml":
        return read_gml(spark, path)
    raise InputSchemaError(f"unknown input format {fmt!r} (known: {', '.join(FORMATS)})")


def read_arcs(spark: SparkSession, path: str | list[str]) -> DataFrame:
    """Integer arcs ``(src, dst)`` plus ``_corrupt_record`` for lines that are not two integers."""
    lines = spark.read.text(path).where(~F.col("value").rlike(r"^\s*([#%].*)?$"))
    parts = F.split(F.trim(F.col("value")), r"\s+")
    well_formed = (F.size(parts) == 2) & parts[0].rlike(r"^\d{1,18}$") & parts[1].rlike(r"^\d{1,18}$")
    return lines.select(
        F.when(well_formed, parts[0].cast("long")).alias(ARC_SRC),
        F.when(well_formed, parts[1].cast("long")).alias(ARC_DST),
        F.when(~well_formed, F.col("value")).alias(CORRUPT_RECORD),
    )


def read_url_graph_dat(spark: SparkSession, path: str) -> DataFrame:
    """Edge records from a Hollins-style ``.dat`` file (node lines with URLs, then id pairs)."""
    tokens = F.split(F.trim(F.col("value")), r"\s+")
    lines = spark.read.text(path).select(tokens.alias("t")).where(F.size("t") == 2)
    is_edge = F.col("t")[1].rlike(r"^\d+$")
    nodes = lines.where(~is_edge).select(F.col("t")[0].alias("id"), F.col("t")[1].alias("url"))
    arcs = lines.where(is_edge).select(F.col("t")[0].alias("s"), F.col("t")[1].alias("d"))
    src = nodes.select(F.col("id").alias("s"), F.col("url").alias(S.FROM_URL))
    dst = nodes.select(F.col("id").alias("d"), F.col("url").alias(S.TO_URL))
    edges = arcs.join(src, on="s", how="left").join(dst, on="d", how="left")
    # An arc to an id without a node line keeps a null URL and is rejected as NULL_FIELD.
    return to_raw_edges(edges.select(S.FROM_URL, S.TO_URL))


_GML_NODE = re.compile(r'node\s*\[\s*(.*?)\s*\]', re.S)
_GML_EDGE = re.compile(r'edge\s*\[\s*(.*?)\s*\]', re.S)
_GML_ATTR = re.compile(r'(\w+)\s+("([^"]*)"|\S+)')


def _gml_attrs(body: str) -> dict[str, str]:
    return {m.group(1): (m.group(3) if m.group(3) is not None else m.group(2)) for m in _GML_ATTR.finditer(body)}


def _label_to_url(label: str) -> str:
    """polblogs labels are host names, optionally with a path: give them an http:// scheme."""
    label = label.strip()
    return label if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", label) else f"http://{label}"


def read_gml(spark: SparkSession, path: str) -> DataFrame:
    """Edge records from a GML graph whose node labels are URLs or host names."""
    raw = read_bytes(spark, path)
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", errors="replace")
    labels = {}
    for m in _GML_NODE.finditer(text):
        attrs = _gml_attrs(m.group(1))
        if "id" in attrs:
            labels[attrs["id"]] = _label_to_url(attrs["label"]) if "label" in attrs else None
    rows = []
    for m in _GML_EDGE.finditer(text):
        attrs = _gml_attrs(m.group(1))
        source, target = attrs.get("source"), attrs.get("target")
        rows.append((labels.get(source) if source is not None else None,
                     labels.get(target) if target is not None else None))
    edges = spark.createDataFrame(rows, StructType([S.RAW_EDGE_RECORD[S.FROM_URL], S.RAW_EDGE_RECORD[S.TO_URL]]))
    return to_raw_edges(edges)


# --- crawl inputs: WARC/WAT files and Common Crawl graphs, read by linkgraph.crawl ---------------
CRAWL_FORMATS = ("warc", "wat", "ccgraph")
FORMATS = FORMATS + CRAWL_FORMATS
