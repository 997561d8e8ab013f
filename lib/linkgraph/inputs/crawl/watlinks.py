"""Links and page signals of a Common Crawl WAT record's ``HTML-Metadata``, read so that they equal
what :mod:`linkgraph.inputs.crawl.htmllinks` extracts from the same page in the WARC.

Common Crawl's WAT extractor (webarchive-commons' ``ExtractingParseObserver``, a lexer, not an
HTML5 parser) writes values as they stand in the page's source: attribute values with their
character references (``"url": "/p?a=1&amp;b=2"``) and an ``<a>``'s ``text`` as the raw text
between its tags, whitespace runs collapsed and cut at 100 characters.  So here:

* only ``A@/href`` entries are links (the WARC path keeps ``<a href>`` and nothing else:
  ``IMG@/src``, ``FORM@/action``, ``A@/data-href``, ... are not);
* ``url``, ``rel``, ``alt``, ``Head.Base`` and ``Head.Link`` values are decoded as an HTML5
  parser decodes attribute values (:func:`unescape_attribute`); ``text`` and ``Head.Title`` as it
  decodes text (:func:`html.unescape`); then whitespace-normalised like the WARC path's;
* ``url`` is resolved against the decoded ``Head.Base`` (itself resolved against the page URL),
  else the page URL, with the WARC path's :func:`~linkgraph.inputs.crawl.htmllinks.resolve`;
* an anchor without text takes the ``alt`` of the first image with one among the ``IMG@/`` entries
  listed right before it (the extractor lists an ``<a>`` at its end tag, after the images inside
  it; an image just before a link without text is taken for one inside it);
* no position nor context window: a WAT does not record where a link stands in the page.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.entities import html5 as _NAMED_REFERENCES
from typing import Any

from linkgraph.inputs.crawl.htmllinks import FEED_TYPES, is_feed_url, normalize_space, resolve

ANCHOR_PATH = "A@/href"
_IMAGE_PREFIX = "IMG@/"
_IMAGE_SOURCE = "IMG@/src"
# a character reference as html.unescape finds them (numeric, or up to 32 name characters)
_REFERENCE = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")


@dataclass
class WatLink:
    url: str
    anchor_text: str | None
    rel: str | None


@dataclass
class WatPage:
    title: str | None
    links: list[WatLink] = field(default_factory=list)
    feed_links: list[str] = field(default_factory=list)


def _attribute_reference(match: re.Match[str]) -> str:
    reference = match.group(0)
    name = match.group(1)
    if name.startswith("#") or name in _NAMED_REFERENCES:
        return html.unescape(reference)
    for end in range(len(name) - 1, 1, -1):          # the longest legacy name, as html.unescape
        if name[:end] in _NAMED_REFERENCES:
            following = name[end]
            if following == "=" or (following.isascii() and following.isalnum()):
                return reference                      # HTML5: not a reference inside an attribute
            return _NAMED_REFERENCES[name[:end]] + name[end:]
    return reference


def unescape_attribute(value: str) -> str:
    """``value`` (an attribute value as written) decoded as an HTML5 parser decodes it: like
    :func:`html.unescape`, except that a legacy named reference without ``;`` followed by ``=`` or
    an ASCII letter or digit stays as written (``?a=1&copy=2`` keeps its ``&copy``)."""
    return _REFERENCE.sub(_attribute_reference, value) if "&" in value else value


def _attribute(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    return None if value is None else unescape_attribute(str(value))


def _normalized_attribute(entry: dict[str, Any], key: str) -> str | None:
    return normalize_space(_attribute(entry, key)) or None


def _text(value: object) -> str | None:
    if value is None:
        return None
    return normalize_space(html.unescape(str(value))) or None


def page_base(head: dict[str, Any], page_url: str) -> str:
    """The URL relative links of the page resolve against: ``Head.Base`` decoded and resolved
    against the page URL, when not blank; else the page URL."""
    base = _attribute(head, "Base")
    return resolve(page_url, base) if base and base.strip() else page_url


def _head_feeds(head: dict[str, Any], base: str, feeds: dict[str, None]) -> None:
    for link in head.get("Link") or []:
        if not isinstance(link, dict):
            continue
        rels = (_attribute(link, "rel") or "").lower().split()
        feed_type = (_attribute(link, "type") or "").split(";", 1)[0].strip().lower()
        href = (_attribute(link, "url") or "").strip()
        if "alternate" in rels and feed_type in FEED_TYPES and href:
            url = resolve(base, href)
            if url.startswith(("http://", "https://")):
                feeds.setdefault(url, None)


def _links(entries: list[Any], base: str, feeds: dict[str, None]) -> list[WatLink]:
    links: list[WatLink] = []
    image_alt: str | None = None       # of the images listed since the last entry of another kind
    for entry in entries:
        path = str(entry.get("path") or "") if isinstance(entry, dict) else ""
        if path.startswith(_IMAGE_PREFIX):
            if path == _IMAGE_SOURCE and image_alt is None:
                image_alt = _normalized_attribute(entry, "alt")
            continue
        href = _attribute(entry, "url") if path == ANCHOR_PATH else None
        if href is not None:
            url = resolve(base, href)
            if is_feed_url(url):
                feeds.setdefault(url, None)
            links.append(WatLink(url, _text(entry.get("text")) or image_alt, _normalized_attribute(entry, "rel")))
        image_alt = None
    return links


def wat_page(html_meta: dict[str, Any], page_url: str) -> WatPage:
    """Title, links and feed links of a WAT ``HTML-Metadata`` object of the page at ``page_url``."""
    head = html_meta.get("Head")
    head = head if isinstance(head, dict) else {}
    base = page_base(head, page_url)
    feeds: dict[str, None] = {}
    _head_feeds(head, base, feeds)
    links = _links(html_meta.get("Links") or [], base, feeds)
    return WatPage(_text(head.get("Title")), links, list(feeds))
