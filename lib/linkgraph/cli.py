"""``linkgraph`` command line.

Exit codes: 0 success; 2 a ``linkgraph.errors.UsageError`` (config, input, missing table, flags: nothing
written) or a missing Hadoop FileSystem; 1 anything else.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import tempfile
import time
from pathlib import Path

from linkgraph import paths
from linkgraph import schemas as S
from linkgraph.config import Config, load_config
from linkgraph.errors import ConflictRetriesExhausted, UsageError
from linkgraph.readers import FORMATS

log = logging.getLogger("linkgraph")

EXIT_USAGE = 2

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


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--conf", help="job config YAML (default: conf/local.yaml if present, else built-in local defaults)")
    parser.add_argument("--lake", help="lake directory holding the Delta tables (overrides lake.path)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linkgraph", description="Link-graph analytics on Spark + Delta Lake")
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
    _common(reward)

    run = sub.add_parser("run", help="run every pipeline step on an input, or on the built-in sample crawl")
    run.add_argument("--input", help="edge records (default: the built-in sample crawl)")
    run.add_argument("--format", choices=FORMATS)
    run.add_argument("--sitemaps", help="sitemap file or directory to ingest too (the sample brings its own)")
    _common(run)

    compress = sub.add_parser("compress", help="Boldi-Vigna compressed forward and reverse link graphs of the lake's links")
    _common(compress)
    return parser


def resolve_config(args: argparse.Namespace) -> Config:
    """The config file (``--conf``, else ``conf/local.yaml`` when the working directory has one,
    else the built-in defaults) with ``--lake`` applied."""
    conf_path = args.conf
    if conf_path is None and Path("conf/local.yaml").is_file():
        conf_path = "conf/local.yaml"
    return load_config(conf_path).with_lake_path(args.lake)


def _input_path(path: str, what: str = "input") -> str:
    """A path option as Spark will read it (see ``linkgraph.paths``); a missing local path stops
    here, before Spark starts, a remote one is checked once the session runs."""
    uri = paths.to_uri(path)
    paths.require_local_input(uri, what)
    return uri


def _input_and_format(args: argparse.Namespace) -> tuple[str, str]:
    input_path = _input_path(args.input)
    return input_path, args.format or guess_format(input_path)


def _spark_for(config: Config, *inputs: tuple[str | None, str]):
    """The session, after checking each remote (input path, what) through Hadoop's FileSystem."""
    from linkgraph.session import get_spark

    spark = get_spark(config.spark)
    for path, what in inputs:
        if path is not None:
            paths.require_input(spark, path, what)
    return spark


def cmd_ingest(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import ingest_step

    input_path, fmt = _input_and_format(args)
    report = ingest_step(_spark_for(config, (input_path, "input")), config, input_path, fmt)
    print(report.summary())
    return 0


def _rank_config(args: argparse.Namespace, config: Config) -> Config:
    """``rank`` config with the flags given on the command line applied."""
    flags = {"engine": args.engine, "tol": args.tol, "max_iter": args.max_iter}
    overrides = {key: value for key, value in flags.items() if value is not None}
    return dataclasses.replace(config, rank=dataclasses.replace(config.rank, **overrides))


def _split(values: list[str] | None) -> list[list[str]]:
    return [[v.strip() for v in value.split(",") if v.strip()] for value in values or []]


def cmd_pagerank(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import PersonalizationSpec, pagerank_step
    from linkgraph.session import get_spark

    config = _rank_config(args, config)
    spec = PersonalizationSpec(seeds=_split(args.seeds), topics=_split(args.topic), table=args.personalization)
    report = pagerank_step(get_spark(config.spark), config, spec, warm_start=args.warm_start)
    print(report.summary())
    return 0 if report.converged else config.rank.not_converged_exit_code


def cmd_reward(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.reward_pipeline import reward_step, undo_prune
    from linkgraph.session import get_spark

    if args.rounds is not None and args.rounds < 0:
        raise UsageError("--rounds must not be negative")
    signals = _input_path(args.signals, "page signals") if args.signals is not None else None
    overrides = {"rewards": False} if args.no_rewards else {}
    if args.no_prune:
        overrides["prune"] = False
    config = dataclasses.replace(config, reward=dataclasses.replace(config.reward, **overrides))
    if args.undo_prune:
        print(undo_prune(get_spark(config.spark), config, args.undo_prune).summary())
        return 0
    seeds = [url for group in _split(args.seeds) for url in group]
    spark = _spark_for(config, (signals, "page signals"))
    report = reward_step(spark, config, rounds=args.rounds, seeds=seeds, signals_path=signals)
    if report.signals is not None:
        print(report.signals.summary())
    print(report.summary())
    return 0


def cmd_analyze(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import analyze_step, flags_step
    from linkgraph.session import get_spark

    spark = get_spark(config.spark)
    print(analyze_step(spark, config).summary())
    flags = flags_step(spark, config)
    if flags.rank_run is not None:
        print(flags.summary())
    return 0


def cmd_links(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import lookup_links, lookup_links_compressed
    from linkgraph.session import get_spark

    if args.limit <= 0:
        raise UsageError("--limit must be positive")
    if args.compressed and args.direction == "anchors":
        raise UsageError("--compressed answers out and in; anchors come from the anchor index")
    try:
        spark = get_spark(config.spark)
        if args.compressed:
            rows = lookup_links_compressed(spark, config, args.direction, args.url, args.limit + 1)
        else:
            rows = lookup_links(spark, config, args.direction, args.url).limit(args.limit + 1).collect()
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    for row in rows[: args.limit]:
        if args.direction == "anchors":
            context = f"\t{row[S.EXAMPLE_CONTEXT]}" if row[S.EXAMPLE_CONTEXT] else ""
            print(f"{row[S.LINKS_COUNT]}\t{row[S.LINKING_DOMAINS]}\t{row[S.ANCHOR]}{context}")
        else:
            print(row[S.URL])
    if len(rows) > args.limit:
        print(f"... more than {args.limit} rows; raise --limit to see them", file=sys.stderr)
    return 0


def cmd_ingest_sitemaps(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import ingest_sitemaps_step

    input_path = _input_path(args.input)
    print(ingest_sitemaps_step(_spark_for(config, (input_path, "input")), config, input_path).summary())
    return 0


def cmd_import_authority(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import import_authority_step

    input_path = _input_path(args.input)
    spark = _spark_for(config, (input_path, "input"))
    imported, rejected = import_authority_step(spark, config, input_path, args.format)
    print(f"import-authority {args.input}: {args.format} imported={imported} rejected={rejected}")
    return 0


def cmd_scores(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import scores_step
    from linkgraph.session import get_spark

    seeds = _split([args.seeds])[0] if args.seeds else None
    print(scores_step(get_spark(config.spark), config, seeds).summary())
    return 0


FRONTIER_EXPORT_COLUMNS = ("position", S.URL, S.PRIORITY, "priority_source", S.SEED_SCORE, S.SCOPE_SCORE, S.HOP_DEPTH,
                           "domain_affinity", S.PAGE_ID, S.RUN_ID)


def cmd_frontier(args: argparse.Namespace, config: Config) -> int:
    import csv
    import io
    import json

    from linkgraph.pipeline import export_frontier
    from linkgraph.session import get_spark

    if args.top <= 0:
        raise UsageError("--top must be positive")
    spark = get_spark(config.spark)
    rows = export_frontier(spark, config, args.top)
    out = io.StringIO() if args.output else sys.stdout
    if args.format == "csv":
        writer = csv.DictWriter(out, fieldnames=FRONTIER_EXPORT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    else:
        for row in rows:
            out.write(json.dumps({c: row[c] for c in FRONTIER_EXPORT_COLUMNS}) + "\n")
    if args.output:
        paths.write_text(spark, paths.to_uri(args.output), out.getvalue())
    return 0


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.io.delta import Lake
    from linkgraph.pipeline import (
        ANALYSIS_TABLES, analyze_step, compress_step, flags_step, ingest_sitemaps_step, ingest_step, pagerank_step,
        sample_input, scores_step,
    )
    from linkgraph.reward_pipeline import reward_in_run
    from linkgraph.sample import SAMPLE_SEEDS

    started = time.monotonic()
    sitemaps, seeds = args.sitemaps, config.scores.seeds
    if args.input:
        input_path, fmt = _input_and_format(args)
    else:
        input_path, fmt = str(sample_input(tempfile.mkdtemp(prefix="linkgraph-sample-"))), "jsonl"
        print(f"using the built-in sample crawl: {input_path}", flush=True)
        sitemaps = sitemaps or str(Path(input_path).parent / "sitemaps")
        seeds = seeds or list(SAMPLE_SEEDS)
    if sitemaps:
        sitemaps = _input_path(sitemaps, "sitemaps")
    spark_started = time.monotonic()
    spark = _spark_for(config, (input_path, "input"), (sitemaps, "sitemaps"))
    print(f"spark: {spark.sparkContext.master} ready in {time.monotonic() - spark_started:.1f}s", flush=True)
    print(ingest_step(spark, config, input_path, fmt).summary(), flush=True)
    if sitemaps:
        print(ingest_sitemaps_step(spark, config, sitemaps).summary(), flush=True)
    print(analyze_step(spark, config).summary(), flush=True)
    print(pagerank_step(spark, config).summary(), flush=True)
    reward = reward_in_run(spark, config, on_sample=not args.input)
    if reward is not None:
        print(reward.summary(), flush=True)
    print(flags_step(spark, config).summary(), flush=True)
    if seeds:
        print(scores_step(spark, config, seeds).summary(), flush=True)
    else:
        print("scores: seed_scores and frontier skipped (no seed URLs: set scores.seeds in the config)", flush=True)
    print(compress_step(spark, config).summary(), flush=True)
    lake = Lake(spark, config.lake)
    print(f"tables (run took {time.monotonic() - started:.1f}s):")
    for table in (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE, S.PAGERANK_TABLE, S.RANK_RUNS_TABLE, *ANALYSIS_TABLES,
                  S.SITEMAPS_TABLE, S.PAGE_SIGNALS_TABLE, S.REWARD_SCORES_TABLE, S.REWARD_RUNS_TABLE, S.FEEDS_TABLE,
                  S.PRUNED_PAGES_TABLE, S.PAGE_FLAGS_TABLE, S.SEED_SCORES_TABLE, S.FRONTIER_TABLE,
                  S.LINKS_COMPRESSED_FORWARD_TABLE, S.LINKS_COMPRESSED_REVERSE_TABLE, S.LINKS_COMPRESSED_OFFSETS_TABLE):
        if lake.exists(table):
            where = lake.location(table) if lake.uses_catalog else paths.display(lake.location(table))
            print(f"  {table:<25} {where}")
    return 0


def cmd_compress(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import compress_step
    from linkgraph.session import get_spark

    print(compress_step(get_spark(config.spark), config).summary())
    return 0


COMMANDS = {
    "ingest": cmd_ingest, "ingest-sitemaps": cmd_ingest_sitemaps, "import-authority": cmd_import_authority,
    "pagerank": cmd_pagerank, "analyze": cmd_analyze, "links": cmd_links, "scores": cmd_scores,
    "frontier": cmd_frontier, "compress": cmd_compress, "reward": cmd_reward, "run": cmd_run,
}


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    args = build_parser().parse_args(argv)
    try:
        config = resolve_config(args)
        return COMMANDS[args.command](args, config)
    except UsageError as exc:
        print(f"linkgraph {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConflictRetriesExhausted as exc:
        print(f"linkgraph {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        missing = paths.missing_file_system(exc)
        if missing is None:
            raise
        print(f"linkgraph {args.command}: error: no Hadoop FileSystem for scheme '{missing}' in this Spark session "
              f"(add its connector, e.g. hadoop-aws for s3a, to spark.jars.packages)", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
