"""The sample crawl as daily batches: what a focused crawler hands over day by day for a deployment
rehearsal that runs the daily DAG once per logical date.

:func:`write_crawl_days` splits ``generate_sample_crawl(seed)`` over ``days`` consecutive logical
dates (``ds``, ``YYYY-MM-DD``), by the schedule of ``linkgraph.sample.schedule`` (which hosts join
on which day, the link farm on day 5 and the mirror network on day 9, which pages are fetched
when and with which links), and writes, under ``root``::

    edges/<ds>/part-0.jsonl             the day's edge records (EDGE_KEYS), or
    edges/<ds>/crawl.warc.gz            the day's pages as WARC/1.1 request + response records, or
    edges/<ds>/crawl.warc.wat.gz        the day's pages as Common Crawl WAT metadata records
    signals/<ds>/signals.jsonl          page signals of the pages fetched that day
                                        (url, title, text, feed_links, fetched_at)
    sitemaps/<ds>/                      sitemaps.org XML of the hosts first crawled that day
    days.json                           the manifest: seed, first_ds and one CrawlDay per day

Day numbers are 1-based; day i's files are the same for every ``days >= i``, so a shorter run is
a prefix of a longer one, byte for byte.

* ``DAY_FORMATS``: days 3 and 10 are WARC, 6 and 12 WAT, day 8 is empty (an empty
  ``part-0.jsonl``), day 11 absent (no ``edges/<ds>``, no signals, no sitemaps); the others JSON
  lines.  Nothing is fetched on days 8 and 11 (the schedule moves those fetches to the next day).
* WARC and WAT days render each fetched HTML page (PDFs are left out; their signals are kept) as
  an HTML document whose ``<a href>`` elements (rel, anchor text; NAV links in ``<nav>``, SIDEBAR
  in ``<aside>``, FOOTER in ``<footer>``, CONTENT in ``<main>``) are the day's links of the page,
  and as the WAT ``HTML-Metadata`` Common Crawl's extractor would write for that document.  Only
  valid links go into them; the sample's deliberately bad records (and its exact duplicates) are
  written only on JSON-lines days, with their page's first fetch.

Times are UTC, ``YYYY-MM-DDTHH:MM:SSZ`` (the schedule's).  A day's records and signals are in
fetch order.  Everything derives from ``seed``: the same arguments give the same bytes.
"""

from __future__ import annotations

import gzip
import html
import json
import uuid
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urlsplit

from linkgraph.sample.data import HOSTS
from linkgraph.sample.files import write_jsonl, write_sitemaps_xml
from linkgraph.sample.generator import generate_sample_crawl
from linkgraph.sample.schedule import (
    EMPTY_DAY,
    HOST_DAYS,
    LINK_FARM_DAY,
    MIRROR_DAY,
    MIRROR_HOSTS,
    SEPARATORS,
    Fetch,
    Page,
    Plan,
    fetches_of,
    record_hosts,
    url_host,
)

DAYS = 14
FIRST_DS = "2026-11-16"
JSONL, WARC, WAT = "jsonl", "warc", "wat"
# the input format of day i at DAY_FORMATS[i - 1] (None: no input that day); days past it are jsonl
DAY_FORMATS: tuple[str | None, ...] = (
    JSONL, JSONL, WARC, JSONL, JSONL, WAT, JSONL, JSONL, JSONL, WARC, None, WAT, JSONL, JSONL,
)
FILE_NAMES = {JSONL: "part-0.jsonl", WARC: "crawl.warc.gz", WAT: "crawl.warc.wat.gz"}
SIGNALS_FILE = "signals.jsonl"
MANIFEST = "days.json"

WAT_TEXT_CHARS = 100                   # Common Crawl's extractor cuts an anchor's text there
LOGO = "/static/logo.svg"
_ID_SPACE = uuid.UUID("6f0c1d2e-5a4b-4c3d-8e9f-0a1b2c3d4e5f")
_HTML_TYPE = "text/html; charset=utf-8"


@dataclass(frozen=True)
class CrawlDay:
    """One day of the rehearsal.  ``fmt`` is None when the day has no input (``absent``);
    ``records`` counts the edge records written, or for WARC/WAT the links the documents carry (what
    extraction yields); ``new_hosts`` are the hosts no earlier day named (as a fetched page's host or a
    valid link's target), sorted; ``link_farm_hosts`` / ``mirror_hosts`` are set on the day those networks
    appear; ``empty``: the input exists without records; ``signals`` / ``sitemaps`` count the page
    signal rows and sitemap entries written."""

    index: int
    ds: str
    fmt: str | None
    records: int
    new_hosts: tuple[str, ...]
    link_farm_hosts: tuple[str, ...]
    mirror_hosts: tuple[str, ...]
    empty: bool
    absent: bool
    signals: int
    sitemaps: int


def day_format(index: int) -> str | None:
    """The input format of day ``index`` (1-based): ``DAY_FORMATS``, jsonl past its end."""
    return DAY_FORMATS[index - 1] if index <= len(DAY_FORMATS) else JSONL


# --- HTML, WARC and WAT ------------------------------------------------------------------------


def _ascii_url(url: str) -> str:
    """The URL with its host IDNA-encoded, as WARC headers carry it (the page URLs are canonical
    but for unicode hosts)."""
    host = url_host(url)
    return url.replace(host, host.encode("idna").decode("ascii"), 1)


def _href(to_url: str, page_url: str) -> str:
    """``to_url`` as the page's markup writes it: path-relative on the page's own origin."""
    origin = "/".join(page_url.split("/")[:3])
    if to_url == origin or to_url.startswith(origin + "/") or to_url.startswith(origin + "?") \
            or to_url.startswith(origin + "#"):
        rest = to_url[len(origin):]
        return rest if rest.startswith("/") else "/" + rest
    return to_url


def _in_sentence(record: dict) -> tuple[str, str] | None:
    """The text before and after the anchor in its context window, when that is a sentence."""
    anchor, context = record["anchor_text"] or "", record["context_window"] or ""
    if not anchor or anchor not in context or any(sep in context for sep in SEPARATORS):
        return None
    before, _, after = context.partition(anchor)
    return before, after


def _layout(links: list[dict]) -> list[tuple[str, list[dict]]]:
    """The page's links in document order, by block: nav, main (sentences, then a listing), aside,
    footer."""
    by = {pos: [r for r in links if r["position"] == pos] for pos in ("NAV", "CONTENT", "SIDEBAR", "FOOTER")}
    sentences = [r for r in by["CONTENT"] if _in_sentence(r)]
    listing = [r for r in by["CONTENT"] if not _in_sentence(r)]
    return [("nav", by["NAV"]), ("sentences", sentences), ("listing", listing), ("aside", by["SIDEBAR"]),
            ("footer", by["FOOTER"])]


def _a(record: dict, page_url: str) -> str:
    href = html.escape(_href(record["to_url"], page_url), quote=True)
    rel = f' rel="{html.escape(record["rel"], quote=True)}"' if record["rel"] else ""
    anchor = record["anchor_text"] or ""
    inner = html.escape(anchor, quote=False) if anchor else f'<img src="{LOGO}" alt="">'
    return f'<a href="{href}"{rel}>{inner}</a>'


def _items(records: list[dict], page_url: str) -> str:
    return "<ul>" + "".join(f"<li>{_a(r, page_url)}</li>" for r in records) + "</ul>" if records else ""


def _document(page: Page, links: list[dict]) -> str:
    """The page's HTML: its title, feeds, text and exactly ``links`` as ``<a href>`` elements."""
    blocks = dict(_layout(links))
    head = [f"<title>{html.escape(page.title, quote=False)}</title>"]
    head += [f'<link rel="alternate" type="application/rss+xml" href="{html.escape(f, quote=True)}">'
             for f in page.feeds]
    sentences = []
    for record in blocks["sentences"]:
        before, after = _in_sentence(record) or ("", "")
        sentences.append(f"<p>{html.escape(before, quote=False)}{_a(record, page.url)}"
                         f"{html.escape(after, quote=False)}</p>")
    body = [
        f"<header><nav>{_items(blocks['nav'], page.url)}</nav></header>",
        f"<main><h1>{html.escape(page.title, quote=False)}</h1><p>{html.escape(page.text, quote=False)}</p>",
        *sentences, _items(blocks["listing"], page.url), "</main>",
        f"<aside>{_items(blocks['aside'], page.url)}</aside>",
        f"<footer>{_items(blocks['footer'], page.url)}</footer>",
    ]
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' + "\n".join(head)
            + "\n</head>\n<body>\n" + "\n".join(b for b in body if b) + "\n</body>\n</html>\n")


def _wat_links(links: list[dict], page_url: str) -> list[dict]:
    """``HTML-Metadata.Links`` of the document: values as written in its source."""
    entries: list[dict] = []
    for _, records in _layout(links):
        for record in records:
            entry = {"path": "A@/href", "url": html.escape(_href(record["to_url"], page_url), quote=True)}
            anchor = record["anchor_text"] or ""
            if anchor:
                entry["text"] = html.escape(" ".join(anchor.split())[:WAT_TEXT_CHARS], quote=False)
            else:
                entries.append({"path": "IMG@/src", "url": LOGO, "alt": ""})
            if record["rel"]:
                entry["rel"] = html.escape(record["rel"], quote=True)
            entries.append(entry)
    return entries


def _record_id(*parts: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_ID_SPACE, '|'.join(parts))}>"


def _warc_record(version: str, fields: list[tuple[str, str]], block: bytes) -> bytes:
    """One gzip member holding one WARC record (``Content-Length`` is the block's byte length)."""
    head = f"WARC/{version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + f"Content-Length: {len(block)}\r\n"
    return gzip.compress(head.encode("utf-8") + b"\r\n" + block + b"\r\n\r\n", mtime=0)


def _warcinfo(version: str, name: str, warc_date: str) -> bytes:
    info = f"software: linkgraph-sample\r\nformat: WARC File Format {version}\r\nfilename: {name}\r\n".encode()
    fields = [("WARC-Type", "warcinfo"), ("WARC-Date", warc_date), ("WARC-Filename", name),
              ("WARC-Record-ID", _record_id(name, warc_date)), ("Content-Type", "application/warc-fields")]
    return _warc_record(version, fields, info)


def _http_date(stamp: str) -> str:
    return format_datetime(datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc), usegmt=True)


def _response_headers(stamp: str, body: bytes) -> list[tuple[str, str]]:
    return [("Date", _http_date(stamp)), ("Server", "nginx"), ("Content-Type", _HTML_TYPE),
            ("Content-Length", str(len(body)))]


def _warc_bytes(fetches: list[Fetch], ds: str) -> tuple[bytes, int]:
    """The day's WARC file (warcinfo, then a request and a response per HTML page) and its links."""
    name = FILE_NAMES[WARC]
    out, links = [_warcinfo("1.1", name, f"{ds}T00:00:00Z")], 0
    for fetch in fetches:
        if not fetch.page.is_html:
            continue
        uri = _ascii_url(fetch.page.url)
        body = _document(fetch.page, fetch.links).encode("utf-8")
        parts = urlsplit(uri)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        request = (f"GET {target} HTTP/1.1\r\nHost: {parts.hostname}\r\nUser-Agent: linkgraph-sample-crawler/1.0\r\n"
                   "Accept: text/html\r\n\r\n").encode()
        response_id, request_id = _record_id(ds, uri, "response"), _record_id(ds, uri, "request")
        status = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in _response_headers(fetch.fetched_at, body))
        common = [("WARC-Date", fetch.fetched_at), ("WARC-Target-URI", uri)]
        out.append(_warc_record("1.1", [("WARC-Type", "request"), ("WARC-Record-ID", request_id), *common,
                                        ("WARC-Concurrent-To", response_id),
                                        ("Content-Type", "application/http; msgtype=request")], request))
        out.append(_warc_record("1.1", [("WARC-Type", "response"), ("WARC-Record-ID", response_id), *common,
                                        ("Content-Type", "application/http; msgtype=response")],
                                (status + "\r\n").encode() + body))
        links += len(fetch.links)
    return b"".join(out), links


def _wat_bytes(fetches: list[Fetch], ds: str) -> tuple[bytes, int]:
    """The day's WAT file (warcinfo, then a metadata record per HTML page) and its links."""
    name = FILE_NAMES[WAT]
    out, links = [_warcinfo("1.0", name, f"{ds}T00:00:00Z")], 0
    for fetch in fetches:
        page = fetch.page
        if not page.is_html:
            continue
        uri = _ascii_url(page.url)
        body = _document(page, fetch.links).encode("utf-8")
        response_id = _record_id(ds, uri, "response")
        head = {"Title": html.escape(page.title, quote=False),
                "Link": [{"path": "LINK@/href", "url": html.escape(f, quote=True), "rel": "alternate",
                          "type": "application/rss+xml"} for f in page.feeds]}
        envelope = {
            "Format": "WARC",
            "WARC-Header-Metadata": {"WARC-Type": "response", "WARC-Date": fetch.fetched_at,
                                     "WARC-Record-ID": response_id, "WARC-Target-URI": uri,
                                     "Content-Type": "application/http; msgtype=response"},
            "Payload-Metadata": {
                "Actual-Content-Type": "application/http; msgtype=response",
                "HTTP-Response-Metadata": {
                    "Response-Message": {"Version": "HTTP/1.1", "Status": "200", "Reason": "OK"},
                    "Headers": dict(_response_headers(fetch.fetched_at, body)),
                    "Entity-Length": str(len(body)),
                    "HTML-Metadata": {"Head": head, "Links": _wat_links(fetch.links, page.url)},
                },
            },
        }
        block = json.dumps({"Envelope": envelope}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        out.append(_warc_record("1.0", [("WARC-Type", "metadata"), ("WARC-Target-URI", uri),
                                        ("WARC-Date", fetch.fetched_at),
                                        ("WARC-Record-ID", _record_id(ds, uri, "metadata")),
                                        ("WARC-Refers-To", response_id), ("Content-Type", "application/json")], block))
        links += len(fetch.links)
    return b"".join(out), links


# --- writing -----------------------------------------------------------------------------------


def _write_edges(directory: Path, fmt: str, fetches: list[Fetch], ds: str) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    if fmt == JSONL:
        return write_jsonl((r for f in fetches for r in f.extras), directory / FILE_NAMES[JSONL])
    data, links = (_warc_bytes if fmt == WARC else _wat_bytes)(fetches, ds)
    (directory / FILE_NAMES[fmt]).write_bytes(data)
    return links


def _signal(fetch: Fetch) -> dict:
    page = fetch.page
    return {"url": page.url, "title": page.title, "text": page.text, "feed_links": list(page.feeds),
            "fetched_at": fetch.fetched_at}


def write_crawl_days(root: str | Path, days: int = DAYS, first_ds: str = FIRST_DS, seed: int = 7) -> list[CrawlDay]:
    """Write ``days`` days of crawl batches of the sample crawl for ``seed`` under ``root`` (module
    docstring: layout and how the crawl unfolds), ``first_ds`` being day 1; returns the days, as
    ``days.json`` lists them.  The same arguments give the same bytes, and day i's files are the
    same for every ``days >= i``."""
    if days < 1:
        raise ValueError(f"days must be at least 1, not {days}")
    root = Path(root)
    start = date.fromisoformat(first_ds)
    dates = [start + timedelta(days=i) for i in range(days)]
    crawl = generate_sample_crawl(seed)
    plan = Plan(crawl, seed, max(days, DAYS))
    sitemaps_by_host: dict[str, list[dict]] = {}
    for row in crawl.sitemaps:
        sitemaps_by_host.setdefault(url_host(row["url"]), []).append(row)
    seen_hosts: set[str] = set()
    out: list[CrawlDay] = []
    for index, when in enumerate(dates, start=1):
        ds, fmt = when.isoformat(), day_format(index)
        fetches = [] if fmt is None or index == EMPTY_DAY else fetches_of(plan, index, dates)
        links = [r for f in fetches for r in f.links]
        hosts = record_hosts(plan, fetches, links) if links or fetches else set()
        new_hosts = tuple(sorted(hosts - seen_hosts))
        seen_hosts |= hosts
        records = signals = entries = 0
        if fmt is not None:
            records = _write_edges(root / "edges" / ds, fmt, fetches, ds)
            signals_dir = root / "signals" / ds
            signals_dir.mkdir(parents=True, exist_ok=True)
            signals = write_jsonl((_signal(f) for f in fetches), signals_dir / SIGNALS_FILE)
            joining = [row for host, day in HOST_DAYS.items() if day == index for row in sitemaps_by_host.get(host, [])]
            if joining:
                write_sitemaps_xml(joining, root / "sitemaps" / ds)
                entries = len(joining)
        out.append(CrawlDay(
            index=index, ds=ds, fmt=fmt, records=records, new_hosts=new_hosts,
            link_farm_hosts=tuple(HOSTS["FARM"]) if index == LINK_FARM_DAY else (),
            mirror_hosts=MIRROR_HOSTS if index == MIRROR_DAY else (),
            empty=fmt is not None and records == 0, absent=fmt is None, signals=signals, sitemaps=entries,
        ))
    manifest = {"seed": seed, "first_ds": first_ds, "days": [asdict(day) for day in out]}
    (root / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return out
