"""The reliability drills: the tests marked ``drill``, which the default test run deselects.

    python bench/drills.py [-k EXPRESSION] [pytest options ...]

Each drill breaks something mid-run and checks what is left and what a re-run makes of it:
``ingest``, ``pagerank``, ``reward`` SIGKILLed in their own processes (the whole process group)
and ``analyze``, ``compress`` and the reward run dying after each of their commits in turn
(tests/test_crash_safety.py, tests/test_reward.py); an executor SIGKILLed in every iterative loop
on a Spark standalone cluster of two workers (tests/test_worker_loss.py); ``linkgraph run``
submitted with spark-submit to that cluster, an executor killed mid-PageRank, and its tables
compared with a local run's (tests/test_standalone_cluster.py); races forced between two ingests
(tests/test_concurrency.py) and between an ingest and a prune (tests/test_reward.py); a lake file
corrupted under a running ingest (tests/test_bad_input.py).  They take from 20 s to minutes each,
most of it Spark starts in new processes, so they live here rather than in the Quick-start suite.

Runs ``python -m pytest -m drill`` from the repository root in this interpreter (extra
arguments go to pytest), then prints one line per drill (outcome, seconds) and ends with
``drills_passed=``, ``drills_failed=`` and ``drills_seconds=`` (wall time of the pytest run).
The exit status is pytest's.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# a JUnit test case's child element -> the outcome it records (none: passed)
VERDICTS = {"failure": "failed", "error": "error", "skipped": "skipped"}


def outcomes(junit_xml: Path) -> list[tuple[str, str, float]]:
    """(test id, outcome, seconds) of each test case of a pytest JUnit XML report."""
    cases = []
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        verdicts = [VERDICTS[child.tag] for child in case if child.tag in VERDICTS]
        outcome = verdicts[0] if verdicts else "passed"
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        cases.append((name, outcome, float(case.get("time", 0.0))))
    return cases


def main(argv: list[str] | None = None) -> int:
    extra = sys.argv[1:] if argv is None else argv
    with tempfile.TemporaryDirectory(prefix="linkgraph-drills-") as work:
        report = Path(work) / "drills.xml"
        started = time.monotonic()
        finished = subprocess.run(
            [sys.executable, "-m", "pytest", "-m", "drill", "-q", "-p", "no:cacheprovider",
             f"--junitxml={report}", *extra],
            cwd=REPO, check=False,
        )
        seconds = time.monotonic() - started
        cases = outcomes(report) if report.exists() else []
    print()
    for name, outcome, case_seconds in cases:
        print(f"{outcome:>8} {case_seconds:8.1f} s  {name}")
    print(f"drills_passed={sum(outcome == 'passed' for _, outcome, _ in cases)}")
    print(f"drills_failed={sum(outcome in ('failed', 'error') for _, outcome, _ in cases)}")
    print(f"drills_seconds={seconds:.1f}")
    return finished.returncode


if __name__ == "__main__":
    sys.exit(main())
