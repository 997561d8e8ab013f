"""Helpers of the reliability tests: CLI jobs in their own process (to SIGKILL them) and checks
that every committed Delta version of a table is complete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np
import yaml
from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from linkgraph.lake.config import TINY_DATA_SPARK_CONF

# A job in its own process starts its own Spark: local[2], tiny shuffles, no UI.
SUBPROCESS_SPARK = {
    "master": "local[2]",
    "driver_memory": "1g",
    "shuffle_partitions": 2,
    "conf": {
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.databricks.delta.snapshotPartitions": "1",
        "spark.sql.adaptive.enabled": "true",
        **TINY_DATA_SPARK_CONF,
    },
}


def write_conf(path: Path, lake: Path, **sections) -> Path:
    """A job config YAML for a subprocess: the test Spark settings, ``lake``, and ``sections``."""
    data = {"spark": {**SUBPROCESS_SPARK, "checkpoint_dir": str(path.parent / "checkpoints")},
            "lake": {"path": str(lake)}, **sections}
    path.write_text(yaml.safe_dump(data))
    return path


class CliProcess:
    """``python -m linkgraph.cli ARGS`` in a new session (so the JVM and Python workers it starts
    are in its process group), output to ``log``; ``launcher`` replaces ``python -m linkgraph.cli``
    (e.g. ``crash_hook.LAUNCHER``, which installs the crash hook first)."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None,
                 launcher: list[str] | None = None):
        self.log = log
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYSPARK_PYTHON": sys.executable, **(env or {})}
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([*(launcher or [sys.executable, "-m", "linkgraph.cli"]), *args], stdout=out,
                                         stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill_when(self, condition: Callable[[], bool], timeout: float = 600.0, poll: float = 0.05) -> None:
        """SIGKILL the whole process group (driver JVM, Python driver, workers) as soon as
        ``condition()`` holds.  Fails if the job ends first or the condition never holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"job ended (exit {self.proc.returncode}) before the kill point:\n{self.output()[-3000:]}")
            time.sleep(poll)
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        raise AssertionError(f"kill point not reached in {timeout}s:\n{self.output()[-3000:]}")

    def wait(self, timeout: float = 600.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            raise


def data_files(table_dir: Path) -> list[Path]:
    return [p for p in table_dir.rglob("*.parquet") if "_delta_log" not in p.parts]


def committed(table_dir: Path, version: int) -> bool:
    return (table_dir / "_delta_log" / f"{version:020d}.json").exists()


def versions(spark: SparkSession, table_dir: Path) -> list[int]:
    if not DeltaTable.isDeltaTable(spark, str(table_dir)):
        return []
    return sorted(r.version for r in DeltaTable.forPath(spark, str(table_dir)).history().select("version").collect())


def check_every_version(spark: SparkSession, table_dir: Path, check: Callable[[int, DataFrame], None]) -> int:
    """Read every committed version of the table (which fails if a file it references is missing)
    and run ``check(version, frame)`` on it; returns the number of versions checked."""
    checked = 0
    for version in versions(spark, table_dir):
        frame = spark.read.format("delta").option("versionAsOf", version).load(str(table_dir))
        check(version, frame)
        checked += 1
    return checked


N_HOSTS, PAGES_PER_HOST = 12, 8


def crawl_records(seed: int = 11, first_host: int = 0) -> list[dict | str]:
    """About 500 edge records over 96 pages on 12 hosts (``site<first_host>`` on), with
    duplicates, self-links and bad rows."""
    rng = np.random.default_rng(seed)
    records: list[dict | str] = []
    for i in range(480):
        h, p = first_host + int(rng.integers(N_HOSTS)), int(rng.integers(PAGES_PER_HOST))
        dh = h if rng.random() < 0.6 else first_host + int(rng.integers(N_HOSTS))
        dp = int(rng.integers(PAGES_PER_HOST))
        records.append({"from_url": f"http://www.site{h}.com/p{p}", "to_url": f"http://www.site{dh}.com/p{dp}",
                        "anchor_text": f"page {dp}", "last_seen_at": f"2026-01-{1 + i % 28:02d}T00:00:00Z"})
    records += ["{not json", {"from_url": "ftp://x.com/", "to_url": "http://www.site1.com/p1"},
                {"from_url": "http://www.site1.com/p1", "to_url": None}]
    return records


def write_jsonl(path, records) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return str(path)
