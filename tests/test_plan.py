"""``linkgraph plan``: the engine's block planner priced with the measured per-link constants."""

from __future__ import annotations

import pytest

from linkgraph.cli import main
from linkgraph.rank.blocks import plan_blocks
from linkgraph.rank.engine import RankParams
from linkgraph.rank.hyperball import node_bytes
from linkgraph.rank.plan import (
    BALL_ITERATIONS,
    PlanInputs,
    block_plan,
    centrality_cost,
    make_plan,
    parse_count,
    shuffle_bytes_per_iteration,
)


def plan_lines(capsys, *argv: str) -> dict[str, str]:
    assert main(["plan", *argv]) == 0
    return dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())


def test_plan_at_10_billion_links_prints_the_figures_and_settings(capsys):
    """10e9 links, 1e9 pages, 400 cores with the default config (64 MiB blocks): B by bytes,
    every figure a number, and the settings Spark takes."""
    lines = plan_lines(capsys, "--links", "10e9", "--pages", "1e9", "--cores", "400")
    for key in ("shuffle_bytes_per_iteration", "checkpoint_bytes", "python_memory_per_executor", "blocks",
                "bytes_per_task", "local_disk_per_executor", "executor_memory"):
        assert int(lines[key]) > 0, key
    assert (lines["links"], lines["pages"], lines["executors"]) == ("10000000000", "1000000000", "50")
    blocks = int(lines["blocks"])
    assert blocks >= 136e9 / (64 << 20) and int(lines["bytes_per_task"]) <= 64 << 20
    assert int(lines["shuffle_bytes_per_iteration"]) == shuffle_bytes_per_iteration(10**10, 10**9, 1, blocks)
    # the checkpoint holds the compressed ranks only: less than 8 bytes a page
    assert int(lines["checkpoint_bytes"]) < 8e9
    for key in ("spark.executor.memoryOverhead", "spark.driver.memory"):
        assert lines[key][-1] in "mg" and int(lines[key][:-1]) > 0
    # Python memory is resident memory inside the overhead, never an address-space limit per worker
    assert "spark.executor.pyspark.memory" not in lines
    overhead = int(lines["spark.executor.memoryOverhead"].rstrip("mg")) << (30 if lines[
        "spark.executor.memoryOverhead"].endswith("g") else 20)
    assert overhead >= int(lines["python_memory_per_executor"])
    assert int(lines["spark.sql.shuffle.partitions"]) >= 800


def test_plan_uses_the_engines_planner():
    """The plan's blocks are ``plan_blocks``' (the function ``BlockEngine.plan`` calls): one task
    for a graph that fits the budget, at least 3 × the cores otherwise, capped by vertices."""
    params = RankParams()
    small = make_plan(PlanInputs(1_000_000, 100_000, 1, 8), params)
    assert small.single_task and small.blocks == 1 and small.shuffle_bytes_per_iteration == 0
    assert plan_blocks(100_000, 1_000_000, params, 1, 8).single_task
    mid = block_plan(PlanInputs(100_000_000, 10_000_000, 1, 16), params)
    assert mid.n_blocks >= 48 and not mid.single_task
    capped = block_plan(PlanInputs(10_000_000, 100_000_000, 1, 1), RankParams(block_max_vertices=1_000_000))
    assert capped.n_blocks >= 100


def test_parse_count_and_bad_flags(capsys):
    assert parse_count("10e9") == 10**10 and parse_count("1_000") == 1000 and parse_count("400") == 400
    with pytest.raises(ValueError):
        parse_count("1.5")
    assert main(["plan", "--links", "ten", "--pages", "1e9"]) == 2
    assert "--links must be a whole number" in capsys.readouterr().err
    assert main(["plan", "--links", "1e9", "--pages", "1e8", "--cores", "0"]) == 2
    assert "--cores must be positive" in capsys.readouterr().err
    assert main(["plan", "--links", "1e9"]) == 2
    assert "give --links and --pages, or --lake" in capsys.readouterr().err


def test_cluster_config_carries_the_plans_settings(capsys):
    """conf/cluster.yaml's memory settings are the plan's for the inputs its comment names."""
    from pathlib import Path

    from linkgraph.lake.config import load_config

    conf = Path(__file__).resolve().parents[1] / "conf" / "cluster.yaml"
    lines = plan_lines(capsys, "--links", "10e9", "--pages", "1e9", "--cores", "400", "--conf", str(conf))
    assert "linkgraph plan --links 10e9 --pages 1e9 --cores 400" in conf.read_text()
    spark = load_config(conf).spark
    for key in ("spark.executor.cores", "spark.executor.memory", "spark.executor.memoryOverhead"):
        assert spark.conf[key] == lines[key], key
    assert "spark.executor.pyspark.memory" not in spark.conf
    assert spark.shuffle_partitions >= int(lines["spark.sql.shuffle.partitions"])
    assert int(spark.driver_memory.rstrip("g")) << 10 >= int(lines["spark.driver.memory"].rstrip("m"))


def test_scaling_doc_quotes_the_plan(capsys):
    """docs/scaling.md's quoted `linkgraph plan` output is what the code prints."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "scaling.md").read_text()
    command = "$ linkgraph plan --links 10e9 --pages 1e9 --cores 400 --conf conf/cluster.yaml\n"
    quoted = doc[doc.index(command) + len(command):].split("```", 1)[0].strip().splitlines()
    assert main(["plan", "--links", "10e9", "--pages", "1e9", "--cores", "400",
                 "--conf", str(root / "conf" / "cluster.yaml")]) == 0
    assert quoted == capsys.readouterr().out.strip().splitlines()


def test_plan_prices_page_level_centrality_and_says_whether_it_would_be_refused(capsys):
    """At 1e9 pages and 1e10 links every HyperBall iteration ships the block states three times and
    a merged counter per partial entry: terabytes per iteration, refused by the default 10 TiB
    limit; a 1e5-page graph fits."""
    lines = plan_lines(capsys, "--links", "10e9", "--pages", "1e9", "--cores", "400")
    cost = centrality_cost(10**9, 10**10, 256, 1_000_000, 64 << 20)
    assert int(lines["centrality_page_shuffle_bytes_per_iteration"]) == cost.shuffle_bytes_per_iteration
    assert int(lines["centrality_page_shuffle_bytes"]) == BALL_ITERATIONS * cost.shuffle_bytes_per_iteration
    assert cost.shuffle_bytes_per_iteration > 3 * 10**9 * node_bytes(256) > 10**12
    assert float(lines["centrality_page_hours"]) == pytest.approx(float(lines["centrality_page_core_hours"]) / 400,
                                                                  abs=0.01)
    assert lines["centrality_page"] == "refused"
    small = plan_lines(capsys, "--links", "1e6", "--pages", "1e5", "--cores", "8")
    assert small["centrality_page"] == "fits" and int(small["centrality_page_blocks"]) > 1

