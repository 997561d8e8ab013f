"""Hostile and unusual sitemap files: URLs through the edge limits and canonicaliser, text
sitemaps and RSS/Atom feeds, line and file limits enforced while decompressing, hidden files
counted.  Every case asserts the reject reason, the good entries kept and a time (and, for the
parser, memory) bound."""

from __future__ import annotations

import gzip
import time
import tracemalloc
from datetime import datetime

import pytest
from pyspark.sql import functions as F

from linkgraph.inputs.sitemaps import SitemapLimits, parse_sitemap
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.context import StepContext
from linkgraph.lake.delta import Lake
from linkgraph.steps import sitemaps

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
MiB = 1024 * 1024
TEN_MB_URL = "http://www.alpha.com/" + "x" * (10 * MiB)


def urlset(*entries: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS}>{"".join(entries)}</urlset>'.encode()


def bounded(data: bytes, name: str, seconds: float = 10.0, peak_bytes: int = 64 * MiB, **limits) -> list[dict]:
    """``parse_sitemap`` of ``data``, asserting its time and its peak of Python allocations."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        rows = parse_sitemap(data, name, limits=SitemapLimits(**limits))
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < seconds, f"{name}: {elapsed:.1f}s"
    assert peak < peak_bytes, f"{name}: peak {peak / MiB:.0f} MiB"
    return rows


def outcome(rows: list[dict]) -> list[tuple]:
    return [(r["kind"], r["url"] if r["kind"] == "entry" else r["reason"]) for r in rows]


# --- URLs: the edge limits and canonicaliser ------------------------------------------------------

@pytest.mark.parametrize("compress", [False, True])
def test_a_10_mb_loc_is_one_oversized_reject_and_the_next_url_is_kept(compress):
    data = urlset(f"<url><loc>{TEN_MB_URL}</loc></url>", "<url><loc>HTTP://WWW.Alpha.com:80/a/../b</loc></url>")
    data = gzip.compress(data, mtime=0) if compress else data
    rows = bounded(data, "huge-loc.xml")
    assert outcome(rows) == [("reject", "OVERSIZED_FIELD"), ("entry", "http://www.alpha.com/b")]
    assert rows[0]["detail"] == f"<loc> has {len(TEN_MB_URL)} characters (limit 2048)"
    assert len(rows[0]["raw"]) == 2048            # what reaches rejects is bounded


def test_locs_go_through_the_edge_canonicaliser_and_url_length():
    rows = bounded(urlset(
        "<url><loc>http://www.alpha.com\\@evil.example.org/</loc></url>",     # WHATWG: host www.alpha.com
        "<url><loc>ftp://www.alpha.com/</loc></url>",
        "<url><loc>http://www1/</loc></url>",
        f"<url><loc>http://www.alpha.com/{'y' * 2030}</loc></url>",          # 2051 characters
        f"<url><loc>http://www.alpha.com/{'y' * 2020}</loc></url>"), "checks.xml", max_url_length=2048)
    assert outcome(rows) == [("entry", "http://www.alpha.com/@evil.example.org/"), ("reject", "UNSUPPORTED_SCHEME"),
                             ("reject", "INVALID_HOST"), ("reject", "OVERSIZED_FIELD"),
                             ("entry", f"http://www.alpha.com/{'y' * 2020}")]


def test_a_10_mb_attribute_or_comment_does_not_stall_the_parser():
    """expat scans an unfinished token again on every chunk it is fed: fed 16 KiB at a time, a
    10 MB attribute value took 11 s and a 50 MB one minutes."""
    data = urlset(f'<url a="{TEN_MB_URL}"><loc>http://www.alpha.com/1</loc></url>',
                  f"<!-- {TEN_MB_URL} --><url><loc>http://www.alpha.com/2</loc></url>")
    assert outcome(bounded(data, "tokens.xml", seconds=5)) == [("entry", "http://www.alpha.com/1"),
                                                                 ("entry", "http://www.alpha.com/2")]


# --- text sitemaps ------------------------------------------------------------------------------------

def test_a_text_sitemap_is_read_line_by_line():
    data = ("\ufeffhttp://www.alpha.com/1\n"
            "\n"
            "   https://www.beta.org/2?b=1&a=2#top  \r\n"
            "not a url\n"
            "mailto:someone@alpha.com\n"
            f"{TEN_MB_URL}\n"
            "http://www.alpha.com/3").encode() + b"\nhttp://www.alpha.com/\xff\xfe\n"
    rows = bounded(data, "urls.txt", max_line_bytes=16 * MiB)
    assert outcome(rows) == [
        ("entry", "http://www.alpha.com/1"), ("entry", "https://www.beta.org/2?b=1&a=2"),
        ("reject", "UNSUPPORTED_SCHEME"), ("reject", "UNSUPPORTED_SCHEME"), ("reject", "OVERSIZED_FIELD"),
        ("entry", "http://www.alpha.com/3"), ("reject", "MALFORMED_RECORD")]
    assert [r["priority"] for r in rows if r["kind"] == "entry"] == [0.5, 0.5, 0.5]
    assert rows[4]["detail"] == f"line 6 has {len(TEN_MB_URL)} characters (limit 2048)"
    assert rows[6]["detail"].startswith("line 8 is not UTF-8")


def test_a_gzipped_line_bomb_is_one_reject_read_in_bounded_memory_and_the_rest_kept():
    """A 64 MB line (64 KB gzipped) between two good lines: the line is passed over in pieces of
    the line limit, never held, and is one OVERSIZED_FIELD reject."""
    data = gzip.compress(b"http://www.alpha.com/before\n" + b"z" * (64 * MiB) + b"\nhttp://www.alpha.com/after\n",
                         mtime=0)
    assert len(data) < 128 * 1024
    rows = bounded(data, "bomb.txt.gz", seconds=30, peak_bytes=8 * MiB, max_line_bytes=MiB, max_bytes=100 * MiB)
    assert outcome(rows) == [("entry", "http://www.alpha.com/before"), ("reject", "OVERSIZED_FIELD"),
                             ("entry", "http://www.alpha.com/after")]
    assert rows[1]["detail"] == f"line 2 longer than {MiB} bytes"


def test_a_gzip_bomb_stops_at_the_file_limit_while_decompressing():
    data = gzip.compress((b" " * 1000 + b"\n") * 176_000, mtime=0)     # 176 MB of blank lines decompressed
    rows = bounded(data, "bomb.txt.gz", seconds=30, peak_bytes=8 * MiB, max_bytes=10 * MiB)
    assert outcome(rows) == [("reject", "OVERSIZED_FIELD")]
    assert rows[0]["detail"] == f"sitemap larger than {10 * MiB} bytes decompressed"


def test_text_sitemap_limits_empty_and_binary_files():
    many = "".join(f"http://www.alpha.com/{i}\n" for i in range(1001)).encode()
    assert outcome(bounded(many, "many.txt", max_urls=1000)) == [("reject", "OVERSIZED_FIELD")]
    assert len(bounded(many[: many.rindex(b"http")], "enough.txt", max_urls=1000)) == 1000
    assert outcome(bounded(b"", "empty.txt")) == [("reject", "MALFORMED_RECORD")]
    binary = bounded(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.txt")
    assert outcome(binary) == [("reject", "MALFORMED_RECORD")] and "NUL byte" in binary[0]["detail"]


# --- feeds --------------------------------------------------------------------------------------------

RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>
  <title>Alpha</title><link>http://www.alpha.com/</link><description>news</description>
  <atom:link href="http://www.alpha.com/feed.rss" rel="self"/>
  <item><title>one</title><link>http://www.alpha.com/news/1</link><pubDate>Sat, 07 Sep 2002 09:42:31 +0200</pubDate></item>
  <item><link> http://www.alpha.com/news/2 </link></item>
  <item><link>http://www.alpha.com/news/3</link><pubDate>last tuesday</pubDate></item>
  <item><title>no link</title></item>
  <item><link>javascript:alert(1)</link></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Beta</title><link href="http://www.beta.org/"/>
  <entry><title>a</title><link rel="self" href="http://www.beta.org/self/a"/>
    <link href="http://www.beta.org/a"/><updated>2003-12-13T18:30:02+01:00</updated></entry>
  <entry><link rel="alternate" type="text/html" href="http://www.beta.org/b"/></entry>
  <entry><link rel="enclosure" href="http://www.beta.org/b.mp3"/></entry>
  <entry><link href="http://www.beta.org/c"/><updated>13/12/2003</updated></entry>
</feed>"""


def test_an_rss_feed_is_read_as_a_sitemap():
    rows = bounded(RSS, "feed.rss")
    assert outcome(rows) == [("entry", "http://www.alpha.com/news/1"), ("entry", "http://www.alpha.com/news/2"),
                             ("reject", "MALFORMED_TIMESTAMP"), ("reject", "NULL_FIELD"),
                             ("reject", "UNSUPPORTED_SCHEME")]
    assert rows[0]["lastmod"] == datetime(2002, 9, 7, 7, 42, 31) and rows[1]["lastmod"] is None
    assert rows[2]["detail"] == "pubDate 'last tuesday'" and rows[3]["detail"] == "<item> without <link>"


def test_an_atom_feed_is_read_as_a_sitemap():
    rows = bounded(ATOM, "feed.atom")
    assert outcome(rows) == [("entry", "http://www.beta.org/a"), ("entry", "http://www.beta.org/b"),
                             ("reject", "NULL_FIELD"), ("reject", "MALFORMED_TIMESTAMP")]
    assert rows[0]["lastmod"] == datetime(2003, 12, 13, 17, 30, 2)
    assert rows[2]["detail"] == "<entry> without <link href>"


def test_feeds_keep_xml_safety_and_the_url_limits():
    bomb = (b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
            b"<rss><channel><item><link>http://www.alpha.com/&b;</link></item></channel></rss>")
    assert outcome(bounded(bomb, "bomb.rss")) == [("reject", "UNSAFE_XML")]
    huge = f'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="{TEN_MB_URL}"/></entry></feed>'.encode()
    assert outcome(bounded(gzip.compress(huge, mtime=0), "huge.atom.gz")) == [("reject", "OVERSIZED_FIELD")]
    page = bounded(b"<html><body><a href='http://www.alpha.com/'>x</a></body></html>", "page.xml")
    assert outcome(page) == [("reject", "MALFORMED_RECORD")]
    assert page[0]["detail"] == "root element <html> is not <urlset>, <sitemapindex>, <rss> or <feed>"


# --- the step: file limit, hidden files, the stored rows ----------------------------------------------

def test_ingest_sitemaps_with_hostile_and_hidden_files(spark, tmp_path):
    inputs = tmp_path / "sitemaps"
    (inputs / "nested").mkdir(parents=True)
    (inputs / "huge-loc.xml.gz").write_bytes(gzip.compress(urlset(
        f"<url><loc>{TEN_MB_URL}</loc></url>", "<url><loc>http://www.alpha.com/kept</loc></url>"), mtime=0))
    (inputs / "urls.txt").write_bytes(b"http://www.alpha.com/t1\n" + b"q" * 300_000 + b"\nhttp://www.alpha.com/t2\n")
    (inputs / "nested" / "feed.rss").write_bytes(RSS)
    (inputs / "feed.atom").write_bytes(ATOM)
    (inputs / "too-big.xml").write_bytes(urlset("<url><loc>http://www.alpha.com/big</loc></url>" + " " * 13 * MiB))
    (inputs / "_hidden.xml").write_bytes(urlset("<url><loc>http://www.alpha.com/hidden</loc></url>"))
    (inputs / ".dotted.txt").write_bytes(b"http://www.alpha.com/dotted\n")
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")},
                               "scores": {"sitemap_max_bytes": 12 * MiB, "sitemap_max_line_bytes": 100_000}})
    started = time.monotonic()
    report = sitemaps.run(StepContext.create(spark, config), sitemaps.Params(str(inputs)))
    # no stall: the parser's own bounds are asserted above; this allows for a loaded shared machine
    assert time.monotonic() - started < 600
    assert (report.files, report.skipped, report.entries) == (5, 2, 7)
    assert report.rejected_by_reason == {"OVERSIZED_FIELD": 3, "MALFORMED_TIMESTAMP": 2, "NULL_FIELD": 2,
                                         "UNSUPPORTED_SCHEME": 1}
    assert "files=5 skipped=2 entries=7" in report.summary()
    lake = Lake(spark, config.lake)
    assert sorted(r[S.URL] for r in lake.read(S.SITEMAPS_TABLE).collect()) == [
        "http://www.alpha.com/kept", "http://www.alpha.com/news/1", "http://www.alpha.com/news/2",
        "http://www.alpha.com/t1", "http://www.alpha.com/t2", "http://www.beta.org/a", "http://www.beta.org/b"]
    rejects = lake.read(S.REJECTS_TABLE)
    longest = rejects.agg(F.max(F.length(S.TO_URL)), F.max(F.length(S.DETAIL))).first()
    assert longest is not None and longest[0] <= 2048 and longest[1] <= 500
    oversized = sorted(r[S.DETAIL] for r in rejects.where(F.col(S.REASON) == "OVERSIZED_FIELD").collect())
    too_big = (inputs / "too-big.xml").stat().st_size
    # the stored URL is cut to the URL limit, and rejects keep at most 2,000 characters of it
    assert oversized[0].startswith(f"<loc> has {len(TEN_MB_URL)} characters (limit 2048); to_url stored clipped")
    assert oversized[1:] == ["line 2 longer than 100000 bytes", f"sitemap of {too_big} bytes, larger than {12 * MiB}"]
