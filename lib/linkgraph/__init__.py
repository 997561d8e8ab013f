"""linkgraph: link-graph analytics for a focused web crawler, on Spark and Delta Lake."""

__version__ = "0.1.0"
