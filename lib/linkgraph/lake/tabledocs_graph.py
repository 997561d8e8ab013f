"""What ``docs/tables.md`` says about the tables built from ``links`` and a rank run: the analysis
tables (indexes, host and domain graphs, domain authority, link farms, syndication networks), page
flags, the compressed link tables and the centrality tables.  One :class:`TableDoc` each, the
``doc`` of its declaration in ``linkgraph.lake.tables``; the rest of the page and the fields are
described in ``linkgraph.lake.tabledocs``.
"""

from __future__ import annotations

from linkgraph.lake import schemas as S
from linkgraph.lake.tabledocs import TableDoc

# --- analysis tables ----------------------------------------------------------------------------

_INDEX = """
    One row per page and chunk: the pages it links to (`forward_index`) or that link to it
    (`reverse_index`). Range-partitioned and sorted by `page_id`, so a single-page lookup reads one
    file."""
_INDEX_COLUMNS = {
    "page_id": "the page",
    "chunk": "0, 1, … in id order; a list longer than `analysis.max_list_entries` takes several chunks",
}
FORWARD_INDEX = TableDoc(
    row="page with out-links, per chunk", section="forward_index and reverse_index", about=_INDEX,
    columns=_INDEX_COLUMNS | {"target_ids": "distinct neighbour page ids, ascending",
                              "target_count": "the page's total, on every chunk row"},
)
REVERSE_INDEX = TableDoc(
    row="page with in-links, per chunk", section="forward_index and reverse_index", about=_INDEX,
    columns=_INDEX_COLUMNS | {"source_ids": "distinct neighbour page ids, ascending",
                              "source_count": "the page's total, on every chunk row"},
)

ANCHOR_INDEX = TableDoc(
    row="linked page",
    about="One row per linked page: its incoming anchor texts, normalised and counted. Laid out by `page_id`.",
    columns={
        "page_id": "the linked page",
        "anchors": "most links first (ties by anchor), at most `analysis.anchor_cap`: `anchor` string (normalised), "
                   "`links` long (incoming links carrying it), `linking_domains` long (distinct registered domains "
                   "of those links' pages), `example_context` string (one such link's context window)",
        "distinct_anchors": "usable anchors before the cap",
        "anchored_links": "incoming links with a usable anchor",
        "empty_anchors": "incoming links without anchor text",
        "boilerplate_anchors": "incoming links with an `analysis.boilerplate_anchors` anchor",
    },
)

HOSTS = TableDoc(
    row="host",
    about="One row per host, range-partitioned by name. Every link counts once, whatever its type.",
    columns={
        "host": "reversed host (`com.example.www`; an IP address as it is)",
        "domain": "reversed registered domain",
        "pages": "pages on the host",
        "out_links": "links from its pages",
        "in_links": "links to its pages",
        "internal_links": "links with both ends on the host",
        "external_out_links": "links from the host to other hosts",
        "external_in_links": "links from other hosts",
        "linking_domains": "other registered domains linking in",
    },
)
DOMAINS = TableDoc(
    row="registered domain", writers={"flags": "adds spam columns"},
    about="""
        One row per registered domain, range-partitioned by name. Every link counts once, whatever its
        type.""",
    columns={
        "domain": "reversed registered domain (`uk.co.bbc`; an IP address as it is)",
        "hosts": "hosts of the domain",
        "pages": "pages of the domain",
        "out_links": "links from its pages",
        "in_links": "links to its pages",
        "internal_links": "links with both ends in the domain",
        "external_out_links": "links from the domain to other domains",
        "external_in_links": "links from other domains",
        "linking_domains": "other registered domains linking in",
        "rank": "Σ PageRank of the domain's pages",
        "trust_rank": "Σ trust rank of the domain's pages",
        "spam_mass": "(Σ rank − Σ trust rank) / Σ rank",
        "spam_suspect": "`spam_mass` > `analysis.spam_mass_threshold` and `rank` above the median over domains",
    },
    added=S.DOMAIN_SPAM,
    added_about="""
        When the latest rank run has a trust vector (`scores.trusted_seeds`), `flags` rewrites the table
        once with four more columns (keeping the analysis' recorded inputs):""",
)

_EDGES = """
    One row per ordered pair of distinct hosts (`src_host`, `dst_host`) or registered domains
    (`src_domain`, `dst_domain`) with at least one link, names reversed."""
_EDGE_COLUMNS = {
    "links": "links between them",
    "followed_links": "links of types PageRank follows (not in `rank.exclude_link_types`)",
    "src_pages": "distinct linking pages",
    "followed_src_pages": "distinct linking pages with a followed link",
    "dst_pages": "distinct linked pages",
}
HOST_LINKS = TableDoc(
    row="ordered pair of distinct hosts", section="host_links and domain_links", about=_EDGES,
    columns={"src_host": "linking node", "dst_host": "linked node", **_EDGE_COLUMNS},
)
DOMAIN_LINKS = TableDoc(
    row="ordered pair of distinct domains", section="host_links and domain_links", about=_EDGES,
    columns={"src_domain": "linking node", "dst_domain": "linked node", **_EDGE_COLUMNS},
)

DOMAIN_AUTHORITY = TableDoc(
    row="domain",
    about="One row per domain: PageRank over the weighted domain graph, scaled.",
    columns={
        "domain": "reversed registered domain",
        "authority": "PageRank over `domain_links`; sums to 1",
        "authority_position": "1 = highest",
        "authority_score": "0–10: 10 × the fraction of other domains with strictly lower authority",
        "domain_authority": "`authority_score` / 10, in [0, 1]: the seed-score input",
        "run_id": "the computation's run id",
    },
)

LINK_FARMS = TableDoc(
    row="link-farm domain",
    about="""
        One row per domain with at least `analysis.link_farm_min_links` links to other domains, more than
        `analysis.link_farm_share` of which go to one domain.""",
    columns={
        "domain": "the farm domain",
        "target_domain": "the domain most of its links go to",
        "links_to_target": "links to that domain",
        "external_out_links": "links to other domains",
        "share": "`links_to_target` / `external_out_links`",
    },
)

SYNDICATION_NETWORKS = TableDoc(
    row="domain in a network",
    about="""
        One row per domain in a reciprocal pair (each sends the other at least
        `analysis.syndication_min_links` links), grouped into networks (connected components).""",
    columns={
        "network_id": "the network's smallest domain name: stable across runs",
        "domain": "member domain",
        "network_size": "domains in the network",
        "partners": "the domain's reciprocal high-volume partners, sorted by name",
    },
)


# --- page flags -----------------------------------------------------------------------------------

PAGE_FLAGS = TableDoc(
    row="page per rank run",
    about="""
        One row per page per rank run (`run_id` of the run the `pagerank` table holds). Written by the
        `flags` step (`linkgraph flags`, and within `linkgraph run`, `linkgraph analyze` and
        `linkgraph scores`): the rows of that run are replaced atomically, and runs beyond
        `retention.runs` deleted in the same commit. Laid out by `page_id`.""",
    columns={
        "run_id": "the rank run",
        "page_id": "the flagged page",
        "url": "the page's URL",
        "rank": "the page's rank in vector 0",
        "rank_threshold": "mean + `analysis.important_sigmas` × σ (population) of the run's vector-0 ranks",
        "important": "`rank` > `rank_threshold`",
        "internal_in_links": "links from other pages of the same registered domain",
        "orphan": "no internal in-link, and not a host's root page (`scheme://host/`)",
        "link_farm_domain": "the page's domain is in `link_farms`",
        "link_farm_target": "that farm's target domain",
        "syndication_network": "`network_id` of the page's domain",
        "trust_rank": "γ × the trust vector (γ = `analysis.good_fraction`); null when the run has no trust vector",
        "spam_mass": "(rank − trust_rank) / rank, at most 1; null without a trust vector",
        "spam_suspect": "`spam_mass` > `analysis.spam_mass_threshold` and `rank` above the median; false without "
                        "a trust vector",
    },
)


# --- compressed link tables ---------------------------------------------------------------------

# shown once for the four tables (``tabledocs.GROUPS``: the group's ``shared`` columns)
BUILD_COLUMNS = {
    "links_version": "the Delta version of `links` encoded",
    "block_size": "vertex positions per block (`compress.block_size`)",
    "window_size": "`compress.window_size`",
    "max_ref_count": "`compress.max_ref_count`",
    "min_interval_length": "`compress.min_interval_length`",
    "residual_code": "gamma, delta or zetaK",
    "block_max_arcs": "arcs per block; a longer list is alone in its block",
    "vertex_order": "`url_key`: vertices are host-order positions",
    "pages_version": "the Delta version of `pages` ordered by (−1: none)",
}

_BLOCKS = """
    One row per block of positions [`first_id`, `first_id` + `node_count`): the successor lists
    (forward: the destinations of each source; reverse: the sources of each destination) as one
    BVGraph bit stream, most significant bit first. A block lies within one range
    [k × `block_size`, (k + 1) × `block_size`) and holds fewer than 2 × `block_max_arcs` arcs, except a
    list of `block_max_arcs` or more, which is alone in its block."""
_BLOCK_COLUMNS = {
    "block_id": "= `first_id`",
    "first_id": "first position of the block",
    "node_count": "positions in the block (up to its last one with a list)",
    "arc_count": "arcs in the block",
    "bit_length": "bits of `data`",
    "data": "the bit stream",
    **BUILD_COLUMNS,
}
LINKS_COMPRESSED_FORWARD = TableDoc(
    row="block of vertices", section="links_compressed_forward and links_compressed_reverse", about=_BLOCKS,
    columns=_BLOCK_COLUMNS,
)
LINKS_COMPRESSED_REVERSE = TableDoc(
    row="block of vertices", section="links_compressed_forward and links_compressed_reverse", about=_BLOCKS,
    columns=_BLOCK_COLUMNS,
)

LINKS_COMPRESSED_OFFSETS = TableDoc(
    row="direction and block",
    about="""
        Per direction and block, the bit offset of every list in the block's stream (`node_count` + 1
        values, the last one the stream length), as gamma-coded gaps like WebGraph's `.offsets` file.""",
    columns={
        "direction": "`forward` or `reverse`",
        "block_id": "the block of that direction's `links_compressed_forward` or `links_compressed_reverse`",
        "first_id": "first position of the block",
        "node_count": "positions in the block",
        "bit_length": "bits of `offsets`",
        "offsets": "gamma-coded offset gaps",
        **BUILD_COLUMNS,
    },
)

LINKS_COMPRESSED_ORDER = TableDoc(
    row="kind and chunk of keys",
    about="""
        The vertex order, in chunks of the key range [`first_id`, `first_id` + `block_size`):
        `page_to_position` rows list the page ids of the chunk that have a position, with their
        positions; `position_to_page` rows the positions of the chunk with their page ids.""",
    columns={
        "kind": "`page_to_position` or `position_to_page`",
        "first_id": "first key of the chunk",
        "node_count": "(key, value) pairs in the chunk",
        "bit_length": "bits of `data`",
        "data": "per pair, gamma-coded: the gap from the previous key (from `first_id` for the first; minus one "
                "after it) and the signed difference from the previous value (from 0 for the first, folded onto "
                "the naturals)",
        **BUILD_COLUMNS,
    },
)


# --- centrality tables ----------------------------------------------------------------------------

_CENTRALITY = "One row per node of the host, domain or page graph; replaced by each run of that level."
_CENTRALITY_COLUMNS = {
    "harmonic": "harmonic centrality (HyperBall estimate)",
    "rank": "position by harmonic centrality (1 = most central; ties by name)",
    "pagerank": "PageRank over the same graph",
    "pagerank_rank": "position by PageRank",
    "iterations": "HyperBall iterations of the run",
    "run_id": "the centrality run",
}
# by level (``linkgraph centrality --level``): the node column's name and meaning
_NODES = {"host": ("host", "reversed host"), "domain": ("domain", "reversed registered domain"),
          "page": ("page_id", "page id")}
CENTRALITY = {
    level: TableDoc(
        row=level, section="host_centrality, domain_centrality, page_centrality", about=_CENTRALITY,
        writers={"centrality": f"`--level {level}`"}, columns={node: meaning, **_CENTRALITY_COLUMNS})
    for level, (node, meaning) in _NODES.items()
}

CENTRALITY_RUNS = TableDoc(
    row="centrality run",
    about="One row per centrality run, appended.",
    columns={
        "run_id": "the centrality run",
        "started_at": "run start",
        "level": "host, domain or page",
        "registers": "HyperLogLog registers per counter",
        "relative_standard_error": "1.04 / √registers",
        "nodes": "nodes of the graph",
        "arcs": "arcs of the graph",
        "iterations": "HyperBall iterations run",
        "converged": "no counter changed in the last iteration",
        "seconds": "run time",
        "history": "per iteration: `iteration` int (the distance t whose ball was added), `changed_counters` long, "
                   "`harmonic_added` double, `seconds` double",
    },
)
