"""The pipeline's steps, one module each, and their registry (``linkgraph.steps.registry``).

Each step module declares its ``STEP``: name, help, parameters dataclass, tables read and
written, the steps it runs after, and ``run(ctx, params) -> Report``, which reads pinned table
versions, applies the pure transforms of the domain modules and writes through
``linkgraph.lake.tables``.  A few modules beside a step hold work it delegates: ``prune`` and
``reward_runs`` (``reward``), ``ingest_write`` and ``ingest_crawl`` (``ingest``: the write half of
ingest), ``rank_state`` (``pagerank``: the resume state).  Only ``steps`` (and ``linkgraph.lake``,
which defines the writes) writes a table.  The CLI, ``linkgraph run``'s order, the Airflow DAG,
the Databricks bundle and notebook 01 are derived from the registry.  This package's ``__init__``
imports none of its modules: importing one step loads only what that step needs.
"""
