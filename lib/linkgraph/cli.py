"""``linkgraph`` command line.

Exit codes: 0 success; 2 a configuration or input-schema error (nothing written); 1 anything else.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import tempfile
from pathlib import Path

from linkgraph import schemas as S
from linkgraph.config import Config, ConfigError, load_config
from linkgraph.rank.gf import GraphFramesUnavailable
from linkgraph.rank.teleport import EmptyTeleportError
from linkgraph.readers import FORMATS, InputSchemaError

log = logging.getLogger("linkgraph")

EXIT_USAGE = 2

_EXTENSION_FORMATS = {
    ".parquet": "parquet", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
    ".tsv": "arcs", ".arcs": "arcs", ".txt": "arcs", ".dat": "dat", ".gml": "gml",
}


class UsageError(ValueError):
    pass


def guess_format(path: str) -> str:
    p = Path(path)
    suffixes = [s for s in p.suffixes if s != ".gz"]
    if p.is_dir():
        return "parquet"
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

    # --- reward ranking (issue 6) ---
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
    _common(run)
    return parser


def resolve_config(args: argparse.Namespace) -> Config:
    conf_path = args.conf
    if conf_path is None and Path("conf/local.yaml").is_file():
        conf_path = "conf/local.yaml"
    return load_config(conf_path).with_lake_path(args.lake)


def _input_and_format(args: argparse.Namespace) -> tuple[str, str]:
    if not Path(args.input).exists():
        raise UsageError(f"input not found: {args.input}")
    return args.input, args.format or guess_format(args.input)


def cmd_ingest(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.pipeline import ingest_step
    from linkgraph.session import get_spark

    input_path, fmt = _input_and_format(args)
    report = ingest_step(get_spark(config.spark), config, input_path, fmt)
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
    from linkgraph.reward_pipeline import PruneNotFound, reward_step, undo_prune
    from linkgraph.session import get_spark

    if args.rounds is not None and args.rounds < 0:
        raise UsageError("--rounds must not be negative")
    if args.signals is not None and "://" not in args.signals and not Path(args.signals).exists():
        raise UsageError(f"page signals not found: {args.signals}")
    overrides = {"rewards": False} if args.no_rewards else {}
    if args.no_prune:
        overrides["prune"] = False
    config = dataclasses.replace(config, reward=dataclasses.replace(config.reward, **overrides))
    if args.undo_prune:
        try:
            print(undo_prune(get_spark(config.spark), config, args.undo_prune).summary())
        except PruneNotFound as exc:
            raise UsageError(str(exc)) from None
        return 0
    seeds = [url for group in _split(args.seeds) for url in group]
    report = reward_step(get_spark(config.spark), config, rounds=args.rounds, seeds=seeds, signals_path=args.signals)
    if report.signals is not None:
        print(report.signals.summary())
    print(report.summary())
    return 0


def cmd_run(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.io.delta import Lake
    from linkgraph.pipeline import ingest_step, pagerank_step, sample_input
    from linkgraph.session import get_spark

    if args.input:
        input_path, fmt = _input_and_format(args)
    else:
        input_path, fmt = str(sample_input(tempfile.mkdtemp(prefix="linkgraph-sample-"))), "jsonl"
        print(f"using the built-in sample crawl: {input_path}")
    spark = get_spark(config.spark)
    print(ingest_step(spark, config, input_path, fmt).summary())
    print(pagerank_step(spark, config).summary())
    from linkgraph.reward_pipeline import reward_in_run
    reward = reward_in_run(spark, config, on_sample=not args.input)
    if reward is not None:
        print(reward.summary())
    lake = Lake(spark, config.lake)
    print("tables:")
    for table in (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE, S.PAGERANK_TABLE, S.RANK_RUNS_TABLE):
        print(f"  {table:<10} {Path(lake.location(table)).resolve() if not lake.uses_catalog else lake.location(table)}")
    for table in (S.PAGE_SIGNALS_TABLE, S.REWARD_SCORES_TABLE, S.REWARD_RUNS_TABLE, S.FEEDS_TABLE, S.PRUNED_PAGES_TABLE):
        if reward is not None and lake.exists(table):
            print(f"  {table:<10} {Path(lake.location(table)).resolve() if not lake.uses_catalog else lake.location(table)}")
    return 0


COMMANDS = {"ingest": cmd_ingest, "pagerank": cmd_pagerank, "run": cmd_run, "reward": cmd_reward}


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    args = build_parser().parse_args(argv)
    try:
        config = resolve_config(args)
        return COMMANDS[args.command](args, config)
    except (ConfigError, InputSchemaError, UsageError, EmptyTeleportError, GraphFramesUnavailable) as exc:
        print(f"linkgraph {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
