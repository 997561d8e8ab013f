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
  not splittable, so this reader parses on the driver (``linkgraph.inputs.gml``: streamed, linear, capped
  at ``MAX_GML_BYTES`` decompressed); it is meant for small graphs.

Text inputs (jsonl, csv, arcs, dat) are read by ``linkgraph.inputs.textfiles`` in bounded memory: a line
over ``ingest.max_line_bytes`` and the rest of a file over ``ingest.max_file_bytes`` (decompressed)
are one ``_corrupt_record`` each, the other lines are kept.  Inputs are listed by
``linkgraph.lake.paths.list_input_files``: hidden files (``_``/``.``) and, unless
``ingest.follow_symlinks``, symbolic links are left out and counted (``EdgeInput.skipped``).
A JSON line with a lone surrogate escape (``\\udc00``) is a ``_corrupt_record``: Spark would store
it as ``?``, a different URL.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from linkgraph.errors import InputSchemaError
from linkgraph.inputs.gml import MAX_GML_BYTES, GmlTooLarge, parse_gml_stream
from linkgraph.inputs.textfiles import (
    LINE_FILE,
    LINE_FIRST,
    LINE_PROBLEM,
    LINE_VALUE,
    LINES_DDL,
    SPLITS_DDL,
    LineLimits,
    SymlinkRefused,
    check_readable_scheme,
    first_line,
    plan_splits,
    split_reader,
)
from linkgraph.lake import schemas as S
from linkgraph.lake.config import IngestConfig
from linkgraph.lake.paths import SKIPPED_SYMLINK, InputFiles, list_input_files, local_path

CORRUPT_RECORD = "_corrupt_record"
FORMATS: tuple[str, ...] = ("parquet", "jsonl", "csv", "arcs", "dat", "gml")
ARC_SRC = "src"
ARC_DST = "dst"
JSON_SCHEMA_PROBE_RECORDS = 1000
# a JSON \\uD800-\\uDBFF escape not followed by a \\uDC00-\\uDFFF one, or the latter alone (an
# escaped backslash before either is text, not an escape)
_HIGH, _LOW = r"\\u[dD][89abAB][0-9a-fA-F]{2}", r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
LONE_SURROGATE = rf"(?<!\\)(?:\\\\)*(?:{_HIGH}(?!{_LOW})|(?<!{_HIGH}){_LOW})"

RAW_WITH_CORRUPT = StructType([*S.RAW_EDGE_RECORD.fields, StructField(CORRUPT_RECORD, StringType(), True)])


@dataclass
class EdgeInput:
    """What a reader read: the records (``RAW_WITH_CORRUPT``, or arcs) and the files it left out."""

    frame: DataFrame
    skipped: dict[str, int] = field(default_factory=dict)


def line_limits(config: IngestConfig | None) -> LineLimits:
    config = config or IngestConfig()
    return LineLimits(config.max_line_bytes, config.max_file_bytes, config.follow_symlinks)


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


def _empty(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame([], RAW_WITH_CORRUPT)


def read_lines(spark: SparkSession, files: InputFiles, limits: LineLimits) -> DataFrame:
    """The non-blank lines of ``files`` (``file``, ``first``, ``value`` as a string holding the bytes
    as they are, ``problem``: why a line or the rest of a file was not kept, then ``value`` null)."""
    for path, _ in files.files[:1]:
        check_readable_scheme(path)
    splits = plan_splits(files.files, limits.max_file_bytes)
    tasks = spark.createDataFrame(splits, SPLITS_DDL)
    lines = tasks.mapInArrow(split_reader(limits), LINES_DDL)
    return lines.withColumn(LINE_VALUE, F.col(LINE_VALUE).cast("string"))


def _with_problems(lines: DataFrame, parse: Callable[[DataFrame], DataFrame]) -> DataFrame:
    """``parse`` of the lines that were read, and one ``_corrupt_record`` per problem line."""
    problems = lines.where(F.col(LINE_PROBLEM).isNotNull()).select(
        F.concat(F.col(LINE_FILE), F.lit(": "), F.col(LINE_PROBLEM)).alias(CORRUPT_RECORD))
    return to_raw_edges(parse(lines.where(F.col(LINE_PROBLEM).isNull()))).unionByName(to_raw_edges(problems))


def _text_input(spark: SparkSession, path: str | list[str], limits: LineLimits) -> tuple[InputFiles, DataFrame]:
    files = list_input_files(spark, path, limits.follow_symlinks)
    return files, read_lines(spark, files, limits)


# --- parquet --------------------------------------------------------------------------------------

def read_parquet(spark: SparkSession, path: str, limits: LineLimits) -> EdgeInput:
    """Parquet edge records: the listed files (symlinks and hidden files left out)."""
    files = list_input_files(spark, path, limits.follow_symlinks)
    if not files.files:
        return EdgeInput(_empty(spark), files.skipped)
    if SKIPPED_SYMLINK in files.skipped:  # Spark would follow them: the listed files only
        df = spark.read.option("basePath", path).parquet(*[p for p, _ in files.files])
    else:
        df = spark.read.parquet(path)
    check_required_columns(df.columns, path)
    return EdgeInput(to_raw_edges(df), files.skipped)


# --- jsonl ----------------------------------------------------------------------------------------

def _json_columns(lines: DataFrame) -> list[str] | None:
    """The keys of the objects among the first lines (None: no line at all)."""
    probe = lines.limit(JSON_SCHEMA_PROBE_RECORDS).select(F.json_object_keys(LINE_VALUE).alias("k")).collect()
    if not probe:
        return None
    return sorted({key for row in probe for key in (row["k"] or [])})


def _parse_json(lines: DataFrame) -> DataFrame:
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_RECORD}
    parsed = lines.select(F.col(LINE_VALUE), F.from_json(LINE_VALUE, RAW_WITH_CORRUPT, options).alias("j"))
    lone = F.col(LINE_VALUE).rlike(LONE_SURROGATE)
    return parsed.select(
        *[F.when(~lone, F.col(f"j.{f.name}")).alias(f.name) for f in S.RAW_EDGE_RECORD.fields],
        F.when(lone, F.concat(F.lit("a lone surrogate escape (not a character): "), F.col(LINE_VALUE)))
        .otherwise(F.col(f"j.{CORRUPT_RECORD}")).alias(CORRUPT_RECORD))


def read_jsonl(spark: SparkSession, path: str, limits: LineLimits) -> EdgeInput:
    """JSON lines; objects must carry the required fields (checked on the first 1,000 lines)."""
    files, lines = _text_input(spark, path, limits)
    if not files.files:
        return EdgeInput(_empty(spark), files.skipped)
    columns = _json_columns(lines.where(F.col(LINE_PROBLEM).isNull()))
    if columns:
        # JSON objects were found: they must carry the required fields.  When every probed line is
        # malformed there are no fields to check, and each line is a MALFORMED_RECORD.
        check_required_columns(columns, path)
    return EdgeInput(_with_problems(lines, _parse_json), files.skipped)


# --- csv ------------------------------------------------------------------------------------------

def _csv_header(files: InputFiles, limits: LineLimits, delimiter: str) -> list[str]:
    """The column names of the first file's first line (Spark's rule: a repeated name gets its index)."""
    line = first_line(files.files[0][0], limits)
    if line is None:
        return []
    names = next(csv.reader([line.decode("utf-8", errors="replace")], delimiter=delimiter), [])
    return [f"{name}{i}" if names.count(name) > 1 else name for i, name in enumerate(names)]


def _csv_parser(header: list[str], delimiter: str) -> Callable[[DataFrame], DataFrame]:
    ddl = ", ".join(f"`{name.replace('`', '``')}` STRING" for name in [*header, CORRUPT_RECORD])
    options = {"sep": delimiter, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_RECORD}

    def parse(lines: DataFrame) -> DataFrame:
        parsed = lines.where(~F.col(LINE_FIRST)).select(F.from_csv(F.col(LINE_VALUE), ddl, options).alias("c"))
        fields = {name: F.col("c").getField(name) for name in header}
        # Spark flags a row with too many or too few fields only when it parses every column; the
        # header's columns the job does not use would be pruned, so the corrupt-record column is
        # made to depend on them (a length is never negative, but the optimizer cannot tell).
        unused = [fields[c] for c in header if c not in RAW_WITH_CORRUPT.fieldNames()]
        corrupt = F.col("c").getField(CORRUPT_RECORD)
        if unused:
            corrupt = F.when(F.length(F.concat_ws("\u0001", *unused)) >= 0, corrupt)
        return parsed.select(*[v.alias(k) for k, v in fields.items() if k in RAW_WITH_CORRUPT.fieldNames()],
                             corrupt.alias(CORRUPT_RECORD))
    return parse


def read_csv(spark: SparkSession, path: str, limits: LineLimits, delimiter: str) -> EdgeInput:
    """CSV with a header line (each file's first line); the first file's header names the columns."""
    files, lines = _text_input(spark, path, limits)
    header = _csv_header(files, limits, delimiter) if files.files else []
    if not header:  # no file, or an empty one: not even a header line, no records
        return EdgeInput(_empty(spark), files.skipped)
    check_required_columns(header, path)
    return EdgeInput(_with_problems(lines, _csv_parser(header, delimiter)), files.skipped)


# --- arcs -----------------------------------------------------------------------------------------

def _parse_arcs(lines: DataFrame) -> DataFrame:
    text = lines.where(~F.col(LINE_VALUE).rlike(r"^\s*([#%].*)?$"))
    parts = F.split(F.trim(F.col(LINE_VALUE)), r"\s+")
    well_formed = (F.size(parts) == 2) & parts[0].rlike(r"^\d{1,18}$") & parts[1].rlike(r"^\d{1,18}$")
    return text.select(
        F.when(well_formed, parts[0].cast("long")).alias(ARC_SRC),
        F.when(well_formed, parts[1].cast("long")).alias(ARC_DST),
        F.when(~well_formed, F.col(LINE_VALUE)).alias(CORRUPT_RECORD),
    )


def read_arcs_input(spark: SparkSession, path: str | list[str], config: IngestConfig | None = None) -> EdgeInput:
    """Integer arcs ``(src, dst)`` plus ``_corrupt_record`` for lines that are not two integers
    (and for a line or file over the limits)."""
    files, lines = _text_input(spark, path, line_limits(config))
    problems = lines.where(F.col(LINE_PROBLEM).isNotNull()).select(
        F.lit(None).cast("long").alias(ARC_SRC), F.lit(None).cast("long").alias(ARC_DST),
        F.concat(F.col(LINE_FILE), F.lit(": "), F.col(LINE_PROBLEM)).alias(CORRUPT_RECORD))
    return EdgeInput(_parse_arcs(lines.where(F.col(LINE_PROBLEM).isNull())).unionByName(problems), files.skipped)


def read_arcs(spark: SparkSession, path: str | list[str], config: IngestConfig | None = None) -> DataFrame:
    """:func:`read_arcs_input`'s records."""
    return read_arcs_input(spark, path, config).frame


# --- dat ------------------------------------------------------------------------------------------

def _parse_dat(lines: DataFrame) -> DataFrame:
    tokens = F.split(F.trim(F.col(LINE_VALUE)), r"\s+")
    numbers_only = F.array_join(tokens, " ").rlike(r"^\d+( \d+){1,2}$")
    # the header: the first line of a file when it is two or three integers
    text = lines.where(~(F.col(LINE_FIRST) & numbers_only)).select(LINE_VALUE, tokens.alias("t"))
    two = text.where(F.size("t") == 2)
    is_edge = F.col("t")[1].rlike(r"^\d+$")
    nodes = two.where(~is_edge).select(F.col("t")[0].alias("id"), F.col("t")[1].alias("url"))
    arcs = two.where(is_edge).select(F.col("t")[0].alias("s"), F.col("t")[1].alias("d"))
    src = nodes.select(F.col("id").alias("s"), F.col("url").alias(S.FROM_URL))
    dst = nodes.select(F.col("id").alias("d"), F.col("url").alias(S.TO_URL))
    edges = arcs.join(src, on="s", how="left").join(dst, on="d", how="left")
    # An arc to an id without a node line keeps a null URL and is rejected as NULL_FIELD.
    malformed = text.where(F.size("t") != 2).select(F.col(LINE_VALUE).alias(CORRUPT_RECORD))
    return to_raw_edges(edges).unionByName(to_raw_edges(malformed))


def read_url_graph_dat(spark: SparkSession, path: str, limits: LineLimits | None = None) -> EdgeInput:
    """Edge records from a Hollins-style ``.dat`` file (a ``<nodes> <edges>[ <n>]`` header line,
    node lines ``<id> <url>``, then arc lines ``<src_id> <dst_id>``).

    The header is the first line of a file when it is two or three integers (a file without one starts
    with a node line); it is not a record.  Every other non-blank line with other than two
    tokens is a record of its own, a ``_corrupt_record`` (MALFORMED_RECORD): none is dropped."""
    files, lines = _text_input(spark, path, limits or LineLimits())
    return EdgeInput(_with_problems(lines, _parse_dat), files.skipped)


# --- gml ------------------------------------------------------------------------------------------

def read_gml(spark: SparkSession, path: str, limits: LineLimits | None = None,
             max_bytes: int = MAX_GML_BYTES) -> EdgeInput:
    """Edge records from a GML graph whose node labels are URLs or host names (streamed and parsed
    on the driver by ``linkgraph.inputs.gml``, bounded by ``max_bytes`` and ``ingest.max_file_bytes``);
    each problem of the file is one ``_corrupt_record`` row, a file over the cap is one."""
    limits = limits or LineLimits()
    files = list_input_files(spark, path, limits.follow_symlinks)
    local = local_path(path)
    if (local is not None and os.path.isdir(local)) or len(files.files) + sum(files.skipped.values()) > 1:
        raise InputSchemaError(f"input {path} is a directory: --format gml reads one file")
    rows: list[tuple[str | None, str | None, str | None]] = []
    for file, _ in files.files:
        try:
            graph = parse_gml_stream(file, limits, min(max_bytes, limits.max_file_bytes))
            rows += [(s, t, None) for s, t in graph.edges]
            rows += [(None, None, f"{path}: {problem}") for problem in graph.problems]
        except (GmlTooLarge, SymlinkRefused) as exc:
            rows.append((None, None, f"{path}: {exc}"))
    schema = StructType([S.RAW_EDGE_RECORD[S.FROM_URL], S.RAW_EDGE_RECORD[S.TO_URL],
                         StructField(CORRUPT_RECORD, StringType(), True)])
    return EdgeInput(to_raw_edges(spark.createDataFrame(rows, schema)), files.skipped)


# --- any format -----------------------------------------------------------------------------------

def read_input(spark: SparkSession, path: str, fmt: str, config: IngestConfig | None = None) -> EdgeInput:
    """Raw edge records from ``path`` in format ``fmt`` (one of parquet, jsonl, csv, dat, gml) and
    the files left out; ``config``: the limits and the CSV delimiter (default: the built-in ones)."""
    config = config or IngestConfig()
    limits = line_limits(config)
    readers: dict[str, Callable[[], EdgeInput]] = {
        "parquet": lambda: read_parquet(spark, path, limits),
        "jsonl": lambda: read_jsonl(spark, path, limits),
        "csv": lambda: read_csv(spark, path, limits, config.csv_delimiter),
        "dat": lambda: read_url_graph_dat(spark, path, limits),
        "gml": lambda: read_gml(spark, path, limits),
    }
    if fmt not in readers:
        raise InputSchemaError(f"unknown input format {fmt!r} (known: {', '.join(FORMATS)})")
    return readers[fmt]()


def read_edges(spark: SparkSession, path: str, fmt: str, csv_delimiter: str = ",",
               config: IngestConfig | None = None) -> DataFrame:
    """:func:`read_input`'s records (``csv_delimiter`` overrides the config's)."""
    config = config or IngestConfig()
    if csv_delimiter != config.csv_delimiter:
        config = IngestConfig(**{**config.__dict__, "csv_delimiter": csv_delimiter})
    return read_input(spark, path, fmt, config).frame


# --- crawl inputs: WARC/WAT files and Common Crawl graphs, read by linkgraph.inputs.crawl ---------------
CRAWL_FORMATS = ("warc", "wat", "ccgraph")
FORMATS = FORMATS + CRAWL_FORMATS
