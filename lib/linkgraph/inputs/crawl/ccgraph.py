"""Common Crawl's published host- or domain-level graphs (``linkgraph ingest --format ccgraph``;
what writes it is ``linkgraph.steps.ingest_crawl.run_ccgraph``).

Common Crawl publishes each graph as gzip text files: *vertices* ``id<TAB>rev_host`` (domain graphs
add ``<TAB>n_hosts``), with ids dense from 0 in the order of the reversed names, and *edges*
``from_id<TAB>to_id``.  ``--input`` is either a directory holding files or folders whose names
contain ``vertices`` and ``edges`` (as published: ``…-host-vertices.txt.gz``,
``…-host-edges.txt.gz``, or ``vertices/`` and ``edges/`` folders of parts), or the vertices file
itself, the edges file being the same name with ``vertices`` replaced by ``edges``.

Import, so that the ranking jobs run on the graph as published:

* every vertex becomes a page with ``page_id`` = its Common Crawl id (their order is already the
  lake's reversed-host order), ``host`` the name un-reversed, ``url`` ``http://<host>/``
  (canonicalised when possible, under the ``urls`` policy but for ``fold_www``), ``url_key``
  ``<rev_host>/`` and the registered domain by the Public Suffix List (null when the name has no
  known public suffix: the vertex is kept, as published).  ``n_hosts`` is not stored.
* every edge becomes a link; INTERNAL when both ends share a registered domain, else EXTERNAL; no
  anchor, context, position or dates (the published graph has none).
* rejected, with a reason: lines that are not ``id<TAB>name[<TAB>n]`` / ``id<TAB>id``
  (MALFORMED_RECORD), a repeated vertex id or edge (DUPLICATE_MERGED), an edge whose end is not a
  vertex (INVALID_VALUE), self-loops unless ``ingest.self_links: keep`` (SELF_LINK).

Like an arc list, such a graph needs a lake of its own: importing into a lake whose pages hold
other URLs at the same ids stops with an input error before anything is written.
"""

from __future__ import annotations

import dataclasses

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from linkgraph.inputs import ingest as I
from linkgraph.inputs import readers
from linkgraph.lake import paths
from linkgraph.lake import schemas as S
from linkgraph.lake.config import Config
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy

REV_HOST = "rev_host"


def ccgraph_paths(input_path: str, spark: SparkSession | None = None) -> tuple[list[str], list[str]]:
    """(vertices paths, edges paths) of a ccgraph input; see the module docstring.  Local paths
    are listed on the local disk, others through Hadoop's FileSystem (needs ``spark``)."""
    name = input_path.rstrip("/").rsplit("/", 1)[-1]
    if paths.is_directory(spark, input_path):
        entries = [p for p in paths.list_directory(spark, input_path)
                   if not p.rstrip("/").rsplit("/", 1)[-1].startswith((".", "_"))]
        vertices = [p for p in entries if "vertices" in p.rsplit("/", 1)[-1]]
        edges = [p for p in entries if "edges" in p.rsplit("/", 1)[-1]]
    elif "vertices" in name:
        vertices = [input_path]
        edges = [input_path[: len(input_path) - len(name)] + name.replace("vertices", "edges")]
        if not paths.exists(spark, edges[0]):
            raise readers.InputSchemaError(f"ccgraph edges file not found next to {input_path}: {edges[0]}")
    else:
        raise readers.InputSchemaError(
            f"ccgraph input {input_path} is neither a directory with vertices and edges files nor a vertices file"
        )
    if not vertices or not edges:
        raise readers.InputSchemaError(f"ccgraph input {input_path} needs both 'vertices' and 'edges' files")
    return vertices, edges


def read_vertices(spark: SparkSession, files: list[str]) -> DataFrame:
    """``page_id``, ``rev_host`` and ``_corrupt_record`` (the line, when it is not a vertex)."""
    lines = spark.read.text(files).where(~F.col("value").rlike(r"^\s*([#%].*)?$"))
    parts = F.split(F.col("value"), "\t")
    well_formed = (
        F.size(parts).isin(2, 3)
        & parts[0].rlike(r"^\d{1,18}$")
        & parts[1].rlike(r"^[^\s]+$")
        & ((F.size(parts) == 2) | parts[2].rlike(r"^\d{1,18}$"))
    )
    return lines.select(
        F.when(well_formed, parts[0].cast("long")).alias(S.PAGE_ID),
        F.when(well_formed, F.lower(parts[1])).alias(REV_HOST),
        F.when(~well_formed, F.col("value")).alias(readers.CORRUPT_RECORD),
    )


def vertex_pages(vertices: DataFrame, policy: UrlPolicy = DEFAULT_POLICY) -> DataFrame:
    """Valid vertices as rows of the ``pages`` schema, canonicalised under ``policy`` but for
    ``fold_www``: the graph's hosts are its vertices, none is merged into another."""
    host = F.array_join(F.reverse(F.split(F.col(REV_HOST), r"\.")), ".")
    built_url = F.concat(F.lit("http://"), host, F.lit("/"))
    canonical = I.canonical_url_udf(dataclasses.replace(policy, fold_www=False))(built_url)
    return (
        vertices.withColumn("_host", host)
        .withColumn("_canonical", canonical)
        .select(
            F.col(S.PAGE_ID),
            F.coalesce(F.col("_canonical.url"), F.concat(F.lit("http://"), F.col("_host"), F.lit("/"))).alias(S.URL),
            F.coalesce(F.col("_canonical.host"), F.col("_host")).alias(S.HOST),
            F.col("_canonical.registered_domain").alias(S.REGISTERED_DOMAIN),
            F.concat(F.col(REV_HOST), F.lit("/")).alias(S.URL_KEY),
            F.lit(None).cast("timestamp").alias(S.FIRST_SEEN_AT),
            F.lit(None).cast("timestamp").alias(S.LAST_SEEN_AT),
        )
    )


def _raw_reject(rows: DataFrame, line: F.Column) -> DataFrame:
    """Rejected lines in raw edge-record shape (the line, or the ids, in ``from_url``/``to_url``)."""
    return rows.select(
        line.alias(S.FROM_URL),
        *[F.lit(None).cast("string").alias(c) for c in (S.TO_URL, *S.OPTIONAL_EDGE_COLUMNS)],
        S.REASON, S.DETAIL,
    )


def split_vertices(vertices: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(valid unique vertices, rejected vertex lines with reason/detail)."""
    malformed = vertices.where(F.col(readers.CORRUPT_RECORD).isNotNull()).select(
        F.col(readers.CORRUPT_RECORD).alias("_line"),
        F.lit(S.Reason.MALFORMED_RECORD).alias(S.REASON),
        F.lit("vertices: not id<TAB>name[<TAB>n_hosts]").alias(S.DETAIL),
    )
    ranked = vertices.where(F.col(readers.CORRUPT_RECORD).isNull()).withColumn(
        "_rank", F.row_number().over(Window.partitionBy(S.PAGE_ID).orderBy(REV_HOST))
    )
    repeated = ranked.where(F.col("_rank") > 1).select(
        F.concat_ws("\t", F.col(S.PAGE_ID).cast("string"), F.col(REV_HOST)).alias("_line"),
        F.lit(S.Reason.DUPLICATE_MERGED).alias(S.REASON),
        F.lit("vertices: repeated vertex id, the first name in order kept").alias(S.DETAIL),
    )
    valid = ranked.where(F.col("_rank") == 1).select(S.PAGE_ID, REV_HOST)
    return valid, _raw_reject(malformed.unionByName(repeated), F.col("_line"))


def split_edges(arcs: DataFrame, vertex_ids: DataFrame, config: Config) -> tuple[DataFrame, DataFrame]:
    """(valid unique edges ``src``/``dst``, rejected edges in raw shape)."""
    checked = I.validate_arcs(arcs, config.ingest)
    valid, duplicates = I.split_arc_duplicates(checked.where(F.col(S.REASON).isNull()))
    ids = vertex_ids.select(F.col(S.PAGE_ID).alias("_id"), F.lit(True).alias("_known"))
    with_ends = (
        valid.join(ids.withColumnRenamed("_known", "_src_known"), F.col("src") == F.col("_id"), "left").drop("_id")
        .join(ids.withColumnRenamed("_known", "_dst_known"), F.col("dst") == F.col("_id"), "left").drop("_id")
    )
    dangling = F.col("_src_known").isNull() | F.col("_dst_known").isNull()
    unknown = (
        with_ends.where(dangling)
        .withColumn(S.REASON, F.lit(S.Reason.INVALID_VALUE))
        .withColumn(S.DETAIL, F.lit("edges: an end is not a vertex id"))
        .select(*checked.columns)
    )
    good = with_ends.where(~dangling).select("src", "dst")
    bad = checked.where(F.col(S.REASON).isNotNull()).unionByName(duplicates).unionByName(unknown)
    return good, I.arcs_as_raw(bad)


def edge_links(edges: DataFrame, pages: DataFrame) -> DataFrame:
    """Edges as rows of the ``links`` schema, typed INTERNAL/EXTERNAL by registered domain."""
    domains = pages.select(S.PAGE_ID, S.REGISTERED_DOMAIN)
    typed = (
        edges.join(domains.withColumnRenamed(S.PAGE_ID, "src").withColumnRenamed(S.REGISTERED_DOMAIN, "_sd"),
                   on="src", how="left")
        .join(domains.withColumnRenamed(S.PAGE_ID, "dst").withColumnRenamed(S.REGISTERED_DOMAIN, "_dd"),
              on="dst", how="left")
    )
    link_type = F.when(F.col("_sd") == F.col("_dd"), F.lit("INTERNAL")).otherwise(F.lit("EXTERNAL"))
    values = {S.SRC_ID: F.col("src"), S.DST_ID: F.col("dst"), S.LINK_TYPE: link_type}
    return typed.select(*[values.get(f.name, F.lit(None)).cast(f.dataType).alias(f.name) for f in S.LINKS.fields])
