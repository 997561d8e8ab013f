"""A crawl's WAT gives the same links as its WARC (linkgraph.inputs.crawl.watlinks).

Pages with tricky markup are written once; each becomes a WARC response record and the WAT
metadata record Common Crawl's extractor would write for it (attribute values and anchor text as
they stand in the source, character references included: :func:`cc_html_metadata`).  Both are
read, and ingested into a lake each, and must give the same links, pages and rejects.
"""

from __future__ import annotations

import html
import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from linkgraph.inputs.crawl.extract import ExtractSettings, warc_rows, wat_rows
from linkgraph.inputs.crawl.warc import read_records
from linkgraph.inputs.crawl.watlinks import unescape_attribute, wat_page
from test_crawl import http_response, warc_record

# --- decoding ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("written", "meant"), [
    ("/photos/?gallery=Australia&amp;photo=495", "/photos/?gallery=Australia&photo=495"),
    ("?a=1&amp&b=2", "?a=1&&b=2"),              # legacy name without ';' before '&': decoded
    ("?a=1&amp", "?a=1&"),
    ("?a=1&amp-b", "?a=1&-b"),
    ("?a=1&ampb=2", "?a=1&ampb=2"),             # ... before a letter or '=': as written
    ("?a=1&copy=2&not=3", "?a=1&copy=2&not=3"),
    ("?a&notit;", "?a&notit;"),
    ("&ampé", "&é"),                            # only ASCII letters and digits keep it
    ("&#38;&#x26;&#X26&#65g", "&&&Ag"),          # numeric, with or without ';'
    ("&#128;&#0;&#xD800;&#1114112;", "\u20ac\ufffd\ufffd\ufffd"),
    ("&unknown; &# &#x; & amp;", "&unknown; &# &#x; & amp;"),
    ("&eacute;&CounterClockwiseContourIntegral;&gt&lt", "é\u2233><"),
])
def test_unescape_attribute(written, meant):
    assert unescape_attribute(written) == meant
    assert LexborHTMLParser(f'<a href="{written}">').css_first("a").attributes["href"] == meant


PIECES = ["&", "&", "#", "#x", "amp", "amp;", "AMP", "lt", "not", "notin", "it", "copy", "eacute", "38", "x26",
          "41", "128", "1114112", "D800", ";", "=", "-", "a", "Z", "1", "é", " ", "/", "?",
          "CounterClockwiseContourIntegral;"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_decoding_agrees_with_the_warc_paths_parser(value):
    """Attribute values and text decoded as Lexbor (the WARC path's HTML5 parser) decodes them."""
    anchor = LexborHTMLParser(f'<a href="{value}">{value}</a>').css_first("a")
    assert unescape_attribute(value) == anchor.attributes["href"]
    assert html.unescape(value) == anchor.text()


# --- Common Crawl's WAT extractor, for the elements used here ----------------------------------
# A port of webarchive-commons' ExtractingParseObserver (the lexer Common Crawl's WATs come from):
# values as written; an <a> listed at its end tag with the text between its tags, each text node's
# whitespace runs collapsed, the whole trimmed, collapsed and cut at 100 characters.

_TOKEN = re.compile(r"<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>|[^<]+|<", re.S)
_ATTRIBUTE = re.compile(r"""([^\s=/>"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+))?""")
_SCRIPT_CONTENT = re.compile(r"(?is)(<(script|style)\b[^>]*>).*?(</\2\s*>)")
_JAVA_SPACE = re.compile(r"[ \t\n\x0b\f\r]+")
_GLOBAL_HREFS = ("background", "data-href", "data-uri")
MAX_TEXT = 100
_JAVA_TRIMMED = "".join(map(chr, range(0x21)))  # String.trim()


def _raw_attributes(source: str) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for match in _ATTRIBUTE.finditer(source):
        value = match.group(2)
        if value is not None and value[:1] in "\"'":
            value = value[1:-1]
        found.setdefault(match.group(1).lower(), value)
    return found


def _entry(path: str, attributes: dict, url_key: str, *extra: str) -> dict:
    entry = {"path": path, "url": attributes[url_key]}
    entry.update({key: attributes[key] for key in extra if attributes.get(key) is not None})
    return entry


class CcExtractor:
    def __init__(self) -> None:
        self.links: list[dict] = []
        self.head: dict = {}
        self.anchors: list[tuple[dict | None, list[str]]] = []
        self.in_title, self.title = False, None

    def text(self, raw: str) -> None:
        text = _JAVA_SPACE.sub(" ", raw)[:MAX_TEXT]
        if self.in_title:
            self.title = text
            return
        for _entry, parts in self.anchors:
            room = MAX_TEXT - len("".join(parts))
            if room <= 0:
                break
            parts.append(text[:room])

    def close(self, tag: str) -> None:
        if self.in_title:
            self.in_title = False
            if self.title is not None:
                self.head["Title"] = self.title
            self.title = None
        elif tag == "A" and self.anchors:
            entry, parts = self.anchors.pop()
            text = _JAVA_SPACE.sub(" ", "".join(parts).strip(_JAVA_TRIMMED))[:MAX_TEXT]
            if entry is not None:
                self.links.append({**entry, "text": text} if text else entry)

    def open(self, tag: str, attributes: dict, empty: bool) -> None:
        if tag == "TITLE":
            self.in_title = not empty
            return
        for name in _GLOBAL_HREFS:
            if attributes.get(name) is not None:
                self.links.append({"path": f"{tag}@/{name}", "url": attributes[name]})
        if tag == "A":
            entry = _entry("A@/href", attributes, "href", "target", "alt", "title", "rel", "hreflang", "type") \
                if attributes.get("href") is not None else None
            self.anchors.append((entry, []))
        elif tag == "IMG" and attributes.get("src") is not None:
            self.links.append(_entry("IMG@/src", attributes, "src", "alt", "title"))
        elif tag == "FORM" and attributes.get("action") is not None:
            self.links.append(_entry("FORM@/action", attributes, "action", "target", "method"))
        elif tag == "LINK" and attributes.get("href") is not None:
            self.head.setdefault("Link", []).append(_entry("LINK@/href", attributes, "href", "rel", "type"))
        elif tag == "BASE" and attributes.get("href") is not None:
            self.head["Base"] = attributes["href"]


def cc_html_metadata(page: str) -> dict:
    """The ``HTML-Metadata`` object Common Crawl's WAT holds for ``page``."""
    extractor = CcExtractor()
    for match in _TOKEN.finditer(_SCRIPT_CONTENT.sub(r"\1\3", page)):
        closing, tag, attributes = match.groups()
        if tag is None:
            if not match.group(0).startswith("<!--"):
                extractor.text(match.group(0))
        elif closing:
            extractor.close(tag.upper())
        else:
            extractor.open(tag.upper(), _raw_attributes(attributes), attributes.rstrip().endswith("/"))
    meta: dict = {"Links": extractor.links}
    if extractor.head:
        meta["Head"] = extractor.head
    return meta


def test_cc_extractor_port_writes_values_as_in_the_source():
    meta = cc_html_metadata("""<title> A &amp; B </title><base href="/b/&amp;c/"><a href="/p?a=1&amp;b=2"
        rel=nofollow>x &lt; <b>y</b></a><a name=n>no href</a><a href='/i'><img src="i.png" alt="&quot;i&quot;"></a>""")
    assert meta == {"Head": {"Title": " A &amp; B ", "Base": "/b/&amp;c/"}, "Links": [
        {"path": "A@/href", "url": "/p?a=1&amp;b=2", "rel": "nofollow", "text": "x &lt; y"},
        {"path": "IMG@/src", "url": "i.png", "alt": "&quot;i&quot;"},
        {"path": "A@/href", "url": "/i"},
    ]}


# --- the pages ---------------------------------------------------------------------------------

GALLERY_URL = "https://www.example.com/photos/gallery.html"
GALLERY = """<!DOCTYPE html>
<html><head><title>Photos &amp; Galleries &#8211; Page&nbsp;2</title>
<base href="https://www.example.com/photos/&#x61;lbums/">
<link rel="alternate" type="application/rss+xml" href="/feed?format=rss&amp;lang=en">
<script>var s = '<a href="/not-a-link?a=1&amp;b=2">no</a>';</script>
</head><body>
<nav><a href="/photos/?gallery=Australia&amp;photo=495">Australia &amp; Oceania</a>
<a href="?gallery=Australia&amp;photo=496&amp;size=large">Next &gt;</a>
<a href='../?page=1&amp;sort=asc'>&lt; Previous</a></nav>
<p>Sorted <a href="list?sort=date&amp&order=desc">by date</a>, <a href="list?sort=name&ampx=1">&amp;amp without ;</a>,
<a href="list?a=1&copy=2&not=3">&copy 2024 &notit; &#169;</a> <a href=list?q=caf&eacute;&amp;p=2>caf&eacute;</a>
<A HREF="./same/./page.html?x=1&#38;y=2&#x26;z=3">  numeric   &#38; hex &#x26; refs </A>
<a href="  /spaced?a=1&amp;b=2
  ">spaced <b>bold</b>&nbsp;text</a></p>
<a href="javascript:void(0)" onclick="go()">js link</a> <a href="#top">Top</a> <a href="">this album</a>
<a href="mailto:photos@example.com?subject=Hi&amp;body=There">Mail</a>
<a href="https://ads.example.net/click?id=7&amp;ref=photos" rel="sponsored">Ad</a>
<a href="https://forum.example.org/t?id=1&amp;p=2" rel="nofollow&#32;ugc">forum</a>
<p><img src="/img/banner.png" alt="Banner &amp; co"> <a href="/photos/?gallery=Australia&photo=495">Australia again</a></p>
<a href="https://news.example.org/story?id=5&amp;src=photos"><img src="logo.png?v=1&amp;w=2" alt=" News &amp;  logo "></a>
<a href="https://news.example.org/story?id=5&amp;src=photos">News story</a>
<form action="/search?a=1&amp;b=2" method="get"><input name="q"></form>
<a href="/photos/?gallery=Asia&amp;photo=7" data-href="/tracking?x=1&amp;y=2">Asia</a>
<!-- <a href="/commented-out">old</a> -->
<footer><a href="https://www.example.com/photos/?gallery=Australia&amp;photo=495#comments">Comments</a></footer>
</body></html>"""

POST_URL = "https://blog.example.org/2024/05/post.html"
POST = """<html><head><title>&lt;b&gt;Release&lt;/b&gt; notes</title>
<link rel="alternate" type="application/atom+xml" href="../../feed.atom?tag=a&amp;b"></head><body>
<a href="../../about/">About &amp; contact</a> <a href="./next.html?from=post&amp;n=2">Next post &raquo;</a>
<a href="../04/older.html">&laquo; Older</a> <a href="https://www.example.com/photos/gallery.html">the gallery</a>
<a href="https://www.example.com/photos/albums/?p=1&amp;q=2" rel="ugc nofollow">reader&#39;s album</a>
<a href="/2024/05/post.html#comments">comments</a> <a href="/tags/?t=a&amp;t=b">tags a&amp;b</a>
</body></html>"""

MISSING_URL = "https://www.example.com/photos/missing.html"
MISSING = """<html><body>Not found. <a href="/photos/?a=1&amp;b=2">Back to photos</a></body></html>"""

OLD_URL = "http://example.com/photos"
RECORDS = [  # (page URL, status, headers, HTML or None)
    (GALLERY_URL, "200 OK", {"Content-Type": "text/html; charset=utf-8"}, GALLERY),
    (POST_URL, "200 OK", {"Content-Type": "text/html"}, POST),
    (MISSING_URL, "404 Not Found", {"Content-Type": "text/html"}, MISSING),
    (OLD_URL, "301 Moved Permanently", {"Location": GALLERY_URL}, None),
]


def _record_id(number: int) -> str:
    return f"20000000-0000-0000-0000-{number:012d}"


def warc_file() -> bytes:
    return b"".join(
        warc_record("response", url, http_response((page or "").encode(), status, tuple(f"{k}: {v}" for k, v in
                    headers.items())), _record_id(number))
        for number, (url, status, headers, page) in enumerate(RECORDS, 1)
    )


def wat_file() -> bytes:
    records = []
    for number, (url, status, headers, page) in enumerate(RECORDS, 1):
        response: dict = {"Response-Message": {"Version": "HTTP/1.1", "Status": status.split()[0],
                                               "Reason": status.split(" ", 1)[1]}, "Headers": headers}
        if page is not None:
            response["HTML-Metadata"] = cc_html_metadata(page)
        envelope = {
            "Format": "WARC",
            "WARC-Header-Metadata": {"WARC-Type": "response", "WARC-Target-URI": url, "WARC-Date": "2024-05-18T01:58:10Z",
                                     "WARC-Record-ID": f"<urn:uuid:{_record_id(number)}>"},
            "Payload-Metadata": {"Actual-Content-Type": "application/http; msgtype=response",
                                 "HTTP-Response-Metadata": response},
        }
        records.append(warc_record("metadata", url, json.dumps({"Envelope": envelope}).encode(),
                                   _record_id(100 + number)))
    return b"".join(records)


def _rows(data: bytes, wat: bool) -> list[dict]:
    settings_ = ExtractSettings()
    records = read_records(lambda: io.BytesIO(data), settings_.max_page_bytes)
    return list((wat_rows if wat else warc_rows)(records, "pages.warc.gz", settings_))


def test_wat_rows_equal_warc_rows():
    def essence(rows: list[dict]) -> list[tuple]:
        return [(r["row_kind"], r["from_url"], r["to_url"], r["anchor_text"], r["rel"], r["url"], r["title"],
                 r["feed_links"], r["link_count"], r["detail"]) for r in rows]

    warc, wat = _rows(warc_file(), wat=False), _rows(wat_file(), wat=True)
    assert essence(wat) == essence(warc)
    edges = {(r["to_url"], r["anchor_text"], r["rel"]) for r in wat if r["row_kind"] == "edge"}
    assert {  # worked out by hand
        ("https://www.example.com/photos/?gallery=Australia&photo=495", "Australia & Oceania", None),
        ("https://www.example.com/photos/albums/?gallery=Australia&photo=496&size=large", "Next >", None),
        ("https://www.example.com/photos/?page=1&sort=asc", "< Previous", None),
        ("https://www.example.com/photos/albums/list?sort=date&&order=desc", "by date", None),
        ("https://www.example.com/photos/albums/list?sort=name&ampx=1", "&amp without ;", None),
        ("https://www.example.com/photos/albums/list?a=1&copy=2&not=3", "© 2024 ¬it; ©", None),
        ("https://www.example.com/photos/albums/list?q=café&p=2", "café", None),
        ("https://www.example.com/photos/albums/same/page.html?x=1&y=2&z=3", "numeric & hex & refs", None),
        ("https://www.example.com/spaced?a=1&b=2", "spaced bold text", None),
        ("https://forum.example.org/t?id=1&p=2", "forum", "nofollow ugc"),
        ("https://news.example.org/story?id=5&src=photos", "News & logo", None),
        ("https://blog.example.org/about/", "About & contact", None),
        ("https://blog.example.org/2024/05/next.html?from=post&n=2", "Next post »", None),
        ("https://www.example.com/photos/albums/?p=1&q=2", "reader's album", "ugc nofollow"),
    } <= edges
    assert not any("/search" in url or "tracking" in url or "banner" in url for url, _a, _r in edges)
    pages = [(r["title"], r["feed_links"]) for r in wat if r["row_kind"] == "page"]
    assert pages == [("Photos & Galleries – Page 2", ["https://www.example.com/feed?format=rss&lang=en"]),
                     ("<b>Release</b> notes", ["https://blog.example.org/feed.atom?tag=a&b"])]


def test_wat_page_reads_anchors_only():
    page = wat_page({"Head": {"Base": " "}, "Links": [
        {"path": "A@/data-href", "url": "/tracking"}, {"path": "FORM@/action", "url": "/search"},
        {"path": "IMG@/src", "url": "/outside.png", "alt": "outside"}, {"path": "AREA@/href", "url": "/area"},
        {"path": "IMG@/src", "url": "/inside.png"}, {"path": "IMG@/src", "url": "/b.png", "alt": " B &amp; b"},
        {"path": "IMG@/longdesc", "url": "/b.html"}, {"path": "A@/href", "url": "/img-link"},
        {"path": "A@/href", "url": "/empty"}, {"path": "A@/href"}, "not an object",
    ]}, "https://a.example.com/x/")
    assert [(link.url, link.anchor_text) for link in page.links] == [
        ("https://a.example.com/img-link", "B & b"), ("https://a.example.com/empty", None)]


# --- the lakes ---------------------------------------------------------------------------------

@pytest.mark.e2e
def test_wat_and_warc_of_the_same_pages_give_the_same_lake(spark, tmp_path):
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    from linkgraph.lake.config import config_from_dict
    from steps_support import ingest_step

    def ingest(name: str, data: bytes, fmt: str):
        (tmp_path / f"{name}.gz").write_bytes(data)
        config = config_from_dict({"lake": {"path": str(tmp_path / name)}})
        report = ingest_step(spark, config, str(tmp_path / f"{name}.gz"), fmt)
        read = lambda table: spark.read.format("delta").load(str(tmp_path / name / table))  # noqa: E731
        return report, read

    warc_report, warc = ingest("warc", warc_file(), "warc")
    wat_report, wat = ingest("wat", wat_file(), "wat")
    assert (wat_report.read, wat_report.upserted, wat_report.rejected_by_reason) == (
        warc_report.read, warc_report.upserted, warc_report.rejected_by_reason)
    assert warc_report.rejected_by_reason["UNSUPPORTED_SCHEME"] == 2 and warc_report.rejected_by_reason[
        "DUPLICATE_MERGED"] >= 3

    assertDataFrameEqual(wat("pages"), warc("pages"))
    columns = ["src_id", "dst_id", "anchor_text", "link_type", "discovered_at", "last_seen_at"]
    assertDataFrameEqual(wat("links").select(columns), warc("links").select(columns))
    assertDataFrameEqual(wat("page_signals").select("url", "title", "feed_links", "fetched_at"),
                         warc("page_signals").select("url", "title", "feed_links", "fetched_at"))
    edge_rejects = ["reason", "from_url", "to_url", "anchor_text", "rel"]
    assertDataFrameEqual(wat("rejects").select(edge_rejects), warc("rejects").select(edge_rejects))

    stored = [row["url"] for row in wat("pages").select("url").collect()]
    assert "https://www.example.com/photos/?gallery=Australia&photo=495" in stored
    assert not [url for url in stored if "amp%3B" in url.lower() or "&amp;" in url]
    types = dict(wat("links").join(wat("pages").select(F.col("page_id").alias("dst_id"), "url"), "dst_id")
                 .select("url", "link_type").collect())
    assert (types["https://ads.example.net/click?id=7&ref=photos"], types["https://forum.example.org/t?id=1&p=2"],
            types["https://blog.example.org/about/"]) == ("SPONSORED", "UGC", "INTERNAL")
