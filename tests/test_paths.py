"""Paths as users write them (``linkgraph.lake.paths``): relative, absolute and ``file://`` lakes and
inputs give the same tables; a remote URI gets past argument checking and fails with one clear
message; a missing input names itself and exits 2 before Spark starts."""

from __future__ import annotations

import os

import pytest
from pyspark.testing import assertDataFrameEqual

from linkgraph.lake import paths
from linkgraph.lake import schemas as S
from linkgraph.cli import main


@pytest.mark.parametrize(("written", "uri", "local"), [
    ("lake", "file:{cwd}/lake", "{cwd}/lake"),
    ("./data/../lake/", "file:{cwd}/lake", "{cwd}/lake"),
    ("/srv/lake", "/srv/lake", "/srv/lake"),
    ("file:///srv/lake", "file:/srv/lake", "/srv/lake"),
    ("file://localhost/srv/lake", "file:/srv/lake", "/srv/lake"),
    ("file:/srv/lake", "file:/srv/lake", "/srv/lake"),
    ("s3a://bucket/lake", "s3a://bucket/lake", None),
    ("abfss://c@account.dfs.core.windows.net/lake", "abfss://c@account.dfs.core.windows.net/lake", None),
    ("gs://bucket/lake", "gs://bucket/lake", None),
    ("dbfs:/linkgraph/lake", "dbfs:/linkgraph/lake", None),
])
def test_paths_resolve_relative_keep_absolute_and_uris(written, uri, local, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cwd = os.getcwd()
    assert paths.to_uri(written) == uri.format(cwd=cwd)
    assert paths.local_path(paths.to_uri(written)) == (local.format(cwd=cwd) if local else None)


def test_scheme_is_read_from_the_string_never_from_the_disk():
    assert paths.scheme("S3A://Bucket/x") == "s3a"
    assert paths.scheme("dbfs:/x") == "dbfs"
    assert paths.scheme("lake") is None and paths.scheme("/a:b") is None and paths.scheme("C:/x") is None


def test_file_paths_are_read_as_hadoop_writes_them_escapes_hash_and_question_mark_included():
    assert paths.local_path("file:/data/a%20b.warc.gz") == "/data/a%20b.warc.gz"
    assert paths.local_path("file:/data/a#b.jsonl") == "/data/a#b.jsonl"
    assert paths.local_path("file:///data/c?d.jsonl#e") == "/data/c?d.jsonl#e"
    assert paths.local_path(paths.to_uri("/data/a#b.jsonl")) == "/data/a#b.jsonl"
    assert paths.local_path("file://host/data/a#b.jsonl") is None


def test_missing_local_input_exits_2_naming_it_before_spark_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["ingest", "--input", "no-such-crawl.jsonl", "--lake", "lake"]) == 2
    err = capsys.readouterr().err
    assert "input not found: file:/" in err and "no-such-crawl.jsonl" in err
    assert not (tmp_path / "lake").exists()


def test_s3a_input_gets_past_argument_checks_and_fails_with_one_clear_line(spark, tmp_path, capsys):
    code = main(["ingest", "--input", "s3a://bucket/x", "--format", "jsonl", "--lake", str(tmp_path / "lake")])
    err = capsys.readouterr().err
    assert code in (1, 2)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "s3a" in err and "FileSystem" in err
    assert not (tmp_path / "lake").exists()


def _tables(spark, lake_dir, *tables) -> dict:
    read = lambda table: spark.read.format("delta").load(str(lake_dir / table))  # noqa: E731
    # run ids and rejection times differ between two runs; everything else must not
    drop = {S.REJECTS_TABLE: [S.REJECTED_AT], S.PAGERANK_TABLE: [S.RUN_ID]}
    return {table: read(table).drop(*drop.get(table, [])) for table in tables}


def test_relative_absolute_and_file_uri_lakes_give_identical_tables(spark, sample_lake, tmp_path, monkeypatch, capsys):
    """``sample_lake`` was written by `linkgraph run --lake lake` typed in its working directory,
    from the sample's edges at an absolute path; the same input given as relative paths (input and
    lake) and as ``file://`` URIs must give the same tables, reject ids included: the input is
    recorded as Hadoop qualifies it, whatever its spelling."""
    monkeypatch.chdir(tmp_path)
    edges = sample_lake.edges
    relative, uri = tmp_path / "relative", tmp_path / "uri"
    assert main(["ingest", "--input", os.path.relpath(edges, tmp_path), "--format", "jsonl", "--lake", "relative"]) == 0
    assert main(["ingest", "--input", f"file://{edges}", "--format", "jsonl", "--lake", f"file://{uri}"]) == 0
    assert main(["pagerank", "--lake", f"file://{uri}"]) == 0
    assert "ingest " + str(edges) + ": read=3364 " in capsys.readouterr().out   # the input as Hadoop qualifies it

    core = (S.PAGES_TABLE, S.LINKS_TABLE, S.REJECTS_TABLE)
    sample = _tables(spark, sample_lake.lake, *core, S.PAGERANK_TABLE)
    assert sample[S.REJECTS_TABLE].count() == 35
    for other in (relative, uri):
        for table, expected in _tables(spark, other, *core).items():
            assertDataFrameEqual(sample[table], expected)
    assertDataFrameEqual(sample[S.PAGERANK_TABLE], _tables(spark, uri, S.PAGERANK_TABLE)[S.PAGERANK_TABLE],
                         rtol=1e-12, atol=1e-15)
