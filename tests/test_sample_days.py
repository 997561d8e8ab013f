"""The sample crawl as daily batches (linkgraph.sample.days, on linkgraph.sample.schedule): same
bytes on every call, the feature days (link farm on 5, mirror network on 9, WARC/WAT days, empty 8,
absent 11), a growing crawl, and WARC/WAT days that the crawl readers turn into the day's links
without a reject."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from linkgraph import urls
from linkgraph.inputs.crawl.extract import EDGE, PAGE, REJECTED, ExtractSettings, warc_rows, wat_rows
from linkgraph.inputs.crawl.warc import read_records
from linkgraph.sample import FARM, HOSTS, generate_sample_crawl
from linkgraph.sample.days import DAY_FORMATS, FILE_NAMES, MANIFEST, CrawlDay, write_crawl_days
from linkgraph.sample.schedule import ABSENT_DAY, EMPTY_DAY, HOST_DAYS, LINK_FARM_DAY, MIRROR_DAY, MIRROR_HOSTS

pytestmark = pytest.mark.unit

SYNDICATION_MIN_LINKS = 20      # analysis defaults (linkgraph.lake.config_analysis.AnalysisConfig)
LINK_FARM_SHARE = 0.9
SETTINGS = ExtractSettings()


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory) -> tuple[Path, list[CrawlDay]]:
    root = tmp_path_factory.mktemp("days")
    return root, write_crawl_days(root)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _rows(path: Path, fmt: str) -> list[dict]:
    records = read_records(lambda: open(path, "rb"), SETTINGS.payload_limit(fmt))
    return list((wat_rows if fmt == "wat" else warc_rows)(records, path.name, SETTINGS))


def _edges(root: Path, day: CrawlDay) -> list[dict]:
    """The day's edge records as ingest gets them (WARC/WAT: extracted by the crawl readers)."""
    if day.absent:
        return []
    path = root / "edges" / day.ds / FILE_NAMES[day.fmt]
    if day.fmt == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [row for row in _rows(path, day.fmt) if row["row_kind"] == EDGE]


def _pair(edge: dict) -> tuple[str, str] | None:
    source, target = urls.canonicalize(edge["from_url"]), urls.canonicalize(edge["to_url"])
    if source.reason or target.reason or source.url == target.url:
        return None
    return source.url, target.url


def _hosts(edges: list[dict]) -> set[str]:
    found = set()
    for edge in edges:
        for url in (edge["from_url"], edge["to_url"]):
            host = urls.canonicalize(url).host
            if host:
                found.add(host)
    return found


def _ascii(hosts) -> set[str]:
    return {urls.canonicalize(f"https://{h}/").host for h in hosts}


def test_same_bytes_on_every_call(rehearsal, tmp_path):
    root, days = rehearsal
    assert write_crawl_days(tmp_path) == days
    assert _files(tmp_path) == _files(root)
    manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    assert [CrawlDay(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})
            for d in manifest["days"]] == days


def test_fewer_days_are_the_first_days(rehearsal, tmp_path):
    root, days = rehearsal
    short = write_crawl_days(tmp_path, days=3)
    assert short == days[:3] and short[2].fmt == "warc"
    full = {name: data for name, data in _files(root).items()
            if any(f"/{d.ds}/" in f"/{name}" for d in days[:3])}
    assert {k: v for k, v in _files(tmp_path).items() if k != MANIFEST} == full


def test_formats_empty_and_absent_days(rehearsal):
    root, days = rehearsal
    assert [d.index for d in days] == list(range(1, 15))
    assert [d.ds for d in days[:2]] == ["2026-11-16", "2026-11-17"] and days[-1].ds == "2026-11-29"
    assert tuple(d.fmt for d in days) == DAY_FORMATS
    assert {d.index for d in days if d.fmt == "warc"} == {3, 10} and {d.index for d in days if d.fmt == "wat"} == {6, 12}
    for day in days:
        folder = root / "edges" / day.ds
        if day.index == ABSENT_DAY:
            assert day.absent and day.fmt is None and not folder.exists() and not day.empty
            assert not (root / "signals" / day.ds).exists() and not (root / "sitemaps" / day.ds).exists()
        elif day.index == EMPTY_DAY:
            assert day.empty and (folder / "part-0.jsonl").read_bytes() == b"" and day.records == 0
        else:
            assert not day.absent and not day.empty and day.records > 0 and day.signals > 0
            assert sorted(p.name for p in folder.iterdir()) == [FILE_NAMES[day.fmt]]
    assert sum(d.sitemaps for d in days) > 0


def test_the_crawl_grows_recrawls_and_loses_links(rehearsal):
    root, days = rehearsal
    crawled: set[str] = set()
    grew = []
    links_of: dict[tuple[int, str], set[str]] = defaultdict(set)
    fetched_on: dict[str, list[int]] = defaultdict(list)
    seen: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for day in days:
        if day.absent:
            continue
        signals = [json.loads(line) for line in
                   (root / "signals" / day.ds / "signals.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(signals) == day.signals
        assert all(set(s) == {"url", "title", "text", "feed_links", "fetched_at"} for s in signals)
        assert all(s["fetched_at"].startswith(day.ds) for s in signals)
        urls_today = {urls.canonicalize(s["url"]).url for s in signals}
        grew.append(len(urls_today - crawled))
        crawled |= urls_today
        for url in urls_today:
            fetched_on[url].append(day.index)
        for edge in _edges(root, day):
            pair = _pair(edge)
            if pair:
                links_of[(day.index, pair[0])].add(pair[1])
                seen[pair].append((edge["discovered_at"], edge["last_seen_at"]))
                assert edge["discovered_at"] <= edge["last_seen_at"]
    sample_pages = {urls.canonicalize(p["url"]).url for p in generate_sample_crawl(7).pages}
    assert sample_pages <= crawled                                     # every sample page, by day 14
    assert grew[0] < len(sample_pages) / 3 and sum(1 for g in grew[1:] if g) >= 8
    recrawled = [times for times in seen.values() if len({last for _, last in times}) > 1]
    assert len(recrawled) > 500
    assert all(len({first for first, _ in times}) == 1 for times in recrawled
               if all(len(first) == 20 for first, _ in times))        # JSON lines days keep discovered_at
    lost = [(url, target) for (day, url), targets in links_of.items() for target in targets
            if any(later > day and target not in links_of[(later, url)] for later in fetched_on[url])]
    assert len(lost) > 30


def test_new_hosts_join_on_their_days(rehearsal):
    root, days = rehearsal
    assert set(HOST_DAYS) >= {p["url"].split("/")[2] for p in generate_sample_crawl(7).pages}
    before: set[str] = set()
    for day in days:
        hosts = _hosts(_edges(root, day))
        assert _ascii(day.new_hosts) == hosts - before
        assert _ascii(day.new_hosts) == _ascii(h for h, d in HOST_DAYS.items() if d == day.index)
        before |= hosts
    assert sum(1 for d in days[1:] if d.new_hosts) >= 2


def test_link_farm_appears_on_day_5(rehearsal):
    root, days = rehearsal
    farm = _ascii(FARM)
    for day in days:
        hosts = _hosts(_edges(root, day))
        if day.index < LINK_FARM_DAY:
            assert not hosts & farm
        assert day.link_farm_hosts == (tuple(FARM) if day.index == LINK_FARM_DAY else ())
    assert set(days[LINK_FARM_DAY - 1].new_hosts) >= set(FARM)


def _domain(url: str) -> str:
    return urls.canonicalize(url).registered_domain


def test_mirror_network_is_a_syndication_network(rehearsal):
    root, days = rehearsal
    mirror = days[MIRROR_DAY - 1]
    assert mirror.mirror_hosts == MIRROR_HOSTS and len(MIRROR_HOSTS) >= 3
    assert set(mirror.new_hosts) == set(MIRROR_HOSTS) and all(not d.mirror_hosts for d in days if d is not mirror)
    links: set[tuple[str, str]] = set()
    for day in days[:MIRROR_DAY]:
        links |= {pair for pair in map(_pair, _edges(root, day)) if pair}
    between = Counter((_domain(a), _domain(b)) for a, b in links if _domain(a) != _domain(b))
    domains = sorted({_domain(f"https://{h}/") for h in MIRROR_HOSTS})
    assert all(between[(a, b)] >= SYNDICATION_MIN_LINKS for a in domains for b in domains if a != b)
    for domain in domains:                                               # not link farms
        out = {b: n for (a, b), n in between.items() if a == domain}
        assert max(out.values()) / sum(out.values()) <= LINK_FARM_SHARE
    source = _domain(f"https://{HOSTS['BOARD']}/")
    paths = {urls.canonicalize(b).url.split("/", 3)[3] for a, b in links if _domain(a) == domains[0]
             and _domain(b) == domains[0]}
    board = {b.split("/", 3)[3] for a, b in links if _domain(a) == source and _domain(b) == source}
    assert len(paths & board) >= SYNDICATION_MIN_LINKS                   # the same paths


@pytest.mark.parametrize("index", [3, 6, 10, 12])
def test_warc_and_wat_days_read_as_the_days_links(rehearsal, index):
    root, days = rehearsal
    day = days[index - 1]
    rows = _rows(root / "edges" / day.ds / FILE_NAMES[day.fmt], day.fmt)
    kinds = Counter(row["row_kind"] for row in rows)
    assert kinds[REJECTED] == 0 and kinds[EDGE] == day.records > 0
    signals = (root / "signals" / day.ds / "signals.jsonl").read_text(encoding="utf-8").splitlines()
    html_pages = {urls.canonicalize(json.loads(line)["url"]).url for line in signals} - {None}
    html_pages = {url for url in html_pages if not url.endswith(".pdf")}
    assert {row["url"] for row in rows if row["row_kind"] == PAGE} == html_pages and kinds[PAGE] == len(html_pages)
    edges = [row for row in rows if row["row_kind"] == EDGE]
    pairs = [_pair(edge) for edge in edges]
    assert None not in pairs and len(set(pairs)) == len(pairs)        # valid links, none twice on a page
    assert all(edge["discovered_at"].startswith(day.ds) for edge in edges)
    if day.fmt == "warc":
        assert {edge["position"] for edge in edges} == {"NAV", "CONTENT", "SIDEBAR", "FOOTER"}
    # the links the JSON lines days give the same pages: same anchors and rels
    elsewhere: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    for other in days:
        if other.fmt == "jsonl":
            for edge in _edges(root, other):
                pair = _pair(edge)
                if pair and len(edge["anchor_text"] or "") <= 1000:
                    elsewhere[pair] = (" ".join((edge["anchor_text"] or "").split()) or None, edge["rel"])
    known = [(pair, edge) for pair, edge in zip(pairs, edges, strict=True) if pair in elsewhere]
    assert len(known) > len(edges) / 2
    for pair, edge in known:
        anchor, rel = elsewhere[pair]
        assert edge["rel"] == rel
        assert (anchor or "").startswith(edge["anchor_text"] or "")
        assert edge["anchor_text"] == anchor or (day.fmt == "wat" and len(edge["anchor_text"]) == 100)
