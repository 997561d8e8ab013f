"""A deterministic, realistic small web crawl: the project's built-in sample data.

``generate_sample_crawl(seed)`` returns what a focused crawler collecting job postings would hand
over after a few weeks on a dozen sites: link records (edges), page-level signals (pages) and
sitemap entries.  Pure Python (stdlib only); everything derives from ``random.Random(seed)``, so
the same seed gives the same records in the same order and byte-identical JSON Lines files.

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

import json
import os
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

BASE_TIME = datetime(2026, 1, 1, tzinfo=timezone.utc)
CONTEXT_CHARS = 50
OVERSIZED_ANCHOR_CHARS = 2000
POSITIONS = ("NAV", "CONTENT", "FOOTER", "SIDEBAR")
EDGE_KEYS = (
    "from_url",
    "to_url",
    "anchor_text",
    "context_window",
    "rel",
    "position",
    "discovered_at",
    "last_seen_at",
)
# the reasons of the deliberately bad records, as in ``linkgraph.lake.schemas.Reason``
REJECT_REASONS = (
    "UNSUPPORTED_SCHEME",
    "MALFORMED_URL",
    "NULL_FIELD",
    "SELF_LINK",
    "DUPLICATE_MERGED",
    "OVERSIZED_FIELD",
)


@dataclass(frozen=True)
class SampleCrawl:
    """The sample: edge records, page signals, sitemap entries (see the module docstring)."""

    edges: list[dict]
    pages: list[dict]
    sitemaps: list[dict]
    # reason -> number of deliberately bad edge records that should be rejected with it
    expected_rejects: dict[str, int] = field(default_factory=dict)


# --- site definitions ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Menu:
    """A menu entry (NAV or FOOTER); host "" is the site's own host."""

    path: str
    label: str
    host: str = ""
    rel: str | None = None


@dataclass(frozen=True)
class _Section:
    """A section index page at ``path`` and its items; ``item`` formats an item path from
    ``slug``, ``id`` (unique 5 digits), ``code`` (jobvite-style), ``yyyy`` and ``mm``."""

    path: str
    label: str
    vocab: str
    count: tuple[int, int]
    item: str


@dataclass(frozen=True)
class _Site:
    host: str
    name: str
    topic: str  # key of _TEXT (page snippets)
    sections: tuple[_Section, ...]
    nav: tuple[_Menu, ...]
    footer: tuple[_Menu, ...]
    scheme: str = "https"
    logo: bool = False  # the home link in the header is an image (empty anchor)
    outlinks: tuple[tuple[str, float], ...] = ()  # (host, weight) for external CONTENT links
    external: tuple[int, int] = (0, 1)  # external CONTENT links per article
    rels: tuple[tuple[str | None, float], ...] = ((None, 1.0),)  # rel of those links
    ads: float = 0.0  # chance of a sponsored SIDEBAR ad on a page
    ad_hosts: tuple[str, ...] = ()
    comments: int = 0  # at most this many ugc comment links per article
    partners: tuple[str, ...] = ()  # hosts whose home every page links from the sidebar
    feeds: tuple[str, ...] = ()  # XML job feeds linked from home and job-section pages
    sitemap: str | None = "full"  # "full", "blogger" (lastmod only), "spam", or None


WWW = "www.acme-corp.com"
CAREERS = "careers.acme-corp.com"
BLOG = "blog.acme-corp.com"
BOARD = "jobs.example-board.com"
TALEO = "acme.taleo.net"
JOBVITE = "jobs.jobvite.com"
GAZETTE = "www.northern-gazette.co.uk"
GAZETTE_JOBS = "jobs.northern-gazette.co.uk"
MUNICH = "münchen-jobs.de"
HR_BLOG = "hr-insights.blogspot.com"
GARDEN = "gardening-notes.blogspot.com"
FARM = ("www.best-jobs-now.biz", "top-career-jobs.info", "cheap-jobs-online.net")

_ACME_FOOTER = (
    _Menu("/about/", "About us", WWW),
    _Menu("/privacy/", "Privacy policy", WWW),
    _Menu("/contact/", "Contact", WWW),
)
_GAZETTE_FOOTER = (
    _Menu("/about/", "About us", GAZETTE),
    _Menu("/privacy/", "Privacy notice", GAZETTE),
    _Menu("/contact/", "Contact us", GAZETTE),
)


def _farm_site(host: str, name: str) -> _Site:
    return _Site(
        host=host,
        name=name,
        topic="farm",
        scheme="http",
        sections=(
            _Section("/jobs/", "Best Jobs", "farm", (4, 6), "/jobs/{slug}.html"),
            _Section("/top-jobs/", "Top Jobs", "farm", (3, 5), "/top-jobs/{slug}-{id}.html"),
        ),
        nav=(_Menu("/", "Home"), _Menu("/jobs/", "Best Jobs"), _Menu("/top-jobs/", "Top Jobs")),
        footer=(_Menu("/contact.html", "Contact"), _Menu("/privacy.html", "Privacy")),
        outlinks=tuple((h, 5.0) for h in FARM if h != host) + ((BOARD, 0.5), (CAREERS, 0.3)),
        external=(3, 5),
        partners=tuple(h for h in FARM if h != host),
        sitemap="spam",
    )


SITES: tuple[_Site, ...] = (
    _Site(
        host=WWW,
        name="Acme Corp",
        topic="corporate",
        logo=True,
        sections=(
            _Section("/products/", "Products", "products", (4, 6), "/products/{slug}"),
            _Section("/news/", "Newsroom", "acme_news", (4, 7), "/news/2025/{slug}"),
            _Section("/investors/", "Investors", "reports", (2, 3), "/investors/{slug}.pdf"),
        ),
        nav=(
            _Menu("/", "Home"),
            _Menu("/products/", "Products"),
            _Menu("/news/", "Newsroom"),
            _Menu("/investors/", "Investors"),
            _Menu("/", "Careers", CAREERS),
            _Menu("/", "Blog", BLOG),
        ),
        footer=_ACME_FOOTER,
        outlinks=((CAREERS, 3.0), (BLOG, 2.0), (GAZETTE, 1.0), (TALEO, 0.5)),
        external=(0, 2),
    ),
    _Site(
        host=CAREERS,
        name="Acme Careers",
        topic="careers",
        sections=(
            _Section("/jobs/", "Open positions", "jobs", (14, 20), "/jobs/{slug}-{id}"),
            _Section("/teams/", "Teams", "teams", (3, 5), "/teams/{slug}"),
            _Section("/life-at-acme/", "Life at Acme", "life", (2, 4), "/life-at-acme/{slug}"),
        ),
        nav=(
            _Menu("/", "Careers home"),
            _Menu("/jobs/", "Open positions"),
            _Menu("/teams/", "Teams"),
            _Menu("/life-at-acme/", "Life at Acme"),
            _Menu("/", "Acme.com", WWW),
        ),
        footer=_ACME_FOOTER,
        outlinks=((TALEO, 4.0), (JOBVITE, 2.0), (BLOG, 1.0), (WWW, 1.0)),
        external=(1, 2),
        feeds=("https://careers.acme-corp.com/jobs.xml",),
    ),
    _Site(
        host=BLOG,
        name="The Acme Blog",
        topic="hrblog",
        logo=True,
        sections=(
            _Section("/category/hiring/", "Hiring", "hr_posts", (3, 5), "/posts/{slug}"),
            _Section("/category/hr-tech/", "HR Tech", "hr_posts", (3, 5), "/posts/{slug}"),
            _Section("/category/culture/", "Culture", "hr_posts", (2, 3), "/posts/{slug}"),
        ),
        nav=(
            _Menu("/", "Blog home"),
            _Menu("/category/hiring/", "Hiring"),
            _Menu("/category/hr-tech/", "HR Tech"),
            _Menu("/category/culture/", "Culture"),
            _Menu("/", "Careers", CAREERS),
        ),
        footer=_ACME_FOOTER,
        outlinks=((CAREERS, 3.0), (HR_BLOG, 2.0), (TALEO, 1.0), (GAZETTE, 1.0), (BOARD, 1.0)),
        external=(0, 2),
        comments=2,
    ),
    _Site(
        host=BOARD,
        name="Example Board",
        topic="board",
        sections=(
            _Section("/jobs/hr/", "HR jobs", "jobs", (8, 12), "/job/{id}/{slug}"),
            _Section("/jobs/engineering/", "Engineering jobs", "jobs", (8, 12), "/job/{id}/{slug}"),
            _Section("/jobs/finance/", "Finance jobs", "jobs", (5, 8), "/job/{id}/{slug}"),
            _Section("/companies/", "Companies", "companies", (4, 6), "/companies/{slug}"),
        ),
        nav=(
            _Menu("/", "Jobs home"),
            _Menu("/jobs/hr/", "HR jobs"),
            _Menu("/jobs/engineering/", "Engineering jobs"),
            _Menu("/jobs/finance/", "Finance jobs"),
            _Menu("/companies/", "Companies"),
            _Menu("/post-a-job/", "Post a job"),
        ),
        footer=(
            _Menu("/about/", "About"),
            _Menu("/privacy/", "Privacy"),
            _Menu("/contact/", "Contact"),
            _Menu("/login/", "Sign in", rel="nofollow"),
        ),
        outlinks=((TALEO, 3.0), (JOBVITE, 3.0), (CAREERS, 2.0), (MUNICH, 1.0)),
        external=(1, 2),
        rels=((None, 0.6), ("nofollow", 0.4)),
        ads=0.3,
        ad_hosts=(CAREERS, GAZETTE_JOBS),
        feeds=("https://jobs.example-board.com/feeds/jobs.xml",),
    ),
    _Site(
        host=TALEO,
        name="Acme Corp Careers (Taleo)",
        topic="taleo",
        sections=(
            _Section(
                "/careersection/2/jobsearch.ftl",
                "Search jobs",
                "jobs",
                (8, 12),
                "/careersection/2/jobdetail.ftl?job={id}&lang=en",
            ),
        ),
        nav=(
            _Menu("/", "Home"),
            _Menu("/careersection/2/jobsearch.ftl", "Search jobs"),
            _Menu("/careersection/2/mysubmissions.ftl", "My submissions", rel="nofollow"),
            _Menu("/", "Acme Careers", CAREERS),
        ),
        footer=(_Menu("/privacy/", "Privacy policy", WWW), _Menu("/careersection/accessibility.ftl", "Accessibility")),
        outlinks=((CAREERS, 1.0),),
        sitemap=None,
    ),
    _Site(
        host=JOBVITE,
        name="Acme Corp Jobs (Jobvite)",
        topic="jobvite",
        sections=(_Section("/acme/jobs", "Jobs at Acme", "jobs", (7, 10), "/acme/job/{code}"),),
        nav=(_Menu("/", "Home"), _Menu("/acme/jobs", "Jobs at Acme"), _Menu("/", "Company website", CAREERS)),
        footer=(_Menu("/privacy", "Privacy"), _Menu("/terms", "Terms of use")),
        outlinks=((CAREERS, 1.0),),
        feeds=("https://jobs.jobvite.com/acme/feed/jobs.xml",),
        sitemap=None,
    ),
    _Site(
        host=GAZETTE,
        name="The Northern Gazette",
        topic="news",
        logo=True,
        sections=(
            _Section("/news/", "News", "news", (8, 12), "/news/{yyyy}/{mm}/{slug}-{id}"),
            _Section("/business/", "Business", "business", (5, 8), "/business/{yyyy}/{mm}/{slug}-{id}"),
            _Section("/sport/", "Sport", "sport", (3, 5), "/sport/{yyyy}/{mm}/{slug}-{id}"),
        ),
        nav=(
            _Menu("/", "Home"),
            _Menu("/news/", "News"),
            _Menu("/business/", "Business"),
            _Menu("/sport/", "Sport"),
            _Menu("/", "Jobs", GAZETTE_JOBS),
        ),
        footer=_GAZETTE_FOOTER + (_Menu("/advertise/", "Advertise with us"),),
        outlinks=((WWW, 2.0), (GAZETTE_JOBS, 2.0), (BOARD, 1.0), (GARDEN, 1.0), (MUNICH, 0.5)),
        external=(0, 2),
        rels=((None, 0.5), ("nofollow", 0.5)),
        ads=0.6,
        ad_hosts=(BOARD, CAREERS) + FARM,
    ),
    _Site(
        host=GAZETTE_JOBS,
        name="Gazette Jobs",
        topic="board",
        sections=(
            _Section("/search/", "Search jobs", "jobs", (7, 10), "/job/{slug}-{id}"),
            _Section("/careers-advice/", "Careers advice", "advice", (3, 4), "/careers-advice/{slug}"),
        ),
        nav=(
            _Menu("/", "Jobs home"),
            _Menu("/search/", "Search jobs"),
            _Menu("/careers-advice/", "Careers advice"),
            _Menu("/", "Gazette home", GAZETTE),
        ),
        footer=_GAZETTE_FOOTER,
        outlinks=((BOARD, 2.0), (CAREERS, 2.0), (TALEO, 1.0)),
        feeds=("https://jobs.northern-gazette.co.uk/rss/jobs.xml",),
    ),
    _Site(
        host=MUNICH,
        name="München Jobs",
        topic="de_jobs",
        logo=True,
        sections=(
            _Section("/stellen/", "Stellenangebote", "de_jobs", (10, 14), "/stellen/{slug}-{id}"),
            _Section("/arbeitgeber/", "Arbeitgeber", "companies", (3, 4), "/arbeitgeber/{slug}"),
            _Section("/ratgeber/", "Karriere-Ratgeber", "de_advice", (2, 4), "/ratgeber/{slug}"),
        ),
        nav=(
            _Menu("/", "Startseite"),
            _Menu("/stellen/", "Stellenangebote"),
            _Menu("/arbeitgeber/", "Arbeitgeber"),
            _Menu("/ratgeber/", "Karriere-Ratgeber"),
        ),
        footer=(_Menu("/impressum/", "Impressum"), _Menu("/datenschutz/", "Datenschutz"),
                _Menu("/kontakt/", "Kontakt")),
        outlinks=((BOARD, 1.0), (JOBVITE, 1.0), (TALEO, 1.0), (CAREERS, 1.0)),
        feeds=("https://münchen-jobs.de/feed/stellen.xml",),
    ),
    _Site(
        host=HR_BLOG,
        name="HR Insights",
        topic="hrblog",
        sections=(
            _Section("/search/label/recruiting", "Recruiting", "hr_posts", (4, 6), "/{yyyy}/{mm}/{slug}.html"),
            _Section("/search/label/hr-tech", "HR tech", "hr_posts", (4, 6), "/{yyyy}/{mm}/{slug}.html"),
        ),
        nav=(
            _Menu("/", "Home"),
            _Menu("/search/label/recruiting", "Recruiting"),
            _Menu("/search/label/hr-tech", "HR tech"),
            _Menu("/p/about.html", "About me"),
        ),
        footer=(_Menu("/p/privacy.html", "Privacy policy"), _Menu("/p/contact.html", "Contact")),
        outlinks=((TALEO, 2.0), (JOBVITE, 2.0), (BOARD, 2.0), (BLOG, 2.0), (CAREERS, 1.0)),
        external=(1, 2),
        ads=0.3,
        ad_hosts=(BOARD,) + FARM,
        comments=3,
        sitemap="blogger",
    ),
    _Site(
        host=GARDEN,
        name="Gardening Notes",
        topic="garden",
        sections=(
            _Section("/search/label/vegetables", "Vegetables", "garden", (4, 6), "/{yyyy}/{mm}/{slug}.html"),
            _Section("/search/label/flowers", "Flowers", "garden", (3, 5), "/{yyyy}/{mm}/{slug}.html"),
        ),
        nav=(
            _Menu("/", "Home"),
            _Menu("/search/label/vegetables", "Vegetables"),
            _Menu("/search/label/flowers", "Flowers"),
            _Menu("/p/about.html", "About"),
        ),
        footer=(_Menu("/p/contact.html", "Contact"),),
        outlinks=((GAZETTE, 1.0), (HR_BLOG, 0.3)),
        ads=0.3,
        ad_hosts=(BOARD,) + FARM,
        comments=2,
        sitemap="blogger",
    ),
    _farm_site(FARM[0], "Best Jobs Now"),
    _farm_site(FARM[1], "Top Career Jobs"),
    _farm_site(FARM[2], "Cheap Jobs Online"),
)

# --- vocabulary ------------------------------------------------------------------------------

_JOB_TITLES = (
    "Senior Data Engineer", "HR Business Partner", "HRMS Implementation Consultant",
    "Payroll Specialist", "Technical Recruiter", "Taleo Administrator",
    "iCIMS Integration Developer", "Talent Acquisition Lead", "Warehouse Operative",
    "Customer Success Manager", "Frontend Developer", "Benefits Analyst",
    "People Operations Coordinator", "Sales Development Representative", "Product Designer",
    "Site Reliability Engineer", "Financial Analyst", "Office Manager",
    "Jobvite Recruiting Coordinator", "Learning and Development Manager",
)
_JOB_LOCATIONS = ("London", "Manchester", "Leeds", "Munich", "Berlin", "Austin", "Denver", "Remote")
_DE_TITLES = (
    "HR-Sachbearbeiter (m/w/d)", "Personalreferent (m/w/d)", "Lohnbuchhalter (m/w/d)",
    "Recruiter (m/w/d)", "SAP HCM Berater (m/w/d)", "Werkstudent HR (m/w/d)",
    "Teamassistenz Personal (m/w/d)", "Softwareentwickler Java (m/w/d)",
    "Talent Acquisition Manager (m/w/d)", "Ausbildung Kaufmann für Büromanagement (m/w/d)",
)
_DE_LOCATIONS = ("München", "Garching", "Freising", "Unterschleißheim")

_VOCAB: dict[str, tuple[str, ...]] = {
    "products": (
        "Acme HRMS Suite", "Acme Payroll Cloud", "Acme Analytics Platform", "Acme Scheduler",
        "Acme Time & Attendance", "Acme Workforce Planning", "Acme Mobile App",
    ),
    "acme_news": (
        "Acme reports record third quarter", "Acme partners with iCIMS on recruiting integration",
        "Acme opens new Manchester office", "Acme appoints new chief financial officer",
        "Acme launches HRMS Suite 5", "Acme named a top employer for 2025",
        "Acme completes acquisition of Globex Payroll", "Acme expands Munich engineering hub",
        "Acme sponsors regional coding bootcamp", "Acme publishes 2025 sustainability report",
    ),
    "reports": (
        "Annual report 2025", "Q3 2025 results presentation", "Notice of annual general meeting",
        "Corporate governance statement",
    ),
    "teams": ("Engineering", "People and HR", "Finance", "Sales", "Customer Success", "Operations", "Design"),
    "life": (
        "A day in the life of a recruiter", "How we onboard new starters", "Our hybrid working policy",
        "Benefits at Acme", "Meet the Munich team", "Graduate programme stories",
    ),
    "hr_posts": (
        "Five onboarding mistakes HR teams still make", "Choosing an HRMS in 2026",
        "Taleo vs iCIMS: what recruiters actually think", "Writing job descriptions that convert",
        "Structured interviews without the pain", "Why your careers page loses candidates",
        "Migrating from Taleo to a modern ATS", "Jobvite tips for high-volume hiring",
        "Skills-based hiring explained", "Employer branding on a small budget",
        "Reducing time-to-hire", "Candidate experience metrics that matter",
        "Remote job postings and pay transparency", "A practical guide to HR analytics",
        "What an HRMS audit taught us", "Job boards or referrals?",
    ),
    "companies": (
        "Acme Corp", "Globex", "Initech", "Umbrella Health", "Stark Logistics", "Wayne Retail",
        "Hooli", "Vandelay Industries", "Soylent Foods",
    ),
    "advice": (
        "How to write a CV that gets read", "Preparing for a competency interview",
        "Negotiating your first salary", "Switching careers into HR",
        "Cover letters: do they still matter?", "Using job alerts effectively",
    ),
    "de_advice": (
        "Bewerbung schreiben: Tipps vom HR-Profi", "Gehaltsverhandlung in München",
        "Vorstellungsgespräch richtig vorbereiten", "Karrierewechsel ins Personalwesen",
        "Arbeitszeugnis verstehen",
    ),
    "news": (
        "City council approves new tram line", "Local bakery wins national award",
        "Storm warning issued for the weekend", "Hospital unveils new cancer wing",
        "Schools prepare for exam season", "Jobs fair draws record crowds",
        "Council budget: what it means for you", "Festival line-up announced",
        "Rail strikes: what commuters need to know", "Historic mill converted into flats",
        "Library opening hours extended", "New cycle lanes divide opinion",
        "Volunteers clear litter from the river", "Bus fares to be frozen for a year",
    ),
    "business": (
        "Acme Corp to open Manchester office, creating 200 jobs", "Unemployment falls to five-year low",
        "House prices edge higher in the north", "Retailers report strong Christmas trading",
        "Start-up raises funding for payroll app", "Logistics firm plans new warehouse",
        "Recruiters say hiring is picking up", "Energy bills: small firms feel the squeeze",
        "Brewery expands after export deal", "Airport passenger numbers recover",
    ),
    "sport": (
        "Rugby club celebrates promotion", "United sign teenage striker",
        "Marathon entries open for spring", "Cricket club unveils new pavilion",
        "Boxer defends regional title", "Netball team reaches national final",
        "Cyclists prepare for hill climb",
    ),
    "garden": (
        "Pruning roses in late winter", "Growing tomatoes from seed", "Companion planting basics",
        "Dealing with slugs organically", "Building a raised bed", "Best shade-loving perennials",
        "Composting for beginners", "Overwintering dahlias", "A small herb garden on the balcony",
        "Seed swap recap", "Planting garlic in autumn", "Rainwater harvesting at home",
    ),
    "farm": (
        "Best Jobs Online Now", "Cheap Jobs Hiring Today", "Work From Home Jobs Fast",
        "Top Career Jobs 2026", "Jobs Jobs Jobs Apply Now", "Easy Money Jobs Online",
        "Free Job Listings Best Jobs", "High Paying Jobs No Experience", "Instant Hire Jobs Near You",
        "Online Jobs Career HR Jobs", "Best Taleo Jobs Best Jobvite Jobs", "Hiring Now Jobs Today",
    ),
}

_TEXT: dict[str, tuple[str, ...]] = {
    "corporate": (
        "Acme Corp builds payroll, HRMS and workforce analytics software for mid-sized companies.",
        "Our products are used by more than 4,000 organisations across Europe and North America.",
        "Read the latest product news, investor updates and press releases.",
        "Acme Analytics turns operational data into clear weekly dashboards.",
    ),
    "careers": (
        "Explore jobs at Acme and build your career with a team that cares.",
        "We hire engineers, HR specialists and sales people in London, Manchester and Munich.",
        "Applications are handled through our Taleo careers site; some teams recruit via Jobvite.",
        "Every new starter gets a mentor, a learning budget and access to our HRMS from day one.",
        "Browse open jobs by team and location, or subscribe to the jobs feed.",
    ),
    "hrblog": (
        "Practical notes on recruiting, HR technology and the candidate experience.",
        "We compare applicant tracking systems such as Taleo, iCIMS and Jobvite.",
        "Good job descriptions and a fast process matter more than perks.",
        "Most HR teams still run their HRMS and their ATS as separate islands.",
        "Career pages that load fast convert more applicants.",
    ),
    "board": (
        "Search thousands of jobs from hundreds of employers.",
        "New HR, engineering and finance jobs are added every day.",
        "Set up a job alert and get matching jobs by email.",
        "Employers post jobs directly or import them from iCIMS, Taleo and Jobvite feeds.",
        "Find your next career move with salary information on every listing.",
    ),
    "taleo": (
        "Acme Corp careers, powered by Taleo.",
        "Search open jobs, save your profile and track your application.",
        "This job requisition is managed in Taleo by the Acme HR team.",
        "Candidates can apply with a CV or a LinkedIn profile.",
    ),
    "jobvite": (
        "Acme Corp is hiring: jobs powered by Jobvite.",
        "Apply in minutes; the hiring team reviews every application.",
        "Refer a friend for this job through Jobvite.",
        "Open career opportunities across sales, support and operations.",
    ),
    "de_jobs": (
        "Aktuelle Jobs in München und Umgebung, täglich neue Stellenangebote.",
        "Finde deinen nächsten Job in HR, IT und Verwaltung.",
        "Arbeitgeber veröffentlichen ihre Stellen direkt oder über Taleo und iCIMS.",
        "Karriere-Tipps, Gehaltsvergleiche und Bewerbungshilfe für Jobsuchende.",
        "Bewerbung per E-Mail oder über das HR-Portal des Unternehmens.",
    ),
    "news": (
        "Local news, sport and business from across the north.",
        "The council said the plans would be published next month.",
        "Residents have until Friday to respond to the consultation.",
        "Forecasters expect heavy rain and strong winds on Saturday.",
        "The club's manager praised a young squad after the match.",
        "Shops in the city centre reported a busy weekend.",
    ),
    "garden": (
        "Notes from a small allotment in Yorkshire.",
        "This week the broad beans finally came up.",
        "Mulch now and you will water far less in July.",
        "Slugs ate half the lettuces again.",
        "The seed catalogues arrived, and so did the frost.",
    ),
    "farm": (
        "Best jobs online cheap jobs top jobs career jobs hr jobs apply now.",
        "Jobs jobs jobs: the best jobs and the cheapest jobs, updated every minute.",
        "Work from home jobs, online jobs, career jobs, free jobs, top jobs.",
        "Find jobs fast, best career, best hr jobs, best jobvite jobs, best taleo jobs.",
    ),
}

_SENTENCES = {  # CONTENT link sentences; {a} is the anchor
    "see_also": (
        "You may also like {a}, which readers found useful.",
        "See also: {a}.",
        "We wrote about this before in {a}, and not much has changed.",
    ),
    "external": (
        "According to {a}, the trend is set to continue.",
        "There is a good overview in {a} if you want the detail.",
        "More on this from our friends: {a}.",
        "Read more: {a}",
    ),
    "apply": (
        "Ready for the next step in your career? {a} and the HR team will be in touch.",
        "{a} (the application takes about ten minutes).",
    ),
    "de": ("Weitere Informationen: {a}.", "Mehr dazu unter {a}, dort gibt es alle Details."),
    "farm": (
        "Find {a} here, best jobs online, cheap jobs, top jobs, career jobs, hr jobs, jobs jobs jobs.",
        "{a} {a} best jobs online now, click for {a}.",
    ),
    "comment": (
        "{a} said: Great post, this matches what we see in HR every day.",
        "{a} said: Thanks for sharing! We moved off Taleo last year and it was painful.",
        "{a} said: Lovely photos, I will try this next spring.",
    ),
    "spam_comment": ("Nice article!!! Visit {a} for more jobs.", "{a} - great post, check my site."),
}
_APPLY_ANCHORS = {"taleo": ("Apply now", "Apply on Taleo"), "jobvite": ("Apply now", "Apply via Jobvite")}
_FARM_ANCHORS = (
    "best jobs", "cheap jobs online", "jobs jobs jobs", "work from home jobs", "career jobs hr jobs",
    "top jobs hiring now", "online jobs best pay", "free jobs listing", "best career jobs",
)
_AD_COPY = (
    "Hiring now: 500+ jobs near you", "Find your dream job today", "Top salaries in HR and payroll",
    "Work from home, apply today", "Get hired faster",
)
_COMMENTERS = ("Priya", "Tom H.", "Sandra from Leeds", "Marco", "Jen K.", "Ahmed", "Oliver", "Beth")
_COMMENT_HOSTS = tuple((h, 1.0) for h in FARM) + ((HR_BLOG, 1.0), (BOARD, 1.0), (GARDEN, 0.5), (BLOG, 0.5))
_COMMENT_RELS = (("ugc", 0.65), ("nofollow ugc", 0.25), ("nofollow", 0.1))
_FRAGMENTS = ("top", "main", "apply", "comments", "content")
_JOB_VOCABS = ("jobs", "de_jobs")
_MALFORMED_URLS = ("http://exa mple.com/", "http:///nohost", "http://[2001:db8::1/jobs")
_CODE_CHARS = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # jobvite job codes
_TRANSLIT = {"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "&": "and"}

# --- pages -----------------------------------------------------------------------------------


@dataclass
class _Page:
    site: _Site
    path: str  # path plus query, if any
    title: str
    kind: str  # home | section | static | item | expired (sitemap only)
    section: str = ""
    text: str = ""
    feeds: list[str] = field(default_factory=list)
    first: int = 0  # first fetch, seconds after BASE_TIME
    last: int = 0  # last fetch

    @property
    def url(self) -> str:
        return f"{self.site.scheme}://{self.site.host}{self.path}"

    @property
    def is_document(self) -> bool:
        return self.path.endswith(".pdf")


@dataclass
class _Link:
    target: _Page | str | None  # a crawled page, or a raw (bad) URL
    anchor: str | None
    context: str | None
    rel: str | None
    position: str


def _slugify(title: str) -> str:
    text = "".join(_TRANSLIT.get(c, c) for c in title.lower())
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def _title_pool(vocab: str, rng: random.Random) -> list[str]:
    if vocab == "jobs":
        pool = [f"{t} ({loc})" for t in _JOB_TITLES for loc in _JOB_LOCATIONS]
    elif vocab == "de_jobs":
        pool = [f"{t} in {loc}" for t in _DE_TITLES for loc in _DE_LOCATIONS]
    else:
        pool = list(_VOCAB[vocab])
    rng.shuffle(pool)
    return pool


def _snippet(page: _Page, rng: random.Random) -> str:
    pool = _TEXT[page.site.topic]
    if page.kind == "item":
        head = page.title if page.title[-1] in ".?!" else page.title + "."
        return " ".join([head, *rng.sample(pool, rng.randint(1, 2))])
    return " ".join(rng.sample(pool, rng.randint(1, 3)))


def _build_pages(rng: random.Random) -> tuple[list[_Page], list[_Page]]:
    """All crawled pages, site by site, and the expired job postings only sitemaps still list."""
    pages: list[_Page] = []
    expired: list[_Page] = []
    for site in SITES:
        own = [_Page(site, "/", site.name, "home")]
        own += [_Page(site, s.path, f"{s.label} | {site.name}", "section", s.path) for s in site.sections]
        paths = {p.path for p in own}
        for menu in site.nav + site.footer:
            if menu.host in ("", site.host) and menu.path not in paths:
                paths.add(menu.path)
                own.append(_Page(site, menu.path, f"{menu.label} | {site.name}", "static"))
        pools: dict[str, list[str]] = {}
        ids = rng.sample(range(10000, 100000), 80)
        for section in site.sections:
            pool = pools.setdefault(section.vocab, _title_pool(section.vocab, rng))
            n = rng.randint(*section.count)
            extra = rng.randint(1, 2) if section.vocab in _JOB_VOCABS and site.sitemap else 0
            for i in range(n + extra):
                title = pool.pop()
                path = section.item.format(
                    slug=_slugify(title),
                    id=ids.pop(),
                    code="o" + "".join(rng.choice(_CODE_CHARS) for _ in range(8)),
                    yyyy=rng.choice((2024, 2025)),
                    mm=f"{rng.randint(1, 12):02d}",
                )
                page = _Page(site, path, title, "item" if i < n else "expired", section.path)
                (own if i < n else expired).append(page)
        for page in own:
            page.text = _snippet(page, rng)
            if page.kind == "home" or (page.kind == "section" and page.section == site.sections[0].path):
                page.feeds = list(site.feeds)
            page.first = rng.randint(0, 20 * 86400)
            page.last = page.first if rng.random() < 0.25 else page.first + rng.randint(3600, 40 * 86400)
        pages += own
    return pages, expired


# --- links -----------------------------------------------------------------------------------


def _window(text: str, start: int, end: int) -> str:
    return text[max(0, start - CONTEXT_CHARS) : end + CONTEXT_CHARS]


def _bar(prefix: str, labels: list[str], sep: str) -> list[str]:
    """Context windows of ``labels`` laid out as ``prefix + sep.join(labels)`` (a menu bar)."""
    text, spans = prefix, []
    for i, label in enumerate(labels):
        text += sep if i else ""
        spans.append((len(text), len(text) + len(label)))
        text += label
    return [_window(text, s, e) for s, e in spans]


def _sentence(template: str, anchor: str) -> str:
    before, after = template.split("{a}", 1)
    after = after.replace("{a}", anchor)
    return _window(before + anchor + after, len(before), len(before) + len(anchor))


def _pick(weighted: Iterable[tuple], rng: random.Random):
    items = list(weighted)
    return rng.choices([i[0] for i in items], weights=[i[1] for i in items])[0]


class _Crawl:
    """Lays out the links of every page (see the module docstring)."""

    def __init__(self, pages: list[_Page], rng: random.Random):
        self.rng = rng
        self.out: list[_Link] = []  # the links of the page being laid out
        self.targets: set[str] = set()  # and the URLs they point to (with the page's own)
        self.by_url = {p.url: p for p in pages}
        self.by_host: dict[str, list[_Page]] = {}
        self.by_section: dict[tuple[str, str | None], list[_Page]] = {}  # items; section None: all
        for p in pages:
            self.by_host.setdefault(p.site.host, []).append(p)
            if p.kind == "item":
                self.by_section.setdefault((p.site.host, None), []).append(p)
                self.by_section.setdefault((p.site.host, p.section), []).append(p)

    # a page's links, in page order; at most one per target, never to the page itself
    def links(self, page: _Page) -> list[_Link]:
        self.out, self.targets = [], {page.url}
        if page.is_document:
            return self.out
        self._nav(page)
        self._content(page)
        self._sidebar(page)
        self._footer(page)
        return self.out

    def add(self, target: _Page, anchor: str, context: str, rel: str | None, position: str) -> bool:
        if target.url in self.targets:
            return False
        self.targets.add(target.url)
        self.out.append(_Link(target, anchor, context, rel, position))
        return True

    def menu_target(self, site: _Site, menu: _Menu) -> _Page:
        host = menu.host or site.host
        return self.by_url[f"{self.by_host[host][0].site.scheme}://{host}{menu.path}"]

    def items(self, host: str, section: str | None = None) -> list[_Page]:
        return self.by_section.get((host, section), [])

    def pick_page(self, host: str) -> _Page:
        items = self.items(host)
        return self.by_host[host][0] if not items or self.rng.random() < 0.25 else self.rng.choice(items)

    def _nav(self, page: _Page) -> None:
        site = page.site
        contexts = _bar("", [m.label for m in site.nav], " | ")
        if site.logo:
            self.add(self.by_host[site.host][0], "", contexts[0][:CONTEXT_CHARS], None, "NAV")
        for menu, context in zip(site.nav, contexts, strict=True):
            self.add(self.menu_target(site, menu), menu.label, context, menu.rel, "NAV")

    def _footer(self, page: _Page) -> None:
        site = page.site
        contexts = _bar(f"© 2025 {site.name} · ", [m.label for m in site.footer], " · ")
        for menu, context in zip(site.footer, contexts, strict=True):
            self.add(self.menu_target(site, menu), menu.label, context, menu.rel, "FOOTER")

    def _listing(self, prefix: str, targets: list[_Page], position: str) -> None:
        for target, context in zip(targets, _bar(prefix, [t.title for t in targets], " · "), strict=True):
            self.add(target, target.title, context, None, position)

    def _content(self, page: _Page) -> None:
        site, rng = page.site, self.rng
        items = self.items(site.host)
        if page.kind == "home" and items:
            self._listing("Featured: ", rng.sample(items, min(len(items), rng.randint(3, 5))), "CONTENT")
        elif page.kind == "section":
            label = next(s.label for s in site.sections if s.path == page.section)
            self._listing(f"{label}: ", self.items(site.host, page.section)[:20], "CONTENT")
        elif page.kind == "item":
            for target in rng.sample(items, min(len(items), rng.randint(0, 2))):
                context = _sentence(rng.choice(_SENTENCES["see_also"]), target.title)
                self.add(target, target.title, context, None, "CONTENT")
        if page.kind == "item" or site.topic == "farm":
            n_external = rng.randint(*site.external)
        else:
            n_external = rng.randint(0, 1)
        for _ in range(n_external if site.outlinks else 0):
            self._external(page, self.pick_page(_pick(site.outlinks, rng)))
        if page.kind == "item":
            for _ in range(rng.randint(0, site.comments)):
                self._comment(page)

    def _external(self, page: _Page, target: _Page) -> None:
        rng, topic = self.rng, page.site.topic
        if topic == "farm":
            anchor, kind = rng.choice(_FARM_ANCHORS), "farm"
        elif target.site.topic in _APPLY_ANCHORS and target.kind == "item" and topic != "news":
            anchor, kind = rng.choice(_APPLY_ANCHORS[target.site.topic]), "apply"
        else:
            anchor = target.site.name if target.kind == "home" else target.title
            kind = "de" if topic == "de_jobs" else "external"
        context = _sentence(rng.choice(_SENTENCES[kind]), anchor)
        self.add(target, anchor, context, _pick(page.site.rels, rng), "CONTENT")

    def _comment(self, page: _Page) -> None:
        rng = self.rng
        host = _pick([h for h in _COMMENT_HOSTS if h[0] != page.site.host], rng)
        target = self.by_host[host][0] if rng.random() < 0.7 else self.pick_page(host)
        if target.site.topic == "farm":
            anchor, template = rng.choice(_FARM_ANCHORS), rng.choice(_SENTENCES["spam_comment"])
        else:
            anchor, template = rng.choice(_COMMENTERS), rng.choice(_SENTENCES["comment"])
        self.add(target, anchor, _sentence(template, anchor), _pick(_COMMENT_RELS, rng), "CONTENT")

    def _sidebar(self, page: _Page) -> None:
        site, rng = page.site, self.rng
        if site.partners:
            homes = [self.by_host[h][0] for h in site.partners]
            contexts = _bar("Partner sites: ", [t.site.name for t in homes], " · ")
            for target, context in zip(homes, contexts, strict=True):
                self.add(target, target.site.name, context, None, "SIDEBAR")
        if page.kind == "item":
            others = [p for p in self.items(site.host, page.section) if p is not page]
            prefix = "Related: "
        else:
            others, prefix = self.items(site.host), "Most read: "
        self._listing(prefix, rng.sample(others, min(len(others), rng.randint(2, 3))), "SIDEBAR")
        if site.ad_hosts and rng.random() < site.ads:
            target = self.pick_page(rng.choice(site.ad_hosts))
            anchor = rng.choice(_AD_COPY)
            self.add(target, anchor, _sentence("Advertisement · {a} · Learn more", anchor), "sponsored", "SIDEBAR")


# --- deliberately bad records ----------------------------------------------------------------


def _inject_bad_links(laid_out: list[tuple[_Page, list[_Link]]], rng: random.Random) -> dict[str, int]:
    """Put the deliberately bad links (module docstring) among the good ones of their pages, except
    the duplicates (added by the caller); return how many there are of each reason."""
    counts = dict.fromkeys(REJECT_REASONS, 0)
    by_page = {page.url: links for page, links in laid_out}

    def put(page: _Page, reason: str, to_url, anchor: str, template: str, rel=None, position="CONTENT") -> None:
        links = by_page[page.url]
        links.insert(rng.randint(0, len(links)), _Link(to_url, anchor, _sentence(template, anchor), rel, position))
        counts[reason] += 1

    pages = [page for page, _ in laid_out]
    items = [p for p in pages if p.kind == "item" and not p.is_document]
    job_items = [p for p in items if any(s.path == p.section and s.vocab in _JOB_VOCABS for s in p.site.sections)]

    for page in pages:  # mailto: (and one tel:) on every contact page
        if page.kind == "static" and ("contact" in page.path or "kontakt" in page.path):
            domain = page.site.host.removeprefix("www.").removeprefix("jobs.")
            email = f"{rng.choice(('info', 'jobs', 'hello'))}@{domain}"
            put(page, "UNSUPPORTED_SCHEME", f"mailto:{email}", email, "Questions? Email us at {a}.")
            if page.site.host == GAZETTE:
                put(page, "UNSUPPORTED_SCHEME", "tel:+441614960000", "0161 496 0000", "Newsdesk: {a} (24 hours)")
    for page in rng.sample([p for p in items if p.site.topic in ("news", "hrblog")], 5):
        url = f"mailto:?subject={page.title.replace(' ', '%20')}&body={page.url}"
        put(page, "UNSUPPORTED_SCHEME", url, "Email this", "Share: {a} | Print")
    for page in rng.sample(job_items, 5):
        url, anchor = rng.choice((("javascript:window.print()", "Print this job"), ("javascript:void(0)", "Share")))
        put(page, "UNSUPPORTED_SCHEME", url, anchor, "{a} | Save | Report this listing")

    commented = rng.sample([p for p in items if p.site.comments], len(_MALFORMED_URLS))
    for url, page in zip(_MALFORMED_URLS, commented, strict=True):
        put(page, "MALFORMED_URL", url, rng.choice(_COMMENTERS), _SENTENCES["comment"][0], rel="ugc")

    *empty, missing = rng.sample(items, 4)
    for page in empty:  # href=""
        put(page, "NULL_FIELD", "", "Read more", "{a} about this and more.")
    put(missing, "NULL_FIELD", None, "Apply", "{a} now, applications close on Friday.")

    exact, *to_top = rng.sample(items, 3)
    put(exact, "SELF_LINK", exact.url, "Permalink", "Posted in {a} | Share")
    for page in to_top:  # a self-link once the fragment is dropped
        put(page, "SELF_LINK", page.url + "#top", "Back to top", "{a} ↑", position="FOOTER")

    farm_page = rng.choice([p for p in items if p.site.topic == "farm"])
    linked = {link.target.url for link in by_page[farm_page.url] if isinstance(link.target, _Page)}
    target = next(p for p in pages if p.site.topic == "farm" and p.site is not farm_page.site and p.url not in linked)
    stuffed = " ".join(rng.choice(_FARM_ANCHORS) for _ in range(200))  # well over 2,000 characters
    put(farm_page, "OVERSIZED_FIELD", target, stuffed, "Click {a} now")
    return counts


# --- records ---------------------------------------------------------------------------------


def _iso(seconds: int) -> str:
    return (BASE_TIME + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _mixed_case(host: str, rng: random.Random) -> str:
    labels = host.split(".")
    if rng.random() < 0.5:
        return ".".join(label.capitalize() for label in labels)
    return ".".join([labels[0].upper()] + [label.title() for label in labels[1:-1]] + labels[-1:])


def _raw_url(page: _Page, rng: random.Random) -> str:
    """``page.url`` as a link on some page might spell it; it canonicalises back to ``page.url``."""
    site = page.site
    host = _mixed_case(site.host, rng) if rng.random() < 0.04 else site.host
    port = (":80" if site.scheme == "http" else ":443") if rng.random() < 0.02 else ""
    path, _, query = page.path.partition("?")
    if path == "/":
        path = "" if rng.random() < 0.3 else path  # the home page with and without its slash
    elif rng.random() < 0.015:
        head, _, tail = path.rpartition("/")
        first = path.strip("/").split("/")[0]
        path = f"{head}/./{tail}" if rng.random() < 0.5 else f"/{first}/../{path.lstrip('/')}"
    fragment = f"#{rng.choice(_FRAGMENTS)}" if rng.random() < 0.04 else ""
    return f"{site.scheme}://{host}{port}{path}{'?' + query if query else ''}{fragment}"


def _edge(page: _Page, link: _Link, rng: random.Random) -> dict:
    discovered = page.first if rng.random() < 0.9 else rng.randint(page.first, page.last)
    last_seen = page.last if rng.random() < 0.95 else rng.randint(discovered, page.last)
    target = link.target
    return {
        "from_url": page.url,
        "to_url": _raw_url(target, rng) if isinstance(target, _Page) else target,
        "anchor_text": link.anchor,
        "context_window": link.context,
        "rel": link.rel,
        "position": link.position,
        "discovered_at": _iso(discovered),
        "last_seen_at": _iso(last_seen),
    }


_PRIORITY = {"home": 1.0, "section": 0.8, "item": 0.6, "expired": 0.6, "static": 0.3}
_CHANGEFREQ = {"home": "daily", "section": "daily", "item": "weekly", "expired": "weekly", "static": "yearly"}


def _sitemap_rows(pages: list[_Page], expired: list[_Page], rng: random.Random) -> list[dict]:
    rows = []
    for site in SITES:
        for page in [p for p in pages + expired if p.site is site]:
            modified = BASE_TIME + timedelta(seconds=page.first - rng.randint(0, 120 * 86400))
            lastmod = modified.date().isoformat()
            if site.sitemap == "full" and (page.kind != "static" or rng.random() < 0.5):
                rows.append({
                    "url": page.url,
                    "priority": _PRIORITY[page.kind],
                    "lastmod": None if rng.random() < 0.1 else lastmod,
                    "changefreq": _CHANGEFREQ[page.kind],
                })
            elif site.sitemap == "blogger" and page.kind in ("home", "item"):
                rows.append({"url": page.url, "priority": None, "lastmod": lastmod, "changefreq": None})
            elif site.sitemap == "spam":
                rows.append({"url": page.url, "priority": 1.0, "lastmod": "2026-01-01", "changefreq": "always"})
    return rows


def generate_sample_crawl(seed: int = 7) -> SampleCrawl:
    """The sample crawl for ``seed`` (module docstring); the same seed gives identical output."""
    rng = random.Random(seed)
    pages, expired = _build_pages(rng)
    crawl = _Crawl(pages, rng)
    laid_out = [(page, crawl.links(page)) for page in pages]
    expected = _inject_bad_links(laid_out, rng)
    edges: list[dict] = []
    good: list[int] = []
    for page, links in laid_out:
        for link in links:
            if isinstance(link.target, _Page) and len(link.anchor or "") <= OVERSIZED_ANCHOR_CHARS:
                good.append(len(edges))
            edges.append(_edge(page, link, rng))
    for i in sorted(rng.sample(good, 4), reverse=True):  # exact copies, re-emitted later in the stream
        edges.insert(rng.randint(i + 1, len(edges)), dict(edges[i]))
    expected["DUPLICATE_MERGED"] = 4

    page_rows = [{"url": p.url, "title": p.title, "text": p.text, "feed_links": list(p.feeds)} for p in pages]
    return SampleCrawl(edges, page_rows, _sitemap_rows(pages, expired, rng), expected)


def write_jsonl(rows: Iterable[dict], path: str | os.PathLike) -> int:
    """Write one JSON object per line (UTF-8, unicode kept as is); returns the number of lines."""
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_edges_jsonl(edges: Iterable[dict], path: str | os.PathLike) -> int:
    """Edge records as JSON Lines (the crawler's input format); returns the count."""
    return write_jsonl(edges, path)


def write_pages_jsonl(pages: Iterable[dict], path: str | os.PathLike) -> int:
    """Page signals as JSON Lines; returns the count."""
    return write_jsonl(pages, path)


SAMPLE_SEEDS = ("https://www.acme-corp.com/", "https://jobs.example-board.com/")


def write_sitemaps_xml(sitemaps: Iterable[dict], directory: str | os.PathLike,
                       base_url: str = "https://sitemaps.example/") -> list[str]:
    """Sitemap entries as sitemaps.org XML: one file per host (every second one gzipped) and a
    ``sitemap-index.xml`` listing them; an entry's absent priority/lastmod/changefreq stays
    absent.  Returns the file names written, index last."""
    import gzip
    from xml.sax.saxutils import escape

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    by_host: dict[str, list[dict]] = {}
    for row in sitemaps:
        by_host.setdefault(row["url"].split("/")[2], []).append(row)
    names = []
    for i, (host, rows) in enumerate(sorted(by_host.items())):
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
        for row in rows:
            fields = [f"<loc>{escape(row['url'])}</loc>"]
            fields += [f"<{key}>{escape(str(row[key]))}</{key}>" for key in ("lastmod", "changefreq", "priority")
                       if row.get(key) is not None]
            lines.append(f"  <url>{''.join(fields)}</url>")
        lines.append("</urlset>\n")
        data = "\n".join(lines).encode("utf-8")
        name = f"sitemap-{host.encode('idna').decode('ascii')}.xml" + (".gz" if i % 2 else "")
        (directory / name).write_bytes(gzip.compress(data, mtime=0) if i % 2 else data)
        names.append(name)
    index = ['<?xml version="1.0" encoding="UTF-8"?>', '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    index += [f"  <sitemap><loc>{escape(base_url + name)}</loc></sitemap>" for name in names]
    (directory / "sitemap-index.xml").write_text("\n".join(index + ["</sitemapindex>\n"]), encoding="utf-8")
    return names + ["sitemap-index.xml"]


def write_sitemaps_jsonl(sitemaps: Iterable[dict], path: str | os.PathLike) -> int:
    """Sitemap entries as JSON Lines; returns the count."""
    return write_jsonl(sitemaps, path)


def write_sample_input(directory: str | Path, seed: int = 7) -> Path:
    """Write the built-in sample crawl under ``directory``: edge records as JSON lines (the path
    returned), page signals as ``sample-pages.jsonl`` and its sitemaps as XML in ``sitemaps/``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    crawl = generate_sample_crawl(seed)
    path = directory / "sample-edges.jsonl"
    write_edges_jsonl(crawl.edges, path)
    write_pages_jsonl(crawl.pages, directory / "sample-pages.jsonl")
    write_sitemaps_xml(crawl.sitemaps, directory / "sitemaps")
    return path
