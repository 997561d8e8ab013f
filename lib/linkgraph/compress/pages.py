"""``linkgraph links --compressed`` without Spark: page URL → id and ids → URLs from the ``pages``
Delta table, then the neighbours from ``LazyConnectivityIndex``.

Nothing here imports pyspark.  The URL is canonicalised like ingest; the ``pages`` files that may
hold it are chosen by the ``url`` min/max statistics of the Delta log and read with a filter
(Parquet row-group statistics skip the rest), and the URLs of the answer's ids likewise by
``page_id``.  When the table has deletion vectors enabled (rows deleted without rewriting their
file, which a plain Parquet read would still return) the same filters run through delta-rs's SQL
engine (``deltalake.QueryBuilder``), which applies them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
from deltalake import QueryBuilder

from linkgraph.compress.lazy import DeltaFiles, LazyConnectivityIndex, read_rows
from linkgraph.errors import CompressedTableMissing, MissingTableError
from linkgraph.lake import names as N
from linkgraph.lake import paths
from linkgraph.urlpolicy import DEFAULT_POLICY, UrlPolicy
from linkgraph.urls import canonicalize, url_key


class PageDirectory:
    """URL ↔ page id of one lake's ``pages`` table, read without Spark; ``files_read`` lists the
    data files read (by the Parquet reader; the SQL engine's reads are not listed)."""

    def __init__(self, lake_root: str, policy: UrlPolicy = DEFAULT_POLICY):
        self.root = paths.lake_root(lake_root)
        self.policy = policy
        try:
            self._files = DeltaFiles(paths.table_location(lake_root, N.PAGES_TABLE))
        except CompressedTableMissing:
            missing = f"table '{N.PAGES_TABLE}' not found in lake {self.root}: run ingest first"
            raise MissingTableError(missing) from None
        self.files_read: list[str] = []

    def _read(self, chosen: list[int], column: str, wanted: list, where: str) -> dict:
        """(page_id, url) rows whose ``column`` is one of ``wanted`` (SQL: ``where``) in the files
        ``chosen`` from the log's statistics, or through the SQL engine under deletion vectors."""
        if self._files.deletion_vectors:
            query = QueryBuilder().register("pages", self._files.table)
            result = query.execute(f"SELECT {N.PAGE_ID}, {N.URL} FROM pages WHERE {where}").read_all()
            table = pa.RecordBatchReader.from_stream(result).read_all()
            return {c: table.column(c).to_pylist() for c in (N.PAGE_ID, N.URL)}
        members = set(wanted)
        rows: dict[str, list] = {N.PAGE_ID: [], N.URL: []}
        for i in chosen:
            self.files_read.append(self._files.uri(i))
            found = read_rows(self._files.local(i), column, min(wanted), max(wanted), keep=members.__contains__,
                              columns=[N.PAGE_ID, N.URL])
            for c in rows:
                rows[c].extend(found[c])
        return rows

    def page_id(self, url: str) -> int:
        """The page id of ``url`` canonicalised like ingest; ``LookupError`` when malformed or
        unknown (the messages of ``linkgraph.explore.lookup.page_id_of``).

        The files read first are those whose statistics admit both the URL and its ``url_key``:
        ingest numbers pages in ``url_key`` order and clusters ``pages`` by id, so a file's keys
        span a narrow range while its URLs (hosts not reversed) can span the alphabet.  The other
        files that admit the URL are read only if those do not hold it (rows whose ``url_key`` is
        not the URL's, or none)."""
        canonical = canonicalize(url, self.policy)
        if canonical.url is None:
            raise LookupError(f"not a valid URL ({canonical.reason}: {canonical.detail}): {url}")
        literal = "'" + canonical.url.replace("'", "''") + "'"
        key = url_key(canonical.url)
        by_key = set(self._files.candidates(N.URL_KEY, key, key))
        by_url = self._files.candidates(N.URL, canonical.url, canonical.url)
        first, rest = [i for i in by_url if i in by_key], [i for i in by_url if i not in by_key]
        rows = self._read(first, N.URL, [canonical.url], f"{N.URL} = {literal}")
        if not rows[N.PAGE_ID] and rest and not self._files.deletion_vectors:
            rows = self._read(rest, N.URL, [canonical.url], f"{N.URL} = {literal}")
        if not rows[N.PAGE_ID]:
            raise LookupError(f"no page {canonical.url} in lake {self.root}")
        return int(rows[N.PAGE_ID][0])

    def urls(self, ids: Sequence[int] | np.ndarray) -> dict[int, str]:
        """page id → URL for the ``ids`` that are pages."""
        if not len(ids):
            return {}
        wanted = np.unique(np.asarray(ids, dtype=np.int64))
        mins, maxs = self._files.stat("min", N.PAGE_ID), self._files.stat("max", N.PAGE_ID)
        chosen = []
        for i in range(len(self._files.paths)):
            if mins[i] is None or maxs[i] is None:
                chosen.append(i)
                continue
            first = np.searchsorted(wanted, mins[i])
            if first < len(wanted) and wanted[first] <= maxs[i]:
                chosen.append(i)
        listed = [int(i) for i in wanted]
        rows = self._read(chosen, N.PAGE_ID, listed, f"{N.PAGE_ID} IN ({', '.join(map(str, listed))})")
        return dict(zip((int(i) for i in rows[N.PAGE_ID]), rows[N.URL], strict=True))


def links_compressed(lake_root: str, direction: str, url: str, limit: int,
                     policy: UrlPolicy = DEFAULT_POLICY) -> list[dict]:
    """``out``/``in`` neighbours of one page as ``linkgraph.explore.lookup.links_compressed`` gives
    them (the first ``limit`` in url_key order, dicts of url and page_id in id order), read without
    Spark: the page's ``pages`` file(s), then its order chunk, one block and its offsets and the
    order chunks of those ``limit`` (``LazyConnectivityIndex``), then the files holding the
    answer's ids.  ``url`` is canonicalised under ``policy``."""
    pages = PageDirectory(lake_root, policy)
    page_id = pages.page_id(url)
    index = LazyConnectivityIndex.at(lake_root)
    ids = (index.out_links if direction == "out" else index.in_links)(page_id, limit=limit)
    urls = pages.urls(ids)
    return [{N.URL: urls.get(int(i)), N.PAGE_ID: int(i)} for i in ids]
