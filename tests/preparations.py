"""Slow preparations that need no Spark (Airflow's own environment and its DagBag probe,
``make dist``), started in background threads as soon as the session knows its tests.

Their time is mostly pip downloads and process starts, so they overlap the Spark tests instead of
adding to the suite's time; the tests that need one run last (``conftest.py`` orders them) and
wait for its result.  A fixture calls :func:`result`, which runs the preparation then and there
when the session did not start it (a single test selected with ``-k``, say).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-preparation")
_started: dict[str, Future] = {}
_workdir: Path | None = None


def workdir(name: str) -> Path:
    """A fresh directory for preparation ``name``, under one temporary root removed by :func:`shutdown`."""
    global _workdir
    if _workdir is None:
        _workdir = Path(tempfile.mkdtemp(prefix="linkgraph-test-preparations-"))
    path = _workdir / name
    path.mkdir()
    return path


def start(name: str, prepare: Callable[[], Any]) -> None:
    """Run ``prepare`` in the background under ``name``, unless it has been started already."""
    if name not in _started:
        _started[name] = _pool.submit(prepare)


def result(name: str, prepare: Callable[[], Any]) -> Any:
    """What ``prepare`` returned (started now if it was not), re-raising its exception."""
    start(name, prepare)
    return _started[name].result()


def shutdown() -> None:
    """Drop what has not started (a session that stopped early), wait for what is running, then
    remove the preparations' directories."""
    _pool.shutdown(wait=True, cancel_futures=True)
    if _workdir is not None:
        shutil.rmtree(_workdir, ignore_errors=True)
