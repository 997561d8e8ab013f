"""WARC/WAT link extraction and Common Crawl graph import (linkgraph.inputs.crawl).

Plain-Python tests of the reader, payload decoding and HTML extraction first (fast), then a few
Spark ingests on small lakes.  Expected values are worked out by hand from the HTML below.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import shared_file
from linkgraph.inputs.crawl import payload as P
from linkgraph.inputs.crawl.extract import ExtractSettings, warc_rows, wat_rows
from linkgraph.inputs.crawl.htmllinks import extract_page
from linkgraph.inputs.crawl.warc import ReadProblem, WarcRecord, read_records

CC_EXCERPT = "warc/CC-MAIN-2020-34-excerpt.warc.gz"
PAGE_URL = "https://www.example.com/jobs/index.html"

# Every position and rel case, hand-written.
JOBS_HTML = """<!DOCTYPE html>
<html><head><title> Jobs at  Example </title><base href="https://www.example.com/jobs/">
<link rel="alternate" type="application/rss+xml" href="/jobs.rss"></head>
<body>
<header><a href="/">Home</a></header>
<nav><a href="openings">Openings</a></nav>
<div role="navigation"><a href="/about">About</a></div>
<main><p>We are hiring engineers. Read the <a href="https://partner.example.org/guide" rel="sponsored nofollow">hiring
   guide</a> before you apply today.</p>
<p><a href="https://forum.example.net/t/1" rel="ugc">forum thread</a> <a href="https://spam.example.info/" rel="nofollow">spam</a>
<a href="https://news.example.org/x"><img src="logo.png" alt=" News  logo "></a></p>
<script>document.write('<a href="/not-a-link">x</a>')</script></main>
<aside><a href="/related">Related</a></aside>
<div id="footer"><a href="mailto:jobs@example.com">Mail us</a></div>
<footer><a href="/contact">Contact</a></footer>
</body></html>"""

JOBS_TEXT = ("Home Openings About We are hiring engineers. Read the hiring guide before you apply today. "
             "forum thread spam Related Mail us Contact")


def warc_record(record_type: str, uri: str | None, block: bytes, record_id: str, version: str = "1.1",
                date: str = "2024-05-18T01:58:10Z", content_type: str | None = None) -> bytes:
    """One gzip member holding one WARC record (deterministic bytes)."""
    content_type = content_type or {
        "response": "application/http; msgtype=response", "request": "application/http; msgtype=request",
        "warcinfo": "application/warc-fields", "metadata": "application/json",
    }[record_type]
    lines = [f"WARC/{version}", f"WARC-Type: {record_type}", f"WARC-Record-ID: <urn:uuid:{record_id}>",
             f"WARC-Date: {date}", f"Content-Type: {content_type}", f"Content-Length: {len(block)}"]
    if uri:
        lines.insert(2, f"WARC-Target-URI: {uri}")
    return gzip.compress(("\r\n".join(lines) + "\r\n\r\n").encode() + block + b"\r\n\r\n", mtime=0)


def http_response(body: bytes, status: str = "200 OK", headers: tuple[str, ...] = ("Content-Type: text/html; charset=utf-8",)) -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers]) + "\r\n\r\n").encode() + body


def handwritten_warc() -> bytes:
    """warcinfo, request, the jobs page, a redirect, an image, an undecodable page, a 404, an
    oversized page (over 150,000 bytes), a chunked+gzip page, and a WARC/0.17 record."""
    big = b"<html><body>" + b"<p>filler</p>" * 20_000 + b"</body></html>"
    small = b"<html><body><p>Small <a href='/a'>page</a></p></body></html>"
    chunked = gzip.compress(small, mtime=0)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunked), chunked)
    return b"".join([
        warc_record("warcinfo", None, b"software: hand\r\n", "00000000-0000-0000-0000-000000000001"),
        warc_record("request", PAGE_URL, b"GET /jobs/index.html HTTP/1.1\r\nHost: www.example.com\r\n\r\n",
                    "00000000-0000-0000-0000-000000000002"),
        warc_record("response", PAGE_URL, http_response(JOBS_HTML.encode()), "00000000-0000-0000-0000-000000000003"),
        warc_record("response", "http://example.com/", http_response(b"", "301 Moved Permanently",
                    ("Location: https://www.example.com/jobs/index.html",)), "00000000-0000-0000-0000-000000000004"),
        warc_record("response", "https://www.example.com/logo.png",
                    http_response(b"\x89PNG....", headers=("Content-Type: image/png",)), "00000000-0000-0000-0000-000000000005"),
        warc_record("response", "https://www.example.com/latin",
                    http_response("<html><body>caf\u00e9 cr\u00e8me br\u00fbl\u00e9e</body></html>".encode("latin-1"),
                                  headers=("Content-Type: text/html; charset=x-no-such-charset",)),
                    "00000000-0000-0000-0000-000000000006"),
        warc_record("response", "https://www.example.com/gone", http_response(b"<html>gone</html>", "404 Not Found"),
                    "00000000-0000-0000-0000-000000000007"),
        warc_record("response", "https://www.example.com/big", http_response(big), "00000000-0000-0000-0000-000000000008"),
        warc_record("response", "https://www.example.com/small",
                    http_response(chunked, headers=("Content-Type: text/html", "Transfer-Encoding: chunked",
                                                    "Content-Encoding: gzip")), "00000000-0000-0000-0000-000000000009"),
        warc_record("response", "<https://www.example.com/old>",
                    http_response(b"<html><body><a href='/new'>newer page</a></body></html>"),
                    "00000000-0000-0000-0000-000000000010", version="0.17", date="2008-04-30T20:48:25Z"),
    ])


PAGE_SETTINGS = ExtractSettings(max_page_bytes=150_000)


def rows_of(data: bytes, settings: ExtractSettings = PAGE_SETTINGS, wat: bool = False):
    records = read_records(lambda: io.BytesIO(data), settings.max_page_bytes)
    return list((wat_rows if wat else warc_rows)(records, "test.warc.gz", settings))


# --- HTML extraction ---------------------------------------------------------------------------

def test_extract_page_positions_rels_anchors_contexts():
    page = extract_page(JOBS_HTML, PAGE_URL)
    assert page.title == "Jobs at Example"
    assert page.text == JOBS_TEXT
    assert page.feed_links == ["https://www.example.com/jobs.rss"]
    got = [(link.url, link.anchor_text, link.rel, link.position) for link in page.links]
    assert got == [
        ("https://www.example.com/", "Home", None, "NAV"),                       # <header>
        ("https://www.example.com/jobs/openings", "Openings", None, "NAV"),       # <nav>, relative to <base>
        ("https://www.example.com/about", "About", None, "NAV"),                  # role=navigation
        ("https://partner.example.org/guide", "hiring guide", "sponsored nofollow", "CONTENT"),
        ("https://forum.example.net/t/1", "forum thread", "ugc", "CONTENT"),
        ("https://spam.example.info/", "spam", "nofollow", "CONTENT"),
        ("https://news.example.org/x", "News logo", None, "CONTENT"),             # alt of the image
        ("https://www.example.com/related", "Related", None, "SIDEBAR"),          # <aside>
        ("mailto:jobs@example.com", "Mail us", None, "FOOTER"),                   # id="footer"
        ("https://www.example.com/contact", "Contact", None, "FOOTER"),           # <footer>
    ]
    contexts = {link.anchor_text: link.context_window for link in page.links}
    # 50 characters of text on each side, cut mid-word, whitespace-normalised.
    assert contexts["hiring guide"] == ("e Openings About We are hiring engineers. Read the hiring guide "
                                        "before you apply today. forum thread spam Related")
    assert contexts["Home"] == "Home Openings About We are hiring engineers. Read the"
    assert contexts["News logo"] == "ng guide before you apply today. forum thread spam News logo Related Mail us Contact"


def test_context_window_shortens_long_anchor_text():
    long_anchor = "word " * 100
    page = extract_page(f"<p>before <a href=/x>{long_anchor}</a> after</p>", "http://a.example.com/")
    (link,) = page.links
    assert link.anchor_text == long_anchor.strip()
    assert link.context_window.startswith("before " + "word " * 20)
    assert "…" in link.context_window and link.context_window.endswith(" after")
    assert len(link.context_window) <= 2 * 50 + 201 + 2


def test_landmark_rules_nearest_wins_and_page_classes_ignored():
    html = """<html class="main-menu-pinned"><body class="has-sidebar">
      <div class="menu-open"><main><a href=/c>c</a><nav><a href=/n>n</a></nav></main></div>
      <div class="site-footer"><a href=/f>f</a></div><div class="left-sidebar"><a href=/s>s</a></div>
      <div role="contentinfo"><aside><a href=/s2>s2</a></aside></div><a href=/plain>plain</a></body></html>"""
    positions = {link.anchor_text: link.position for link in extract_page(html, "http://a.example.com/").links}
    assert positions == {"c": "CONTENT", "n": "NAV", "f": "FOOTER", "s": "SIDEBAR", "s2": "SIDEBAR", "plain": "CONTENT"}


def test_feed_links_rule():
    html = """<head><link rel="alternate" type="application/atom+xml" href="https://b.example.com/atom">
      <link rel="stylesheet" type="text/css" href="/style.css"><link rel="alternate" hreflang="de" href="/de/"></head>
      <body><a href="/news/feed/">feed</a><a href="/sitemap.xml">map</a><a href="/data.xml">xml</a>
      <a href="/news/feed/">again</a><a href="/page.html">page</a></body>"""
    assert extract_page(html, "http://a.example.com/").feed_links == [
        "https://b.example.com/atom", "http://a.example.com/news/feed/", "http://a.example.com/data.xml",
    ]


# --- payload decoding --------------------------------------------------------------------------

def test_charset_rules():
    assert P.decode_html("caf\u00e9".encode("cp1252"), "iso-8859-1") == ("caf\u00e9", "cp1252")
    assert P.decode_html("\u4e2d\u6587".encode("gb18030"), "GB2312")[0] == "\u4e2d\u6587"
    meta = '<meta charset="windows-1251"><p>\u041f\u0440\u0438\u0432\u0435\u0442'.encode("cp1251")
    assert P.decode_html(meta, None)[0].endswith("\u041f\u0440\u0438\u0432\u0435\u0442")
    assert P.decode_html(b"\xef\xbb\xbfplain", "latin-1") == ("plain", "utf-8")       # BOM wins
    assert P.decode_html("d\u00e9j\u00e0".encode("cp1252"), None) == ("d\u00e9j\u00e0", "cp1252")
    with pytest.raises(P.PayloadError) as unknown:
        P.decode_html("d\u00e9j\u00e0".encode("cp1252"), "x-unknown")
    assert unknown.value.reason == "UNDECODABLE_CHARSET"
    with pytest.raises(P.PayloadError) as noisy:
        P.decode_html(bytes(range(0x80, 0x100)) * 4, "utf-8")
    assert noisy.value.reason == "UNDECODABLE_CHARSET"


def test_http_body_decoding():
    body = b"<html>ok</html>"
    chunked = b"5\r\n<html\r\na\r\n>ok</html>\r\n0\r\n\r\n"
    assert P.decode_http_body(chunked, {"transfer-encoding": "chunked"}) == body
    assert P.decode_http_body(gzip.compress(body), {"content-encoding": "gzip"}) == body
    with pytest.raises(P.PayloadError) as bad:
        P.decode_http_body(b"not gzip", {"content-encoding": "gzip"})
    assert bad.value.reason == "MALFORMED_RECORD"


# --- WARC reading and record rows --------------------------------------------------------------

def test_handwritten_warc_rows():
    rows = rows_of(handwritten_warc())
    records = [r for r in rows if r["row_kind"] != "edge"]
    assert [(r["row_kind"], r["reason"] or r["detail"] if r["row_kind"] != "page" else r["url"]) for r in records] == [
        ("skipped", "warcinfo"),
        ("skipped", "request"),
        ("page", PAGE_URL),
        ("redirect", None),
        ("rejected", "NON_HTML"),
        ("rejected", "UNDECODABLE_CHARSET"),
        ("skipped", "HTTP status 4xx"),
        ("rejected", "OVERSIZED_PAGE"),
        ("page", "https://www.example.com/small"),
        ("page", "https://www.example.com/old"),                       # WARC/0.17, <uri> unwrapped
    ]
    rejected = {r["reason"]: r for r in records if r["row_kind"] == "rejected"}
    assert "<urn:uuid:00000000-0000-0000-0000-000000000005>" in rejected["NON_HTML"]["detail"]
    assert rejected["NON_HTML"]["from_url"] == "https://www.example.com/logo.png"
    edges = [r for r in rows if r["row_kind"] == "edge"]
    assert len(edges) == 10 + 1 + 1 + 1
    redirect = edges[10]
    assert (redirect["from_url"], redirect["to_url"], redirect["anchor_text"]) == ("http://example.com/", PAGE_URL, None)
    assert {e["discovered_at"] for e in edges[:11]} == {"2024-05-18T01:58:10.000000Z"}
    assert edges[-1]["discovered_at"] == "2008-04-30T20:48:25.000000Z"
    page = records[2]
    assert (page["title"], page["text"], page["feed_links"], page["link_count"]) == (
        "Jobs at Example", JOBS_TEXT, ["https://www.example.com/jobs.rss"], 10)


def test_truncated_warc_keeps_every_complete_record_before_the_cut():
    data = shared_file(CC_EXCERPT).read_bytes()
    whole = [r for r in read_records(lambda: io.BytesIO(data), 10**7)]
    assert len(whole) == 50 and all(isinstance(r, WarcRecord) for r in whole)
    cut_record = whole[22]                                 # a request record at byte 69787
    for cut in (cut_record.offset + 20, cut_record.offset + 150, cut_record.offset + 213, 100_000):
        read = list(read_records(lambda cut=cut: io.BytesIO(data[:cut]), 10**7))
        complete = [r for r in read if isinstance(r, WarcRecord)]
        problems = [r for r in read if isinstance(r, ReadProblem)]
        assert [r.record_id for r in complete] == [r.record_id for r in whole[: len(complete)]]
        assert all(r.offset + 1 < cut for r in complete)
        assert len(problems) == 1 and problems[0].reason == "TRUNCATED_RECORD", cut
        assert whole[len(complete)].offset < cut                # the cut falls inside the next record
    assert len([r for r in read_records(lambda: io.BytesIO(data[: cut_record.offset]), 10**7)]) == 22


def test_corrupt_gzip_member_is_skipped_and_reported():
    data = bytearray(shared_file(CC_EXCERPT).read_bytes())
    data[60000:60100] = bytes(100)                          # inside the response at offset 48321
    read = list(read_records(lambda: io.BytesIO(bytes(data)), 10**7))
    problems = [r for r in read if isinstance(r, ReadProblem)]
    assert len(read) == 50 and len(problems) == 1
    assert problems[0].reason == "MALFORMED_RECORD" and problems[0].offset == 48321
    assert "next readable record at offset 60227" in problems[0].detail


def test_cc_excerpt_extraction_counts():
    rows = rows_of(shared_file(CC_EXCERPT).read_bytes(), ExtractSettings())
    kinds = [r["row_kind"] for r in rows]
    assert kinds.count("page") == 16 and kinds.count("skipped") == 34 and "rejected" not in kinds
    edges = [r for r in rows if r["row_kind"] == "edge"]
    web = [e["to_url"] for e in edges if e["to_url"].startswith(("http://", "https://"))]
    assert len(edges) == 1411
    assert len({urlsplit(u).hostname for u in web}) == 127
    assert sum(1 for e in edges if e["anchor_text"]) > 1300


# --- WAT ---------------------------------------------------------------------------------------

def wat_json(uri: str, links: list[dict] | None, warc_type: str = "response", status: str = "200",
             headers: dict | None = None) -> bytes:
    response = {"Response-Message": {"Status": status}, "Headers": headers or {}}
    if links is not None:
        response["HTML-Metadata"] = {
            "Head": {"Title": " WAT  page ", "Base": "/base/",
                     "Link": [{"path": "LINK@/href", "url": "/feed.atom", "rel": "alternate", "type": "application/atom+xml"}]},
            "Links": links,
        }
    envelope = {"WARC-Header-Metadata": {"WARC-Type": warc_type, "WARC-Target-URI": uri, "WARC-Date": "2024-05-18T01:58:10Z",
                                         "WARC-Record-ID": "<urn:uuid:wat-target>"},
                "Payload-Metadata": {"HTTP-Response-Metadata": response} if warc_type == "response" else {}}
    return json.dumps({"Envelope": envelope}).encode()


def handwritten_wat() -> bytes:
    links = [
        {"path": "A@/href", "url": "x.html", "text": "  the  x "},
        {"path": "A@/href", "url": "https://other.example.org/", "text": "other", "rel": "nofollow"},
        {"path": "IMG@/src", "url": "pic.png"},
        {"path": "A@/href", "url": "/rss"},
    ]
    return b"".join([
        warc_record("warcinfo", None, b"software: hand\r\n", "10000000-0000-0000-0000-000000000001"),
        warc_record("metadata", "https://w.example.com/p", wat_json("https://w.example.com/p", links), "10000000-0000-0000-0000-000000000002"),
        warc_record("metadata", "https://w.example.com/p", wat_json("https://w.example.com/p", None, "request"), "10000000-0000-0000-0000-000000000003"),
        warc_record("metadata", "https://w.example.com/pdf", wat_json("https://w.example.com/pdf", None), "10000000-0000-0000-0000-000000000004"),
        warc_record("metadata", "https://w.example.com/empty", wat_json("https://w.example.com/empty", []), "10000000-0000-0000-0000-000000000005"),
        warc_record("metadata", "http://w.example.com/", wat_json("http://w.example.com/", None, status="301",
                    headers={"Location": "https://w.example.com/p"}), "10000000-0000-0000-0000-000000000006"),
        warc_record("metadata", "https://w.example.com/bad", b"{not json", "10000000-0000-0000-0000-000000000007"),
    ])


def test_wat_rows():
    rows = rows_of(handwritten_wat(), wat=True)
    records = [(r["row_kind"], r["reason"] or r["detail"]) for r in rows if r["row_kind"] != "edge"]
    assert records == [
        ("skipped", "warcinfo"), ("page", None), ("skipped", "WAT of a request record"),
        ("skipped", "WAT without HTML metadata (no links)"), ("page", None), ("redirect", None),
        ("rejected", "MALFORMED_RECORD"),
    ]
    edges = [(r["from_url"], r["to_url"], r["anchor_text"], r["rel"], r["position"]) for r in rows if r["row_kind"] == "edge"]
    assert edges == [
        ("https://w.example.com/p", "https://w.example.com/base/x.html", "the x", None, None),
        ("https://w.example.com/p", "https://other.example.org/", "other", "nofollow", None),
        ("https://w.example.com/p", "https://w.example.com/rss", None, None, None),
        ("http://w.example.com/", "https://w.example.com/p", None, None, None),
    ]
    page = next(r for r in rows if r["row_kind"] == "page")
    assert (page["title"], page["feed_links"], page["link_count"]) == (
        "WAT page", ["https://w.example.com/feed.atom", "https://w.example.com/rss"], 3)
    assert [r["link_count"] for r in rows if r["row_kind"] == "page"] == [3, 0]


def test_real_wat_envelope_is_read_and_counted():
    rows = rows_of(shared_file("warc/whirlwind.warc.wat.gz").read_bytes(), wat=True)
    assert [(r["row_kind"], r["detail"]) for r in rows] == [("skipped", "warcinfo"), ("skipped", "WAT of a request record")]


def test_format_guessed_from_extension():
    from linkgraph.cli import guess_format

    assert guess_format("CC-MAIN-20200808165417-20200808195417-00395.warc.gz") == "warc"
    assert guess_format("whirlwind.warc.wat.gz") == "wat"


# --- Spark: ingest into lakes ------------------------------------------------------------------

def _config(lake_dir: Path, **crawl):
    from linkgraph.lake.config import config_from_dict

    return config_from_dict({"lake": {"path": str(lake_dir)}, "crawl": crawl})


@pytest.mark.slow
def test_ingest_cc_excerpt_counts_add_up(spark, tmp_path):
    from pyspark.sql import functions as F

    from steps_support import ingest_step

    config = _config(tmp_path / "lake")
    report = ingest_step(spark, config, str(shared_file(CC_EXCERPT)), "warc")
    assert (report.records_read, report.pages_parsed, report.redirects, report.records_skipped,
            report.records_rejected) == (50, 16, 0, 34, 0)
    assert report.skipped_by_kind == {"warcinfo": 1, "request": 17, "metadata": 16}
    assert "records read=50 = parsed=16 + skipped=34 + rejected=0" in report.summary()
    assert report.edges_extracted == report.read == 1411
    assert report.upserted + report.rejected == report.read
    links = spark.read.format("delta").load(str(tmp_path / "lake" / "links"))
    pages = spark.read.format("delta").load(str(tmp_path / "lake" / "pages"))
    targets = links.join(pages.select(F.col("page_id").alias("dst_id"), "host"), on="dst_id", how="inner")
    # 127 hosts are linked; 037426.cn only by its own page's links to itself (SELF_LINK rejects),
    # so it is in pages (as a source) but not among link targets.
    assert pages.select("host").distinct().count() == 127
    assert targets.select("host").distinct().count() == 126
    assert report.rejected_by_reason["SELF_LINK"] > 0
    assert links.where(F.col("anchor_text").isNotNull()).count() / links.count() > 0.9
    assert links.where(F.col("context_window").isNull() | F.col("position").isNull()).count() == 0
    signals = spark.read.format("delta").load(str(tmp_path / "lake" / "page_signals"))
    assert signals.count() == report.page_signals_inserted == 16
    assert signals.where(F.col("title").isNull() | F.col("text").isNull() | F.col("fetched_at").isNull()).count() == 0


@pytest.fixture(scope="module")
def warc_dir(tmp_path_factory):
    """The hand-written WARC and a copy of the Common Crawl excerpt cut 150 bytes into its 23rd
    record (22 complete records before the cut, 7 of them HTML responses)."""
    directory = tmp_path_factory.mktemp("warcs")
    (directory / "handwritten.warc.gz").write_bytes(handwritten_warc())
    (directory / "cut.warc.gz").write_bytes(shared_file(CC_EXCERPT).read_bytes()[: 69787 + 150])
    return directory


@pytest.mark.e2e
def test_ingest_directory_positions_rels_rejects_and_rerun(spark, tmp_path, warc_dir):
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    from steps_support import ingest_step

    lake = tmp_path / "lake"
    config = _config(lake, max_page_bytes=150_000)
    report = ingest_step(spark, config, str(warc_dir), "warc")
    assert report.files == 2
    assert (report.records_read, report.records_parsed, report.records_skipped, report.records_rejected) == (33, 11, 18, 4)
    assert report.records_rejected_by_reason == {
        "NON_HTML": 1, "UNDECODABLE_CHARSET": 1, "OVERSIZED_PAGE": 1, "TRUNCATED_RECORD": 1}

    read = lambda table: spark.read.format("delta").load(str(lake / table))  # noqa: E731
    urls = read("pages").select("page_id", "url")
    jobs_links = (
        read("links")
        .join(urls.withColumnRenamed("page_id", "src_id").withColumnRenamed("url", "from_url"), "src_id", "inner")
        .join(urls.withColumnRenamed("page_id", "dst_id").withColumnRenamed("url", "to_url"), "dst_id", "inner")
        .where(F.col("from_url").isin(PAGE_URL, "http://example.com/"))
        .select("from_url", "to_url", "anchor_text", "link_type", "position")
    )
    expected = [
        (PAGE_URL, "https://www.example.com/", "Home", "INTERNAL", "NAV"),
        (PAGE_URL, "https://www.example.com/jobs/openings", "Openings", "INTERNAL", "NAV"),
        (PAGE_URL, "https://www.example.com/about", "About", "INTERNAL", "NAV"),
        (PAGE_URL, "https://partner.example.org/guide", "hiring guide", "SPONSORED", "CONTENT"),
        (PAGE_URL, "https://forum.example.net/t/1", "forum thread", "UGC", "CONTENT"),
        (PAGE_URL, "https://spam.example.info/", "spam", "NOFOLLOW", "CONTENT"),
        (PAGE_URL, "https://news.example.org/x", "News logo", "EXTERNAL", "CONTENT"),
        (PAGE_URL, "https://www.example.com/related", "Related", "INTERNAL", "SIDEBAR"),
        (PAGE_URL, "https://www.example.com/contact", "Contact", "INTERNAL", "FOOTER"),
        ("http://example.com/", PAGE_URL, None, "INTERNAL", None),                 # the 301 redirect
    ]
    assertDataFrameEqual(jobs_links, spark.createDataFrame(expected, jobs_links.schema))

    rejects = read("rejects")
    truncated = rejects.where(F.col("reason") == "TRUNCATED_RECORD").select("detail", "source").collect()
    assert len(truncated) == 1
    assert "cut.warc.gz" in truncated[0]["detail"]
    assert "<urn:uuid:dcf9e2b6-7680-4629-99aa-ffbc7e81fae1>" in truncated[0]["detail"]
    assert rejects.where((F.col("reason") == "UNSUPPORTED_SCHEME") & (F.col("to_url") == "mailto:jobs@example.com")).count() == 1
    for reason, uuid in (("NON_HTML", "5"), ("UNDECODABLE_CHARSET", "6"), ("OVERSIZED_PAGE", "8")):
        (row,) = rejects.where(F.col("reason") == reason).collect()
        assert f"<urn:uuid:00000000-0000-0000-0000-00000000000{uuid}>" in row["detail"]

    signals = read("page_signals")
    assert signals.count() == 3 + 7
    jobs = signals.where(F.col("url") == PAGE_URL).first()
    assert (jobs["title"], jobs["text"], jobs["feed_links"], str(jobs["fetched_at"])) == (
        "Jobs at Example", JOBS_TEXT, ["https://www.example.com/jobs.rss"], "2024-05-18 01:58:10")

    def changing_commits(table: str) -> int:
        """Commits of ``table`` that inserted or updated a row."""
        return spark.sql(f"DESCRIBE HISTORY delta.`{lake / table}`").where(
            "operationMetrics['numTargetRowsInserted'] > 0 OR operationMetrics['numTargetRowsUpdated'] > 0"
        ).count()

    tables = ("pages", "links", "rejects", "page_signals")
    before = {t: changing_commits(t) for t in tables}
    assert all(before.values())
    again = ingest_step(spark, config, str(warc_dir), "warc")
    assert (again.records_read, again.read, again.rejected) == (report.records_read, report.read, report.rejected)
    assert (again.pages_inserted, again.pages_updated, again.links_inserted, again.links_updated, again.rejects_inserted,
            again.page_signals_inserted, again.page_signals_updated) == (0, 0, 0, 0, 0, 0, 0)
    assert {t: changing_commits(t) for t in tables} == before


@pytest.mark.slow
def test_cli_ingest_wat_prints_counts_that_add_up(spark, tmp_path, capsys):
    from linkgraph.cli import main

    directory = tmp_path / "wat"
    directory.mkdir()
    (directory / "hand.warc.wat.gz").write_bytes(handwritten_wat())
    (directory / "whirlwind.warc.wat.gz").write_bytes(shared_file("warc/whirlwind.warc.wat.gz").read_bytes())
    assert main(["ingest", "--input", str(directory), "--format", "wat", "--lake", str(tmp_path / "lake")]) == 0
    out = capsys.readouterr().out
    assert "files=2 records read=9 = parsed=3 + skipped=5 + rejected=1" in out
    assert "2 HTML pages of which 1 without links, 1 redirects" in out
    assert "rejected: MALFORMED_RECORD=1" in out
    assert "ingest " in out and "read=4 upserted=4 rejected=0" in out


# --- Common Crawl host graph -------------------------------------------------------------------

CC_VERTICES = ["0\tcom.example", "1\tcom.example.www", "2\tnet.example.blog", "3\torg.example", "4\torg.wikipedia.en",
               "not a vertex line"]
CC_EDGES = ["0\t1", "1\t0", "1\t3", "1\t4", "2\t1", "3\t1", "3\t4", "4\t0", "4\t2"]
CC_BAD_EDGES = ["2\t9", "1\t3", "x y"]          # unknown vertex, repeated edge, not an edge


def _write_gz(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
    return path


def test_ccgraph_paths(tmp_path):
    from linkgraph.inputs.crawl.ccgraph import ccgraph_paths
    from linkgraph.inputs.readers import InputSchemaError

    vertices = _write_gz(tmp_path / "cc-main-host-vertices.txt.gz", CC_VERTICES)
    edges = _write_gz(tmp_path / "cc-main-host-edges.txt.gz", CC_EDGES)
    assert ccgraph_paths(str(tmp_path)) == ([str(vertices)], [str(edges)])
    assert ccgraph_paths(str(vertices)) == ([str(vertices)], [str(edges)])
    with pytest.raises(InputSchemaError):
        ccgraph_paths(str(edges))


@pytest.mark.e2e
def test_ccgraph_import_ranks_like_the_arc_list(spark, tmp_path):
    import networkx as nx
    from pyspark.sql import functions as F
    from pyspark.testing import assertDataFrameEqual

    from steps_support import ingest_step, pagerank_step

    graph = tmp_path / "graph"
    graph.mkdir()
    vertices = _write_gz(graph / "host-vertices.txt.gz", CC_VERTICES)
    _write_gz(graph / "host-edges.txt.gz", CC_EDGES + CC_BAD_EDGES)
    arcs = _write_gz(tmp_path / "same-edges.arcs.gz", CC_EDGES)
    cc_config, arcs_config = _config(tmp_path / "cc-lake"), _config(tmp_path / "arcs-lake")

    report = ingest_step(spark, cc_config, str(vertices), "ccgraph")
    assert (report.vertices_read, report.edges_read, report.links_inserted, report.pages_inserted) == (6, 12, 9, 5)
    assert report.rejected_by_reason == {"MALFORMED_RECORD": 2, "INVALID_VALUE": 1, "DUPLICATE_MERGED": 1}
    read = lambda lake, table: spark.read.format("delta").load(str(tmp_path / lake / table))  # noqa: E731
    pages = read("cc-lake", "pages").select("page_id", "url", "host", "registered_domain", "url_key")
    assertDataFrameEqual(pages, spark.createDataFrame([
        (0, "http://example.com/", "example.com", "example.com", "com.example/"),
        (1, "http://www.example.com/", "www.example.com", "example.com", "com.example.www/"),
        (2, "http://blog.example.net/", "blog.example.net", "example.net", "net.example.blog/"),
        (3, "http://example.org/", "example.org", "example.org", "org.example/"),
        (4, "http://en.wikipedia.org/", "en.wikipedia.org", "wikipedia.org", "org.wikipedia.en/"),
    ], pages.schema))
    internal = read("cc-lake", "links").where(F.col("link_type") == "INTERNAL").select("src_id", "dst_id")
    assert sorted(tuple(r) for r in internal.collect()) == [(0, 1), (1, 0)]

    ingest_step(spark, arcs_config, str(arcs), "arcs")
    pagerank_step(spark, cc_config)
    pagerank_step(spark, arcs_config)
    cc_ranks = read("cc-lake", "pagerank").select("page_id", "rank")
    arc_ranks = read("arcs-lake", "pagerank").select("page_id", "rank")
    assertDataFrameEqual(cc_ranks, arc_ranks, rtol=1e-9, atol=1e-12)
    # and both are PageRank: networkx on the same five hosts
    expected = nx.pagerank(nx.DiGraph([tuple(map(int, e.split("\t"))) for e in CC_EDGES]), alpha=0.85, tol=1e-12)
    assertDataFrameEqual(cc_ranks, spark.createDataFrame(sorted(expected.items()), cc_ranks.schema), atol=1e-6)
