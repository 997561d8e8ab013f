"""Config sections of the steps that analyse the link graph beyond PageRank: ``analysis``
(indexes, host and domain graphs, page flags: ``linkgraph analyze`` / ``flags``), ``scores`` (seed
scores, scope and the frontier), ``reward`` (reward ranking, with its term rules) and ``centrality``
(harmonic centrality).

Frozen dataclasses like the other sections; ``linkgraph.lake.config.Config`` holds them and its
loader builds them from YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from linkgraph.errors import ConfigError
from linkgraph.lake.names import LINK_TYPES, POSITIONS
from linkgraph.urls import canonical_seed_urls

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
    """Indexes, host/domain graphs and page flags (``linkgraph analyze``).

    ``anchor_cap``: anchors kept per page in ``anchor_index`` (most frequent first).
    ``max_list_entries``: the most array entries any written row holds: the forward and reverse
    indexes store a page's ids in chunks of this many; other lists are capped at it.
    ``boilerplate_anchors``: normalised anchors that say nothing about the target; counted, not indexed.
    A domain is a link farm when at least ``link_farm_min_links`` of its links leave it and more than
    ``link_farm_share`` of them go to one target domain.  Two domains form a syndication pair when
    each sends the other at least ``syndication_min_links`` links.  ``authority_weight`` weights a
    domain-graph edge by ``linking_pages`` (distinct source pages), ``links`` or ``none`` (once).  A page is
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


# the edge weights of the host and domain PageRank (centrality.weight, --weight)
CENTRALITY_WEIGHTS = ("none", "links", "pages")


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
    ``weight``: the edge weight of the host and domain graphs' PageRank (``CENTRALITY_WEIGHTS``):
    ``none``, every linked pair once (a source's rank split evenly over the hosts it links to);
    ``links``, the page links from one to the other; ``pages``, the distinct pages linking.  A
    source's rank is split in proportion to its edges' weights.  Harmonic centrality counts hops,
    unweighted; the page graph has no weights (a page links to another once).
    """

    registers: int = 256
    block_max_nodes: int = 1_000_000
    single_task: bool = True
    max_iter: int = 1000
    checkpoint_every: int = 5
    weight: str = "none"

    def __post_init__(self) -> None:
        if self.registers < 16 or self.registers > 65536 or self.registers & (self.registers - 1):
            raise ConfigError(f"centrality.registers must be a power of 2 in 16..65536, got {self.registers}")
        if self.block_max_nodes <= 0 or self.max_iter <= 0:
            raise ConfigError("centrality.block_max_nodes and centrality.max_iter must be positive")
        if self.checkpoint_every <= 0:
            raise ConfigError(f"centrality.checkpoint_every must be positive, got {self.checkpoint_every}")
        if self.weight not in CENTRALITY_WEIGHTS:
            raise ConfigError(f"centrality.weight must be one of {', '.join(CENTRALITY_WEIGHTS)}, got {self.weight!r}")
