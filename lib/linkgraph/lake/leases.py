"""Leases: one run at a time of a step that must not run twice at once (``linkgraph reward``).

A run holds ``<lake>/_leases/<step>.json`` while it works: its run id, host, process id, a token
naming the holder and the time of its last heartbeat, renewed every ``HEARTBEAT_SECONDS`` by a
daemon thread.  A start that finds the lease held by a live run stops with ``StepAlreadyRunning``
before it writes anything.  A lease is live when its holder

* is this process: the holder has not left its ``with`` block (its token is held);
* is another process on this host: that process exists and renewed the lease within
  ``LEASE_SECONDS``;
* is on another host: it renewed the lease within ``LEASE_SECONDS`` (clocks of the drivers agree
  to well within that).

So a run killed on this machine is taken over at once, one killed elsewhere ``LEASE_SECONDS``
after its last heartbeat.  The lease file is written whole (locally: a temporary file renamed
over it) and read back after writing: of two starts in the same instant, the one whose write
came last proceeds.  On an object store without conditional writes that check has a window of
a round trip; the ``step_runs`` record of the run narrows what such a race can do (see
``linkgraph.steps.reward``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from types import TracebackType

from pyspark.sql import SparkSession

from linkgraph.errors import PathNotFound, StepAlreadyRunning
from linkgraph.lake import paths

log = logging.getLogger(__name__)

LEASE_DIRECTORY = "_leases"
HEARTBEAT_SECONDS = 10.0
LEASE_SECONDS = 120.0

_HELD: set[str] = set()   # tokens of the leases this process holds


def lease_path(lake_root: str, step: str) -> str:
    return f"{lake_root}/{LEASE_DIRECTORY}/{step}.json"


def read_lease(spark: SparkSession, path: str) -> dict | None:
    """The lease at ``path``; None when there is none (or it cannot be parsed: a torn write of a
    holder that died writing it)."""
    if not paths.exists(spark, path):
        return None
    try:
        lease = json.loads(paths.read_bytes(spark, path).decode("utf-8"))
    except (ValueError, PathNotFound):
        return None
    return lease if isinstance(lease, dict) else None


def is_live(lease: dict, now: float | None = None) -> bool:
    """True when the holder of ``lease`` is still running (module docstring)."""
    fresh = (time.time() if now is None else now) - float(lease.get("heartbeat_at", 0.0)) < LEASE_SECONDS
    if lease.get("host") != socket.gethostname():
        return fresh
    pid = int(lease.get("pid", -1))
    if pid == os.getpid():
        return lease.get("token") in _HELD
    return fresh and _process_exists(pid)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # exists, another user's
        return True
    return pid > 0


def describe(lease: dict) -> str:
    age = time.time() - float(lease.get("heartbeat_at", 0.0))
    return (f"run {lease.get('run_id')} on {lease.get('host')} (pid {lease.get('pid')}), "
            f"started {lease.get('started')}, last heartbeat {age:.0f}s ago")


class Lease:
    """``with Lease(spark, lake_root, step, run_id):`` the run of ``step`` holds the lake's lease
    for it, or the ``with`` is refused with ``StepAlreadyRunning`` (module docstring).  When the
    block ends, normally or with an error, the lease file is removed; a ``BaseException`` that is
    not an error (an interrupt, a test's simulated crash) leaves it as a kill would, for the next
    start to find not live (this process no longer holds it)."""

    def __init__(self, spark: SparkSession, lake_root: str, step: str, run_id: str) -> None:
        self.spark, self.step, self.path = spark, step, lease_path(lake_root, step)
        self.token = uuid.uuid4().hex
        self.content = {"step": step, "run_id": run_id, "host": socket.gethostname(), "pid": os.getpid(),
                        "token": self.token, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{step}", daemon=True)

    def __enter__(self) -> Lease:
        self._refuse_if_held()
        _HELD.add(self.token)
        self._write()
        mine = read_lease(self.spark, self.path)
        if mine is None or mine.get("token") != self.token:
            _HELD.discard(self.token)
            raise StepAlreadyRunning(f"linkgraph {self.step}: another run took the lease at the same moment "
                                     f"({describe(mine) if mine else 'unreadable'}); this start is refused")
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        _HELD.discard(self.token)
        if kind is None or issubclass(kind, Exception):   # the run ended (a kill or interrupt leaves it)
            _remove(self.spark, self.path)

    def update(self, run_id: str) -> None:
        """Record that the holder works on ``run_id`` (a run it took over)."""
        self.content["run_id"] = run_id
        self._write()

    def _refuse_if_held(self) -> None:
        held = read_lease(self.spark, self.path)
        if held is not None and is_live(held):
            raise StepAlreadyRunning(
                f"linkgraph {self.step} is already running in this lake: {describe(held)}; this start is refused "
                f"(rerun once it has ended; a run whose process is gone is completed by the next start)")
        if held is not None:
            log.info("%s: lease of %s is not live; taking it over", self.step, describe(held))

    def _write(self) -> None:
        text = json.dumps({**self.content, "heartbeat_at": time.time()}, sort_keys=True)
        local = paths.local_path(self.path)
        if local is None:
            paths.make_directory(self.spark, self.path.rsplit("/", 1)[0])
            paths.write_text(self.spark, self.path, text)
            return
        os.makedirs(os.path.dirname(local), exist_ok=True)
        temporary = f"{local}.{self.token}"
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, local)

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                self._write()
            except Exception as exc:  # noqa: BLE001 - a missed heartbeat is retried; the run goes on
                log.warning("%s: lease heartbeat failed: %s", self.step, exc)


def _remove(spark: SparkSession, path: str) -> None:
    local = paths.local_path(path)
    if local is None:
        paths.delete_tree(spark, path)
    elif os.path.exists(local):
        os.remove(local)
