"""Tests for linkgraph.urls: canonicalisation, keys and link classification (no Spark)."""

from __future__ import annotations

import ast
import gzip
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import shared_file
from linkgraph import urls
from linkgraph.inputs.crawl.extract import ExtractSettings
from linkgraph.inputs.crawl.files import rows_of_file
from linkgraph.urls import (
    CANONICAL_COLUMNS,
    CanonicalUrl,
    canonicalize,
    canonicalize_arrow,
    classify_link,
    reverse_host,
    url_key,
)


def ok(url: str) -> str:
    result = canonicalize(url)
    assert result.reason is None, result
    return result.url


def reason(url: str | None) -> str | None:
    return canonicalize(url).reason


# --- hand-written cases ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # IDNA
        ("http://Bücher.example.com/", "http://xn--bcher-kva.example.com/"),
        ("http://пример.рф/", "http://xn--e1afmkfd.xn--p1ai/"),
        ("http://例子。中国/", "http://xn--fsqu00a.xn--fiqs8s/"),
        ("http://ＷＷＷ.ＥＸＡＭＰＬＥ.ＣＯＭ/", "http://www.example.com/"),
        ("http://XN--BCHER-KVA.example.com/", "http://xn--bcher-kva.example.com/"),
        # case, whitespace, trailing dot, userinfo
        ("HTTP://WWW.Example.COM/Path", "http://www.example.com/Path"),
        ("  https://example.com/a \n", "https://example.com/a"),
        ("http://example.com./", "http://example.com/"),
        ("http://user:secret@example.com/", "http://example.com/"),
        # ports
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com:80/", "https://example.com:80/"),
        ("http://example.com:8080/", "http://example.com:8080/"),
        ("http://example.com:08080/", "http://example.com:8080/"),
        ("http://example.com:/", "http://example.com/"),
        # empty path, fragments, empty query
        ("http://example.com", "http://example.com/"),
        ("http://example.com?q=1", "http://example.com/?q=1"),
        ("http://example.com/a#section", "http://example.com/a"),
        ("http://example.com/a?b=1#c?d", "http://example.com/a?b=1"),
        ("http://example.com/a?", "http://example.com/a"),
        ("http://example.com/a?#x", "http://example.com/a"),
        # dot segments
        ("http://a.com/b/c/./../../g", "http://a.com/g"),
        ("http://a.com/a/b/c/./../../g", "http://a.com/a/g"),
        ("http://a.com/a/b/..", "http://a.com/a/"),
        ("http://a.com/../../x", "http://a.com/x"),
        ("http://a.com/a/.", "http://a.com/a/"),
        ("http://a.com/a/...", "http://a.com/a/..."),
        ("http://a.com/%2E%2E/a/%2e/b", "http://a.com/a/b"),
        ("http://a.com/a/?x=../y", "http://a.com/a/?x=../y"),
        # percent-encoding
        ("http://a.com/%7euser", "http://a.com/~user"),
        ("http://a.com/a%2fb", "http://a.com/a%2Fb"),
        ("http://a.com/a%2Fb", "http://a.com/a%2Fb"),
        ("http://a.com/a b", "http://a.com/a%20b"),
        ("http://a.com/100%", "http://a.com/100%25"),
        ("http://a.com/100%zz", "http://a.com/100%25zz"),
        ("http://a.com/%41%62c", "http://a.com/Abc"),
        ("http://a.com/%3a%40%21", "http://a.com/%3A%40%21"),
        ("http://a.com/café", "http://a.com/caf%C3%A9"),
        ("http://a.com/caf%c3%a9", "http://a.com/caf%C3%A9"),
        ('http://a.com/"<>^`{|}', "http://a.com/%22%3C%3E%5E%60%7B%7C%7D"),
        # WHATWG: a backslash is a path separator in http(s) URLs (browsers take host a.com here)
        ("http://a.com\\@b.com/", "http://a.com/@b.com/"),
        ("http://user:pw@a.com\\@b.com/x", "http://a.com/@b.com/x"),
        ("http://a.com\\x\\y", "http://a.com/x/y"),
        ("http://a.com/x\\..\\y", "http://a.com/y"),
        ("https:\\\\a.com\\p", "https://a.com/p"),
        ("http:/\\a.com/", "http://a.com/"),
        ("http://a.com:8080\\p", "http://a.com:8080/p"),
        ("http://a.com/p?q=a\\b", "http://a.com/p?q=a%5Cb"),
        ("http://a.com/p#x\\y", "http://a.com/p"),
        ("http://a.com/a[1]?b[]=2", "http://a.com/a%5B1%5D?b%5B%5D=2"),
        ("http://a.com/p?q=a b&r=%7e&s=ü", "http://a.com/p?q=a%20b&r=~&s=%C3%BC"),
        ("http://a.com/p?b=2&a=1&a=0", "http://a.com/p?b=2&a=1&a=0"),
        ("http://a.com/p?x=?y/z:@!$&'()*+,;=", "http://a.com/p?x=?y/z:@!$&'()*+,;="),
        # IP literals
        ("http://192.168.0.1:8080/x", "http://192.168.0.1:8080/x"),
        ("http://[2001:DB8:0:0::1]/", "http://[2001:db8::1]/"),
        ("https://[::1]:443/", "https://[::1]/"),
        # lenient ASCII hosts that exist on the web
        ("http://foo_bar.tumblr.com/", "http://foo_bar.tumblr.com/"),
        ("http://r3---sn-abc.googlevideo.com/", "http://r3---sn-abc.googlevideo.com/"),
        # a host that is itself a public suffix is its own registered domain
        ("http://blogspot.com/", "http://blogspot.com/"),
    ],
)
def test_canonical_form(raw: str, expected: str) -> None:
    assert ok(raw) == expected
    assert ok(expected) == expected


@pytest.mark.parametrize(
    ("raw", "host", "registered_domain"),
    [
        ("https://www.bbc.co.uk/news", "www.bbc.co.uk", "bbc.co.uk"),
        ("http://atrios.blogspot.com/", "atrios.blogspot.com", "atrios.blogspot.com"),
        ("http://www.atrios.blogspot.com/", "www.atrios.blogspot.com", "atrios.blogspot.com"),
        ("http://a.b.example.github.io/", "a.b.example.github.io", "example.github.io"),
        ("http://www.stanford.edu/", "www.stanford.edu", "stanford.edu"),
        ("http://Bücher.example.com/", "xn--bcher-kva.example.com", "example.com"),
        ("http://www.пример.рф/", "www.xn--e1afmkfd.xn--p1ai", "xn--e1afmkfd.xn--p1ai"),
        ("http://10.0.0.1/", "10.0.0.1", "10.0.0.1"),
        ("http://[2001:db8::1]/", "[2001:db8::1]", "[2001:db8::1]"),
    ],
)
def test_host_and_registered_domain(raw: str, host: str, registered_domain: str) -> None:
    result = canonicalize(raw)
    assert (result.host, result.registered_domain, result.reason, result.detail) == (
        host,
        registered_domain,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("raw", "expected_reason"),
    [
        (None, "NULL_FIELD"),
        ("", "NULL_FIELD"),
        ("   \t\n", "NULL_FIELD"),
        ("mailto:someone@example.com", "UNSUPPORTED_SCHEME"),
        ("javascript:void(0)", "UNSUPPORTED_SCHEME"),
        ("ftp://example.com/file", "UNSUPPORTED_SCHEME"),
        ("www.example.com/page", "UNSUPPORTED_SCHEME"),
        ("//example.com/page", "UNSUPPORTED_SCHEME"),
        ("/relative/path", "UNSUPPORTED_SCHEME"),
        ("http:example.com", "MALFORMED_URL"),
        ("http:/example.com", "MALFORMED_URL"),
        ("http://", "MALFORMED_URL"),
        ("http:///path", "MALFORMED_URL"),
        ("http://user@/path", "MALFORMED_URL"),
        ("http://example.com:abc/", "MALFORMED_URL"),
        ("http://example.com:65536/", "MALFORMED_URL"),
        ("http://example.com:-1/", "MALFORMED_URL"),
        ("http://example.com:1:2/", "MALFORMED_URL"),
        ("http://example.com:８０/", "MALFORMED_URL"),
        ("http://exa mple.com/", "MALFORMED_URL"),
        ("http://example.com/a\tb", "MALFORMED_URL"),
        ("http://example.com/a\nb", "MALFORMED_URL"),
        ("http://example.com/\x00", "MALFORMED_URL"),
        ("http://example.com/\ud800", "MALFORMED_URL"),
        ("http://[::1/", "MALFORMED_URL"),
        ("http://[::1]x/", "MALFORMED_URL"),
        ("http://www1/foo.html", "INVALID_HOST"),
        ("http://www1.hollins/bar", "INVALID_HOST"),
        ("http://localhost/", "INVALID_HOST"),
        ("http://localhost:8080/", "INVALID_HOST"),
        ("http://Bücher.example/", "INVALID_HOST"),  # .example is reserved, not on the PSL
        ("http://a..com/", "INVALID_HOST"),
        ("http://.a.com/", "INVALID_HOST"),
        ("http://a.com../", "INVALID_HOST"),
        ("http://com/", "INVALID_HOST"),
        ("http://" + "a" * 64 + ".com/", "INVALID_HOST"),
        ("http://" + "a." * 126 + "com/", "INVALID_HOST"),
        ("http://exa!mple.com/", "INVALID_HOST"),
        ("http://exa<mple.com/", "INVALID_HOST"),
        ("http://xn--zz.com/", "INVALID_HOST"),
        ("http://☃\u200d.com/", "INVALID_HOST"),
        ("http://256.1.1.1/", "INVALID_HOST"),
        ("http://01.1.1.1/", "INVALID_HOST"),
        ("http://1.2.3/", "INVALID_HOST"),
        ("http://[1:2:3]/", "INVALID_HOST"),
        ("http://[fe80::1%25eth0]/", "INVALID_HOST"),
    ],
)
def test_rejects(raw: str | None, expected_reason: str) -> None:
    result = canonicalize(raw)
    assert result.reason == expected_reason, result
    assert result.url is None and result.host is None and result.registered_domain is None
    assert result.detail


def test_non_string_is_malformed() -> None:
    assert reason(b"http://example.com/") == "MALFORMED_URL"  # type: ignore[arg-type]


def test_host_label_length_limits() -> None:
    assert ok("http://" + "a" * 63 + ".com/") == "http://" + "a" * 63 + ".com/"
    long_ok = "a." * 124 + "com"  # 251 characters
    assert ok(f"http://{long_ok}/") == f"http://{long_ok}/"


def test_result_is_a_named_tuple() -> None:
    result = canonicalize("http://example.com")
    assert isinstance(result, CanonicalUrl)
    assert result._fields == ("url", "host", "registered_domain", "reason", "detail")


# --- keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("www.example.com", "com.example.www"),
        ("example.com", "com.example"),
        ("a.b.co.uk", "uk.co.b.a"),
        ("192.168.0.1", "192.168.0.1"),
        ("[2001:db8::1]", "[2001:db8::1]"),
    ],
)
def test_reverse_host(host: str, expected: str) -> None:
    assert reverse_host(host) == expected


@pytest.mark.parametrize(
    ("canonical", "expected"),
    [
        ("http://www.stanford.edu/biology?a=1", "edu.stanford.www/biology?a=1"),
        ("https://www.stanford.edu/biology?a=1", "edu.stanford.www/biology?a=1 https"),
        ("http://example.com:8080/", "com.example:8080/"),
        ("https://10.0.0.1:8443/x", "10.0.0.1:8443/x https"),
        ("http://[::1]:8080/x", "[::1]:8080/x"),
    ],
)
def test_url_key(canonical: str, expected: str) -> None:
    assert url_key(canonical) == expected


def test_url_key_orders_a_hosts_pages_together() -> None:
    pages = [
        "http://www.example.com/b",
        "https://www.example.com/a",
        "http://www.other.org/a",
        "http://www.example.com/a?x=1",
        "http://www.example.com/a",
        "http://example.com/",
    ]
    keys = sorted(url_key(ok(u)) for u in pages)
    assert keys == [
        "com.example.www/a",
        "com.example.www/a https",
        "com.example.www/a?x=1",
        "com.example.www/b",
        "com.example/",
        "org.other.www/a",
    ]


def test_url_key_rejects_non_canonical_input() -> None:
    with pytest.raises(ValueError):
        url_key("ftp://example.com/")


# --- link classification -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("from_domain", "to_domain", "rel", "given", "expected"),
    [
        ("a.com", "a.com", None, None, ("INTERNAL", None)),
        ("a.com", "b.com", None, None, ("EXTERNAL", None)),
        ("a.com", "b.com", "", " ", ("EXTERNAL", None)),
        ("a.com", "a.com", None, "EXTERNAL", ("INTERNAL", None)),
        ("a.com", "b.com", None, "internal", ("EXTERNAL", None)),
        ("a.com", "b.com", "noopener noreferrer", None, ("EXTERNAL", None)),
        ("a.com", "b.com", "nofollow", None, ("NOFOLLOW", None)),
        ("a.com", "a.com", "NoFollow", None, ("NOFOLLOW", None)),
        ("a.com", "b.com", "nofollow ugc", None, ("UGC", None)),
        ("a.com", "b.com", "ugc,sponsored", None, ("SPONSORED", None)),
        ("a.com", "b.com", "nofollow, noopener\tSPONSORED", None, ("SPONSORED", None)),
        ("a.com", "b.com", None, "nofollow", ("NOFOLLOW", None)),
        ("a.com", "b.com", None, " UGC ", ("UGC", None)),
        ("a.com", "b.com", "ugc", "NOFOLLOW", ("UGC", None)),
        ("a.com", "b.com", "nofollow", "SPONSORED", ("SPONSORED", None)),
        ("a.com", "b.com", "nofollow", "EXTERNAL", ("NOFOLLOW", None)),
        ("a.com", "b.com", None, "FOLLOW", (None, "INVALID_VALUE")),
        ("a.com", "b.com", "nofollow", "bogus", (None, "INVALID_VALUE")),
        (None, "b.com", None, "EXTERNAL", ("EXTERNAL", None)),
        (None, "b.com", "ugc", None, ("UGC", None)),
        (None, None, None, None, (None, "NULL_FIELD")),
    ],
)
def test_classify_link(from_domain, to_domain, rel, given, expected) -> None:
    assert classify_link(from_domain, to_domain, rel, given) == expected


# --- batch entry point -------------------------------------------------------------------------


def test_canonicalize_arrow() -> None:
    raw = pa.array(["HTTP://Example.com:80", None, "mailto:x@y.z", "HTTP://Example.com:80", "http://a.com/x"])
    result = canonicalize_arrow(raw)
    assert result.type.names == ["url", "host", "registered_domain", "reason", "detail"]
    rows = result.to_pylist()
    assert rows[0] == {"url": "http://example.com/", "host": "example.com", "registered_domain": "example.com",
                       "reason": None, "detail": None}
    assert rows[3] == rows[0]
    assert [r["reason"] for r in rows[1:3]] == ["NULL_FIELD", "UNSUPPORTED_SCHEME"]
    assert rows[4]["url"] == "http://a.com/x"
    assert len(canonicalize_arrow(pa.array([], pa.string()))) == 0
    assert canonicalize_arrow(pa.array(["http://a.com/x", None], pa.large_string())).field("url").to_pylist() == [
        "http://a.com/x", None]


FAST_PATH_CASES = [
    "http://example.com/a/b", "https://www.example.com/a?x=1&y=2", "http://a_b.example.com/x", "https://blogspot.com/",
    "http://xn--bcher-kva.example.com/", "http://1.2.3.4/x", "http://foo.invalidtld/", "http://xn--zz.example.com/x",
    "http://1.2.3.999/x", "http://www.example.com/a?", "http://www.example.com/a/./b", "http://www.example.com/a#f",
    "http://Example.com/", "http://example.com", "http://localhost/x", "http://com/x", "http://www.example.com:80/x",
    "http://user@example.com/x", "http://example.com/%7Euser", "http://example.com/a b", " http://example.com/x",
    "http://example.com/x\n", "http://a.example.com/\u00e9", "mailto:x@example.com", None, "", "http://example.com/a/b",
    "http://1.2.3.04/x", "http://a-.example.com/", "http://" + "a" * 64 + ".com/", "http://x.co.uk/?q",
]


@given(st.lists(st.sampled_from(FAST_PATH_CASES) | st.text(max_size=40) | st.builds(
    lambda host, path: f"http://{host}/{path}", st.from_regex(r"[a-zA-Z0-9.-]{1,20}", fullmatch=True),
    st.text(max_size=15)), max_size=30))
def test_canonicalize_arrow_agrees_with_canonicalize(values: list[str | None]) -> None:
    """The URLs taken as they are (vectorised) and those left to ``canonicalize`` give what
    ``canonicalize`` gives each value."""
    got = canonicalize_arrow(pa.array(values, pa.string())).to_pylist()
    assert got == [canonicalize(v)._asdict() for v in values]


# --- the vectorised path against canonicalize on real URLs ------------------------------------

EQUIVALENCE_MIN_URLS = 100_000
CHUNK_ROWS = 10_000
URL_DATA_FILES = ("hollins-2004/hollins.dat", "polblogs/polblogs.gml.gz", "sitemaps/spark.apache.org-sitemap-excerpt.xml",
                  "warc/CC-MAIN-2020-34-excerpt.warc.gz", "warc/whirlwind.warc.gz")
HOSTILE_TEST_FILES = ("test_hostile_inputs.py", "test_bad_input.py", "test_crawl_hostile.py")
_BACKSLASH = "\\"
_SLASH_VARIANTS = ("\\\\", "/\\", "\\/", "/", "///", "")
_PATH_EXTRAS = ("%7euser", "%2f", "%zz", "a b", "é", "%c3%a9", '"<>^`{|}', "[1]", "%", "~", "%41%62c", "\\x")
# escapes next to the canonical ones (upper-case hex of a character that is not unreserved)
_ESCAPE_VARIANTS = ("%00", "%1F", "%20", "%2C", "%2D", "%2E", "%2F", "%30", "%39", "%3A", "%3F", "%40", "%41", "%5A",
                    "%5B", "%5E", "%5F", "%60", "%61", "%7A", "%7B", "%7D", "%7E", "%7F", "%80", "%C3%A9", "%FF", "%ff",
                    "%c3%a9", "%2f", "%7e", "%%", "%2", "%G0", "%25", "%E2%82%AC")
_ABSOLUTE_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#\\]*)(.*)", re.DOTALL)


def shared_data_urls(data: Path) -> list[str]:
    """The URLs of the shared data sets, as their files hold them: Hollins pages (with their
    trailing space), polblogs labels (host names, some with a path or a trailing space) and the
    same as ``http://`` URLs, the sitemap's ``<loc>``s, and the WARC samples' pages and links."""
    hollins, polblogs, sitemap, *warcs = (data / name for name in URL_DATA_FILES)
    lines = hollins.read_text("ascii").split("\n")
    found = [line.split(" ", 1)[1] for line in lines[1 : int(lines[0].split()[0]) + 1]]
    labels = re.findall(r'label "([^"]*)"', gzip.decompress(polblogs.read_bytes()).decode())
    found += labels + [f"http://{label}" for label in labels]
    found += re.findall(r"<loc>([^<]*)</loc>", sitemap.read_text("utf-8"))
    for warc in warcs:
        for row in rows_of_file(str(warc), "warc", ExtractSettings()):
            found += [row[column] for column in ("from_url", "to_url", "url") if row[column] is not None]
    return list(dict.fromkeys(found))


def _hosts_variants(scheme: str, host: str, rest: str, i: int) -> list[str]:
    labels = host.split(".")
    unicode_label = ["bücher", "ПРИМЕР", "例子", "ＷＷＷ", "xn--bcher-kva", "XN--BCHER-KVA", "xn--zz", "straße",
                     "☃\u200d", "a" * 64, "", "exa!mple", "-x-", "foo_bar"][i % 14]
    a, b, c, d = (i * 7) % 256, (i * 13) % 300, (i * 31) % 256, i % 260
    ip = [f"{a}.{b}.{c}.{d}", f"0{a}.{b}.{c}.{d}", f"{a}.{b}.{c}", f"[2001:DB8::{i:X}]", f"[2001:db8:0:0:0:0:0:{i % 65536:x}]",
          "[::1]", f"[fe80::{i % 97:x}%25eth0]", "[1:2:3]", f"[::ffff:{a}.{c}.{d % 256}.1]", f"[{i:x}::", f"[::{i % 9}]x",
          f"{a}.{c}.{d % 256}.{a}"][i % 12]
    port = ["80", "443", "8080", "080", "0", "65535", "65536", "", "８０", "-1", "8a", "1:2"][(i // 3) % 12]
    userinfo = ["user", "user:pw", ":", "a@b", "", "us er", "%40"][i % 7]
    return [
        f"{scheme.upper()}://{host.upper()}{rest}",
        f"{scheme}://{host}:{port}{rest}",
        f"{scheme}://{userinfo}@{host}{rest}",
        f"{scheme}://{'.'.join([unicode_label, *labels[1:]]) if len(labels) > 1 else unicode_label + '.' + host}{rest}",
        f"{scheme}://{host.replace('.', ['。', '．', '｡', '..'][i % 4])}{rest}",
        f"{scheme}://{ip}{rest}",
        f"{scheme}://{host}{['.', '..', '.:80', ':'][i % 4]}{rest}",
    ]


def _rest_variants(scheme: str, host: str, rest: str, i: int) -> list[str]:
    base = f"{scheme}://{host}"
    path, _, query = rest.partition("?")
    path = path or "/"
    first = re.search(r"[A-Za-z0-9]", path)
    escaped = path if first is None else f"{path[:first.start()]}%{ord(first.group()):02{'x' if i % 2 else 'X'}}{path[first.end():]}"
    dots = ["/./", "/../", "/a/b/../", "/%2e/", "/.%2E/", "/..", "/."][i % 7]
    extra = _PATH_EXTRAS[i % len(_PATH_EXTRAS)]
    segment = path.rsplit("/", 1)
    return [
        f"{base}{escaped}{'?' + query if query else ''}",
        f"{base}{extra}{rest}" if rest.startswith("/") else f"{base}/{extra}{rest}",
        f"{base}{segment[0]}{dots}{segment[1]}{'?' + query if query else ''}",
        f"{base}{rest}#{['', 'top', 'a#b', 'x y', '%zz', '?q'][i % 6]}",
        f"{base}{path}?{[query, '', 'a=b c', 'q=%7e&x=[1]', '#', 'x=../y', 'ü=1'][i % 7]}",
        f"{scheme}:{_SLASH_VARIANTS[i % 6]}{host}{rest.replace('/', _BACKSLASH)}",
    ]


def _text_variants(url: str, scheme: str, host: str, rest: str, i: int) -> list[str]:
    return [
        [" " + url, url + "\n", "\t" + url + " ", url + " x", "\u3000" + url, url + "\x00", url + "\x7f"][i % 7],
        [f"ftp://{host}{rest}", f"//{host}{rest}", f"{scheme}:{host}{rest}", f"{scheme}://{rest}", f"mailto:{host}",
         f"{scheme}://:80{rest}", f"{host}{rest}", f"javascript:{rest}", f"h\u0074tps://{host}", f"1http://{host}/"][i % 10],
    ]


def fast_shaped_variants(url: str, i: int) -> list[str]:
    """Variants of a real URL's canonical form that keep the shape the vectorised path takes as it
    is: other schemes, queries, subdomains, escapes, and hosts of that shape that are not canonical
    hosts."""
    canonical = canonicalize(url).url
    if canonical is None:
        return []
    scheme, authority, rest = canonical.split("://", 1)[0], *canonical.split("://", 1)[1].partition("/")[::2]
    odd_host = [f"{authority.replace('.', '-', 1)}.invalidtld", f"xn--zz.{authority}", f"{authority}.{i % 1000}",
                f"1.2.3.{i % 300}", f"{'a' * 64}.{authority}", f"{'x.' * 125}{authority}", "blogspot.com",
                f"x{i % 7}.co.uk", f"{i % 256}.{i % 7}.{i % 99}.1", "com.com"][i % 10]
    return [
        canonical,
        f"{'https' if scheme == 'http' else 'http'}://{authority}/{rest}",
        f"{canonical}{'&' if '?' in canonical else '?'}page={i}",
        f"{scheme}://{['www', 'm', 'w3', 'cdn', 'a_b', 'x-y', 'xn--bcher-kva'][i % 7]}.{authority}/{rest}",
        f"{scheme}://{odd_host}/{rest}",
        f"{scheme}://{authority}/{_ESCAPE_VARIANTS[i % len(_ESCAPE_VARIANTS)]}{rest}",
        f"{canonical}{'&' if '?' in canonical else '?'}q={_ESCAPE_VARIANTS[(i * 7) % len(_ESCAPE_VARIANTS)]}",
    ]


def url_variants(url: str, i: int) -> list[str]:
    """Deterministic hostile variants of a real URL: host case, ports, userinfo, IDNA and
    full-width dots, IPv4/IPv6 literals, trailing dots, percent-encoding, dot segments, fragments,
    queries, backslashes, whitespace, control characters and invalid schemes or authorities."""
    match = _ABSOLUTE_RE.fullmatch(url.strip())
    if match is None:
        return [f"http://{url}", f"HTTPS://{url.upper()}", f" {url} "]
    scheme, authority, rest = match.groups()
    host = authority.rpartition("@")[2].partition(":")[0] or "example.com"
    others = [*_hosts_variants(scheme, host, rest, i), *_rest_variants(scheme, host, rest, i),
              *_text_variants(url, scheme, host, rest, i)]
    return [*fast_shaped_variants(url, i), *others[i % 2 :: 2]]  # each kind for half of the URLs


def _url_like_constants(path: Path) -> list[str]:
    """String constants of a test module that look like URLs (a scheme, ``//``, ``/`` or ``www.``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) <= 4096:
            if re.match(r"\s*(?:[A-Za-z][A-Za-z0-9+.-]*:|/|www\.)", node.value):
                found.append(node.value)
    return found


def hostile_urls() -> list[str]:
    """The hostile URLs of the tests: this module's hand-written cases (canonical forms and what
    they become, hosts, rejects, the fast-path cases) and the URL-like strings of the hostile-input
    test modules."""
    cases = [case[0] for case in test_canonical_form.pytestmark[0].args[1]]
    cases += [case[1] for case in test_canonical_form.pytestmark[0].args[1]]
    cases += [case[0] for case in test_host_and_registered_domain.pytestmark[0].args[1]]
    cases += [case[0] for case in test_rejects.pytestmark[0].args[1]]
    cases += [*FAST_PATH_CASES, "http://a.com\\@b.com/", "http://a\\@b.com/"]
    tests = Path(__file__).resolve().parent
    for name in HOSTILE_TEST_FILES:
        cases += _url_like_constants(tests / name)
    return list(dict.fromkeys(cases))


def _arrow_safe(value: str | None) -> bool:
    """Arrow strings are UTF-8: a lone surrogate (a case of ``canonicalize``'s own tests) cannot be
    in one (readers replace it before canonicalisation)."""
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def equivalence_corpus(data: Path) -> list[str | None]:
    """The hostile cases, the shared data sets' URLs and their variants (at least
    EQUIVALENCE_MIN_URLS distinct values)."""
    real = shared_data_urls(data)
    values: list[str | None] = [*hostile_urls(), *real]
    for i, url in enumerate(real):
        values += url_variants(url, i)
    return [value for value in dict.fromkeys(values) if _arrow_safe(value)]


def _disagreements(got: pa.StructArray, want: list[CanonicalUrl], values: list[str | None]) -> list[str]:
    problems = []
    for index, column in enumerate(CANONICAL_COLUMNS):
        expected = [row[index] for row in want]
        actual = got.field(column).to_pylist()
        if actual != expected:
            wrong = [i for i, (a, e) in enumerate(zip(actual, expected, strict=True)) if a != e]
            problems += [f"{column} of {values[i]!r}: {actual[i]!r} != {expected[i]!r}" for i in wrong[:5]]
            problems.append(f"{column}: {len(wrong)} values differ")
    return problems


def test_canonicalize_arrow_equals_canonicalize_on_real_urls_and_hostile_cases() -> None:
    """The vectorised path gives exactly ``canonicalize``'s rows (url, host, registered domain,
    reason and detail, every reject reason) on the shared data sets' URLs, their hostile variants
    and the tests' hostile cases, whole and in slices of CHUNK_ROWS (a host dictionary per array)."""
    data = [shared_file(name) for name in URL_DATA_FILES][0].parents[1]
    values = equivalence_corpus(data)
    assert len(values) >= EQUIVALENCE_MIN_URLS
    started = time.perf_counter()
    want = [canonicalize(value) for value in values]
    reference_seconds = time.perf_counter() - started
    # what ingest's Spark expressions rely on: the host is the URL's, the registered domain its suffix
    accepted = [row for row in want if row.reason is None]
    assert all(row.url.split("://", 1)[1].startswith(row.host) and row.host.endswith(row.registered_domain)
               for row in accepted)
    raw = pa.array(values, pa.string())
    chunkings = {"one array": [raw], f"slices of {CHUNK_ROWS}": [raw.slice(i, CHUNK_ROWS) for i in range(0, len(raw), CHUNK_ROWS)],
                 "large_string slices of 7,777": [raw.cast(pa.large_string()).slice(i, 7_777) for i in range(0, len(raw), 7_777)]}
    for name, arrays in chunkings.items():
        urls._host_info.cache_clear()
        got = pa.concat_arrays([canonicalize_arrow(array) for array in arrays])
        problems = _disagreements(got, want, values)
        assert not problems, f"{name}: " + "; ".join(problems)
    fast = sum(pc.sum(urls.fast_path_mask(array)).as_py() or 0 for array in chunkings[f"slices of {CHUNK_ROWS}"])
    shaped = pc.sum(pc.match_substring_regex(raw, urls.FAST_CANONICAL_URL)).as_py()
    reasons = Counter(row.reason for row in want)
    print(f"urls_checked={len(values)} fast_path={fast} slow_path={len(values) - fast} "
          f"fast_shaped_but_slow={shaped - fast} reasons={dict(reasons)} reference_seconds={reference_seconds:.2f}")
    assert fast >= 20_000 and len(values) - fast >= 20_000 and shaped - fast >= 1_000
    assert set(reasons) == {None, "NULL_FIELD", "MALFORMED_URL", "UNSUPPORTED_SCHEME", "INVALID_HOST"}


# --- offline Public Suffix List ----------------------------------------------------------------


def test_psl_is_built_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    urls._psl.cache_clear()
    urls._host_info.cache_clear()
    assert canonicalize("http://forums.bbc.co.uk/").registered_domain == "bbc.co.uk"
    assert canonicalize("http://foo.blogspot.com/").registered_domain == "foo.blogspot.com"


def test_import_loads_no_pandas_or_pyspark() -> None:
    """URL canonicalisation runs in Spark-free processes (lookups, the CLI's argument checks): its
    import must not pull in pandas or pyspark."""
    code = (
        "import sys, linkgraph.urls\n"
        "assert not {'pandas', 'pyspark', 'py4j'} & {m.split('.')[0] for m in sys.modules}"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# --- properties --------------------------------------------------------------------------------

SUFFIXES = [
    "com", "org", "co.uk", "de", "edu", "blogspot.com", "github.io", "com.au", "jp",
    "рф", "中国", "xn--p1ai",
]  # fmt: skip

ascii_label = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True)
unicode_label = st.sampled_from(["bücher", "ПРИМЕР", "例子", "straße", "ÉCOLE", "日本語"])
label = st.one_of(ascii_label, ascii_label, unicode_label)
hosts = st.builds(
    lambda labels, suffix, dot: ".".join([*labels, suffix]) + dot,
    st.lists(label, min_size=1, max_size=3),
    st.sampled_from(SUFFIXES),
    st.sampled_from(["", "", "."]),
)
ports = st.one_of(st.just(""), st.integers(0, 65535).map(lambda p: f":{p}"))
path_text = st.text(max_size=30)
paths = st.lists(path_text, max_size=4).map(lambda parts: "/" + "/".join(parts))
queries = st.one_of(st.just(""), st.text(max_size=20).map(lambda q: "?" + q))
fragments = st.one_of(st.just(""), st.text(max_size=10).map(lambda f: "#" + f))
generated_urls = st.builds(
    lambda scheme, userinfo, host, port, path, query, fragment: (
        f"{scheme}://{userinfo}{host}{port}{path}{query}{fragment}"
    ),
    st.sampled_from(["http", "https", "HTTP", "Https"]),
    st.sampled_from(["", "", "user:pw@"]),
    hosts,
    ports,
    paths,
    queries,
    fragments,
)
fast = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@fast
@given(generated_urls)
def test_canonicalize_is_idempotent(raw: str) -> None:
    first = canonicalize(raw)
    if first.url is not None:
        assert canonicalize(first.url) == first


@fast
@given(generated_urls)
def test_canonical_output_is_ascii_without_fragment(raw: str) -> None:
    result = canonicalize(raw)
    if result.url is None:
        assert result.reason is not None and result.detail
        return
    url = result.url
    assert url.isascii() and url.isprintable()
    assert url.startswith(("http://", "https://"))
    assert "#" not in url and " " not in url
    _, question_mark, query = url.partition("?")
    assert query or not question_mark
    authority = url.split("://", 1)[1].partition("/")[0]
    assert "@" not in authority and authority.startswith(result.host)
    assert result.registered_domain is not None and result.host.endswith(result.registered_domain)


@fast
@given(st.builds(lambda host, path: f"http://{host}{path}", hosts, paths))
def test_valid_hosts_and_any_path_are_accepted(raw: str) -> None:
    result = canonicalize(raw)
    if any(c < " " or c == "\x7f" for c in raw.strip()):
        assert result.reason == "MALFORMED_URL"
    else:
        assert result.reason is None, result


@fast
@given(st.text(max_size=60))
def test_canonicalize_never_raises(raw: str) -> None:
    result = canonicalize(raw)
    assert (result.url is None) != (result.reason is None)
    if result.url is not None:
        assert canonicalize(result.url) == result


def test_seed_urls_are_canonicalised_once_and_a_bad_one_names_its_setting() -> None:
    from linkgraph.errors import ConfigError

    seeds = urls.canonical_seed_urls(["HTTP://Example.COM:80", "https://news.example.org/x/../y#frag"], "scores.seeds")
    assert [s.url for s in seeds] == ["http://example.com/", "https://news.example.org/y"]
    assert [s.host for s in seeds] == ["example.com", "news.example.org"]
    with pytest.raises(ConfigError, match=r"^reward\.seeds\[1\] is not a valid URL \(UNSUPPORTED_SCHEME"):
        urls.canonical_seed_urls(["http://ok.example.com/", "ftp://files.example.com/"], "reward.seeds")


def test_backslash_ends_the_authority_as_in_browsers() -> None:
    """``http://a\\@b/``: WHATWG URL (and browsers) read host ``a`` and path ``/@b/``; an RFC 3986
    reading that takes ``b`` as the host would attribute the link to another site."""
    result = canonicalize("http://a.com\\@b.com/")
    assert (result.url, result.host, result.registered_domain) == ("http://a.com/@b.com/", "a.com", "a.com")
    assert canonicalize("http://a\\@b.com/").reason == "INVALID_HOST"   # host "a", not "b.com"
    arrow = canonicalize_arrow(pa.array(["http://a.com\\@b.com/", "http://b.com/"])).to_pylist()
    assert [row["host"] for row in arrow] == ["a.com", "b.com"]
