"""GML graphs (the polblogs format) parsed in bounded memory and linear time (plain Python).

GML is ``key value`` pairs where a value is a number, a ``"string"`` or a list ``[ ... ]`` of
further pairs.  :class:`GmlParser` is fed the text in chunks (:func:`parse_gml_stream` streams a
file: decompressed and decoded as it is read, never whole) and tokenizes once, left to right (no
backtracking).  Of the open lists it keeps their depth and the keys of the outer two (``graph``,
``node``/``edge``), so a nested list inside a node or an edge (``graphics [ ... ]``) is skipped
whole instead of ending the node early, and any number of unclosed brackets costs nothing extra.
The records are the ``edge`` lists of the ``graph`` list; of a node or edge only ``id``,
``label``, ``source`` and ``target`` are kept.  Everything the parser cannot read becomes a
problem line (a ``MALFORMED_RECORD`` reject), never an exception:

* a file ending inside a list or a string, a ``]`` without a ``[``, a key without a value;
* a token (a string, a word, a comment) longer than ``max_token`` characters: skipped to its end;
* a (decompressed) file larger than ``max_bytes``: the whole file, not parsed (read and
  decompressed in 1 MiB steps, so a gzip bomb or a huge plain file stops at the cap).

A truncated gzip file raises ``EOFError`` (the ingest step reports it as unreadable input).
"""

from __future__ import annotations

import codecs
import gzip
import re
import zlib
from array import array
from dataclasses import dataclass, field
from typing import IO

from linkgraph.errors import GmlTooLarge as GmlTooLarge
from linkgraph.inputs.textfiles import LineLimits, decompressing, open_raw

MAX_GML_BYTES = 64 * 1024 * 1024
_STEP = 1 << 20
_TOKEN = re.compile(r'"[^"]*"?|\[|\]|#[^\n]*|[^\s\[\]"]+')
# runs of ``key [`` and of ``]``: inside a nested list only the depth changes, counted in one step
_RUN_OR_TOKEN = re.compile(r'(?P<opens>(?:[^\s\[\]"#]+\s*\[\s*){2,})|(?P<closes>(?:\]\s*){2,})|' + _TOKEN.pattern)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_RECORD_LISTS = ("node", "edge")
_KEPT_KEYS = ("id", "label", "source", "target")
# where a token cut off at the end of a chunk ends: a string at its quote, a comment at the end of
# the line, a word at white space, a bracket or a quote
_TOKEN_END = {'"': re.compile('"'), "#": re.compile("\n"), "w": re.compile(r'[\s\[\]"]')}
_PLACEHOLDER = {'"': '""', "#": "#", "w": "?"}


@dataclass
class GmlGraph:
    """Edges as ``(from_url, to_url)`` (None: no such node or no label) and problem lines."""

    edges: list[tuple[str | None, str | None]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def decompressed(data: bytes, max_bytes: int = MAX_GML_BYTES) -> bytes:
    """``data`` gunzipped when it is gzip (every member); raises :class:`GmlTooLarge` past
    ``max_bytes`` and ``EOFError`` when the gzip stream is cut off."""
    if data[:2] != b"\x1f\x8b":
        if len(data) > max_bytes:
            raise GmlTooLarge(f"GML file of {len(data)} bytes exceeds {max_bytes} bytes (not parsed)")
        return data
    out = bytearray()
    rest = data
    while rest[:2] == b"\x1f\x8b":
        inflater = zlib.decompressobj(wbits=31)
        pending = rest
        while pending and not inflater.eof:
            out += inflater.decompress(pending, _STEP)
            if len(out) > max_bytes:
                raise GmlTooLarge(f"GML file decompresses to more than {max_bytes} bytes (not parsed)")
            pending = inflater.unconsumed_tail
        if not inflater.eof:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        rest = inflater.unused_data
    return bytes(out)


def label_to_url(label: str) -> str:
    """polblogs labels are host names, optionally with a path: give them an http:// scheme."""
    label = label.strip()
    return label if _SCHEME.match(label) else f"http://{label}"


def _complete(token: str) -> bool:
    """Whether ``token``, found at the end of the text fed so far, cannot go on in the next piece."""
    if token[0] == '"':
        return len(token) > 1 and token[-1] == '"'
    return token.rstrip()[-1] in "[]"


class GmlParser:
    """A GML document fed in pieces (:meth:`feed`), then :meth:`close`; see the module docstring."""

    def __init__(self, max_token: int = MAX_GML_BYTES) -> None:
        self.max_token = max_token
        self.ids: dict[str, int] = {}
        self.labels: list[str | None] = []
        self.sources, self.targets = array("q"), array("q")
        self.problems: dict[str, int] = {}
        self.depth = 0
        self.outer: list[str] = []           # keys of the open lists at depth 1 and 2
        self.key: str | None = None
        self.current: dict[str, str] | None = None   # attributes of the node/edge being read
        self.carry = ""                       # a token cut off at the end of the text fed so far
        self.skipping: str | None = None      # the kind of an over-long token being skipped

    def problem(self, what: str) -> None:
        self.problems[what] = self.problems.get(what, 0) + 1

    def feed(self, text: str) -> None:
        text = self._skip(self.carry + text) if self.skipping else self.carry + text
        self.carry = ""
        for match in _RUN_OR_TOKEN.finditer(text):
            token = match.group()
            if match.end() == len(text) and not _complete(token):
                self.carry = token
                break
            if match.lastgroup == "opens" and self.key is None and self.depth >= 2:
                self.depth += token.count("[")
            elif match.lastgroup == "closes" and self.key is None and self.depth > 2:
                fast = min(token.count("]"), self.depth - 2)
                self.depth -= fast
                for _ in range(token.count("]") - fast):
                    self._close_list()
            elif match.lastgroup:
                for part in _TOKEN.finditer(token):
                    self.token(part.group())
            else:
                self.token(token)
        if len(self.carry) > self.max_token:
            self.problem(f"a token longer than {self.max_token} characters")
            self.skipping = self.carry[0] if self.carry[0] in '"#' else "w"
            self.carry = ""
            if self.key is not None and self.skipping != "#":
                self.key = None           # the value is dropped (a node without its label)
            else:
                self.token(_PLACEHOLDER[self.skipping])

    def _skip(self, text: str) -> str:
        """``text`` after the end of the over-long token being skipped ("" while it goes on)."""
        assert self.skipping is not None
        end = _TOKEN_END[self.skipping].search(text)
        if end is None:
            return ""
        self.skipping = None
        return text[end.end() if text[end.start()] == '"' else end.start():]

    def token(self, token: str) -> None:
        if token[0] == "#":
            return
        if token == "]":
            self._close_list()
        elif self.key is None:
            if token == "[" or token[0] == '"':
                self.problem("a list or string where a key was expected")
            else:
                self.key = token
        elif token == "[":
            self._open_list(self.key)
        else:
            self._value(self.key, token)

    def _open_list(self, key: str) -> None:
        self.depth += 1
        if self.depth <= 2:
            self.outer.append(key)
        if self.depth == 2 and self.outer[0] == "graph" and key in _RECORD_LISTS:
            self.current = {}
        self.key = None

    def _value(self, key: str, token: str) -> None:
        if token[0] == '"':
            if len(token) == 1 or token[-1] != '"':
                self.problem("a string without its closing quote")
                token = token[1:]
            else:
                token = token[1:-1]
        if self.current is not None and self.depth == 2 and key in _KEPT_KEYS:
            self.current[key] = token
        self.key = None

    def _close_list(self) -> None:
        if self.key is not None:
            self.problem("a key without a value")
            self.key = None
        if not self.depth:
            self.problem("a ']' without a '['")
            return
        if self.current is not None and self.depth == 2:
            if self.outer[1] == "node":
                if "id" in self.current:
                    label = self.current.get("label")
                    self.labels[self._id(self.current["id"])] = label_to_url(label) if label is not None else None
            else:
                self.sources.append(self._id(self.current.get("source")))
                self.targets.append(self._id(self.current.get("target")))
            self.current = None
        if self.depth <= 2:
            self.outer.pop()
        self.depth -= 1

    def _id(self, node: str | None) -> int:
        """A number for node id ``node`` (-1 for None)."""
        if node is None:
            return -1
        number = self.ids.setdefault(node, len(self.ids))
        if number == len(self.labels):
            self.labels.append(None)
        return number

    def close(self) -> GmlGraph:
        """The graph: edges by node label (None: no such node or no label) and the problems."""
        if self.skipping == '"':
            self.problem("a string without its closing quote")
        elif self.carry:
            self.token(self.carry)
        if self.depth:
            if self.current is not None and self.outer[1:2] == ["edge"]:
                self.problem("an edge cut off at the end of the file")
            else:
                self.problem(f"the file ends inside {self.depth} open list(s)")
        def label(number: int) -> str | None:
            return self.labels[number] if number >= 0 else None
        edges = [(label(s), label(t)) for s, t in zip(self.sources, self.targets, strict=True)]
        problems = [f"GML: {what} ({count}x)" if count > 1 else f"GML: {what}" for what, count in self.problems.items()]
        return GmlGraph(edges, problems)


def parse_gml(text: str) -> GmlGraph:
    """Edges (by node label) and problems of one GML document; see the module docstring."""
    parser = GmlParser()
    parser.feed(text)
    return parser.close()


def _stream(raw: IO[bytes], path: str) -> IO[bytes]:
    """``raw`` decompressed: by extension, or gzip by its magic bytes."""
    stream = decompressing(raw, path)
    if stream is raw:
        magic = raw.read(2)
        raw.seek(0)
        if magic == b"\x1f\x8b":
            return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return stream


def parse_gml_stream(path: str, limits: LineLimits, max_bytes: int = MAX_GML_BYTES) -> GmlGraph:
    """:func:`parse_gml` of the file ``path``, read in 1 MiB steps (decompressed, decoded as UTF-8
    with U+FFFD for invalid bytes, which the ingest rejects); raises :class:`GmlTooLarge` past
    ``max_bytes`` and ``EOFError`` when a gzip stream is cut off."""
    parser = GmlParser(max_token=limits.max_line_bytes)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    raw = open_raw(path, limits.follow_symlinks)
    read = 0
    with raw, _stream(raw, path) as stream:
        while chunk := stream.read(_STEP):
            read += len(chunk)
            if read > max_bytes:
                raise GmlTooLarge(f"GML file decompresses to more than {max_bytes} bytes (not parsed)")
            parser.feed(decoder.decode(chunk))
    parser.feed(decoder.decode(b"", final=True))
    return parser.close()
