"""Sitemaps (sitemaps.org protocol 0.9): XML sitemaps and indexes, text sitemaps, and RSS 2.0 /
Atom 1.0 feeds used as sitemaps, each plain or gzipped.

The format is found from the content: a file whose first non-blank byte is ``<`` is XML, whose
root element says what it is (``urlset``, ``sitemapindex``, ``rss`` or ``feed``); any other file
is a text sitemap, one URL a line in UTF-8 (blank lines ignored).  A feed contributes the
``<link>`` of each RSS ``<item>`` (its ``<pubDate>`` as lastmod) and the ``<link href>`` (no
``rel`` or ``rel="alternate"``) of each Atom ``<entry>`` (its ``<updated>`` as lastmod).

Parsing is hardened: ``defusedxml`` refuses DTDs, entity declarations and external references,
so an XML bomb ("billion laughs") or an XXE file is rejected, never expanded; the file is
decompressed as it is parsed and one whose decompressed bytes pass ``max_bytes`` (the protocol's
limit is 50 MB) is rejected there, which also stops gzip bombs; a text sitemap's line longer than
``max_line_bytes`` is one reject, read past without being held, and the rest of the file is kept.
Every URL passes the limits and the canonicaliser of edge URLs (``max_url_length`` characters,
then :func:`linkgraph.urls.canonicalize`).  Every problem becomes a reject with a reason, never an
exception:

* the whole file: ``MALFORMED_RECORD`` (empty, binary, truncated gzip, not well-formed XML, an
  unknown or unusable encoding, an XML root that is none of the four), ``UNSAFE_XML``
  (DTD/entities), ``OVERSIZED_FIELD`` (over ``max_bytes``, or more than 50,000 entries);
* one entry or line: ``NULL_FIELD`` (no ``<loc>``/``<link>``), ``OVERSIZED_FIELD`` (a URL over
  ``max_url_length`` characters, a text line over ``max_line_bytes`` bytes), ``MALFORMED_RECORD``
  (a text line that is not UTF-8), the URL reasons of ``linkgraph.urls.canonicalize``,
  ``INVALID_VALUE`` (priority not a number or outside 0.0-1.0, unknown changefreq),
  ``MALFORMED_TIMESTAMP`` (lastmod or pubDate not a date, or out of range in UTC).

An entry without ``<priority>`` gets the protocol's default 0.5.  A sitemap index contributes no
URLs itself; the sitemaps it lists are read when they are among the input files (nothing is
fetched), and the ones that are not are counted as unresolved.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import IO, Any, NamedTuple
from xml.etree.ElementTree import ParseError

import pandas as pd
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from linkgraph.errors import PayloadError
from linkgraph.lake import schemas as S
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy
from linkgraph.urls import canonicalize

DEFAULT_PRIORITY = 0.5
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
MAX_SITEMAP_LINE_BYTES = 1024 * 1024
MAX_URL_LENGTH = 2048
MAX_SITEMAP_URLS = 50_000
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
ATOM = "{http://www.w3.org/2005/Atom}"
_READ_CHUNK = 64 * 1024
# bytes fed to expat at a time: it scans an unfinished token (a long attribute value, comment or
# tag) again on every feed, so the 16 KiB iterparse asks for make a 10 MB token cost minutes
_XML_FEED = 2 * 1024 * 1024

ENTRY, REJECT, CHILD = "entry", "reject", "child"
# What parsing one file yields, one row per <url> entry, reject or listed child sitemap.
PARSED_COLUMNS = ("kind", S.URL, "priority", "lastmod", "changefreq", "sitemap", S.REASON, S.DETAIL, "raw")


class SitemapLimits(NamedTuple):
    """Bytes of a decompressed file, bytes of a text sitemap's line, characters of a URL, and
    entries of a file (the protocol's 50,000); and the URL policy entries are canonicalised under
    (shipped to the tasks with the limits)."""

    max_bytes: int = MAX_SITEMAP_BYTES
    max_line_bytes: int = MAX_SITEMAP_LINE_BYTES
    max_url_length: int = MAX_URL_LENGTH
    max_urls: int = MAX_SITEMAP_URLS
    url_policy: UrlPolicy = DEFAULT_POLICY


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _row(sitemap: str, **values: Any) -> dict:
    row: dict[str, Any] = dict.fromkeys(PARSED_COLUMNS)
    row.update({"kind": REJECT, "sitemap": sitemap})
    row.update(values)
    return row


# --- bounded streams ----------------------------------------------------------------------------------

class _Bounded(io.RawIOBase):
    """The decompressed bytes of a file; raises ``PayloadError`` (OVERSIZED_FIELD) once more than
    ``limit`` were read."""

    def __init__(self, stream: IO[bytes] | gzip.GzipFile, limit: int):
        self._stream, self._limit, self._read = stream, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(min(len(buffer), _READ_CHUNK))
        self._read += len(data)
        if self._read > self._limit:
            raise PayloadError(S.Reason.OVERSIZED_FIELD, f"sitemap larger than {self._limit} bytes decompressed")
        buffer[: len(data)] = data
        return len(data)


def _open(data: bytes, limit: int) -> io.BufferedReader:
    """The file's bytes as a stream, gunzipped as read when gzip-compressed, at most ``limit``."""
    raw: IO[bytes] | gzip.GzipFile = io.BytesIO(data)
    if data[:2] == b"\x1f\x8b":
        raw = gzip.GzipFile(fileobj=io.BytesIO(data))
    return io.BufferedReader(_Bounded(raw, limit), buffer_size=_READ_CHUNK)


class _LargeReads:
    """``stream`` read ``_XML_FEED`` bytes at a time, whatever size is asked for."""

    def __init__(self, stream: IO[bytes]):
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(_XML_FEED)


def _lines(stream: io.BufferedReader, max_line_bytes: int) -> Iterator[bytes | None]:
    """The stream's lines without their ends; ``None`` for one longer than ``max_line_bytes``,
    whose rest is read past in pieces of that size (never held whole)."""
    while line := stream.readline(max_line_bytes + 1):
        ended = line.endswith(b"\n")
        content = line.rstrip(b"\r\n")
        if len(content) <= max_line_bytes:
            yield content
            continue
        while not ended and (line := stream.readline(max_line_bytes + 1)):
            ended = line.endswith(b"\n")
        yield None


# --- values -------------------------------------------------------------------------------------------

def parse_lastmod(text: str) -> datetime | None:
    """W3C datetime (YYYY, YYYY-MM, YYYY-MM-DD, or a full datetime with a zone) -> naive UTC;
    None when it is not one."""
    text = text.strip()
    formats = {4: "%Y", 7: "%Y-%m", 10: "%Y-%m-%d"}
    try:
        if len(text) in formats:
            return datetime.strptime(text, formats[len(text)])
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            return None
        return parsed.astimezone(timezone.utc).replace(tzinfo=None)
    except (ValueError, OverflowError):  # OverflowError: 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        return None


def parse_pubdate(text: str) -> datetime | None:
    """RSS ``pubDate`` (RFC 822 date-time, ``Sat, 07 Sep 2002 00:00:01 GMT``) -> naive UTC; None
    when it is not one."""
    try:
        parsed = parsedate_to_datetime(text.strip())
        if parsed.tzinfo is None:       # "-0000": UTC without a known zone
            return parsed
        return parsed.astimezone(timezone.utc).replace(tzinfo=None)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _url_row(loc: str, sitemap: str, limits: SitemapLimits, what: str) -> dict:
    """An entry row with ``url`` set, or a reject: ``loc`` passes the edge URL limits and the
    canonicaliser.  ``raw`` keeps at most ``max_url_length`` characters of ``loc``."""
    row = _row(sitemap, raw=loc[: limits.max_url_length] or None)
    if not loc:
        return {**row, S.REASON: S.Reason.NULL_FIELD, S.DETAIL: f"{what} is empty"}
    if len(loc) > limits.max_url_length:
        return {**row, S.REASON: S.Reason.OVERSIZED_FIELD,
                S.DETAIL: f"{what} has {len(loc)} characters (limit {limits.max_url_length})"}
    canonical = canonicalize(loc, limits.url_policy)
    if canonical.url is None:
        return {**row, S.REASON: canonical.reason, S.DETAIL: canonical.detail}
    return {**row, "kind": ENTRY, S.URL: canonical.url, "priority": DEFAULT_PRIORITY}


def _dated(row: dict, text: str, parse: Callable[[str], datetime | None], what: str) -> dict:
    """``row`` with its lastmod from ``text`` (none when empty), or a MALFORMED_TIMESTAMP reject."""
    if row["kind"] != ENTRY or not text:
        return row
    lastmod = parse(text)
    if lastmod is None:
        return {**row, "kind": REJECT, S.URL: None, "priority": None, S.REASON: S.Reason.MALFORMED_TIMESTAMP,
                S.DETAIL: f"{what} {text[:100]!r}"}
    return {**row, "lastmod": lastmod}


# --- XML entries --------------------------------------------------------------------------------------

def _url_entry(element: Any, sitemap: str, limits: SitemapLimits) -> dict | None:
    """One ``<url>`` of a ``<urlset>``."""
    fields = {_local(child.tag): (child.text or "").strip() for child in element}
    if not fields.get("loc"):
        return _row(sitemap, **{S.REASON: S.Reason.NULL_FIELD, S.DETAIL: "<url> without <loc>"})
    row = _dated(_url_row(fields["loc"], sitemap, limits, "<loc>"), fields.get("lastmod", ""), parse_lastmod,
                 "lastmod")
    if row["kind"] != ENTRY:
        return row
    reject = {**row, "kind": REJECT, S.URL: None, "priority": None, "lastmod": None, S.REASON: S.Reason.INVALID_VALUE}
    if fields.get("priority"):
        try:
            row["priority"] = float(fields["priority"])
        except ValueError:
            row["priority"] = float("nan")
        if not 0.0 <= row["priority"] <= 1.0:
            return {**reject, S.DETAIL: f"priority {fields['priority'][:100]!r} outside 0.0-1.0"}
    changefreq = fields.get("changefreq", "").lower() or None
    if changefreq is not None and changefreq not in CHANGEFREQS:
        return {**reject, S.DETAIL: f"changefreq {fields['changefreq'][:100]!r}"}
    return {**row, "changefreq": changefreq}


def _index_entry(element: Any, sitemap: str, limits: SitemapLimits) -> dict | None:
    """One ``<sitemap>`` of a ``<sitemapindex>``: the child sitemap it lists (its file name is
    looked for among the input files)."""
    loc = next(((c.text or "").strip() for c in element if _local(c.tag) == "loc" and c.text), None)
    return _row(sitemap, kind=CHILD, raw=loc[: limits.max_url_length]) if loc else None


def _rss_item(element: Any, sitemap: str, limits: SitemapLimits) -> dict | None:
    """One RSS 2.0 ``<item>``: its ``<link>`` (RSS elements have no namespace) and ``<pubDate>``."""
    fields = {child.tag: (child.text or "").strip() for child in element if isinstance(child.tag, str)}
    if not fields.get("link"):
        return _row(sitemap, **{S.REASON: S.Reason.NULL_FIELD, S.DETAIL: "<item> without <link>"})
    return _dated(_url_row(fields["link"], sitemap, limits, "<link>"), fields.get("pubDate", ""), parse_pubdate,
                  "pubDate")


def _atom_entry(element: Any, sitemap: str, limits: SitemapLimits) -> dict | None:
    """One Atom 1.0 ``<entry>``: its alternate ``<link href>`` and ``<updated>``."""
    links = [c.get("href", "").strip() for c in element
             if c.tag == f"{ATOM}link" and c.get("rel", "alternate") == "alternate"]
    href = next((link for link in links if link), "")
    if not href:
        return _row(sitemap, **{S.REASON: S.Reason.NULL_FIELD, S.DETAIL: "<entry> without <link href>"})
    updated = next(((c.text or "").strip() for c in element if c.tag == f"{ATOM}updated"), "")
    return _dated(_url_row(href, sitemap, limits, "<link href>"), updated, parse_lastmod, "updated")


EntryReader = Callable[[Any, str, SitemapLimits], dict | None]
# root element -> (entry element, the entry's depth, the entry's reader)
_XML_FORMATS: dict[str, tuple[str, int, EntryReader]] = {
    "urlset": ("url", 2, _url_entry),
    "sitemapindex": ("sitemap", 2, _index_entry),
    "rss": ("item", 3, _rss_item),
    "feed": ("entry", 2, _atom_entry),
}


# --- files --------------------------------------------------------------------------------------------

def _xml_rows(stream: IO[bytes], sitemap: str, limits: SitemapLimits) -> list[dict]:
    """The rows of an XML sitemap, index or feed, parsed incrementally: each entry is dropped once
    read, so memory is the entries of one feed to expat plus the rows."""
    events = iterparse(_LargeReads(stream), events=("start", "end"), forbid_dtd=True, forbid_entities=True,
                       forbid_external=True)
    rows: list[dict] = []
    entry, entry_depth = "", 0
    read: EntryReader = _url_entry
    depth, container = 0, None
    for event, element in events:
        if event == "start":
            depth += 1
            if depth == 1:
                if _local(element.tag) not in _XML_FORMATS:
                    raise PayloadError(S.Reason.MALFORMED_RECORD, f"root element <{_local(element.tag)}> is "
                                        f"not <urlset>, <sitemapindex>, <rss> or <feed>")
                entry, entry_depth, read = _XML_FORMATS[_local(element.tag)]
            if depth == entry_depth - 1:
                container = element
            continue
        depth -= 1
        if depth != entry_depth - 1 or _local(element.tag) != entry:
            continue
        if len(rows) >= limits.max_urls:
            raise PayloadError(S.Reason.OVERSIZED_FIELD,
                                f"sitemap lists more than {limits.max_urls} entries (the protocol's limit); not read")
        row = read(element, sitemap, limits)
        if row is not None:
            rows.append(row)
        if container is not None:
            container.clear()   # drop what was read: memory stays bounded by one entry
    return rows


def _text_rows(stream: io.BufferedReader, sitemap: str, limits: SitemapLimits) -> list[dict]:
    """The rows of a text sitemap: one URL a line (UTF-8, surrounding blanks stripped, blank lines
    skipped); a line that is too long or not UTF-8 is one reject and the next line is read."""
    rows: list[dict] = []
    for number, line in enumerate(_lines(stream, limits.max_line_bytes), 1):
        if line is None:
            rows.append(_row(sitemap, **{S.REASON: S.Reason.OVERSIZED_FIELD,
                                         S.DETAIL: f"line {number} longer than {limits.max_line_bytes} bytes"}))
            continue
        try:
            text = line.decode("utf-8-sig" if number == 1 else "utf-8").strip()
        except UnicodeDecodeError as exc:
            rows.append(_row(sitemap, raw=line[: limits.max_url_length].decode("utf-8", "replace"),
                             **{S.REASON: S.Reason.MALFORMED_RECORD, S.DETAIL: f"line {number} is not UTF-8: {exc}"}))
            continue
        if not text:
            continue
        if len(rows) >= limits.max_urls:
            raise PayloadError(S.Reason.OVERSIZED_FIELD,
                                f"sitemap lists more than {limits.max_urls} entries (the protocol's limit); not read")
        rows.append(_url_row(text, sitemap, limits, f"line {number}"))
    return rows


def _rows(stream: io.BufferedReader, sitemap: str, limits: SitemapLimits) -> list[dict]:
    """XML or text, from the first bytes."""
    head = stream.peek(1024)[:1024]
    if not head:
        raise PayloadError(S.Reason.MALFORMED_RECORD, "empty file")
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff", b"<\x00", b"\x00<")):
        raise PayloadError(S.Reason.MALFORMED_RECORD, "binary content (a NUL byte), neither XML nor a text sitemap")
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") or head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _xml_rows(stream, sitemap, limits)
    return _text_rows(stream, sitemap, limits)


def parse_sitemap(data: bytes, sitemap: str, max_bytes: int = MAX_SITEMAP_BYTES,
                  max_urls: int = MAX_SITEMAP_URLS, limits: SitemapLimits | None = None) -> list[dict]:
    """Every entry of one sitemap file (XML, text or feed) as an entry or a reject row, or the
    ``<sitemap>`` locations of an index as child rows; a file that cannot be read is one reject row.

    The file is decompressed and parsed as a stream; a file listing more than ``max_urls`` URLs
    (the protocol's 50,000) is one ``OVERSIZED_FIELD`` reject, found without reading further.
    ``limits`` (when given) replaces ``max_bytes`` and ``max_urls``."""
    limits = limits or SitemapLimits(max_bytes=max_bytes, max_urls=max_urls)
    try:
        return _rows(_open(data, limits.max_bytes), sitemap, limits)
    except PayloadError as exc:
        reason, detail = exc.reason, exc.detail
    except DefusedXmlException as exc:
        reason, detail = S.Reason.UNSAFE_XML, f"{type(exc).__name__}: {exc}"
    except (ParseError, EOFError, OSError, zlib.error, LookupError, ValueError) as exc:
        # LookupError: an encoding Python does not know; ValueError: one expat cannot use
        reason, detail = S.Reason.MALFORMED_RECORD, f"not a readable sitemap: {type(exc).__name__}: {exc}"
    return [_row(sitemap, **{S.REASON: reason, S.DETAIL: detail[:500]})]


def parse_files(batches: Iterator[pd.DataFrame], limits: SitemapLimits) -> Iterator[pd.DataFrame]:
    """``mapInPandas`` body over Spark's ``binaryFile`` rows (path, content): one task parses
    its files, nothing reaches the driver."""
    for pdf in batches:
        for path, content in zip(pdf["path"], pdf["content"], strict=True):   # one file's rows at a time
            yield pd.DataFrame(parse_sitemap(bytes(content), path, limits=limits), columns=list(PARSED_COLUMNS))
