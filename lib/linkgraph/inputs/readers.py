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
* ``dat``: a "url graph" file as distributed for the Hollins crawl: a header line ``<nodes> <edges>``
  (skipped), node lines ``<id> <url>`` and edge lines ``<src_id> <dst_id>``; any other line is a
  malformed record.
* ``gml``: GML graphs whose node ``label`` is a URL or host name (the polblogs data set).  GML is
  not splittable, so this reader parses on the driver (``linkgraph.inputs.gml``: linear, capped at
  ``MAX_GML_BYTES`` decompressed); it is meant for small graphs.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from linkgraph.errors import InputSchemaError
from linkgraph.inputs.gml import MAX_GML_BYTES, GmlTooLarge, decompressed, parse_gml
from linkgraph.lake import schemas as S
from linkgraph.lake.paths import local_path, read_bytes

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
    """Edge records from a Hollins-style ``.dat`` file (a ``<nodes> <edges>[ <n>]`` header line,
    node lines ``<id> <url>``, then arc lines ``<src_id> <dst_id>``).

    The header is the first line of a file when it is two or three integers (a file without one starts
    with a node line); it is not a record.  Every other non-blank line with other than two
    tokens is a record of its own, a ``_corrupt_record`` (MALFORMED_RECORD): none is dropped."""
    tokens = F.split(F.trim(F.col("value")), r"\s+")
    text = (
        spark.read.text(path)
        .where(F.trim(F.col("value")) != "")
        .select("value", tokens.alias("t"), F.col("_metadata.file_path").alias("_file"),
                F.col("_metadata.file_block_start").alias("_block"),
                F.monotonically_increasing_id().alias("_line"))
    )
    # Within one task the lines of a file's first split come in order: the smallest id is line 1.
    first_lines = (text.where(F.col("_block") == 0).groupBy("_file").agg(F.min("_line").alias("_line"))
                   .withColumn("_first", F.lit(True)))
    numbers_only = F.array_join(F.col("t"), " ").rlike(r"^\d+( \d+){1,2}$")
    lines = (
        text.join(first_lines, on=["_file", "_line"], how="left")
        .where(~(F.coalesce(F.col("_first"), F.lit(False)) & numbers_only))
        .select("value", "t")
    )
    two = lines.where(F.size("t") == 2)
    is_edge = F.col("t")[1].rlike(r"^\d+$")
    nodes = two.where(~is_edge).select(F.col("t")[0].alias("id"), F.col("t")[1].alias("url"))
    arcs = two.where(is_edge).select(F.col("t")[0].alias("s"), F.col("t")[1].alias("d"))
    src = nodes.select(F.col("id").alias("s"), F.col("url").alias(S.FROM_URL))
    dst = nodes.select(F.col("id").alias("d"), F.col("url").alias(S.TO_URL))
    edges = arcs.join(src, on="s", how="left").join(dst, on="d", how="left")
    # An arc to an id without a node line keeps a null URL and is rejected as NULL_FIELD.
    malformed = lines.where(F.size("t") != 2).select(
        F.lit(None).cast("string").alias(S.FROM_URL), F.lit(None).cast("string").alias(S.TO_URL),
        F.col("value").alias(CORRUPT_RECORD))
    well_formed = edges.select(S.FROM_URL, S.TO_URL, F.lit(None).cast("string").alias(CORRUPT_RECORD))
    return to_raw_edges(well_formed.unionByName(malformed))


def read_gml(spark: SparkSession, path: str, max_bytes: int = MAX_GML_BYTES) -> DataFrame:
    """Edge records from a GML graph whose node labels are URLs or host names (parsed on the
    driver by ``linkgraph.inputs.gml``, bounded by ``max_bytes``); each problem of the file is one
    ``_corrupt_record`` row, a file over the cap is one."""
    local = local_path(path)
    if local is not None and Path(local).is_dir():
        raise InputSchemaError(f"input {path} is a directory: --format gml reads one file")
    try:
        graph = parse_gml(decompressed(read_bytes(spark, path), max_bytes).decode("utf-8", errors="replace"))
        rows: list[tuple[str | None, str | None, str | None]] = [(s, t, None) for s, t in graph.edges]
        rows += [(None, None, f"{path}: {problem}") for problem in graph.problems]
    except GmlTooLarge as exc:
        rows = [(None, None, f"{path}: {exc}")]
    schema = StructType([S.RAW_EDGE_RECORD[S.FROM_URL], S.RAW_EDGE_RECORD[S.TO_URL],
                         StructField(CORRUPT_RECORD, StringType(), True)])
    return to_raw_edges(spark.createDataFrame(rows, schema))


# --- crawl inputs: WARC/WAT files and Common Crawl graphs, read by linkgraph.inputs.crawl ---------------
CRAWL_FORMATS = ("warc", "wat", "ccgraph")
FORMATS = FORMATS + CRAWL_FORMATS
