"""The sample crawl as daily batches: what a focused crawler hands over day by day for a deployment
rehearsal that runs the daily DAG once per logical date.

:func:`write_crawl_days` splits ``generate_sample_crawl(seed)`` over ``days`` consecutive logical
dates (``ds``, ``YYYY-MM-DD``) and writes, under ``root``::

    edges/<ds>/part-0.jsonl             the day's edge records (EDGE_KEYS), or
    edges/<ds>/crawl.warc.gz            the day's pages as WARC/1.1 request + response records, or
    edges/<ds>/crawl.warc.wat.gz        the day's pages as Common Crawl WAT metadata records
    signals/<ds>/signals.jsonl          page signals of the pages fetched that day
                                        (url, title, text, feed_links, fetched_at)
    sitemaps/<ds>/                      sitemaps.org XML of the hosts first crawled that day
    days.json                           the manifest: seed, first_ds and one CrawlDay per day

How the crawl unfolds (day numbers are 1-based; the same for every ``days``, so a shorter run is
a prefix of a longer one, byte for byte):

* Hosts join on a schedule (``HOST_DAYS``): day 1 is the core (Acme's three hosts and the job
  board), the ATS hosts join on day 2, the newspaper on 4, the three-domain link farm on
  ``LINK_FARM_DAY`` (5), the blogspot blogs on 6, the IDN job site on 7 and the mirror network
  on ``MIRROR_DAY`` (9).  No record names a host before its day: a link to a host not yet crawled
  is left out until a re-crawl of its page on or after that day finds it (then it is discovered).
* A host's home and section pages are first fetched on its day; its other pages on a later day
  in the order of the sample's first fetch times (the sample's 20 days of first fetches spread
  from the host's day to ``LAST_FIRST_CRAWL_DAY``); the whole link farm is fetched on its day.
* Pages are re-crawled: home and section pages every 2-4 days, other pages once or twice, 2-6
  days apart; a page the sample fetched only once is never re-crawled.  A re-crawl repeats the
  page's links with the same ``discovered_at`` and a later ``last_seen_at`` (ingest updates
  them).  Links the sample saw only after a page's first fetch appear on its first re-crawl;
  links the sample saw go before the page's last fetch, and about ``DROP_CHANCE`` of CONTENT and
  SIDEBAR links, are gone from a later re-crawl on (nothing is re-added).
* The link farm appears on day 5 (``link_farm_hosts``); a mirror network on day 9
  (``mirror_hosts``): ``MIRRORS`` copy every page of ``MIRROR_SOURCE`` with its paths, anchors,
  rels and positions, credit the original page and link each page's copies on the other mirrors,
  so each pair of mirror domains exchanges one link per copied page both ways (far above
  ``analysis.syndication_min_links``, 20), and no mirror sends more than 90% of its external links
  to one domain (not a link farm by ``analysis.link_farm_share``).
* ``DAY_FORMATS``: days 3 and 10 are WARC, 6 and 12 WAT, day 8 is empty (an empty
  ``part-0.jsonl``), day 11 absent (no ``edges/<ds>``, no signals, no sitemaps); the others JSON
  lines.  Nothing is fetched on days 8 and 11: fetches falling on them move to the next day.
* WARC and WAT days render each fetched HTML page (PDFs are left out; their signals are kept) as
  an HTML document whose ``<a href>`` elements (rel, anchor text; NAV links in ``<nav>``, SIDEBAR
  in ``<aside>``, FOOTER in ``<footer>``, CONTENT in ``<main>``) are the day's links of the page,
  and as the WAT ``HTML-Metadata`` Common Crawl's extractor would write for that document.  Only
  valid links go into them; the sample's deliberately bad records (and its exact duplicates) are
  written only on JSON-lines days, with their page's first fetch.

Times are UTC, ``YYYY-MM-DDTHH:MM:SSZ``: a page is fetched at a fixed second of the day's first
``FETCH_HOURS`` hours (derived from seed, URL and day), ``last_seen_at`` is that fetch and
``discovered_at`` the fetch that first found the link (``last_seen_at >= discovered_at``).  A
day's records and signals are in fetch order.  Everything derives from ``seed``: the same
arguments give the same bytes.
"""

from __future__ import annotations

import gzip
import html
import json
import random
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urlsplit

from linkgraph import urls
from linkgraph.sample.data import HOSTS, SITES
from linkgraph.sample.files import write_jsonl, write_sitemaps_xml
from linkgraph.sample.generator import BASE_TIME, EDGE_KEYS, SampleCrawl, generate_sample_crawl

DAYS = 14
FIRST_DS = "2026-11-16"
JSONL, WARC, WAT = "jsonl", "warc", "wat"
# the input format of day i at DAY_FORMATS[i - 1] (None: no input that day); days past it are jsonl
DAY_FORMATS: tuple[str | None, ...] = (
    JSONL, JSONL, WARC, JSONL, JSONL, WAT, JSONL, JSONL, JSONL, WARC, None, WAT, JSONL, JSONL,
)
LINK_FARM_DAY = 5
EMPTY_DAY = 8
MIRROR_DAY = 9
ABSENT_DAY = 11
NO_FETCH_DAYS = (EMPTY_DAY, ABSENT_DAY)
LAST_FIRST_CRAWL_DAY = 13      # every sample page is first fetched by this day (if its host has joined)
FILE_NAMES = {JSONL: "part-0.jsonl", WARC: "crawl.warc.gz", WAT: "crawl.warc.wat.gz"}
SIGNALS_FILE = "signals.jsonl"
MANIFEST = "days.json"

MIRROR_SOURCE: str = HOSTS["BOARD"]
# (host, site name) of the mirror network: four registered domains copying MIRROR_SOURCE
MIRRORS: tuple[tuple[str, str], ...] = (
    ("www.jobs-syndicate.net", "Jobs Syndicate"),
    ("jobfeed-mirror.com", "JobFeed Mirror"),
    ("careers-aggregator.org", "Careers Aggregator"),
    ("hirewire-jobs.info", "HireWire Jobs"),
)
MIRROR_HOSTS: tuple[str, ...] = tuple(host for host, _ in MIRRORS)
# the day each host is first crawled (hosts as the sample spells them: IDN in unicode)
HOST_DAYS: dict[str, int] = {
    HOSTS["WWW"]: 1, HOSTS["CAREERS"]: 1, HOSTS["BLOG"]: 1, HOSTS["BOARD"]: 1,
    HOSTS["TALEO"]: 2, HOSTS["JOBVITE"]: 2,
    HOSTS["GAZETTE"]: 4, HOSTS["GAZETTE_JOBS"]: 4,
    **dict.fromkeys(HOSTS["FARM"], LINK_FARM_DAY),
    HOSTS["HR_BLOG"]: 6, HOSTS["GARDEN"]: 6,
    HOSTS["MUNICH"]: 7,
    **dict.fromkeys(MIRROR_HOSTS, MIRROR_DAY),
}

SAMPLE_FIRST_FETCHES = 20 * 86400      # the sample fetches every page first within 20 days of BASE_TIME
FETCH_HOURS = 20                       # a day's fetches fall in its first 20 hours
HUB_RECRAWL_PERIODS = (2, 3, 4)        # days between re-crawls of a home or section page
PAGE_RECRAWLS = (1, 2)                 # re-crawls of any other page ...
PAGE_RECRAWL_GAP = (2, 6)              # ... and the days between its fetches
ONCE_CHANCE = 0.25                     # a page without links (a PDF) fetched once, as the sample's pages
DROP_CHANCE = 0.06                     # a CONTENT or SIDEBAR link gone from a re-crawl on
DROP_AT = (1, 3)                       # ... from this fetch (1: the first re-crawl)
MAX_ANCHOR_CHARS = 1000                # ingest's default max_anchor_length: a longer anchor is a bad record
WAT_TEXT_CHARS = 100                   # Common Crawl's extractor cuts an anchor's text there
LOGO = "/static/logo.svg"
_ID_SPACE = uuid.UUID("6f0c1d2e-5a4b-4c3d-8e9f-0a1b2c3d4e5f")
_HTML_TYPE = "text/html; charset=utf-8"
_SEPARATORS = (" | ", " · ")           # a context window with these is a menu bar or listing


@dataclass(frozen=True)
class CrawlDay:
    """One day of the rehearsal.  ``fmt`` is None when the day has no input (``absent``);
    ``records`` counts the edge records written, or for WARC/WAT the links the documents carry (what
    extraction yields); ``new_hosts`` are the hosts no earlier day named (as a fetched page's host or a
    valid link's target), sorted; ``link_farm_hosts`` / ``mirror_hosts`` are set on the day those networks
    appear; ``empty``: the input exists without records; ``signals`` / ``sitemaps`` count the page
    signal rows and sitemap entries written."""

    index: int
    ds: str
    fmt: str | None
    records: int
    new_hosts: tuple[str, ...]
    link_farm_hosts: tuple[str, ...]
    mirror_hosts: tuple[str, ...]
    empty: bool
    absent: bool
    signals: int
    sitemaps: int


def day_format(index: int) -> str | None:
    """The input format of day ``index`` (1-based): ``DAY_FORMATS``, jsonl past its end."""
    return DAY_FORMATS[index - 1] if index <= len(DAY_FORMATS) else JSONL


# --- the crawl plan ----------------------------------------------------------------------------


@dataclass
class _Link:
    """A valid link of a page: its record without times, the target's host (sample spelling; None
    when not a crawled host), and the fetches (indexes into the page's) it is on the page:
    from ``appears`` until before ``gone``."""

    record: dict
    to_host: str | None
    appears: int = 0
    gone: int | None = None


@dataclass
class _Page:
    url: str
    host: str
    title: str
    text: str
    feeds: list[str]
    fetches: list[tuple[int, int]]      # (day, second of the day), days increasing
    links: list[_Link] = field(default_factory=list)
    # the page's records in the sample's order: ("link", i, None), ("copy", i, None) (an exact
    # copy of link i's record) or ("bad", -1, record)
    order: list[tuple[str, int, dict | None]] = field(default_factory=list)

    @property
    def is_html(self) -> bool:
        return not urlsplit(self.url).path.endswith(".pdf")


def _host(url: str) -> str:
    return url.split("/")[2]


def _path(url: str) -> str:
    return url[len(url.split("/", 3)[0]) + 2 + len(_host(url)):] or "/"


def _seconds(stamp: str) -> int:
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    return int((moment - BASE_TIME).total_seconds())


def _hub_paths() -> dict[str, set[str]]:
    """Per host, the paths of its home and section pages."""
    return {site.host: {"/", *(s.path for s in site.sections)} for site in SITES}


def _fetch_day(day: int) -> int:
    while day in NO_FETCH_DAYS:
        day += 1
    return day


def _fetch_days(first: int, hub: bool, once: bool, horizon: int, rng: random.Random) -> list[int]:
    """The days a page is fetched: ``first``, then its re-crawls (hubs up to ``horizon``); the
    draws do not depend on ``horizon``."""
    period = rng.choice(HUB_RECRAWL_PERIODS)
    gaps = [rng.randint(*PAGE_RECRAWL_GAP) for _ in range(rng.randint(*PAGE_RECRAWLS))]
    if once:
        wanted = []
    elif hub:
        wanted = list(range(first + period, horizon + 1, period))
    else:
        wanted = [first + sum(gaps[: i + 1]) for i in range(len(gaps))]
    days = [first]
    for day in map(_fetch_day, wanted):
        if day > days[-1]:
            days.append(day)
    return days


def _times(seed: int, url: str, days: list[int]) -> list[tuple[int, int]]:
    return [(day, random.Random(f"{seed}/{url}/{day}").randrange(FETCH_HOURS * 3600)) for day in days]


def _drop(link: _Link, rng: random.Random) -> None:
    """Maybe gone from a re-crawl on (one draw pair for every link, used or not)."""
    chance, at = rng.random(), rng.randint(*DROP_AT)
    if link.record["position"] in ("CONTENT", "SIDEBAR") and chance < DROP_CHANCE:
        link.gone = at if link.gone is None else min(link.gone, at)
    if link.gone is not None and link.gone <= link.appears:
        link.gone = None


class _Plan:
    """Every page of the rehearsal (the sample's and the mirrors') with its fetches and links."""

    def __init__(self, crawl: SampleCrawl, seed: int, horizon: int):
        self.seed, self.horizon = seed, horizon
        self.hubs = _hub_paths()
        self.host_of = {urls.canonicalize(p["url"]).host: _host(p["url"]) for p in crawl.pages}
        self.host_of.update({urls.canonicalize(f"https://{h}/").host: h for h in MIRROR_HOSTS})
        by_page: dict[str, list[dict]] = {}
        for edge in crawl.edges:
            by_page.setdefault(edge["from_url"], []).append(edge)
        self.pages = [self._sample_page(row, by_page.get(row["url"], [])) for row in crawl.pages]
        source = [p for p in self.pages if p.host == MIRROR_SOURCE and p.is_html]
        self.pages += [self._mirror(page, i) for i in range(len(MIRRORS)) for page in source]

    def _target_host(self, to_url: str | None) -> str | None:
        return self.host_of.get(urls.canonicalize(to_url).host or "")

    def _sample_page(self, row: dict, records: list[dict]) -> _Page:
        url, host = row["url"], _host(row["url"])
        rng = random.Random(f"{self.seed}/{url}")
        first_seen = min((_seconds(r["discovered_at"]) for r in records if r["discovered_at"]),
                         default=rng.randrange(SAMPLE_FIRST_FETCHES))
        last_seen = max((_seconds(r["last_seen_at"]) for r in records if r["last_seen_at"]), default=first_seen)
        once = rng.random() < ONCE_CHANCE if not records else last_seen == first_seen
        hub = _path(url) in self.hubs[host]
        intro = HOST_DAYS[host]
        if hub or intro == LINK_FARM_DAY:
            first = intro
        else:
            share = min(first_seen / SAMPLE_FIRST_FETCHES, 0.999)
            first = intro + int(share * (max(LAST_FIRST_CRAWL_DAY - intro, 0) + 1))
        days = _fetch_days(_fetch_day(first), hub, once, self.horizon, rng)
        page = _Page(url, host, row["title"], row["text"], list(row["feed_links"]), _times(self.seed, url, days))
        source = urls.canonicalize(url).url
        seen: dict[str, int] = {}
        for record in records:
            target = urls.canonicalize(record["to_url"])
            key, anchor = target.url or "", record["anchor_text"] or ""
            if target.reason is not None or key == source or len(anchor) > MAX_ANCHOR_CHARS:
                page.order.append(("bad", -1, record))
            elif key in seen:
                page.order.append(("copy", seen[key], None))
            else:
                link = _Link({k: record[k] for k in EDGE_KEYS[:6]}, self._target_host(record["to_url"]))
                link.appears = 1 if _seconds(record["discovered_at"]) > first_seen and len(days) > 1 else 0
                link.gone = link.appears + 1 if _seconds(record["last_seen_at"]) < last_seen else None
                _drop(link, rng)
                seen[key] = len(page.links)
                page.order.append(("link", len(page.links), None))
                page.links.append(link)
        return page

    def _mirror(self, original: _Page, index: int) -> _Page:
        """``original``'s copy on the mirror ``MIRRORS[index]``."""
        host, _name = MIRRORS[index]
        path = _path(original.url)
        url = f"https://{host}{path}"
        rng = random.Random(f"{self.seed}/{url}")
        days = _fetch_days(MIRROR_DAY, path in self.hubs[MIRROR_SOURCE], False, self.horizon, rng)
        page = _Page(url, host, original.title, original.text, [], _times(self.seed, url, days))
        for link in original.links:
            record = {**link.record, "from_url": url}
            to_host = link.to_host
            if to_host == MIRROR_SOURCE:
                record["to_url"] = f"https://{host}{_path(urls.canonicalize(link.record['to_url']).url or '')}"
                to_host = host
            page.links.append(_Link(record, to_host))
        source_name = next(site.name for site in SITES if site.host == MIRROR_SOURCE)
        credit = f"This listing was first published on {source_name}."
        page.links.append(_Link(self._record(url, original.url, source_name, credit, "CONTENT"), MIRROR_SOURCE))
        others = [m for m in MIRRORS if m[0] != host]
        bar = "Also on: " + _SEPARATORS[1].join(name for _, name in others)
        for other, name in others:
            page.links.append(_Link(self._record(url, f"https://{other}{path}", name, bar, "SIDEBAR"), other))
        for link in page.links:
            _drop(link, rng)
        page.order = [("link", i, None) for i in range(len(page.links))]
        return page

    @staticmethod
    def _record(from_url: str, to_url: str, anchor: str, context: str, position: str) -> dict:
        return {"from_url": from_url, "to_url": to_url, "anchor_text": anchor, "context_window": context,
                "rel": None, "position": position}


# --- one day -----------------------------------------------------------------------------------


def _iso(ds: date, second: int) -> str:
    moment = datetime(ds.year, ds.month, ds.day, tzinfo=timezone.utc) + timedelta(seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Fetch:
    """A page fetched on a day: when, and its links on the page then (records with times)."""

    page: _Page
    fetched_at: str
    links: list[dict]
    extras: list[dict]      # the day's records of the page in order, bad ones and copies included


def _on_page(link: _Link, fetch: int, day: int) -> bool:
    return (link.appears <= fetch and (link.gone is None or fetch < link.gone)
            and (link.to_host is None or HOST_DAYS[link.to_host] <= day))


def _fetch(page: _Page, fetch: int, dates: list[date]) -> _Fetch:
    day, second = page.fetches[fetch]
    now = _iso(dates[day - 1], second)
    stamped: dict[int, dict] = {}
    for i, link in enumerate(page.links):
        if _on_page(link, fetch, day):
            found = next(j for j in range(fetch + 1) if _on_page(link, j, page.fetches[j][0]))
            seen = _iso(dates[page.fetches[found][0] - 1], page.fetches[found][1])
            stamped[i] = {**link.record, "discovered_at": seen, "last_seen_at": now}
    extras: list[dict] = []
    for kind, i, bad in page.order:
        if kind == "link" and i in stamped:
            extras.append(stamped[i])
        elif fetch == 0 and kind == "copy" and i in stamped:
            extras.append(dict(stamped[i]))
        elif fetch == 0 and bad is not None:
            extras.append({**bad, "discovered_at": now, "last_seen_at": now})
    return _Fetch(page, now, [stamped[i] for i in sorted(stamped)], extras)


def _fetches_of(plan: _Plan, day: int, dates: list[date]) -> list[_Fetch]:
    found = [(second, page.url, page, i) for page in plan.pages for i, (d, second) in enumerate(page.fetches)
             if d == day]
    return [_fetch(page, i, dates) for _, _, page, i in sorted(found, key=lambda f: (f[0], f[1]))]


def _record_hosts(plan: _Plan, fetches: list[_Fetch], records: Iterable[dict]) -> set[str]:
    hosts = {f.page.host for f in fetches}
    hosts.update(h for h in (plan._target_host(r["to_url"]) for r in records) if h)
    return hosts


# --- HTML, WARC and WAT ------------------------------------------------------------------------


def _ascii_url(url: str) -> str:
    """The URL with its host IDNA-encoded, as WARC headers carry it (the page URLs are canonical
    but for unicode hosts)."""
    host = _host(url)
    return url.replace(host, host.encode("idna").decode("ascii"), 1)


def _href(to_url: str, page_url: str) -> str:
    """``to_url`` as the page's markup writes it: path-relative on the page's own origin."""
    origin = "/".join(page_url.split("/")[:3])
    if to_url == origin or to_url.startswith(origin + "/") or to_url.startswith(origin + "?") \
            or to_url.startswith(origin + "#"):
        rest = to_url[len(origin):]
        return rest if rest.startswith("/") else "/" + rest
    return to_url


def _in_sentence(record: dict) -> tuple[str, str] | None:
    """The text before and after the anchor in its context window, when that is a sentence."""
    anchor, context = record["anchor_text"] or "", record["context_window"] or ""
    if not anchor or anchor not in context or any(sep in context for sep in _SEPARATORS):
        return None
    before, _, after = context.partition(anchor)
    return before, after


def _layout(links: list[dict]) -> list[tuple[str, list[dict]]]:
    """The page's links in document order, by block: nav, main (sentences, then a listing), aside,
    footer."""
    by = {pos: [r for r in links if r["position"] == pos] for pos in ("NAV", "CONTENT", "SIDEBAR", "FOOTER")}
    sentences = [r for r in by["CONTENT"] if _in_sentence(r)]
    listing = [r for r in by["CONTENT"] if not _in_sentence(r)]
    return [("nav", by["NAV"]), ("sentences", sentences), ("listing", listing), ("aside", by["SIDEBAR"]),
            ("footer", by["FOOTER"])]


def _a(record: dict, page_url: str) -> str:
    href = html.escape(_href(record["to_url"], page_url), quote=True)
    rel = f' rel="{html.escape(record["rel"], quote=True)}"' if record["rel"] else ""
    anchor = record["anchor_text"] or ""
    inner = html.escape(anchor, quote=False) if anchor else f'<img src="{LOGO}" alt="">'
    return f'<a href="{href}"{rel}>{inner}</a>'


def _items(records: list[dict], page_url: str) -> str:
    return "<ul>" + "".join(f"<li>{_a(r, page_url)}</li>" for r in records) + "</ul>" if records else ""


def _document(page: _Page, links: list[dict]) -> str:
    """The page's HTML: its title, feeds, text and exactly ``links`` as ``<a href>`` elements."""
    blocks = dict(_layout(links))
    head = [f"<title>{html.escape(page.title, quote=False)}</title>"]
    head += [f'<link rel="alternate" type="application/rss+xml" href="{html.escape(f, quote=True)}">'
             for f in page.feeds]
    sentences = []
    for record in blocks["sentences"]:
        before, after = _in_sentence(record) or ("", "")
        sentences.append(f"<p>{html.escape(before, quote=False)}{_a(record, page.url)}"
                         f"{html.escape(after, quote=False)}</p>")
    body = [
        f"<header><nav>{_items(blocks['nav'], page.url)}</nav></header>",
        f"<main><h1>{html.escape(page.title, quote=False)}</h1><p>{html.escape(page.text, quote=False)}</p>",
        *sentences, _items(blocks["listing"], page.url), "</main>",
        f"<aside>{_items(blocks['aside'], page.url)}</aside>",
        f"<footer>{_items(blocks['footer'], page.url)}</footer>",
    ]
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' + "\n".join(head)
            + "\n</head>\n<body>\n" + "\n".join(b for b in body if b) + "\n</body>\n</html>\n")


def _wat_links(links: list[dict], page_url: str) -> list[dict]:
    """``HTML-Metadata.Links`` of the document: values as written in its source."""
    entries: list[dict] = []
    for _, records in _layout(links):
        for record in records:
            entry = {"path": "A@/href", "url": html.escape(_href(record["to_url"], page_url), quote=True)}
            anchor = record["anchor_text"] or ""
            if anchor:
                entry["text"] = html.escape(" ".join(anchor.split())[:WAT_TEXT_CHARS], quote=False)
            else:
                entries.append({"path": "IMG@/src", "url": LOGO, "alt": ""})
            if record["rel"]:
                entry["rel"] = html.escape(record["rel"], quote=True)
            entries.append(entry)
    return entries


def _record_id(*parts: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_ID_SPACE, '|'.join(parts))}>"


def _warc_record(version: str, fields: list[tuple[str, str]], block: bytes) -> bytes:
    """One gzip member holding one WARC record (``Content-Length`` is the block's byte length)."""
    head = f"WARC/{version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + f"Content-Length: {len(block)}\r\n"
    return gzip.compress(head.encode("utf-8") + b"\r\n" + block + b"\r\n\r\n", mtime=0)


def _warcinfo(version: str, name: str, warc_date: str) -> bytes:
    info = f"software: linkgraph-sample\r\nformat: WARC File Format {version}\r\nfilename: {name}\r\n".encode()
    fields = [("WARC-Type", "warcinfo"), ("WARC-Date", warc_date), ("WARC-Filename", name),
              ("WARC-Record-ID", _record_id(name, warc_date)), ("Content-Type", "application/warc-fields")]
    return _warc_record(version, fields, info)


def _http_date(stamp: str) -> str:
    return format_datetime(datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc), usegmt=True)


def _response_headers(stamp: str, body: bytes) -> list[tuple[str, str]]:
    return [("Date", _http_date(stamp)), ("Server", "nginx"), ("Content-Type", _HTML_TYPE),
            ("Content-Length", str(len(body)))]


def _warc_bytes(fetches: list[_Fetch], ds: str) -> tuple[bytes, int]:
    """The day's WARC file (warcinfo, then a request and a response per HTML page) and its links."""
    name = FILE_NAMES[WARC]
    out, links = [_warcinfo("1.1", name, f"{ds}T00:00:00Z")], 0
    for fetch in fetches:
        if not fetch.page.is_html:
            continue
        uri = _ascii_url(fetch.page.url)
        body = _document(fetch.page, fetch.links).encode("utf-8")
        parts = urlsplit(uri)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        request = (f"GET {target} HTTP/1.1\r\nHost: {parts.hostname}\r\nUser-Agent: linkgraph-sample-crawler/1.0\r\n"
                   "Accept: text/html\r\n\r\n").encode()
        response_id, request_id = _record_id(ds, uri, "response"), _record_id(ds, uri, "request")
        status = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in _response_headers(fetch.fetched_at, body))
        common = [("WARC-Date", fetch.fetched_at), ("WARC-Target-URI", uri)]
        out.append(_warc_record("1.1", [("WARC-Type", "request"), ("WARC-Record-ID", request_id), *common,
                                        ("WARC-Concurrent-To", response_id),
                                        ("Content-Type", "application/http; msgtype=request")], request))
        out.append(_warc_record("1.1", [("WARC-Type", "response"), ("WARC-Record-ID", response_id), *common,
                                        ("Content-Type", "application/http; msgtype=response")],
                                (status + "\r\n").encode() + body))
        links += len(fetch.links)
    return b"".join(out), links


def _wat_bytes(fetches: list[_Fetch], ds: str) -> tuple[bytes, int]:
    """The day's WAT file (warcinfo, then a metadata record per HTML page) and its links."""
    name = FILE_NAMES[WAT]
    out, links = [_warcinfo("1.0", name, f"{ds}T00:00:00Z")], 0
    for fetch in fetches:
        page = fetch.page
        if not page.is_html:
            continue
        uri = _ascii_url(page.url)
        body = _document(page, fetch.links).encode("utf-8")
        response_id = _record_id(ds, uri, "response")
        head = {"Title": html.escape(page.title, quote=False),
                "Link": [{"path": "LINK@/href", "url": html.escape(f, quote=True), "rel": "alternate",
                          "type": "application/rss+xml"} for f in page.feeds]}
        envelope = {
            "Format": "WARC",
            "WARC-Header-Metadata": {"WARC-Type": "response", "WARC-Date": fetch.fetched_at,
                                     "WARC-Record-ID": response_id, "WARC-Target-URI": uri,
                                     "Content-Type": "application/http; msgtype=response"},
            "Payload-Metadata": {
                "Actual-Content-Type": "application/http; msgtype=response",
                "HTTP-Response-Metadata": {
                    "Response-Message": {"Version": "HTTP/1.1", "Status": "200", "Reason": "OK"},
                    "Headers": dict(_response_headers(fetch.fetched_at, body)),
                    "Entity-Length": str(len(body)),
                    "HTML-Metadata": {"Head": head, "Links": _wat_links(fetch.links, page.url)},
                },
            },
        }
        block = json.dumps({"Envelope": envelope}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        out.append(_warc_record("1.0", [("WARC-Type", "metadata"), ("WARC-Target-URI", uri),
                                        ("WARC-Date", fetch.fetched_at),
                                        ("WARC-Record-ID", _record_id(ds, uri, "metadata")),
                                        ("WARC-Refers-To", response_id), ("Content-Type", "application/json")], block))
        links += len(fetch.links)
    return b"".join(out), links


# --- writing -----------------------------------------------------------------------------------


def _write_edges(directory: Path, fmt: str, fetches: list[_Fetch], ds: str) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    if fmt == JSONL:
        return write_jsonl((r for f in fetches for r in f.extras), directory / FILE_NAMES[JSONL])
    data, links = (_warc_bytes if fmt == WARC else _wat_bytes)(fetches, ds)
    (directory / FILE_NAMES[fmt]).write_bytes(data)
    return links


def _signal(fetch: _Fetch) -> dict:
    page = fetch.page
    return {"url": page.url, "title": page.title, "text": page.text, "feed_links": list(page.feeds),
            "fetched_at": fetch.fetched_at}


def write_crawl_days(root: str | Path, days: int = DAYS, first_ds: str = FIRST_DS, seed: int = 7) -> list[CrawlDay]:
    """Write ``days`` days of crawl batches of the sample crawl for ``seed`` under ``root`` (module
    docstring: layout and how the crawl unfolds), ``first_ds`` being day 1; returns the days, as
    ``days.json`` lists them.  The same arguments give the same bytes, and day i's files are the
    same for every ``days >= i``."""
    if days < 1:
        raise ValueError(f"days must be at least 1, not {days}")
    root = Path(root)
    start = date.fromisoformat(first_ds)
    dates = [start + timedelta(days=i) for i in range(days)]
    crawl = generate_sample_crawl(seed)
    plan = _Plan(crawl, seed, max(days, DAYS))
    sitemaps_by_host: dict[str, list[dict]] = {}
    for row in crawl.sitemaps:
        sitemaps_by_host.setdefault(_host(row["url"]), []).append(row)
    seen_hosts: set[str] = set()
    out: list[CrawlDay] = []
    for index, when in enumerate(dates, start=1):
        ds, fmt = when.isoformat(), day_format(index)
        fetches = [] if fmt is None or index == EMPTY_DAY else _fetches_of(plan, index, dates)
        links = [r for f in fetches for r in f.links]
        hosts = _record_hosts(plan, fetches, links) if links or fetches else set()
        new_hosts = tuple(sorted(hosts - seen_hosts))
        seen_hosts |= hosts
        records = signals = entries = 0
        if fmt is not None:
            records = _write_edges(root / "edges" / ds, fmt, fetches, ds)
            signals_dir = root / "signals" / ds
            signals_dir.mkdir(parents=True, exist_ok=True)
            signals = write_jsonl((_signal(f) for f in fetches), signals_dir / SIGNALS_FILE)
            joining = [row for host, day in HOST_DAYS.items() if day == index for row in sitemaps_by_host.get(host, [])]
            if joining:
                write_sitemaps_xml(joining, root / "sitemaps" / ds)
                entries = len(joining)
        out.append(CrawlDay(
            index=index, ds=ds, fmt=fmt, records=records, new_hosts=new_hosts,
            link_farm_hosts=tuple(HOSTS["FARM"]) if index == LINK_FARM_DAY else (),
            mirror_hosts=MIRROR_HOSTS if index == MIRROR_DAY else (),
            empty=fmt is not None and records == 0, absent=fmt is None, signals=signals, sitemaps=entries,
        ))
    manifest = {"seed": seed, "first_ds": first_ds, "days": [asdict(day) for day in out]}
    (root / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return out
