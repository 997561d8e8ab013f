import dataclasses
from pathlib import Path

import pytest
import yaml

from linkgraph.cli import main
from linkgraph.lake.config import Config, ConfigError, config_from_dict, load_config
from linkgraph.lake.config_analysis import TermRule
from linkgraph.lake.configdoc import flow, render_config_doc, render_local_conf, sections
from linkgraph.lake.configkey import doc_of, unit_of

CONF_DIR = Path(__file__).resolve().parents[1] / "conf"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


@pytest.mark.parametrize("name", ["local.yaml", "cluster.yaml"])
def test_shipped_configs_load(name):
    config = load_config(CONF_DIR / name)
    assert isinstance(config, Config)
    assert config.ingest.self_links == "reject"


def test_cluster_config_leaves_master_to_the_platform():
    assert load_config(CONF_DIR / "cluster.yaml").spark.master is None


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match=r"unknown config key 'ingest\.max_url_lenght'"):
        config_from_dict({"ingest": {"max_url_lenght": 10}})


def test_unknown_section_is_named():
    with pytest.raises(ConfigError, match=r"unknown config key 'ranking'"):
        config_from_dict({"ranking": {}})


def test_wrong_type_is_named():
    with pytest.raises(ConfigError, match=r"'spark\.shuffle_partitions' must be an integer"):
        config_from_dict({"spark": {"shuffle_partitions": "many"}})


def test_invalid_policy_is_named():
    with pytest.raises(ConfigError, match=r"ingest\.self_links"):
        config_from_dict({"ingest": {"self_links": "maybe"}})


def test_lake_override():
    assert Config().with_lake_path("/data/lake").lake.path == "/data/lake"


def test_cli_stops_on_unknown_key_with_exit_2_and_writes_nothing(tmp_path, capsys):
    conf = tmp_path / "bad.yaml"
    conf.write_text("ingest:\n  self_link: keep\n")
    edges = tmp_path / "edges.jsonl"
    edges.write_text('{"from_url": "http://a.com/", "to_url": "http://b.com/"}\n')
    lake = tmp_path / "lake"
    code = main(["ingest", "--input", str(edges), "--lake", str(lake), "--conf", str(conf)])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown config key 'ingest.self_link'" in err
    assert err.count("\n") == 1
    assert not lake.exists()


def test_an_active_session_without_a_checkpoint_dir_gets_the_configured_one(monkeypatch):
    """Databricks builds the session: get_spark returns it, with the checkpoint directory steps need."""
    from types import SimpleNamespace

    from pyspark.sql import SparkSession

    from linkgraph.lake.config import SparkConfig
    from linkgraph.lake.session import get_spark

    directories: list[str] = []
    context = SimpleNamespace(getCheckpointDir=lambda: directories[-1] if directories else None,
                              setCheckpointDir=directories.append)
    platform_session = SimpleNamespace(sparkContext=context)
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: platform_session))
    assert get_spark(SparkConfig(checkpoint_dir="dbfs:/linkgraph/lake/checkpoints")) is platform_session
    assert get_spark(SparkConfig(checkpoint_dir="dbfs:/elsewhere")) is platform_session   # one already set: kept
    assert directories == ["dbfs:/linkgraph/lake/checkpoints"]


@pytest.mark.parametrize("value", [0, -1])
def test_max_list_entries_must_be_positive(value):
    with pytest.raises(ConfigError, match=r"analysis\.max_list_entries"):
        config_from_dict({"analysis": {"max_list_entries": value}})


def test_the_default_checkpoint_dir_is_the_lakes_own(monkeypatch):
    """No fixed /tmp path: without ``spark.checkpoint_dir`` (the default, and conf/local.yaml)
    get_spark sets none; each step's context puts checkpoints under its lake (``<lake>/_checkpoints``,
    removed after each command), so they are private to whoever owns the lake."""
    from types import SimpleNamespace

    from pyspark.sql import SparkSession

    from linkgraph.lake.config import SparkConfig
    from linkgraph.lake.session import checkpoint_dir_of_lake, get_spark

    assert SparkConfig().checkpoint_dir is None and load_config(CONF_DIR / "local.yaml").spark.checkpoint_dir is None
    assert "/tmp" not in (CONF_DIR / "local.yaml").read_text()
    directories: list[str] = []
    context = SimpleNamespace(getCheckpointDir=lambda: None, setCheckpointDir=directories.append)
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: SimpleNamespace(sparkContext=context)))
    get_spark(SparkConfig())
    assert directories == []
    assert checkpoint_dir_of_lake("/data/lake/") == "/data/lake/_checkpoints"


def test_rank_block_bytes_is_validated_at_load():
    assert config_from_dict({}).rank.block_bytes == 64 * 1024 * 1024
    with pytest.raises(ConfigError, match=r"rank\.block_bytes must be at least 1024"):
        config_from_dict({"rank": {"block_bytes": 10}})
    with pytest.raises(ConfigError, match=r"'rank\.block_bytes' must be an integer"):
        config_from_dict({"rank": {"block_bytes": "big"}})


def test_graphframes_jar_goes_on_spark_jars_instead_of_the_coordinate(tmp_path):
    from linkgraph.lake.packages import GRAPHFRAMES_PACKAGE
    from linkgraph.lake.session import jars, jvm_packages

    jar = tmp_path / "graphframes.jar"
    jar.write_bytes(b"")
    spark = config_from_dict({"spark": {"graphframes": True, "graphframes_jar": str(jar),
                                        "conf": {"spark.jars": "/opt/other.jar"}}}).spark
    assert jars(spark) == f"/opt/other.jar,{jar}"
    assert GRAPHFRAMES_PACKAGE not in jvm_packages(spark)
    assert GRAPHFRAMES_PACKAGE in jvm_packages(config_from_dict({"spark": {"graphframes": True}}).spark)
    missing = config_from_dict({"spark": {"graphframes_jar": str(tmp_path / "nope.jar")}}).spark
    with pytest.raises(ConfigError, match=r"spark\.graphframes_jar: no such file"):
        jars(missing)


# --- one declaration per key: conf/local.yaml and docs/configuration.md are rendered from it ------

def test_every_key_declares_its_meaning():
    """Each field of each section is declared with ``key(default, doc, unit)``: a non-empty meaning,
    and a unit that is None or non-empty."""
    declared = [(name, field) for name, section in sections() for field in dataclasses.fields(section)]
    declared += [("reward.term_rules[]", field) for field in dataclasses.fields(TermRule)]
    assert len(declared) > 100
    missing = [f"{name}.{field.name}" for name, field in declared if not doc_of(field).strip()]
    assert not missing, f"keys without a meaning (declare them with key(default, doc, unit)): {missing}"
    assert all(unit_of(field) is None or unit_of(field).strip() for _, field in declared)


def test_the_local_conf_is_the_built_in_defaults():
    """conf/local.yaml (and what the renderer writes) loads to exactly ``Config()``, key by key."""
    assert load_config(CONF_DIR / "local.yaml") == Config()
    rendered = yaml.safe_load(render_local_conf())
    assert config_from_dict(rendered) == Config()
    assert {name: set(keys) for name, keys in rendered.items()} == {
        name: {field.name for field in dataclasses.fields(section)} for name, section in sections()}


@pytest.mark.parametrize("value", [None, True, 0, -3, 0.85, 1e-6, 1e20, 30.0, "zeta3", "local[*]", "4", "true",
                                   "null", "yes", "", ",", "a: b", "# x", "click here", "s3a://x/y", "5g",
                                   ["NOFOLLOW", "UGC"], [], {}, {"spark.x": "false", "a": 1.5}])
def test_a_rendered_value_reads_back_as_itself(value):
    assert yaml.safe_load(f"k: {flow(value)}") == {"k": value}
    assert yaml.safe_load(f"k: [{flow(value)}]") == {"k": [value]}


@pytest.mark.parametrize("name", ["cluster.yaml", "databricks.yaml"])
def test_shipped_configs_hold_only_overrides(name):
    """conf/cluster.yaml and conf/databricks.yaml set only keys whose values differ from the built-in
    defaults (a map, such as ``spark.conf``, compared whole: it is replaced whole), and the Shipped
    files table of docs/configuration.md names each of them."""
    data = yaml.safe_load((CONF_DIR / name).read_text())
    defaults = Config()
    keys = [(section, key, value) for section, values in data.items() for key, value in values.items()]
    assert keys
    same = [f"{section}.{key}" for section, key, value in keys
            if getattr(getattr(config_from_dict({section: {key: value}}), section), key)
            == getattr(getattr(defaults, section), key)]
    assert not same, f"conf/{name} repeats built-in defaults (leave them out): {same}"
    row = next(line for line in DOCS.read_text().splitlines() if line.startswith(f"| `conf/{name}` |"))
    assert not [f"{section}.{key}" for section, key, _ in keys if f"`{section}.{key}" not in row], row


def test_the_docs_keep_a_heading_per_section_and_the_prose():
    """Other pages link to ``configuration.md#<section>``; the prose around the key tables stays."""
    text = render_config_doc()
    for name, section in sections():
        heading = text.index(f"\n### {name}\n")
        end = text.find("\n#", heading + 1)
        table = text[heading:end]
        assert "| key | type | default | unit | meaning |" in table, name
        for field in dataclasses.fields(section):
            assert f"| `{field.name}` |" in table, f"{name}.{field.name}"
    for heading in ("## Which config a command uses", "## Validation", "## Shipped files",
                    "## Environment variables", "## Paths and URIs as you write them"):
        assert f"\n{heading}\n" in text
