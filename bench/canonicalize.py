"""URL canonicalisation throughput: the vectorised Arrow path against per-URL Python, one process.

    python bench/canonicalize.py [--data ../shared/data] [--repeats 5]

Canonicalises the same URLs with ``linkgraph.urls.canonicalize_arrow`` (arrays of 10,000 values,
the size of an Arrow UDF's batches) and with ``linkgraph.urls.canonicalize`` value by value (a
list of its results: the ratios do not charge the per-URL side for building an Arrow result; a
third line shows it with that cost).  All run warm (the per-process host cache filled by a first
pass), best of ``--repeats``.  Inputs, from the URLs ``tests/test_urls.py`` proves the two paths
equal on:

* ``common_shape``: the values of ``real_shaped`` the vectorised path takes as they are (what a
  batch of canonical crawl URLs is);
* ``real_shaped``: the canonical forms of the shared data sets' URLs (Hollins, polblogs, the
  sitemap and WARC samples) and their variants of the same shape (other scheme, an added query,
  subdomains, about one in ten with a host the vectorised path hands back to Python), the mix a
  crawl's extracted links look like;
* the equivalence corpus: the same URLs as the files hold them, their hostile variants (ports,
  userinfo, IDNA, IP literals, percent-encoding, dot segments, whitespace, invalid ones) and the
  tests' hostile cases, about three quarters of them left to Python.

Prints URLs/s of each side and the fraction each path took; ends with
``canonicalize_arrow_vs_python=X`` (URLs/s of the Arrow path / URLs/s per URL, on the equivalence
corpus of at least 100,000 URLs).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from linkgraph import urls

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_urls import (  # noqa: E402  (the test module holds the corpus the equivalence test checks)
    CHUNK_ROWS,
    equivalence_corpus,
    fast_shaped_variants,
    shared_data_urls,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def best_seconds(run: Callable[[], object], repeats: int) -> float:
    run()  # warm: the host cache, Arrow's compiled regexes
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def per_url_to_arrow(values: list[str | None]) -> pa.StructArray:
    """What a per-URL UDF returning Arrow would do: ``canonicalize`` each value, then build the columns."""
    rows = [urls.canonicalize(value) for value in values]
    return pa.StructArray.from_arrays([pa.array(list(column), pa.string()) for column in zip(*rows, strict=True)],
                                      names=list(urls.CANONICAL_COLUMNS))


def measure(name: str, values: list[str | None], repeats: int) -> float:
    """Print both sides' URLs/s on ``values``; return the Arrow path's / the per-URL path's."""
    arrays = [pa.array(values[i : i + CHUNK_ROWS], pa.string()) for i in range(0, len(values), CHUNK_ROWS)]
    fast = sum(pc.sum(urls.fast_path_mask(array)).as_py() or 0 for array in arrays)
    arrow = best_seconds(lambda: [urls.canonicalize_arrow(array) for array in arrays], repeats)
    python = best_seconds(lambda: [urls.canonicalize(value) for value in values], repeats)
    to_arrow = best_seconds(lambda: [per_url_to_arrow(values[i : i + CHUNK_ROWS])
                                     for i in range(0, len(values), CHUNK_ROWS)], repeats)
    n = len(values)
    print(f"{name}: {n:,} URLs, {fast / n:.1%} taken as they are by the vectorised path")
    print(f"  canonicalize_arrow                 {arrow:7.3f} s {n / arrow:12,.0f} URLs/s")
    print(f"  canonicalize per URL               {python:7.3f} s {n / python:12,.0f} URLs/s")
    print(f"  canonicalize per URL, Arrow built  {to_arrow:7.3f} s {n / to_arrow:12,.0f} URLs/s")
    return python / arrow


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    real = shared_data_urls(args.data)
    shaped = list(dict.fromkeys(v for i, url in enumerate(real) for v in fast_shaped_variants(url, i)))
    common = pa.array(shaped, pa.string())
    common = common.filter(urls.fast_path_mask(common)).to_pylist()
    common_ratio = measure("common_shape", common, args.repeats)
    real_ratio = measure("real_shaped", shaped, args.repeats)
    corpus = equivalence_corpus(args.data)
    ratio = measure("equivalence corpus", corpus, args.repeats)
    print(f"canonicalize_arrow_vs_python_common_shape={common_ratio:.2f}")
    print(f"canonicalize_arrow_vs_python_real_shaped={real_ratio:.2f}")
    print(f"canonicalize_arrow_vs_python={ratio:.2f}")


if __name__ == "__main__":
    main()
