"""Typed job configuration loaded from ``conf/*.yaml``.

Every section is a frozen dataclass; the loader rejects unknown keys and wrong types with a
``ConfigError`` naming the dotted key, so a typo stops a job before it touches any table.
Run-specific values (input path, lake directory) come from the command line and override the file.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from linkgraph.errors import ConfigError
from linkgraph.lake.names import LINK_TYPES, POSITIONS
from linkgraph.lake.paths import local_path
from linkgraph.urls import canonical_seed_urls

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


DEFAULT_BOILERPLATE_ANCHORS = [
    "click here", "here", "click", "read more", "more", "learn more", "link", "this", "this page",
    "continue", "continue reading", "details", "more info", "website", "go", "next", "previous", "back",
]


# No row of a table the project writes holds more array entries than this (analysis.max_list_entries).
DEFAULT_MAX_LIST_ENTRIES = 65_536


@dataclass(frozen=True)
class AnalysisConfig:
    """Indexes, host/domain graphs and page flags (``linkgraph analyze``).

    ``anchor_cap``: anchors kept per page in ``anchor_index`` (most frequent first).
    ``max_list_entries``: the most array entries any written row holds: the forward and reverse
    indexes store a page's ids in chunks of this many; other lists are capped at it.
    ``boilerplate_anchors``: normalised anchors that say nothing about the target; counted, not indexed.
    A domain is a link farm when at least ``link_farm_min_links`` of its links leave it and more than
    ``link_farm_share`` of them go to one target domain.  Two domains form a syndication pair when
    each sends the other at least ``syndication_min_links`` links.  ``authority_weight`` weights a
    domain-graph edge by ``linking_pages`` (distinct source pages) or ``links``.  A page is
    ``important`` when its rank exceeds mean + ``important_sigmas``·σ of its run.
    A page (or domain) is ``spam_suspect`` when its relative spam mass exceeds
    ``spam_mass_threshold`` and its PageRank is above the median (needs ``scores.trusted_seeds``);
    ``good_fraction`` (γ in (0, 1]) scales the trust vector into the core-based PageRank (``linkgraph.graph.spam``).
    """

    anchor_cap: int = 50
    boilerplate_anchors: list[str] = field(default_factory=lambda: list(DEFAULT_BOILERPLATE_ANCHORS))
    link_farm_share: float = 0.9
    link_farm_min_links: int = 10
    syndication_min_links: int = 20
    authority_weight: str = "linking_pages"
    authority_max_iter: int = 100
    important_sigmas: float = 2.0
    max_list_entries: int = DEFAULT_MAX_LIST_ENTRIES
    spam_mass_threshold: float = 0.7
    good_fraction: float = 1.0

    def __post_init__(self) -> None:
        if self.anchor_cap <= 0:
            raise ConfigError("analysis.anchor_cap must be positive")
        if self.max_list_entries <= 0:
            raise ConfigError(f"analysis.max_list_entries must be positive, got {self.max_list_entries}")
        if not 0.0 < self.link_farm_share < 1.0:
            raise ConfigError("analysis.link_farm_share must be in (0, 1)")
        if self.link_farm_min_links <= 0 or self.syndication_min_links <= 0:
            raise ConfigError("analysis.link_farm_min_links and analysis.syndication_min_links must be positive")
        if self.authority_weight not in ("linking_pages", "links"):
            raise ConfigError(
                f"analysis.authority_weight must be linking_pages or links, got {self.authority_weight!r}")
        if not self.spam_mass_threshold < 1.0:
            raise ConfigError("analysis.spam_mass_threshold must be below 1 (relative spam mass is at most 1), "
                              f"got {self.spam_mass_threshold}")
        if not 0.0 < self.good_fraction <= 1.0:
            raise ConfigError(f"analysis.good_fraction must be in (0, 1], got {self.good_fraction}")


@dataclass(frozen=True)
class ScoresConfig:
    """Seed scores, scope and the frontier (``linkgraph scores`` / ``frontier``); see
    ``linkgraph.graph.scoring`` for the formulas.

    ``seeds``: seed URLs (canonicalised like ingest); ``hop_limit``: rounds of the hop-depth search,
    at most ``max_depth`` (where ``depth_factor`` reaches 0, so no deeper page is in scope).
    ``scope_strategy``: ``linked_domains``, ``registered_domain`` or ``host``.  ``frontier_priority``:
    ``seed_score``, ``pagerank``, ``personalized_pagerank`` (vector ``frontier_vector`` of the
    latest run) or ``reward``.  ``trusted_seeds``: URLs of trusted pages (canonicalised like
    ``seeds``); a uniform ``linkgraph pagerank`` run then also computes the trust vector
    (TrustRank) in the same pass, from which ``page_flags``/``domains`` get their spam mass.
    """

    seeds: list[str] = field(default_factory=list)
    trusted_seeds: list[str] = field(default_factory=list)
    hop_limit: int = 50
    max_depth: int = 5
    weight_in_links: float = 0.3
    weight_domain_authority: float = 0.3
    weight_sitemap_priority: float = 0.2
    weight_depth: float = 0.2
    unlisted_priority: float = 0.0
    external_authority_weight: float = 0.0
    scope_strategy: str = "linked_domains"
    affinity_seed_host: float = 1.0
    affinity_registered_domain: float = 0.8
    affinity_one_hop: float = 0.3
    affinity_farther: float = 0.1
    in_scope_threshold: float = 0.3
    frontier_priority: str = "seed_score"
    frontier_vector: int = 0
    sitemap_max_bytes: int = 50 * 1024 * 1024
    sitemap_max_line_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        if self.scope_strategy not in ("linked_domains", "registered_domain", "host"):
            raise ConfigError("scores.scope_strategy must be linked_domains, registered_domain or host, "
                              f"got {self.scope_strategy!r}")
        if self.frontier_priority not in ("seed_score", "pagerank", "personalized_pagerank", "reward"):
            raise ConfigError("scores.frontier_priority must be seed_score, pagerank, personalized_pagerank or "
                              f"reward, got {self.frontier_priority!r}")
        if self.max_depth <= 0 or self.hop_limit <= 0:
            raise ConfigError("scores.max_depth and scores.hop_limit must be positive")
        if not 0.0 <= self.external_authority_weight <= 1.0:
            raise ConfigError("scores.external_authority_weight must be in [0, 1]")
        if not 0.0 <= self.unlisted_priority <= 1.0:
            raise ConfigError("scores.unlisted_priority must be in [0, 1]")
        for name in ("sitemap_max_bytes", "sitemap_max_line_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"scores.{name} must be positive")
        canonical_seed_urls(self.trusted_seeds, "scores.trusted_seeds")

    @property
    def weights(self) -> dict[str, float]:
        return {"in_links": self.weight_in_links, "domain_authority": self.weight_domain_authority,
                "sitemap_priority": self.weight_sitemap_priority, "depth": self.weight_depth}

    @property
    def affinity(self) -> dict[str, float]:
        return {"seed_host": self.affinity_seed_host, "registered_domain": self.affinity_registered_domain,
                "one_hop": self.affinity_one_hop, "farther": self.affinity_farther}
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


# --- reward ranking -----------------------------------------------------------------------------

@dataclass(frozen=True)
class TermRule:
    """``points`` per hit of any of ``terms`` in a page's title or text (word boundaries,
    case-insensitive; a term of several words matches with any whitespace between them)."""

    points: float = 1.0
    terms: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.points < 0:
            raise ConfigError("reward.term_rules[].points must not be negative")
        if not self.terms or any(not t.strip() for t in self.terms):
            raise ConfigError("reward.term_rules[].terms must be a non-empty list of non-empty terms")


def _default_term_rules() -> list[TermRule]:
    return [
        TermRule(points=1.0, terms=["job", "jobs", "career", "hr"]),
        TermRule(points=10.0, terms=["hrms", "taleo", "jobvite", "icims"]),
    ]


@dataclass(frozen=True)
class RewardConfig:
    """Reward-distribution ranking (``linkgraph reward``); README "Reward ranking" has the rules.

    Scores are non-negative reals ("points").  Each round every page sends ``send_fraction`` of its
    score to its neighbours in both link directions (in proportion to link weights), then every
    score shrinks by ``forget_rate``, then the round's rewards are added.  A link weighs
    ``link_type_weights[type] * position_weights[position]``, 1 for a type or position not listed.
    A term is counted at most ``max_hits_per_term`` times per page.  ``feed_url_pattern`` (a Java
    regex, searched in the canonical feed URL) restricts which feed links count; null: all.
    A page new to the scores starts with ``new_page_fraction`` of each scored source's score times
    its weight share of that source's out-links (a seed page: ``seed_score`` plus that).  After the
    rounds, pages below ``delete_threshold`` are pruned (unless ``prune`` is false) except seeds;
    a run in which no page scored above 0 prunes nothing, and a prune of more than
    ``max_prune_share`` of the pages is refused (the run stops with exit 2, nothing pruned).
    ``in_run``: whether ``linkgraph run`` ranks by reward: ``sample`` (only on the built-in
    sample), ``always`` or ``never``.
    """

    rounds: int = 10
    send_fraction: float = 0.1
    forget_rate: float = 0.1
    rewards: bool = True
    term_rules: list[TermRule] = field(default_factory=_default_term_rules)
    max_hits_per_term: int = 3
    new_feed_points: float = 1000.0
    known_feed_points: float = 20.0
    feed_url_pattern: str | None = None
    link_type_weights: dict[str, float] = field(
        default_factory=lambda: {"NOFOLLOW": 0.0, "UGC": 0.0, "SPONSORED": 0.0})
    position_weights: dict[str, float] = field(default_factory=dict)
    new_page_fraction: float = 0.1
    seeds: list[str] = field(default_factory=list)
    seed_score: float = 1.0
    delete_threshold: float = 0.01
    prune: bool = True
    max_prune_share: float = 0.05
    in_run: str = "sample"

    def __post_init__(self) -> None:
        for name, known in (("link_type_weights", LINK_TYPES), ("position_weights", POSITIONS)):
            weights = {}
            for key, value in getattr(self, name).items():
                if key not in known:
                    raise ConfigError(f"unknown config key 'reward.{name}.{key}' (known: {', '.join(known)})")
                try:
                    weights[key] = float(value)
                except ValueError:
                    raise ConfigError(f"config key 'reward.{name}.{key}' must be a number, got {value!r}") from None
                if weights[key] < 0:
                    raise ConfigError(f"config key 'reward.{name}.{key}' must not be negative")
            object.__setattr__(self, name, weights)  # the loader hands mapping values over as strings
        if self.rounds < 0:
            raise ConfigError("reward.rounds must not be negative")
        for name in ("send_fraction", "forget_rate", "new_page_fraction", "max_prune_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"reward.{name} must be in [0, 1]")
        for name in ("new_feed_points", "known_feed_points", "seed_score", "delete_threshold"):
            if getattr(self, name) < 0:
                raise ConfigError(f"reward.{name} must not be negative")
        if self.max_hits_per_term < 1:
            raise ConfigError("reward.max_hits_per_term must be at least 1")
        if self.in_run not in ("sample", "always", "never"):
            raise ConfigError(f"reward.in_run must be sample, always or never, got {self.in_run!r}")
        if self.feed_url_pattern is not None:
            _check_regex(self.feed_url_pattern, "reward.feed_url_pattern")


def _check_regex(pattern: str, key: str) -> None:
    """A Java regex (Spark's ``rlike``) checked with Python's ``re``, which reads the common syntax
    the same way; Java-only constructs Python rejects (``\\p{...}`` classes) are let through."""
    try:
        re.compile(pattern)
    except re.error as exc:
        if "\\p" in pattern or "\\P" in pattern:
            return
        raise ConfigError(f"{key} is not a valid regular expression ({exc}): {pattern!r}") from None


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
class CentralityConfig:
    """Harmonic centrality with HyperBall (``linkgraph centrality``).

    ``registers``: HyperLogLog registers per counter (a power of 2, 16..65536); the relative
    standard error of each ball-size estimate is 1.04/sqrt(registers) (6.5% at 256, 3.3% at 1024);
    balls of up to 16 members (sqrt(registers)/2 above 1024) are counted exactly.  A counter is
    registers + 8 × that limit + 4 bytes (388 at 256).
    ``block_max_nodes``: nodes per block (counters of a block live in one task); a graph of one
    block is iterated inside one task when ``single_task``.  ``max_iter`` caps the iterations
    (HyperBall stops by itself when no counter changes, after about the graph's diameter).
    ``checkpoint_every``: iterations between lineage cuts of the block state.
    """

    registers: int = 256
    block_max_nodes: int = 1_000_000
    single_task: bool = True
    max_iter: int = 1000
    checkpoint_every: int = 5

    def __post_init__(self) -> None:
        if self.registers < 16 or self.registers > 65536 or self.registers & (self.registers - 1):
            raise ConfigError(f"centrality.registers must be a power of 2 in 16..65536, got {self.registers}")
        if self.block_max_nodes <= 0 or self.max_iter <= 0:
            raise ConfigError("centrality.block_max_nodes and centrality.max_iter must be positive")
        if self.checkpoint_every <= 0:
            raise ConfigError(f"centrality.checkpoint_every must be positive, got {self.checkpoint_every}")


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
