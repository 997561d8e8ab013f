"""Opening one input file inside a Spark task and turning it into extraction rows.

Paths come from Spark's file listing (``file:/…`` URIs for local files).  Local files are opened
directly; any other scheme (``s3://``, ``gs://``, ``abfss://``…) through ``fsspec`` when it is
installed on the executors (with the file system's driver, e.g. ``s3fs``).  Files are streamed,
never loaded whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from linkgraph.inputs.crawl import extract as X
from linkgraph.inputs.crawl.warc import read_records
from linkgraph.lake.paths import local_path


def opener(path: str):
    """A function returning a new seekable binary stream of ``path`` (a URI from Spark's file
    listing) on each call."""
    local = local_path(path, percent_encoded=True)
    if local is not None:
        return lambda: open(local, "rb")

    def open_remote() -> BinaryIO:
        import fsspec  # optional: only needed for remote file systems

        return fsspec.open(path, "rb").open()

    return open_remote


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
