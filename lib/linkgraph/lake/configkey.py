"""One config key, declared once: ``key(default, doc, unit)`` is the ``dataclasses.field`` of a
section's key, its type the field's annotation.

The meaning (``doc``, a line or two) and the unit (``bytes, > 0``, ``seconds``, ``share in [0, 1]``,
or the values it takes) travel in the field's metadata; ``linkgraph.lake.configdoc`` renders
``conf/local.yaml`` and the key reference of ``docs/configuration.md`` from them.
"""

from __future__ import annotations

import copy
from dataclasses import Field, field
from typing import Any, TypeVar

T = TypeVar("T")


def key(default: T, doc: str, unit: str | None = None) -> T:
    """A config key with its default, what it means and its unit (None: none, or the type says it).

    A list or map default is copied for every instance (a ``default_factory``)."""
    metadata = {"doc": doc, "unit": unit}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def doc_of(declared: Field[Any]) -> str:
    """The meaning a key declares ('' for a field not declared with ``key``)."""
    return str(declared.metadata.get("doc") or "")


def unit_of(declared: Field[Any]) -> str | None:
    """The unit a key declares, or None."""
    unit = declared.metadata.get("unit")
    return None if unit is None else str(unit)
