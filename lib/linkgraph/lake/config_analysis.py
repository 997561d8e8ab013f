"""Config sections of the steps that analyse the link graph beyond PageRank: ``analysis``
(indexes, host and domain graphs, page flags: ``linkgraph analyze`` / ``flags``), ``scores`` (seed
scores, scope and the frontier), ``reward`` (reward ranking, with its term rules) and ``centrality``
(harmonic centrality).

Frozen dataclasses like the other sections, each key declared with ``key``;
``linkgraph.lake.config.Config`` holds them and its loader builds them from YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linkgraph.errors import ConfigError
from linkgraph.lake.configkey import key
from linkgraph.lake.names import LINK_TYPES, POSITIONS

DEFAULT_BOILERPLATE_ANCHORS = [
    "click here", "here", "click", "read more", "more", "learn more", "link", "this", "this page",
    "continue", "continue reading", "details", "more info", "website", "go", "next", "previous", "back",
]


# No row of a table the project writes holds more array entries than this (analysis.max_list_entries).
DEFAULT_MAX_LIST_ENTRIES = 65_536


# how domain authority weighs a domain-graph edge (analysis.authority_weight, analyze --authority-weight)
AUTHORITY_WEIGHTS = ("linking_pages", "links", "none")


@dataclass(frozen=True)
class AnalysisConfig:
    """Indexes, host and domain graphs, link farms, syndication and page flags (``linkgraph analyze``)."""

    anchor_cap: int = key(
        50, "anchors kept per page in `anchor_index`, most frequent first", "anchors per page, > 0")
    boilerplate_anchors: list[str] = key(
        DEFAULT_BOILERPLATE_ANCHORS, "anchors that say nothing about the target: counted, not indexed",
        "normalised anchor texts")
    link_farm_share: float = key(
        0.9, "a domain is a link farm when more than this share of its outgoing links go to one target domain "
        "and at least `link_farm_min_links` of its links leave it", "share in (0, 1)")
    link_farm_min_links: int = key(
        10, "a domain is a link farm only when at least this many of its links leave it (and "
        "`link_farm_share` of them go to one target domain)", "links, > 0")
    syndication_min_links: int = key(
        20, "two domains form a syndication pair when each sends the other at least this many links", "links, > 0")
    authority_weight: str = key(
        "linking_pages", "weight of a domain-graph edge in domain authority: its distinct followed linking pages, "
        "its followed links, or once; `--authority-weight` of `linkgraph analyze` overrides",
        "`linking_pages`, `links` or `none`")
    authority_max_iter: int = key(100, "iteration cap of the domain authority PageRank", "iterations")
    important_sigmas: float = key(
        2.0, "a page is `important` when its rank exceeds mean + this many σ of its run", "standard deviations")
    max_list_entries: int = key(
        DEFAULT_MAX_LIST_ENTRIES, "the most array entries any written row holds: forward and reverse index lists "
        "are stored in chunks of this many, other lists are capped at it", "array entries, > 0")
    spam_mass_threshold: float = key(
        0.7, "a page or domain is `spam_suspect` when its relative spam mass exceeds this and its PageRank is "
        "above the median (needs `scores.trusted_seeds`)", "share, < 1")
    good_fraction: float = key(
        1.0, "γ: share of the good web the trusted core stands for; scales the trust vector into the core-based "
        "PageRank (`trust_rank` = γ · TrustRank, `linkgraph.graph.spam`)", "share in (0, 1]")

    def __post_init__(self) -> None:
        if self.anchor_cap <= 0:
            raise ConfigError("analysis.anchor_cap must be positive")
        if self.max_list_entries <= 0:
            raise ConfigError(f"analysis.max_list_entries must be positive, got {self.max_list_entries}")
        if not 0.0 < self.link_farm_share < 1.0:
            raise ConfigError("analysis.link_farm_share must be in (0, 1)")
        if self.link_farm_min_links <= 0 or self.syndication_min_links <= 0:
            raise ConfigError("analysis.link_farm_min_links and analysis.syndication_min_links must be positive")
        if self.authority_weight not in AUTHORITY_WEIGHTS:
            raise ConfigError(f"analysis.authority_weight must be one of {', '.join(AUTHORITY_WEIGHTS)}, "
                              f"got {self.authority_weight!r}")
        if not self.spam_mass_threshold < 1.0:
            raise ConfigError("analysis.spam_mass_threshold must be below 1 (relative spam mass is at most 1), "
                              f"got {self.spam_mass_threshold}")
        if not 0.0 < self.good_fraction <= 1.0:
            raise ConfigError(f"analysis.good_fraction must be in (0, 1], got {self.good_fraction}")


@dataclass(frozen=True)
class ScoresConfig:
    """Seed scores, scope and the frontier (``linkgraph scores`` / ``frontier``; formulas in
    ``linkgraph.graph.scoring``), and the limits of ``linkgraph ingest-sitemaps``."""

    seeds: list[str] = key(
        [], "seed URLs, canonicalised like ingest; hop depth, scope and the frontier are measured from them "
        "(`linkgraph run` on the built-in sample uses the sample's seeds when this is empty)", "URLs")
    trusted_seeds: list[str] = key(
        [], "trusted pages (canonicalised like `seeds`): a uniform PageRank run also computes their trust vector "
        "(TrustRank) in the same pass, from which `page_flags` and `domains` get their spam mass", "URLs")
    hop_limit: int = key(50, "rounds of the hop-depth search (at most `max_depth` are run)", "rounds, > 0")
    max_depth: int = key(5, "depth where the depth factor reaches 0: no deeper page is in scope", "links, > 0")
    weight_in_links: float = key(0.3, "seed-score weight of the normalised in-link count", "weight")
    weight_domain_authority: float = key(0.3, "seed-score weight of domain authority", "weight")
    weight_sitemap_priority: float = key(0.2, "seed-score weight of the sitemap priority", "weight")
    weight_depth: float = key(0.2, "seed-score weight of 1/(hop depth + 1)", "weight")
    unlisted_priority: float = key(0.0, "sitemap priority of a page no sitemap lists", "in [0, 1]")
    external_authority_weight: float = key(
        0.0, "share of `external_authority` blended into domain authority where it knows the domain", "in [0, 1]")
    scope_strategy: str = key(
        "linked_domains", "how far scope reaches: domains linked from seed domains, the seeds' registered domains "
        "only, or the seeds' hosts only", "`linked_domains`, `registered_domain` or `host`")
    affinity_seed_host: float = key(1.0, "domain affinity of a page on a seed's host", "affinity")
    affinity_registered_domain: float = key(
        0.8, "domain affinity of a page elsewhere on a seed's registered domain", "affinity")
    affinity_one_hop: float = key(0.3, "domain affinity of a page on a domain one hop from a seed domain", "affinity")
    affinity_farther: float = key(0.1, "domain affinity of a page farther away or unreachable", "affinity")
    in_scope_threshold: float = key(0.3, "a page is in scope when affinity × depth factor reaches this", "score")
    frontier_priority: str = key(
        "seed_score", "what orders the frontier (`personalized_pagerank`: vector `frontier_vector` of the latest "
        "run)", "`seed_score`, `pagerank`, `personalized_pagerank` or `reward`")
    frontier_vector: int = key(
        0, "the vector of the latest personalised run used with `personalized_pagerank`", "vector id")
    sitemap_max_bytes: int = key(
        50 * 1024 * 1024, "a sitemap file larger than this is rejected unread, and one whose decompressed bytes "
        "pass it is rejected there while it is decompressed (OVERSIZED_FIELD)", "bytes, > 0")
    sitemap_max_line_bytes: int = key(
        1024 * 1024, "a longer line of a text sitemap is one OVERSIZED_FIELD reject, read past without being "
        "held; the rest of the file is kept", "bytes, > 0")

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

    @property
    def weights(self) -> dict[str, float]:
        return {"in_links": self.weight_in_links, "domain_authority": self.weight_domain_authority,
                "sitemap_priority": self.weight_sitemap_priority, "depth": self.weight_depth}

    @property
    def affinity(self) -> dict[str, float]:
        return {"seed_host": self.affinity_seed_host, "registered_domain": self.affinity_registered_domain,
                "one_hop": self.affinity_one_hop, "farther": self.affinity_farther}


# --- reward ranking -----------------------------------------------------------------------------

@dataclass(frozen=True)
class TermRule:
    """One rule of ``reward.term_rules``: points per hit of any of its terms in a page's title or text."""

    points: float = key(1.0, "points per hit of any of `terms`", "points, >= 0")
    terms: list[str] = key(
        [], "words or phrases matched at word boundaries, case-insensitive, in a page's title or text (a term of "
        "several words matches with any whitespace between them)", "non-empty list of non-empty terms")

    def __post_init__(self) -> None:
        if self.points < 0:
            raise ConfigError("reward.term_rules[].points must not be negative")
        if not self.terms or any(not t.strip() for t in self.terms):
            raise ConfigError("reward.term_rules[].terms must be a non-empty list of non-empty terms")


DEFAULT_TERM_RULES = [
    TermRule(points=1.0, terms=["job", "jobs", "career", "hr"]),
    TermRule(points=10.0, terms=["hrms", "taleo", "jobvite", "icims"]),
]


@dataclass(frozen=True)
class RewardConfig:
    """Reward-distribution ranking (``linkgraph reward``); scores are non-negative reals ("points")."""

    rounds: int = key(10, "distribution rounds per run; `--rounds` overrides", "rounds, >= 0")
    send_fraction: float = key(
        0.1, "share of its score each page sends to its neighbours per round, in both link directions, in "
        "proportion to link weights", "in [0, 1]")
    forget_rate: float = key(
        0.1, "every score shrinks by this share each round (after the sending, before the rewards)", "in [0, 1]")
    rewards: bool = key(True, "add the rounds' rewards; false: spread and forget only (`--no-rewards`)")
    term_rules: list[TermRule] = key(
        DEFAULT_TERM_RULES, "`points` (>= 0) per hit of any of `terms` (non-empty) in a page's title or text, "
        "whole words, case-insensitive; a term of several words matches with any whitespace between them")
    max_hits_per_term: int = key(3, "a term counts at most this often per page", "hits, >= 1")
    new_feed_points: float = key(1000.0, "reward for discovering a feed no run has seen", "points, >= 0")
    known_feed_points: float = key(20.0, "reward for a known feed", "points, >= 0")
    feed_url_pattern: str | None = key(
        None, "only feed links whose canonical feed URL it matches (searched, as Spark's `rlike`) count; null: "
        "all", "Java regex")
    link_type_weights: dict[str, float] = key(
        {"NOFOLLOW": 0.0, "UGC": 0.0, "SPONSORED": 0.0}, "link weight factor by type; 1 for a type not listed "
        "(a link weighs its type's weight times its position's)", "link type to weight >= 0")
    position_weights: dict[str, float] = key(
        {}, "link weight factor by position (NAV, CONTENT, FOOTER, SIDEBAR); 1 when not listed",
        "position to weight >= 0")
    new_page_fraction: float = key(
        0.1, "a page new to the scores starts with this share of each scored source's score times its weight "
        "share of that source's out-links (a seed page: `seed_score` plus that)", "in [0, 1]")
    seeds: list[str] = key([], "seed pages: start with `seed_score` and are never pruned", "URLs")
    seed_score: float = key(1.0, "starting score of a seed page", "points, >= 0")
    delete_threshold: float = key(
        0.01, "after the rounds, pages below this are pruned (seeds excepted); a run in which no page scored above "
        "0 prunes nothing", "points, >= 0")
    prune: bool = key(True, "prune at all (`--no-prune`: false)")
    max_prune_share: float = key(
        0.05, "a prune of more pages than this share is refused: the run stops with exit code 2 before it writes "
        "its results, nothing is pruned, and the next run completes it under the config then in force "
        "(1: no limit)", "share of the pages, in [0, 1]")
    in_run: str = key(
        "sample", "whether `linkgraph run` runs the reward step: only on the built-in sample, always, or never",
        "`sample`, `always` or `never`")

    def __post_init__(self) -> None:
        for name, known in (("link_type_weights", LINK_TYPES), ("position_weights", POSITIONS)):
            weights = {}
            for entry, value in getattr(self, name).items():
                if entry not in known:
                    raise ConfigError(f"unknown config key 'reward.{name}.{entry}' (known: {', '.join(known)})")
                try:
                    weights[entry] = float(value)
                except ValueError:
                    raise ConfigError(f"config key 'reward.{name}.{entry}' must be a number, got {value!r}") from None
                if weights[entry] < 0:
                    raise ConfigError(f"config key 'reward.{name}.{entry}' must not be negative")
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


# the edge weights of the host and domain PageRank (centrality.weight, --weight)
CENTRALITY_WEIGHTS = ("none", "links", "pages")


@dataclass(frozen=True)
class CentralityConfig:
    """Harmonic centrality with HyperBall (``linkgraph centrality``) and the host and domain PageRank's
    edge weight."""

    registers: int = key(
        256, "relative standard error of each ball-size estimate 1.04/sqrt(registers): 6.5 % at 256, 3.3 % at "
        "1024; balls of up to 16 members (sqrt(registers)/2 above 1024) are counted exactly; a counter takes "
        "registers + 8 × that limit + 4 bytes (388 at 256); `--registers` overrides",
        "HyperLogLog registers per counter, power of 2 in 16..65536")
    block_max_nodes: int = key(
        1_000_000, "most nodes per block (a block's counters live in one task); blocks are also sized so that "
        "their counters take at most half of `rank.block_bytes`, and a graph whose block task would need more "
        "than `rank.block_bytes` is refused before any iteration ([scaling](scaling.md))", "nodes, > 0")
    single_task: bool = key(True, "a graph of one block is iterated inside one task")
    max_iter: int = key(
        1000, "iteration cap (HyperBall stops by itself when no counter changes, after about the graph's "
        "diameter)", "iterations, > 0")
    checkpoint_every: int = key(
        5, "iterations between reliable checkpoints (lineage cuts) of the block state (a lost executor costs at "
        "most that many)", "iterations, > 0")
    weight: str = key(
        "none", "the edge weight of the host and domain graphs' PageRank: `none`, each linked pair once; `links`, "
        "the page links between the two (`host_links.links`); `pages`, the distinct pages linking "
        "(`src_pages`); a source's rank is split in proportion to its edges' weights (networkx's weighted "
        "PageRank). Harmonic centrality counts hops, unweighted; the page graph has no weights (refused with "
        "exit 2); `--weight` overrides", "`none`, `links` or `pages`")
    max_shuffle_bytes: int = key(
        10 * (1 << 40), "a graph over several blocks whose run would shuffle more than this (the block states "
        "and merged counters of every iteration, for the iterations a web graph's balls grow: "
        "`linkgraph plan` prints it per level) is refused before any iteration, with the bytes and core-hours "
        "it would need and the levels that fit", "bytes, > 0; 10 TiB")

    def __post_init__(self) -> None:
        if self.max_shuffle_bytes <= 0:
            raise ConfigError(f"centrality.max_shuffle_bytes must be positive, got {self.max_shuffle_bytes}")
        if self.registers < 16 or self.registers > 65536 or self.registers & (self.registers - 1):
            raise ConfigError(f"centrality.registers must be a power of 2 in 16..65536, got {self.registers}")
        if self.block_max_nodes <= 0 or self.max_iter <= 0:
            raise ConfigError("centrality.block_max_nodes and centrality.max_iter must be positive")
        if self.checkpoint_every <= 0:
            raise ConfigError(f"centrality.checkpoint_every must be positive, got {self.checkpoint_every}")
        if self.weight not in CENTRALITY_WEIGHTS:
            raise ConfigError(f"centrality.weight must be one of {', '.join(CENTRALITY_WEIGHTS)}, got {self.weight!r}")
