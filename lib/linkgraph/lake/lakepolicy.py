"""The URL policy of a command, and the one a lake was written under.

``url_policy`` is the ``linkgraph.urlpolicy.UrlPolicy`` a command canonicalises URLs under: the
config's ``urls`` keys, with the Public Suffix List of ``urls.psl_file`` read once, on the driver
(a local file directly, any other through Spark's Hadoop file systems).  The policy holds the
list's text, so the tasks that canonicalise (an Arrow UDF's closure, a ``mapInPandas`` function's
arguments) carry it to the workers; none of them reads the file.

``linkgraph ingest`` records the keys as table properties of ``pages``
(``linkgraph.canonical.<key>``, null as the empty string, and the list's version in
``linkgraph.canonical.psl_version``, :func:`policy_properties`; no "url" in the names: Spark's
``SHOW TBLPROPERTIES`` redacts the values of keys matching ``spark.sql.redaction.options.regex``,
``(?i)url`` by default) and refuses to ingest into a lake whose recorded keys differ from the
config's (:func:`check_lake_policy`, ``UrlPolicyMismatch``: exit 2).  A lake without recorded keys
(written before policies existed) was written under the defaults.  The list's version is
information only: a newer snapshot or an updated ``psl_file`` at the same place is not another
policy.  No pyspark is imported here (``linkgraph links --compressed`` answers without it).
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from linkgraph.errors import ConfigError, PathNotFound, UrlPolicyMismatch
from linkgraph.lake.config import Config, UrlsConfig
from linkgraph.lake.names import PAGES_TABLE
from linkgraph.lake.paths import display, local_path, read_bytes, require_input
from linkgraph.urlpolicy import UrlPolicy, suffix_list_from_text, suffix_list_version

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from linkgraph.lake.delta import Lake

PROPERTY_PREFIX = "linkgraph.canonical."
PSL_VERSION_PROPERTY = PROPERTY_PREFIX + "psl_version"
OPTIONS = tuple(f.name for f in dataclasses.fields(UrlsConfig))


def _psl_text(path: str, spark: SparkSession | None) -> str:
    local = local_path(path)
    if local is not None:
        if not os.path.isfile(local):
            raise PathNotFound(f"urls.psl_file not found: {path}")
        with open(local, "rb") as stream:
            data = stream.read()
    elif spark is None:
        raise PathNotFound(f"urls.psl_file {path} is not a local path and no Spark session was given to read it")
    else:
        require_input(spark, path, "urls.psl_file")
        data = read_bytes(spark, path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"urls.psl_file {path} is not UTF-8 text: {exc}") from None


def url_policy(config: Config, spark: SparkSession | None = None) -> UrlPolicy:
    """The URL policy of ``config`` (its ``urls`` section), ``urls.psl_file`` read on the driver
    (``spark`` reaches a remote one); ``PathNotFound`` or ``ConfigError`` (exit 2) for a file that
    is missing or not a list."""
    urls = config.urls
    if urls.psl_file is None:
        return urls.policy()
    return urls.policy(suffix_list_from_text(_psl_text(urls.psl_file, spark), urls.psl_file))


def _shown(value: object) -> str:
    """A key's value as a table property holds it (``true``, ``reject``, ``""`` for null)."""
    if value is None:
        return ""
    return str(value).lower() if isinstance(value, bool) else str(value)


def policy_properties(urls: UrlsConfig, policy: UrlPolicy) -> dict[str, str]:
    """The table properties that record ``urls`` (and the version of ``policy``'s list) with a lake."""
    recorded = {PROPERTY_PREFIX + name: _shown(getattr(urls, name)) for name in OPTIONS}
    recorded[PSL_VERSION_PROPERTY] = suffix_list_version(policy.suffixes)
    return recorded


def recorded_keys(properties: dict[str, str]) -> dict[str, str]:
    """The ``urls`` keys a lake's ``pages`` properties record, a key not recorded at its default."""
    defaults = UrlsConfig()
    return {name: properties.get(PROPERTY_PREFIX + name, _shown(getattr(defaults, name))) for name in OPTIONS}


def differing_keys(urls: UrlsConfig, properties: dict[str, str]) -> list[str]:
    """``urls.<key> (lake: X, config: Y)`` for every key ``urls`` sets otherwise than recorded."""
    recorded = recorded_keys(properties)
    return [f"urls.{name} (lake: {recorded[name] or 'null'}, config: {_shown(getattr(urls, name)) or 'null'})"
            for name in OPTIONS if recorded[name] != _shown(getattr(urls, name))]


def check_lake_policy(lake: Lake, urls: UrlsConfig) -> None:
    """Stop with ``UrlPolicyMismatch`` (exit 2, one line naming the keys) when ``lake`` was written
    under other ``urls`` keys than ``urls``; a lake without ``pages`` takes any."""
    if not lake.exists(PAGES_TABLE):
        return
    differing = differing_keys(urls, lake.table_properties(PAGES_TABLE))
    if differing:
        raise UrlPolicyMismatch(
            f"lake {display(lake.root)} was written under another URL policy: {', '.join(differing)}; set those "
            "keys as the lake has them, or ingest into a new lake")
