"""The built-in sample crawl (linkgraph.sample): deterministic, realistic, with known bad records.

Pure Python: no Spark.  The small canonicaliser and reject classifier below are independent of the
project's own, so that the sample is checked against what any reasonable validator would do.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from fnmatch import fnmatch
from functools import cache
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkgraph.sample import (
    EDGE_KEYS,
    FARM,
    OVERSIZED_ANCHOR_CHARS,
    POSITIONS,
    REJECT_REASONS,
    SAMPLE_SEEDS,
    SITES,
    SampleCrawl,
    generate_sample_crawl,
    write_edges_jsonl,
    write_jsonl,
    write_pages_jsonl,
    write_sitemaps_jsonl,
)
from linkgraph.sample.data import DATA_FILES, load

ISO_Z = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
DEFAULT_PORTS = {"http": 80, "https": 443}
JOB_KEYWORDS = ("job", "jobs", "career", "hr", "hrms", "taleo", "jobvite", "icims")
JOB_HOSTS = (
    "careers.acme-corp.com",
    "jobs.example-board.com",
    "acme.taleo.net",
    "jobs.jobvite.com",
    "jobs.northern-gazette.co.uk",
    "münchen-jobs.de",
)
UNRELATED_HOSTS = ("gardening-notes.blogspot.com", "www.northern-gazette.co.uk")


@pytest.fixture(scope="module")
def crawl() -> SampleCrawl:
    return generate_sample_crawl(7)


def _remove_dot_segments(path: str) -> str:
    segments = path.split("/")[1:]
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "..":
            if out:
                out.pop()
        if segment in (".", ".."):
            if last:
                out.append("")
            continue
        out.append(segment)
    return "/" + "/".join(out)


@cache
def _valid_host(host: str) -> bool:
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    return all(HOST_LABEL.fullmatch(label) for label in ascii_host.split("."))


@cache
def canonical(url: str) -> str:
    """scheme://host[:port]/path[?query]: lower-case host, no default port, no fragment, no dot
    segments, "/" for an empty path; unicode host kept.  ValueError when it is not a valid URL."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in DEFAULT_PORTS or not _valid_host(host):
        raise ValueError(url)
    port = "" if parts.port in (None, DEFAULT_PORTS[parts.scheme]) else f":{parts.port}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{host}{port}{_remove_dot_segments(parts.path or '/')}{query}"


def reject_reason(edge: dict, seen: set[str]) -> str | None:
    """The reason a validator should reject ``edge`` with, or None for a good record."""
    to_url = edge["to_url"]
    if to_url is None or not to_url.strip():
        return "NULL_FIELD"
    scheme = to_url.split(":", 1)[0].lower() if ":" in to_url else ""
    if scheme not in DEFAULT_PORTS:
        return "UNSUPPORTED_SCHEME"
    try:
        target = canonical(to_url)
    except ValueError:
        return "MALFORMED_URL"
    if target == canonical(edge["from_url"]):
        return "SELF_LINK"
    if len(edge["anchor_text"] or "") > OVERSIZED_ANCHOR_CHARS:
        return "OVERSIZED_FIELD"
    key = json.dumps(edge, sort_keys=True, ensure_ascii=False)
    if key in seen:
        return "DUPLICATE_MERGED"
    seen.add(key)
    return None


def classify(crawl: SampleCrawl) -> tuple[Counter, list[dict]]:
    seen: set[str] = set()
    reasons: Counter = Counter()
    good = []
    for edge in crawl.edges:
        reason = reject_reason(edge, seen)
        if reason:
            reasons[reason] += 1
        else:
            good.append(edge)
    return reasons, good


def host(url: str) -> str:
    return urlsplit(url).hostname or ""


# --- determinism -----------------------------------------------------------------------------


def test_same_seed_gives_byte_identical_output(tmp_path):
    first, second = generate_sample_crawl(7), generate_sample_crawl(7)
    assert first == second
    for name, rows_a, rows_b in (
        ("edges", first.edges, second.edges),
        ("pages", first.pages, second.pages),
        ("sitemaps", first.sitemaps, second.sitemaps),
    ):
        a, b = tmp_path / f"{name}-a.jsonl", tmp_path / f"{name}-b.jsonl"
        write_jsonl(rows_a, a)
        write_jsonl(rows_b, b)
        assert a.read_bytes() == b.read_bytes()


def test_default_seed_is_7():
    assert generate_sample_crawl() == generate_sample_crawl(7)


def test_different_seeds_give_different_output():
    a, b = generate_sample_crawl(7), generate_sample_crawl(8)
    assert a.edges != b.edges
    assert a.pages != b.pages
    assert a.sitemaps != b.sitemaps


# --- shape and size --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 7, 1234])
def test_size_bounds(seed):
    crawl = generate_sample_crawl(seed)
    assert 2000 <= len(crawl.edges) <= 4000
    assert 150 <= len(crawl.pages) <= 400
    hosts = {host(p["url"]) for p in crawl.pages}
    assert 12 <= len(hosts) <= 15
    for h in hosts:
        assert 10 <= sum(host(p["url"]) == h for p in crawl.pages) <= 60, h


def test_every_edge_has_exactly_the_eight_keys(crawl):
    for edge in crawl.edges:
        assert tuple(edge) == EDGE_KEYS


def test_field_types_and_values(crawl):
    for edge in crawl.edges:
        assert edge["position"] in POSITIONS
        assert edge["rel"] is None or isinstance(edge["rel"], str)
        assert isinstance(edge["from_url"], str)
        assert edge["to_url"] is None or isinstance(edge["to_url"], str)
        assert isinstance(edge["anchor_text"], str)
        assert edge["context_window"] is None or isinstance(edge["context_window"], str)
    assert {e["position"] for e in crawl.edges} == set(POSITIONS)


def test_timestamps_are_utc_iso_and_ordered(crawl):
    for edge in crawl.edges:
        assert ISO_Z.fullmatch(edge["discovered_at"])
        assert ISO_Z.fullmatch(edge["last_seen_at"])
        assert "2026-01-01T00:00:00Z" <= edge["discovered_at"] <= edge["last_seen_at"]
    # most links share their page's fetch times, but not all pages were fetched only once
    assert any(e["discovered_at"] < e["last_seen_at"] for e in crawl.edges)
    assert any(e["discovered_at"] == e["last_seen_at"] for e in crawl.edges)


def test_context_windows_contain_their_anchors(crawl):
    for edge in crawl.edges:
        anchor, context = edge["anchor_text"], edge["context_window"]
        if anchor and len(anchor) <= OVERSIZED_ANCHOR_CHARS:
            assert anchor in context
            assert len(context) <= len(anchor) + 100
    assert any(e["anchor_text"] == "" for e in crawl.edges)  # image (logo) links


def test_from_urls_are_crawled_pages(crawl):
    page_urls = {p["url"] for p in crawl.pages}
    assert {e["from_url"] for e in crawl.edges} <= page_urls
    assert len(page_urls) == len(crawl.pages)


# --- bad records -----------------------------------------------------------------------------


def test_each_kind_of_bad_record_is_present_and_counted(crawl):
    reasons, _ = classify(crawl)
    assert set(crawl.expected_rejects) == set(REJECT_REASONS)
    assert dict(reasons) == crawl.expected_rejects
    assert all(reasons[r] >= 1 for r in REJECT_REASONS)
    assert 0.008 <= sum(reasons.values()) / len(crawl.edges) <= 0.025


def test_specific_bad_records(crawl):
    to_urls = [e["to_url"] for e in crawl.edges]
    assert any(u and u.startswith("mailto:") for u in to_urls)
    assert any(u and u.startswith("javascript:") for u in to_urls)
    assert "http://exa mple.com/" in to_urls
    assert "http:///nohost" in to_urls
    assert "" in to_urls and None in to_urls
    assert any(e["to_url"] == e["from_url"] for e in crawl.edges)
    assert any(len(e["anchor_text"]) > 2000 for e in crawl.edges)
    keys = Counter(json.dumps(e, sort_keys=True) for e in crawl.edges)
    assert 1 <= sum(n - 1 for n in keys.values()) == crawl.expected_rejects["DUPLICATE_MERGED"]


def test_good_records_canonicalise_to_crawled_pages_without_collisions(crawl):
    _, good = classify(crawl)
    page_urls = {p["url"] for p in crawl.pages}
    pairs = Counter((canonical(e["from_url"]), canonical(e["to_url"])) for e in good)
    assert {to for _, to in pairs} <= page_urls
    assert max(pairs.values()) == 1  # no other duplicates once canonicalised


def test_raw_urls_are_messy(crawl):
    _, good = classify(crawl)
    raw = [e["to_url"] for e in good]
    assert any(host(u) != urlsplit(u).netloc.split(":")[0] for u in raw)  # mixed-case host
    assert any(":80/" in u or u.endswith(":80") for u in raw)
    assert any(":443" in u for u in raw)
    assert any("#" in u for u in raw)
    assert any("/./" in u for u in raw)
    assert any("/../" in u for u in raw)
    assert any(urlsplit(u).path == "" for u in raw)  # home page without its trailing slash
    assert any(urlsplit(u).path == "/" for u in raw)
    assert any("?" in u for u in raw)
    assert any(not u.isascii() for u in raw)  # IDN host in unicode


# --- realism ---------------------------------------------------------------------------------


def test_rel_values(crawl):
    rels = Counter(e["rel"] for e in crawl.edges)
    assert {"nofollow", "ugc", "sponsored", "nofollow ugc"} <= set(rels)
    assert rels[None] > len(crawl.edges) / 2
    for edge in crawl.edges:
        if edge["rel"] and "ugc" in edge["rel"]:
            assert "blogspot.com" in edge["from_url"] or "blog." in edge["from_url"]
        if edge["rel"] == "sponsored":
            assert edge["position"] == "SIDEBAR"


def test_host_variety(crawl):
    hosts = {host(p["url"]) for p in crawl.pages}
    assert sum(h.endswith(".blogspot.com") for h in hosts) >= 2
    assert any(h.endswith(".co.uk") for h in hosts)
    assert any(not h.isascii() for h in hosts)
    assert {"www.acme-corp.com", "careers.acme-corp.com", "blog.acme-corp.com"} <= hosts
    assert any(h.endswith("taleo.net") for h in hosts) and any(h.endswith("jobvite.com") for h in hosts)


def test_link_farm_links_heavily_to_itself(crawl):
    farm = set(FARM)
    from_farm = [e for e in crawl.edges if host(e["from_url"]) in farm]
    between = [
        e for e in from_farm
        if e["to_url"] and host(e["to_url"]) in farm and host(e["to_url"]) != host(e["from_url"])
    ]
    assert len(between) >= 100
    farm_pages = sum(host(p["url"]) in farm for p in crawl.pages)
    assert len(between) / farm_pages >= 3


def test_page_signals(crawl):
    for page in crawl.pages:
        assert set(page) == {"url", "title", "text", "feed_links"}
        assert page["title"] and page["text"]
        assert 1 <= len(re.findall(r"[.!?](?:\s|$)", page["text"])) <= 3
    text_by_host: dict[str, str] = {}
    for page in crawl.pages:
        text_by_host[host(page["url"])] = text_by_host.get(host(page["url"]), "") + " " + page["text"].lower()
    for h in JOB_HOSTS:
        assert any(re.search(rf"\b{k}\b", text_by_host[h]) for k in JOB_KEYWORDS), h
    all_job_text = " ".join(text_by_host[h] for h in JOB_HOSTS)
    assert all(re.search(rf"\b{k}\b", all_job_text) for k in JOB_KEYWORDS)
    for h in UNRELATED_HOSTS:
        assert not re.search(r"\b(hrms|taleo|jobvite|icims)\b", text_by_host[h]), h


def test_feeds_on_some_pages(crawl):
    with_feeds = [p for p in crawl.pages if p["feed_links"]]
    assert 3 <= len(with_feeds) < len(crawl.pages) / 10
    feeds = {f for p in with_feeds for f in p["feed_links"]}
    assert "https://careers.acme-corp.com/jobs.xml" in feeds
    assert all(f.endswith(".xml") for f in feeds)


def test_sitemaps(crawl):
    priorities = [s["priority"] for s in crawl.sitemaps]
    assert all(p is None or (isinstance(p, float) and 0.0 <= p <= 1.0) for p in priorities)
    assert None in priorities and any(p is not None for p in priorities)
    for entry in crawl.sitemaps:
        assert set(entry) == {"url", "priority", "lastmod", "changefreq"}
        assert entry["lastmod"] is None or ISO_DATE.fullmatch(entry["lastmod"])
        assert entry["changefreq"] in (None, "always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
    page_urls = {p["url"] for p in crawl.pages}
    sitemap_urls = {s["url"] for s in crawl.sitemaps}
    assert len(sitemap_urls) == len(crawl.sitemaps)
    assert sitemap_urls - page_urls  # expired postings, never crawled
    assert not {host(u) for u in sitemap_urls} & {"acme.taleo.net", "jobs.jobvite.com"}


# --- writers ---------------------------------------------------------------------------------


def test_writers_round_trip(crawl, tmp_path):
    for writer, rows in (
        (write_edges_jsonl, crawl.edges),
        (write_pages_jsonl, crawl.pages),
        (write_sitemaps_jsonl, crawl.sitemaps),
    ):
        path = tmp_path / f"{writer.__name__}.jsonl"
        assert writer(rows, path) == len(rows)
        lines = path.read_text(encoding="utf-8").splitlines()
        assert [json.loads(line) for line in lines] == rows
    assert "münchen-jobs.de" in (tmp_path / "write_edges_jsonl.jsonl").read_text(encoding="utf-8")


# --- any seed --------------------------------------------------------------------------------


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_invariants_hold_for_any_seed(seed):
    crawl = generate_sample_crawl(seed)
    reasons, good = classify(crawl)
    assert dict(reasons) == crawl.expected_rejects
    page_urls = {p["url"] for p in crawl.pages}
    pairs = Counter((canonical(e["from_url"]), canonical(e["to_url"])) for e in good)
    assert {to for _, to in pairs} <= page_urls and max(pairs.values()) == 1
    for edge in crawl.edges:
        assert tuple(edge) == EDGE_KEYS and edge["discovered_at"] <= edge["last_seen_at"]
        anchor = edge["anchor_text"]
        if anchor and len(anchor) <= OVERSIZED_ANCHOR_CHARS:
            assert anchor in edge["context_window"]


def test_project_canonicaliser_agrees(crawl):
    """``linkgraph.urls.canonicalize`` gives the expected reasons and maps good records to pages."""
    urls = pytest.importorskip("linkgraph.urls")
    pages = {urls.canonicalize(p["url"]).url for p in crawl.pages}
    assert None not in pages and len(pages) == len(crawl.pages)
    reasons: Counter = Counter()
    pairs: Counter = Counter()
    for edge in crawl.edges:
        src, dst = urls.canonicalize(edge["from_url"]), urls.canonicalize(edge["to_url"])
        assert src.url is not None
        if dst.reason:
            reasons[dst.reason] += 1
        elif src.url == dst.url:
            reasons["SELF_LINK"] += 1
        elif len(edge["anchor_text"]) > OVERSIZED_ANCHOR_CHARS:
            reasons["OVERSIZED_FIELD"] += 1
        else:
            assert dst.url in pages
            pairs[(src.url, dst.url)] += 1
    reasons["DUPLICATE_MERGED"] = sum(n - 1 for n in pairs.values())
    assert dict(reasons) == crawl.expected_rejects
    domains = {urls.canonicalize(p["url"]).registered_domain for p in crawl.pages}
    assert {"hr-insights.blogspot.com", "gardening-notes.blogspot.com", "northern-gazette.co.uk"} <= domains
    assert 8 <= len(domains) <= 12


# --- the data files --------------------------------------------------------------------------


def test_the_data_files_load():
    web, words = (load(name) for name in DATA_FILES)
    assert set(web) >= {"hosts", "seeds", "site_defaults", "sites", "comment_hosts", "comment_rels"}
    assert set(words) >= {"job_pools", "vocabularies", "texts", "sentences", "bad_records"}
    assert len(SITES) == len(web["sites"]) == 14
    assert len({site.host for site in SITES}) == 14
    assert FARM == tuple(web["hosts"]["FARM"]) and SAMPLE_SEEDS == tuple(web["seeds"])
    acme = SITES[0]
    assert (acme.host, acme.logo, acme.scheme, acme.external, acme.rels) == ("www.acme-corp.com", True, "https", (0, 2), ((None, 1.0),))
    assert acme.sections[0].count == (4, 6) and acme.footer == SITES[1].footer  # a YAML alias, shared
    assert all(isinstance(weight, float) for site in SITES for _, weight in site.outlinks + site.rels)


def _hosts_named(web: dict, words: dict) -> set[str]:
    named = {words["bad_records"]["tel"]["host"], *(host for host, _ in web["comment_hosts"])}
    for site in SITES:
        named |= {menu.host for menu in site.nav + site.footer if menu.host}
        named |= {host for host, _ in site.outlinks} | set(site.ad_hosts) | set(site.partners)
    return named


def test_every_name_the_data_files_use_is_defined():
    web, words = (load(name) for name in DATA_FILES)
    hosts = {site.host for site in SITES}
    host_values = [value for value in web["hosts"].values() if isinstance(value, str)]
    assert _hosts_named(web, words) <= hosts and set(host_values + list(FARM)) == hosts
    topics = {site.topic for site in SITES}
    assert topics <= set(words["texts"]) and set(words["apply_anchors"]) <= topics
    vocabs = {section.vocab for site in SITES for section in site.sections}
    assert vocabs <= set(words["vocabularies"]) | set(words["job_pools"])
    assert {site.sitemap for site in SITES} == {"full", "blogger", "spam", None}
    assert set(web["sitemap_entries"]) == {"home", "section", "static", "item", "expired"}
    assert {"see_also", "external", "apply", "de", "farm", "comment", "spam_comment"} <= set(words["sentences"])
    templates = [words["layout"]["ad"], *(value["template"] for value in words["bad_records"].values()
                                          if isinstance(value, dict) and "template" in value)]
    assert all("{a}" in template for template in templates + [t for ts in words["sentences"].values() for t in ts])


def test_the_data_files_ship_with_the_package():
    """Every data file of the package is one ``data`` loads and one the wheel's package-data takes."""
    shipped = sorted(f.name for f in resources.files("linkgraph.sample").iterdir() if not f.name.endswith((".py", ".pyc"))
                     and f.is_file())
    assert shipped == sorted(DATA_FILES)
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["linkgraph"]
    assert all(any(fnmatch(f"sample/{name}", pattern) for pattern in patterns) for name in DATA_FILES)
