"""Hostile edge files: line and file bombs, invalid UTF-8 and lone surrogates, huge fields, deep GML,
symbolic links and hidden files, file names holding ``#``, ``?`` or ``%``.  Each case asserts the
reject reason, the good records kept, and bounded time and memory."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import os
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from linkgraph.inputs.textfiles import LineLimits, cut_lines, plan_splits
from linkgraph.lake import schemas as S
from linkgraph.lake.config import config_from_dict
from linkgraph.lake.delta import Lake
from steps_support import ingest_step
from test_bad_input import gzip_bomb, run_bounded
from test_crawl import http_response, warc_record

# whole ingests watched for their time and their processes' memory: the e2e tier
pytestmark = pytest.mark.e2e

MiB = 1 << 20
GiB = 1 << 30
R = S.Reason


def edge(i: int, **extra) -> bytes:
    record = {"from_url": f"http://www.alpha.com/p{i}", "to_url": f"http://www.beta.org/q{i}", **extra}
    return json.dumps(record).encode() + b"\n"


def _program(pid: str) -> str:
    """The file name of the program process ``pid`` runs (its first argument), "" when unknown."""
    try:
        first = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return ""
    return os.path.basename(first.decode(errors="replace"))


class PeakRss:
    """Peak resident memory, sampled every 200 ms while the block runs: of this process and all
    its descendants (the Spark JVM and its Python workers) together, and of the largest Python
    worker (a descendant of the JVM running a Python executable: where a materialised line would
    sit; the suite's background preparations, children of this process, are not workers, nor is a
    child the JVM is spawning, which shares the JVM's memory until it executes its program and
    is named after the spawning thread)."""

    def __init__(self) -> None:
        self.peak = 0
        self.python_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @staticmethod
    def _tree() -> list[tuple[int, str, int, bool]]:
        """(pid, program, resident bytes, under a JVM) of this process and its descendants."""
        parents: dict[int, int] = {}
        found: dict[int, tuple[int, str, int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                _, tail = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)
            except (OSError, ValueError):
                continue
            fields = tail.split()
            parents[int(name)] = int(fields[1])
            found[int(name)] = (int(name), _program(name), int(fields[21]) * os.sysconf("SC_PAGE_SIZE"))
        under_jvm: dict[int, bool] = {os.getpid(): False}
        frontier = [os.getpid()]
        while frontier:
            parent = frontier.pop()
            jvm_side = under_jvm[parent] or (parent in found and found[parent][1] == "java")
            children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in under_jvm]
            under_jvm.update((child, jvm_side) for child in children)
            frontier += children
        return [(*found[pid], below) for pid, below in under_jvm.items() if pid in found]

    def _sample(self) -> None:
        while not self._stop.is_set():
            tree = self._tree()
            self.peak = max(self.peak, sum(rss for _, _, rss, _ in tree))
            self.python_peak = max([self.python_peak, *(rss for _, name, rss, below in tree
                                                        if below and name.startswith("python"))])
            self._stop.wait(0.2)


def stored_rejects(config) -> pa.Table:
    """The rejects table as delta-rs and pyarrow read it (no Spark)."""
    return DeltaTable(str(Path(config.lake.path) / S.REJECTS_TABLE)).to_pyarrow_table()


def assert_bounded(rejects: pa.Table) -> None:
    """Every stored text value of ``rejects`` is valid UTF-8 (pyarrow checked it) and bounded."""
    for name in [f.name for f in S.RAW_EDGE_RECORD.fields]:
        for value in rejects.column(name).to_pylist():
            assert value is None or len(value) <= S.REJECT_FIELD_CHARS, (name, len(value))
    for value in rejects.column(S.DETAIL).to_pylist():
        assert value is None or len(value) <= S.REJECT_FIELD_CHARS + 1500


def test_gzip_line_bomb_is_one_reject_and_the_rest_of_the_file_is_kept(spark, tmp_path):
    """780 KB of gzip holding one line of 768 MiB between good lines; beside it a file with lone
    surrogate escapes, a symbolic link to a system file and hidden files."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    bomb = gzip_bomb(768 * MiB, prefix=edge(1) + b'{"from_url": "http://www.alpha.com/')   # zeros: one line
    (inputs / "bomb.jsonl.gz").write_bytes(bomb + gzip.compress(b'", "to_url": "x"}\n' + edge(2)))
    assert (inputs / "bomb.jsonl.gz").stat().st_size < 1 * MiB
    (inputs / "text.jsonl").write_bytes(
        edge(3) + b'{"from_url": "http://www.alpha.com/a\\udc00b", "to_url": "http://www.beta.org/"}\n'
        + b'{"from_url": "http://www.alpha.com/\\ud800", "to_url": "http://www.beta.org/"}\n'
        + b'{"from_url": "http://www.alpha.com/p4", "to_url": "http://www.beta.org/s", "anchor_text": "\\\\udc00"}\n'
        + b'{"from_url": "http://www.alpha.com/\\ud83d\\ude00", "to_url": "http://www.beta.org/e"}\n')  # a pair
    (inputs / "passwd.jsonl").symlink_to("/etc/passwd")
    (inputs / "_SUCCESS").write_bytes(edge(90))
    (inputs / ".hidden.jsonl").write_bytes(edge(91))
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})

    # the reader alone, in a fresh interpreter under a 1 GiB address-space cap and 30 s
    problems = run_bounded("""
        from linkgraph.inputs.textfiles import LineLimits, read_split
        rows = [r for b in read_split(sys.argv[1], 0, -1, LineLimits()) for r in b.to_pylist()]
        result = [r["problem"] is not None for r in rows]
    """, "file:" + str(inputs / "bomb.jsonl.gz"))
    assert problems == [False, True, False]

    started = time.monotonic()
    with PeakRss() as memory:
        report = ingest_step(spark, config, str(inputs), "jsonl")
    # the whole ingest's time depends on the machine's load; its memory does not
    print(f"line bomb: {time.monotonic() - started:.1f}s, peak RSS of the test process tree {memory.peak / MiB:.0f} MiB, "
          f"of its largest Spark Python worker {memory.python_peak / MiB:.0f} MiB")
    # the suite's JVM and this process hold what earlier tests left, so the whole tree is only
    # printed; the line is read by a Python worker, where holding it as bytes and text would fail
    assert 0 < memory.python_peak < 1.5 * GiB   # a Spark Python worker was seen, and stayed small

    assert report.rejected_by_reason == {R.MALFORMED_RECORD: 3}, report.rejected_by_reason
    assert report.written == 5 and report.read == 8
    assert report.skipped_files == {"symlink": 1, "hidden": 2}
    assert "skipped_files=3 (hidden 2, symlink 1)" in report.summary()
    urls = {r.url for r in Lake(spark, config.lake).read(S.PAGES_TABLE).collect()}
    assert {"http://www.alpha.com/p1", "http://www.alpha.com/p2", "http://www.alpha.com/p3",
            "http://www.alpha.com/%F0%9F%98%80"} <= urls
    assert not any("?" in url or "p90" in url or "p91" in url for url in urls)
    rejects = stored_rejects(config)
    assert_bounded(rejects)
    details = sorted(rejects.column(S.DETAIL).to_pylist())
    assert sum("line of 805306" in d and "exceeds ingest.max_line_bytes (1048576)" in d for d in details) == 1
    assert sum("a lone surrogate escape" in d for d in details) == 2
    assert not any("root:" in d for d in details)


def test_invalid_utf8_and_a_31_mb_field_in_parquet_are_rejected_and_stored_bounded(spark, tmp_path):
    huge = "x" * (31 * 1000 * 1000)
    table = pa.table({
        "from_url": pa.array([b"http://www.alpha.com/ok", b"http://www.alpha.com/\xff\xfe", b"http://www.alpha.com/h"],
                             pa.binary()),
        "to_url": ["http://www.beta.org/ok", "http://www.beta.org/bad", "http://www.beta.org/h"],
        "anchor_text": ["fine", None, huge],
    })
    path = tmp_path / "edges.parquet"
    pq.write_table(table, path)
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")}})
    report = ingest_step(spark, config, str(path), "parquet")
    assert report.rejected_by_reason == {R.MALFORMED_RECORD: 1, R.OVERSIZED_FIELD: 1}
    assert report.written == 1
    rejects = stored_rejects(config)
    assert_bounded(rejects)
    by_reason = {row[S.REASON]: row for row in rejects.to_pylist()}
    bad = by_reason[R.MALFORMED_RECORD]
    assert bad[S.DETAIL].startswith("invalid UTF-8 in from_url")
    assert bad[S.FROM_URL] == "http://www.alpha.com/\ufffd\ufffd"
    original = b"http://www.alpha.com/\xff\xfe"
    assert f"the original has {len(original)} bytes, sha256 {hashlib.sha256(original).hexdigest()}" in bad[S.DETAIL]
    big = by_reason[R.OVERSIZED_FIELD]
    assert big[S.ANCHOR_TEXT] == huge[: S.REJECT_FIELD_CHARS]
    assert f"anchor_text stored clipped to {S.REJECT_FIELD_CHARS} characters" in big[S.DETAIL]
    assert f"{len(huge)} bytes, sha256 {hashlib.sha256(huge.encode()).hexdigest()}" in big[S.DETAIL]


def test_line_and_file_limits_on_arcs_csv_and_dat(spark, tmp_path):
    arcs = tmp_path / "graph.arcs"
    arcs.write_bytes(b"1 2\n" + b"3 " + b"4" * 5000 + b"\n5 6\n" + b"7 8\n" * 1000)   # 9 KB
    csv = tmp_path / "edges.csv.bz2"
    csv.write_bytes(bz2.compress(b"from_url,to_url\nhttp://a.com/1,http://b.com/1\n" + b"x" * 3000
                                 + b"\nhttp://a.com/2,http://b.com/2\n"))
    dat = tmp_path / "graph.dat"
    dat.write_bytes(b"2 1\n0 http://a.com/\n1 http://b.com/\n0 1\n")
    config = config_from_dict({"lake": {"path": str(tmp_path / "lake")},
                               "ingest": {"max_line_bytes": 2048, "max_file_bytes": 8000}})
    report = ingest_step(spark, config, str(arcs), "arcs")
    # kept: 1 2, 5 6 and the 747 lines "7 8" that end before byte 8000 (one link, 746 duplicates);
    # rejected: the over-long line and the rest of the file
    assert report.written == 3
    assert report.rejected_by_reason == {R.MALFORMED_RECORD: 2, R.DUPLICATE_MERGED: 746}
    csv_config = config_from_dict({"lake": {"path": str(tmp_path / "lake2")}, "ingest": {"max_line_bytes": 2048}})
    report = ingest_step(spark, csv_config, str(csv), "csv")
    assert (report.written, report.rejected_by_reason) == (2, {R.MALFORMED_RECORD: 1})
    report = ingest_step(spark, config_from_dict({"lake": {"path": str(tmp_path / "lake3")}}), str(dat), "dat")
    assert (report.written, report.rejected) == (1, 0)


def test_splits_of_a_plain_file_read_every_line_once():
    lines = [b"%d %s" % (i, b"y" * (i * 7 % 50)) for i in range(400)] + [b"z" * 300, b"", b"last"]
    data = b"\n".join(lines)
    limits = LineLimits(max_line_bytes=200, max_file_bytes=10 * MiB)
    whole = [(line.value, line.problem is not None) for line in cut_lines(io.BytesIO(data), limits)]
    assert len(whole) == 402 and whole[-2][1] and whole[-1] == (b"last", False)
    for split_bytes in (1, 7, 64, 1000):
        got = []
        for _, start, end in plan_splits([("f", len(data))], limits.max_file_bytes, split_bytes):
            got += [(line.value, line.problem is not None) for line in cut_lines(io.BytesIO(data), limits, start, end)]
        assert got == whole, split_bytes
    capped = list(cut_lines(io.BytesIO(data), LineLimits(200, 1000)))
    assert capped[-1].problem is not None and "max_file_bytes (1000" in capped[-1].problem
    assert all(len(b"\n".join(line.value for line in capped[:-1])) < 1000 for _ in [0])
    assert data.startswith(b"\n".join(line.value for line in capped[:-1]) + b"\n")


def test_gml_of_nested_lists_and_a_plain_gml_over_the_cap_stay_in_bounded_memory(tmp_path):
    nested = tmp_path / "nested.gml"
    with nested.open("w") as out:
        out.write('graph [ node [ id 1 label "www.alpha.com" ] node [ id 2 label "www.beta.org" ] edge [ source 1 target 2 ] ')
        for _ in range(12):   # 12 x 500,000 x 11 bytes: 66 MB of nested lists
            out.write("graphics [ " * 500_000)
    big = tmp_path / "big.gml"
    with big.open("wb") as out:
        for _ in range(70):
            out.write(b"# " + b"c" * (MiB - 3) + b"\n")
    result = run_bounded("""
        from linkgraph.inputs.gml import GmlTooLarge, parse_gml_stream
        from linkgraph.inputs.textfiles import LineLimits
        graph = parse_gml_stream(sys.argv[1], LineLimits())
        try:
            parse_gml_stream(sys.argv[2], LineLimits(max_line_bytes=64 << 20))
            big = "parsed"
        except GmlTooLarge as exc:
            big = str(exc)
        result = [graph.edges, graph.problems, big]
    """, str(nested), str(big))
    assert result[0] == [["http://www.alpha.com", "http://www.beta.org"]]
    assert result[1] == ["GML: the file ends inside 6000001 open list(s)"]
    assert result[2] == "GML file decompresses to more than 67108864 bytes (not parsed)"


# --- file names that are not URI-safe ------------------------------------------------------------

# a name cut at ``#`` or ``?`` would be a missing file, or ``a.jsonl`` read twice
ODD_NAMES = ("a", "a#b", "c?d", "a.jsonl#2", "e%41f")


def test_files_named_with_hash_question_mark_and_percent_are_each_read_once(spark, tmp_path):
    jsonl, parquet, warc = (tmp_path / name for name in ("jsonl", "parquet", "warc"))
    for directory in (jsonl, parquet, warc):
        directory.mkdir()
    expected = set()
    for i, name in enumerate(ODD_NAMES):
        (jsonl / (name if name.endswith("#2") else f"{name}.jsonl")).write_bytes(edge(i))
        pq.write_table(pa.Table.from_pylist([json.loads(edge(100 + i))]), parquet / f"{name}.parquet")
        page = f"<html><body><a href='/from-{i}'>link</a></body></html>".encode()
        (warc / f"{name}.warc.gz").write_bytes(
            warc_record("response", f"http://www.gamma.net/{i}", http_response(page), f"w{i}"))
        expected |= {f"http://www.alpha.com/p{i}", f"http://www.beta.org/q{i}", f"http://www.alpha.com/p{100 + i}",
                     f"http://www.beta.org/q{100 + i}", f"http://www.gamma.net/{i}", f"http://www.gamma.net/from-{i}"}
    lake = tmp_path / "lake"
    config = config_from_dict({"lake": {"path": str(lake)}})
    for directory, fmt in ((jsonl, "jsonl"), (parquet, "parquet"), (warc, "warc")):
        report = ingest_step(spark, config, str(directory), fmt)
        assert (report.read, report.rejected, report.upserted) == (len(ODD_NAMES), 0, len(ODD_NAMES)), fmt
    assert report.records_read == report.pages_parsed == len(ODD_NAMES)
    assert {row[S.URL] for row in spark.read.format("delta").load(str(lake / S.PAGES_TABLE)).collect()} == expected
