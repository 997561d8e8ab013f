"""Test support: stop a step right after a chosen Delta commit, as a crash there would.

``install()`` registers ``CRASH_HOOK`` in ``linkgraph.lake.delta.COMMIT_OBSERVERS`` (production code
registers nothing there).  With ``LINKGRAPH_CRASH_AFTER_COMMITS`` set, the hook counts the commits
of the process (every commit ``Lake`` reports: a MERGE that changed no row is not one) and right
after the N-th one (value ``N``), or after the first commit to a table (value: the table's name),
SIGKILLs its own process group (driver, its JVM, Python workers: a job started in a session of
its own, see ``crash_launch.py``), leaving exactly the commits made so far.  A ``:raise`` suffix
raises ``SimulatedCrash`` instead, for in-process tests: only ``finally`` blocks run on its way
out, and none of them writes to a table, so the lake is what a SIGKILL at that point would leave.
Unset: nothing is counted.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

from linkgraph.lake import delta

CRASH_AFTER_COMMITS = "LINKGRAPH_CRASH_AFTER_COMMITS"
# the command that runs ``linkgraph`` with the hook installed (``reliability_support.CliProcess``)
LAUNCHER = [sys.executable, str(Path(__file__).with_name("crash_launch.py"))]

log = logging.getLogger(__name__)


class SimulatedCrash(BaseException):
    """Raised by the crash hook in ``raise`` mode.  A ``BaseException``, so no ``except Exception``
    on its way out (conflict retries, the CLI's error handler) turns it into anything else."""


class CrashHook:
    """Counts commits and stops the process at the one ``LINKGRAPH_CRASH_AFTER_COMMITS`` names;
    ``tables`` lists the tables of the commits counted since the last ``reset``."""

    def __init__(self) -> None:
        self.commits = 0
        self.tables: list[str] = []

    def reset(self) -> None:
        self.commits, self.tables = 0, []

    def __call__(self, table: str) -> None:
        setting = os.environ.get(CRASH_AFTER_COMMITS)
        if not setting:
            return
        self.commits += 1
        self.tables.append(table)
        target, _, mode = setting.partition(":")
        if (self.commits < int(target)) if target.isdigit() else (table != target):
            return
        log.warning("crash hook: stopping after commit %d (%s)", self.commits, table)
        if mode == "raise":
            self.commits = 0   # the next attempt counts its own commits; ``tables`` keeps them all
            raise SimulatedCrash(f"simulated crash after commit to {table}")
        os.killpg(os.getpgrp(), signal.SIGKILL)


CRASH_HOOK = CrashHook()


def install() -> CrashHook:
    """Register the hook with ``Lake`` (once per process) and return it."""
    if CRASH_HOOK not in delta.COMMIT_OBSERVERS:
        delta.COMMIT_OBSERVERS.append(CRASH_HOOK)
    return CRASH_HOOK


def arm(monkeypatch, setting: str) -> CrashHook:
    """The next step of this process stops as ``setting`` says (``"N:raise"``, ``"TABLE"``, ...);
    counts start from zero.  ``monkeypatch`` undoes the setting at the end of the test."""
    install()
    monkeypatch.setenv(CRASH_AFTER_COMMITS, setting)
    CRASH_HOOK.reset()
    return CRASH_HOOK
