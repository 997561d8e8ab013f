"""Opening one input file inside a Spark task and turning it into extraction rows.

Paths come from Spark's file listing (``file:/…`` for local files, written as Hadoop writes them:
not percent-encoded).  Local files are opened
directly; any other scheme (``s3://``, ``gs://``, ``hdfs://``, ``abfss://``…) through
``pyarrow.fs``, as the text inputs are (``linkgraph.inputs.textfiles.open_raw``).  Files are
streamed, never loaded whole.
"""

from __future__ import annotations

from collections.abc import Iterator

from linkgraph.inputs.crawl import extract as X
from linkgraph.inputs.crawl.warc import read_records
from linkgraph.inputs.textfiles import open_raw
from linkgraph.lake.paths import local_path


def opener(path: str):
    """A function returning a new seekable binary stream of ``path`` (a URI from Spark's file
    listing) on each call."""
    local = local_path(path)
    if local is not None:
        return lambda: open(local, "rb")
    return lambda: open_raw(path)


def display_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def rows_of_file(path: str, fmt: str, settings: X.ExtractSettings) -> Iterator[dict]:
    """Extraction rows (``CRAWL_EXTRACT`` as dicts) of one WARC (``fmt`` warc) or WAT file."""
    name = display_name(path)
    open_stream = opener(path)
    try:
        open_stream().close()
    except (OSError, ImportError, ValueError) as exc:
        yield X.file_error_row(name, exc)
        return
    records = read_records(open_stream, settings.payload_limit(fmt))
    rows_of = X.wat_rows if fmt == "wat" else X.warc_rows
    yield from rows_of(records, name, settings)
