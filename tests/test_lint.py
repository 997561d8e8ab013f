"""ruff (lint and import order) and mypy run with the project's configuration (pyproject.toml),
so the test command enforces them in CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_ruff_is_clean():
    result = _run("ruff", "check", "lib", "jobs", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


# mypy runs, but is not clean yet (81 errors, issue 20): most are ``DataFrame.first()`` typed
# ``Row | None`` on global aggregates, ``int | None`` Delta versions and Optional strings in the
# crawl parsers.  Remove the mark once ``mypy lib/linkgraph`` passes; a pass now is reported as XPASS.
@pytest.mark.xfail(reason="mypy lib/linkgraph not clean yet (issue 20)", strict=False)
def test_mypy_is_clean():
    result = _run("mypy", "lib/linkgraph")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr
