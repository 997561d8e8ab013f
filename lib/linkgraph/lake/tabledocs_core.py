"""What ``docs/tables.md`` says about the core tables, the rankers' tables, the seed scores and the
frontier, and the reward tables: one :class:`TableDoc` each, the ``doc`` of its declaration in
``linkgraph.lake.tables``.  The fields and the rest of the page: ``linkgraph.lake.tabledocs``; the
tables built from ``links`` (analysis, page flags, compressed links, centrality):
``linkgraph.lake.tabledocs_graph``.  No pyspark is imported here.
"""

from __future__ import annotations

from linkgraph.lake.tabledocs import TableDoc

# --- core tables --------------------------------------------------------------------------------

PAGES = TableDoc(
    row="canonical URL (node id in an id lake)", unique=("url",),
    writers={"reward": "prune deletes, `--undo-prune` re-inserts"},
    about="""
        One row per canonical URL. Written by `ingest`: a MERGE by `url` inserts new pages and widens the
        sightings of known ones (an arc list or a Common Crawl graph merges by `page_id`). New pages get
        ids `max(page_id)+1, …` in `url_key` order, so a host's new pages are contiguous and sorted;
        existing ids never change. The reward prune deletes pruned pages, `reward --undo-prune`
        re-inserts them.""",
    columns={
        "page_id": "dense page id",
        "url": "canonical URL; null in an arc-list lake",
        "host": "lower-case host (IDNA ASCII form)",
        "registered_domain": "registered domain by the Public Suffix List, private section included unless "
                             "`urls.psl_private: false` (the host itself for an IP address)",
        "url_key": "the URL with its host reversed, then `:port`, path and query, then ` https` for https URLs "
                   "(`edu.stanford.www/biology`): the id order",
        "first_seen_at": "earliest discovery of any link touching the page",
        "last_seen_at": "latest sighting of any link touching the page",
    },
    notes="""
        In an arc-list lake only `page_id` is set. A Common Crawl graph sets `url` = `http://<host>/`,
        `url_key` = `<reversed host>/` and no timestamps (see [crawl inputs](crawl-inputs.md)).

        The table's properties record the URL policy its URLs were canonicalised under: one
        `linkgraph.canonical.<key>` per key of the `urls` config section (`true`, `reject`, a path; empty
        for null) and `linkgraph.canonical.psl_version`, the Public Suffix List's version and SHA-256
        (see [configuration](configuration.md#urls)). `ingest` sets them and refuses a config
        with other keys; a table without them was written under the defaults.""",
)

LINKS = TableDoc(
    row="ordered page pair", writers={"reward": "prune deletes, `--undo-prune` re-inserts"},
    about="""
        One row per (`src_id`, `dst_id`). Written by `ingest`: a MERGE by the pair (links with an end at a
        page new in the batch through an insert-only MERGE); a newer sighting (later `last_seen_at`)
        replaces anchor, context, type and position, and every sighting widens the two timestamps. The
        reward prune deletes the links of pruned pages; `--undo-prune` re-inserts them.""",
    columns={
        "src_id": "linking page",
        "dst_id": "linked page",
        "anchor_text": "anchor text of the kept sighting",
        "context_window": "text around the link",
        "link_type": "INTERNAL, EXTERNAL, NOFOLLOW, UGC or SPONSORED (null in an arc-list lake)",
        "position": "NAV, CONTENT, FOOTER, SIDEBAR, or null when unknown",
        "discovered_at": "earliest sighting",
        "last_seen_at": "latest sighting",
    },
)

REJECTS = TableDoc(
    row="input record (or file, entry, link) that could not be used", writers={"reward": "`--signals`"},
    about="""
        Every input record that could not be used, with its raw values as strings, a reason code and a
        detail text. Insert-only MERGE by `reject_id`, a SHA-256 of source, reason, detail and raw values:
        the same bad record is stored once however often it is ingested.""",
    columns={
        "reject_id": "SHA-256 (hex) of source, reason, detail and raw values",
        "source": "the input as Hadoop qualifies it (`file:/home/me/crawl.jsonl`); the sitemap file for sitemaps; "
                  "`<links location>@v<version>` for compress",
        "reason": "reason code (below)",
        "detail": "what was wrong, naming the field (and for crawl inputs the file, record id and byte offset)",
        **dict.fromkeys(("from_url", "to_url", "anchor_text", "context_window", "link_type", "rel", "position",
                         "discovered_at", "last_seen_at"), "raw value"),
        "rejected_at": "when the reject was first written",
    },
    notes="""
        What the raw columns hold besides edge records: node ids (arc lists) or the line (ccgraph) in
        `from_url`/`to_url`; the `<loc>` of a sitemap entry or the name of an authority row in `to_url`;
        for page signals the page URL in `from_url`, a bad feed link in `to_url` and the raw `fetched_at`
        in `last_seen_at`; for a WARC/WAT record the record's target URI in `from_url`; for compress the
        page ids in `from_url`/`to_url`. A line the format parser could not read is in `detail`.

        Every raw value and `detail` is stored as valid UTF-8 of at most 2,000 characters: a longer value,
        or one with invalid UTF-8, is stored clipped (invalid bytes as U+FFFD), and `detail` then ends with
        `; <column> stored clipped to 2000 characters of valid UTF-8; the original has <n> bytes, sha256
        <hex>` for each such column. `reject_id` hashes the original values.

        **Reason codes:**

        | reason | written by | meaning |
        |---|---|---|
        | `NULL_FIELD` | ingest, sitemaps, import-authority, page signals | a required URL or name is null or blank; a sitemap `<url>` without `<loc>` |
        | `MALFORMED_URL` | ingest, sitemaps, page signals | no `//` authority, no host, bad port, control characters, whitespace in the authority |
        | `UNSUPPORTED_SCHEME` | ingest, sitemaps, page signals | no scheme or not http/https |
        | `INVALID_HOST` | ingest, sitemaps, page signals | IDNA failure, bad label or length, bad IP literal, no known public suffix, bare top-level domain |
        | `OVERSIZED_FIELD` | ingest, sitemaps | URL over 2048, anchor over 1000, context over 500 characters (`ingest.max_*_length`); a sitemap URL over `ingest.max_url_length`; a sitemap over `scores.sitemap_max_bytes` or with more than 50,000 entries; a text sitemap line over `scores.sitemap_max_line_bytes` |
        | `INVALID_VALUE` | ingest, sitemaps, import-authority, ccgraph, compress | unknown position or link type, last seen before discovered; bad sitemap priority or changefreq; non-numeric or out-of-range authority; a graph edge to an unknown vertex; a page id outside [0, 2^62) |
        | `MALFORMED_TIMESTAMP` | ingest, sitemaps, page signals | not a timestamp, or outside [1990-01-01, 2100-01-01) for edges |
        | `MALFORMED_RECORD` | every reader | a record, line, file or gzip member that cannot be read; invalid UTF-8 in an edge record |
        | `SELF_LINK` | ingest | both ends the same page (unless `ingest.self_links: keep`) |
        | `DUPLICATE_MERGED` | ingest, page signals | another sighting of the same pair was kept (or signal of the same URL; a repeated arc, vertex or edge) |
        | `UNSAFE_XML` | sitemaps | a DTD, entity declaration or external reference |
        | `TRUNCATED_RECORD` | WARC/WAT | a record cut off by the end of the file |
        | `NON_HTML` | WARC | a 2xx response that is not HTML |
        | `UNDECODABLE_CHARSET` | WARC | text that cannot be decoded |
        | `OVERSIZED_PAGE` | WARC/WAT | a payload over `crawl.max_page_bytes` (a WAT record over `crawl.max_wat_record_bytes`), or HTML past its parse budget (`crawl.max_html_depth`, `max_parse_work`, `max_parse_elements`, `max_parse_bytes`, `max_parse_seconds`) |

        Details: [pipeline](pipeline.md) (edges, sitemaps, authority) and [crawl inputs](crawl-inputs.md).""",  # noqa: E501
)

PAGE_SIGNALS = TableDoc(
    row="crawled page", writers={"ingest": "WARC/WAT", "reward": "`--signals`"},
    about="""
        One row per crawled page (canonical URL): what the crawler's parser saw, the input of the reward
        ranker. Written by `ingest --format warc|wat` and by `linkgraph reward --signals PATH` (JSON lines
        of the same columns; format in [ranking](ranking.md)). MERGE by `url`: a row replaces the stored
        one when its values differ and it is not older (older: both `fetched_at` known and the new one
        earlier); writing the same signals twice touches no row. Within one batch the latest fetch of a
        URL is kept.""",
    columns={
        "url": "canonical page URL",
        "title": "the page's title (crawl inputs: the first `<title>`)",
        "text": "body text (crawl inputs cut it to `crawl.max_text_chars`, 20,000 characters; a WAT has none)",
        "feed_links": "absolute URLs of the XML feeds the page links to (crawl inputs: in document order; "
                      "`--signals`: canonical, distinct, sorted)",
        "fetched_at": "when the page was fetched (crawl inputs: the WARC-Date)",
    },
)

SITEMAPS = TableDoc(
    row="sitemap URL",
    about="""
        One row per canonical URL listed by a sitemap. Written by `ingest-sitemaps`: MERGE by `url`, a
        changed entry replaces the stored one, an unchanged one is not touched. Within one run a URL listed
        several times keeps the latest `lastmod`, then the highest priority.""",
    columns={
        "url": "canonical, like `pages.url`",
        "priority": "0.0–1.0; 0.5 when the entry gives none",
        "lastmod": "UTC",
        "changefreq": "always, hourly, daily, weekly, monthly, yearly or never",
        "sitemap": "the file the entry came from",
    },
)

EXTERNAL_AUTHORITY = TableDoc(
    row="external name and source",
    about="""
        Domain or host authority from outside sources. Written by `import-authority`: an import replaces
        every row of its format (`replaceWhere source`); a name listed twice keeps its best value.""",
    columns={
        "domain": "reversed registered domain or host (`com.example`, `com.example.www`)",
        "authority": "normalised to [0, 1]",
        "raw_value": "as given: Open PageRank 0–10, or the harmonic centrality of a Common Crawl rank file",
        "source": "`openpagerank` or `ccrank`",
    },
)


# --- ranking tables -----------------------------------------------------------------------------

PAGERANK = TableDoc(
    row="page and vector of the latest rank run",
    about="""
        The ranks of the latest rank run: one row per page and vector. Replaced by each
        `linkgraph pagerank` run.""",
    columns={
        "page_id": "the ranked page",
        "url": "the page's URL",
        "vector_id": "0 for uniform PageRank or the first personalisation vector, 1, 2, … for the others (1 is the "
                     "trust vector of a run with `scores.trusted_seeds`)",
        "rank": "the page's rank; each vector sums to 1",
        "run_id": "the rank run",
    },
)

RANK_RUNS = TableDoc(
    row="rank run",
    about="One row per rank run, appended.",
    columns={
        "run_id": "the rank run",
        "started_at": "run start",
        "engine": "fast, graphframes or naive",
        "damping": "damping factor (`rank.damping`)",
        "tol": "L1 tolerance",
        "max_iter": "iteration cap",
        "personalization": "null for a uniform run; `seeds:…` or `topics:…` (one comma-separated group per vector), "
                           "or `table:<name>`",
        "vectors": "vectors computed in one pass",
        "warm_start": "started from the previous run's ranks",
        "resumed_from": "the checkpointed iteration a resumed run continued from; null otherwise",
        "graph_version": "the Delta version of `links` ranked",
        "pages": "pages ranked",
        "links_followed": "links followed (types not in `rank.exclude_link_types`)",
        "iterations": "iterations run",
        "converged": "every vector reached `tol` before the cap",
        "vector_iterations": "iterations per vector",
        "final_l1_change": "L1 change of the last iteration",
        "seconds": "run time",
        "history": "per iteration: `iteration` int, `l1_change` double, `dangling_mass` double, `seconds` double, "
                   "`active_vectors` int",
    },
)

RANK_STATE = TableDoc(
    row="rank block of the last checkpoint", writers={"pagerank": "fast engine"}, write="per checkpoint",
    about="""
        The rank blocks of the last checkpointed iteration of a running fast-engine computation, so a
        killed run of the same computation resumes there. Each computation owns its rows: a checkpoint
        (`rank.checkpoint_every`) replaces its `run_key`'s rows only, so a uniform and a personalised
        run never overwrite each other's state; a finished run deletes its own rows and those saved more
        than a day ago (runs killed and never resumed).""",
    columns={
        "run_key": "hash of the computation (engine, parameters, `links` version, graph size, personalisation, "
                   "warm start, trusted seeds): only the same computation resumes",
        "iteration": "the checkpointed iteration",
        "active": "one boolean per vector: still iterating",
        "vector_iterations": "iterations per vector so far",
        "block": "vertex block",
        "ranks": "float64 ranks, vectors × block size",
        "saved_at": "when the checkpoint was written (UTC)",
    },
)


RANK_CHANGES = TableDoc(
    row="node of either of two compared runs",
    about="""
        What changed between two rank runs (`linkgraph diff --level page|host|domain [--from RUN] [--to RUN]`):
        one row per page, host or domain that either run ranked, both runs' scores and positions, and
        the kind of change. Replaced by each comparison; its commit records the two runs and the table
        versions they were read from. Page-level runs are PageRank runs (`pagerank`, one vector);
        host and domain runs are centrality runs (`<level>_centrality`: PageRank, or harmonic
        centrality with `--measure harmonic`).""",
    columns={
        "node": "the page's URL (its id as text in an id lake), the host's reversed name, or the domain",
        "page_id": "the page (page level; null for hosts and domains)",
        "from_score": "the score in the earlier run (null: the run did not rank the node)",
        "to_score": "the score in the later run (null: the run did not rank the node)",
        "from_position": "1-based position in the earlier run, highest score first, ties by `node`",
        "to_position": "1-based position in the later run",
        "position_change": "`from_position - to_position`: positive when the node moved up",
        "change": "`new` (only the later run), `vanished` (only the earlier), `entered` or `left` (the top K, "
                  "`--top`), `moved`, `unchanged`",
        "level": "page, host or domain",
        "measure": "pagerank or harmonic",
        "from_run": "the earlier run",
        "to_run": "the later run",
    },
)


# --- decision tables (page_flags: linkgraph.lake.tabledocs_graph) ----------------------------------

SEED_SCORES = TableDoc(
    row="page per scores run",
    about="""
        One row per page per scores run, with every term beside the score and the scope decision. Written
        by `scores`: the rows of the run are replaced, and runs beyond `retention.runs` deleted in the
        same commit. Formulas: [pipeline](pipeline.md#formulas).""",
    columns={
        "run_id": "the scores run",
        "page_id": "the scored page",
        "url": "the page's URL",
        "in_links": "distinct pages linking in",
        "in_links_norm": "log1p(in_links) / log1p(max in_links)",
        "domain_authority": "[0, 1], blended with external authority",
        "sitemap_priority": "[0, 1]",
        "hop_depth": "links from the nearest seed; null when unreachable within the search",
        "depth_term": "1 / (hop_depth + 1); 0 when unreachable",
        "seed_score": "the weighted sum of the four terms",
        "domain_hops": "domain-graph hops from a seed domain (0 or 1); null when further",
        "domain_affinity": "by `scores.scope_strategy`",
        "depth_factor": "max(0, 1 − hop_depth / `scores.max_depth`); 0 when unreachable",
        "scope_score": "`domain_affinity` × `depth_factor`",
        "in_scope": "`scope_score` ≥ `scores.in_scope_threshold`",
    },
)

FRONTIER = TableDoc(
    row="URL to fetch", unique=("url",),
    about="""
        The in-scope URLs not yet crawled, in fetch order. Replaced by each `scores` run;
        `linkgraph frontier` exports its top.""",
    columns={
        "position": "1 = fetch first",
        "url": "the URL to fetch",
        "page_id": "null for a URL known only from a sitemap",
        "priority_source": "`seed_score`, `pagerank`, `personalized_pagerank` or `reward` "
                           "(`scores.frontier_priority`)",
        "priority": "the ordering value",
        "seed_score": "the page's `seed_scores.seed_score`",
        "scope_score": "the page's `seed_scores.scope_score`",
        "hop_depth": "links from the nearest seed; null when unreachable",
        "domain_affinity": "the page's `seed_scores.domain_affinity`",
        "run_id": "the scores run",
    },
)


# --- reward tables ------------------------------------------------------------------------------

REWARD_SCORES = TableDoc(
    row="page scored by the last reward run", writers={"reward": "each run; `--undo-prune` re-inserts"},
    about="""
        The reward ranker's score per page after the last run: the frontier's ordering key with
        `scores.frontier_priority: reward`. Replaced by each run (pages pruned by that run excluded);
        `--undo-prune` re-inserts the scores of restored pages.""",
    columns={
        "page_id": "the scored page",
        "url": "the page's URL",
        "score": "non-negative points",
        "run_id": "the reward run",
    },
)

REWARD_RUNS = TableDoc(
    row="round of a reward run",
    about="""
        One row per round of each reward run, appended; round 0 is the start state (new pages
        initialised). Per row: `total_score` = `total_score_before` − `total_forgotten` +
        `total_rewarded` + `total_initialised`, and `total_received` = `total_sent` (spreading moves
        score, never makes it).""",
    columns={
        "run_id": "the reward run",
        "round": "0 = start state",
        "started_at": "run start",
        "pages": "pages scored",
        "new_pages": "pages new to the scores (round 0; 0 in later rounds)",
        "send_fraction": "`reward.send_fraction`",
        "forget_rate": "`reward.forget_rate`",
        "rewards_enabled": "false with `--no-rewards`",
        "links_version": "the `links` version read",
        "total_score_before": "score of all pages before the round",
        "total_sent": "score the pages sent along their links",
        "total_received": "score the pages received",
        "total_forgotten": "score forgotten (`forget_rate`)",
        "total_rewarded": "score given as rewards",
        "total_initialised": "score given to new pages (round 0)",
        "total_score": "score of all pages after the round",
        "largest_change": "largest change of one page's score",
        "seconds": "time the round took",
    },
)

FEEDS = TableDoc(
    row="XML feed ever linked",
    about="""
        XML feeds ever linked from a page: a feed's first sighting earns its page the new-feed reward.
        The first write creates the table; then a MERGE by `feed_url` inserts new feeds and moves
        `last_seen_at` of known ones.""",
    columns={
        "feed_url": "canonical URL",
        "discovered_by": "URL of the page credited with it",
        "discovered_at": "when a reward run first saw it",
        "discovered_run_id": "that run",
        "last_seen_at": "the latest reward run that saw it linked",
    },
)

PRUNED_PAGES = TableDoc(
    row="page a reward run pruned",
    about="""
        What a prune deleted, written before the deletes: enough to audit it and to undo it by Delta time
        travel (`linkgraph reward --undo-prune RUN_ID`). Insert-only by (`run_id`, `page_id`): a retry adds
        nothing.""",
    columns={
        "run_id": "the reward run",
        "page_id": "the pruned page",
        "url": "the page's URL",
        "score": "the page's final score",
        "links_removed": "links with this page at either end",
        "pages_version": "the `pages` version holding the page",
        "links_version": "the `links` version holding its links",
        "pruned_at": "when the prune recorded it",
    },
)

STEP_RUNS = TableDoc(
    row="step run that records its inputs", write="(ingest: MERGE)",
    about="""
        What a multi-table step read, recorded before its first write, so that a retry of the same run id
        reads the same table versions (time travel) and ends as one run would. Written by `reward`
        (insert-only by (`run_id`, `step`)) and by `ingest --run-id`, which records its input files'
        fingerprint once the run has committed everything (replaced when the same run id ingests other
        files).""",
    columns={
        "run_id": "the step's run",
        "step": "`reward` or `ingest`",
        "started_at": "when the run first started",
        "inputs": "`reward`: JSON, table → Delta version read (null: the table was absent); `ingest`: "
                  "`files=… bytes=… sha256=… format=…`",
    },
)
