"""Reading WARC files record by record with FastWARC, never raising on bad data.

:func:`read_records` yields a :class:`WarcRecord` for every record it could read completely and a
:class:`ReadProblem` for everything else, so that a caller can count and reject instead of
crashing:

* a record whose block is shorter than its ``Content-Length`` (file cut inside the record)
  -> ``TRUNCATED_RECORD`` with its record id;
* bytes after the last complete record that are not a readable record (file cut inside the next
  record's headers, or inside its gzip member) -> ``TRUNCATED_RECORD`` with their offset;
* a record of an uncompressed file whose ``Content-Length`` does not end it (the block is not
  followed by CRLF CRLF and the next ``WARC/`` header or the end of the file) -> ``MALFORMED_RECORD``;
  none of it is used and reading resumes at the next ``WARC/1.0``/``WARC/1.1`` line after its headers;
* a record whose block holds the next record too (its ``Content-Length`` too long by exactly that
  record: the HTTP message ends, by its own ``Content-Length`` or chunked encoding, before the block
  does and a ``WARC/1.x`` header line follows; or, without either, the block ends exactly where a
  ``WARC/1.x`` record inside it ends) -> ``MALFORMED_RECORD``: none of it is used, and in an
  uncompressed file reading resumes at the record header inside it;
* data that cannot be decompressed or parsed in the middle of a file -> ``MALFORMED_RECORD``; the
  reader then skips to the next gzip member that decompresses to a ``WARC/`` header and goes on
  (per-record gzip, the norm for WARC files), or gives up on the rest of the file (reported).

Offsets are byte offsets in the file as stored (compressed offsets for gzip files).  FastWARC reads
WARC/1.0 and /1.1 and, leniently, WARC/0.17 and /0.18 headers; uncompressed, gzip, zstd and lz4
streams are detected from their first bytes.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO

from fastwarc.warc import ArchiveIterator

TRUNCATED_RECORD = "TRUNCATED_RECORD"
MALFORMED_RECORD = "MALFORMED_RECORD"

GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN_BLOCK = 1 << 20
_HEADER_ROOM = 1 << 20
_PLAIN_HEADER_ROOM = 1 << 16
_WARC_START = b"WARC/"
_PLAIN_HEADER = re.compile(rb"\nWARC/1\.[01]\r?\n")
_HEADER_LINE_LENGTH = 12
_INNER_HEADER = re.compile(rb"\r\n\r\nWARC/1\.[01]\r\n")
_INNER_CONTENT_LENGTH = re.compile(rb"\r\nContent-Length:[ \t]*([0-9]{1,18})[ \t]*\r\n", re.I)
_INNER_HEADERS_CHECKED = 16
_DECLARED_LENGTH = re.compile(r"[0-9]{1,18}")


@dataclass
class WarcRecord:
    """One complete record.  ``payload`` is the HTTP body for records with an HTTP message
    (response/request), else the whole block; ``None`` when the block is larger than the size
    limit (then it was not read, and ``content_length`` says how large it is)."""

    offset: int
    record_type: str                      # warcinfo | response | request | metadata | ...
    record_id: str | None
    target_uri: str | None
    date: datetime | None                 # WARC-Date, timezone-aware UTC
    content_type: str | None              # the WARC Content-Type of the block
    content_length: int                   # length of the payload as declared
    http_status: int | None
    http_headers: dict[str, str]          # lower-case names; empty when not HTTP
    payload: bytes | None


@dataclass
class ReadProblem:
    """Something that could not be read: a reason code, the record id when known, the offset."""

    offset: int
    reason: str
    detail: str
    record_id: str | None = None
    target_uri: str | None = None


Opener = Callable[[], BinaryIO]


def _header(record, name: str) -> str | None:
    value = record.headers.get(name)
    return value.strip() if value else None


def _target_uri(record) -> str | None:
    uri = _header(record, "WARC-Target-URI")
    if uri and uri.startswith("<") and uri.endswith(">"):  # WARC/0.17 and some 1.0 writers
        uri = uri[1:-1].strip()
    return uri or None


def _record_date(record) -> datetime | None:
    try:
        return record.record_date
    except (ValueError, OSError):
        return None


def _http_headers(record) -> tuple[int | None, dict[str, str]]:
    if not record.is_http or record.http_headers is None:
        return None, {}
    headers = record.http_headers
    status = headers.status_code
    # first occurrence wins, as browsers do for Location / Content-Type
    values: dict[str, str] = {}
    for name, value in headers.items():
        values.setdefault(name.lower(), value)
    return (int(status) if status else None), values


class _MemberTooLarge(Exception):
    """A gzip member decompresses past its cap (a decompression bomb, or not one record per member)."""


def _member_end(stream: BinaryIO, start: int, max_output: int) -> int | None:
    """End offset of the gzip member starting at ``start``, or ``None`` if it does not end
    (cut off or corrupt).  Output is produced ``_SCAN_BLOCK`` bytes at a time and dropped, and
    :class:`_MemberTooLarge` is raised once it passes ``max_output`` bytes: memory and time stay
    bounded whatever the compression ratio."""
    stream.seek(start)
    inflater = zlib.decompressobj(wbits=31)
    consumed = start
    produced = 0
    while not inflater.eof:
        chunk = stream.read(_SCAN_BLOCK)
        if not chunk:
            return None
        data = chunk
        while data and not inflater.eof:
            try:
                produced += len(inflater.decompress(data, _SCAN_BLOCK))
            except zlib.error:
                return None
            if produced > max_output:
                raise _MemberTooLarge(f"gzip member at offset {start} decompresses to more than {max_output} bytes")
            data = inflater.unconsumed_tail
        consumed += len(chunk)
    return consumed - len(inflater.unused_data)


def _member_cap(block_length: int, max_payload_bytes: int) -> int:
    """Most bytes one record's gzip member may decompress to: its block (or the payload limit)
    plus room for the WARC headers."""
    return max(block_length, max_payload_bytes) + _HEADER_ROOM


def _block_length(record) -> int:
    try:
        return max(int(_header(record, "Content-Length") or 0), 0)
    except ValueError:
        return 0


def _plain_record_end(stream: BinaryIO, start: int, block_length: int) -> int | None:
    """End offset of an uncompressed record: headers, blank line, block, CRLF CRLF."""
    stream.seek(start)
    head = stream.read(65536)
    cut = head.find(b"\r\n\r\n")
    if cut < 0:
        return None
    return start + cut + 4 + block_length + 4


def _starts_warc_member(stream: BinaryIO, offset: int) -> bool:
    stream.seek(offset)
    try:
        return zlib.decompressobj(wbits=31).decompress(stream.read(4096), 16).startswith(b"WARC/")
    except zlib.error:
        return False


def _next_warc_member(stream: BinaryIO, after: int) -> int | None:
    """Offset of the first gzip member at or after ``after`` that begins a WARC record."""
    position = after
    while True:
        stream.seek(position)
        block = stream.read(_SCAN_BLOCK + len(GZIP_MAGIC))
        if len(block) < len(GZIP_MAGIC):
            return None
        hit = block.find(GZIP_MAGIC)
        while hit >= 0:
            if _starts_warc_member(stream, position + hit):
                return position + hit
            hit = block.find(GZIP_MAGIC, hit + 1)
        position += _SCAN_BLOCK


def _size(stream: BinaryIO) -> int:
    return stream.seek(0, io.SEEK_END)


def read_records(open_stream: Opener, max_payload_bytes: int) -> Iterator[WarcRecord | ReadProblem]:
    """Every record of one WARC file, in file order; see the module docstring.

    ``open_stream`` returns a new seekable binary stream of the file each time it is called.
    Payloads longer than ``max_payload_bytes`` are not read (``payload`` is ``None``).
    """
    with open_stream() as probe:
        size = _size(probe)
        probe.seek(0)
        is_gzip = probe.read(2) == GZIP_MAGIC[:2]
    start = 0
    while start < size:
        resume = yield from _Segment(open_stream, start, size, is_gzip, max_payload_bytes).read()
        if resume is None:
            return
        start = resume


class _Segment:
    """Records read from ``start`` on, until the end of the file or unreadable data.

    Each record is held back until the next one has been read: the last record of a file cut off
    inside its headers looks complete to FastWARC, so its end is checked against the file first.
    Records of a plain (uncompressed) file are checked as they are read (:func:`_plain_problem`).
    """

    def __init__(self, open_stream: Opener, start: int, size: int, is_gzip: bool, max_payload_bytes: int) -> None:
        self.open_stream = open_stream
        self.start, self.size, self.is_gzip = start, size, is_gzip
        self.max_payload_bytes = max_payload_bytes
        self.pending: WarcRecord | ReadProblem | None = None
        self.pending_block_length = 0
        self.last_offset: int | None = None      # offset of the last record whose block was read
        self.current_id: str | None = None
        self.base: int | None = None             # FastWARC's stream_pos may be relative to start

    def read(self):
        """Yield records and problems; return where to resume after unreadable data, or None."""
        with self.open_stream() as stream, self.open_stream() as check:
            stream.seek(self.start)
            try:
                for record in ArchiveIterator(stream, parse_http=True, auto_decode="none"):
                    resume = yield from self._record(record, check)
                    if resume is not False:
                        return resume
            except (OSError, ValueError, EOFError) as exc:
                if self.pending is not None:
                    yield self.pending
                cap = _member_cap(self.pending_block_length, self.max_payload_bytes)
                return (yield from _skip_unreadable(stream, self.start, self.last_offset, self.is_gzip,
                                                    self.current_id, exc, cap))
            return (yield from self._last(stream))

    def _record(self, record, check: BinaryIO):
        """Take one record: ``False`` to go on, else where to resume (or None) after a problem."""
        if self.base is None:
            self.base = 0 if record.stream_pos == self.start else self.start
        offset = self.base + record.stream_pos
        self.current_id = record.record_id
        block_length = _block_length(record)
        if not self.is_gzip:
            bad = _plain_problem(check, offset, block_length, self.size)
            if bad is not None:
                if self.pending is not None:
                    yield self.pending
                return (yield from _resync(check, offset, record, bad, self.size))
        length = record.content_length
        payload = record.reader.read() if length <= self.max_payload_bytes else None
        if self.pending is not None:
            yield self.pending
            self.pending = None
        self.last_offset, self.current_id = offset, None
        if payload is not None and len(payload) < length:
            yield ReadProblem(offset, TRUNCATED_RECORD,
                              f"{record.record_type} record {record.record_id} at offset {offset}: block cut off "
                              f"after {len(payload)} of {length} payload bytes", record.record_id, _target_uri(record))
            return None
        self.pending_block_length = block_length
        inner = _inner_record(record, payload) if payload is not None else None
        if inner is not None:
            if not self.is_gzip:
                return (yield from _resync(check, offset, record, inner, self.size))
            self.pending = ReadProblem(offset, MALFORMED_RECORD, f"{record.record_type} record {record.record_id} at "
                                       f"offset {offset}: {inner}; none of it is used", record.record_id,
                                       _target_uri(record))
            return False
        self.pending = _warc_record(record, offset, length, payload)
        return False

    def _last(self, stream: BinaryIO):
        """Check and yield the held-back last record of the segment."""
        pending, start, size = self.pending, self.start, self.size
        if pending is None:
            yield ReadProblem(start, TRUNCATED_RECORD, f"{size - start} bytes at offset {start} hold no readable "
                                                       f"WARC record")
            return None
        if isinstance(pending, ReadProblem):
            yield pending
            return None
        try:
            end = (_member_end(stream, pending.offset, _member_cap(self.pending_block_length, self.max_payload_bytes))
                   if self.is_gzip else _plain_record_end(stream, pending.offset, self.pending_block_length))
        except _MemberTooLarge as exc:
            yield pending
            yield ReadProblem(pending.offset, MALFORMED_RECORD,
                              f"{exc}, more than its record: the rest of the file is not read",
                              pending.record_id, pending.target_uri)
            return None
        except (OSError, ValueError, EOFError):
            end = None
        if end is None or end > size:
            yield ReadProblem(pending.offset, TRUNCATED_RECORD,
                              f"{pending.record_type} record {pending.record_id} at offset {pending.offset}: "
                              f"the file ends inside the record", pending.record_id, pending.target_uri)
            return None
        yield pending
        stream.seek(end)
        if end < size and stream.read(64).strip(b"\r\n\0 "):
            yield ReadProblem(end, TRUNCATED_RECORD,
                              f"{size - end} bytes at offset {end} after the last complete record are not a "
                              f"readable record (file cut off inside a record's headers?)")
        return None


def _warc_record(record, offset: int, length: int, payload: bytes | None) -> WarcRecord:
    status, headers = _http_headers(record)
    return WarcRecord(
        offset=offset,
        record_type=str(record.record_type),
        record_id=record.record_id,
        target_uri=_target_uri(record),
        date=_record_date(record),
        content_type=_header(record, "Content-Type"),
        content_length=length,
        http_status=status,
        http_headers=headers,
        payload=payload,
    )


def _http_message_end(payload: bytes, headers: dict[str, str]) -> tuple[int, str] | None:
    """Where the HTTP message ends in ``payload`` by its own framing, and which: the end of its
    chunked body, or its ``Content-Length``; None when it declares neither readably."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        position = 0
        while True:
            line_end = payload.find(b"\r\n", position)
            if line_end < 0:
                return None
            try:
                size = int(payload[position:line_end].split(b";", 1)[0].strip(), 16)
            except ValueError:
                return None
            if size == 0:
                trailers_end = payload.find(b"\r\n\r\n", line_end)
                return None if trailers_end < 0 else (trailers_end + 4, "chunked encoding")
            position = line_end + 2 + size + 2
            if position > len(payload):
                return None
    declared = headers.get("content-length", "").strip()
    return (int(declared), f"Content-Length {declared}") if _DECLARED_LENGTH.fullmatch(declared) else None


def _inner_record(record, payload: bytes) -> str | None:
    """Why the block of an HTTP record holds another WARC record (its ``Content-Length`` took in the
    next record), else None.  The HTTP message ending early with a ``WARC/1.x`` header line in the
    rest, or (no framing declared) the block ending exactly where a record inside it ends."""
    _status, headers = _http_headers(record)
    if not headers:
        return None
    framing = _http_message_end(payload, headers)
    if framing is not None:
        end, how = framing
        if end >= len(payload):
            return None
        found = _PLAIN_HEADER.search(b"\n" + payload[end:])
        if found is None:
            return None
        return (f"its HTTP message ends after {end} of its {len(payload)} payload bytes (by its {how}) and a "
                f"WARC record header follows at payload byte {end + found.start()}: its Content-Length takes in "
                f"the next record")
    for checked, found in enumerate(_INNER_HEADER.finditer(payload)):
        if checked >= _INNER_HEADERS_CHECKED:
            return None
        head_end = payload.find(b"\r\n\r\n", found.end() - 2, found.end() + _PLAIN_HEADER_ROOM)
        length = _INNER_CONTENT_LENGTH.search(payload, found.end() - 2, head_end + 2) if head_end >= 0 else None
        if length is not None and head_end + 4 + int(length.group(1)) in (len(payload), len(payload) - 4):
            return (f"its payload ends where the WARC record at payload byte {found.start() + 4} ends: its "
                    f"Content-Length takes in the next record")
    return None


def _plain_problem(stream: BinaryIO, offset: int, block_length: int, size: int) -> str | None:
    """Why the uncompressed record at ``offset`` is not one: its headers do not end, or its
    ``Content-Length`` does not end the block where CRLF CRLF and then the next ``WARC/`` header
    (or the end of the file) stand.  ``None`` for a good record."""
    stream.seek(offset)
    head = stream.read(_PLAIN_HEADER_ROOM)
    cut = head.find(b"\r\n\r\n")
    if cut < 0:
        return f"no end of the record's headers within {_PLAIN_HEADER_ROOM} bytes"
    block_end = offset + cut + 4 + block_length
    if block_end + 4 > size:
        return f"its Content-Length {block_length} runs past the end of the file"
    stream.seek(block_end)
    tail = stream.read(4 + len(_WARC_START))
    if tail[:4] != b"\r\n\r\n":
        return f"its block of Content-Length {block_length} is not followed by CRLF CRLF"
    following = tail[4:]
    if following and not following.startswith(_WARC_START) and (following + stream.read(64)).strip(b"\r\n\0 "):
        return f"its block of Content-Length {block_length} is not followed by a WARC record header"
    return None


def _resync(stream: BinaryIO, offset: int, record, why: str, size: int):
    """One reject for a plain record that does not validate, and where the next record header
    (``WARC/1.0`` or ``WARC/1.1`` at the start of a line) after its headers stands, or None."""
    resume = _next_plain_header(stream, offset + 1)
    what = f"{record.record_type} record {record.record_id} at offset {offset}: {why}"
    uri = _target_uri(record)
    if resume is None:
        reason = TRUNCATED_RECORD if "past the end" in why else MALFORMED_RECORD
        yield ReadProblem(offset, reason, f"{what}; no record header follows in the remaining {size - offset} bytes",
                          record.record_id, uri)
        return None
    yield ReadProblem(offset, MALFORMED_RECORD, f"{what}; reading resumes at the next record header at offset "
                                                f"{resume}", record.record_id, uri)
    return resume


def _next_plain_header(stream: BinaryIO, after: int) -> int | None:
    """Offset of the first ``WARC/1.0`` or ``WARC/1.1`` header line at the start of a line at or
    after ``after``."""
    position = max(after - 1, 0)
    while True:
        stream.seek(position)
        block = stream.read(_SCAN_BLOCK + _HEADER_LINE_LENGTH)
        if len(block) <= _HEADER_LINE_LENGTH:
            return None
        for match in _PLAIN_HEADER.finditer(block):
            found = position + match.start() + 1
            if found >= after:
                return found
        position += _SCAN_BLOCK


def _skip_unreadable(stream: BinaryIO, start: int, last_offset: int | None, is_gzip: bool,
                     record_id: str | None, exc: Exception, member_cap: int):
    """Report unreadable data and find the next readable gzip member (or give up)."""
    size = _size(stream)
    failing = start
    if last_offset is not None and is_gzip:
        try:
            failing = _member_end(stream, last_offset, member_cap) or last_offset
        except (_MemberTooLarge, OSError, ValueError, EOFError):
            failing = last_offset
    elif last_offset is not None:
        failing = last_offset
    resume = _next_warc_member(stream, failing + 1) if is_gzip else None
    which = f"record {record_id}" if record_id else "data"
    if resume is None:
        yield ReadProblem(failing, MALFORMED_RECORD,
                          f"unreadable {which} at offset {failing} ({exc}); the remaining {size - failing} bytes "
                          f"hold no readable record", record_id)
        return None
    yield ReadProblem(failing, MALFORMED_RECORD,
                      f"unreadable {which} at offset {failing} ({exc}); skipped {resume - failing} bytes to the next "
                      f"readable record at offset {resume}", record_id)
    return resume
