"""WebGraph BVGraph files: write a compressed graph as ``BASENAME.graph`` / ``.offsets`` /
``.properties`` for LAW's Java tools, webgraph-rs and the ``webgraph`` Python package; read such
files back (sequentially) into CSR.

The block streams are already BVGraph streams (see ``linkgraph.compress.bv``): writing is
concatenating them bit by bit, with a one-bit empty list (outdegree 0) for every node id that no
block covers, and γ-coding the list offsets.  BVGraph needs node ids ``0 .. nodes - 1`` below
``2**31`` (Java ints).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from linkgraph.compress import bits as B
from linkgraph.compress.bv import BVParams, decode_block
from linkgraph.compress.graph import CompressedGraph

GRAPH_CLASS = "it.unimi.dsi.webgraph.BVGraph"
MAX_NODES = 2**31 - 1
_RESIDUAL_FLAGS = {"gamma": "RESIDUALS_GAMMA", "delta": "RESIDUALS_DELTA"}


@njit(cache=True)
def _concatenate(words, block_first, block_nodes, block_bit_base, block_bit_length, block_offset_base, offsets,
                 nodes):
    """One stream of ``nodes`` lists from the blocks; returns (words, bit offsets of the lists)."""
    gaps = nodes - block_nodes.sum()
    n_bits = block_bit_length.sum() + gaps
    out = np.zeros((n_bits + 63) // 64 + 2, dtype=np.uint64)
    list_offsets = np.empty(nodes + 1, dtype=np.int64)
    pos = np.int64(0)
    node = np.int64(0)
    for b in range(block_first.shape[0]):
        while node < block_first[b]:        # γ(0) = "1": a node without a list
            list_offsets[node] = pos
            pos = B.write_bits(out, pos, 1, 1)
            node += 1
        o = block_offset_base[b]
        for i in range(block_nodes[b]):
            list_offsets[node + i] = pos + offsets[o + i]
        src = block_bit_base[b]
        remaining = block_bit_length[b]
        while remaining > 0:
            chunk = min(remaining, 64)
            value, src = B.read_bits(words, src, chunk)
            pos = B.write_bits(out, pos, value, chunk)
            remaining -= chunk
        node += block_nodes[b]
    while node < nodes:
        list_offsets[node] = pos
        pos = B.write_bits(out, pos, 1, 1)
        node += 1
    list_offsets[nodes] = pos
    return out, list_offsets


def write_bvgraph(graph: CompressedGraph, basename: str | Path, nodes: int | None = None) -> dict[str, str]:
    """Write ``graph`` as a BVGraph; ``nodes`` defaults to one past the last id with a list
    (every successor must be below it: ``ConnectivityIndex.write_bvgraph`` sees to that).
    Returns the properties written."""
    covered = int((graph.block_first + graph.block_nodes).max()) if len(graph.block_first) else 0
    nodes = covered if nodes is None else int(nodes)
    if nodes < covered:
        raise ValueError(f"nodes={nodes} but the graph has lists up to id {covered - 1}")
    if nodes > MAX_NODES:
        raise ValueError(f"BVGraph node ids are Java ints: {nodes} nodes is more than {MAX_NODES}")
    words, list_offsets = _concatenate(graph.words, graph.block_first, graph.block_nodes, graph.block_bit_base,
                                       graph.block_bit_length, graph.block_offset_base, graph.offsets, np.int64(nodes))
    n_bits = int(list_offsets[-1])
    offset_words, offset_bits = B.gamma_encode_gaps(list_offsets)
    params = graph.params
    code, k = params.code
    properties = {
        "graphclass": GRAPH_CLASS,
        "version": "0",
        "nodes": str(nodes),
        "arcs": str(graph.arcs),
        "windowsize": str(params.window_size),
        "maxrefcount": str(params.max_ref_count),
        "minintervallength": str(params.min_interval_length),
        "zetak": str(k if params.residual_code.startswith("zeta") else 3),
        "compressionflags": _RESIDUAL_FLAGS.get(params.residual_code, ""),
        "bitsperlink": f"{n_bits / graph.arcs:.3f}" if graph.arcs else "0",
    }
    base = str(basename)
    Path(base + ".graph").write_bytes(B.words_to_bytes(words, n_bits))
    Path(base + ".offsets").write_bytes(B.words_to_bytes(offset_words, int(offset_bits)))
    Path(base + ".properties").write_text(
        "#BVGraph properties\n" + "".join(f"{key}={value}\n" for key, value in properties.items()))
    return properties


def read_properties(basename: str | Path) -> dict[str, str]:
    properties = {}
    for line in Path(str(basename) + ".properties").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            key, value = line.split("=", 1)
            properties[key.strip()] = value.strip()
    return properties


def bvgraph_params(properties: dict[str, str]) -> BVParams:
    """Our parameters for a BVGraph's properties (γ outdegrees/blocks/intervals and unary
    references, WebGraph's defaults, are the only other codes supported)."""
    if properties.get("graphclass", GRAPH_CLASS).lstrip(".") not in (GRAPH_CLASS, "BVGraph"):
        raise ValueError(f"not a BVGraph: graphclass={properties.get('graphclass')}")
    if properties.get("version", "0") != "0":
        raise ValueError(f"unsupported BVGraph version {properties.get('version')}")
    flags = {f.strip() for f in properties.get("compressionflags", "").split("|") if f.strip()}
    residual = f"zeta{properties.get('zetak', '3')}"
    for name, flag in _RESIDUAL_FLAGS.items():
        if flag in flags:
            residual = name
            flags.discard(flag)
    flags.discard("RESIDUALS_ZETA")
    if flags:
        raise ValueError(f"unsupported BVGraph compression flags {sorted(flags)}")
    return BVParams(window_size=int(properties["windowsize"]), max_ref_count=int(properties.get("maxrefcount", 3)),
                    min_interval_length=int(properties["minintervallength"]), residual_code=residual)


def read_bvgraph(basename: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Decode ``BASENAME.graph`` sequentially: CSR ``(indptr, successors)`` over its nodes."""
    properties = read_properties(basename)
    params = bvgraph_params(properties)
    words = B.bytes_to_words(Path(str(basename) + ".graph").read_bytes())
    return decode_block(words, 0, int(properties["nodes"]), int(properties["arcs"]), params)


def read_offsets(basename: str | Path, nodes: int) -> np.ndarray:
    """The ``nodes + 1`` list bit offsets of ``BASENAME.offsets``."""
    return B.gamma_decode_gaps(B.bytes_to_words(Path(str(basename) + ".offsets").read_bytes()), nodes + 1)
