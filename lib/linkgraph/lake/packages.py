"""The one place where JVM artifacts (Maven coordinates) are pinned.

They must match the Python packages pinned in ``pyproject.toml``:

* ``pyspark==4.2.0`` (Scala 2.13) with ``delta-spark==4.4.0``, whose JVM artifact for Spark 4.2
  is ``io.delta:delta-spark_4.2_2.13:4.4.0`` (Delta names its artifacts per Spark minor release).
* ``graphframes-py==0.12.3`` with ``io.graphframes:graphframes-spark4_2.13:0.12.3``.

Spark's own resolver (Ivy, ``spark.jars.packages``) fetches them from Maven Central on the first
run and caches them under ``~/.ivy2.5.2`` (``jars/`` holds the resolved jars); ``LINKGRAPH_IVY_DIR``
moves that cache.  On this project's build machines Maven Central serves Delta but does not serve
any GraphFrames artifact (HTTP 404 for every version, through both ``mvn`` and Spark's resolver), so
the GraphFrames JVM package is opt-in (``spark.graphframes: true`` in the config).
"""

SCALA_BINARY_VERSION = "2.13"
SPARK_VERSION = "4.2.0"
DELTA_VERSION = "4.4.0"
GRAPHFRAMES_VERSION = "0.12.3"

DELTA_PACKAGE = f"io.delta:delta-spark_4.2_{SCALA_BINARY_VERSION}:{DELTA_VERSION}"
GRAPHFRAMES_PACKAGE = f"io.graphframes:graphframes-spark4_{SCALA_BINARY_VERSION}:{GRAPHFRAMES_VERSION}"
