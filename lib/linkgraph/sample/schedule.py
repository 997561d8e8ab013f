"""The schedule of the sample crawl's daily batches (``linkgraph.sample.days`` writes them): on which
day each host joins, on which day and second each page is fetched, and which of its links are on
the page at each fetch.

:class:`Plan` lays out every page of ``generate_sample_crawl(seed)`` and of the mirror network
with its fetches (day numbers 1-based) and links; :func:`fetches_of` gives one day's fetches with
the records as that day's crawl sees them.  A page's fetches up to a day do not depend on the
number of days planned (``horizon``), so a shorter run is a prefix of a longer one.

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
* The mirror network (``MIRRORS``, ``MIRROR_HOSTS``) copies every HTML page of ``MIRROR_SOURCE``
  with its paths, anchors, rels and positions, credits the original page and links each page's
  copies on the other mirrors, so each pair of mirror domains exchanges one link per copied page
  both ways (far above ``analysis.syndication_min_links``, 20), and no mirror sends more than 90%
  of its external links to one domain (not a link farm by ``analysis.link_farm_share``).
* Nothing is fetched on ``EMPTY_DAY`` (8) and ``ABSENT_DAY`` (11) (``NO_FETCH_DAYS``): fetches
  falling on them move to the next day.
* ``Page.links`` are the page's valid links, once each; the sample's deliberately bad records and
  its exact duplicates stay in the page's record order (``Page.order``) and come back only with
  the page's first fetch (``Fetch.extras``).

Times are UTC, ``YYYY-MM-DDTHH:MM:SSZ``: a page is fetched at a fixed second of the day's first
``FETCH_HOURS`` hours (derived from seed, URL and day), ``last_seen_at`` is that fetch and
``discovered_at`` the fetch that first found the link (``last_seen_at >= discovered_at``).  A
day's fetches are in fetch order (second, then URL).  Everything derives from ``seed``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from urllib.parse import urlsplit

from linkgraph import urls
from linkgraph.sample.data import HOSTS, SITES
from linkgraph.sample.generator import BASE_TIME, EDGE_KEYS, SampleCrawl

LINK_FARM_DAY = 5
EMPTY_DAY = 8
MIRROR_DAY = 9
ABSENT_DAY = 11
NO_FETCH_DAYS = (EMPTY_DAY, ABSENT_DAY)
LAST_FIRST_CRAWL_DAY = 13      # every sample page is first fetched by this day (if its host has joined)

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
SEPARATORS = (" | ", " · ")            # a context window with these is a menu bar or listing


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
class Page:
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


def url_host(url: str) -> str:
    return url.split("/")[2]


def _path(url: str) -> str:
    return url[len(url.split("/", 3)[0]) + 2 + len(url_host(url)):] or "/"


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


class Plan:
    """Every page of the rehearsal (the sample's and the mirrors') with its fetches and links."""

    def __init__(self, crawl: SampleCrawl, seed: int, horizon: int):
        self.seed, self.horizon = seed, horizon
        self.hubs = _hub_paths()
        self.host_of = {urls.canonicalize(p["url"]).host: url_host(p["url"]) for p in crawl.pages}
        self.host_of.update({urls.canonicalize(f"https://{h}/").host: h for h in MIRROR_HOSTS})
        by_page: dict[str, list[dict]] = {}
        for edge in crawl.edges:
            by_page.setdefault(edge["from_url"], []).append(edge)
        self.pages = [self._sample_page(row, by_page.get(row["url"], [])) for row in crawl.pages]
        source = [p for p in self.pages if p.host == MIRROR_SOURCE and p.is_html]
        self.pages += [self._mirror(page, i) for i in range(len(MIRRORS)) for page in source]

    def _target_host(self, to_url: str | None) -> str | None:
        return self.host_of.get(urls.canonicalize(to_url).host or "")

    def _sample_page(self, row: dict, records: list[dict]) -> Page:
        url, host = row["url"], url_host(row["url"])
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
        page = Page(url, host, row["title"], row["text"], list(row["feed_links"]), _times(self.seed, url, days))
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

    def _mirror(self, original: Page, index: int) -> Page:
        """``original``'s copy on the mirror ``MIRRORS[index]``."""
        host, _name = MIRRORS[index]
        path = _path(original.url)
        url = f"https://{host}{path}"
        rng = random.Random(f"{self.seed}/{url}")
        days = _fetch_days(MIRROR_DAY, path in self.hubs[MIRROR_SOURCE], False, self.horizon, rng)
        page = Page(url, host, original.title, original.text, [], _times(self.seed, url, days))
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
        bar = "Also on: " + SEPARATORS[1].join(name for _, name in others)
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
class Fetch:
    """A page fetched on a day: when, and its links on the page then (records with times)."""

    page: Page
    fetched_at: str
    links: list[dict]
    extras: list[dict]      # the day's records of the page in order, bad ones and copies included


def _on_page(link: _Link, fetch: int, day: int) -> bool:
    return (link.appears <= fetch and (link.gone is None or fetch < link.gone)
            and (link.to_host is None or HOST_DAYS[link.to_host] <= day))


def _fetch(page: Page, fetch: int, dates: list[date]) -> Fetch:
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
    return Fetch(page, now, [stamped[i] for i in sorted(stamped)], extras)


def fetches_of(plan: Plan, day: int, dates: list[date]) -> list[Fetch]:
    found = [(second, page.url, page, i) for page in plan.pages for i, (d, second) in enumerate(page.fetches)
             if d == day]
    return [_fetch(page, i, dates) for _, _, page, i in sorted(found, key=lambda f: (f[0], f[1]))]


def record_hosts(plan: Plan, fetches: list[Fetch], records: Iterable[dict]) -> set[str]:
    hosts = {f.page.host for f in fetches}
    hosts.update(h for h in (plan._target_host(r["to_url"]) for r in records) if h)
    return hosts
