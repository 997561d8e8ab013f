"""From the records of one WARC or WAT file to output rows (plain Python, run in Spark tasks).

Every record read gives exactly one *record row* — ``page`` (an HTML page parsed), ``redirect``
(a 3xx response whose ``Location`` became a link), ``skipped`` (nothing to extract: warcinfo,
request and metadata records, responses with other statuses, WAT records without HTML metadata)
or ``rejected`` (with a reason) — plus one ``edge`` row per link it yields.  So
``records read = parsed (page + redirect) + skipped + rejected`` holds by construction.

Rows are dicts with the keys of :data:`COLUMNS`.  Edge rows hold the raw edge record (strings) that
ingest validates; page rows hold the ``page_signals`` values (``url`` canonical, or null with a
reason when the page URL cannot be canonicalised).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from linkgraph import urls
from linkgraph.inputs.crawl import payload as P
from linkgraph.inputs.crawl.htmlguard import ParseBudget, html_cost_problem
from linkgraph.inputs.crawl.htmllinks import extract_page, resolve
from linkgraph.inputs.crawl.warc import MALFORMED_RECORD, ReadProblem, WarcRecord
from linkgraph.inputs.crawl.watlinks import wat_page
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy

EDGE, PAGE, REDIRECT, SKIPPED, REJECTED = "edge", "page", "redirect", "skipped", "rejected"
RECORD_KINDS = (PAGE, REDIRECT, SKIPPED, REJECTED)
OVERSIZED_PAGE = P.OVERSIZED_PAGE

COLUMNS = (
    "row_kind", "file", "record_id", "record_offset",
    "from_url", "to_url", "anchor_text", "context_window", "link_type", "rel", "position",
    "discovered_at", "last_seen_at",
    "reason", "detail",
    "url", "title", "text", "feed_links", "fetched_at", "link_count",
)


@dataclass(frozen=True)
class ExtractSettings:
    """Limits of extraction (``crawl`` section of the config): payload bytes, characters, the
    parse budget of one HTML page, the decompressed bytes of one WAT record; and the URL policy
    page URLs are canonicalised under (shipped to the tasks with the settings)."""

    max_page_bytes: int = 5_000_000
    max_text_chars: int = 20_000
    context_chars: int = 50
    budget: ParseBudget = field(default_factory=ParseBudget)
    max_wat_record_bytes: int = 5_000_000
    url_policy: UrlPolicy = DEFAULT_POLICY

    @classmethod
    def from_config(cls, crawl: Any, url_policy: UrlPolicy = DEFAULT_POLICY) -> ExtractSettings:
        """The settings of a ``CrawlConfig`` (``config.crawl``) under ``url_policy``."""
        budget = ParseBudget(crawl.max_html_depth, crawl.max_parse_work, crawl.max_parse_elements,
                             crawl.max_parse_bytes, crawl.max_parse_seconds)
        return cls(crawl.max_page_bytes, crawl.max_text_chars, crawl.context_chars, budget,
                   crawl.max_wat_record_bytes, url_policy)

    def payload_limit(self, fmt: str) -> int:
        """Most bytes of a record's payload read into memory: a WAT record's JSON, else a page."""
        return self.max_wat_record_bytes if fmt == "wat" else self.max_page_bytes


def _row(kind: str, file: str, record_id: str | None, offset: int | None, **values) -> dict:
    row = dict.fromkeys(COLUMNS)
    row.update(row_kind=kind, file=file, record_id=record_id, record_offset=offset, **values)
    return row


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_warc_date(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).astimezone(timezone.utc)
    except ValueError:
        return None


def _problem_row(problem: ReadProblem, file: str) -> dict:
    return _row(REJECTED, file, problem.record_id, problem.offset, from_url=problem.target_uri,
                reason=problem.reason, detail=f"{file}: {problem.detail}")


def _rejected(record: WarcRecord, file: str, reason: str, detail: str) -> dict:
    return _row(REJECTED, file, record.record_id, record.offset, from_url=record.target_uri, reason=reason,
                detail=f"{file}: {record.record_type} record {record.record_id} at offset {record.offset}: {detail}")


def _skipped(record: WarcRecord, file: str, why: str) -> dict:
    return _row(SKIPPED, file, record.record_id, record.offset, from_url=record.target_uri, detail=why)


def _page_row(record_id, offset, file, page_url, title, text, feeds, fetched, link_count, settings) -> dict:
    canonical = urls.canonicalize(page_url, settings.url_policy)
    detail = None if canonical.reason is None else f"{file}: page_signals of record {record_id}: {canonical.detail}"
    return _row(
        PAGE, file, record_id, offset, from_url=page_url, url=canonical.url, reason=canonical.reason,
        detail=detail, title=title, text=(text or "")[: settings.max_text_chars] or None, feed_links=feeds,
        fetched_at=fetched, link_count=link_count,
    )


def _edge(file: str, record_id, offset, from_url, to_url, seen: str | None, anchor=None, context=None, rel=None,
          position=None) -> dict:
    return _row(EDGE, file, record_id, offset, from_url=from_url, to_url=to_url, anchor_text=anchor,
                context_window=context, rel=rel, position=position, discovered_at=seen, last_seen_at=seen)


def file_error_row(file: str, exc: Exception) -> dict:
    """The record row of a file that cannot be opened at all."""
    return _row(REJECTED, file, None, None, reason=MALFORMED_RECORD, detail=f"{file}: cannot be read: {exc}"[:500])


def _redirect_rows(file, record_id, offset, source, location, seen) -> list[dict]:
    target = resolve(source or "", location)
    return [_row(REDIRECT, file, record_id, offset, from_url=source, link_count=1),
            _edge(file, record_id, offset, source, target, seen)]


# --- WARC --------------------------------------------------------------------------------------

def warc_rows(records: Iterable[WarcRecord | ReadProblem], file: str, settings: ExtractSettings) -> Iterator[dict]:
    """Rows of a WARC file's records: links and signals of its HTML responses."""
    for record in records:
        if isinstance(record, ReadProblem):
            yield _problem_row(record, file)
        elif record.record_type != "response":
            yield _skipped(record, file, record.record_type)
        else:
            yield from _guarded(_response_rows, record, file, settings)


def _response_rows(record: WarcRecord, file: str, settings: ExtractSettings) -> Iterator[dict]:
    status, headers = record.http_status, record.http_headers
    if status is None:
        yield _rejected(record, file, MALFORMED_RECORD, "no readable HTTP status line")
        return
    seen = _iso(record.date)
    if 300 <= status < 400:
        if headers.get("location", "").strip():
            yield from _redirect_rows(file, record.record_id, record.offset, record.target_uri,
                                      headers["location"], seen)
        else:
            yield _skipped(record, file, "redirect without Location")
        return
    if not 200 <= status < 300:
        yield _skipped(record, file, f"HTTP status {status // 100}xx")
        return
    declared_type = headers.get("content-type")
    if P.media_type(declared_type) is not None and not P.is_html(declared_type, b""):
        yield _rejected(record, file, P.NON_HTML, f"payload is {P.media_type(declared_type)}")
        return
    if record.payload is None:
        yield _rejected(record, file, OVERSIZED_PAGE,
                        f"payload of {record.content_length} bytes exceeds {settings.max_page_bytes}")
        return
    started = time.monotonic()      # the record's parse budget of seconds counts from here
    try:
        html = _html_of(record.payload, headers, settings, started)
        page = extract_page(html, record.target_uri or "", settings.context_chars, settings.budget, started)
    except P.PayloadError as exc:
        yield _rejected(record, file, exc.reason, exc.detail)
        return
    yield _page_row(record.record_id, record.offset, file, record.target_uri, page.title, page.text,
                    page.feed_links, record.date, len(page.links), settings)
    for link in page.links:
        yield _edge(file, record.record_id, record.offset, record.target_uri, link.url, seen, link.anchor_text,
                    link.context_window, link.rel, link.position)


def _html_of(payload: bytes, headers: dict[str, str], settings: ExtractSettings, started: float) -> str:
    """The HTML of a response payload, decoded, and within the parse budget (its seconds counted
    from ``started``); else ``PayloadError`` with the reject reason."""
    declared_type = headers.get("content-type")
    body = P.decode_http_body(payload, headers, settings.max_page_bytes)
    if len(body) > settings.max_page_bytes:
        raise P.PayloadError(OVERSIZED_PAGE, f"decoded payload of {len(body)} bytes exceeds {settings.max_page_bytes}")
    if not P.is_html(declared_type, body):
        raise P.PayloadError(P.NON_HTML, "payload without a media type does not start as HTML")
    html, _codec = P.decode_html(body, P.content_type_charset(declared_type))
    too_costly = html_cost_problem(html, settings.budget, started)
    if too_costly is not None:
        raise P.PayloadError(OVERSIZED_PAGE, too_costly)
    return html


# --- WAT ---------------------------------------------------------------------------------------

def wat_rows(records: Iterable[WarcRecord | ReadProblem], file: str, settings: ExtractSettings) -> Iterator[dict]:
    """Rows of a Common Crawl WAT file: ``metadata`` records holding JSON
    ``Envelope`` -> ``Payload-Metadata`` -> ``HTTP-Response-Metadata`` -> ``HTML-Metadata``."""
    for record in records:
        if isinstance(record, ReadProblem):
            yield _problem_row(record, file)
        elif record.record_type != "metadata":
            yield _skipped(record, file, record.record_type)
        elif record.payload is None:
            yield _rejected(record, file, OVERSIZED_PAGE,
                            f"WAT JSON of {record.content_length} bytes exceeds {settings.max_wat_record_bytes}")
        else:
            yield from _guarded(_wat_record_rows, record, file, settings)


def _guarded(rows_of, record: WarcRecord, file: str, settings: ExtractSettings) -> Iterator[dict]:
    """The rows of one record, or one rejected row if extraction fails unexpectedly (a parser
    error on a pathological page must not end the task)."""
    try:
        rows = list(rows_of(record, file, settings))
    except Exception as exc:  # noqa: BLE001 - the record is rejected with the error as detail
        rows = [_rejected(record, file, MALFORMED_RECORD, f"extraction failed: {type(exc).__name__}: {exc}"[:500])]
    yield from rows


def _wat_record_rows(record: WarcRecord, file: str, settings: ExtractSettings) -> Iterator[dict]:
    try:
        envelope = json.loads(record.payload or b"")["Envelope"]
        warc_header = envelope["WARC-Header-Metadata"]
        payload_meta = envelope.get("Payload-Metadata") or {}
    except (ValueError, KeyError, TypeError) as exc:
        detail = f"not WAT JSON with an Envelope ({type(exc).__name__}: {exc})"
        yield _rejected(record, file, MALFORMED_RECORD, detail[:500])
        return
    described = str(warc_header.get("WARC-Type") or "unknown")
    if described != "response":
        yield _skipped(record, file, f"WAT of a {described} record")
        return
    response = payload_meta.get("HTTP-Response-Metadata")
    if not isinstance(response, dict):
        yield _skipped(record, file, "WAT without HTTP response metadata")
        return
    yield from _wat_response_rows(record, file, settings, warc_header, response)


def _wat_response_rows(record: WarcRecord, file: str, settings: ExtractSettings, warc_header: dict,
                       response: dict) -> Iterator[dict]:
    """Rows of the WAT of a response: as the WARC path, a redirect's Location, the links of a 2xx
    HTML page (:func:`linkgraph.inputs.crawl.watlinks.wat_page`), nothing of other statuses."""
    page_url = warc_header.get("WARC-Target-URI") or record.target_uri
    record_id = warc_header.get("WARC-Record-ID") or record.record_id
    fetched = _parse_warc_date(warc_header.get("WARC-Date")) or record.date
    seen = _iso(fetched)
    try:
        status = int(str((response.get("Response-Message") or {}).get("Status", "")).strip())
    except ValueError:
        yield _rejected(record, file, MALFORMED_RECORD, "WAT without a readable HTTP status")
        return
    headers = {str(k).lower(): str(v) for k, v in (response.get("Headers") or {}).items()}
    if not 200 <= status < 300:
        if 300 <= status < 400 and headers.get("location", "").strip():
            yield from _redirect_rows(file, record_id, record.offset, page_url, headers["location"], seen)
        else:
            yield _skipped(record, file, "redirect without Location" if 300 <= status < 400
                           else f"HTTP status {status // 100}xx")
        return
    html_meta = response.get("HTML-Metadata")
    if not isinstance(html_meta, dict):
        yield _skipped(record, file, "WAT without HTML metadata (no links)")
        return
    page = wat_page(html_meta, page_url or "")
    yield _page_row(record_id, record.offset, file, page_url, page.title, None, page.feed_links, fetched,
                    len(page.links), settings)
    for link in page.links:
        yield _edge(file, record_id, record.offset, page_url, link.url, seen, link.anchor_text, None, link.rel, None)
