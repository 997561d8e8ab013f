"""``conf/local.yaml`` and the key reference of ``docs/configuration.md``, rendered from the config
keys' declarations (``linkgraph.lake.configkey.key`` on the fields of ``linkgraph.lake.config.Config``'s
sections): type and default from the dataclass, meaning and unit from the declaration.

``linkgraph pipeline --emit local-conf|config-doc`` writes them; the committed files are its output
(a test fails when they differ).  The prose of ``docs/configuration.md`` around the key tables is
the template ``linkgraph/templates/configuration.md.tmpl``: a line ``@@KEYS <section>@@`` there
becomes that section's table.  No pyspark is imported here.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import textwrap
import types
import typing
from importlib import resources
from typing import Any

import yaml

from linkgraph.lake.config import Config
from linkgraph.lake.configkey import doc_of, unit_of

WIDTH = 110

LOCAL_CONF_HEADER = """\
# The built-in defaults: what linkgraph uses when no --conf is given, every key with its meaning.
# Spark local[*] on this machine, Delta tables on local disk, tuned for a 2-core, 24 GiB box: a modest
# driver heap (first touch of fresh memory is slow here), few shuffle partitions, Delta's snapshot
# state in few partitions.  A config file of your own needs only the keys it changes; maps and lists
# are replaced whole (docs/configuration.md).
#
# Generated from the key declarations in lib/linkgraph/lake/config.py and config_analysis.py: edit
# those, then run `linkgraph pipeline --emit local-conf --output conf/local.yaml`.
"""

KEYS_PLACEHOLDER = re.compile(r"^@@KEYS (\w+)@@$", re.MULTILINE)
PLAIN = re.compile(r"[A-Za-z_][\w.*/-]*(?: [\w.*/-]+)*")
TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "true/false"}


@dataclasses.dataclass(frozen=True)
class Key:
    """One declared key as the renderers show it."""

    name: str
    hint: Any
    default: Any
    doc: str
    unit: str | None


def sections() -> list[tuple[str, type]]:
    """(name, dataclass) of every section of ``Config``, in declaration order."""
    hints = typing.get_type_hints(Config)
    return [(declared.name, hints[declared.name]) for declared in dataclasses.fields(Config)]


def keys_of(section: type) -> list[Key]:
    """The keys of a section with their defaults."""
    hints, defaults = typing.get_type_hints(section), section()
    return [Key(f.name, hints[f.name], getattr(defaults, f.name), doc_of(f), unit_of(f))
            for f in dataclasses.fields(section)]


def summary(section: type) -> str:
    """The first paragraph of a section's docstring on one line, ``code`` spelled `code`."""
    first = inspect.cleandoc(section.__doc__ or "").split("\n\n")[0]
    return " ".join(first.split()).replace("``", "`")


def type_name(hint: Any) -> str:
    """A key's type in words: ``integer``, ``string or null``, ``list of strings``, ``{points, terms}``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(arg) for arg in args if arg is not type(None)) + " or null"
    if origin is list:
        inner = type_name(args[0])
        return f"list of {inner if inner.startswith('{') else inner + 's'}"
    if origin is dict:
        return f"map of {type_name(args[0])} to {type_name(args[1])}"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return "{" + ", ".join(f.name for f in dataclasses.fields(hint)) + "}"
    return TYPE_NAMES[hint]


def flow(value: Any) -> str:
    """``value`` in YAML flow style, as the loader reads it back (strings quoted only when needed)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return yaml_float(value)
    if isinstance(value, str):
        plain = PLAIN.fullmatch(value) is not None and yaml.safe_load(value) == value
        return value if plain else json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{flow(k)}: {flow(v)}" for k, v in value.items()) + "}"
    if dataclasses.is_dataclass(value):
        return flow({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    raise TypeError(f"no YAML spelling for {value!r}")


def yaml_float(value: float) -> str:
    """A float YAML 1.1 reads as one: ``1.0e-6``, not ``1e-06`` (which PyYAML reads as a string)."""
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return f"{mantissa if '.' in mantissa else mantissa + '.0'}e{int(exponent):+d}"


def size_note(value: Any, unit: str | None) -> str:
    """``64 MiB`` for a byte count that is a whole number of MiB or GiB, else ''."""
    if not (unit or "").startswith("bytes") or isinstance(value, bool) or not isinstance(value, int):
        return ""
    for size, name in ((1 << 30, "GiB"), (1 << 20, "MiB")):
        if value >= size and value % size == 0:
            return f"{value // size} {name}"
    return ""


# --- conf/local.yaml ------------------------------------------------------------------------------

DOC_LINK = re.compile(r"\[[^\]]+\]\(([\w-]+\.md(?:#[\w-]+)?)\)")


def _comment(text: str, indent: int) -> list[str]:
    """``text`` as comment lines; a link to another page of the docs becomes its path (``docs/x.md``)."""
    pad = " " * indent + "# "
    return textwrap.wrap(DOC_LINK.sub(r"docs/\1", text), width=WIDTH, initial_indent=pad, subsequent_indent=pad,
                         break_long_words=False, break_on_hyphens=False)


def _wrapped_flow(head: str, items: list[str]) -> list[str]:
    """``head[a, b, ...]`` over as many lines as WIDTH needs, continuation lines under the first item."""
    lines, current, indent = [], head + "[", " " * (len(head) + 1)
    for index, item in enumerate(items):
        piece = item + ("]" if index == len(items) - 1 else ",")
        candidate = current + ("" if current.endswith("[") else " ") + piece
        if len(candidate) > WIDTH and not current.endswith("["):
            lines.append(current)
            current = indent + piece
        else:
            current = candidate
    return [*lines, current]


def _yaml_value(name: str, value: Any, indent: int) -> list[str]:
    """``name: value`` in block style: a map of scalars and a list of records one entry a line, a
    long list over several lines."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        return [f"{pad}{name}:", *(f"{pad}  {flow(k)}: {flow(v)}" for k, v in value.items())]
    if isinstance(value, list) and value and dataclasses.is_dataclass(value[0]):
        lines = [f"{pad}{name}:"]
        for item in value:
            entries = [f"{f.name}: {flow(getattr(item, f.name))}" for f in dataclasses.fields(item)]
            lines += [f"{pad}  - {entries[0]}", *(f"{pad}    {entry}" for entry in entries[1:])]
        return lines
    line = f"{pad}{name}: {flow(value)}"
    if len(line) > WIDTH and isinstance(value, list):
        return _wrapped_flow(f"{pad}{name}: ", [flow(item) for item in value])
    return [line]


def _yaml_key(key: Key, indent: int) -> list[str]:
    """A key's meaning as comment lines above ``key: default``, its unit (and a byte count in MiB or
    GiB) at the end of that line where it fits, else at the end of the meaning."""
    unit = "; ".join(part for part in (key.unit, size_note(key.default, key.unit)) if part)
    value = _yaml_value(key.name, key.default, indent)
    if unit and len(value) == 1 and len(trailed := f"{value[0]}   # {unit}") <= WIDTH + 10:
        return [*_comment(key.doc, indent), trailed]
    kept_whole = f" ({unit})".replace(" ", "\0") if unit else ""
    return [line.replace("\0", " ") for line in _comment(key.doc + kept_whole, indent)] + value


def render_local_conf() -> str:
    """``conf/local.yaml``: every section and key with its default, its meaning and unit as comments."""
    lines = [LOCAL_CONF_HEADER.rstrip("\n")]
    for name, section in sections():
        lines += ["", *_comment(summary(section), 0), f"{name}:"]
        for key in keys_of(section):
            lines += _yaml_key(key, 2)
    return "\n".join(lines) + "\n"


# --- docs/configuration.md ------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def key_table(section: type) -> str:
    """A section's keys as a Markdown table: key | type | default | unit | meaning."""
    rows = ["| key | type | default | unit | meaning |", "|---|---|---|---|---|"]
    for key in keys_of(section):
        note = size_note(key.default, key.unit)
        default = f"`{flow(key.default)}`" + (f" ({note})" if note else "")
        cells = [f"`{key.name}`", type_name(key.hint), default, key.unit or "", key.doc]
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows)


def render_config_doc() -> str:
    """``docs/configuration.md``: the template's prose with each ``@@KEYS <section>@@`` line replaced
    by that section's key table; every section of ``Config`` must have exactly one such line."""
    template = (resources.files("linkgraph") / "templates" / "configuration.md.tmpl").read_text()
    tables = {name: key_table(section) for name, section in sections()}
    placed = KEYS_PLACEHOLDER.findall(template)
    if sorted(placed) != sorted(tables):
        raise ValueError(f"configuration.md.tmpl places the key tables {placed}; "
                         f"each of the sections {list(tables)} needs one line @@KEYS <section>@@")
    return KEYS_PLACEHOLDER.sub(lambda match: tables[match.group(1)], template)
