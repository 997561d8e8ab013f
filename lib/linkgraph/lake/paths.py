"""Paths as users write them: relative, absolute, or a URI with a scheme.

* A relative path (``lake``, ``data/crawl.jsonl``) is resolved against the working directory and
  used as an absolute ``file:`` URI (``file:/home/me/lake``, the form Hadoop qualifies local paths
  to), so Spark, Delta and the catalog all see the same location.
* An absolute path (``/data/lake``) is kept: Hadoop resolves it against the default file system
  (the local disk on a laptop, HDFS on a Hadoop cluster).
* A URI with a scheme (``file:///…``, ``s3a://…``, ``abfss://…``, ``gs://…``, ``dbfs:/…``) is kept as
  written.  Schemes are never checked with ``pathlib``: a local path (no scheme or ``file:``) is
  checked on the local disk before Spark starts, any other through Spark's Hadoop ``FileSystem``.

Hadoop does not decode percent escapes in a path, so neither does this module: ``file:///a%20b``
names the file ``/a%20b``, as it does for Spark.  Nor does it take ``#`` or ``?`` for the start of a
fragment or a query: ``file:/in/a#b.jsonl`` is the file ``/in/a#b.jsonl``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from linkgraph.errors import NotADeltaTable, PathNotFound, UsageError
from linkgraph.lake.names import INPUT_FORMATS as FORMATS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# RFC 3986 scheme; two characters at least so that a Windows drive letter is not taken for one.
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):")




def scheme(path: str) -> str | None:
    """The URI scheme of ``path`` in lower case (``s3a``, ``file``, ``dbfs``), or None for a plain path."""
    match = _SCHEME.match(str(path))
    return match.group("scheme").lower() if match else None


def to_uri(path: str) -> str:
    """``path`` as Spark should see it: a relative path becomes an absolute ``file:`` URI; an
    absolute path or a URI with a scheme is returned unchanged, except that a local ``file:``
    URI is written the way Hadoop qualifies it (``file:///x`` -> ``file:/x``; Delta refuses to
    create a table whose location is written in two ways)."""
    path = str(path)
    found = scheme(path)
    if found == "file":
        local = local_path(path)
        return path if local is None else "file:" + local
    if found is not None or os.path.isabs(path):
        return path
    return "file:" + os.path.abspath(os.path.expanduser(path))


def local_path(path: str) -> str | None:
    """The local file system path of a plain path or a ``file:`` URI (``file:///x``, ``file:/x``),
    else None (a remote file system).  A ``file:`` path is read as Hadoop reads it (and writes it
    in its listings, Spark's ``binaryFile`` ``path`` column included): an optional
    ``//authority``, then the path as it is, escapes, ``#`` and ``?`` included."""
    path = str(path)
    found = scheme(path)
    if found is None:
        return os.path.abspath(os.path.expanduser(path))
    if found != "file":
        return None
    rest = path[len(found) + 1:]
    if rest.startswith("//") and len(rest) > 2:
        slash = rest.find("/", 2)
        authority, rest = (rest[2:], "") if slash < 0 else (rest[2:slash], rest[slash:])
        if authority not in ("", "localhost"):
            return None
    return rest or "/"


def display(path: str) -> str:
    """How a location is printed: a local path as a plain absolute path, anything else as written."""
    local = local_path(path)
    return local if local is not None else str(path)


def require_local_input(path: str, what: str = "input") -> None:
    """Stop with ``PathNotFound`` when ``path`` is local and missing; a remote path is left to
    :func:`require_input` once Spark runs."""
    local = local_path(path)
    if local is not None and not os.path.exists(local):
        raise PathNotFound(f"{what} not found: {path}")


def _hadoop_path(spark: SparkSession | None, path: str):
    if spark is None:
        raise PathNotFound(f"{path} is not a local path and no Spark session was given to reach it")
    jvm = spark.sparkContext._jvm
    assert jvm is not None, "a Spark session on a JVM (not Spark Connect)"
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path, hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def missing_file_system(exc: BaseException) -> str | None:
    """The scheme named by a Hadoop "No FileSystem for scheme" error anywhere in ``exc``, else None."""
    match = re.search(r'No FileSystem for scheme "?([A-Za-z0-9+.-]+)"?', str(exc))
    return match.group(1) if match else None


def require_input(spark: SparkSession, path: str, what: str = "input") -> None:
    """Stop with ``PathNotFound`` when ``path`` does not exist, checked through Hadoop's
    ``FileSystem`` (any scheme the session has a connector for); a scheme without a connector is
    named in the message."""
    if local_path(path) is not None:
        require_local_input(path, what)
        return
    try:
        hadoop_path, fs = _hadoop_path(spark, path)
        found = fs.exists(hadoop_path)
    except Exception as exc:  # Py4JJavaError: the connector is missing or the store refused us
        missing = missing_file_system(exc)
        if missing is not None:
            raise PathNotFound(
                f"{what} {path}: no Hadoop FileSystem for scheme '{missing}' in this Spark session "
                f"(add its connector, e.g. hadoop-aws for s3a, to spark.jars.packages)"
            ) from None
        raise PathNotFound(f"{what} {path} cannot be checked: {str(exc).splitlines()[0]}") from None
    if not found:
        raise PathNotFound(f"{what} not found: {path}")


def qualify(spark: SparkSession, path: str) -> str:
    """``path`` in the one form Hadoop gives it (``/x``, ``x`` and ``file:///x`` all become
    ``file:/x`` locally; a scheme-less absolute path takes the default file system's), so that
    the same input spelled differently is recorded the same way (e.g. in reject ids).  A path
    whose file system is not available is returned as :func:`to_uri` writes it."""
    path = to_uri(path)
    try:
        hadoop_path, fs = _hadoop_path(spark, path)
        return str(fs.makeQualified(hadoop_path).toString())
    except Exception:  # Py4JJavaError: no connector for the scheme; the read will say so
        return path


def is_directory(spark: SparkSession | None, path: str) -> bool:
    local = local_path(path)
    if local is not None:
        return os.path.isdir(local)
    hadoop_path, fs = _hadoop_path(spark, path)
    return bool(fs.getFileStatus(hadoop_path).isDirectory())


def list_directory(spark: SparkSession | None, path: str) -> list[str]:
    """The entries of directory ``path`` (full paths, sorted by name)."""
    local = local_path(path)
    if local is not None:
        return sorted(os.path.join(path, name) for name in os.listdir(local))
    hadoop_path, fs = _hadoop_path(spark, path)
    return sorted(str(status.getPath().toString()) for status in fs.listStatus(hadoop_path))


def count_files(spark: SparkSession, path: str) -> int:
    """Files at ``path``: 1 for a file, else every file below the directory, hidden ones
    (``_``/``.``-prefixed, which Spark's file sources skip) included."""
    hadoop_path, fs = _hadoop_path(spark, path)
    if not fs.getFileStatus(hadoop_path).isDirectory():
        return 1
    files = fs.listFiles(hadoop_path, True)
    count = 0
    while files.hasNext():
        files.next()
        count += 1
    return count


def exists(spark: SparkSession | None, path: str) -> bool:
    local = local_path(path)
    if local is not None:
        return os.path.exists(local)
    hadoop_path, fs = _hadoop_path(spark, path)
    return bool(fs.exists(hadoop_path))


def delete_tree(spark: SparkSession, path: str) -> bool:
    """Delete the directory (or file) ``path`` and everything under it, through Hadoop's
    ``FileSystem`` (local and remote alike); False when there was nothing to delete."""
    hadoop_path, fs = _hadoop_path(spark, path)
    return bool(fs.delete(hadoop_path, True))


def read_bytes(spark: SparkSession, path: str) -> bytes:
    """The whole content of one (small) file, local or remote."""
    local = local_path(path)
    if local is not None:
        with open(local, "rb") as stream:
            return stream.read()
    row = spark.read.format("binaryFile").load(path).select("content").first()
    if row is None:
        raise PathNotFound(f"input not found: {path}")
    return bytes(row["content"])


def write_text(spark: SparkSession | None, path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to one file, replacing it: locally with ``open``, elsewhere through
    Hadoop's ``FileSystem`` (the whole file is written by one stream, then closed)."""
    local = local_path(path)
    if local is not None:
        with open(local, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        return
    hadoop_path, fs = _hadoop_path(spark, path)
    stream = fs.create(hadoop_path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def make_directory(spark: SparkSession | None, path: str) -> None:
    """Create directory ``path`` (and its parents) if missing."""
    local = local_path(path)
    if local is not None:
        os.makedirs(local, exist_ok=True)
        return
    hadoop_path, fs = _hadoop_path(spark, path)
    fs.mkdirs(hadoop_path)


def move_single_part(spark: SparkSession | None, directory: str, target: str) -> None:
    """Move the one ``part-*`` file Spark wrote into ``directory`` to ``target`` (replacing it),
    then delete ``directory``."""
    local, local_target = local_path(directory), local_path(target)
    if local is not None and local_target is not None:
        parts = [name for name in sorted(os.listdir(local)) if name.startswith("part-")]
        if len(parts) != 1:
            raise PathNotFound(f"{directory}: expected one part file, found {len(parts)}")
        os.replace(os.path.join(local, parts[0]), local_target)
        shutil.rmtree(local)
        return
    hadoop_dir, fs = _hadoop_path(spark, directory)
    parts = [s.getPath() for s in fs.listStatus(hadoop_dir) if s.getPath().getName().startswith("part-")]
    if len(parts) != 1:
        raise PathNotFound(f"{directory}: expected one part file, found {len(parts)}")
    hadoop_target, _ = _hadoop_path(spark, target)
    fs.delete(hadoop_target, False)
    fs.rename(parts[0], hadoop_target)
    fs.delete(hadoop_dir, True)



# --- where a lake's tables are -------------------------------------------------------------------

def lake_root(lake_path: str) -> str:
    """A lake directory as Spark and the Spark-free readers see it: ``to_uri`` of the path as
    written, without a trailing slash."""
    return to_uri(str(lake_path)).rstrip("/")


def table_location(lake_path: str, table: str, catalog: str | None = None, schema: str | None = None) -> str:
    """The one resolver of a table's location: ``[catalog.]schema.table`` when the lake is a
    catalog schema, else ``<lake root>/<table>`` (also for the lake's own directories, e.g.
    ``_checkpoints``)."""
    if schema is not None:
        return ".".join(part for part in (catalog, schema, table) if part)
    return f"{lake_root(lake_path)}/{table}"

DELTA_LOG = "_delta_log"


def require_no_foreign_data(spark: SparkSession | None, location: str, table: str) -> None:
    """Stop with ``NotADeltaTable`` when ``location``, where the lake is about to create ``table``,
    holds a file or a directory with entries but no ``_delta_log`` (Delta would refuse to create
    the table there).  Missing, empty, and a directory with a ``_delta_log`` (a table, or one
    another job is creating) pass."""
    local = local_path(location)
    if local is not None:
        if os.path.isdir(os.path.join(local, DELTA_LOG)) or not os.path.exists(local):
            return
        is_dir = os.path.isdir(local)
        entries = len(os.listdir(local)) if is_dir else 0
    else:
        try:
            hadoop_path, fs = _hadoop_path(spark, location)
            if fs.exists(hadoop_path.suffix("/" + DELTA_LOG)) or not fs.exists(hadoop_path):
                return
            is_dir = bool(fs.getFileStatus(hadoop_path).isDirectory())
            entries = len(fs.listStatus(hadoop_path)) if is_dir else 0
        except Exception:  # Py4JJavaError: not reachable from here; creating the table will say why
            return
    if is_dir and not entries:
        return
    what = f"a directory of {entries} entries without {DELTA_LOG}" if is_dir else "a file"
    raise NotADeltaTable(f"table '{table}' cannot be created at {display(location)}: it is {what}, not a Delta "
                         f"table (move it away, or give another --lake)")


# --- input formats by file extension ---------------------------------------------------------

_EXTENSION_FORMATS = {
    ".parquet": "parquet", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
    ".tsv": "arcs", ".arcs": "arcs", ".txt": "arcs", ".dat": "dat", ".gml": "gml", ".warc": "warc", ".wat": "wat",
}


def guess_format(path: str) -> str:
    """The input format from ``path``'s extension; a local directory is parquet."""
    local = local_path(path)
    if local is not None and Path(local).is_dir():
        return "parquet"
    suffixes = [s for s in Path(path.rstrip("/").rsplit("/", 1)[-1]).suffixes if s != ".gz"]
    if suffixes and suffixes[-1] in _EXTENSION_FORMATS:
        return _EXTENSION_FORMATS[suffixes[-1]]
    raise UsageError(f"cannot tell the format of {path}; pass --format ({'|'.join(FORMATS)})")


# --- input files: listed without symbolic links and hidden files ----------------------------------

SKIPPED_SYMLINK = "symlink"
SKIPPED_HIDDEN = "hidden"


@dataclass
class InputFiles:
    """The data files of an input (``(path, bytes)``, sorted) and the files left out, by kind
    (``symlink``: a symbolic link, ``hidden``: a name starting with ``_`` or ``.``, as Spark skips)."""

    files: list[tuple[str, int]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    modified_ms: dict[str, int] = field(default_factory=dict)   # path -> modification time (ms since the epoch)

    def add(self, path: str, size: int, modified_ms: int) -> None:
        self.files.append((path, size))
        self.modified_ms[path] = modified_ms

    def fingerprint(self) -> str:
        """One line that changes when a file of the input is added, removed, resized or rewritten:
        the file count, their bytes and a SHA-256 of every (path, bytes, modification time)."""
        digest = hashlib.sha256()
        for path, size in sorted(self.files):
            digest.update(f"{path}\t{size}\t{self.modified_ms.get(path, -1)}\n".encode())
        total = sum(size for _, size in self.files)
        return f"files={len(self.files)} bytes={total} sha256={digest.hexdigest()}"

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def _list_local(root: str, follow_symlinks: bool, found: InputFiles) -> None:
    if os.path.islink(root) and not follow_symlinks:
        found.skip(SKIPPED_SYMLINK)
        return
    if not os.path.isdir(root):
        stat = os.stat(root)
        found.add("file:" + root, stat.st_size, stat.st_mtime_ns // 1_000_000)
        return
    with os.scandir(root) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if _hidden(entry.name):
                found.skip(SKIPPED_HIDDEN)
            elif entry.is_symlink() and not follow_symlinks:
                found.skip(SKIPPED_SYMLINK)
            elif entry.is_dir():
                _list_local(entry.path, follow_symlinks, found)
            elif entry.is_file():
                stat = entry.stat()
                found.add("file:" + entry.path, stat.st_size, stat.st_mtime_ns // 1_000_000)


def _list_remote(spark: SparkSession | None, path: str, follow_symlinks: bool, found: InputFiles) -> None:
    hadoop_path, fs = _hadoop_path(spark, path)
    pending = [fs.getFileStatus(hadoop_path)]
    while pending:
        status = pending.pop()
        if status.isSymlink() and not follow_symlinks:
            found.skip(SKIPPED_SYMLINK)
        elif status.isDirectory():
            for child in fs.listStatus(status.getPath()):
                if _hidden(str(child.getPath().getName())):
                    found.skip(SKIPPED_HIDDEN)
                else:
                    pending.append(child)
        else:
            found.add(str(status.getPath().toString()), int(status.getLen()), int(status.getModificationTime()))


def list_input_files(spark: SparkSession | None, paths: str | list[str], follow_symlinks: bool = False) -> InputFiles:
    """The files of one or more input paths (a file, or a directory read recursively), hidden
    files and (unless ``follow_symlinks``) symbolic links left out and counted."""
    found = InputFiles()
    for path in [paths] if isinstance(paths, str) else paths:
        local = local_path(path)
        if local is not None:
            _list_local(os.path.abspath(local), follow_symlinks, found)
        else:
            _list_remote(spark, path, follow_symlinks, found)
    found.files.sort()
    return found
