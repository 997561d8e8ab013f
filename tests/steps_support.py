"""Running pipeline steps from tests: each call gets its own ``StepContext``, as each command does.

Every step is ``linkgraph.steps.<module>.run(ctx, params)``; these wrap the two that many tests
run only to prepare a lake.  A ``Params`` field that names a config key (``pagerank.Params.tol``,
say) is applied by ``run`` as the flag is (``registry.with_params``).
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from linkgraph.inputs.edges import IngestReport
from linkgraph.lake.config import Config
from linkgraph.lake.context import StepContext
from linkgraph.steps import ingest, pagerank
from linkgraph.steps.pagerank import RankRunReport


def ingest_step(spark: SparkSession, config: Config, input_path: str, fmt: str | None = None) -> IngestReport:
    """``linkgraph ingest --input INPUT_PATH --format FMT`` (no format: from the file extension)."""
    return ingest.run(StepContext.create(spark, config), ingest.Params(input_path, fmt))


def pagerank_step(spark: SparkSession, config: Config, params: pagerank.Params | None = None) -> RankRunReport:
    """``linkgraph pagerank`` with ``params`` (default: one global vector, no warm start)."""
    return pagerank.run(StepContext.create(spark, config), params or pagerank.Params())
