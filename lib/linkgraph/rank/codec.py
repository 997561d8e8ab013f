"""The rank engine's byte codec: the values that cross a shuffle or a checkpoint as flat bytes.

Arrays travel as their raw bytes (:func:`f64` and :func:`i32` read them back without a copy).  A
partial sum a source block sends a destination block is one bytes value (:func:`encode_partial`):
(destination row, value per vector) for the rows it reaches — or a dense vector when that is
smaller — with the rows as gaps and every array byte plane by byte plane, so the high bytes of
small row gaps and of doubles of like magnitude line up into runs that Spark's shuffle
compression (LZ4 by default) removes.  The bytes shuffled per iteration are at most
12 · (distinct (source block, destination page) pairs) · K before compression (compressed, ~8
bytes per entry), plus Spark's framing of each non-empty (source block, destination block)
shuffle segment (≈ 71 bytes, measured: negligible unless a block pair carries only a few links).

A rank record ("R", float64[K, size] ranks, L1 change, dangling mass) is checkpointed as ("Z",
zstd of the ranks' byte planes, raw length, L1 change, dangling mass) (:func:`pack_rank_record`):
ranks of one graph share their exponent bytes, so the checkpoint holds about 7 bytes per page and
vector.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def f64(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.float64)


def i32(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.int32)


def _planes(values: np.ndarray) -> bytes:
    """The bytes of a fixed-width array stored plane by plane (every element's first byte, then
    every second byte, ...): the high bytes of small row gaps and of doubles of like magnitude
    line up into runs that Spark's shuffle compression (LZ4 by default) removes."""
    width = values.dtype.itemsize
    return np.ascontiguousarray(values.reshape(-1).view(np.uint8).reshape(-1, width).T).tobytes()


def _unplanes(value: bytes, dtype: type, count: int, offset: int) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    planes = np.frombuffer(value, dtype=np.uint8, count=count * width, offset=offset).reshape(width, count)
    return np.ascontiguousarray(planes.T).view(dtype).reshape(count)


def encode_partial(rows: np.ndarray | None, partial: np.ndarray) -> bytes:
    """A partial sum as one bytes value: int32 row count (−1: dense, every row), the gaps between
    the (ascending) rows as uint32, then float64[K, rows], the arrays byte plane by byte plane.
    One flat value rather than a tuple keeps the serialized framing of each (source block,
    destination block) record to the pickle of one bytes object; gaps and planes let the shuffle
    compression take a sparse entry from 12 bytes to about 8 (measured in docs/scaling.md)."""
    if rows is None:
        return np.int32(-1).tobytes() + _planes(partial)
    gaps = np.diff(rows, prepend=0).astype(np.uint32)
    return np.int32(len(rows)).tobytes() + _planes(gaps) + _planes(partial)


def decode_partial(value: bytes, n_vectors: int) -> tuple[np.ndarray | None, np.ndarray]:
    count = int(np.frombuffer(value, dtype=np.int32, count=1)[0])
    if count < 0:
        size = (len(value) - 4) // 8
        return None, _unplanes(value, np.float64, size, 4).reshape(n_vectors, -1)
    rows = np.cumsum(_unplanes(value, np.uint32, count, 4), dtype=np.int64)
    return rows, _unplanes(value, np.float64, count * n_vectors, 4 + 4 * count).reshape(n_vectors, -1)


def pack_rank_record(value: tuple) -> tuple:
    """A rank record as its checkpoint stores it: ("Z", zstd of the ranks' byte planes, raw
    length, l1, dangling mass).  Ranks of one graph share their exponent bytes, which the planes
    line up for the compressor."""
    planes = _planes(f64(value[1]))
    return "Z", pa.compress(planes, codec="zstd", asbytes=True), len(planes), value[2], value[3]


def unpack_rank_record(value: tuple) -> tuple:
    """The rank record ``pack_rank_record`` stored."""
    planes = pa.decompress(value[1], decompressed_size=value[2], codec="zstd", asbytes=True)
    return "R", _unplanes(planes, np.float64, value[2] // 8, 0).tobytes(), value[3], value[4]
