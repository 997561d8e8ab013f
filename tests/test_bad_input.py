"""Bad-input suite: every input format the ingest job reads, fed with broken records.

For every run: ``read = written + rejected`` (report), ``written`` = rows of ``links`` (a fresh
lake), the rejects by reason equal the expected reasons of the cases, and each marked case is found
in ``rejects`` with its reason (or in ``links``).  No uncaught exception, no silent drop.

Adding a format or a job: add a ``FormatCases`` entry (a writer of the case records to a file
and the cases with their expected outcome) to ``FORMATS``.  URL canonicalisation edge cases in
depth are in test_urls.py; here a few of each kind go through the whole job.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from linkgraph.cli import main
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.delta import Lake
from reliability_support import data_files
from steps_support import ingest_step

W = "WRITTEN"   # expected outcome: the record is a links row
R = S.Reason


@dataclass(frozen=True)
class Case:
    marker: str | None     # text found in the stored link / the reject's raw values or detail
    record: object         # what the format writer turns into one input record
    expected: str          # W or a reason code


def ok(marker: str, **fields) -> dict:
    """A valid record carrying ``marker`` in its context window, ``fields`` overriding."""
    return {"from_url": "http://www.alpha.com/", "to_url": f"http://www.beta.org/{marker}",
            "context_window": marker, **fields}


JSONL_CASES = [
    Case("j01", ok("j01", last_seen_at="2026-01-05T00:00:00Z"), W),
    Case("j02", ok("j02", to_url="/relative/j02"), R.UNSUPPORTED_SCHEME),
    Case("j03", ok("j03", to_url="ftp://files.beta.org/j03"), R.UNSUPPORTED_SCHEME),
    Case("j04", ok("j04", to_url="javascript:j04()"), R.UNSUPPORTED_SCHEME),
    Case("j05", ok("j05", to_url="http://be ta.org/j05"), R.MALFORMED_URL),
    Case("j06", ok("j06", to_url="http://B\u00fccher.de/j06"), W),                 # IDNA: xn--bcher-kva.de
    Case("j07", ok("j07", to_url="http://xn--zz.com/j07"), R.INVALID_HOST),          # invalid punycode
    Case("j08", ok("j08", to_url="http://www.beta.org/%7ej08/%zz/%41"), W),          # %7e -> ~, %zz -> %25zz, %41 -> A
    Case("j09", ok("j09", from_url=None), R.NULL_FIELD),
    Case("j10", {"from_url": "http://www.alpha.com/", "anchor_text": "j10"}, R.NULL_FIELD),   # to_url missing
    Case(None, {k: None for k in ("from_url", "to_url", "anchor_text", "context_window", "link_type", "rel",
                                  "position", "discovered_at", "last_seen_at")}, R.NULL_FIELD),
    Case("j12", ok("j12", anchor_text=None, link_type=None, rel=None, position=None, discovered_at=None,
                   last_seen_at=None), W),                                          # every optional column null
    Case("j13", ok("j13", from_url=12), R.UNSUPPORTED_SCHEME),                       # wrong type: a number
    Case("j14", ok("j14", anchor_text={"nested": 1}), W),                            # wrong type: kept as its JSON text
    Case("j15", ok("j15", discovered_at=1700000000), R.MALFORMED_TIMESTAMP),         # epoch number, not a timestamp
    Case("j16", '["j16", "an array, not an object"]', R.MALFORMED_RECORD),
    Case("j17", ok("j17", extra_column="ignored", weight=3), W),                      # extra columns
    Case("j18", ok("j01", context_window="j18", last_seen_at="2026-01-01T00:00:00Z"), R.DUPLICATE_MERGED),
    Case("j19", ok("j19", to_url="http://www.alpha.com/"), R.SELF_LINK),
    Case("j20", ok("j20", from_url="http://WWW.Alpha.com:80/x/../j20#top", to_url="http://www.alpha.com/j20"),
         R.SELF_LINK),                                                               # same page once canonical
    Case("j21", ok("j21", anchor_text="a" * 1_000_000), R.OVERSIZED_FIELD),          # 1 MB anchor text
    Case("j22", ok("j22", to_url="http://www.beta.org/" + "p" * 2048), R.OVERSIZED_FIELD),
    Case("j23", b'{"from_url": "http://www.alpha.com/\xff\xfe", "to_url": "http://www.beta.org/", '
                b'"context_window": "j23"}', R.MALFORMED_RECORD),                   # invalid UTF-8
    Case("j24", ok("j24", discovered_at="10000-01-01T00:00:00Z"), R.MALFORMED_TIMESTAMP),   # out of range
    Case("j25", ok("j25", last_seen_at="1969-12-31T23:59:59Z"), R.MALFORMED_TIMESTAMP),     # before the Web
    Case("j26", ok("j26", discovered_at="2026-02-30T00:00:00Z"), R.MALFORMED_TIMESTAMP),    # no such day
    Case("j27", ok("j27", discovered_at="2026-03-01T00:00:00Z", last_seen_at="2026-02-01T00:00:00Z"),
         R.INVALID_VALUE),
    Case("j28", '{"from_url": "http://www.alpha.com/", "to_url": "j28', R.MALFORMED_RECORD),   # cut-off line
    Case("j29", ok("j29", position="HEADER"), R.INVALID_VALUE),
    Case("j30", ok("j30", link_type="dofollow"), R.INVALID_VALUE),
    Case("j31", ok("j31", to_url="http://localhost/j31"), R.INVALID_HOST),
    Case("j32", ok("j32", rel="NoFollow UGC", discovered_at="2026-01-01 10:00:00"), W),
]

CSV_HEADER = "from_url,to_url,anchor_text,context_window,discovered_at,weight"   # weight: an extra column
CSV_CASES = [
    Case("c01", "http://www.alpha.com/,http://www.beta.org/c01,A,c01,2026-01-01T00:00:00Z,1", W),
    Case("c02", 'http://www.alpha.com/,"http://www.beta.org/c02",",quoted, comma",c02,,', W),
    Case("c03", "http://www.alpha.com/,http://www.beta.org/c03,A,c03,2026-01-01,1,surplus", R.MALFORMED_RECORD),
    Case("c04", "http://www.alpha.com/c04", R.MALFORMED_RECORD),                             # too few fields
    Case("c05", ",http://www.beta.org/c05,A,c05,,", R.NULL_FIELD),
    Case("c06", "relative/c06,http://www.beta.org/,A,c06,,", R.UNSUPPORTED_SCHEME),
    Case("c07", "http://www.alpha.com/,http://www.alpha.com/,A,c07,,", R.SELF_LINK),
    Case("c08", b"http://www.alpha.com/\xc3\x28,http://www.beta.org/c08,A,c08,,", R.MALFORMED_RECORD),   # invalid UTF-8
    Case("c09", "http://www.alpha.com/,http://www.beta.org/c09,A,c09,yesterday,", R.MALFORMED_TIMESTAMP),
    Case("c10", "http://www.alpha.com/,http://www.beta.org/c10,A,c10,0001-01-01T00:00:00Z,", R.MALFORMED_TIMESTAMP),
]

ARCS_CASES = [
    Case(None, "0\t1", W),
    Case(None, "1 2", W),                          # space separated
    Case(None, "-1\t2", R.MALFORMED_RECORD),
    Case(None, "1 2 3", R.MALFORMED_RECORD),
    Case(None, "99999999999999999999\t1", R.MALFORMED_RECORD),   # beyond a long
    Case(None, "a\tb", R.MALFORMED_RECORD),
    Case(None, "2\t2", R.SELF_LINK),
    Case(None, "0\t1", R.DUPLICATE_MERGED),
]

DAT_CASES = [      # node lines are not records; each arc line is one (no "<nodes> <edges>" header line:
                   # the reader would take it for an arc)
    Case(None, "0 1", W),
    Case(None, "0 2", R.UNSUPPORTED_SCHEME),       # node 2 is an ftp URL
    Case(None, "0 9", R.NULL_FIELD),               # node 9 has no line
    Case(None, "1 1", R.SELF_LINK),
]
DAT_NODES = "0 http://www.alpha.com/\n1 http://www.beta.org/\n2 ftp://www.beta.org/file\n"

GML_CASES = [      # nodes: 0 www.alpha.com, 1 www.beta.org, 2 mailto:x; each edge is one record
    Case(None, (0, 1), W),
    Case(None, (0, 2), R.MALFORMED_URL),           # "mailto:x" has no "scheme://": read as host "mailto", port "x"
    Case(None, (0, 7), R.NULL_FIELD),              # edge to a node that does not exist
    Case(None, (1, 1), R.SELF_LINK),
]


def _line(record) -> bytes:
    if isinstance(record, bytes):
        return record
    return (record if isinstance(record, str) else json.dumps(record)).encode()


def write_jsonl(path: Path, cases) -> Path:
    # blank lines are not records (JSON Lines), so they count neither as read nor as rejected
    path.write_bytes(b"\n\n".join(_line(c.record) for c in cases) + b"\n   \n")
    return path


def write_csv(path: Path, cases) -> Path:
    path.write_bytes(CSV_HEADER.encode() + b"\n" + b"\n".join(_line(c.record) for c in cases) + b"\n")
    return path


def write_arcs(path: Path, cases) -> Path:
    path.write_bytes(b"# arc list\n% comment\n\n" + b"\n".join(_line(c.record) for c in cases) + b"\n")
    return path


def write_dat(path: Path, cases) -> Path:
    path.write_text(DAT_NODES + "".join(f"{c.record}\n" for c in cases))
    return path


def write_gml(path: Path, cases) -> Path:
    nodes = 'node [ id 0 label "www.alpha.com" ] node [ id 1 label "http://www.beta.org/" ] node [ id 2 label "mailto:x" ]'
    edges = " ".join(f"edge [ source {a} target {b} ]" for a, b in (c.record for c in cases))
    path.write_text(f"graph [ directed 1 {nodes} {edges} ]")
    return path


@dataclass(frozen=True)
class FormatCases:
    suffix: str
    write: Callable[[Path, list[Case]], Path]
    cases: list[Case]


FORMATS = {
    "jsonl": FormatCases(".jsonl", write_jsonl, JSONL_CASES),
    "csv": FormatCases(".csv", write_csv, CSV_CASES),
    "arcs": FormatCases(".arcs", write_arcs, ARCS_CASES),
    "dat": FormatCases(".dat", write_dat, DAT_CASES),
    "gml": FormatCases(".gml", write_gml, GML_CASES),
}


def fresh_config(tmp_path: Path):
    return config_from_dict({"lake": {"path": str(tmp_path / "lake")}})


def assert_accounted(spark, config, report, expected_read: int):
    """read = written + rejected, and the tables agree: ``written`` rows in links (a fresh lake)."""
    assert report.read == expected_read
    assert report.written + report.rejected == report.read, report
    assert Lake(spark, config.lake).read(S.LINKS_TABLE).count() == report.written


def marker_text(df):
    """Where a case's marker is: its context window or anchor, or the raw line of an unparsable
    record (the detail of MALFORMED_RECORD; other details name URLs, which may hold markers)."""
    parts = [F.col(S.CONTEXT_WINDOW), F.col(S.ANCHOR_TEXT)]
    if S.REASON in df.columns:
        parts.append(F.when(F.col(S.REASON) == R.MALFORMED_RECORD, F.col(S.DETAIL)))
    return F.concat_ws("\u0001", *[F.coalesce(p, F.lit("")) for p in parts])


# every format in the e2e tier; JSON lines, Parquet and the crawl formats in the quick one too
SLOW_FORMATS = {"arcs", "csv", "dat", "gml"}


def _formats(formats) -> list:
    return [pytest.param(fmt, marks=pytest.mark.slow) if fmt in SLOW_FORMATS else fmt for fmt in formats]


@pytest.mark.parametrize("fmt", _formats(sorted(FORMATS)))
def test_every_record_is_written_or_rejected_with_its_reason(spark, tmp_path, fmt):
    spec = FORMATS[fmt]
    path = spec.write(tmp_path / f"input{spec.suffix}", spec.cases)
    config = fresh_config(tmp_path)
    report = ingest_step(spark, config, str(path), fmt)

    lake = Lake(spark, config.lake)
    rejects = lake.read(S.REJECTS_TABLE)
    rejects = rejects.select(S.REASON, marker_text(rejects).alias("text")).collect()
    links = lake.read(S.LINKS_TABLE)
    stored = [r.text for r in links.select(marker_text(links).alias("text")).collect()]
    for case in spec.cases:
        if case.marker is None:
            continue
        found = [r.reason for r in rejects if case.marker in r.text]
        if case.expected == W:
            assert not found and any(case.marker in text for text in stored), case.marker
        else:
            assert found == [case.expected], (case.marker, found)
    assert_accounted(spark, config, report, expected_read=len(spec.cases))
    assert report.written == sum(c.expected == W for c in spec.cases)
    assert report.rejected_by_reason == dict(Counter(c.expected for c in spec.cases if c.expected != W))
    if fmt == "jsonl":   # the IDNA and percent-encoding cases are stored canonical
        urls = {r.url for r in lake.read(S.PAGES_TABLE).collect()}
        assert {"http://xn--bcher-kva.de/j06", "http://www.beta.org/~j08/%25zz/A"} <= urls


def test_parquet_wrong_types_nulls_and_extra_columns(spark, tmp_path):
    path = tmp_path / "edges.parquet"
    table = pa.table({
        "from_url": ["http://www.alpha.com/", "http://www.alpha.com/", None, "http://www.alpha.com/"],
        "to_url": ["http://www.beta.org/p1", "http://www.beta.org/p2", "http://www.beta.org/p3", "http://www.beta.org/p4"],
        "anchor_text": pa.array([7, None, 9, 10], pa.int64()),                # wrong type: kept as text
        "discovered_at": pa.array([1_700_000_000, None, None, None], pa.int64()),   # epoch seconds: not a timestamp
        "last_seen_at": pa.array([None, "2026-01-01T00:00:00Z", None, "1900-01-01T00:00:00Z"]),   # 1900: before the Web
        "extra": pa.array([[1], [2], [3], [4]]),                              # extra (nested) column: ignored
    })
    pq.write_table(table, path)
    config = fresh_config(tmp_path)
    report = ingest_step(spark, config, str(path), "parquet")
    assert_accounted(spark, config, report, expected_read=4)
    assert report.rejected_by_reason == {R.MALFORMED_TIMESTAMP: 2, R.NULL_FIELD: 1}
    (link,) = Lake(spark, config.lake).read(S.LINKS_TABLE).collect()
    assert link.anchor_text is None and link.last_seen_at.year == 2026


@pytest.mark.parametrize("fmt", _formats(["jsonl", "csv", "arcs", "parquet"]))
def test_empty_input_reads_nothing_and_fails_nothing(spark, tmp_path, fmt):
    if fmt == "parquet":
        path = tmp_path / "empty.parquet"
        pq.write_table(pa.table({"from_url": pa.array([], pa.string()), "to_url": pa.array([], pa.string())}), path)
    else:
        path = tmp_path / f"empty.{fmt}"
        path.write_bytes(b"")
    config = fresh_config(tmp_path)
    report = ingest_step(spark, config, str(path), fmt)
    assert (report.read, report.written, report.rejected) == (0, 0, 0)
    assert Lake(spark, config.lake).read(S.LINKS_TABLE).count() == 0


@pytest.mark.parametrize("fmt", ["jsonl", "arcs", "gml"])
def test_truncated_gzip_stops_with_a_clear_message_and_writes_nothing(spark, tmp_path, capsys, fmt):
    records = {"jsonl": b'{"from_url": "http://www.alpha.com/", "to_url": "http://www.beta.org/"}\n' * 3000,
               "arcs": b"0\t1\n1\t2\n" * 5000,
               "gml": b'graph [ node [ id 0 label "a.com" ] node [ id 1 label "b.com" ] ' + b"edge [ source 0 target 1 ] " * 3000 + b"]"}[fmt]
    compressed = gzip.compress(records)
    path = tmp_path / f"input.{fmt}.gz"
    path.write_bytes(compressed[: len(compressed) * 2 // 3])   # cut mid-stream
    lake = tmp_path / "lake"
    assert main(["ingest", "--input", str(path), "--format", fmt, "--lake", str(lake)]) == 2
    err = capsys.readouterr().err
    assert f"input {path} cannot be read to its end" in err and "nothing was ingested" in err
    assert not data_files(lake)


def test_an_unparseable_line_has_one_verdict_alone_or_beside_a_valid_record(spark, tmp_path):
    """A JSON lines file whose only line cannot be parsed as an edge record is not a schema error:
    the line is a MALFORMED_RECORD, exactly as when it stands beside a valid record (the
    property test below once found the first case exiting 2 with "missing required column")."""
    from linkgraph.inputs import ingest as I
    from linkgraph.inputs import readers

    config = fresh_config(tmp_path)
    valid = json.dumps({"from_url": "http://www.alpha.com/", "to_url": "http://www.beta.org/"})
    unparseable = ['{"from_url": "http://www.alpha.com/", "to_url"', "[1, 2", "42"]
    for i, line in enumerate(unparseable):
        for lines in ([line], [valid, line]):
            path = tmp_path / f"case{i}-{len(lines)}.jsonl"
            path.write_text("".join(f"{x}\n" for x in lines))
            validated = I.validate_edges(readers.read_edges(spark, str(path), "jsonl"), config.ingest)
            reasons = sorted(r[S.REASON] or "" for r in validated.select(S.REASON).collect())
            assert reasons == [""] * (len(lines) - 1) + [R.MALFORMED_RECORD], (line, lines, reasons)


@pytest.mark.drill
def test_a_corrupt_lake_file_met_after_pages_were_committed_is_reported_as_such(spark, tmp_path, capsys):
    """A data file of ``links`` is unreadable (zeroed: its .crc checksum fails): the second ingest,
    a newer sighting of the same link, commits its pages (last seen later), then its links MERGE
    must read the file that holds the link.  The one-line message names the table, says what was
    committed and that a re-run completes the ingest, and it does once the file is restored.  (A
    link to a new page would not touch the file: the insert-only path reads no stored links.)"""
    lake = tmp_path / "lake"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    link = {"from_url": "http://www.alpha.com/", "to_url": "http://www.beta.org/"}
    first.write_text(json.dumps({**link, "last_seen_at": "2026-01-01T00:00:00Z"}) + "\n")
    second.write_text(json.dumps({**link, "last_seen_at": "2026-02-01T00:00:00Z"}) + "\n")
    assert main(["ingest", "--input", str(first), "--format", "jsonl", "--lake", str(lake)]) == 0
    saved = {path: path.read_bytes() for path in data_files(lake / S.LINKS_TABLE)}
    for path, content in saved.items():
        path.write_bytes(bytes(len(content)))
    capsys.readouterr()

    assert main(["ingest", "--input", str(second), "--format", "jsonl", "--lake", str(lake)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith(f"linkgraph ingest: error: ingest {second}: a data file of table 'links' in lake {lake} "
                             "cannot be read to its end (Checksum error: a truncated or corrupt file); "
                             "committed before it stopped: pages (version 2); not committed: links, rejects. "
                             "The ingest is idempotent: re-running the command once the file is readable again "
                             "(restored) completes it"), err
    assert "nothing was ingested" not in err[0]
    pages = Lake(spark, fresh_config(tmp_path).lake).read(S.PAGES_TABLE)
    assert pages.where(F.col(S.LAST_SEEN_AT) == F.lit("2026-02-01 00:00:00").cast("timestamp")).count() == 2

    for path, content in saved.items():
        path.write_bytes(content)
    assert main(["ingest", "--input", str(second), "--format", "jsonl", "--lake", str(lake)]) == 0
    links = Lake(spark, fresh_config(tmp_path).lake).read(S.LINKS_TABLE)
    assert links.count() == 1
    assert links.where(F.col(S.LAST_SEEN_AT) == F.lit("2026-02-01 00:00:00").cast("timestamp")).count() == 1


# --- property: any mix of records is accounted for --------------------------------------------------

urls = st.one_of(
    st.none(),
    st.sampled_from(["http://www.alpha.com/", "https://beta.org/x", "http://B\u00fccher.de/", "/rel", "ftp://x.org/",
                     "http://www.alpha.com/a/../b?q=%7e", "mailto:me@x.org", "http://localhost/"]),
    st.builds(lambda host, path: f"http://{host}.com/{path}", st.sampled_from(["www.alpha", "gamma", "d-e"]),
              st.text(max_size=12)),
    st.text(max_size=30),
)
optional_text = st.one_of(st.none(), st.text(max_size=20), st.integers(), st.booleans())
timestamps = st.one_of(st.none(), st.sampled_from(["2026-01-01T00:00:00Z", "1980-01-01", "2026-13-40", "9999-12-31"]),
                       st.datetimes().map(lambda d: d.isoformat()))
records = st.one_of(
    st.fixed_dictionaries({"from_url": urls, "to_url": urls},
                          optional={"anchor_text": optional_text, "position": optional_text, "rel": optional_text,
                                    "discovered_at": timestamps, "last_seen_at": timestamps}),
    st.text(max_size=20).filter(lambda s: s.strip() and "\n" not in s and "\r" not in s),   # arbitrary non-blank lines
)


@pytest.mark.slow
@settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(batch=st.lists(records, min_size=1, max_size=40))
# found by a randomised run: a file whose only line is not JSON stopped the job as a schema error
@example(batch=["'=\U000c7282"])
def test_any_batch_is_fully_accounted_for(spark, tmp_path_factory, batch):
    base = tmp_path_factory.mktemp("prop")
    path = base / "batch.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in batch))
    config = config_from_dict({"lake": {"path": str(base / "lake")}})
    report = ingest_step(spark, config, str(path), "jsonl")
    assert_accounted(spark, config, report, expected_read=len(batch))
    assert set(report.rejected_by_reason) <= {v for k, v in vars(R).items() if k.isupper()}
    rejects = Lake(spark, config.lake).read(S.REJECTS_TABLE)
    assert rejects.where(F.col(S.DETAIL).isNull() | F.col(S.REASON).isNull()).count() == 0


# --- hostile input: bombs, pathological nesting, protocol limits ------------------------------------
# The parsers are tested directly (plain Python), each case in a fresh interpreter whose address
# space is capped at 1 GiB (resource.setrlimit), so a parser that inflates a bomb dies there with a
# MemoryError instead of passing; the child reports its own time and peak RSS.

CASE_SECONDS = 30
CASE_BYTES = 1 << 30
MiB = 1 << 20
CHILD_PRELUDE = """
import io, json, resource, sys, time
started = time.monotonic()
"""
CHILD_EPILOGUE = """
print(json.dumps({"result": result, "seconds": time.monotonic() - started,
                  "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def _cap_address_space() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CASE_BYTES, CASE_BYTES))


def run_bounded(code: str, *args: str):
    """``code`` (which sets ``result`` from ``sys.argv[1:]``) run under the 1 GiB cap; asserts the
    time and memory bounds and returns ``result``."""
    import os
    import subprocess
    import sys
    import textwrap

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    script = CHILD_PRELUDE + textwrap.dedent(code) + CHILD_EPILOGUE
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120,
                          preexec_fn=_cap_address_space, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"bounded case: {report['seconds']:.2f}s, peak {report['peak_bytes'] / MiB:.0f} MiB")   # pytest -s
    assert report["seconds"] <= CASE_SECONDS, report
    assert report["peak_bytes"] <= CASE_BYTES, report
    return report["result"]


def extract_records_bounded(path) -> list:
    """The page and reject rows (row kind, record id, reason, detail) the WARC extraction makes of
    the file at ``path``, run under the bounds of ``run_bounded``; edge rows are left out."""
    return run_bounded("""
        from linkgraph.inputs.crawl.extract import ExtractSettings, warc_rows
        from linkgraph.inputs.crawl.warc import read_records
        settings = ExtractSettings(max_page_bytes=5_000_000)
        data = open(sys.argv[1], "rb").read()
        rows = warc_rows(read_records(lambda: io.BytesIO(data), settings.max_page_bytes), sys.argv[2], settings)
        result = [(r["row_kind"], r["record_id"], r["reason"], r["detail"]) for r in rows if r["row_kind"] != "edge"]
    """, str(path), path.name)


def gzip_bomb(size: int = 1 << 30, prefix: bytes = b"") -> bytes:
    """A valid gzip member of ``prefix`` + ``size`` zero bytes, about 1 KB per MiB (1 GiB -> 1 MB):
    one MiB compressed once, its full-flush block repeated, the trailer computed."""
    import zlib

    zero = bytes(MiB)
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = deflate.compress(prefix + zero) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(zero) + deflate.flush(zlib.Z_FULL_FLUSH)
    end = deflate.flush()[:-8]
    crc = zlib.crc32(prefix)
    for _ in range(size // MiB):
        crc = zlib.crc32(zero, crc)
    length = (len(prefix) + size // MiB * MiB) & 0xFFFFFFFF
    return first + block * (size // MiB - 1) + end + crc.to_bytes(4, "little") + length.to_bytes(4, "little")


def brotli_bomb(size: int = 1 << 30) -> bytes:
    import brotli

    zero = bytes(MiB)
    compressor = brotli.Compressor(quality=5)
    return b"".join(compressor.process(zero) for _ in range(size // MiB)) + compressor.finish()


def test_decompression_bombs_in_warc_bodies_and_members_become_rejects(tmp_path):
    from test_crawl import http_response, warc_record

    raw_deflate = zlib_raw(gzip_bomb(64 * MiB))
    cases = [   # (record id, HTTP body, Content-Encoding) -> the record's reason
        ("1", gzip_bomb(), "gzip"),                # 1 MB -> 1 GiB
        ("2", brotli_bomb(), "br"),                # 1.6 KB -> 1 GiB
        ("3", raw_deflate, "deflate"),
        ("4", b"<html><body><a href='/ok'>ok</a></body></html>", "identity"),
    ]
    warc = b"".join(
        warc_record("response", f"http://www.alpha.com/{rid}",
                    http_response(body, headers=("Content-Type: text/html", f"Content-Encoding: {coding}")), rid)
        for rid, body, coding in cases)
    # a gzip member whose record is followed by 1 GiB of zeros inside the same member
    member = warc_record("response", "http://www.alpha.com/5", http_response(b"<html></html>"), "5")
    warc += gzip_bomb(prefix=gzip.decompress(member))
    path = tmp_path / "bombs.warc.gz"
    path.write_bytes(warc)
    records = extract_records_bounded(path)
    by_id = {rid: (kind, reason) for kind, rid, reason, _ in records}
    assert by_id["<urn:uuid:1>"] == ("rejected", R.OVERSIZED_PAGE)
    assert by_id["<urn:uuid:2>"] == ("rejected", R.OVERSIZED_PAGE)
    assert by_id["<urn:uuid:3>"] == ("rejected", R.OVERSIZED_PAGE)
    assert by_id["<urn:uuid:4>"] == ("page", None)
    assert by_id["<urn:uuid:5>"] == ("page", None)         # the member bomb's record itself is complete
    member_problem = [r for r in records if r[1] is None]
    assert [r[2] for r in member_problem] == [R.MALFORMED_RECORD], records   # then the rest of the member
    assert len(records) == 6   # read = parsed + skipped + rejected: one row per record or problem


def zlib_raw(gzip_member: bytes) -> bytes:
    """The raw deflate stream inside a gzip member (``Content-Encoding: deflate`` as IIS sends it)."""
    return gzip_member[10:-8]


def test_html_nested_100k_deep_is_rejected_before_the_parser(tmp_path):
    from test_crawl import http_response, warc_record

    pages = {
        "1": b"<html><body>" + b"<div>" * 100_000 + b"x" + b"</div>" * 100_000,    # 1.1 MB, minutes for Lexbor
        "2": b"<html><body>" + b"<div><span>x" * 100_000,                              # never closed
        "4": b"<html><body>" + b"<p>x<li>y<br>" * 5_000 + b"<!-- <div>" * 1000 + b"<script>" + b"<div>" * 5000
             + b"</script><a href='/fine'>fine</a>",   # optional end tags, comments, script text: not nesting
    }
    warc = b"".join(warc_record("response", f"http://www.alpha.com/{rid}", http_response(body), rid)
                    for rid, body in pages.items())
    path = tmp_path / "deep.warc.gz"
    path.write_bytes(warc)
    records = extract_records_bounded(path)
    got = {rid: (kind, reason) for kind, rid, reason, _ in records}
    assert got == {"<urn:uuid:1>": ("rejected", R.OVERSIZED_PAGE), "<urn:uuid:2>": ("rejected", R.OVERSIZED_PAGE),
                   "<urn:uuid:4>": ("page", None)}
    details = {rid: detail for _, rid, _, detail in records}
    assert "more than 1024 deep" in details["<urn:uuid:1>"] and "more than 1024 deep" in details["<urn:uuid:2>"]


def test_html_of_many_deep_blocks_is_too_costly_to_parse():
    from linkgraph.inputs.crawl.htmllinks import html_complexity_problem

    block = "<div>" * 1000 + "<a href=x>y</a>" + "</div>" * 1000      # depth 1000: allowed once
    assert html_complexity_problem("<body>" + block) is None
    # the work (depth summed over start tags) of 401 such blocks passes 200 million; 21 pass 10 million
    assert html_complexity_problem("<body>" + block * 21, max_work=10_000_000) == (
        "HTML too costly to parse: nesting depth x elements exceeds 10000000 (not parsed)")
    assert html_complexity_problem("<body>" + block * 19, max_work=10_000_000) is None


def test_gml_bomb_and_pathological_gml_are_bounded(tmp_path):
    bomb = tmp_path / "bomb.gml.gz"
    bomb.write_bytes(gzip_bomb(2 << 30, prefix=b"graph [ "))                 # 2 MB -> 2 GiB
    unclosed = tmp_path / "unclosed.gml"
    unclosed.write_text("graph [ " + "node [ " * 31_000)                        # 217 KB of unclosed lists
    result = run_bounded("""
        from linkgraph.inputs.gml import GmlTooLarge, decompressed, parse_gml
        try:
            decompressed(open(sys.argv[1], "rb").read())
            bomb = "parsed"
        except GmlTooLarge as exc:
            bomb = str(exc)
        graph = parse_gml(open(sys.argv[2]).read())
        result = [bomb, graph.edges, graph.problems]
    """, str(bomb), str(unclosed))
    assert result[0] == "GML file decompresses to more than 67108864 bytes (not parsed)"
    assert result[1:] == [[], ["GML: the file ends inside 31001 open list(s)"]]


def test_gml_nested_lists_do_not_cut_a_node_short():
    from linkgraph.inputs.gml import parse_gml

    text = """# comment line
    graph [ directed 1
      node [ id 0 label "www.alpha.com" graphics [ x 1.0 y 2.0 fill "#ff0000" ] value 1 ]
      node [ id 1 graphics [ w 3 ] label "http://www.beta.org/b" ]
      edge [ source 0 graphics [ line [ point [ x 0 ] ] ] target 1 ]
      edge [ source 1 target 0 ]
      edge [ source 1 target 9 ]
      edge [ source 0 target "unclosed ]
    ]"""
    graph = parse_gml(text)
    assert graph.edges == [("http://www.alpha.com", "http://www.beta.org/b"),
                           ("http://www.beta.org/b", "http://www.alpha.com"), ("http://www.beta.org/b", None)]
    assert graph.problems == ["GML: a string without its closing quote", "GML: an edge cut off at the end of the file"]


def sitemap_xml(entries: list[str], encoding: str = "UTF-8") -> bytes:
    return (f'<?xml version="1.0" encoding="{encoding}"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + "".join(entries) + "</urlset>").encode()


def test_sitemaps_with_unknown_encodings_bad_dates_and_too_many_urls(tmp_path):
    files = {
        "unknown.xml": sitemap_xml(["<url><loc>http://www.alpha.com/</loc></url>"], "x-no-such-encoding"),
        "multibyte.xml": sitemap_xml(["<url><loc>http://www.alpha.com/</loc></url>"], "EUC-JP"),
        "dates.xml": sitemap_xml([
            "<url><loc>http://www.alpha.com/a</loc><lastmod>0001-01-01T00:00:00+01:00</lastmod></url>",
            "<url><loc>http://www.alpha.com/b</loc><lastmod>9999-12-31T23:59:59-01:00</lastmod></url>",
            "<url><loc>http://www.alpha.com/c</loc><lastmod>2026-01-01</lastmod></url>"]),
        "50001.xml.gz": gzip.compress(sitemap_xml(
            [f"<url><loc>http://www.alpha.com/{i}</loc></url>" for i in range(50_001)]), mtime=0),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    result = run_bounded("""
        from linkgraph.inputs.sitemaps import parse_sitemap
        result = {}
        for path in sys.argv[1:]:
            rows = parse_sitemap(open(path, "rb").read(), path)
            result[path.rsplit("/", 1)[-1]] = [(r["kind"], r["reason"]) for r in rows]
    """, *[str(tmp_path / name) for name in files])
    assert result == {
        "unknown.xml": [["reject", R.MALFORMED_RECORD]],
        "multibyte.xml": [["reject", R.MALFORMED_RECORD]],
        "dates.xml": [["reject", R.MALFORMED_TIMESTAMP], ["reject", R.MALFORMED_TIMESTAMP], ["entry", None]],
        "50001.xml.gz": [["reject", R.OVERSIZED_FIELD]],
    }


def test_a_legal_50_mb_sitemap_is_parsed_in_bounded_memory(tmp_path):
    path = tmp_path / "big.xml"
    filler = "p" * 960
    path.write_bytes(sitemap_xml([f"<url><loc>http://www.alpha.com/{i}/{filler}</loc><priority>0.5</priority>"
                                  "</url>" for i in range(50_000)]))
    assert path.stat().st_size > 49 * MiB
    result = run_bounded("""
        from linkgraph.inputs.sitemaps import parse_sitemap
        rows = parse_sitemap(open(sys.argv[1], "rb").read(), sys.argv[1])
        result = [len(rows), sum(r["kind"] == "entry" for r in rows)]
    """, str(path))
    assert result == [50_000, 50_000]


@pytest.mark.slow
def test_dat_header_and_malformed_lines_are_accounted_for(spark, tmp_path):
    path = tmp_path / "graph.dat"
    path.write_text("3 4 1\n"                                  # the header: not a record
                    "0 http://www.alpha.com/\n1 http://www.beta.org/\n"
                    "0 1\n1 0\n"
                    "0 1 7\n"                                  # three tokens: MALFORMED_RECORD
                    "\n"                                       # blank: not a record
                    "lonely\n")                                # one token: MALFORMED_RECORD
    config = fresh_config(tmp_path)
    report = ingest_step(spark, config, str(path), "dat")
    assert_accounted(spark, config, report, expected_read=4)
    assert report.written == 2 and report.rejected_by_reason == {R.MALFORMED_RECORD: 2}
    details = sorted(r.detail for r in Lake(spark, config.lake).read(S.REJECTS_TABLE).collect())
    assert details == ["0 1 7", "lonely"]


@pytest.mark.slow
def test_gml_bomb_ingest_is_one_reject_not_a_driver_memory_error(spark, tmp_path):
    path = tmp_path / "bomb.gml.gz"
    path.write_bytes(gzip_bomb(1 << 30, prefix=b'graph [ node [ id 0 label "a.com" ] '))
    config = fresh_config(tmp_path)
    report = ingest_step(spark, config, str(path), "gml")
    assert_accounted(spark, config, report, expected_read=1)
    assert report.rejected_by_reason == {R.MALFORMED_RECORD: 1}
    (reject,) = Lake(spark, config.lake).read(S.REJECTS_TABLE).collect()
    assert "decompresses to more than" in reject.detail
