"""``linkgraph export --level host|domain --format ccgraph|webgraph --output DIR``: the lake's host
or domain graph in Common Crawl's layout or as a WebGraph BVGraph, plus a Common Crawl rank file.

Written into ``DIR`` (created if missing), every text file gzip-compressed, tab-separated:

* ``vertices.txt.gz``: ``id<TAB>reversed name`` (domain graphs add ``<TAB>hosts``), ids dense from
  0 in the order of the reversed names, as Common Crawl publishes them
  (``linkgraph.graph.levelgraph``);
* ``ccgraph``: ``edges.txt.gz``: ``src_id<TAB>dst_id``, sorted, one line per linked pair of
  distinct nodes (what ``linkgraph ingest --format ccgraph`` reads back);
* ``webgraph``: ``<level>.graph`` / ``.offsets`` / ``.properties``, a BVGraph of the same ids
  (``compress`` parameters; blocks encoded in parallel, concatenated on the driver: the driver
  holds the compressed graph, about 3 bits per arc), beside the same ``vertices.txt.gz``;
* ``ranks.txt.gz``, when ``linkgraph centrality --level <level>`` has run: Common Crawl's rank
  columns ``#harmonicc_pos #harmonicc_val #pr_pos #pr_val #host_rev`` (``#domain_rev``), best
  harmonic centrality first (what ``import-authority --format ccrank`` reads).

Each text file is sorted in parallel (range partitions by its keys, one gzip member per task,
named in key order) and the members concatenated in order into one file (no driver collect).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from linkgraph.compress import bits as B
from linkgraph.compress.build import arcs_by_block, encode_blocks
from linkgraph.compress.bv import BVParams
from linkgraph.compress.graph import CompressedGraph
from linkgraph.compress.webgraph import write_bvgraph
from linkgraph.errors import UsageError
from linkgraph.graph.levelgraph import DST, NAME, NODE_ID, SRC, LevelGraph, level_graph, required_tables
from linkgraph.lake import paths
from linkgraph.lake import schemas as S
from linkgraph.lake import tables as T
from linkgraph.lake.context import Report, StepContext
from linkgraph.steps.registry import Step, option

log = logging.getLogger(__name__)

EXPORT_LEVELS = ("host", "domain")
EXPORT_FORMATS = ("ccgraph", "webgraph")
VERTICES_FILE, EDGES_FILE, RANKS_FILE = "vertices.txt.gz", "edges.txt.gz", "ranks.txt.gz"
RANK_HEADER = {"host": "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev",
               "domain": "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#domain_rev"}


@dataclass
class ExportReport(Report):
    level: str
    fmt: str
    output: str
    nodes: int = 0
    arcs: int = 0
    files: list[str] = field(default_factory=list)
    ranks: bool = False
    seconds: float = 0.0

    def summary(self) -> str:
        ranks = "" if self.ranks else " (no ranks file: run linkgraph centrality --level " + self.level + " first)"
        return (f"export: {self.level} graph as {self.fmt} to {self.output}: nodes={self.nodes} arcs={self.arcs} "
                f"files={','.join(self.files)}{ranks} in {self.seconds:.1f}s")


def _run(ctx: StepContext, level: str, fmt: str, output: str) -> ExportReport:
    if level not in EXPORT_LEVELS:
        raise UsageError(f"--level must be one of {', '.join(EXPORT_LEVELS)}, got {level!r}")
    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
    if fmt == "webgraph" and paths.local_path(output) is None:
        raise UsageError(f"--format webgraph writes local files only; --output {output} is not a local path")
    lake, spark = ctx.lake, ctx.spark
    nodes_table, links_table = required_tables(level)
    T.require(lake, nodes_table, links_table)
    graph = level_graph(nodes_table.read(lake), links_table.read(lake), level)
    report = ExportReport(level=level, fmt=fmt, output=output, nodes=graph.n)
    paths.make_directory(spark, output)
    _write_text(ctx, vertex_lines(graph), f"{output}/{VERTICES_FILE}")
    report.files.append(VERTICES_FILE)
    edges = graph.edges.persist()
    try:
        report.arcs = edges.count()
        if fmt == "ccgraph":
            _write_text(ctx, edge_lines(edges), f"{output}/{EDGES_FILE}")
            report.files.append(EDGES_FILE)
        else:
            write_webgraph(ctx, edges, graph.n, f"{output}/{level}")
            report.files += [f"{level}.graph", f"{level}.offsets", f"{level}.properties"]
    finally:
        edges.unpersist()
    table = T.CENTRALITY[level]
    if table.exists(lake):
        _write_text(ctx, rank_lines(table.read(lake), level), f"{output}/{RANKS_FILE}", header=RANK_HEADER[level])
        report.files.append(RANKS_FILE)
        report.ranks = True
    report.seconds = ctx.elapsed()
    log.info(report.summary())
    return report


def vertex_lines(graph: LevelGraph) -> DataFrame:
    """(id, line ``id<TAB>name[<TAB>hosts]``)."""
    columns = [F.col(NODE_ID).cast("string"), F.col(NAME)]
    if "hosts" in graph.vertices.columns:
        columns.append(F.col("hosts").cast("string"))
    return graph.vertices.select(F.col(NODE_ID).cast("long").alias("_k1"), F.lit(0).cast("long").alias("_k2"),
                                 F.concat_ws("\t", *columns).alias("value"))


def edge_lines(edges: DataFrame) -> DataFrame:
    """(src, dst, line ``src<TAB>dst``)."""
    return edges.select(F.col(SRC).cast("long").alias("_k1"), F.col(DST).cast("long").alias("_k2"),
                        F.concat_ws("\t", F.col(SRC).cast("string"), F.col(DST).cast("string")).alias("value"))


def rank_lines(centrality: DataFrame, level: str) -> DataFrame:
    """(harmonic position, line): Common Crawl rank-file lines (no header) of a centrality table."""
    name = S.REV_HOST if level == "host" else S.DOMAIN
    return centrality.select(F.col(S.RANK).cast("long").alias("_k1"), F.lit(0).cast("long").alias("_k2"), F.concat_ws(
        "\t", F.col(S.RANK).cast("string"), F.format_string("%.17g", F.col(S.HARMONIC)),
        F.col(S.PAGERANK_RANK).cast("string"), F.format_string("%.17g", F.col(S.PAGERANK_VALUE)), F.col(name),
    ).alias("value"))


def _write_text(ctx: StepContext, lines: DataFrame, target: str, header: str | None = None) -> None:
    """One gzip text file of ``lines`` (_k1, _k2, value) in key order, ``header`` first, sorted in
    parallel: range partitions by the keys, each sorted and written by its own task as one gzip
    member (``part-00000``, ``part-00001``, ... name them in key order), then the members
    concatenated in that order into ``target`` (concatenated gzip members are one gzip file)."""
    if header is not None:
        first = ctx.spark.createDataFrame([(-1, -1, header)], "_k1 long, _k2 long, value string")
        lines = first.unionByName(lines)
    tmp = target + ".parts"
    partitions = max(1, ctx.spark.sparkContext.defaultParallelism)
    (lines.repartitionByRange(partitions, "_k1", "_k2").sortWithinPartitions("_k1", "_k2").select("value")
     .write.mode("overwrite").option("compression", "gzip").text(tmp))
    concatenate_parts(ctx, tmp, target)


def concatenate_parts(ctx: StepContext, directory: str, target: str) -> None:
    """The ``part-*`` files of ``directory`` in name order as one file ``target`` (replaced), then
    ``directory`` removed: copied byte for byte, locally or inside the JVM (Hadoop FileSystem),
    never through Python objects."""
    local, local_target = paths.local_path(directory), paths.local_path(target)
    if local is not None and local_target is not None:
        parts = sorted(p for p in Path(local).iterdir() if p.name.startswith("part-"))
        with open(local_target, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    shutil.copyfileobj(handle, out, 1 << 20)
        shutil.rmtree(local)
        return
    jvm: Any = ctx.spark.sparkContext._jvm
    hadoop_conf = ctx.spark.sparkContext._jsc.hadoopConfiguration()
    source = jvm.org.apache.hadoop.fs.Path(directory)
    fs = source.getFileSystem(hadoop_conf)
    hadoop_parts = sorted((s.getPath() for s in fs.listStatus(source) if s.getPath().getName().startswith("part-")),
                          key=lambda part: part.getName())
    out = fs.create(jvm.org.apache.hadoop.fs.Path(target), True)
    try:
        for part in hadoop_parts:
            handle = fs.open(part)
            jvm.org.apache.hadoop.io.IOUtils.copyBytes(handle, out, hadoop_conf, False)
            handle.close()
    finally:
        out.close()
    fs.delete(source, True)


def write_webgraph(ctx: StepContext, edges: DataFrame, nodes: int, basename: str) -> dict[str, str]:
    """``edges`` (src, dst) as BVGraph ``basename.*`` with ``nodes`` nodes: blocks encoded by
    ``compress.build``, concatenated by ``compress.webgraph``."""
    cc = ctx.config.compress
    arcs = arcs_by_block(edges.select(F.col(SRC).alias(S.SRC_ID), F.col(DST).alias(S.DST_ID)), S.FORWARD,
                         cc.block_size, cc.block_max_arcs)
    encoded = encode_blocks(arcs, cc, 0).select(S.FIRST_ID, S.NODE_COUNT, S.ARC_COUNT, S.BIT_LENGTH, S.DATA, S.OFFSETS)
    blocks = [
        (r[S.FIRST_ID], r[S.NODE_COUNT], r[S.ARC_COUNT], r[S.BIT_LENGTH], bytes(r[S.DATA]),
         B.gamma_decode_gaps(B.bytes_to_words(bytes(r[S.OFFSETS])), r[S.NODE_COUNT] + 1))
        for r in encoded.toLocalIterator()
    ]
    params = BVParams(cc.window_size, cc.max_ref_count, cc.min_interval_length, cc.residual_code)
    return write_bvgraph(CompressedGraph.from_blocks(blocks, params), paths.local_path(basename) or basename, nodes)


# --- the step's declaration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Params:
    level: str = option("the graph to export", required=True, choices=EXPORT_LEVELS, default="")
    format: str = option("Common Crawl's layout or a WebGraph BVGraph", required=True, choices=EXPORT_FORMATS,
                         default="")
    output: str = option("directory to write (created if missing)", required=True, metavar="DIR", default="")


def run(ctx: StepContext, params: Params) -> ExportReport:
    return _run(ctx, params.level, params.format, params.output)


def _output_directory(params: Params) -> Params:
    local = paths.local_path(paths.to_uri(params.output))
    if local is not None and Path(local).is_file():
        raise UsageError(f"--output {params.output} is a file; give a directory")
    return replace(params, output=paths.to_uri(params.output))


STEP = Step(
    name="export", help="the host or domain graph in Common Crawl's layout or as a BVGraph, with a Common Crawl "
                        "rank file", params=Params, run=run,
    reads=(T.HOSTS, T.HOST_LINKS, T.DOMAINS, T.DOMAIN_LINKS, T.HOST_CENTRALITY, T.DOMAIN_CENTRALITY),
    after=("analyze",), prepare=_output_directory,
)
