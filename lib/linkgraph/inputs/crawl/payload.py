"""HTTP payloads of crawled responses: transfer/content decoding, media type and charset.

Plain Python, used inside Spark tasks.  Every function either returns a value or raises
:class:`PayloadError` carrying the reject reason code and a detail.

Charset rules (the WHATWG "encoding sniffing" order, simplified): a byte-order mark wins, then
the HTTP ``Content-Type`` charset, then a ``<meta charset>`` / ``<meta http-equiv=Content-Type>``
in the first 4 KiB, else UTF-8 if the bytes are valid UTF-8, else windows-1252 (only when no
charset was declared: a page declaring only labels Python does not know, whose bytes are not UTF-8,
is rejected as ``UNDECODABLE_CHARSET``).  Labels map to
Python codecs as browsers do (``iso-8859-1``/``ascii`` -> windows-1252, ``gb2312``/``gbk`` ->
gb18030, ``shift_jis`` -> cp932, ``euc-kr`` -> cp949, ``big5`` -> big5hkscs); a label Python does
not know is passed over for the next rule.  Decoding replaces invalid bytes,
but a page where more than ``MAX_REPLACEMENT_SHARE`` of the characters had to be replaced is
rejected as ``UNDECODABLE_CHARSET``: its text would be noise.
"""

from __future__ import annotations

import codecs
import re
import zlib

import brotli

from linkgraph.errors import PayloadError as PayloadError

MALFORMED_RECORD = "MALFORMED_RECORD"
OVERSIZED_PAGE = "OVERSIZED_PAGE"
NON_HTML = "NON_HTML"
UNDECODABLE_CHARSET = "UNDECODABLE_CHARSET"

HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MAX_REPLACEMENT_SHARE = 0.02
_META_SCAN_BYTES = 4096

_WHATWG_ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252",
    "l1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252", "ansi_x3.4-1968": "cp1252",
    "windows-1252": "cp1252", "x-cp1252": "cp1252",
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030", "chinese": "gb18030",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "ms_kanji": "cp932",
    "windows-31j": "cp932", "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "big5": "big5hkscs",
    "x-user-defined": "cp1252", "unicode": "utf-16le", "utf-16": "utf-16le",
}
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16le"), (codecs.BOM_UTF16_BE, "utf-16be"))
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:\-]+)""", re.I)
_HTML_START = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|title|meta)\b", re.I | re.S)


def media_type(content_type: str | None) -> str | None:
    """``text/html; charset=utf-8`` -> ``text/html``."""
    if not content_type:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def content_type_charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = re.search(r"charset\s*=\s*[\"']?([^\"';\s]+)", content_type, re.I)
    return match.group(1) if match else None


def is_html(declared_type: str | None, body: bytes) -> bool:
    """HTML by the declared media type; without one, by the first markup of the body."""
    declared = media_type(declared_type)
    if declared is not None:
        return declared in HTML_MEDIA_TYPES
    return bool(_HTML_START.match(body[:1024]))


def dechunk(body: bytes) -> bytes:
    """Undo ``Transfer-Encoding: chunked``."""
    out: list[bytes] = []
    position = 0
    while True:
        line_end = body.find(b"\r\n", position)
        if line_end < 0:
            raise PayloadError(MALFORMED_RECORD, "chunked body without a chunk-size line")
        size_text = body[position:line_end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise PayloadError(MALFORMED_RECORD, f"bad chunk size {size_text[:20]!r}") from None
        if size == 0:
            return b"".join(out)
        chunk = body[line_end + 2: line_end + 2 + size]
        if len(chunk) < size:
            raise PayloadError(MALFORMED_RECORD, "chunked body cut off inside a chunk")
        out.append(chunk)
        position = line_end + 2 + size + 2


def decode_http_body(body: bytes, headers: dict[str, str], max_bytes: int | None = None) -> bytes:
    """The entity as the server meant it: de-chunked and content-decoded (gzip, deflate, br).
    ``headers`` has lower-case names.

    Decompression streams with an output cap: no step produces more than ``max_bytes + 1`` bytes,
    so a decompression bomb (a 1 MB gzip body of 1 GiB, a 1.6 KB brotli body of 1 GiB) is
    rejected as ``OVERSIZED_PAGE`` after ``max_bytes`` bytes of output, never held in memory."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = dechunk(body)
    codings = [c.strip().lower() for c in headers.get("content-encoding", "").split(",") if c.strip()]
    for coding in reversed(codings):
        try:
            if coding in ("gzip", "x-gzip"):
                body = _inflate(body, 47, max_bytes)
            elif coding == "deflate":
                try:
                    body = _inflate(body, 15, max_bytes)
                except zlib.error:
                    body = _inflate(body, -15, max_bytes)
            elif coding == "br":
                body = _unbrotli(body, max_bytes)
            elif coding != "identity":
                raise PayloadError(MALFORMED_RECORD, f"unsupported Content-Encoding {coding!r}")
        except PayloadError:
            raise
        except Exception as exc:  # zlib.error, brotli.error
            raise PayloadError(MALFORMED_RECORD, f"Content-Encoding {coding} could not be decoded: {exc}") from None
    return body


def _oversized(coding: str, max_bytes: int) -> PayloadError:
    return PayloadError(OVERSIZED_PAGE, f"{coding}-decoded payload exceeds {max_bytes} bytes (decoding stopped there)")


def _inflate(data: bytes, wbits: int, max_bytes: int | None) -> bytes:
    """zlib/gzip/raw deflate with at most ``max_bytes + 1`` bytes of output (None: no cap)."""
    inflater = zlib.decompressobj(wbits=wbits)
    limit = 0 if max_bytes is None else max_bytes + 1
    out = inflater.decompress(data, limit)
    if max_bytes is not None and (len(out) > max_bytes or inflater.unconsumed_tail):
        raise _oversized("gzip" if wbits > 15 else "deflate", max_bytes)
    if not inflater.eof:
        raise zlib.error("incomplete or truncated stream")
    return out


def _unbrotli(data: bytes, max_bytes: int | None) -> bytes:
    """Brotli with at most about ``max_bytes + 1`` bytes of output (None: no cap)."""
    decoder = brotli.Decompressor()
    if max_bytes is None:
        out = decoder.process(data)
    else:
        out = decoder.process(data, output_buffer_limit=max_bytes + 1)
        if len(out) > max_bytes or not decoder.can_accept_more_data():
            raise _oversized("br", max_bytes)
    if not decoder.is_finished():
        raise brotli.error("incomplete or truncated stream")
    return out


def python_codec(label: str | None) -> str | None:
    """The Python codec for a charset label, or ``None`` when there is no such codec."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _WHATWG_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode_html(body: bytes, http_charset: str | None) -> tuple[str, str]:
    """``(text, codec)`` of an HTML body by the rules in the module docstring."""
    declared: list[str] = []
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return _decode(body[len(bom):], codec, [codec]), codec
    if http_charset:
        declared.append(http_charset)
    match = _META_CHARSET.search(body[:_META_SCAN_BYTES])
    if match:
        declared.append(match.group(1).decode("ascii", "replace"))
    for label in declared:
        found = python_codec(label)
        if found is not None:
            if found.startswith("utf-16"):  # a meta tag readable as ASCII cannot be UTF-16
                found = "utf-8"
            return _decode(body, found, declared), found
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        if declared:
            raise PayloadError(
                UNDECODABLE_CHARSET, f"unknown charset {', '.join(declared)!s} and the bytes are not UTF-8"
            ) from None
        return _decode(body, "cp1252", declared), "cp1252"


def _decode(body: bytes, codec: str, declared: list[str]) -> str:
    try:
        return body.decode(codec)
    except UnicodeDecodeError:
        text = body.decode(codec, errors="replace")
    replaced = text.count("\ufffd")
    if replaced > MAX_REPLACEMENT_SHARE * max(len(text), 1):
        labels = ", ".join(declared) or "none"
        raise PayloadError(
            UNDECODABLE_CHARSET,
            f"{replaced} of {len(text)} characters undecodable as {codec} (declared charset: {labels})",
        )
    return text
