"""Sitemap XML (sitemaps.org protocol 0.9): files, gzipped files and sitemap indexes.

Parsing is hardened: ``defusedxml`` refuses DTDs, entity declarations and external references,
so an XML bomb ("billion laughs") or an XXE file is rejected, never expanded; a decompressed
file larger than ``max_bytes`` (the protocol's limit is 50 MB) is rejected before parsing, which
also stops gzip bombs.  Every problem becomes a reject with a reason, never an exception:

* the whole file: ``MALFORMED_RECORD`` (truncated gzip, not well-formed XML, root neither
  ``urlset`` nor ``sitemapindex``), ``UNSAFE_XML`` (DTD/entities), ``OVERSIZED_FIELD``;
* one ``<url>``: ``NULL_FIELD`` (no ``<loc>``), the URL reasons of ``linkgraph.urls.canonicalize``,
  ``INVALID_VALUE`` (priority not a number or outside 0.0-1.0, unknown changefreq),
  ``MALFORMED_TIMESTAMP`` (lastmod not a W3C datetime).

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

import pandas as pd

from linkgraph import schemas as S
from linkgraph.urls import canonicalize

DEFAULT_PRIORITY = 0.5
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
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
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(timezone.utc).replace(tzinfo=None)


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


def parse_sitemap(data: bytes, sitemap: str, max_bytes: int = MAX_SITEMAP_BYTES) -> list[dict]:
    """Every ``<url>`` of one sitemap file as an entry or a reject row, or the ``<sitemap>``
    locations of an index as child rows; a file that cannot be read is one reject row."""
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    def file_reject(reason: str, detail: str) -> list[dict]:
        return [{"kind": REJECT, S.URL: None, "priority": None, "lastmod": None, "changefreq": None,
                 "sitemap": sitemap, S.REASON: reason, S.DETAIL: detail[:500], "raw": None}]

    try:
        root = fromstring(_decompressed(data, max_bytes), forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except OverflowError as exc:
        return file_reject(S.Reason.OVERSIZED_FIELD, str(exc))
    except DefusedXmlException as exc:
        return file_reject(S.Reason.UNSAFE_XML, f"{type(exc).__name__}: {exc}")
    except (ParseError, EOFError, OSError, zlib.error) as exc:
        return file_reject(S.Reason.MALFORMED_RECORD, f"not a readable sitemap: {type(exc).__name__}: {exc}")
    kind = _local(root.tag)
    if kind == "urlset":
        return [_entry(element, sitemap) for element in root if _local(element.tag) == "url"]
    if kind == "sitemapindex":
        children = []
        for element in root:
            loc = next((c.text.strip() for c in element if _local(c.tag) == "loc" and c.text), None)
            if _local(element.tag) == "sitemap" and loc:
                children.append({"kind": CHILD, S.URL: None, "priority": None, "lastmod": None, "changefreq": None,
                                 "sitemap": sitemap, S.REASON: None, S.DETAIL: None, "raw": loc})
        return children
    return file_reject(S.Reason.MALFORMED_RECORD, f"root element <{kind}> is neither <urlset> nor <sitemapindex>")


def parse_files(batches: Iterator[pd.DataFrame], max_bytes: int) -> Iterator[pd.DataFrame]:
    """``mapInPandas`` body over Spark's ``binaryFile`` rows (path, content): one task parses
    its files, nothing reaches the driver."""
    for pdf in batches:
        rows = [row for path, content in zip(pdf["path"], pdf["content"], strict=True)
                for row in parse_sitemap(bytes(content), path, max_bytes)]
        yield pd.DataFrame(rows, columns=list(PARSED_COLUMNS))
