"""The sample crawl as files: JSON Lines of edges, page signals and sitemap entries, sitemaps.org
XML, and ``write_sample_input`` (what ``linkgraph run`` without ``--input`` reads)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

from linkgraph.sample.generator import generate_sample_crawl

_XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>'
_SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def write_jsonl(rows: Iterable[dict], path: str | os.PathLike) -> int:
    """Write one JSON object per line (UTF-8, unicode kept as is); returns the number of lines."""
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_edges_jsonl(edges: Iterable[dict], path: str | os.PathLike) -> int:
    """Edge records as JSON Lines (the crawler's input format); returns the count."""
    return write_jsonl(edges, path)


def write_pages_jsonl(pages: Iterable[dict], path: str | os.PathLike) -> int:
    """Page signals as JSON Lines; returns the count."""
    return write_jsonl(pages, path)


def write_sitemaps_jsonl(sitemaps: Iterable[dict], path: str | os.PathLike) -> int:
    """Sitemap entries as JSON Lines; returns the count."""
    return write_jsonl(sitemaps, path)


def _urlset(rows: list[dict]) -> bytes:
    """One sitemap's XML; an entry's absent priority/lastmod/changefreq stays absent."""
    lines = [_XML_HEAD, f'<urlset xmlns="{_SITEMAP_NS}">']
    for row in rows:
        fields = [f"<loc>{escape(row['url'])}</loc>"]
        fields += [f"<{key}>{escape(str(row[key]))}</{key}>" for key in ("lastmod", "changefreq", "priority")
                   if row.get(key) is not None]
        lines.append(f"  <url>{''.join(fields)}</url>")
    lines.append("</urlset>\n")
    return "\n".join(lines).encode("utf-8")


def write_sitemaps_xml(sitemaps: Iterable[dict], directory: str | os.PathLike,
                       base_url: str = "https://sitemaps.example/") -> list[str]:
    """Sitemap entries as sitemaps.org XML: one file per host (every second one gzipped) and a
    ``sitemap-index.xml`` listing them; an entry's absent priority/lastmod/changefreq stays
    absent.  Returns the file names written, index last."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    by_host: dict[str, list[dict]] = {}
    for row in sitemaps:
        by_host.setdefault(row["url"].split("/")[2], []).append(row)
    names = []
    for i, (host, rows) in enumerate(sorted(by_host.items())):
        data = _urlset(rows)
        name = f"sitemap-{host.encode('idna').decode('ascii')}.xml" + (".gz" if i % 2 else "")
        (directory / name).write_bytes(gzip.compress(data, mtime=0) if i % 2 else data)
        names.append(name)
    index = [_XML_HEAD, f'<sitemapindex xmlns="{_SITEMAP_NS}">']
    index += [f"  <sitemap><loc>{escape(base_url + name)}</loc></sitemap>" for name in names]
    (directory / "sitemap-index.xml").write_text("\n".join(index + ["</sitemapindex>\n"]), encoding="utf-8")
    return names + ["sitemap-index.xml"]


def write_sample_input(directory: str | Path, seed: int = 7) -> Path:
    """Write the built-in sample crawl under ``directory``: edge records as JSON lines (the path
    returned), page signals as ``sample-pages.jsonl`` and its sitemaps as XML in ``sitemaps/``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    crawl = generate_sample_crawl(seed)
    path = directory / "sample-edges.jsonl"
    write_edges_jsonl(crawl.edges, path)
    write_pages_jsonl(crawl.pages, directory / "sample-pages.jsonl")
    write_sitemaps_xml(crawl.sitemaps, directory / "sitemaps")
    return path
