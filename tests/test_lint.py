"""ruff (lint and import order) and mypy run with the project's configuration (pyproject.toml),
so the test command enforces them in CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_ruff_is_clean():
    result = _run("ruff", "check", "lib", "jobs", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean():
    result = _run("mypy", "lib/linkgraph")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr
