"""Every iterative step survives the loss of an executor mid-loop, on a real Spark standalone
cluster (master + 2 workers, one core each, on loopback).

One driver (``worker_loss_driver.py``, submitted once) runs each case of ``worker_loss_cases``:
PageRank, personalised PageRank, reward rounds, hop depth, components and centrality, each on a
tiny graph.  At the case's pause iteration, past its first reliable checkpoint, the driver waits;
the test SIGKILLs one executor JVM (its cached blocks and shuffle files go with it, as with a lost
spot instance) and lets the driver go on while the worker starts a replacement, so the next case
again has two executors.  Each case must finish with the result of an undisturbed run of the same
function in the local session.  State kept with ``localCheckpoint`` fails here: its blocks are
gone with the executor and no lineage is left to recompute them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from standalone_cluster import StandaloneCluster
from worker_loss_cases import CASES, PAUSE_AT, TOLERANCE

pytestmark = [pytest.mark.cluster, pytest.mark.drill]

TESTS = Path(__file__).resolve().parent
REPLACEMENT_TIMEOUT_S = 300.0
RUN_TIMEOUT_S = 1500.0
# small and few partitions (no adaptive coalescing: the state stays spread over both executors)
SUBMIT_ARGS = [
    "--deploy-mode", "client", "--driver-memory", "768m", "--executor-memory", "640m",
    "--conf", "spark.executor.cores=1", "--conf", "spark.cores.max=2", "--conf", "spark.log.level=WARN",
    "--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.default.parallelism=2",
    "--conf", "spark.sql.adaptive.enabled=false", "--conf", "spark.ui.enabled=false",
    "--conf", "spark.sql.codegen.wholeStage=false", "--conf", "spark.sql.codegen.factoryMode=NO_CODEGEN",
]


class Disturbed:
    """The cluster run: each case's outcome (result or error), the executors killed, the log."""

    def __init__(self, sync: Path, log: Path, killed: dict[str, int], seconds: float):
        self.sync, self.log, self.killed, self.seconds = sync, log, killed, seconds

    def outcome(self, case: str) -> dict:
        path = self.sync / f"{case}.json"
        assert path.exists(), f"{case} did not finish: {self.log.read_text(errors='replace')[-4000:]}"
        return json.loads(path.read_text())


def wait_for_executors(cluster: StandaloneCluster, count: int, gone: set[int], deadline: float) -> list[int]:
    """The executor pids once ``count`` run and none of ``gone`` is among them."""
    while time.monotonic() < deadline:
        pids = cluster.executor_pids()
        if len(pids) >= count and not gone & set(pids):
            return pids
        time.sleep(0.5)
    raise AssertionError(f"{count} executors not running: {cluster.executor_pids()} (killed: {gone})")


def kill_at_each_pause(cluster: StandaloneCluster, submitted: subprocess.Popen, log: Path, sync: Path
                       ) -> dict[str, int]:
    """Watch ``log``: at each ``worker-loss pause CASE``, SIGKILL one of two executors and let the
    driver resume.  Returns case -> the pid killed."""
    killed: dict[str, int] = {}
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        while submitted.poll() is None and time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            for line in text.splitlines():
                if line.startswith("worker-loss pause ") and line.split()[2] not in killed:
                    case = line.split()[2]
                    pid = wait_for_executors(cluster, 2, set(killed.values()), deadline)[0]
                    os.kill(pid, signal.SIGKILL)
                    killed[case] = pid
                    (sync / f"{case}.resume").touch()
            time.sleep(0.2)
        submitted.wait(timeout=max(deadline - time.monotonic(), 1.0))
        return killed
    finally:
        if submitted.poll() is None:
            os.killpg(submitted.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def disturbed(tmp_path_factory) -> Disturbed:
    work = tmp_path_factory.mktemp("worker-loss")
    sync, log = work / "sync", work / "driver.log"
    sync.mkdir()
    started = time.monotonic()
    cluster = StandaloneCluster(work / "cluster", workers=2, cores=1, memory="1g")
    try:
        cluster.start()
        submitted = cluster.submit_in_background(str(TESTS / "worker_loss_driver.py"), [str(sync), *CASES],
                                                 SUBMIT_ARGS, log)
        killed = kill_at_each_pause(cluster, submitted, log, sync)
        assert submitted.returncode == 0, log.read_text(errors="replace")[-4000:]
    finally:
        cluster.stop()
    return Disturbed(sync, log, killed, time.monotonic() - started)


def assert_same(actual: list, expected: list, tolerance: float) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        if tolerance:
            assert got[:-1] == list(want[:-1])
            assert got[-1] == pytest.approx(want[-1], abs=tolerance, rel=0), (got, want)
        else:
            assert got == list(want)


@pytest.mark.parametrize("case", list(CASES))
def test_an_iterative_step_survives_an_executor_killed_mid_loop_with_the_undisturbed_result(spark, disturbed, case):
    outcome = disturbed.outcome(case)
    assert outcome["paused"], f"{case} ended before iteration {PAUSE_AT[case]}"
    assert case in disturbed.killed, f"no executor was killed during {case}"
    assert outcome["error"] is None, outcome["error"][-3000:]
    assert outcome["result"], case
    assert_same(outcome["result"], CASES[case](spark, None), TOLERANCE[case])


def test_the_driver_saw_each_executor_loss(disturbed):
    text = disturbed.log.read_text(errors="replace")
    assert text.count("worker-loss resumed ") == len(CASES)
    assert "Lost executor" in text or "lost executor" in text.lower(), text[-4000:]
    print(f"worker-loss tier: {disturbed.seconds:.0f}s for {len(CASES)} cases on the cluster")
