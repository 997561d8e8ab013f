"""Text inputs read line by line in bounded memory (JSONL, CSV, arcs, dat; GML's byte stream).

Spark's text, JSON and CSV sources hold a whole line in memory however long it is, and a small
gzip file can hold a line of gigabytes.  Here every file is read by a Python task as a stream
(gzip, bz2 and xz decompressed on the fly, by file extension), cut into lines, and

* a line longer than ``max_line_bytes`` is not kept: it becomes one *problem row* (its length and
  its first ``KEPT_PREFIX_BYTES`` bytes) while the rest of it is skipped, and the next line is read
  as usual;
* a file whose (decompressed) bytes exceed ``max_file_bytes`` is read up to the limit (whole
  lines only) and ends with one problem row; the bytes after it are not read.

A problem row becomes a ``MALFORMED_RECORD`` reject.  Memory per task is a line plus a batch of
lines (``BATCH_BYTES``), whatever the input.  An uncompressed file is read in splits of
``SPLIT_BYTES`` by several tasks (a split owns the lines that start in it); a compressed one is
read by one task.  Blank lines are skipped, a trailing ``\\r`` is removed.

Files are opened without following a symbolic link (``O_NOFOLLOW``) unless ``follow_symlinks``;
the listing (``linkgraph.lake.paths.list_input_files``) already leaves symlinks out, this covers a file
replaced by a link after it was listed.  Remote files are read with ``pyarrow.fs`` (s3/s3a, gs,
hdfs, abfs/abfss; ``dbfs:/`` through the ``/dbfs`` mount).
"""

from __future__ import annotations

import bz2
import errno
import gzip
import lzma
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import quote

import pyarrow as pa

from linkgraph.errors import InputSchemaError
from linkgraph.lake.paths import local_path, scheme

CHUNK_BYTES = 1 << 20
BATCH_BYTES = 8 << 20
BATCH_LINES = 8192
SPLIT_BYTES = 128 << 20
KEPT_PREFIX_BYTES = 1000
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")
_ARROW_SCHEMES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "hdfs": "hdfs",
                  "abfs": "abfs", "abfss": "abfs"}

# the rows of :func:`read_splits`: a line's bytes, or a problem (then ``value`` is null)
LINE_FILE, LINE_FIRST, LINE_VALUE, LINE_PROBLEM = "file", "first", "value", "problem"
LINES_DDL = f"{LINE_FILE} string, {LINE_FIRST} boolean, {LINE_VALUE} binary, {LINE_PROBLEM} string"
SPLITS_DDL = "file string, start long, end long"


@dataclass(frozen=True)
class LineLimits:
    """``ingest.max_line_bytes``, ``ingest.max_file_bytes`` and ``ingest.follow_symlinks``."""

    max_line_bytes: int = 1 << 20
    max_file_bytes: int = 16 << 30
    follow_symlinks: bool = False


class SymlinkRefused(InputSchemaError):
    """An input file is a symbolic link and ``ingest.follow_symlinks`` is false."""


def is_compressed(path: str) -> bool:
    return path.lower().endswith(COMPRESSED_SUFFIXES)


def check_readable_scheme(path: str) -> None:
    """Stop with ``InputSchemaError`` when the bounded reader cannot open ``path``'s file system."""
    found = scheme(path)
    if local_path(path) is None and found not in _ARROW_SCHEMES and found != "dbfs":
        raise InputSchemaError(f"input {path}: scheme '{found}' cannot be read as a text input "
                               f"(supported: file, dbfs, {', '.join(sorted(_ARROW_SCHEMES))})")


def open_raw(path: str, follow_symlinks: bool = False) -> IO[bytes]:
    """``path`` opened for binary reading (seekable), a symlink refused unless ``follow_symlinks``."""
    local = local_path(path)
    if local is None and scheme(path) == "dbfs":
        local = "/dbfs/" + path.split(":", 1)[1].lstrip("/")
    if local is not None:
        flags = os.O_RDONLY | (0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0))
        try:
            descriptor = os.open(local, flags)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SymlinkRefused(f"{path} is a symbolic link (ingest.follow_symlinks is false)") from None
            raise
        return os.fdopen(descriptor, "rb", buffering=0)
    check_readable_scheme(path)
    from_uri: Callable[[str], tuple[Any, str]] = pa.fs.FileSystem.from_uri
    found = scheme(path) or ""
    # a listed path is written as Hadoop writes it (``#``, ``?``, ``%`` are characters of the name);
    # pyarrow parses a URI, so they are escaped
    file_system, inner = from_uri(_ARROW_SCHEMES[found] + ":" + quote(path[len(found) + 1:], safe="/:@"))
    return file_system.open_input_file(inner)


def decompressing(raw: IO[bytes], path: str) -> IO[bytes]:
    """``raw`` decompressed by ``path``'s extension (.gz, .bz2, .xz), else ``raw`` itself."""
    lower = path.lower()
    if lower.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if lower.endswith(".bz2"):
        return bz2.BZ2File(raw)
    if lower.endswith(".xz"):
        return lzma.LZMAFile(raw)
    return raw


def plan_splits(files: Iterable[tuple[str, int]], max_file_bytes: int,
                split_bytes: int = SPLIT_BYTES) -> list[tuple[str, int, int]]:
    """``(file, start, end)`` byte ranges: one per compressed file (end -1: to its end), uncompressed
    files cut every ``split_bytes`` up to ``max_file_bytes``."""
    splits: list[tuple[str, int, int]] = []
    for path, size in files:
        if is_compressed(path) or size <= split_bytes:
            splits.append((path, 0, -1))
            continue
        for start in range(0, min(size, max_file_bytes + 1), split_bytes):
            splits.append((path, start, start + split_bytes))
    return splits


@dataclass
class _Line:
    """What :class:`LineCutter` yields: a whole line's bytes, or a problem."""

    value: bytes | None
    problem: str | None
    start: int


class LineCutter:
    """Cuts a byte stream into lines within the limits (see the module docstring).

    ``offset``: the position in the (decompressed) file of the stream's first byte; with
    ``skip_first`` (a stream opened in the middle of a file) the bytes up to the first newline are
    skipped."""

    def __init__(self, limits: LineLimits, offset: int = 0, skip_first: bool = False) -> None:
        self.limits = limits
        self.position = offset  # of the next byte read
        self.line_start = offset
        self.pending = bytearray()
        self.overlong = 0  # bytes of the current line when it is over the limit, else 0
        self.skipping = skip_first

    def feed(self, chunk: bytes) -> Iterator[_Line]:
        """The lines completed by ``chunk``."""
        begin = 0
        while begin < len(chunk):
            newline = chunk.find(b"\n", begin)
            end = len(chunk) if newline < 0 else newline
            self._take(chunk, begin, end)
            if newline < 0:
                break
            line = self._finish()
            self.line_start = self.position + newline + 1
            if line is not None:
                yield line
            begin = newline + 1
        self.position += len(chunk)

    def _take(self, chunk: bytes, begin: int, end: int) -> None:
        if self.skipping:
            return
        if self.overlong:
            self.overlong += end - begin
            return
        self.pending += chunk[begin:end]
        if len(self.pending) > self.limits.max_line_bytes:
            self.overlong = len(self.pending)
            del self.pending[KEPT_PREFIX_BYTES:]

    def _finish(self) -> _Line | None:
        pending, overlong, skipped = self.pending, self.overlong, self.skipping
        self.pending, self.overlong, self.skipping = bytearray(), 0, False
        if skipped:
            return None
        if overlong:
            prefix = bytes(pending).decode("utf-8", errors="replace")
            return _Line(None, f"line of {overlong} bytes exceeds ingest.max_line_bytes "
                               f"({self.limits.max_line_bytes}); it starts: {prefix}", self.line_start)
        value = bytes(pending[:-1] if pending.endswith(b"\r") else pending)
        return _Line(value, None, self.line_start) if value.strip() else None

    def end(self) -> Iterator[_Line]:
        """The last line of a stream that does not end in a newline."""
        line = self._finish()
        if line is not None:
            yield line

    def file_limit(self) -> _Line:
        return _Line(None, f"file exceeds ingest.max_file_bytes ({self.limits.max_file_bytes} bytes "
                           f"decompressed): the rest, from byte {self.line_start} on, is not read", self.line_start)


def cut_lines(stream: IO[bytes], limits: LineLimits, start: int = 0, end: int = -1) -> Iterator[_Line]:
    """The lines of ``stream`` that start in ``[start, end)`` (``end`` -1: to the end), each whole
    or as a problem, and a problem when the file exceeds ``max_file_bytes``."""
    if start > 0:
        stream.seek(start - 1)
    cutter = LineCutter(limits, offset=max(start - 1, 0), skip_first=start > 0)
    while True:
        chunk = stream.read(CHUNK_BYTES)
        if not chunk:
            yield from cutter.end()
            return
        over = cutter.position + len(chunk) - limits.max_file_bytes
        if over > 0:
            chunk = chunk[: len(chunk) - over]
        for line in cutter.feed(chunk):
            if end >= 0 and line.start >= end:
                return
            yield line
        if end >= 0 and cutter.line_start >= end:
            return
        if over > 0:
            if end < 0 or cutter.line_start < end:
                yield cutter.file_limit()
            return


def _batch(path: str, rows: list[tuple[bool, bytes | None, str | None]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([path] * len(rows), pa.string()), pa.array([r[0] for r in rows], pa.bool_()),
         pa.array([r[1] for r in rows], pa.binary()), pa.array([r[2] for r in rows], pa.string())],
        names=[LINE_FILE, LINE_FIRST, LINE_VALUE, LINE_PROBLEM])


def read_split(path: str, start: int, end: int, limits: LineLimits) -> Iterator[pa.RecordBatch]:
    """Arrow batches (``LINES_DDL``) of one split's lines; ``first`` marks the first line of a file."""
    try:
        raw = open_raw(path, limits.follow_symlinks)
    except SymlinkRefused as exc:
        yield _batch(path, [(start == 0, None, str(exc))])
        return
    with raw, decompressing(raw, path) as stream:
        rows: list[tuple[bool, bytes | None, str | None]] = []
        size = 0
        first = start == 0
        for line in cut_lines(stream, limits, start, end):
            rows.append((first, line.value, line.problem))
            first = False
            size += len(line.value or b"")
            if len(rows) >= BATCH_LINES or size >= BATCH_BYTES:
                yield _batch(path, rows)
                rows, size = [], 0
        if rows:
            yield _batch(path, rows)


def split_reader(limits: LineLimits) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function reading the splits (``SPLITS_DDL`` rows) it is given."""
    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for split in batch.to_pylist():
                yield from read_split(split["file"], split["start"], split["end"], limits)
    return read


def first_line(path: str, limits: LineLimits) -> bytes | None:
    """The first non-blank line of one file (None: no line); a problem line raises ``InputSchemaError``."""
    raw = open_raw(path, limits.follow_symlinks)
    with raw, decompressing(raw, path) as stream:
        for line in cut_lines(stream, limits):
            if line.problem is not None:
                raise InputSchemaError(f"input {path}: the header line cannot be read: {line.problem[:200]}")
            return line.value
    return None
