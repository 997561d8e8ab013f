"""Sitemap XML (sitemaps.org protocol 0.9): files, gzipped files and sitemap indexes.

Parsing is hardened: ``defusedxml`` refuses DTDs, entity declarations and external references,
so an XML bomb ("billion laughs") or an XXE file is rejected, never expanded; a decompressed
file larger than ``max_bytes`` (the protocol's limit is 50 MB) is rejected before parsing, which
also stops gzip bombs.  Every problem becomes a reject with a reason, never an exception:

* the whole file: ``MALFORMED_RECORD`` (truncated gzip, not well-formed XML, an unknown or
  unusable encoding, root neither ``urlset`` nor ``sitemapindex``), ``UNSAFE_XML``
  (DTD/entities), ``OVERSIZED_FIELD`` (over ``max_bytes``, or more than 50,000 entries);
* one ``<url>``: ``NULL_FIELD`` (no ``<loc>``), the URL reasons of ``linkgraph.urls.canonicalize``,
  ``INVALID_VALUE`` (priority not a number or outside 0.0-1.0, unknown changefreq),
  ``MALFORMED_TIMESTAMP`` (lastmod not a W3C datetime, or out of range in UTC).

An entry without ``<priority>`` gets the protocol's default 0.5.  A sitemap index contributes no
URLs itself; the sitemaps it lists are read when they are among the input files (nothing is
fetched), and the ones that are not are counted as unresolved.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from linkgraph.lake import schemas as S
from linkgraph.urls import canonicalize

DEFAULT_PRIORITY = 0.5
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
MAX_SITEMAP_URLS = 50_000
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")

ENTRY, REJECT, CHILD = "entry", "reject", "child"
# What parsing one file yields, one row per <url> entry, reject or listed child sitemap.
PARSED_COLUMNS = ("kind", S.URL, "priority", "lastmod", "changefreq", "sitemap", S.REASON, S.DETAIL, "raw")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _decompressed(data: bytes, max_bytes: int) -> bytes:
    """The file's bytes, gunzipped when gzip-compressed; raises ``ValueError`` past ``max_bytes``."""
    if data[:2] != b"\x1f\x8b":
        if len(data) > max_bytes:
            raise OverflowError(f"sitemap larger than {max_bytes} bytes")
        return data
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        out = stream.read(max_bytes + 1)
    if len(out) > max_bytes:
        raise OverflowError(f"decompressed sitemap larger than {max_bytes} bytes")
    return out


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


def _entry(element, sitemap: str) -> dict:
    fields = {_local(child.tag): (child.text or "").strip() for child in element}
    loc = fields.get("loc", "")
    row = {"kind": REJECT, S.URL: None, "priority": None, "lastmod": None, "changefreq": None,
           "sitemap": sitemap, S.REASON: None, S.DETAIL: None, "raw": loc or None}
    if not loc:
        return {**row, S.REASON: S.Reason.NULL_FIELD, S.DETAIL: "<url> without <loc>"}
    canonical = canonicalize(loc)
    if canonical.url is None:
        return {**row, S.REASON: canonical.reason, S.DETAIL: canonical.detail}
    priority = DEFAULT_PRIORITY
    if fields.get("priority"):
        try:
            priority = float(fields["priority"])
        except ValueError:
            priority = float("nan")
        if not 0.0 <= priority <= 1.0:
            detail = f"priority {fields['priority']!r} outside 0.0-1.0"
            return {**row, S.REASON: S.Reason.INVALID_VALUE, S.DETAIL: detail}
    lastmod = None
    if fields.get("lastmod"):
        lastmod = parse_lastmod(fields["lastmod"])
        if lastmod is None:
            return {**row, S.REASON: S.Reason.MALFORMED_TIMESTAMP, S.DETAIL: f"lastmod {fields['lastmod']!r}"}
    changefreq = fields.get("changefreq", "").lower() or None
    if changefreq is not None and changefreq not in CHANGEFREQS:
        return {**row, S.REASON: S.Reason.INVALID_VALUE, S.DETAIL: f"changefreq {fields['changefreq']!r}"}
    return {**row, "kind": ENTRY, S.URL: canonical.url, "priority": priority, "lastmod": lastmod,
            "changefreq": changefreq}


def parse_sitemap(data: bytes, sitemap: str, max_bytes: int = MAX_SITEMAP_BYTES,
                  max_urls: int = MAX_SITEMAP_URLS) -> list[dict]:
    """Every ``<url>`` of one sitemap file as an entry or a reject row, or the ``<sitemap>``
    locations of an index as child rows; a file that cannot be read is one reject row.

    The XML is parsed incrementally and each ``<url>`` dropped once read, so memory is the file's
    bytes plus at most ``max_urls`` rows; a file listing more than ``max_urls`` URLs (the
    protocol's 50,000) is one ``OVERSIZED_FIELD`` reject, found without reading further."""
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    def file_reject(reason: str, detail: str) -> list[dict]:
        return [{"kind": REJECT, S.URL: None, "priority": None, "lastmod": None, "changefreq": None,
                 "sitemap": sitemap, S.REASON: reason, S.DETAIL: detail[:500], "raw": None}]

    rows: list[dict] = []
    try:
        events = iterparse(io.BytesIO(_decompressed(data, max_bytes)), events=("start", "end"),
                           forbid_dtd=True, forbid_entities=True, forbid_external=True)
        root: Any = None
        depth = 0
        for event, element in events:
            if event == "start":
                depth += 1
                if root is None:
                    root = element
                    if _local(root.tag) not in ("urlset", "sitemapindex"):
                        return file_reject(S.Reason.MALFORMED_RECORD,
                                           f"root element <{_local(root.tag)}> is neither <urlset> nor <sitemapindex>")
                continue
            depth -= 1
            if depth != 1:
                continue
            name = _local(element.tag)
            listed = name == ("url" if _local(root.tag) == "urlset" else "sitemap")
            if listed and len(rows) >= max_urls:
                return file_reject(S.Reason.OVERSIZED_FIELD,
                                   f"sitemap lists more than {max_urls} entries (the protocol's limit); not read")
            if listed and name == "url":
                rows.append(_entry(element, sitemap))
            elif listed:
                loc = next(((c.text or "").strip() for c in element if _local(c.tag) == "loc" and c.text), None)
                if loc:
                    rows.append({"kind": CHILD, S.URL: None, "priority": None, "lastmod": None, "changefreq": None,
                                 "sitemap": sitemap, S.REASON: None, S.DETAIL: None, "raw": loc})
            root.clear()   # drop what was read: memory stays bounded by the file's bytes
    except OverflowError as exc:
        return file_reject(S.Reason.OVERSIZED_FIELD, str(exc))
    except DefusedXmlException as exc:
        return file_reject(S.Reason.UNSAFE_XML, f"{type(exc).__name__}: {exc}")
    except (ParseError, EOFError, OSError, zlib.error, LookupError, ValueError) as exc:
        # LookupError: an encoding Python does not know; ValueError: one expat cannot use
        return file_reject(S.Reason.MALFORMED_RECORD, f"not a readable sitemap: {type(exc).__name__}: {exc}")
    return rows


def parse_files(batches: Iterator[pd.DataFrame], max_bytes: int) -> Iterator[pd.DataFrame]:
    """``mapInPandas`` body over Spark's ``binaryFile`` rows (path, content): one task parses
    its files, nothing reaches the driver."""
    for pdf in batches:
        for path, content in zip(pdf["path"], pdf["content"], strict=True):   # one file's rows at a time
            yield pd.DataFrame(parse_sitemap(bytes(content), path, max_bytes), columns=list(PARSED_COLUMNS))
