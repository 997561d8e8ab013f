"""A deterministic, realistic small web crawl: the project's built-in sample data.

``generate_sample_crawl(seed)`` returns what a focused crawler collecting job postings would hand
over after a few weeks on a dozen sites: link records (edges), page-level signals (pages) and
sitemap entries.  Pure Python (stdlib and PyYAML); everything derives from
``random.Random(seed)``, so the same seed gives the same records in the same order and
byte-identical JSON Lines files.

The sites, their sections and menus, and the words (titles, snippets, sentences, anchors) are data
files shipped in this package, ``sites.yaml`` and ``vocab.yaml`` (loaded by ``data``); the
``generator`` module builds the pages, links and records from them; ``files`` writes them out.

What is realistic about it
--------------------------
* 14 hosts on 11 registered domains: a corporate site with ``careers.`` and ``blog.``
  subdomains, a job board, two ATS vendor hosts (``acme.taleo.net``, ``jobs.jobvite.com``), a
  ``.co.uk`` newspaper with a jobs subdomain, an IDN host (``münchen-jobs.de``, written in
  unicode), two ``*.blogspot.com`` blogs (each its own registered domain under the private part
  of the Public Suffix List) and a three-domain link farm whose pages all link to each other
  with keyword-stuffed anchors.
* Every site is built from a template: home page, section (index) pages, static pages, articles
  or job postings (some ATS postings have query strings, the investors section has PDFs, which
  have no outlinks).  Every page carries NAV links (header menu), FOOTER links (about, privacy,
  contact; subdomains share the parent site's footer), SIDEBAR links (related items, partner
  sites, ads) and CONTENT links (listings, "see also", external links to other hosts, blog
  comments).  No page links to the same target twice and no good record links a page to itself.
* ``rel`` is None on most links, ``"nofollow"`` on some newspaper and job-board outlinks and on
  login links, ``"ugc"`` or ``"nofollow ugc"`` on blog comment links, ``"sponsored"`` on ads.
* ``context_window`` is up to ``CONTEXT_CHARS`` characters either side of the anchor in the text
  the link sits in (menu bar, footer line, sentence); image links (site logos) have an empty
  anchor.
* Raw ``to_url`` values are a little messy, as a crawler sees them, but all canonicalise to a
  crawled page: mixed-case hosts, default ports (``:80`` on the http-only link farm, ``:443``),
  fragments (``#top``), ``./`` and ``../`` segments, home pages with and without the trailing
  slash, IDN hosts in unicode.  ``from_url`` is the URL the crawler fetched (clean).
* Timestamps are UTC ISO-8601 strings ending in ``Z``: each page is fetched first at
  ``BASE_TIME`` plus up to 20 days and re-fetched up to 40 days later (a quarter only once);
  most links share their page's fetch times, some were discovered on a re-fetch or had gone by
  the last one.  ``last_seen_at >= discovered_at`` always.
* Pages carry a title, a 1-3 sentence text snippet (job vocabulary -- job, career, hr, hrms,
  taleo, jobvite, icims -- on the job sites, unrelated words elsewhere) and the XML job feeds
  they link to (home and job-section pages of sites that have a feed; mostly empty).
* Sitemaps: full ones (priority, lastmod, changefreq; still listing a few expired job
  postings that were never crawled), Blogger ones (lastmod only) and a spam one on the link farm
  (priority 1.0 and changefreq "always" everywhere).  The ATS hosts have none.

Deliberately bad edge records (about 1% of all), with the reason a validator should give
--------------------------------------------------------------------------------------------
* ``UNSUPPORTED_SCHEME``: ``mailto:`` links on every contact page and "Email this" share links
  on some articles, ``tel:`` on the newspaper's contact page, ``javascript:`` print/share links
  on some job postings.
* ``MALFORMED_URL``: ``http://exa mple.com/`` (space in the host), ``http:///nohost`` (no host),
  ``http://[2001:db8::1/jobs`` (unclosed IPv6 bracket), left in blog comments.
* ``NULL_FIELD``: an empty ``to_url`` (``href=""``) three times and a missing one (None) once.
* ``SELF_LINK``: one record whose ``to_url`` equals its ``from_url``, and two "Back to top"
  links (``<page>#top``) that are self-links once the fragment is dropped.
* ``DUPLICATE_MERGED`` (a duplicate): four exact copies of good records, re-emitted later in the
  stream; they merge into the link of the record they copy.
* ``OVERSIZED_FIELD``: one link-farm anchor text longer than ``OVERSIZED_ANCHOR_CHARS``.

``SampleCrawl.expected_rejects`` counts them by reason (the ``linkgraph.lake.schemas.Reason`` codes;
``linkgraph.urls.canonicalize`` gives exactly these for the URL ones).  Every other record is
valid, and no two of them share (canonical from_url, canonical to_url).
"""

from __future__ import annotations

from linkgraph.sample.data import HOSTS, SITES, WEB
from linkgraph.sample.days import write_crawl_days as write_crawl_days
from linkgraph.sample.files import (
    write_edges_jsonl,
    write_jsonl,
    write_pages_jsonl,
    write_sample_input,
    write_sitemaps_jsonl,
    write_sitemaps_xml,
)
from linkgraph.sample.generator import (
    BASE_TIME,
    CONTEXT_CHARS,
    EDGE_KEYS,
    OVERSIZED_ANCHOR_CHARS,
    POSITIONS,
    REJECT_REASONS,
    SampleCrawl,
    generate_sample_crawl,
)

WWW: str = HOSTS["WWW"]
CAREERS: str = HOSTS["CAREERS"]
BLOG: str = HOSTS["BLOG"]
BOARD: str = HOSTS["BOARD"]
TALEO: str = HOSTS["TALEO"]
JOBVITE: str = HOSTS["JOBVITE"]
GAZETTE: str = HOSTS["GAZETTE"]
GAZETTE_JOBS: str = HOSTS["GAZETTE_JOBS"]
MUNICH: str = HOSTS["MUNICH"]
HR_BLOG: str = HOSTS["HR_BLOG"]
GARDEN: str = HOSTS["GARDEN"]
FARM: tuple[str, ...] = tuple(HOSTS["FARM"])
# the trusted seed pages ``linkgraph run`` scores from on the sample when none are configured
SAMPLE_SEEDS: tuple[str, ...] = tuple(WEB["seeds"])

__all__ = [
    "BASE_TIME",
    "BLOG",
    "BOARD",
    "CAREERS",
    "CONTEXT_CHARS",
    "EDGE_KEYS",
    "FARM",
    "GARDEN",
    "GAZETTE",
    "GAZETTE_JOBS",
    "HR_BLOG",
    "JOBVITE",
    "MUNICH",
    "OVERSIZED_ANCHOR_CHARS",
    "POSITIONS",
    "REJECT_REASONS",
    "SAMPLE_SEEDS",
    "SITES",
    "TALEO",
    "WWW",
    "SampleCrawl",
    "generate_sample_crawl",
    "write_edges_jsonl",
    "write_jsonl",
    "write_pages_jsonl",
    "write_sample_input",
    "write_sitemaps_jsonl",
    "write_sitemaps_xml",
]
