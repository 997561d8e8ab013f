"""``linkgraph`` command line.

Exit codes: 0 success; 2 a ``linkgraph.errors.UsageError`` (config, input, missing table, flags: nothing
written) or a missing Hadoop FileSystem; 1 anything else.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from linkgraph import __version__, paths
from linkgraph import names as N
from linkgraph.config import TINY_DATA_SPARK_CONF, Config, load_config
from linkgraph.errors import ConflictRetriesExhausted, UnreadableDataError, UsageError
from linkgraph.names import INPUT_FORMATS as FORMATS  # = linkgraph.readers.FORMATS, without importing pyspark

if TYPE_CHECKING:
    from linkgraph.steps.context import StepContext

log = logging.getLogger("linkgraph")

EXIT_USAGE = 2
_RUN_ID = re.compile(r"[A-Za-z0-9._:+-]{1,100}")

_EXTENSION_FORMATS = {
    ".parquet": "parquet", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
    ".tsv": "arcs", ".arcs": "arcs", ".txt": "arcs", ".dat": "dat", ".gml": "gml",
}
# --- crawl inputs ---
_EXTENSION_FORMATS.update({".warc": "warc", ".wat": "wat"})


def guess_format(path: str) -> str:
    """The input format from ``path``'s extension; a local directory is parquet."""
    local = paths.local_path(path)
    if local is not None and Path(local).is_dir():
        return "parquet"
    suffixes = [s for s in Path(path.rstrip("/").rsplit("/", 1)[-1]).suffixes if s != ".gz"]
    if suffixes and suffixes[-1] in _EXTENSION_FORMATS:
        return _EXTENSION_FORMATS[suffixes[-1]]
    raise UsageError(f"cannot tell the format of {path}; pass --format ({'|'.join(FORMATS)})")


class _ArgumentError(UsageError):
    """A command line argparse refused; its message already names the command."""


class _Parser(argparse.ArgumentParser):
    """argparse with errors raised, so that ``main`` prints them as one line and returns 2
    (argparse itself prints the usage block and exits the process)."""

    def error(self, message: str) -> NoReturn:
        raise _ArgumentError(f"{self.prog}: error: {message} (see {self.prog} --help)")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--conf", help="job config YAML (default: the built-in local defaults, as in conf/local.yaml)")
    parser.add_argument("--lake", help="lake directory holding the Delta tables (overrides lake.path)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="linkgraph", description="Link-graph analytics on Spark + Delta Lake")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="upsert crawl edge records into pages/links/rejects")
    ingest.add_argument("--input", required=True, help="file or directory of edge records")
    ingest.add_argument("--format", choices=FORMATS, help="input format (default: from the file extension)")
    _common(ingest)

    rank = sub.add_parser("pagerank", help="PageRank / topic-sensitive PageRank over the lake's links")
    rank.add_argument("--engine", choices=("fast", "graphframes", "naive"), help="default: rank.engine (fast)")
    group = rank.add_mutually_exclusive_group()
    group.add_argument("--topic", action="append", metavar="TERMS",
                       help="comma-separated topic terms; repeat for several vectors computed in one pass")
    group.add_argument("--seeds", action="append", metavar="URLS",
                       help="comma-separated seed URLs; repeat for several vectors computed in one pass")
    group.add_argument("--personalization", metavar="TABLE", help="lake table of (page_id, weight[, vector_id])")
    rank.add_argument("--tol", type=float, help="stop when the L1 change is below this (default 1e-6)")
    rank.add_argument("--max-iter", type=int, help="iteration cap (default 100)")
    rank.add_argument("--warm-start", action="store_true", help="start from the previous run's ranks")
    _common(rank)

    analyze = sub.add_parser("analyze", help="indexes, host/domain graphs, domain authority, link farms, "
                                             "syndication networks and page flags")
    _common(analyze)

    sitemaps = sub.add_parser("ingest-sitemaps", help="upsert sitemap entries (XML, gzipped, indexes) into `sitemaps`")
    sitemaps.add_argument("--input", required=True, help="sitemap file or directory of them")
    _common(sitemaps)

    authority = sub.add_parser("import-authority", help="import external domain authority into `external_authority`")
    authority.add_argument("--input", required=True, help="Open PageRank CSV or Common Crawl rank file")
    authority.add_argument("--format", required=True, choices=("openpagerank", "ccrank"))
    _common(authority)

    scores = sub.add_parser("scores", help="page flags, seed scores, scope decisions and the crawl frontier")
    scores.add_argument("--seeds", metavar="URLS", help="comma-separated seed URLs (default: scores.seeds)")
    _common(scores)

    frontier = sub.add_parser("frontier", help="export the top of the crawl frontier")
    frontier.add_argument("--top", type=int, default=100, help="number of URLs (default 100)")
    frontier.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    frontier.add_argument("--output", help="file to write (default: standard output)")
    _common(frontier)

    links = sub.add_parser("links", help="one page's out-links, in-links or incoming anchors, from the indexes")
    links.add_argument("direction", choices=("out", "in", "anchors"))
    links.add_argument("url", help="page URL (canonicalised like ingest)")
    links.add_argument("--limit", type=int, default=1000, help="print at most this many rows (default 1000)")
    links.add_argument("--compressed", action="store_true",
                       help="answer out/in from the compressed graph (run `linkgraph compress` first)")
    _common(links)

    reward = sub.add_parser("reward", help="reward-distribution ranking for focused crawls (scores, feeds, pruning)")
    reward.add_argument("--rounds", type=int, metavar="K", help="distribution rounds (default: reward.rounds, 10)")
    reward.add_argument("--signals", metavar="PATH", help="page-signal JSON lines to merge into page_signals first")
    reward.add_argument("--seeds", action="append", metavar="URLS",
                        help="comma-separated seed URLs (never pruned), added to reward.seeds")
    reward.add_argument("--no-rewards", action="store_true", help="spread and forget only; add no rewards")
    reward.add_argument("--no-prune", action="store_true", help="keep pages below the delete threshold")
    reward.add_argument("--undo-prune", metavar="RUN_ID", help="restore what reward run RUN_ID pruned, and stop")
    reward.add_argument("--run-id", metavar="RUN_ID",
                        help="run id to use (a retry: the same RUN_ID completes that run, or does nothing if it "
                             "finished; default: a new id)")
    _common(reward)

    run = sub.add_parser("run", help="run every pipeline step on an input, or on the built-in sample crawl")
    run.add_argument("--input", help="edge records (default: the built-in sample crawl)")
    run.add_argument("--format", choices=FORMATS)
    run.add_argument("--sitemaps", help="sitemap file or directory to ingest too (the sample brings its own)")
    _common(run)

    compress = sub.add_parser(
        "compress", help="Boldi-Vigna compressed forward and reverse link graphs of the lake's links")
    _common(compress)

    centrality = sub.add_parser("centrality", help="harmonic centrality (HyperBall) and PageRank of the host, "
                                                   "domain or page graph into <level>_centrality")
    centrality.add_argument("--level", required=True, choices=N.CENTRALITY_LEVELS)
    centrality.add_argument("--registers", type=int, metavar="M",
                            help="HyperLogLog registers per counter, a power of 2 in 16..65536 "
                                 "(default: centrality.registers, 256)")
    _common(centrality)

    export = sub.add_parser("export", help="the host or domain graph in Common Crawl's layout or as a BVGraph, "
                                           "with a Common Crawl rank file")
    export.add_argument("--level", required=True, choices=("host", "domain"))
    export.add_argument("--format", required=True, choices=("ccgraph", "webgraph"))
    export.add_argument("--output", required=True, metavar="DIR", help="directory to write (created if missing)")
    _common(export)
    return parser


def resolve_config(args: argparse.Namespace) -> Config:
    """The config file given with ``--conf``, else the built-in defaults (the values of
    ``conf/local.yaml``), with ``--lake`` applied.  Nothing is read from the working directory
    implicitly: a config says how Spark starts (``spark.jars.packages``, JVM options), so only a
    file named on the command line may set it."""
    return load_config(args.conf).with_lake_path(args.lake)


def _input_path(path: str, what: str = "input") -> str:
    """A path option as Spark will read it (see ``linkgraph.paths``); a missing local path stops
    here, before Spark starts, a remote one is checked once the session runs."""
    uri = paths.to_uri(path)
    paths.require_local_input(uri, what)
    return uri


def _check_output_parent(path: str) -> None:
    """A local output file's directory must exist (checked before Spark starts)."""
    local = paths.local_path(paths.to_uri(path))
    if local is None:
        return
    parent = Path(local).parent
    if Path(local).is_dir():
        raise UsageError(f"--output {path} is a directory; give a file name")
    if not parent.is_dir():
        raise UsageError(f"--output {path}: directory {parent} does not exist")


def _input_and_format(args: argparse.Namespace) -> tuple[str, str]:
    input_path = _input_path(args.input)
    return input_path, args.format or guess_format(input_path)


def _context(config: Config, *inputs: tuple[str | None, str]) -> StepContext:
    """The command's step context: the session (after checking each remote (input path, what)
    through Hadoop's FileSystem), the config and the lake."""
    from linkgraph.session import get_spark
    from linkgraph.steps.context import StepContext

    spark = get_spark(config.spark)
    for path, what in inputs:
        if path is not None:
            paths.require_input(spark, path, what)
    return StepContext.create(spark, config)


def cmd_ingest(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import ingest

    input_path, fmt = _input_and_format(args)
    print(ingest.run(_context(config, (input_path, "input")), input_path, fmt).summary())
    return 0


def _rank_config(args: argparse.Namespace, config: Config) -> Config:
    """``rank`` config with the flags given on the command line applied."""
    flags = {"engine": args.engine, "tol": args.tol, "max_iter": args.max_iter}
    overrides = {key: value for key, value in flags.items() if value is not None}
    return dataclasses.replace(config, rank=dataclasses.replace(config.rank, **overrides))


def _split(values: list[str] | None) -> list[list[str]]:
    return [[v.strip() for v in value.split(",") if v.strip()] for value in values or []]


def cmd_pagerank(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import pagerank

    config = _rank_config(args, config)
    spec = pagerank.PersonalizationSpec(seeds=_split(args.seeds), topics=_split(args.topic), table=args.personalization)
    report = pagerank.run(_context(config), spec, warm_start=args.warm_start)
    print(report.summary())
    return 0 if report.converged else config.rank.not_converged_exit_code


def cmd_reward(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import reward

    if args.rounds is not None and args.rounds < 0:
        raise UsageError("--rounds must not be negative")
    signals = _input_path(args.signals, "page signals") if args.signals is not None else None
    overrides: dict[str, Any] = {"rewards": False} if args.no_rewards else {}
    if args.no_prune:
        overrides["prune"] = False
    config = dataclasses.replace(config, reward=dataclasses.replace(config.reward, **overrides))
    if args.undo_prune:
        print(reward.undo(_context(config), args.undo_prune).summary())
        return 0
    if args.run_id is not None and not _RUN_ID.fullmatch(args.run_id):
        raise UsageError(f"--run-id {args.run_id!r}: use 1-100 letters, digits and . _ : + -")
    seeds = [url for group in _split(args.seeds) for url in group]
    ctx = _context(config, (signals, "page signals"))
    if args.run_id is not None:
        ctx = dataclasses.replace(ctx, run_id=args.run_id)
    report = reward.run(ctx, rounds=args.rounds, seeds=seeds, signals_path=signals)
    if report.signals is not None:
        print(report.signals.summary())
    print(report.summary())
    return 0


def cmd_analyze(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import analyze, flags

    ctx = _context(config)
    print(analyze.run(ctx).summary())
    report = flags.run(ctx.next_step())
    if report.rank_run is not None:
        print(report.summary())
    return 0


def _links_compressed_without_spark(args: argparse.Namespace, config: Config) -> list[Any] | None:
    """``links --compressed`` read without Spark (``linkgraph.compress.pages``: no pyspark import,
    one block per direction); None for a catalog lake, which Spark reads."""
    if config.lake.schema is not None:
        return None
    from linkgraph.compress.pages import links_compressed

    return links_compressed(config.lake.path, args.direction, args.url, args.limit + 1)


def cmd_links(args: argparse.Namespace, config: Config) -> int:
    if args.limit <= 0:
        raise UsageError("--limit must be positive")
    if args.compressed and args.direction == "anchors":
        raise UsageError("--compressed answers out and in; anchors come from the anchor index")
    try:
        rows: list[Any] | None = _links_compressed_without_spark(args, config) if args.compressed else None
        if rows is None:
            from linkgraph.steps import lookup

            ctx = _context(config)
            if args.compressed:
                rows = lookup.links_compressed(ctx, args.direction, args.url, args.limit + 1)
            else:
                rows = lookup.links(ctx, args.direction, args.url).limit(args.limit + 1).collect()
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    for row in rows[: args.limit]:
        if args.direction == "anchors":
            from linkgraph import schemas as S

            context = f"\t{row[S.EXAMPLE_CONTEXT]}" if row[S.EXAMPLE_CONTEXT] else ""
            print(f"{row[S.LINKS_COUNT]}\t{row[S.LINKING_DOMAINS]}\t{row[S.ANCHOR]}{context}")
        else:
            print(row[N.URL])
    if len(rows) > args.limit:
        print(f"... more than {args.limit} rows; raise --limit to see them", file=sys.stderr)
    return 0


def cmd_ingest_sitemaps(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import sitemaps

    input_path = _input_path(args.input)
    print(sitemaps.run(_context(config, (input_path, "input")), input_path).summary())
    return 0


def cmd_import_authority(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import authority

    input_path = _input_path(args.input)
    report = authority.run(_context(config, (input_path, "input")), input_path, args.format)
    print(f"import-authority {args.input}: {args.format} imported={report.imported} rejected={report.rejected}")
    return 0


def cmd_scores(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import scores

    seeds = _split([args.seeds])[0] if args.seeds else None
    print(scores.run(_context(config), seeds).summary())
    return 0


def _frontier_export_columns() -> tuple[str, ...]:
    from linkgraph import schemas as S

    return ("position", S.URL, S.PRIORITY, "priority_source", S.SEED_SCORE, S.SCOPE_SCORE, S.HOP_DEPTH,
            "domain_affinity", S.PAGE_ID, S.RUN_ID)


def cmd_frontier(args: argparse.Namespace, config: Config) -> int:
    import csv
    import io
    import json

    from linkgraph.steps import lookup

    if args.top <= 0:
        raise UsageError("--top must be positive")
    if args.output:
        _check_output_parent(args.output)
    ctx = _context(config)
    rows = lookup.frontier(ctx, args.top)
    buffer = io.StringIO()
    out: TextIO = buffer if args.output else sys.stdout
    if args.format == "csv":
        writer = csv.DictWriter(out, fieldnames=_frontier_export_columns(), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    else:
        for row in rows:
            out.write(json.dumps({c: row[c] for c in _frontier_export_columns()}) + "\n")
    if args.output:
        paths.write_text(ctx.spark, paths.to_uri(args.output), buffer.getvalue())
    return 0


@dataclasses.dataclass
class RunPlan:
    """What ``linkgraph run`` was given: the input, sitemaps and seeds (the sample's by default)."""

    input_path: str
    fmt: str
    sitemaps: str | None
    seeds: list[str]
    on_sample: bool


def _run_step(name: str, ctx: StepContext, plan: RunPlan) -> str | None:
    """Run one step of ``PIPELINE`` for ``linkgraph run``; its progress line (None: skipped quietly)."""
    from linkgraph.steps import analyze, compress, flags, ingest, pagerank, reward, scores, sitemaps

    if name == "ingest":
        return ingest.run(ctx, plan.input_path, plan.fmt).summary()
    if name == "ingest-sitemaps":
        return sitemaps.run(ctx, plan.sitemaps).summary() if plan.sitemaps else None
    if name == "analyze":
        return analyze.run(ctx).summary()
    if name == "pagerank":
        return pagerank.run(ctx).summary()
    if name == "reward":
        report = reward.in_run(ctx, on_sample=plan.on_sample)
        return report.summary() if report is not None else None
    if name == "flags":
        return flags.run(ctx).summary()
    if name == "scores":
        if not plan.seeds:
            return "scores: seed_scores and frontier skipped (no seed URLs: set scores.seeds in the config)"
        return scores.run(ctx, plan.seeds).summary()
    if name == "compress":
        return compress.run(ctx).summary()
    raise ValueError(f"unknown pipeline step {name!r}")


def _run_plan(args: argparse.Namespace, config: Config) -> RunPlan:
    from linkgraph.sample import SAMPLE_SEEDS, write_sample_input

    sitemaps, seeds = args.sitemaps, list(config.scores.seeds)
    if args.input:
        input_path, fmt = _input_and_format(args)
    else:
        input_path, fmt = str(write_sample_input(tempfile.mkdtemp(prefix="linkgraph-sample-"))), "jsonl"
        print(f"using the built-in sample crawl: {input_path}", flush=True)
        sitemaps = sitemaps or str(Path(input_path).parent / "sitemaps")
        seeds = seeds or list(SAMPLE_SEEDS)
    if sitemaps:
        sitemaps = _input_path(sitemaps, "sitemaps")
    return RunPlan(input_path, fmt, sitemaps, seeds, on_sample=not args.input)


def _run_tables(analysis_tables: tuple[str, ...]) -> tuple[str, ...]:
    """The tables ``linkgraph run`` lists, in pipeline order."""
    from linkgraph import schemas as S

    return (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE, S.PAGERANK_TABLE, S.RANK_RUNS_TABLE, *analysis_tables,
            S.SITEMAPS_TABLE, S.PAGE_SIGNALS_TABLE, S.REWARD_SCORES_TABLE, S.REWARD_RUNS_TABLE, S.FEEDS_TABLE,
            S.PRUNED_PAGES_TABLE, S.PAGE_FLAGS_TABLE, S.SEED_SCORES_TABLE, S.FRONTIER_TABLE,
            S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE,
            S.LINKS_COMPRESSED_ORDER_TABLE)


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import PIPELINE
    from linkgraph.steps.analyze import ANALYSIS_TABLES

    started = time.monotonic()
    plan = _run_plan(args, config)
    if plan.on_sample:  # the sample's few thousand records: interpreted, not compiled (if this starts Spark)
        config = dataclasses.replace(config, spark=dataclasses.replace(
            config.spark, conf={**config.spark.conf, **TINY_DATA_SPARK_CONF}))
    spark_started = time.monotonic()
    ctx = _context(config, (plan.input_path, "input"), (plan.sitemaps, "sitemaps"))
    print(f"spark: {ctx.spark.sparkContext.master} ready in {time.monotonic() - spark_started:.1f}s", flush=True)
    for name in PIPELINE:
        line = _run_step(name, ctx.next_step(), plan)
        if line is not None:
            print(line, flush=True)
    print(f"tables (run took {time.monotonic() - started:.1f}s):")
    for table in _run_tables(tuple(ANALYSIS_TABLES)):
        if ctx.lake.exists(table):
            where = ctx.lake.location(table) if ctx.lake.uses_catalog else paths.display(ctx.lake.location(table))
            print(f"  {table:<25} {where}")
    return 0


def cmd_compress(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import compress

    print(compress.run(_context(config)).summary())
    return 0


def cmd_export(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import export

    local = paths.local_path(paths.to_uri(args.output))
    if local is not None and Path(local).is_file():
        raise UsageError(f"--output {args.output} is a file; give a directory")
    print(export.run(_context(config), args.level, args.format, paths.to_uri(args.output)).summary())
    return 0


def cmd_centrality(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.steps import centrality

    if args.registers is not None:
        config = dataclasses.replace(config, centrality=dataclasses.replace(config.centrality,
                                                                            registers=args.registers))
    print(centrality.run(_context(config), args.level).summary())
    return 0


COMMANDS = {
    "ingest": cmd_ingest, "ingest-sitemaps": cmd_ingest_sitemaps, "import-authority": cmd_import_authority,
    "pagerank": cmd_pagerank, "analyze": cmd_analyze, "links": cmd_links, "scores": cmd_scores,
    "frontier": cmd_frontier, "compress": cmd_compress, "reward": cmd_reward, "run": cmd_run,
    "export": cmd_export, "centrality": cmd_centrality,
}


def _active_session():
    """This process's SparkSession, None without one (pyspark is not imported here: a process that
    never imported it has no session).  Process-wide, not the calling thread's: a command run in a
    thread of a process with a session does not own that session, nor its checkpoints."""
    if "pyspark.sql" not in sys.modules:
        return None
    from linkgraph.session import existing_session

    return existing_session()


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    try:
        args = build_parser().parse_args(argv)
    except _ArgumentError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    owns_session = _active_session() is None
    try:
        config = resolve_config(args)
        return COMMANDS[args.command](args, config)
    except UsageError as exc:
        print(f"linkgraph {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ConflictRetriesExhausted, UnreadableDataError) as exc:
        print(f"linkgraph {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        missing = paths.missing_file_system(exc)
        if missing is None:
            raise
        print(f"linkgraph {args.command}: error: no Hadoop FileSystem for scheme '{missing}' in this Spark session "
              f"(add its connector, e.g. hadoop-aws for s3a, to spark.jars.packages)", file=sys.stderr)
        return EXIT_USAGE
    finally:
        # a session this command started ends with it: its checkpoints are no use to anyone after
        session = _active_session() if owns_session else None
        if session is not None:
            from linkgraph.session import clean_checkpoints

            clean_checkpoints(session)


if __name__ == "__main__":
    sys.exit(main())
