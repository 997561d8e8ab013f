"""Links and page signals of one HTML page, parsed with selectolax (the Lexbor HTML5 parser).

:func:`extract_page` walks the DOM once in document order and returns every ``<a href>`` with:

* **url**: ``href`` (surrounding whitespace, tabs and newlines removed, as browsers do) resolved
  against the first ``<base href>`` (itself resolved against the page URL), else the page URL.
  Nothing is filtered here: ``mailto:``/``javascript:`` links are kept for ingest validation to
  reject as UNSUPPORTED_SCHEME, so they are counted;
* **anchor text**: the link's visible text, whitespace-normalised; when empty, the ``alt`` of the
  first image inside the link that has one; else null;
* **context window**: up to ``context_chars`` (50) characters of page text before the link, the
  anchor text, and up to 50 characters after it, whitespace-normalised (an anchor text longer than
  200 characters is shortened inside the window to its first and last 100, joined by ``…``);
* **rel**: the ``rel`` attribute as written (ingest maps sponsored/ugc/nofollow to link types);
* **position**, from the nearest enclosing landmark element:

  - NAV: ``<nav>``, ``<header>``, ``role=navigation|banner|menu|menubar``, or an element whose
    ``id``/``class`` contains a token ``nav``, ``navbar``, ``navigation``, ``menu``, ``menubar``,
    ``breadcrumb(s)``, ``masthead`` or whose id is ``header``;
  - FOOTER: ``<footer>``, ``role=contentinfo``, an ``id``/``class`` token ``footer``;
  - SIDEBAR: ``<aside>``, ``role=complementary``, an ``id``/``class`` token ``sidebar``;
  - CONTENT: ``<main>``, ``<article>``, ``role=main|article``, or none of these encloses the link.

  The nearest of these around the link decides (a ``<nav>`` inside ``<main>`` is NAV, a link in
  ``<main>`` inside a ``class="menu-open"`` wrapper is CONTENT).  Tokens are the lower-cased
  ``id``/``class`` split at every non-alphanumeric character (``site-footer`` -> ``site``,
  ``footer``), which catches the pre-HTML5 ``<div id="footer">``; ``<html>`` and ``<body>`` classes
  are ignored (page-wide flags such as ``main-menu-pinned``).

**Page text**: the text of ``<body>`` outside ``script``, ``style``, ``noscript``, ``template``,
``svg`` and ``iframe``, with a space at every block-level boundary and whitespace collapsed.
**Title**: the first ``<title>``.  **Feed links**: absolute http(s) URLs of
``<link rel=alternate>`` elements whose ``type`` is an RSS/Atom/RDF/JSON-feed/XML type, and of
``<a href>`` whose path ends in ``.rss``, ``.atom``, ``.rdf`` or ``.xml`` (a last segment starting
with ``sitemap`` excepted) or whose last path segment is ``feed``, ``rss`` or ``atom``; in document
order, without repeats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from linkgraph.inputs.crawl.htmlguard import (
    MAX_HTML_DEPTH,
    MAX_HTML_WORK,
    ParseBudget,
    check_clock,
    html_cost_problem,
)

NAV, CONTENT, FOOTER, SIDEBAR = "NAV", "CONTENT", "FOOTER", "SIDEBAR"

_SKIP_TEXT = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "head", "object", "select"})
_INLINE = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd", "mark",
    "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr", "label", "big",
    "tt", "strike", "ins", "del", "img",
})
_TAG_POSITIONS = {"nav": NAV, "header": NAV, "footer": FOOTER, "aside": SIDEBAR, "main": CONTENT, "article": CONTENT}
_ROLE_POSITIONS = {
    "navigation": NAV, "banner": NAV, "menu": NAV, "menubar": NAV,
    "contentinfo": FOOTER, "complementary": SIDEBAR, "main": CONTENT, "article": CONTENT,
}
_PAGE_ELEMENTS = frozenset({"html", "body"})  # their classes are page-wide flags, not landmarks
_TOKEN_POSITIONS = {
    "nav": NAV, "navbar": NAV, "navigation": NAV, "menu": NAV, "menubar": NAV, "breadcrumb": NAV,
    "breadcrumbs": NAV, "masthead": NAV, "footer": FOOTER, "sidebar": SIDEBAR,
}
FEED_TYPES = frozenset({
    "application/rss+xml", "application/atom+xml", "application/rdf+xml", "application/feed+json",
    "application/xml", "text/xml", "application/rss", "text/rss+xml",
})
_FEED_SEGMENTS = frozenset({"feed", "rss", "atom"})
_FEED_SUFFIXES = (".rss", ".atom", ".rdf", ".xml")
_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")
_WHITESPACE = re.compile(r"\s+")
_URL_NOISE = re.compile(r"[\t\n\r]")
ANCHOR_IN_CONTEXT_MAX = 200
_CLOCK_EVERY = 4096                 # nodes walked between two looks at the clock


@dataclass
class Link:
    url: str
    anchor_text: str | None
    context_window: str | None
    rel: str | None
    position: str


@dataclass
class PageExtract:
    title: str | None
    text: str
    links: list[Link] = field(default_factory=list)
    feed_links: list[str] = field(default_factory=list)


def normalize_space(text: str | None) -> str:
    return _WHITESPACE.sub(" ", text or "").strip()


def resolve(base: str, href: str) -> str:
    """``href`` resolved against ``base``; an href urljoin cannot parse is returned as written
    (ingest then rejects it with a reason)."""
    href = _URL_NOISE.sub("", href.strip())
    try:
        return urljoin(base, href)
    except ValueError:
        return href


def is_feed_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https"):
        return False
    path = parts.path.lower()
    last = path.rstrip("/").rsplit("/", 1)[-1]
    if last in _FEED_SEGMENTS:
        return True
    return path.endswith(_FEED_SUFFIXES) and not last.startswith("sitemap")


def html_complexity_problem(html: str, max_depth: int = MAX_HTML_DEPTH, max_work: int = MAX_HTML_WORK,
                            budget: ParseBudget | None = None) -> str | None:
    """Why ``html`` is too deeply nested or too costly to parse, or ``None`` (see
    :mod:`linkgraph.inputs.crawl.htmlguard`); ``budget`` replaces ``max_depth`` and ``max_work``."""
    return html_cost_problem(html, budget or ParseBudget(max_depth=max_depth, max_work=max_work))


def _landmark(tag: str, attributes: dict) -> str | None:
    position = _TAG_POSITIONS.get(tag)
    if position:
        return position
    role = (attributes.get("role") or "").strip().lower()
    if role in _ROLE_POSITIONS:
        return _ROLE_POSITIONS[role]
    if tag in _PAGE_ELEMENTS:
        return None
    element_id = (attributes.get("id") or "").strip().lower()
    if element_id == "header":
        return NAV
    for token in _TOKEN_SPLIT.split(f"{element_id} {(attributes.get('class') or '').lower()}"):
        if token in _TOKEN_POSITIONS:
            return _TOKEN_POSITIONS[token]
    return None


class _TextBuffer:
    """Collapsed-whitespace text with stable character offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.space_pending = False

    def add(self, text: str) -> None:
        if not text:
            return
        leading = text[0].isspace()
        words = _WHITESPACE.sub(" ", text).strip()
        if not words:
            self.space_pending = True
            return
        if self.length and (leading or self.space_pending):
            self.parts.append(" ")
            self.length += 1
        self.parts.append(words)
        self.length += len(words)
        self.space_pending = text[-1].isspace()

    def boundary(self) -> None:
        self.space_pending = True

    def value(self) -> str:
        return "".join(self.parts)


def _shorten(anchor: str) -> str:
    if len(anchor) <= ANCHOR_IN_CONTEXT_MAX:
        return anchor
    half = ANCHOR_IN_CONTEXT_MAX // 2
    return f"{anchor[:half]}…{anchor[-half:]}"


def extract_page(html: str, page_url: str, context_chars: int = 50, budget: ParseBudget | None = None,
                 started: float | None = None) -> PageExtract:
    """Title, text, links and feed links of ``html`` fetched from ``page_url``.

    With ``started`` (a ``time.monotonic()``), the parse and the walk of the tree raise
    ``PayloadError(OVERSIZED_PAGE)`` once ``budget.max_seconds`` have passed since then."""
    budget = budget or ParseBudget()
    deadline = None if started is None else started + budget.max_seconds
    tree = LexborHTMLParser(html)
    if deadline is not None:
        check_clock(deadline, budget, "in the parser")
    title_node = tree.css_first("title")
    title = normalize_space(title_node.text(deep=True)) if title_node is not None else ""
    base_node = tree.css_first("base[href]")
    base = page_url
    if base_node is not None and (base_node.attributes.get("href") or "").strip():
        base = resolve(page_url, str(base_node.attributes["href"]))
    walk = _Walk(base, budget, deadline)
    if tree.root is not None:
        walk.run(tree.root)
    return walk.page(title or None, context_chars)


class _Walk:
    """One depth-first walk of the parsed tree in document order (iterative, enter/leave events),
    collecting the page text, the links with their text offsets and landmarks, and feed links."""

    def __init__(self, base: str, budget: ParseBudget, deadline: float | None) -> None:
        self.base = base
        self.budget = budget
        self.deadline = deadline
        self.text = _TextBuffer()
        self.open_links: list[dict] = []      # the <a> being walked (HTML5 parsing never nests them)
        self.found: list[dict] = []
        self.feeds: dict[str, None] = {}
        self.landmarks: list[str | None] = []
        self.skip_depth = 0

    def run(self, root: Any) -> None:
        stack = [(root, True)]
        steps = 0
        while stack:
            node, entering = stack.pop()
            steps += 1
            if self.deadline is not None and steps % _CLOCK_EVERY == 0:
                check_clock(self.deadline, self.budget, "walking the parsed page")
            tag = node.tag or ""
            if tag == "-text":
                if not self.skip_depth:
                    self.text.add(node.text_content or "")
            elif tag.startswith("-") or tag.startswith("_"):
                continue  # comments, doctype
            elif entering:
                self.enter(node, tag)
                stack.append((node, False))
                child = node.last_child
                while child is not None:
                    stack.append((child, True))
                    child = child.prev
            else:
                self.leave(node, tag)

    def enter(self, node: Any, tag: str) -> None:
        attributes = node.attributes
        if tag in _SKIP_TEXT:
            self.skip_depth += 1
        if tag not in _INLINE:
            self.text.boundary()
        self.landmarks.append(_landmark(tag, attributes))
        if tag == "a" and attributes.get("href") is not None:
            record: dict[str, Any] = {
                "href": attributes["href"], "rel": attributes.get("rel"), "alt": None,
                "position": next((p for p in reversed(self.landmarks) if p), CONTENT),
                "start": self.text.length,   # a pending space is stripped from the anchor below
            }
            self.open_links.append(record)
            self.found.append(record)
        elif tag == "img" and self.open_links and self.open_links[-1]["alt"] is None:
            self.open_links[-1]["alt"] = normalize_space(attributes.get("alt")) or None
        elif tag == "link":
            _feed_from_link_element(attributes, self.base, self.feeds)

    def leave(self, node: Any, tag: str) -> None:
        if tag in _SKIP_TEXT:
            self.skip_depth -= 1
        if tag not in _INLINE:
            self.text.boundary()
        self.landmarks.pop()
        if tag == "a" and self.open_links and node.attributes.get("href") is not None:
            self.open_links.pop()["end"] = self.text.length

    def page(self, title: str | None, context_chars: int) -> PageExtract:
        page_text = self.text.value()
        links = []
        for record in self.found:
            start, end = record["start"], record.get("end", self.text.length)
            anchor = page_text[start:end].strip() or record["alt"]
            before = page_text[max(0, start - context_chars):start]
            after = page_text[end:end + context_chars]
            context = normalize_space(f"{before} {_shorten(anchor or '')} {after}") or None
            url = resolve(self.base, record["href"])
            if is_feed_url(url):
                self.feeds.setdefault(url, None)
            rel = normalize_space(record["rel"]) or None
            links.append(Link(url, anchor or None, context, rel, record["position"]))
        return PageExtract(title, page_text, links, list(self.feeds))


def _feed_from_link_element(attributes: dict, base: str, feeds: dict[str, None]) -> None:
    rel_tokens = (attributes.get("rel") or "").lower().split()
    feed_type = (attributes.get("type") or "").split(";", 1)[0].strip().lower()
    href = (attributes.get("href") or "").strip()
    if "alternate" in rel_tokens and feed_type in FEED_TYPES and href:
        url = resolve(base, href)
        if url.startswith(("http://", "https://")):
            feeds.setdefault(url, None)
