"""Typed job configuration loaded from ``conf/*.yaml``.

Every section is a frozen dataclass whose fields are its keys, each declared once with its default,
meaning and unit (``linkgraph.lake.configkey.key``): ``conf/local.yaml`` and the key reference of
``docs/configuration.md`` are rendered from them (``linkgraph.lake.configdoc``).  The loader rejects
unknown keys and wrong types with a ``ConfigError`` naming the dotted key, so a typo stops a job
before it touches any table.
Run-specific values (input path, lake directory) come from the command line and override the file.

Here: ``Config``, its loader (``load_config``, ``config_from_dict``) and the sections ``spark``,
``lake``, ``urls``, ``ingest``, ``rank``, ``compress``, ``crawl``, ``reliability``, ``retention`` and
``authority``; the analysis steps' sections (``analysis``, ``scores``, ``reward``, ``centrality``)
are in ``linkgraph.lake.config_analysis``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from linkgraph.errors import ConfigError
from linkgraph.lake.config_analysis import AnalysisConfig, CentralityConfig, RewardConfig, ScoresConfig
from linkgraph.lake.configkey import key
from linkgraph.lake.names import LINK_TYPES
from linkgraph.lake.paths import local_path
from linkgraph.urlpolicy import DEFAULT_RULE, REJECT, SuffixList, UrlPolicy
from linkgraph.urls import canonical_seed_urls

__all__ = ["ConfigError"]


# Local tuning for a 2-core machine: the default ``spark.conf`` (conf/local.yaml is rendered from it).
LOCAL_SPARK_CONF = {
    "spark.default.parallelism": "4",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "true",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.databricks.delta.autoCompact.enabled": "false",
}


# For inputs of a few thousand records (the built-in sample, the test suite): compiling each query
# to Java (whole-stage and expression codegen) costs more than interpreting it, about a fifth of a
# sample run.  Never for real crawls, where generated code is what makes Spark fast.
TINY_DATA_SPARK_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


@dataclass(frozen=True)
class SparkConfig:
    """How ``linkgraph.lake.session`` builds a SparkSession when none is active."""

    app_name: str = key("linkgraph", "Spark application name", "name")
    master: str | None = key("local[*]", "null: leave it to spark-submit or the platform", "Spark master URL")
    driver_memory: str | None = key("2g", "`spark.driver.memory`; null: not set", "JVM size (`2g`, `512m`)")
    shuffle_partitions: int = key(4, "`spark.sql.shuffle.partitions`", "partitions, > 0")
    add_packages: bool = key(
        True, "put the pinned Delta (and, with `graphframes`, GraphFrames) Maven coordinates in `spark.jars.packages`")
    graphframes: bool = key(False, "add the GraphFrames JVM package (needed by `rank.engine: graphframes`)")
    graphframes_jar: str | None = key(
        None, "a GraphFrames jar put on `spark.jars` instead of the Maven coordinate (for machines where Maven "
        "Central does not serve it); must exist", "local file path")
    checkpoint_dir: str | None = key(
        None, "Spark's checkpoint directory; null: `<lake>/_checkpoints`, on the lake's own file system or object "
        "store, removed when the command ends (never a fixed path another user or job shares). A path without a "
        "scheme takes the default file system's (HDFS on a Hadoop cluster). Must be reachable by every node",
        "path or URI")
    conf: dict[str, str] = key(
        LOCAL_SPARK_CONF, "further Spark settings, passed verbatim as strings (quote the values: `\"true\"`, "
        "`\"4\"`); a `spark.jars` here is kept and the GraphFrames jar appended. A file that sets `conf` replaces "
        "the whole default map")

    def __post_init__(self) -> None:
        if self.shuffle_partitions <= 0:
            raise ConfigError(f"spark.shuffle_partitions must be positive, got {self.shuffle_partitions}")


@dataclass(frozen=True)
class LakeConfig:
    """Where tables live: Delta tables at ``path/<table>``, or catalog tables ``[catalog.]schema.<table>``."""

    path: str = key(
        "lake", "lake directory: table `T` is the Delta table at `<path>/T`; `--lake` overrides it. With `schema` "
        "set it still decides where checkpoints go by default (`<path>/_checkpoints`)", "path or URI")
    catalog: str | None = key(None, "catalog of catalog tables (Unity Catalog); only with `schema`", "name")
    schema: str | None = key(
        None, "when set, tables are catalog tables `[catalog.]schema.T` instead of paths", "name")


@dataclass(frozen=True)
class UrlsConfig:
    """How every URL is canonicalised (inputs, sitemaps, page signals, seeds, look-ups): the options
    beyond RFC 3986, all off by default.  ``linkgraph ingest`` records them with the lake and refuses
    to ingest into a lake written under others."""

    collapse_slashes: bool = key(False, "collapse each run of `/` in a path to one (`/a//b` -> `/a/b`)")
    sort_query: bool = key(
        False, "sort query parameters (the texts between `&`) by name, stably: parameters of the same name keep "
        "their order (`?b=1&a=2&a=1` -> `?a=2&a=1&b=1`)")
    drop_empty_params: bool = key(
        False, "drop query parameters with `=` and no value (`a=`) and empty ones (`&&`, a trailing `&`); `?a` "
        "(no `=`) is kept; a query left empty is dropped")
    fold_www: bool = key(
        False, "drop the leading `www.` labels of a host that are not part of its registered domain "
        "(`www.example.com` -> `example.com`; `www.com` stays): a site's host graph node is one host")
    psl_private: bool = key(
        True, "use the Public Suffix List's private section: `foo.blogspot.com` is its own registered domain "
        "(false: `blogspot.com` is)")
    unknown_tld: str = key(
        REJECT, "a host under a top-level domain the list does not know: `reject` (INVALID_HOST), or "
        "`default_rule`, the PSL's rule `*` (the last label is the public suffix: `a.b.example` is under "
        "`b.example`)", "`reject` or `default_rule`")
    psl_file: str | None = key(
        None, "null: the Public Suffix List snapshot tldextract bundles (it ages with the release); else a "
        "`public_suffix_list.dat` used instead, read once on the driver and shipped to the workers with the "
        "tasks", "path or URI")

    def __post_init__(self) -> None:
        if self.unknown_tld not in (REJECT, DEFAULT_RULE):
            raise ConfigError(f"urls.unknown_tld must be reject or default_rule, got {self.unknown_tld!r}")

    def policy(self, suffixes: SuffixList | None = None) -> UrlPolicy:
        """The policy of these keys with the list ``suffixes`` (``psl_file``'s content; None: the
        bundled snapshot, and with a ``psl_file`` not read yet also ``unknown_tld: default_rule``,
        a policy that checks everything but the list: the config's seeds when it is loaded)."""
        unknown_tld = DEFAULT_RULE if self.psl_file is not None and suffixes is None else self.unknown_tld
        return UrlPolicy(self.collapse_slashes, self.sort_query, self.drop_empty_params, self.fold_www,
                         self.psl_private, unknown_tld, suffixes or SuffixList())


@dataclass(frozen=True)
class IngestConfig:
    """Validation limits and policies of ``linkgraph ingest``."""

    self_links: str = key(
        "reject", "`reject` writes a link from a page to itself to `rejects` as SELF_LINK; `keep` stores it like "
        "any link", "`reject` or `keep`")
    max_url_length: int = key(
        2048, "longer `from_url` / `to_url`, or a longer sitemap URL: OVERSIZED_FIELD", "characters, > 0")
    max_anchor_length: int = key(1000, "longer `anchor_text`: OVERSIZED_FIELD", "characters, > 0")
    max_context_length: int = key(500, "longer `context_window`: OVERSIZED_FIELD", "characters, > 0")
    csv_delimiter: str = key(",", "field separator of `--format csv` inputs", "one character")
    broadcast_pages: int = key(
        500_000, "a batch with at most this many distinct pages gives its links their page ids from a broadcast "
        "(url, page_id) table, about 270 bytes a page of 50-character URLs on every executor (320 MiB built for "
        "1.25M pages), without shuffling the records; a batch of at most half as many links looks its pages up in "
        "`pages` with its URLs broadcast, shuffling nothing of `pages`, and broadcasts its pages and links into "
        "the `pages` and `links` MERGEs' joins that can build on them; larger batches join by shuffling; "
        "0: always shuffle", "pages, >= 0")
    broadcast_page_ids: int = key(
        2_000_000, "the links of a batch take their page ids by a 64-bit hash of each URL (`xxhash64`) unless two "
        "of the batch's URLs share a hash (then by URL, as above); a batch with at most this many distinct pages "
        "does so from a broadcast (hash, page_id) table, about 100 bytes a page on every executor (128 MiB built "
        "for 1.25M pages), without shuffling the records; larger batches join by shuffling the links' hash pairs "
        "and the records once; 0: always shuffle", "pages, >= 0")
    max_line_bytes: int = key(
        1_048_576, "a line of a text input (jsonl, csv, arcs, dat; a GML token) longer than this is one "
        "MALFORMED_RECORD, read past in bounded memory while the file is streamed; the other lines are kept",
        "bytes, > 0")
    max_file_bytes: int = key(
        17_179_869_184, "a text input file is read up to this many (decompressed) bytes, whole lines only; the "
        "rest is one MALFORMED_RECORD. GML files are also capped at 64 MiB", "bytes, > 0")
    follow_symlinks: bool = key(
        False, "`false`: an input file or directory that is a symbolic link is not read (opened with "
        "`O_NOFOLLOW`) and is counted in the ingest's `skipped_files=`; `true`: links are read like files")

    def __post_init__(self) -> None:
        if self.self_links not in ("reject", "keep"):
            raise ConfigError(f"ingest.self_links must be 'reject' or 'keep', got {self.self_links!r}")
        for name in ("max_url_length", "max_anchor_length", "max_context_length", "max_line_bytes",
                     "max_file_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"ingest.{name} must be positive")
        for name in ("broadcast_pages", "broadcast_page_ids"):
            if getattr(self, name) < 0:
                raise ConfigError(f"ingest.{name} must be 0 or more")


@dataclass(frozen=True)
class RankConfig:
    """PageRank parameters (``linkgraph pagerank``; its flags override ``tol``, ``max_iter`` and ``engine``)."""

    engine: str = key(
        "fast", "`fast`: the block engine; `naive`: DataFrame joins; `graphframes`: GraphFrames (needs its JVM "
        "package); `--engine` overrides", "`fast`, `naive` or `graphframes`")
    damping: float = key(0.85, "damping factor d", "in (0, 1)")
    tol: float = key(
        1e-6, "stop when the sum of absolute rank changes of an iteration is below this; `--tol` overrides",
        "L1 change, > 0")
    max_iter: int = key(
        100, "iteration cap; a run that reaches it is recorded as not converged; `--max-iter` overrides",
        "iterations, > 0")
    blocks: int = key(0, "vertex blocks; 0: chosen from `block_bytes`, at least 3 per core", "blocks, >= 0")
    block_max_vertices: int = key(4_000_000, "the most pages in one block", "pages, > 0")
    checkpoint_every: int = key(
        10, "write the rank state to the `rank_state` table every this many iterations, so a killed run resumes "
        "there; 0: never", "iterations, >= 0")
    single_task: bool = key(
        True, "iterate a graph whose packed links fit `block_bytes` (and `block_max_vertices`) inside one Spark "
        "task, with no Spark job per iteration and no mid-run checkpoints")
    block_bytes: int = key(
        64 * 1024 * 1024, "budget of packed arrays per block and per stored value; a graph whose packed links fit "
        "it may be solved in one task; also the budget of a HyperBall block task (`linkgraph centrality`)",
        "bytes, >= 1024")
    lineage_every: int = key(
        10, "checkpoint the rank blocks reliably to the checkpoint directory every this many iterations: a lost "
        "executor costs at most that many iterations", "iterations, >= 1")
    exclude_link_types: list[str] = key(
        ["NOFOLLOW", "UGC", "SPONSORED"], "links of these types are not followed", "link types")
    not_converged_exit_code: int = key(
        0, "what `linkgraph pagerank` returns when `max_iter` is reached before `tol`", "exit status 0..255")

    def __post_init__(self) -> None:
        if self.engine not in ("fast", "naive", "graphframes"):
            raise ConfigError(f"rank.engine must be fast, naive or graphframes, got {self.engine!r}")
        if not 0.0 < self.damping < 1.0:
            raise ConfigError("rank.damping must be in (0, 1)")
        if self.tol <= 0 or self.max_iter <= 0:
            raise ConfigError("rank.tol and rank.max_iter must be positive")
        if self.block_bytes < 1024:
            raise ConfigError(f"rank.block_bytes must be at least 1024 (bytes of packed arrays), "
                              f"got {self.block_bytes}")
        if self.lineage_every < 1:
            raise ConfigError(f"rank.lineage_every must be at least 1, got {self.lineage_every}")
        if self.blocks < 0:
            raise ConfigError(f"rank.blocks must be 0 (from the page count) or positive, got {self.blocks}")
        if self.block_max_vertices <= 0:
            raise ConfigError(f"rank.block_max_vertices must be positive, got {self.block_max_vertices}")
        if self.checkpoint_every < 0:
            raise ConfigError(f"rank.checkpoint_every must be 0 (never) or positive, got {self.checkpoint_every}")
        if not 0 <= self.not_converged_exit_code <= 255:
            raise ConfigError(f"rank.not_converged_exit_code must be in 0..255 (a process exit status), "
                              f"got {self.not_converged_exit_code}")
        unknown = [t for t in self.exclude_link_types if t not in LINK_TYPES]
        if unknown:
            raise ConfigError(
                f"rank.exclude_link_types: unknown link type {unknown[0]!r} (known: {', '.join(LINK_TYPES)})")


# --- compressed link storage ---
@dataclass(frozen=True)
class CompressConfig:
    """Boldi-Vigna compression of ``links`` (``linkgraph compress``); the defaults are WebGraph's."""

    block_size: int = key(
        65536, "the most vertices per block; a block is one Spark task and references never cross blocks",
        "vertices, > 0")
    window_size: int = key(7, "previous lists a list may copy from; 0: no references", "lists, 0..63")
    max_ref_count: int = key(3, "longest reference chain, which bounds random-access decoding", "references, >= 1")
    min_interval_length: int = key(
        4, "shortest run of consecutive ids stored as an interval; 0: no intervals", "ids, 0 or >= 2")
    residual_code: str = key("zeta3", "code of the remaining gaps", "`gamma`, `delta` or `zeta1`..`zeta7`")
    block_max_arcs: int = key(
        1 << 20, "a block is cut before it reaches twice this many arcs, and a list this long or longer is alone "
        "in its block (no task encodes a hub with its neighbours)", "arcs, > 0")

    def __post_init__(self) -> None:
        if self.block_size <= 0:
            raise ConfigError("compress.block_size must be positive")
        if self.block_max_arcs <= 0:
            raise ConfigError("compress.block_max_arcs must be positive")
        if not 0 <= self.window_size <= 63:
            raise ConfigError("compress.window_size must be in [0, 63]")
        if self.max_ref_count < 1:
            raise ConfigError("compress.max_ref_count must be >= 1")
        if self.min_interval_length != 0 and self.min_interval_length < 2:
            raise ConfigError("compress.min_interval_length must be 0 (no intervals) or >= 2")
        code = self.residual_code
        if not (code in ("gamma", "delta") or (code[:4] == "zeta" and code[4:] in tuple("1234567"))):
            raise ConfigError(f"compress.residual_code must be gamma, delta or zeta1..zeta7, got {code!r}")


# --- crawl inputs (WARC / WAT) ---
@dataclass(frozen=True)
class CrawlConfig:
    """Limits of link extraction from WARC/WAT files (``linkgraph ingest --format warc|wat``)."""

    max_page_bytes: int = key(
        5_000_000, "a response payload larger than this, or whose decoding passes it, is rejected as "
        "OVERSIZED_PAGE without being parsed", "bytes, > 0")
    max_text_chars: int = key(20_000, "page text stored in `page_signals` is cut to this", "characters, > 0")
    context_chars: int = key(
        50, "page text kept on each side of a link in its context window", "characters, > 0")
    max_html_depth: int = key(
        1024, "parse budget of one HTML page: nesting depth (as the parser's stack of open elements would hold "
        "it); deeper is OVERSIZED_PAGE, not parsed", "elements, > 0")
    max_parse_work: int = key(
        200_000_000, "parse budget: nesting depth summed over the elements inserted (the parser's work grows with "
        "it); over it: OVERSIZED_PAGE, not parsed", "> 0")
    max_parse_elements: int = key(
        1_000_000, "parse budget: elements in the page; over it: OVERSIZED_PAGE, not parsed", "elements, > 0")
    max_parse_bytes: int = key(
        5_000_000, "parse budget: the decoded HTML (UTF-8) handed to the parser; over it: OVERSIZED_PAGE, not "
        "parsed", "bytes, > 0")
    max_parse_seconds: float = key(
        30.0, "parse budget: the cost scan, the parse and the walk of the parsed tree of one page together; over "
        "it: OVERSIZED_PAGE", "seconds, > 0")
    max_wat_record_bytes: int = key(
        5_000_000, "a WAT record whose JSON is larger is rejected as OVERSIZED_PAGE without being read",
        "bytes, > 0")

    def __post_init__(self) -> None:
        for name in ("max_page_bytes", "max_text_chars", "context_chars", "max_html_depth", "max_parse_work",
                     "max_parse_elements", "max_parse_bytes", "max_parse_seconds", "max_wat_record_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"crawl.{name} must be positive")


# --- reliability ---
@dataclass(frozen=True)
class ReliabilityConfig:
    """How a step reacts when a concurrent job commits to the same Delta table first
    (``linkgraph.lake.reliability``)."""

    conflict_attempts: int = key(
        3, "how often `linkgraph ingest` runs in total before giving up on Delta conflicts with a concurrent job "
        "(1: no retry)", "attempts, >= 1")
    conflict_backoff_seconds: float = key(
        2.0, "base wait before a retry, multiplied by the attempt number and a random factor in [0.5, 1.5)",
        "seconds, >= 0")

    def __post_init__(self) -> None:
        if self.conflict_attempts < 1:
            raise ConfigError("reliability.conflict_attempts must be >= 1")
        if self.conflict_backoff_seconds < 0:
            raise ConfigError("reliability.conflict_backoff_seconds must be >= 0")


# --- retention ---
@dataclass(frozen=True)
class RetentionConfig:
    """How many runs the per-run tables (``page_flags``, ``seed_scores``) keep."""

    runs: int = key(
        3, "the newest runs kept (by run id, which sorts by start time); the commit that writes a run deletes the "
        "older ones", "runs, >= 1")
    pinned_runs: list[str] = key(
        [], "runs kept whatever their age (for instance the run a report was made from)", "run ids")

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise ConfigError(f"retention.runs must be >= 1, got {self.runs}")


@dataclass(frozen=True)
class AuthorityConfig:
    """How ``linkgraph import-authority`` treats a file with bad rows."""

    max_reject_share: float = key(
        0.5, "a file with a larger share of rejected rows replaces nothing: the source's `external_authority` rows "
        "stay, its rejects are written, and the command exits 2 saying why", "share of the rows, in [0, 1]")

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_reject_share <= 1.0:
            raise ConfigError(f"authority.max_reject_share must be in [0, 1], got {self.max_reject_share}")


@dataclass(frozen=True)
class Config:
    """A job's whole config: one field per section, each section's keys declared with ``key``."""

    spark: SparkConfig = field(default_factory=SparkConfig)
    lake: LakeConfig = field(default_factory=LakeConfig)
    urls: UrlsConfig = field(default_factory=UrlsConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    rank: RankConfig = field(default_factory=RankConfig)
    analysis: AnalysisConfig = field(default_factory=AnalysisConfig)
    scores: ScoresConfig = field(default_factory=ScoresConfig)
    compress: CompressConfig = field(default_factory=CompressConfig)
    crawl: CrawlConfig = field(default_factory=CrawlConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    reliability: ReliabilityConfig = field(default_factory=ReliabilityConfig)
    centrality: CentralityConfig = field(default_factory=CentralityConfig)
    authority: AuthorityConfig = field(default_factory=AuthorityConfig)
    retention: RetentionConfig = field(default_factory=RetentionConfig)

    def __post_init__(self) -> None:
        # checked here, under the config's URL policy (the list of a psl_file is read by the steps)
        canonical_seed_urls(self.scores.trusted_seeds, "scores.trusted_seeds", self.urls.policy())

    def with_lake_path(self, path: str | None) -> Config:
        if path is None:
            return self
        return dataclasses.replace(self, lake=dataclasses.replace(self.lake, path=str(path)))


def load_config(path: str | Path | None = None) -> Config:
    """Load a YAML config file; ``None`` gives the built-in local defaults."""
    if path is None:
        return Config()
    local = local_path(str(path))
    if local is None:
        raise ConfigError(f"config file {path}: only local files (a path or a file:// URI) are read, because the "
                          f"config says how Spark starts; ship it with the job (spark-submit --files) instead")
    path = Path(local)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    return config_from_dict(data, source=str(path))


def config_from_dict(data: dict[str, Any], source: str = "<dict>") -> Config:
    try:
        return _build(Config, data, prefix="")
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _build(cls: type, data: Any, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    for name in data:
        if name not in known:
            raise ConfigError(f"unknown config key '{prefix}{name}' (known: {', '.join(sorted(known))})")
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _coerce(hints[name], value, f"{prefix}{name}")
    return cls(**kwargs)


def _coerce(hint: Any, value: Any, key: str) -> Any:
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value if value is not None else {}, prefix=f"{key}.")
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _coerce(inner, value, key)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"config key '{key}' must be a mapping")
        return {str(k): str(v) for k, v in value.items()}
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise ConfigError(f"config key '{key}' must be a list")
        (inner, *_) = args
        return type(value)(_coerce(inner, v, f"{key}[{i}]") for i, v in enumerate(value))
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"config key '{key}' must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"config key '{key}' must be an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, str):  # YAML 1.1 reads 1e-6 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"config key '{key}' must be a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"config key '{key}' must be a string, got {value!r}")
        return str(value)
    return value
