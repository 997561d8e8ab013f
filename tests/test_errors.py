"""One error hierarchy (linkgraph.errors): what the CLI maps to exit 2, and the modules that re-export it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from linkgraph import errors
from linkgraph.cli import EXIT_USAGE, main


def test_usage_errors_derive_from_one_base_and_keep_their_old_homes():
    from linkgraph.compress import CompressedIndexError
    from linkgraph.inputs.readers import InputSchemaError
    from linkgraph.lake.config import ConfigError
    from linkgraph.lake.paths import PathNotFound
    from linkgraph.lake.reliability import ConflictRetriesExhausted
    from linkgraph.rank.gf import GraphFramesUnavailable
    from linkgraph.rank.teleport import EmptyTeleportError
    from linkgraph.steps.prune import PruneNotFound
    from linkgraph.steps.scores import ScoresError

    usage = (ConfigError, InputSchemaError, errors.MissingTableError, PathNotFound, ScoresError, EmptyTeleportError,
             GraphFramesUnavailable, PruneNotFound, errors.CompressedTableMissing)
    assert all(issubclass(cls, errors.UsageError) for cls in usage)
    assert issubclass(errors.MissingTableError, InputSchemaError)  # callers catching InputSchemaError catch it too
    assert issubclass(errors.CompressedTableMissing, CompressedIndexError)
    assert not issubclass(CompressedIndexError, errors.UsageError)  # a corrupt build is not the user's doing
    assert not issubclass(ConflictRetriesExhausted, errors.UsageError)


def test_cli_maps_a_usage_error_to_exit_2(tmp_path, capsys):
    conf = tmp_path / "bad.yaml"
    conf.write_text("rank:\n  dampng: 0.85\n")
    assert main(["compress", "--conf", str(conf), "--lake", str(tmp_path / "lake")]) == EXIT_USAGE
    assert "linkgraph compress: error:" in capsys.readouterr().err


def test_cli_maps_a_missing_input_to_exit_2(tmp_path, capsys):
    assert main(["ingest", "--input", str(tmp_path / "missing.jsonl"), "--lake", str(tmp_path / "lake")]) == EXIT_USAGE
    assert "not found" in capsys.readouterr().err


def test_if_present_a_missing_required_input_exits_3_before_spark_starts(tmp_path, capsys):
    missing = tmp_path / "2026-11-29"
    for argv in (["ingest", "--input", str(missing), "--format", "jsonl"], ["ingest-sitemaps", "--input", str(missing)]):
        assert main([*argv, "--if-present", "--lake", str(tmp_path / "lake")]) == errors.EXIT_NO_INPUT
        out = capsys.readouterr().out
        assert "no input at " in out and f"{missing}: nothing to do" in out
    assert not (tmp_path / "lake").exists()


@pytest.mark.slow
def test_a_rank_run_of_a_given_id_is_found_again_on_the_same_links(spark, tmp_path, capsys):
    """A scheduler's re-run of a day (``--run-id``) finds the run it finished and writes nothing;
    once the links change, the same id ranks again."""
    from delta.tables import DeltaTable

    lake = str(tmp_path / "lake")
    edges = tmp_path / "edges.jsonl"
    edges.write_text('{"from_url": "http://www.alpha.com/", "to_url": "http://www.beta.org/"}\n'
                     '{"from_url": "http://www.beta.org/", "to_url": "http://www.gamma.net/"}\n')
    assert main(["ingest", "--input", str(edges), "--lake", lake]) == 0
    assert main(["pagerank", "--run-id", "2026-11-29-pagerank", "--lake", lake]) == 0
    version = DeltaTable.forPath(spark, f"{lake}/pagerank").history(1).first()["version"]
    capsys.readouterr()
    assert main(["pagerank", "--run-id", "2026-11-29-pagerank", "--warm-start", "--lake", lake]) == 0
    assert "finished before on this links version: nothing run" in capsys.readouterr().out
    assert DeltaTable.forPath(spark, f"{lake}/pagerank").history(1).first()["version"] == version
    assert spark.read.format("delta").load(f"{lake}/rank_runs").count() == 1
    assert {r.run_id for r in spark.read.format("delta").load(f"{lake}/pagerank").collect()} == {"2026-11-29-pagerank"}
    assert main(["pagerank", "--run-id", "bad id", "--lake", lake]) == EXIT_USAGE


@pytest.mark.parametrize("cls", [errors.ScoresError, errors.PruneNotFound, errors.GraphFramesUnavailable])
def test_usage_errors_are_value_errors(cls):
    assert issubclass(cls, ValueError)


# --- every command with a bad argument: exit 2, one line naming it, no traceback ----------------------

def _one_error_line(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"linkgraph {command}: error: ") or lines[0].startswith("linkgraph: error: "), err
    return lines[0]


def _bad_conf(tmp_path, text: str) -> str:
    path = tmp_path / f"conf{abs(hash(text))}.yaml"
    path.write_text(text)
    return str(path)


# (argv, a fragment of the one line); {tmp} is the test's directory.  None of these starts Spark.
BAD_ARGUMENTS = [
    (["ingest", "--input", "{tmp}/missing.jsonl"], "input not found"),
    (["ingest", "--input", "{tmp}/edges.jsonl", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    (["ingest", "--input", "{tmp}/edges.unknown"], "cannot tell the format"),
    (["frontier", "--bogus"], "unrecognized arguments: --bogus"),
    (["ingest-sitemaps", "--input", "{tmp}/no-sitemaps"], "not found"),
    (["import-authority", "--input", "{tmp}/edges.jsonl", "--format", "moz"], "argument --format: invalid choice"),
    (["pagerank", "--max-iter", "many"], "argument --max-iter: invalid int value: 'many'"),
    (["pagerank", "--tol", "-1"], "rank.tol"),
    (["pagerank", "--conf", "conf:rank: {not_converged_exit_code: 256}"], "rank.not_converged_exit_code must be in 0..255"),
    (["analyze", "--conf", "conf:rank: {block_max_vertices: 0}"], "rank.block_max_vertices must be positive"),
    (["links", "sideways", "http://www.alpha.com/"], "argument direction: invalid choice"),
    (["links", "out", "http://www.alpha.com/", "--limit", "0"], "--limit must be positive"),
    (["scores", "--conf", "conf:reward: {feed_url_pattern: 'jobs(['}"], "reward.feed_url_pattern is not a valid regular"),
    (["frontier", "--top", "0"], "--top must be positive"),
    (["frontier", "--output", "{tmp}/no/such/dir/top.jsonl"], "does not exist"),
    (["compress", "--conf", "{tmp}/missing.yaml"], "config file not found"),
    (["reward", "--rounds", "-1"], "--rounds must not be negative"),
    (["reward", "--signals", "{tmp}/missing.jsonl"], "not found"),
    (["run", "--input", "{tmp}/missing.jsonl"], "input not found"),
    (["run", "--conf", "conf:spark: {shuffle_partitions: 0}"], "spark.shuffle_partitions must be positive"),
    (["nosuch"], "invalid choice: 'nosuch'"),
]


@pytest.mark.parametrize(("argv", "fragment"), BAD_ARGUMENTS, ids=[" ".join(a[:2]) for a, _ in BAD_ARGUMENTS])
def test_every_command_with_a_bad_argument_exits_2_with_one_line(tmp_path, capsys, argv, fragment):
    (tmp_path / "edges.jsonl").write_text('{"from_url": "http://www.alpha.com/", "to_url": "http://www.beta.org/"}\n')
    (tmp_path / "edges.unknown").write_text("")
    args = [_bad_conf(tmp_path, a[5:]) if a.startswith("conf:") else a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main([*args, "--lake", str(tmp_path / "lake")] if argv != ["nosuch"] else args) == EXIT_USAGE
    line = _one_error_line(capsys, argv[0])
    assert fragment in line


def test_config_values_that_failed_only_at_run_time_stop_at_load():
    from linkgraph.lake.config import ConfigError, config_from_dict

    for section, key, value in (("reward", "feed_url_pattern", "("), ("rank", "block_max_vertices", 0),
                                ("rank", "not_converged_exit_code", 256), ("rank", "not_converged_exit_code", -1),
                                ("rank", "blocks", -1), ("rank", "exclude_link_types", ["DOFOLLOW"])):
        with pytest.raises(ConfigError, match=f"{section}.{key}"):
            config_from_dict({section: {key: value}})
    # Java-only syntax Python cannot compile is left to Spark
    assert config_from_dict({"reward": {"feed_url_pattern": r"\p{Alpha}+/feed"}}).reward.feed_url_pattern


def test_the_working_directory_config_is_not_read_implicitly(tmp_path, monkeypatch):
    from linkgraph.cli import build_parser, resolve_config

    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "local.yaml").write_text("spark:\n  conf:\n    spark.jars.packages: evil:evil:1.0\n")
    monkeypatch.chdir(tmp_path)
    config = resolve_config(build_parser().parse_args(["analyze", "--lake", "lake"]))
    assert "spark.jars.packages" not in config.spark.conf and config.lake.path == "lake"


@pytest.mark.slow
def test_spark_side_user_errors_exit_2_with_one_line(spark, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    gml_dir = tmp_path / "graphs"
    gml_dir.mkdir()
    (gml_dir / "a.gml").write_text('graph [ node [ id 0 label "a.com" ] ]')
    assert main(["ingest", "--input", str(gml_dir), "--format", "gml", "--lake", lake]) == EXIT_USAGE
    assert "is a directory: --format gml reads one file" in _one_error_line(capsys, "ingest")

    assert main(["analyze", "--lake", lake]) == EXIT_USAGE     # nothing ingested yet
    assert "not found in lake" in _one_error_line(capsys, "analyze")

    edges = tmp_path / "edges.jsonl"
    edges.write_text('{"from_url": "http://www.alpha.com/", "to_url": "http://www.beta.org/"}\n')
    assert main(["ingest", "--input", str(edges), "--lake", lake]) == 0
    capsys.readouterr()
    assert main(["pagerank", "--personalization", "no_such_table", "--lake", lake]) == EXIT_USAGE
    assert "--personalization table 'no_such_table' not found" in _one_error_line(capsys, "pagerank")


def test_a_table_location_holding_other_data_exits_2_with_one_line_naming_it(spark, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    edges = tmp_path / "edges.jsonl"
    edges.write_text('{"from_url": "http://www.alpha.com/", "to_url": "http://www.beta.org/"}\n')
    parquet_pages, file_links = tmp_path / "a" / "pages", tmp_path / "b" / "links"
    parquet_pages.mkdir(parents=True)
    pq.write_table(pa.table({"url": ["http://www.alpha.com/"]}), parquet_pages / "part-00000.parquet")
    file_links.parent.mkdir()
    file_links.write_text("not a table\n")
    for table, what in ((parquet_pages, "a directory of 1 entries without _delta_log"), (file_links, "a file")):
        assert main(["ingest", "--input", str(edges), "--lake", str(table.parent)]) == EXIT_USAGE
        line = _one_error_line(capsys, "ingest")
        assert f"table '{table.name}' cannot be created at {table}: it is {what}, not a Delta table" in line
    assert [p.name for p in parquet_pages.iterdir()] == ["part-00000.parquet"]     # left as it was
    assert file_links.read_text() == "not a table\n"


def test_import_authority_with_a_wrong_delimiter_keeps_the_source_and_exits_2(spark, tmp_path, capsys):
    from linkgraph.lake.config import config_from_dict
    from linkgraph.lake.delta import Lake
    from linkgraph.lake.schemas import EXTERNAL_AUTHORITY_TABLE

    lake = str(tmp_path / "lake")
    good = tmp_path / "opr.csv"
    good.write_text("domain,page_rank_decimal\nalpha.com,5.5\nbeta.org,2.0\n")
    assert main(["import-authority", "--input", str(good), "--format", "openpagerank", "--lake", lake]) == 0
    capsys.readouterr()
    bad = tmp_path / "opr-semicolons.csv"
    bad.write_text("domain,page_rank_decimal\nalpha.com;6.0\nbeta.org;1.0\n")
    assert main(["import-authority", "--input", str(bad), "--format", "openpagerank", "--lake", lake]) == EXIT_USAGE
    line = _one_error_line(capsys, "import-authority")
    assert "no valid openpagerank row (2 unreadable" in line
    table = Lake(spark, config_from_dict({"lake": {"path": lake}}).lake).read(EXTERNAL_AUTHORITY_TABLE)
    assert sorted((r.domain, r.authority) for r in table.collect()) == [("com.alpha", 0.55), ("org.beta", 0.2)]


@pytest.mark.e2e
def test_a_command_that_ends_leaves_no_checkpoints_behind(tmp_path):
    """A command that started its own session removes its application's checkpoint directory when
    it ends with a result or a usage error (here: a lake without tables, exit 2)."""
    lake = tmp_path / "lake"
    lake.mkdir()
    done = subprocess.run([sys.executable, "-m", "linkgraph.cli", "pagerank", "--lake", str(lake)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "checkpoints under" in done.stderr                     # the session made its directory
    assert [p.name for p in (lake / "_checkpoints").iterdir()] == []
