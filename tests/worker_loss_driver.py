"""Driver of the worker-loss tier, submitted to the standalone cluster by ``test_worker_loss.py``:
``worker_loss_driver.py SYNC_DIR CASE...`` runs each case of ``worker_loss_cases`` once.  At the
case's ``PAUSE_AT`` iteration it prints ``worker-loss pause CASE`` and waits until the test has
killed an executor and touched ``SYNC_DIR/CASE.resume``; then it goes on.  Each case's result
(or its error) is written to ``SYNC_DIR/CASE.json``; ``worker-loss finished`` ends the run.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

from pyspark.sql import SparkSession

from linkgraph.lake.session import use_checkpoint_dir
from worker_loss_cases import CASES, PAUSE_AT

RESUME_TIMEOUT_S = 600.0


def pause_hook(sync: Path, case: str):
    paused = []

    def progress(iteration: int) -> None:
        if iteration == PAUSE_AT[case] and not paused:
            paused.append(iteration)
            print(f"worker-loss pause {case} at {iteration}", flush=True)
            deadline = time.monotonic() + RESUME_TIMEOUT_S
            while not (sync / f"{case}.resume").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            print(f"worker-loss resumed {case}", flush=True)

    return progress, paused


def main(sync: Path, cases: list[str]) -> int:
    spark = SparkSession.builder.getOrCreate()
    use_checkpoint_dir(spark, str(sync / "checkpoints"))
    for case in cases:
        progress, paused = pause_hook(sync, case)
        started = time.monotonic()
        try:
            outcome = {"result": CASES[case](spark, progress), "error": None}
        except Exception:  # noqa: BLE001 - the test reports it
            outcome = {"result": None, "error": traceback.format_exc()}
        outcome.update(paused=bool(paused), seconds=time.monotonic() - started)
        (sync / f"{case}.json").write_text(json.dumps(outcome))
        print(f"worker-loss done {case} in {outcome['seconds']:.1f}s error={outcome['error'] is not None}", flush=True)
    print("worker-loss finished", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
