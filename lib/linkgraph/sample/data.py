"""The sample's data files, shipped in this package and read with ``importlib.resources``:
``sites.yaml`` (hosts, sites with their sections and menus, how they link) and ``vocab.yaml``
(titles, snippets, sentences, anchors, the bad records' text).  Loaded once, on import."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

DATA_FILES = ("sites.yaml", "vocab.yaml")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Menu:
    """A menu entry (NAV or FOOTER); host "" is the site's own host."""

    path: str
    label: str
    host: str = ""
    rel: str | None = None


@dataclass(frozen=True)
class Section:
    """A section index page at ``path`` and its items; ``item`` formats an item path from
    ``slug``, ``id`` (unique 5 digits), ``code`` (jobvite-style), ``yyyy`` and ``mm``."""

    path: str
    label: str
    vocab: str
    count: tuple[int, int]
    item: str


@dataclass(frozen=True)
class Site:
    """A site of ``sites.yaml`` (its ``site_defaults`` say what the fields mean)."""

    host: str
    name: str
    topic: str  # key of vocab.yaml's texts (page snippets)
    sections: tuple[Section, ...]
    nav: tuple[Menu, ...]
    footer: tuple[Menu, ...]
    scheme: str
    logo: bool
    outlinks: tuple[tuple[str, float], ...]
    external: tuple[int, int]
    rels: tuple[tuple[str | None, float], ...]
    ads: float
    ad_hosts: tuple[str, ...]
    comments: int
    partners: tuple[str, ...]
    feeds: tuple[str, ...]
    sitemap: str | None


def load(name: str) -> dict[str, Any]:
    """The data file ``name`` of this package (one of ``DATA_FILES``), parsed."""
    text = resources.files("linkgraph.sample").joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.load(text, Loader=_LOADER)
    return data


def _tuples(value: Any) -> Any:
    """``value`` with its lists, at any depth, as tuples."""
    return tuple(_tuples(item) for item in value) if isinstance(value, list) else value


def _tuples_of(row: dict[str, Any]) -> dict[str, Any]:
    return {key: _tuples(value) for key, value in row.items()}


def _site(row: dict[str, Any], defaults: dict[str, Any]) -> Site:
    """A ``sites.yaml`` site, its missing keys taken from ``defaults``."""
    fields = _tuples_of({**defaults, **row})
    fields["sections"] = tuple(Section(**_tuples_of(section)) for section in row["sections"])
    fields["nav"] = tuple(Menu(**menu) for menu in row["nav"])
    fields["footer"] = tuple(Menu(**menu) for menu in row["footer"])
    return Site(**fields)


WEB = load("sites.yaml")
WORDS = load("vocab.yaml")
SITES: tuple[Site, ...] = tuple(_site(row, WEB["site_defaults"]) for row in WEB["sites"])
HOSTS: dict[str, Any] = WEB["hosts"]
