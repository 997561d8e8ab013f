"""The sample crawl's generator: pages, their links and the records, built from the data files
(``linkgraph.sample.data``) and one ``random.Random(seed)``.  What it makes is described in the
package docstring (``linkgraph/sample/__init__.py``)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from linkgraph.sample.data import SITES, WEB, WORDS, Menu, Site

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
DUPLICATES = 4  # exact copies of good records, re-emitted later in the stream

_JOB_POOLS: dict[str, dict[str, Any]] = WORDS["job_pools"]
_VOCAB: dict[str, list[str]] = WORDS["vocabularies"]
_TEXT: dict[str, list[str]] = WORDS["texts"]
_SENTENCES: dict[str, list[str]] = WORDS["sentences"]
_APPLY_ANCHORS: dict[str, list[str]] = WORDS["apply_anchors"]
_FARM_ANCHORS: list[str] = WORDS["farm_anchors"]
_AD_COPY: list[str] = WORDS["ad_copy"]
_COMMENTERS: list[str] = WORDS["commenters"]
_LAYOUT: dict[str, str] = WORDS["layout"]
_FRAGMENTS: list[str] = WORDS["fragments"]
_TRANSLIT: dict[str, str] = WORDS["transliterate"]
_JOB_CODE: dict[str, str] = WORDS["job_code"]
_BAD: dict[str, Any] = WORDS["bad_records"]
_COMMENT_HOSTS: list[list[Any]] = WEB["comment_hosts"]
_COMMENT_RELS: list[list[Any]] = WEB["comment_rels"]
_SITEMAP_ENTRIES: dict[str, dict[str, Any]] = WEB["sitemap_entries"]
_SPAM_SITEMAP_ENTRY: dict[str, Any] = WEB["spam_sitemap_entry"]


@dataclass(frozen=True)
class SampleCrawl:
    """The sample: edge records, page signals, sitemap entries (see the package docstring)."""

    edges: list[dict]
    pages: list[dict]
    sitemaps: list[dict]
    # reason -> number of deliberately bad edge records that should be rejected with it
    expected_rejects: dict[str, int] = field(default_factory=dict)


# --- pages -----------------------------------------------------------------------------------


@dataclass
class Page:
    site: Site
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
class Link:
    target: Page | str | None  # a crawled page, or a raw (bad) URL
    anchor: str | None
    context: str | None
    rel: str | None
    position: str


def _slugify(title: str) -> str:
    text = "".join(_TRANSLIT.get(c, c) for c in title.lower())
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def _title_pool(vocab: str, rng: random.Random) -> list[str]:
    if vocab in _JOB_POOLS:
        spec = _JOB_POOLS[vocab]
        pool = [spec["format"].format(title=t, location=loc) for t in spec["titles"] for loc in spec["locations"]]
    else:
        pool = list(_VOCAB[vocab])
    rng.shuffle(pool)
    return pool


def _snippet(page: Page, rng: random.Random) -> str:
    pool = _TEXT[page.site.topic]
    if page.kind == "item":
        head = page.title if page.title[-1] in ".?!" else page.title + "."
        return " ".join([head, *rng.sample(pool, rng.randint(1, 2))])
    return " ".join(rng.sample(pool, rng.randint(1, 3)))


def _site_pages(site: Site) -> list[Page]:
    """The home page, the section pages and the static pages of the site's own menu entries."""
    own = [Page(site, "/", site.name, "home")]
    own += [Page(site, s.path, f"{s.label} | {site.name}", "section", s.path) for s in site.sections]
    paths = {p.path for p in own}
    for menu in site.nav + site.footer:
        if menu.host in ("", site.host) and menu.path not in paths:
            paths.add(menu.path)
            own.append(Page(site, menu.path, f"{menu.label} | {site.name}", "static"))
    return own


def _item_pages(site: Site, rng: random.Random) -> tuple[list[Page], list[Page]]:
    """The site's items, and the expired job postings only its sitemap still lists."""
    items: list[Page] = []
    expired: list[Page] = []
    pools: dict[str, list[str]] = {}
    ids = rng.sample(range(10000, 100000), 80)
    for section in site.sections:
        pool = pools.setdefault(section.vocab, _title_pool(section.vocab, rng))
        n = rng.randint(*section.count)
        extra = rng.randint(1, 2) if section.vocab in _JOB_POOLS and site.sitemap else 0
        for i in range(n + extra):
            title = pool.pop()
            path = section.item.format(
                slug=_slugify(title),
                id=ids.pop(),
                code=_JOB_CODE["prefix"] + "".join(rng.choice(_JOB_CODE["chars"]) for _ in range(8)),
                yyyy=rng.choice((2024, 2025)),
                mm=f"{rng.randint(1, 12):02d}",
            )
            page = Page(site, path, title, "item" if i < n else "expired", section.path)
            (items if i < n else expired).append(page)
    return items, expired


def _build_pages(rng: random.Random) -> tuple[list[Page], list[Page]]:
    """All crawled pages, site by site, and the expired job postings only sitemaps still list."""
    pages: list[Page] = []
    expired: list[Page] = []
    for site in SITES:
        own = _site_pages(site)
        items, gone = _item_pages(site, rng)
        own += items
        expired += gone
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


def _pick(weighted: Iterable[Any], rng: random.Random) -> Any:
    """One value of ``weighted`` ([value, weight] pairs), chosen by weight."""
    items = list(weighted)
    return rng.choices([i[0] for i in items], weights=[i[1] for i in items])[0]


class Crawl:
    """Lays out the links of every page (see the package docstring)."""

    def __init__(self, pages: list[Page], rng: random.Random):
        self.rng = rng
        self.out: list[Link] = []  # the links of the page being laid out
        self.targets: set[str] = set()  # and the URLs they point to (with the page's own)
        self.by_url = {p.url: p for p in pages}
        self.by_host: dict[str, list[Page]] = {}
        self.by_section: dict[tuple[str, str | None], list[Page]] = {}  # items; section None: all
        for p in pages:
            self.by_host.setdefault(p.site.host, []).append(p)
            if p.kind == "item":
                self.by_section.setdefault((p.site.host, None), []).append(p)
                self.by_section.setdefault((p.site.host, p.section), []).append(p)

    # a page's links, in page order; at most one per target, never to the page itself
    def links(self, page: Page) -> list[Link]:
        self.out, self.targets = [], {page.url}
        if page.is_document:
            return self.out
        self._nav(page)
        self._content(page)
        self._sidebar(page)
        self._footer(page)
        return self.out

    def add(self, target: Page, anchor: str, context: str, rel: str | None, position: str) -> bool:
        if target.url in self.targets:
            return False
        self.targets.add(target.url)
        self.out.append(Link(target, anchor, context, rel, position))
        return True

    def menu_target(self, site: Site, menu: Menu) -> Page:
        host = menu.host or site.host
        return self.by_url[f"{self.by_host[host][0].site.scheme}://{host}{menu.path}"]

    def items(self, host: str, section: str | None = None) -> list[Page]:
        return self.by_section.get((host, section), [])

    def pick_page(self, host: str) -> Page:
        items = self.items(host)
        return self.by_host[host][0] if not items or self.rng.random() < 0.25 else self.rng.choice(items)

    def _nav(self, page: Page) -> None:
        site = page.site
        contexts = _bar("", [m.label for m in site.nav], _LAYOUT["nav_separator"])
        if site.logo:
            self.add(self.by_host[site.host][0], "", contexts[0][:CONTEXT_CHARS], None, "NAV")
        for menu, context in zip(site.nav, contexts, strict=True):
            self.add(self.menu_target(site, menu), menu.label, context, menu.rel, "NAV")

    def _footer(self, page: Page) -> None:
        site = page.site
        contexts = _bar(_LAYOUT["footer"].format(site=site.name), [m.label for m in site.footer], _LAYOUT["separator"])
        for menu, context in zip(site.footer, contexts, strict=True):
            self.add(self.menu_target(site, menu), menu.label, context, menu.rel, "FOOTER")

    def _listing(self, prefix: str, targets: list[Page], position: str) -> None:
        contexts = _bar(prefix, [t.title for t in targets], _LAYOUT["separator"])
        for target, context in zip(targets, contexts, strict=True):
            self.add(target, target.title, context, None, position)

    def _content(self, page: Page) -> None:
        site, rng = page.site, self.rng
        items = self.items(site.host)
        if page.kind == "home" and items:
            self._listing(_LAYOUT["featured"], rng.sample(items, min(len(items), rng.randint(3, 5))), "CONTENT")
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

    def _external(self, page: Page, target: Page) -> None:
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

    def _comment(self, page: Page) -> None:
        rng = self.rng
        host = _pick([h for h in _COMMENT_HOSTS if h[0] != page.site.host], rng)
        target = self.by_host[host][0] if rng.random() < 0.7 else self.pick_page(host)
        if target.site.topic == "farm":
            anchor, template = rng.choice(_FARM_ANCHORS), rng.choice(_SENTENCES["spam_comment"])
        else:
            anchor, template = rng.choice(_COMMENTERS), rng.choice(_SENTENCES["comment"])
        self.add(target, anchor, _sentence(template, anchor), _pick(_COMMENT_RELS, rng), "CONTENT")

    def _sidebar(self, page: Page) -> None:
        site, rng = page.site, self.rng
        if site.partners:
            homes = [self.by_host[h][0] for h in site.partners]
            contexts = _bar(_LAYOUT["partners"], [t.site.name for t in homes], _LAYOUT["separator"])
            for target, context in zip(homes, contexts, strict=True):
                self.add(target, target.site.name, context, None, "SIDEBAR")
        if page.kind == "item":
            others = [p for p in self.items(site.host, page.section) if p is not page]
            prefix = _LAYOUT["related"]
        else:
            others, prefix = self.items(site.host), _LAYOUT["most_read"]
        self._listing(prefix, rng.sample(others, min(len(others), rng.randint(2, 3))), "SIDEBAR")
        if site.ad_hosts and rng.random() < site.ads:
            target = self.pick_page(rng.choice(site.ad_hosts))
            anchor = rng.choice(_AD_COPY)
            self.add(target, anchor, _sentence(_LAYOUT["ad"], anchor), "sponsored", "SIDEBAR")


# --- deliberately bad records ----------------------------------------------------------------


def _in_job_section(page: Page) -> bool:
    return any(s.path == page.section and s.vocab in _JOB_POOLS for s in page.site.sections)


class BadLinks:
    """Puts the deliberately bad links (package docstring) among the good ones of their pages and
    counts them by reason; the duplicates are added by ``generate_sample_crawl``."""

    def __init__(self, laid_out: list[tuple[Page, list[Link]]], rng: random.Random):
        self.rng = rng
        self.counts = dict.fromkeys(REJECT_REASONS, 0)
        self.by_page = {page.url: links for page, links in laid_out}
        self.pages = [page for page, _ in laid_out]
        self.items = [p for p in self.pages if p.kind == "item" and not p.is_document]

    def put(self, page: Page, reason: str, to_url: Page | str | None, anchor: str, template: str,
            rel: str | None = None, position: str = "CONTENT") -> None:
        links = self.by_page[page.url]
        links.insert(self.rng.randint(0, len(links)), Link(to_url, anchor, _sentence(template, anchor), rel, position))
        self.counts[reason] += 1

    def put_all(self) -> dict[str, int]:
        self.unsupported_schemes()
        self.malformed_urls()
        self.null_fields()
        self.self_links()
        self.oversized_anchor()
        return self.counts

    def unsupported_schemes(self) -> None:
        rng, mailto, tel, share, script = self.rng, _BAD["mailto"], _BAD["tel"], _BAD["share"], _BAD["javascript"]
        for page in self.pages:  # mailto: (and one tel:) on every contact page
            if page.kind == "static" and any(word in page.path for word in _BAD["contact_pages"]):
                domain = page.site.host.removeprefix("www.").removeprefix("jobs.")
                email = f"{rng.choice(mailto['users'])}@{domain}"
                self.put(page, "UNSUPPORTED_SCHEME", f"mailto:{email}", email, mailto["template"])
                if page.site.host == tel["host"]:
                    self.put(page, "UNSUPPORTED_SCHEME", tel["url"], tel["anchor"], tel["template"])
        for page in rng.sample([p for p in self.items if p.site.topic in share["topics"]], 5):
            url = share["url"].format(title=page.title.replace(" ", "%20"), url=page.url)
            self.put(page, "UNSUPPORTED_SCHEME", url, share["anchor"], share["template"])
        job_items = [p for p in self.items if _in_job_section(p)]
        for page in rng.sample(job_items, 5):
            url, anchor = rng.choice(script["links"])
            self.put(page, "UNSUPPORTED_SCHEME", url, anchor, script["template"])

    def malformed_urls(self) -> None:
        urls = _BAD["malformed"]
        commented = self.rng.sample([p for p in self.items if p.site.comments], len(urls))
        for url, page in zip(urls, commented, strict=True):
            self.put(page, "MALFORMED_URL", url, self.rng.choice(_COMMENTERS), _SENTENCES["comment"][0], rel="ugc")

    def null_fields(self) -> None:
        empty_href, missing_href = _BAD["empty_href"], _BAD["missing_href"]
        *empty, missing = self.rng.sample(self.items, 4)
        for page in empty:  # href=""
            self.put(page, "NULL_FIELD", "", empty_href["anchor"], empty_href["template"])
        self.put(missing, "NULL_FIELD", None, missing_href["anchor"], missing_href["template"])

    def self_links(self) -> None:
        permalink, to_top = _BAD["permalink"], _BAD["back_to_top"]
        exact, *pages = self.rng.sample(self.items, 3)
        self.put(exact, "SELF_LINK", exact.url, permalink["anchor"], permalink["template"])
        for page in pages:  # a self-link once the fragment is dropped
            self.put(page, "SELF_LINK", page.url + to_top["fragment"], to_top["anchor"], to_top["template"],
                     position="FOOTER")

    def oversized_anchor(self) -> None:
        rng, stuffed = self.rng, _BAD["stuffed"]
        farm_page = rng.choice([p for p in self.items if p.site.topic == "farm"])
        linked = {link.target.url for link in self.by_page[farm_page.url] if isinstance(link.target, Page)}
        target = next(p for p in self.pages
                      if p.site.topic == "farm" and p.site is not farm_page.site and p.url not in linked)
        anchor = " ".join(rng.choice(_FARM_ANCHORS) for _ in range(stuffed["anchors"]))
        self.put(farm_page, "OVERSIZED_FIELD", target, anchor, stuffed["template"])


# --- records ---------------------------------------------------------------------------------


def _iso(seconds: int) -> str:
    return (BASE_TIME + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _mixed_case(host: str, rng: random.Random) -> str:
    labels = host.split(".")
    if rng.random() < 0.5:
        return ".".join(label.capitalize() for label in labels)
    return ".".join([labels[0].upper()] + [label.title() for label in labels[1:-1]] + labels[-1:])


def _raw_url(page: Page, rng: random.Random) -> str:
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


def _edge(page: Page, link: Link, rng: random.Random) -> dict:
    discovered = page.first if rng.random() < 0.9 else rng.randint(page.first, page.last)
    last_seen = page.last if rng.random() < 0.95 else rng.randint(discovered, page.last)
    target = link.target
    return {
        "from_url": page.url,
        "to_url": _raw_url(target, rng) if isinstance(target, Page) else target,
        "anchor_text": link.anchor,
        "context_window": link.context,
        "rel": link.rel,
        "position": link.position,
        "discovered_at": _iso(discovered),
        "last_seen_at": _iso(last_seen),
    }


def _sitemap_rows(pages: list[Page], expired: list[Page], rng: random.Random) -> list[dict]:
    rows = []
    for site in SITES:
        for page in [p for p in pages + expired if p.site is site]:
            modified = BASE_TIME + timedelta(seconds=page.first - rng.randint(0, 120 * 86400))
            lastmod = modified.date().isoformat()
            if site.sitemap == "full" and (page.kind != "static" or rng.random() < 0.5):
                entry = _SITEMAP_ENTRIES[page.kind]
                rows.append({
                    "url": page.url,
                    "priority": entry["priority"],
                    "lastmod": None if rng.random() < 0.1 else lastmod,
                    "changefreq": entry["changefreq"],
                })
            elif site.sitemap == "blogger" and page.kind in ("home", "item"):
                rows.append({"url": page.url, "priority": None, "lastmod": lastmod, "changefreq": None})
            elif site.sitemap == "spam":
                rows.append({"url": page.url, **_SPAM_SITEMAP_ENTRY})
    return rows


def _edge_records(laid_out: list[tuple[Page, list[Link]]], rng: random.Random) -> list[dict]:
    """The edge records of every link, in page order, and ``DUPLICATES`` exact copies of good ones
    re-emitted later in the stream."""
    edges: list[dict] = []
    good: list[int] = []
    for page, links in laid_out:
        for link in links:
            if isinstance(link.target, Page) and len(link.anchor or "") <= OVERSIZED_ANCHOR_CHARS:
                good.append(len(edges))
            edges.append(_edge(page, link, rng))
    for i in sorted(rng.sample(good, DUPLICATES), reverse=True):
        edges.insert(rng.randint(i + 1, len(edges)), dict(edges[i]))
    return edges


def generate_sample_crawl(seed: int = 7) -> SampleCrawl:
    """The sample crawl for ``seed`` (package docstring); the same seed gives identical output."""
    rng = random.Random(seed)
    pages, expired = _build_pages(rng)
    crawl = Crawl(pages, rng)
    laid_out = [(page, crawl.links(page)) for page in pages]
    expected = BadLinks(laid_out, rng).put_all()
    edges = _edge_records(laid_out, rng)
    expected["DUPLICATE_MERGED"] = DUPLICATES
    page_rows = [{"url": p.url, "title": p.title, "text": p.text, "feed_links": list(p.feeds)} for p in pages]
    return SampleCrawl(edges, page_rows, _sitemap_rows(pages, expired, rng), expected)
