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

# Transitive dependencies of the Delta package that Spark 4.2 ships in its own ``jars/`` (the same or
# newer versions): Spark's class loaders are parent-first, so its copies are the ones loaded anyway.  Left
# out of the resolution (``spark.jars.excludes``, spark-submit's ``--exclude-packages``), they are
# not shipped with every application: without them the executors of each application fetch 13 MiB
# of jars from the driver instead of 85 MiB (hadoop-client-runtime and -api alone are 48 MiB), and
# no older Jackson, Parquet or Hadoop sits on the classpath beside Spark's.
PROVIDED_BY_SPARK = (
    "org.apache.hadoop:hadoop-client-runtime",
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.parquet:parquet-column",
    "org.apache.parquet:parquet-common",
    "org.apache.parquet:parquet-encoding",
    "org.apache.parquet:parquet-format-structures",
    "org.apache.parquet:parquet-hadoop",
    "org.apache.parquet:parquet-jackson",
    "com.fasterxml.jackson.core:jackson-databind",
    "com.fasterxml.jackson.core:jackson-core",
    "com.fasterxml.jackson.core:jackson-annotations",
    "com.github.luben:zstd-jni",
    "org.xerial.snappy:snappy-java",
    "io.airlift:aircompressor",
    "org.apache.logging.log4j:log4j-core",
    "org.apache.logging.log4j:log4j-api",
    "org.apache.logging.log4j:log4j-slf4j2-impl",
    "org.slf4j:slf4j-api",
    "org.roaringbitmap:RoaringBitmap",
    "commons-pool:commons-pool",
    "com.google.code.findbugs:jsr305",
    "org.locationtech.jts:jts-core",
)
EXCLUDED_PACKAGES = ",".join(PROVIDED_BY_SPARK)
