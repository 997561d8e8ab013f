"""Typed job configuration loaded from ``conf/*.yaml``.

Every section is a frozen dataclass; the loader rejects unknown keys and wrong types with a
``ConfigError`` naming the dotted key, so a typo stops a job before it touches any table.
Run-specific values (input path, lake directory) come from the command line and override the file.

Here: ``Config``, its loader (``load_config``, ``config_from_dict``) and the sections ``spark``,
``lake``, ``ingest``, ``rank``, ``compress``, ``crawl``, ``reliability``, ``retention`` and
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
from linkgraph.lake.names import LINK_TYPES
from linkgraph.lake.paths import local_path

__all__ = ["ConfigError"]


# Local tuning for a 2-core machine (mirrored in conf/local.yaml).
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
    """How ``linkgraph.lake.session`` builds a SparkSession when none is active.

    ``master`` None means "leave it to spark-submit / the platform".  ``add_packages`` puts the
    pinned Delta (and, with ``graphframes``, GraphFrames) Maven coordinates in
    ``spark.jars.packages``; ``graphframes_jar`` is a local GraphFrames jar put on ``spark.jars``
    instead of the GraphFrames coordinate (where Maven Central does not serve it); ``conf`` holds
    any further ``spark.*`` settings verbatim (a ``spark.jars`` there is kept, the jar appended).
    ``checkpoint_dir`` None (the default) puts each command's checkpoints under its lake
    (``<lake>/_checkpoints``, on the lake's file system or object store, removed when the command
    ends), never a fixed path another user or job shares.
    """

    app_name: str = "linkgraph"
    master: str | None = "local[*]"
    driver_memory: str | None = "2g"
    shuffle_partitions: int = 4
    add_packages: bool = True
    graphframes: bool = False
    graphframes_jar: str | None = None
    # None: ``<lake>/_checkpoints`` (same file system or object store as the lake), see
    # ``linkgraph.lake.session.use_checkpoint_dir``; a path without a scheme takes the default file system's
    checkpoint_dir: str | None = None
    conf: dict[str, str] = field(default_factory=lambda: dict(LOCAL_SPARK_CONF))

    def __post_init__(self) -> None:
        if self.shuffle_partitions <= 0:
            raise ConfigError(f"spark.shuffle_partitions must be positive, got {self.shuffle_partitions}")


@dataclass(frozen=True)
class LakeConfig:
    """Where tables live: path-based Delta tables at ``path/<table>``, or catalog tables
    ``catalog.schema.<table>`` when ``schema`` is set (``catalog`` optional)."""

    path: str = "lake"
    catalog: str | None = None
    schema: str | None = None


@dataclass(frozen=True)
class IngestConfig:
    """Validation limits and policies of ``linkgraph ingest``.

    Lengths are in characters.  ``self_links``: ``reject`` writes a link from a page to itself to
    ``rejects`` with reason SELF_LINK; ``keep`` stores it like any other link.
    ``broadcast_pages``: a batch with at most this many distinct pages gives its links their page
    ids from a broadcast (url, page_id) table (about 270 bytes a page of 50-character URLs, as
    built in memory), without shuffling the link records, and a batch of at most half as many
    links looks its pages up in ``pages`` with its URLs broadcast (nothing of ``pages``
    shuffled) and has its pages and links broadcast into the MERGEs' joins that can build on
    them; a larger one joins by shuffling (0: always).  ``broadcast_page_ids``: the same for the
    links' page ids when they are matched by a 64-bit hash of the URL (a batch whose URLs share
    no hash): a (hash, page_id) table of about 100 bytes a page on every executor (0: always
    shuffle).
    ``max_line_bytes`` / ``max_file_bytes``: limits of a text input's line and of a file's
    decompressed bytes (JSONL, CSV, arcs, dat, GML), enforced while the file is streamed; a longer
    line is one MALFORMED_RECORD reject, a larger file is read up to the limit and ends in one.
    ``follow_symlinks``: read an input file that is a symbolic link (false: it is skipped and counted).
    """

    self_links: str = "reject"
    max_url_length: int = 2048
    max_anchor_length: int = 1000
    max_context_length: int = 500
    csv_delimiter: str = ","
    broadcast_pages: int = 500_000
    broadcast_page_ids: int = 2_000_000
    max_line_bytes: int = 1_048_576
    max_file_bytes: int = 17_179_869_184
    follow_symlinks: bool = False

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
    """PageRank parameters (``linkgraph pagerank``; flags override tol/max_iter/engine).

    ``blocks`` 0 picks the vertex blocks by ``block_bytes`` (bytes of packed arrays per block and
    per value, default 64 MiB; at least 3 blocks per core); ``block_max_vertices`` also caps a
    block's pages.  ``checkpoint_every`` iterations the rank state is written to Delta
    (``rank_state``) so a killed run resumes there; ``lineage_every`` iterations the rank blocks
    are checkpointed reliably (a lost executor costs at most that many iterations).
    ``single_task``: a graph whose packed links fit ``block_bytes`` is iterated inside one Spark
    task, without a job per iteration (and without mid-run checkpoints).
    ``not_converged_exit_code`` is what the job returns when the iteration cap is hit first.
    """

    engine: str = "fast"
    damping: float = 0.85
    tol: float = 1e-6
    max_iter: int = 100
    blocks: int = 0
    block_max_vertices: int = 4_000_000
    checkpoint_every: int = 10
    single_task: bool = True
    block_bytes: int = 64 * 1024 * 1024
    lineage_every: int = 10
    exclude_link_types: list[str] = field(default_factory=lambda: ["NOFOLLOW", "UGC", "SPONSORED"])
    not_converged_exit_code: int = 0

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
    """Boldi-Vigna compression of ``links`` (``linkgraph compress``).

    ``block_size`` page ids per block at most (one Spark task each; references never cross blocks);
    ``block_max_arcs``: a block is cut before it reaches twice this many arcs, and a page with this
    many links or more has its list alone in a block, so no task encodes a hub with its neighbours.
    ``window_size`` previous lists a list may copy from (0: none); ``max_ref_count`` longest
    reference chain, which bounds random-access decoding; ``min_interval_length`` shortest run of
    consecutive ids stored as an interval (0: none); ``residual_code`` the code of the remaining
    gaps: ``gamma``, ``delta`` or ``zetaK`` (K 1..7).  Defaults are WebGraph's.
    """

    block_size: int = 65536
    window_size: int = 7
    max_ref_count: int = 3
    min_interval_length: int = 4
    residual_code: str = "zeta3"
    block_max_arcs: int = 1 << 20

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
    """Limits of link extraction from WARC/WAT files (``linkgraph ingest --format warc|wat``).

    ``max_page_bytes``: a response payload larger than this many bytes is rejected as
    OVERSIZED_PAGE without being parsed.  ``max_text_chars``: page text stored in ``page_signals``
    is cut to this many characters.  ``context_chars``: characters of page text kept on each side
    of a link in its context window.  The parse budget of one HTML page (over it: OVERSIZED_PAGE,
    not parsed): ``max_html_depth`` nesting depth, ``max_parse_work`` nesting depth summed over
    the elements, ``max_parse_elements`` elements, ``max_parse_bytes`` bytes of decoded HTML,
    ``max_parse_seconds`` seconds for the cost scan, the parse and the walk of the tree.
    ``max_wat_record_bytes``: a WAT record whose JSON is larger is rejected as OVERSIZED_PAGE
    without being read.
    """

    max_page_bytes: int = 5_000_000
    max_text_chars: int = 20_000
    context_chars: int = 50
    max_html_depth: int = 1024
    max_parse_work: int = 200_000_000
    max_parse_elements: int = 1_000_000
    max_parse_bytes: int = 5_000_000
    max_parse_seconds: float = 30.0
    max_wat_record_bytes: int = 5_000_000

    def __post_init__(self) -> None:
        for name in ("max_page_bytes", "max_text_chars", "context_chars", "max_html_depth", "max_parse_work",
                     "max_parse_elements", "max_parse_bytes", "max_parse_seconds", "max_wat_record_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"crawl.{name} must be positive")


# --- reliability ---
@dataclass(frozen=True)
class ReliabilityConfig:
    """How a step reacts when a concurrent job commits to the same Delta table first.

    ``conflict_attempts``: how often ``linkgraph ingest`` runs in total before giving up on Delta
    conflicts (1 = no retry); ``conflict_backoff_seconds``: base wait before a retry, multiplied by
    the attempt number and a random factor in [0.5, 1.5).  See ``linkgraph.lake.reliability``.
    """

    conflict_attempts: int = 3
    conflict_backoff_seconds: float = 2.0

    def __post_init__(self) -> None:
        if self.conflict_attempts < 1:
            raise ConfigError("reliability.conflict_attempts must be >= 1")
        if self.conflict_backoff_seconds < 0:
            raise ConfigError("reliability.conflict_backoff_seconds must be >= 0")


# --- retention ---
@dataclass(frozen=True)
class RetentionConfig:
    """How many runs the per-run tables (``page_flags``, ``seed_scores``) keep.

    ``runs``: the newest runs kept (by run id, which sorts by start time); the write of a new run
    deletes the older ones in the same commit.  ``pinned_runs``: run ids kept whatever their age.
    """

    runs: int = 3
    pinned_runs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise ConfigError(f"retention.runs must be >= 1, got {self.runs}")


@dataclass(frozen=True)
class AuthorityConfig:
    """``linkgraph import-authority``: ``max_reject_share`` is the largest share of a file's rows
    that may be rejected for the file to replace its source's ``external_authority`` rows; a file
    with more bad rows replaces nothing (its rejects are still written) and the command exits 2."""

    max_reject_share: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_reject_share <= 1.0:
            raise ConfigError(f"authority.max_reject_share must be in [0, 1], got {self.max_reject_share}")


@dataclass(frozen=True)
class Config:
    spark: SparkConfig = field(default_factory=SparkConfig)
    lake: LakeConfig = field(default_factory=LakeConfig)
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
    for key in data:
        if key not in known:
            raise ConfigError(f"unknown config key '{prefix}{key}' (known: {', '.join(sorted(known))})")
    kwargs = {}
    for key, value in data.items():
        kwargs[key] = _coerce(hints[key], value, f"{prefix}{key}")
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
