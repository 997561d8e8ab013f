"""What the notebooks in ``notebooks/`` need outside Databricks.

On Databricks a notebook gets ``spark``, ``dbutils`` and ``display`` from the platform.  Run
anywhere else (``python notebooks/02_explore_ranks.py --lake lake``, or the test suite), the
notebook builds them from here: ``local_dbutils()`` answers ``dbutils.widgets`` from command-line
``--name value`` pairs, then ``LINKGRAPH_WIDGET_<NAME>`` environment variables, then the widget's
default; ``local_display`` prints tables and leaves figures to ``save_figure``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import matplotlib
from pyspark.sql import DataFrame

from linkgraph.errors import WidgetError as WidgetError

WIDGET_ENV_PREFIX = "LINKGRAPH_WIDGET_"


class LocalWidgets:
    """The part of ``dbutils.widgets`` the notebooks use, with Databricks' argument order:
    ``text(name, defaultValue, label)``, ``dropdown(name, defaultValue, choices, label)``, ``get``."""

    def __init__(self, values: Mapping[str, str]):
        self._given = dict(values)
        self._defined: dict[str, str] = {}

    def text(self, name: str, defaultValue: str, label: str | None = None) -> None:  # noqa: N803 (Databricks' names)
        self._defined[name] = self._given.get(name, defaultValue)

    def dropdown(self, name: str, defaultValue: str, choices: Iterable[str], label: str | None = None) -> None:  # noqa: N803
        value = self._given.get(name, defaultValue)
        if value not in list(choices):
            raise WidgetError(f"widget {name!r}: {value!r} is not one of {list(choices)}")
        self._defined[name] = value

    def get(self, name: str) -> str:
        if name not in self._defined:
            raise WidgetError(f"widget {name!r} is not defined")
        return self._defined[name]

    def getAll(self) -> dict[str, str]:  # noqa: N802 (Databricks' name)
        return dict(self._defined)

    def removeAll(self) -> None:  # noqa: N802
        self._defined.clear()


class LocalDbutils:
    def __init__(self, values: Mapping[str, str]):
        self.widgets = LocalWidgets(values)


def widget_values(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Widget values from ``LINKGRAPH_WIDGET_<NAME>`` variables, overridden by ``--name value`` /
    ``--name=value`` arguments (names lower case, ``-`` read as ``_``)."""
    argv = sys.argv[1:] if argv is None else argv
    environ = os.environ if environ is None else environ
    values = {key[len(WIDGET_ENV_PREFIX):].lower(): value
              for key, value in environ.items() if key.startswith(WIDGET_ENV_PREFIX)}
    args = iter(argv)
    for arg in args:
        if not arg.startswith("--"):
            continue
        name, sep, value = arg[2:].partition("=")
        if not sep:
            value = next(args, "")
        values[name.replace("-", "_")] = value
    return values


def local_dbutils(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> LocalDbutils:
    """A ``dbutils`` stand-in for running a notebook's source outside Databricks; also switches
    matplotlib to its file-only Agg backend (no display here)."""
    matplotlib.use("Agg")
    return LocalDbutils(widget_values(argv, environ))


def local_display(obj: Any, rows: int = 20) -> None:
    """Databricks' ``display`` outside Databricks: DataFrames are printed, figures are not (the
    notebooks save every figure as PNG)."""
    if isinstance(obj, DataFrame):
        obj.show(rows, truncate=False)
    elif hasattr(obj, "to_string"):
        print(obj.head(rows).to_string(index=False))
    elif not hasattr(obj, "savefig"):
        print(obj)


def save_figure(fig: Any, directory: str | Path, name: str) -> Path:
    """Write ``fig`` as ``<directory>/<name>.png`` (the directory is created; ``/dbfs/…`` on
    Databricks) and return the path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    fig.savefig(path, dpi=100, bbox_inches="tight")
    return path


def sample_input_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where notebook 01 writes the built-in sample's edges: the user's cache directory
    (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``linkgraph/sample``), a fixed place of the user's
    own, so that re-running the notebook ingests the same source (and changes nothing) without a
    path in the shared temporary directory that another user could own or replace."""
    environ = os.environ if environ is None else environ
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "linkgraph" / "sample"
