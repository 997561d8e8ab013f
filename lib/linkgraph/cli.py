"""``linkgraph`` command line.

Exit codes: 0 success; 2 a ``linkgraph.errors.UsageError`` (config, input, missing table, flags: nothing
written) or a missing Hadoop FileSystem; 1 anything else.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import logging
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from linkgraph import __version__
from linkgraph.deploy import EMITTERS
from linkgraph.errors import EXIT_NO_INPUT, LinkgraphError, UsageError
from linkgraph.lake import names as N
from linkgraph.lake import paths
from linkgraph.lake.config import TINY_DATA_SPARK_CONF, Config, load_config
from linkgraph.lake.lakepolicy import url_policy
from linkgraph.lake.names import (
    INPUT_FORMATS as FORMATS,  # = linkgraph.inputs.readers.FORMATS, without importing pyspark
)
from linkgraph.lake.paths import guess_format
from linkgraph.sample import SAMPLE_SEEDS, write_sample_input
from linkgraph.steps.registry import (
    Registry,
    RunPlan,
    Step,
    add_subcommands,
    input_paths,
    params_from,
    path_fields,
    required_path,
    with_overrides,
)

if TYPE_CHECKING:
    from linkgraph.lake.context import StepContext

log = logging.getLogger("linkgraph")

EXIT_USAGE = UsageError.exit_code
_RUN_ID = re.compile(r"[A-Za-z0-9._:+-]{1,100}")

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


def build_parser(registry: Registry | None = None) -> argparse.ArgumentParser:
    """The ``linkgraph`` parser: one subcommand per registered step (``registry``, default every
    step the package declares), then the commands that are not steps (queries, ``run``, ``pipeline``)."""
    parser = _Parser(prog="linkgraph", description="Link-graph analytics on Spark + Delta Lake")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_subcommands(sub, Registry.default() if registry is None else registry)
    _add_queries(sub)
    return parser


def _add_queries(sub: Any) -> None:
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

    run = sub.add_parser("run", help="run every pipeline step on an input, or on the built-in sample crawl")
    run.add_argument("--input", help="edge records (default: the built-in sample crawl)")
    run.add_argument("--format", choices=FORMATS)
    run.add_argument("--sitemaps", help="sitemap file or directory to ingest too (the sample brings its own)")
    _common(run)

    plan = sub.add_parser("plan", help="blocks, bytes, memory and Spark settings a graph needs (no Spark job "
                                       "unless --lake is measured)")
    plan.add_argument("--links", help="links of the graph, e.g. 10e9 (default: counted in --lake)")
    plan.add_argument("--pages", help="pages of the graph, e.g. 1e9 (default: counted in --lake)")
    plan.add_argument("--vectors", default="1", help="rank vectors computed together (default 1)")
    plan.add_argument("--cores", default="400", help="executor cores of the cluster (default 400)")
    plan.add_argument("--executor-cores", default="8", help="cores per executor (default 8)")
    _common(plan)

    pipeline = sub.add_parser("pipeline", help="the deployment files derived from the step registry")
    pipeline.add_argument("--emit", required=True, choices=EMITTERS, help="which file to write")
    pipeline.add_argument("--output", help="file to write (default: standard output)")


def resolve_config(args: argparse.Namespace) -> Config:
    """The config file given with ``--conf``, else the built-in defaults (the values of
    ``conf/local.yaml``), with ``--lake`` applied.  Nothing is read from the working directory
    implicitly: a config says how Spark starts (``spark.jars.packages``, JVM options), so only a
    file named on the command line may set it."""
    return load_config(args.conf).with_lake_path(args.lake)


def _input_path(path: str, what: str = "input") -> str:
    """A path option as Spark will read it (see ``linkgraph.lake.paths``); a missing local path stops
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


def _context(config: Config, *inputs: tuple[str | None, str]) -> StepContext:
    """The command's step context: the session (after checking each remote (input path, what)
    through Hadoop's FileSystem), the config and the lake."""
    from linkgraph.lake.context import StepContext
    from linkgraph.lake.session import get_spark

    spark = get_spark(config.spark)
    for path, what in inputs:
        if path is not None:
            paths.require_input(spark, path, what)
    return StepContext.create(spark, config)


def _step_params(step: Step[Any], args: argparse.Namespace) -> Any:
    """The step's parameters from the command line: input paths as URIs (a missing local one
    stops here, before Spark starts), then the step's own checks."""
    params = params_from(step.params, args)
    if getattr(args, "if_present", False):
        uris = {name: paths.to_uri(getattr(params, name)) for name, _ in path_fields(params)}
        params, missing = _absent_inputs(dataclasses.replace(params, **uris), None)
        if missing is not None:
            raise _NoInput(missing)
    else:
        uris = {name: _input_path(getattr(params, name), what) for name, what in path_fields(params)}
        params = dataclasses.replace(params, **uris)
    return step.prepare(params) if step.prepare is not None else params


class _NoInput(Exception):
    """``--if-present`` and a required input path does not exist."""


def _absent_inputs(params: Any, spark: Any | None) -> tuple[Any, str | None]:
    """``--if-present``: the parameters without their missing optional inputs, and the first
    missing required input (None when every required input is there).  Local paths are checked
    without Spark (``spark`` None), remote ones through the session's file systems."""
    for name, what in path_fields(params):
        path = getattr(params, name)
        if (paths.local_path(path) is None) == (spark is None) or paths.exists(spark, path):
            continue
        if required_path(params, name):
            return params, path
        log.info("%s %s does not exist: left out (--if-present)", what, path)
        params = dataclasses.replace(params, **{name: None})
    return params, None


def _no_input(step: Step[Any], path: str) -> int:
    print(f"{step.name}: no input at {path}: nothing to do (--if-present)")
    return EXIT_NO_INPUT


def cmd_step(step: Step[Any], args: argparse.Namespace, config: Config, registry: Registry) -> int:
    """Run one registered step (with the steps its subcommand chains before and after it,
    ``Step.before`` and ``Step.then``) and print each report's lines."""
    try:
        params = _step_params(step, args)
    except _NoInput as absent:
        return _no_input(step, str(absent))
    config = with_overrides(config, params)
    if getattr(args, "if_present", False):
        from linkgraph.lake.session import get_spark

        params, missing = _absent_inputs(params, get_spark(config.spark))
        if missing is not None:
            return _no_input(step, missing)
    ctx = _context(config, *input_paths(params))
    for name in step.before:
        _run_chained(registry[name], ctx.next_step())
    report = step.run(ctx, params)
    print("\n".join(report.lines()))
    for name in step.then:
        _run_chained(registry[name], ctx.next_step())
    return report.exit_code(config)


def _run_chained(step: Step[Any], ctx: StepContext) -> None:
    """Run a step a subcommand chains, with its default parameters; print its lines unless quiet."""
    report = step.run(ctx, step.params())
    if not report.quiet:
        print("\n".join(report.lines()))


def _links_compressed_without_spark(args: argparse.Namespace, config: Config) -> list[Any] | None:
    """``links --compressed`` read without Spark (``linkgraph.compress.pages``: no pyspark import,
    one block per direction); None for a catalog lake, or a ``urls.psl_file`` that is not local,
    which Spark reads."""
    psl_file = config.urls.psl_file
    if config.lake.schema is not None or (psl_file is not None and paths.local_path(psl_file) is None):
        return None
    from linkgraph.compress.pages import links_compressed

    return links_compressed(config.lake.path, args.direction, args.url, args.limit + 1, url_policy(config))


def cmd_links(args: argparse.Namespace, config: Config) -> int:
    if args.limit <= 0:
        raise UsageError("--limit must be positive")
    if args.compressed and args.direction == "anchors":
        raise UsageError("--compressed answers out and in; anchors come from the anchor index")
    try:
        rows: list[Any] | None = _links_compressed_without_spark(args, config) if args.compressed else None
        if rows is None:
            from linkgraph.explore import lookup

            ctx = _context(config)
            if args.compressed:
                rows = lookup.links_compressed(ctx, args.direction, args.url, args.limit + 1)
            else:
                rows = lookup.links(ctx, args.direction, args.url).limit(args.limit + 1).collect()
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    for row in rows[: args.limit]:
        if args.direction == "anchors":
            from linkgraph.lake import schemas as S

            context = f"\t{row[S.EXAMPLE_CONTEXT]}" if row[S.EXAMPLE_CONTEXT] else ""
            print(f"{row[S.LINKS_COUNT]}\t{row[S.LINKING_DOMAINS]}\t{row[S.ANCHOR]}{context}")
        else:
            print(row[N.URL])
    if len(rows) > args.limit:
        print(f"... more than {args.limit} rows; raise --limit to see them", file=sys.stderr)
    return 0


def _frontier_export_columns() -> tuple[str, ...]:
    from linkgraph.lake import schemas as S

    return ("position", S.URL, S.PRIORITY, "priority_source", S.SEED_SCORE, S.SCOPE_SCORE, S.HOP_DEPTH,
            "domain_affinity", S.PAGE_ID, S.RUN_ID)


def cmd_frontier(args: argparse.Namespace, config: Config) -> int:
    from linkgraph.explore import lookup

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


def _run_plan(args: argparse.Namespace, config: Config) -> RunPlan:
    sitemaps, seeds = args.sitemaps, list(config.scores.seeds)
    if args.input:
        input_path = _input_path(args.input)
        fmt = args.format or guess_format(input_path)
    else:
        input_path, fmt = str(write_sample_input(tempfile.mkdtemp(prefix="linkgraph-sample-"))), "jsonl"
        print(f"using the built-in sample crawl: {input_path}", flush=True)
        sitemaps = sitemaps or str(Path(input_path).parent / "sitemaps")
        seeds = seeds or list(SAMPLE_SEEDS)
    if sitemaps:
        sitemaps = _input_path(sitemaps, "sitemaps")
    return RunPlan(input_path, fmt, sitemaps, seeds, on_sample=not args.input)


def cmd_run(args: argparse.Namespace, config: Config, registry: Registry) -> int:
    """Every step of ``registry.pipeline_order()`` on the plan's input, one line per step, then
    the tables the steps write."""
    started = time.monotonic()
    plan = _run_plan(args, config)
    if plan.on_sample:  # the sample's few thousand records: interpreted, not compiled (if this starts Spark)
        config = dataclasses.replace(config, spark=dataclasses.replace(
            config.spark, conf={**config.spark.conf, **TINY_DATA_SPARK_CONF}))
    spark_started = time.monotonic()
    ctx = _context(config, (plan.input_path, "input"), (plan.sitemaps, "sitemaps"))
    print(f"spark: {ctx.spark.sparkContext.master} ready in {time.monotonic() - spark_started:.1f}s", flush=True)
    order = registry.pipeline_order()
    for name in order:
        step = registry[name]
        params = step.for_run(plan, config) if step.for_run is not None else None
        if params is not None:
            print(params if isinstance(params, str) else step.run(ctx.next_step(), params).summary(), flush=True)
    print(f"tables (run took {time.monotonic() - started:.1f}s):")
    for table in dict.fromkeys(table for name in order for table in registry[name].tables_written()):
        if ctx.lake.exists(table):
            where = ctx.lake.location(table) if ctx.lake.uses_catalog else paths.display(ctx.lake.location(table))
            print(f"  {table:<25} {where}")
    return 0


def cmd_pipeline(args: argparse.Namespace, registry: Registry) -> int:
    """Write a deployment file derived from the registry (``linkgraph.deploy``)."""
    text = EMITTERS[args.emit](registry)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _count_arg(value: str | None, flag: str) -> int | None:
    return None if value is None else _positive(value, flag)


def _positive(value: str, flag: str) -> int:
    """A count flag such as ``10e9`` (zero allowed for --links only)."""
    from linkgraph.rank.plan import parse_count

    try:
        count = parse_count(value)
    except ValueError:
        raise UsageError(f"{flag} must be a whole number such as 10e9, got {value!r}") from None
    if count <= 0 and flag != "--links":
        raise UsageError(f"{flag} must be positive, got {value!r}")
    return count


def _measured_graph(args: argparse.Namespace, config: Config) -> tuple[int, int]:
    """(links, pages) of the lake's rank graph: pages, and links PageRank follows."""
    from linkgraph.lake import schemas as S
    from linkgraph.rank.graph import followed_links

    if args.lake is None:
        raise UsageError("give --links and --pages, or --lake to count them")
    lake = _context(config).lake
    lake.require(S.PAGES_TABLE, S.LINKS_TABLE)
    links = followed_links(lake.read(S.LINKS_TABLE), tuple(config.rank.exclude_link_types)).count()
    return links, lake.read(S.PAGES_TABLE).count()


def cmd_plan(args: argparse.Namespace, config: Config) -> int:
    """``key=value`` lines of ``linkgraph.rank.plan.make_plan`` for the graph and the cluster."""
    from linkgraph.rank.engine import RankParams
    from linkgraph.rank.plan import PlanInputs, centrality_lines, make_plan

    links, pages = _count_arg(args.links, "--links"), _count_arg(args.pages, "--pages")
    if links is None or pages is None:
        measured = _measured_graph(args, config)
        links, pages = links if links is not None else measured[0], pages if pages is not None else measured[1]
    params = RankParams.from_config(config.rank)
    inputs = PlanInputs(links, pages, _positive(args.vectors, "--vectors"), _positive(args.cores, "--cores"),
                        _positive(args.executor_cores, "--executor-cores"))
    print("\n".join(make_plan(inputs, params).lines() + centrality_lines(inputs, config.centrality,
                                                                             params.block_bytes)))
    return 0


# the commands that are not steps: queries of the lake (no table written), the plan and the runner
COMMANDS: dict[str, Callable[[argparse.Namespace, Config], int]] = {
    "links": cmd_links, "frontier": cmd_frontier, "plan": cmd_plan}


def _active_session():
    """This process's SparkSession, None without one (pyspark is not imported here: a process that
    never imported it has no session).  Process-wide, not the calling thread's: a command run in a
    thread of a process with a session does not own that session, nor its checkpoints."""
    if "pyspark.sql" not in sys.modules:
        return None
    from linkgraph.lake.session import existing_session

    return existing_session()


def _registry_for(argv: list[str]) -> Registry:
    """The steps the command line may name.  ``links`` and ``--version`` need none, so they do not
    import the step modules (and pyspark): ``links --compressed`` answers without Spark."""
    if argv[:1] in (["links"], ["--version"]):
        return Registry()
    return Registry.default()


def _dispatch(args: argparse.Namespace, registry: Registry) -> int:
    if args.command == "pipeline":
        return cmd_pipeline(args, registry)
    config = resolve_config(args)
    if args.command == "run":
        return cmd_run(args, config, registry)
    if args.command in COMMANDS:
        return COMMANDS[args.command](args, config)
    return cmd_step(registry[args.command], args, config, registry)


def main(argv: list[str] | None = None, registry: Registry | None = None) -> int:
    """``linkgraph`` with ``argv`` (default: the process's arguments) over ``registry`` (default:
    the package's steps); the exit code."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    argv = sys.argv[1:] if argv is None else list(argv)
    registry = _registry_for(argv) if registry is None else registry
    try:
        args = build_parser(registry).parse_args(argv)
    except _ArgumentError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    owns_session = _active_session() is None
    keep_checkpoints = True   # until the command ends with a result or a usage error
    try:
        code = _dispatch(args, registry)
        keep_checkpoints = code not in (0, EXIT_USAGE)
        return code
    except LinkgraphError as exc:
        print(f"linkgraph {args.command}: error: {exc}", file=sys.stderr)
        keep_checkpoints = exc.exit_code != EXIT_USAGE
        return exc.exit_code
    except Exception as exc:
        missing = paths.missing_file_system(exc)
        if missing is None:
            raise
        print(f"linkgraph {args.command}: error: no Hadoop FileSystem for scheme '{missing}' in this Spark session "
              f"(add its connector, e.g. hadoop-aws for s3a, to spark.jars.packages)", file=sys.stderr)
        return EXIT_USAGE
    finally:
        # a session this command started ends with it: the checkpoints of a command that succeeded
        # (or stopped on a usage error) are no use to anyone after; those of a failed one stay
        # (logged) for inspection
        session = _active_session() if owns_session else None
        if session is not None:
            from linkgraph.lake.session import clean_checkpoints

            clean_checkpoints(session, keep=keep_checkpoints)


if __name__ == "__main__":
    sys.exit(main())
