"""Crawl inputs: link extraction from WARC and WAT files, Common Crawl host/domain graphs.

``warc`` reads records (and reports truncated or corrupt data instead of raising), ``payload``
decodes HTTP payloads and charsets, ``htmlguard`` bounds the cost of parsing a page,
``htmllinks`` parses HTML into links and page signals,
``watlinks`` reads a WAT record's link metadata into the same links, ``extract`` turns one
file's records into output rows, ``load`` runs that distributed, ``rows`` splits the rows for
the lake, ``ccgraph`` reads Common Crawl's published graphs.  Nothing here writes a table
(``linkgraph.steps.ingest_crawl`` does).  Everything but ``load``, ``rows`` and ``ccgraph`` is
plain Python (no Spark), run inside Spark tasks.
"""
