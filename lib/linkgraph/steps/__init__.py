"""The pipeline's steps, one module each: ``run(ctx, ...) -> Report`` reads pinned table
versions, applies the pure transforms of the domain modules and writes through
``linkgraph.tables``.

``PIPELINE`` is the order ``linkgraph run`` runs them in; notebook 01, the Airflow DAG and the
Databricks bundle are checked against it (tests/test_structure.py).  This package's ``__init__``
imports none of its modules: importing one step loads only what that step needs.
"""

from __future__ import annotations

# `linkgraph run` skips ingest-sitemaps without sitemaps, reward when `reward.in_run` says so and
# scores without seed URLs; flags run again inside scores (and after analyze in `linkgraph analyze`).
PIPELINE: tuple[str, ...] = (
    "ingest", "ingest-sitemaps", "analyze", "pagerank", "reward", "flags", "scores", "compress",
)
