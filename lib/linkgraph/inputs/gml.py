"""GML graphs (the polblogs format) parsed in bounded memory and linear time (plain Python).

GML is ``key value`` pairs where a value is a number, a ``"string"`` or a list ``[ ... ]`` of
further pairs.  :func:`parse_gml` tokenizes once, left to right (no backtracking), and keeps a
stack of the open lists, so a nested list inside a node or an edge (``graphics [ ... ]``) is
skipped whole instead of ending the node early, and unclosed brackets cost nothing extra.  The
records are the ``edge`` lists of the ``graph`` list; everything the parser cannot read becomes a
problem line (a ``MALFORMED_RECORD`` reject), never an exception:

* a file ending inside a list or a string, a ``]`` without a ``[``, a key without a value;
* a (decompressed) file larger than ``max_bytes``: the whole file, not parsed (gzip is
  decompressed in 1 MiB steps, so a gzip bomb stops at the cap).

A truncated gzip file raises ``EOFError`` (the ingest step reports it as unreadable input).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

from linkgraph.errors import GmlTooLarge as GmlTooLarge

MAX_GML_BYTES = 64 * 1024 * 1024
_STEP = 1 << 20
_TOKEN = re.compile(r'"[^"]*"?|\[|\]|#[^\n]*|[^\s\[\]"]+')
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_RECORD_LISTS = ("node", "edge")


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


def parse_gml(text: str) -> GmlGraph:
    """Edges (by node label) and problems of one GML document; see the module docstring."""
    graph = GmlGraph()
    labels: dict[str, str | None] = {}
    arcs: list[tuple[str | None, str | None]] = []
    problems: dict[str, int] = {}
    stack: list[str] = []
    key: str | None = None
    current: dict[str, str] | None = None   # attributes of the node/edge being read

    def problem(what: str) -> None:
        problems[what] = problems.get(what, 0) + 1

    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] == "#":
            continue
        if token == "]":
            if key is not None:
                problem("a key without a value")
                key = None
            if not stack:
                problem("a ']' without a '['")
                continue
            if current is not None and len(stack) == 2:
                if stack[1] == "node":
                    if "id" in current:
                        labels[current["id"]] = label_to_url(current["label"]) if "label" in current else None
                else:
                    arcs.append((current.get("source"), current.get("target")))
                current = None
            stack.pop()
            continue
        if key is None:
            if token == "[" or token[0] == '"':
                problem("a list or string where a key was expected")
            else:
                key = token
            continue
        if token == "[":
            stack.append(key)
            if len(stack) == 2 and stack[0] == "graph" and key in _RECORD_LISTS:
                current = {}
        else:
            if token[0] == '"':
                if len(token) == 1 or token[-1] != '"':
                    problem("a string without its closing quote")
                    token = token[1:]
                else:
                    token = token[1:-1]
            if current is not None and len(stack) == 2:
                current[key] = token
        key = None
    if stack:
        if current is not None and stack[1:2] == ["edge"]:
            problem("an edge cut off at the end of the file")
        else:
            problem(f"the file ends inside {len(stack)} open list(s)")
    graph.edges = [(labels.get(s) if s is not None else None, labels.get(t) if t is not None else None)
                   for s, t in arcs]
    graph.problems = [f"GML: {what} ({count}x)" if count > 1 else f"GML: {what}"
                      for what, count in problems.items()]
    return graph
