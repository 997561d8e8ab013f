"""Compressed link storage on one graph: size against its peers, speed, parameters.

    python bench/compress.py ../shared/data/cnr-2000/cnr-2000.arcs.tsv.gz \
        [--webgraph-classpath '/tmp/wgjava/lib/*']

Reads the arc list (``src<TAB>dst``, gzip allowed; node ids as given) and, in this one process:

* bits per link of the forward and the transposed graph, encoded in blocks exactly as
  ``linkgraph compress`` does (window 7, max reference chain 3, intervals >= 4, ζ_3 residuals),
  against the naive 64 bits (two int32 ids), a Parquet file of the (src_id, dst_id) columns
  (snappy and zstd) and WebGraph's BV files next to the arc list (``<name>.graph``,
  ``<name>-t.graph``) when they exist;
* encode throughput (links/s) against writing the same arcs to Parquet, sequential decode, and
  random access: ``out_links`` of 10,000 random pages through ``ConnectivityIndex`` against the
  same loop over an uncompressed CSR;
* the effect of the residual code, the window size and the reference-chain limit;
* interoperability: the forward graph written as a BVGraph and read back, and, with
  ``--webgraph-classpath`` (WebGraph's jars, see bench/webgraph-java/pom.xml), recompressed by
  WebGraph's own ``BVGraph`` tool, which must reproduce our single-stream encoding byte for byte.

Ends with ``forward_bits_per_link=X`` and ``reverse_bits_per_link=Y``.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from linkgraph.compress import BVParams, ConnectivityIndex
from linkgraph.compress.webgraph import read_bvgraph, read_properties

PROBES = 10_000


def load_arcs(path: str) -> np.ndarray:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as handle:
        arcs = pd.read_csv(handle, sep="\t", header=None, comment="#", dtype=np.int64).to_numpy()
    return np.unique(arcs, axis=0)


def timed(fn, *args, **kwargs):
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - started


def parquet_bits(arcs: np.ndarray, directory: Path, compression: str) -> tuple[float, float]:
    """Bits per link of (src_id, dst_id) int64 columns in Parquet, and the write time."""
    table = pa.table({"src_id": arcs[:, 0], "dst_id": arcs[:, 1]})
    path = directory / f"links-{compression}.parquet"
    _, seconds = timed(pq.write_table, table, path, compression=compression)
    return path.stat().st_size * 8 / len(arcs), seconds


def webgraph_bits(arc_list: Path) -> dict[str, float | None]:
    """Bits per link of the BV files next to the arc list (``cnr-2000.arcs.tsv.gz`` ->
    ``cnr-2000.graph``, ``cnr-2000-t.graph``)."""
    name = arc_list.name.split(".")[0]
    out = {}
    for key, base in (("forward", arc_list.parent / name), ("reverse", arc_list.parent / f"{name}-t")):
        graph = Path(f"{base}.graph")
        if graph.is_file() and Path(f"{base}.properties").is_file():
            arcs = int(read_properties(base)["arcs"])
            out[key] = graph.stat().st_size * 8 / arcs
        else:
            out[key] = None
    return out


def random_access_seconds(index: ConnectivityIndex, pages: np.ndarray) -> float:
    started = time.perf_counter()
    for page in pages:
        index.out_links(int(page))
    return time.perf_counter() - started


def csr_access_seconds(indptr: np.ndarray, successors: np.ndarray, pages: np.ndarray) -> float:
    started = time.perf_counter()
    for page in pages:
        successors[indptr[page]:indptr[page + 1]].copy()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", help="arc list src<TAB>dst (gzip allowed)")
    parser.add_argument("--block-size", type=int, default=65536, help="page ids per block (compress.block_size)")
    parser.add_argument("--webgraph-classpath", help="classpath of WebGraph's jars, to check the BVGraph export with Java")
    parser.add_argument("--skip-sweep", action="store_true", help="skip the parameter sweep")
    args = parser.parse_args(argv)

    ConnectivityIndex.from_arcs(np.array([0, 0, 1]), np.array([1, 2, 0])).out_links(0)   # compile / load kernels
    arcs, load_seconds = timed(load_arcs, args.graph)
    n = int(arcs.max()) + 1
    print(f"graph {args.graph}: {n:,} nodes, {len(arcs):,} arcs (read in {load_seconds:.1f}s)", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench-compress-"))

    index, encode_seconds = timed(ConnectivityIndex.from_arcs, arcs[:, 0], arcs[:, 1], BVParams(), args.block_size)
    forward, reverse = index.forward.bits_per_link, index.reverse.bits_per_link
    snappy, parquet_seconds = parquet_bits(arcs, work, "snappy")
    zstd, _ = parquet_bits(arcs, work, "zstd")
    bv = webgraph_bits(Path(args.graph))
    offsets_bits = 64 * (len(index.forward.offsets) + len(index.reverse.offsets)) / 2 / len(arcs)

    def fmt(value):
        return f"{value:.3f}" if value is not None else "n/a"

    print("\n## Size (bits per link)")
    print(f"| representation | forward | reverse (transposed) |\n|---|---:|---:|")
    print(f"| linkgraph compress (BV, blocks of {args.block_size} ids) | {forward:.3f} | {reverse:.3f} |")
    print(f"| WebGraph BV file | {fmt(bv['forward'])} | {fmt(bv['reverse']) if bv['reverse'] else 'n/a (WebGraph reports 2.34 for cnr-2000-t)'} |")
    print(f"| naive: two 32-bit ids | 64.000 | 64.000 |")
    print(f"| Parquet (src_id, dst_id) int64, snappy | {snappy:.3f} | — |")
    print(f"| Parquet (src_id, dst_id) int64, zstd | {zstd:.3f} | — |")
    print(f"offsets index in memory: {offsets_bits:.1f} bits per link per direction "
          f"(int64 per page; on disk gamma-coded like WebGraph's .offsets)")
    if bv["forward"]:
        print(f"forward_vs_webgraph={forward / bv['forward']:.3f}")
    if bv["reverse"]:
        print(f"reverse_vs_webgraph={reverse / bv['reverse']:.3f}")
    print(f"forward_vs_parquet_snappy={forward / snappy:.3f} forward_vs_naive={forward / 64:.3f}")

    print("\n## Speed")
    encode_rate = 2 * len(arcs) / encode_seconds
    parquet_rate = len(arcs) / parquet_seconds
    print(f"encode both directions: {encode_rate:,.0f} links/s; Parquet snappy write: {parquet_rate:,.0f} links/s; "
          f"encode_vs_parquet_write={encode_rate / parquet_rate:.2f}")
    (_, indptr, successors), decode_seconds = timed(index.forward.to_csr)
    print(f"sequential decode (forward): {len(arcs) / decode_seconds:,.0f} links/s")
    full_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(arcs[:, 0], minlength=n), out=full_indptr[1:])
    pages = np.random.default_rng(7).integers(0, n, PROBES)
    compressed = random_access_seconds(index, pages)
    plain = csr_access_seconds(full_indptr, arcs[:, 1].copy(), pages)
    links_read = int((full_indptr[pages + 1] - full_indptr[pages]).sum())
    print(f"out_links of {PROBES:,} random pages: {compressed:.3f}s in total ({links_read / compressed:,.0f} links/s); "
          f"same loop over an uncompressed CSR: {plain:.3f}s; random_access_vs_csr={compressed / plain:.2f}")
    in_seconds = timed(lambda: [index.in_links(int(p)) for p in pages])[1]
    has_seconds = timed(lambda: [index.has_link(int(a), int(b)) for a, b in zip(pages, pages[::-1])])[1]
    print(f"in_links of {PROBES:,} random pages: {in_seconds:.3f}s; has_link of {PROBES:,} random pairs: {has_seconds:.3f}s")

    if not args.skip_sweep:
        print("\n## Residual code (window 7, chain 3, intervals 4)")
        print("| residual code | forward | reverse |\n|---|---:|---:|")
        for code in ("gamma", "delta", "zeta1", "zeta2", "zeta3", "zeta4", "zeta5"):
            swept = ConnectivityIndex.from_arcs(arcs[:, 0], arcs[:, 1], BVParams(residual_code=code), args.block_size)
            print(f"| {code} | {swept.forward.bits_per_link:.3f} | {swept.reverse.bits_per_link:.3f} |", flush=True)
        print("\n## Window size and reference-chain limit (ζ_3, intervals 4)")
        print(f"| window | max chain | forward | reverse | {PROBES:,} random out_links (s) | vs chain 3, window 7 |")
        print("|---:|---:|---:|---:|---:|---:|")
        for window, chain in ((0, 1), (1, 3), (3, 3), (7, 1), (7, 3), (7, 10), (7, 1000), (15, 3)):
            swept = ConnectivityIndex.from_arcs(arcs[:, 0], arcs[:, 1], BVParams(window_size=window, max_ref_count=chain),
                                                args.block_size)
            seconds = random_access_seconds(swept, pages)
            print(f"| {window} | {chain if chain < 1000 else '∞'} | {swept.forward.bits_per_link:.3f} | "
                  f"{swept.reverse.bits_per_link:.3f} | {seconds:.3f} | {seconds / compressed:.2f} |", flush=True)

    print("\n## Interoperability (WebGraph BVGraph)")
    basename = work / "forward"
    index.write_bvgraph(basename, nodes=n)
    read_indptr, read_successors = read_bvgraph(basename)
    exact = np.array_equal(read_successors, arcs[:, 1]) and np.array_equal(np.diff(read_indptr), np.diff(full_indptr))
    print(f"BVGraph written ({basename}.graph/.offsets/.properties) and read back: {'identical' if exact else 'DIFFERENT'}")
    if args.webgraph_classpath:
        single = ConnectivityIndex.from_arcs(arcs[:, 0], arcs[:, 1], BVParams(), block_size=1 << 40)
        single.write_bvgraph(work / "single", nodes=n)
        result = subprocess.run(["java", "-cp", args.webgraph_classpath, "it.unimi.dsi.webgraph.BVGraph", "-t", "1",
                                 str(basename), str(work / "java")], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"WebGraph (Java) could not read it: {result.stderr.strip()[-500:]}")
        else:
            same = (work / "java.graph").read_bytes() == (work / "single.graph").read_bytes()
            print(f"WebGraph (Java) read our block-wise file and recompressed it: "
                  f"{'byte-identical to our single-stream encoding' if same else 'DIFFERENT from our single-stream encoding'}")

    print(f"\nforward_bits_per_link={forward:.3f}")
    print(f"reverse_bits_per_link={reverse:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
