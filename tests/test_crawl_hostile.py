"""Hostile crawl inputs: HTML built to defeat the parse-cost guard, plain WARC records with a lying
Content-Length, over-long WAT records.  Every case is a file built here; each asserts the reject
reason, that the good records around it keep their links, and bounded time (and memory, in a
child process capped by ``test_bad_input.run_bounded``).
"""

from __future__ import annotations

import gzip
import io
import random
import time

import pytest
from selectolax.lexbor import LexborHTMLParser

from conftest import shared_file
from linkgraph.inputs.crawl.extract import ExtractSettings, warc_rows, wat_rows
from linkgraph.inputs.crawl.htmlguard import ParseBudget, estimate, html_cost_problem
from linkgraph.inputs.crawl.warc import ReadProblem, WarcRecord, read_records
from linkgraph.lake import schemas as S
from linkgraph.lake.config import ConfigError, config_from_dict
from test_bad_input import run_bounded
from test_crawl import CC_EXCERPT, http_response, warc_record, wat_json

R = S.Reason
UNBOUNDED = ParseBudget(max_depth=10**9, max_work=10**18, max_elements=10**9, max_bytes=10**9, max_seconds=600)
EXTRACT_SECONDS = 15        # the extraction of a whole hostile file (a few seconds on a loaded machine)


def good_page(n: int) -> bytes:
    return f"<html><body><p>good page {n} <a href='/from-{n}'>link {n}</a></p></body></html>".encode()


# --- the HTML guard against the parser ---------------------------------------------------------

def lexbor_depth(html: str) -> int:
    """Deepest element of Lexbor's tree below <body> (html and body not counted)."""
    tree = LexborHTMLParser(html)
    deepest = 0
    stack = [(tree.root, 1)] if tree.root is not None else []
    while stack:
        node, depth = stack.pop()
        if (node.tag or "").startswith("-"):
            continue
        deepest = max(deepest, depth)
        child = node.child
        while child is not None:
            stack.append((child, depth + 1))
            child = child.next
    return deepest - 2


# Units that once let the nesting of the parser grow while a guard counted none of it.
BYPASSES = [
    "<div></x>", "<div></div.x>", "<div><!--></div>-->", "<div><!---></div>-->", "<div><!x </div>",
    "<div><? </div>", "<div title='</div>'>", "<div title=\"</div>\">", "<div><noscript>",
    "<div><script><!--<script></script></div></script>", "<span><div></span>", "<li><ul></li>",
    "<b><div></b>", "<svg><div></svg>", "<svg/><section><section/>", "<p><div>", "<div><select></div><select>",
    "<math><title><script>", "<button><p/><button><em/></button> <h2>", "<form><div></form>",
    "<table><td><div></x></td>", "<div><textarea></textarea x></div>",
]


@pytest.mark.parametrize("unit", BYPASSES)
def test_guard_depth_is_never_below_the_parsers(unit):
    html = "<body>" + unit * 300
    assert estimate(html, UNBOUNDED).depth >= lexbor_depth(html), unit


def test_guard_on_random_tag_soup_stays_within_twice_the_parsers_depth():
    """Repeated random units (a fixed seed): where the model simplifies HTML5, it may count up to
    about half the parser's depth for a construct; never less (depth x elements then stays within
    4x the work budget)."""
    names = ("div p li ul ol dd dt a b i span table tr td th caption select option svg math foreignobject "
             "desc title mi script style textarea noscript button form h1 h2 br img template object font em "
             "section").split()
    shapes = ("<{}>", "</{}>", "<{} x='>'>", "<{}/>")
    extras = ("<!-->", "<!--->", "<!-- ", " -->", "--!>", "<!x>", "<?x>", "</ x>", "x", " ", "<![CDATA[", "]]>")
    rng = random.Random(7)
    for _ in range(300):
        unit = "".join(rng.choice(extras) if rng.random() < 0.15 else rng.choice(shapes).format(rng.choice(names))
                       for _ in range(rng.randint(1, 8)))
        html = unit * 100
        assert 2 * estimate(html, UNBOUNDED).depth + 10 >= lexbor_depth(html), unit


def test_guard_tokenizes_as_html5():
    deep = "<div>" * 1100
    assert html_cost_problem(deep) == "HTML nests elements more than 1024 deep (not parsed)"
    for closed in ("<!-->", "<!--->", "<!-- x --!>", "<!-- x -->", "<!x>", "<?x>", "</ x>"):
        assert html_cost_problem(closed + deep) is not None, closed      # a closed comment hides nothing
    for hidden in ("<!-- ", "<script>", "<style>", "<textarea>", "<title>", "<xmp>", "<plaintext>",
                   "<script><!--<script></script>"):
        assert html_cost_problem(hidden + deep) is None, hidden           # text, not elements
    assert html_cost_problem("<noscript>" + deep) is not None              # markup with scripting off
    assert html_cost_problem("<svg><style>" + deep) is not None            # no raw text in SVG
    assert html_cost_problem("<div title='>'>" * 1100) is not None         # '>' inside a quoted value
    assert html_cost_problem(("<div>" + "</x>" * 3) * 1100) is not None   # stray end tags lower nothing
    assert html_cost_problem(("<div>" + "</div>") * 100_000) is None       # matched end tags do


def test_parse_budget_elements_bytes_and_seconds():
    page = "<html><body>" + "<p>x</p>" * 5000 + "</body></html>"
    assert html_cost_problem(page) is None
    assert html_cost_problem(page, ParseBudget(max_elements=1000)) == "HTML has more than 1000 elements (not parsed)"
    assert html_cost_problem(page, ParseBudget(max_bytes=1000)) == (
        f"HTML of {len(page)} bytes exceeds the parse budget of 1000 bytes (not parsed)")
    assert html_cost_problem(page, ParseBudget(max_seconds=1e-9)) == (
        "HTML parse budget of 1e-09 s exceeded before parsing (not parsed)")


def extract_bounded(path, settings_code: str = "ExtractSettings()", wat: bool = False) -> dict:
    """Extraction of the file at ``path`` in a child process under ``run_bounded``'s bounds:
    the record rows, the edges (from, to) and the seconds the extraction took."""
    return run_bounded(f"""
        from linkgraph.inputs.crawl.extract import ExtractSettings, warc_rows, wat_rows
        from linkgraph.inputs.crawl.htmlguard import ParseBudget
        from linkgraph.inputs.crawl.warc import read_records
        settings = {settings_code}
        data = open(sys.argv[1], "rb").read()
        begun = time.monotonic()
        fmt = "wat" if {wat} else "warc"
        records = read_records(lambda: io.BytesIO(data), settings.payload_limit(fmt))
        rows = list((wat_rows if {wat} else warc_rows)(records, sys.argv[2], settings))
        result = {{
            "seconds": time.monotonic() - begun,
            "records": [(r["row_kind"], r["record_id"], r["reason"], r["detail"]) for r in rows
                        if r["row_kind"] != "edge"],
            "edges": [(r["from_url"], r["to_url"]) for r in rows if r["row_kind"] == "edge"],
        }}
    """, str(path), path.name)


def test_hostile_pages_are_rejected_in_seconds_and_good_pages_keep_their_links(tmp_path):
    stray = b"<html><body>" + b"<div></x>" * 540_000                        # 4.9 MB of stray end tags
    fake_comment = b"<html><body><!-->" + b"<div>" * 200_000 + b"-->"       # 1 MB behind a closed comment
    fake_comment_dash = b"<html><body><!--->" + b"<div><span></b>" * 60_000 + b"-->"
    pages = [("1", good_page(1)), ("2", stray), ("3", fake_comment), ("4", good_page(4)),
             ("5", fake_comment_dash), ("6", good_page(6))]
    assert len(stray) > 4_800_000
    warc = b"".join(warc_record("response", f"http://www.alpha.com/{rid}", http_response(body), rid)
                    for rid, body in pages)
    path = tmp_path / "hostile.warc.gz"
    path.write_bytes(warc)
    result = extract_bounded(path)
    print(f"hostile HTML extraction: {result['seconds']:.2f} s")               # pytest -s
    assert result["seconds"] < EXTRACT_SECONDS
    got = {rid: (kind, reason) for kind, rid, reason, _ in result["records"]}
    assert got == {"<urn:uuid:1>": ("page", None), "<urn:uuid:2>": ("rejected", R.OVERSIZED_PAGE),
                   "<urn:uuid:3>": ("rejected", R.OVERSIZED_PAGE), "<urn:uuid:4>": ("page", None),
                   "<urn:uuid:5>": ("rejected", R.OVERSIZED_PAGE), "<urn:uuid:6>": ("page", None)}
    details = {rid: detail for _, rid, _, detail in result["records"]}
    assert all("more than 1024 deep" in details[f"<urn:uuid:{rid}>"] for rid in "235")
    assert sorted(map(tuple, result["edges"])) == [
        (f"http://www.alpha.com/{n}", f"http://www.alpha.com/from-{n}") for n in (1, 4, 6)]


def test_parse_seconds_budget_ends_in_a_reject(tmp_path):
    slow = b"<html><body>" + b"<p><a href='/x'>x</a></p>" * 20_000             # fine, but not in 1 ms
    warc = b"".join([warc_record("response", "http://www.alpha.com/1", http_response(slow), "1"),
                     warc_record("response", "http://www.alpha.com/2", http_response(good_page(2)), "2")])
    path = tmp_path / "slow.warc.gz"
    path.write_bytes(warc)
    result = extract_bounded(path, "ExtractSettings(budget=ParseBudget(max_seconds=0.001))")
    records = {rid: (kind, reason, detail) for kind, rid, reason, detail in result["records"]}
    kind, reason, detail = records["<urn:uuid:1>"]
    assert (kind, reason) == ("rejected", R.OVERSIZED_PAGE) and "parse budget of 0.001 s exceeded" in detail
    assert records["<urn:uuid:2>"][:2] == ("page", None)
    assert result["edges"] == [["http://www.alpha.com/2", "http://www.alpha.com/from-2"]]


def test_crawl_parse_budget_config_keys():
    crawl = config_from_dict({"crawl": {"max_parse_seconds": 2.5, "max_parse_elements": 10}}).crawl
    settings = ExtractSettings.from_config(crawl)
    assert (settings.budget.max_seconds, settings.budget.max_elements, settings.budget.max_depth) == (2.5, 10, 1024)
    assert settings.payload_limit("wat") == crawl.max_wat_record_bytes == 5_000_000
    with pytest.raises(ConfigError, match="crawl.max_parse_seconds must be positive"):
        config_from_dict({"crawl": {"max_parse_seconds": 0}})


# --- plain WARC with a lying Content-Length ----------------------------------------------------

def plain_record(rid: str, body: bytes, lie: int = 0, headers: tuple[str, ...] = ()) -> bytes:
    """An uncompressed response record whose Content-Length is ``lie`` bytes off (HTTP ``headers``
    after its Content-Type)."""
    block = http_response(body, headers=("Content-Type: text/html; charset=utf-8", *headers))
    head = (f"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://www.alpha.com/{rid}\r\n"
            f"WARC-Record-ID: <urn:uuid:{rid}>\r\nWARC-Date: 2024-05-18T01:58:10Z\r\n"
            f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(block) + lie}\r\n\r\n")
    return head.encode() + block + b"\r\n\r\n"


def rows_of(data: bytes, wat: bool = False, settings: ExtractSettings | None = None) -> list[dict]:
    settings = settings or ExtractSettings()
    records = read_records(lambda: io.BytesIO(data), settings.payload_limit("wat" if wat else "warc"))
    return list((wat_rows if wat else warc_rows)(records, "test.warc", settings))


@pytest.mark.parametrize("lie", [-40, -3, 2, 60, 10_000])
def test_lying_content_length_is_one_reject_and_reading_resumes(lie):
    data = b"".join([plain_record("1", good_page(1)), plain_record("2", good_page(2), lie),
                     plain_record("3", good_page(3)), plain_record("4", good_page(4))])
    rows = rows_of(data)
    records = [(r["row_kind"], r["record_id"], r["reason"]) for r in rows if r["row_kind"] != "edge"]
    assert records == [("page", "<urn:uuid:1>", None), ("rejected", "<urn:uuid:2>", R.MALFORMED_RECORD),
                       ("page", "<urn:uuid:3>", None), ("page", "<urn:uuid:4>", None)]
    edges = [(r["record_id"], r["from_url"], r["to_url"]) for r in rows if r["row_kind"] == "edge"]
    assert edges == [(f"<urn:uuid:{n}>", f"http://www.alpha.com/{n}", f"http://www.alpha.com/from-{n}")
                     for n in (1, 3, 4)]      # each link on its own page
    reject = next(r for r in rows if r["row_kind"] == "rejected")
    third = len(plain_record("1", good_page(1))) + len(plain_record("2", good_page(2), lie))
    assert f"reading resumes at the next record header at offset {third}" in reject["detail"]


def swallowing_warc(http_length: bool, gzipped: bool) -> bytes:
    """Records 1, 2, 3, where record 1's Content-Length takes in record 2: its block ends where
    record 2's does, and record 2's CRLF CRLF closes it.  ``http_length``: record 1's HTTP
    message declares its own Content-Length; ``gzipped``: records 1 and 2 in one gzip member."""
    second = plain_record("2", good_page(2))
    first = plain_record("1", good_page(1), len(second), (f"Content-Length: {len(good_page(1))}",) if http_length else ())
    if gzipped:
        return gzip.compress(first + second, mtime=0) + gzip.compress(plain_record("3", good_page(3)), mtime=0)
    return first + second + plain_record("3", good_page(3))


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("http_length", [True, False])
def test_a_record_swallowing_the_next_is_a_reject_and_gives_no_link_of_it(http_length, gzipped):
    rows = rows_of(swallowing_warc(http_length, gzipped))
    records = [(r["row_kind"], r["record_id"], r["reason"]) for r in rows if r["row_kind"] != "edge"]
    kept = [3] if gzipped else [2, 3]      # a plain file is read on from the record header inside it
    assert records == [("rejected", "<urn:uuid:1>", R.MALFORMED_RECORD)] + [("page", f"<urn:uuid:{n}>", None)
                                                                           for n in kept]
    assert "its Content-Length takes in the next record" in rows[0]["detail"]
    edges = [(r["from_url"], r["to_url"]) for r in rows if r["row_kind"] == "edge"]
    assert edges == [(f"http://www.alpha.com/{n}", f"http://www.alpha.com/from-{n}") for n in kept]


def test_records_whose_bodies_mention_warc_headers_are_read_as_usual():
    """A page quoting a WARC header, and an HTTP body longer than its Content-Length without a record
    in the rest, are no swallowed records."""
    quoted = b"<html><body><pre>\r\n\r\nWARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\n</pre>" \
             b"<a href='/from-1'>x</a></body></html>"
    longer = plain_record("2", good_page(2) + b"\r\n\r\nWARC/1.1 trailing bytes",
                          headers=(f"Content-Length: {len(good_page(2))}",))
    rows = rows_of(plain_record("1", quoted) + longer)
    assert [(r["row_kind"], r["record_id"], r["reason"]) for r in rows if r["row_kind"] != "edge"] == [
        ("page", "<urn:uuid:1>", None), ("page", "<urn:uuid:2>", None)]


def test_lying_content_length_of_the_last_record_and_a_cut_file_are_reported():
    for lie, reason in ((-7, R.MALFORMED_RECORD), (7, R.TRUNCATED_RECORD)):   # past the end: as a cut file
        data = plain_record("1", good_page(1)) + plain_record("2", good_page(2), lie)
        records = [(r.record_id, r.reason) if isinstance(r, ReadProblem) else (r.record_id, "ok")
                   for r in read_records(lambda data=data: io.BytesIO(data), 10**6)]
        assert records == [("<urn:uuid:1>", "ok"), ("<urn:uuid:2>", reason)], lie
    whole = plain_record("1", good_page(1)) + plain_record("2", good_page(2))
    cut = [r for r in read_records(lambda: io.BytesIO(whole[:-30]), 10**6)]
    assert [type(r).__name__ for r in cut] == ["WarcRecord", "ReadProblem"]
    assert cut[1].reason == R.TRUNCATED_RECORD


def test_plain_copy_of_a_real_warc_reads_every_record():
    data = gzip.decompress(shared_file(CC_EXCERPT).read_bytes())
    read = list(read_records(lambda: io.BytesIO(data), 10**7))
    assert len(read) == 50 and all(isinstance(r, WarcRecord) for r in read)


# --- WAT: per-record decompressed limit --------------------------------------------------------

def test_over_long_wat_record_is_one_reject_and_the_rest_is_kept():
    links = [{"path": "A@/href", "url": f"/l{i}", "text": "x" * 100} for i in range(2000)]   # ~250 KB of JSON
    small = [{"path": "A@/href", "url": "/ok", "text": "ok"}]
    data = b"".join([
        warc_record("metadata", "https://w.example.com/1", wat_json("https://w.example.com/1", small), "w1"),
        warc_record("metadata", "https://w.example.com/2", wat_json("https://w.example.com/2", links), "w2"),
        warc_record("metadata", "https://w.example.com/3", wat_json("https://w.example.com/3", small), "w3"),
    ])
    started = time.monotonic()
    rows = rows_of(data, wat=True, settings=ExtractSettings(max_wat_record_bytes=100_000))
    assert time.monotonic() - started < EXTRACT_SECONDS
    records = [(r["row_kind"], r["reason"]) for r in rows if r["row_kind"] != "edge"]
    assert records == [("page", None), ("rejected", R.OVERSIZED_PAGE), ("page", None)]
    reject = next(r for r in rows if r["row_kind"] == "rejected")
    assert "exceeds 100000" in reject["detail"] and reject["record_id"] == "<urn:uuid:w2>"
    assert len([r for r in rows if r["row_kind"] == "edge"]) == 2


# --- through the ingest step: counted, in `rejects`, readable by delta-rs ----------------------

def test_ingest_of_hostile_crawl_files_counts_rejects_and_keeps_good_pages(spark, tmp_path):
    from deltalake import DeltaTable

    from steps_support import ingest_step

    directory = tmp_path / "crawl"
    directory.mkdir()
    stray = b"<html><body>" + b"<div></x>" * 120_000
    fake_comment = b"<html><body><!-->" + b"<div>" * 50_000 + b"-->"
    (directory / "html.warc.gz").write_bytes(b"".join(
        warc_record("response", f"http://www.alpha.com/{rid}", http_response(body), rid)
        for rid, body in (("1", good_page(1)), ("2", stray), ("3", fake_comment), ("4", good_page(4)))))
    (directory / "plain.warc").write_bytes(b"".join([
        plain_record("5", good_page(5)), plain_record("6", good_page(6), 50), plain_record("7", good_page(7))]))
    lake = tmp_path / "lake"
    config = config_from_dict({"lake": {"path": str(lake)}})
    report = ingest_step(spark, config, str(directory), "warc")
    assert (report.records_read, report.pages_parsed, report.records_rejected) == (7, 4, 3)
    assert report.records_rejected_by_reason == {R.OVERSIZED_PAGE: 2, R.MALFORMED_RECORD: 1}
    rejects = DeltaTable(str(lake / "rejects")).to_pyarrow_table().to_pylist()
    by_reason = sorted((r["reason"], r["from_url"]) for r in rejects)
    assert by_reason == [(R.MALFORMED_RECORD, "http://www.alpha.com/6"), (R.OVERSIZED_PAGE, "http://www.alpha.com/2"),
                         (R.OVERSIZED_PAGE, "http://www.alpha.com/3")]
    pages = {r["url"] for r in spark.read.format("delta").load(str(lake / "pages")).select("url").collect()}
    assert {f"http://www.alpha.com/from-{n}" for n in (1, 4, 5, 7)} <= pages
    assert not {f"http://www.alpha.com/from-{n}" for n in (2, 3, 6)} & pages
