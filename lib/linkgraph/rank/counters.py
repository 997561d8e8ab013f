"""HyperBall's counters on numpy: per node, a HyperLogLog counter of its ball B(x) and, while the
ball is small, the ball itself; and the kernels that unite counters along links
(``linkgraph.rank.hyperball`` runs them, in one task or per block).

A counter has ``m`` registers (``centrality.registers``, a power of two), ``uint8`` each: a node
id is hashed (splitmix64), its low log2(m) bits pick the register, which keeps the largest rank
(1 + the position of the lowest set bit of the remaining bits) seen.  |B(x)| is estimated by
HyperLogLog (:func:`estimate`; linear counting while small), relative standard error 1.04/√m.
Two counters unite register-wise (``max``), so uniting is idempotent and order-free.

Small balls are counted exactly, as HyperLogLog++ does with its sparse representation: a counter
also keeps the ball's node ids while it has at most :func:`exact_limit` (m) members (16 for
m ≤ 1024, √m/2 above) and counts them; past that it has registers only (count ``OVERFLOW``).
Without it two members of a tiny ball that share a register (probability about 1/m per pair) are
counted once, and a node whose whole ball is 2 pages gets harmonic 0 instead of 1: on sparse
graphs of 5,000 nodes up to 24 nodes fell outside 3 standard errors at m = 256, up to 17 at
m = 1024.  From exact_limit(m) members on one shared register is an error of at most
1/exact_limit(m), under 3 × 1.04/√m.

Layout (:class:`Counters`, also their bytes in the Spark rows): ``regs`` ``uint8[rows, m]``,
``members`` ``int64[rows, exact_limit(m)]`` (ascending node ids, -1 past the count), ``counts``
``int32[rows]`` (members, or OVERFLOW).  :func:`spread` gathers at most about
``SPREAD_CHUNK_BYTES`` of registers at once; :func:`merge` reports a counter as changed when a
register grew or its exact ball did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def exact_limit(m: int) -> int:
    """Members of a ball counted exactly (node ids kept) before its registers alone count it."""
    return max(16, math.isqrt(m) // 2)


OVERFLOW = -1   # the count of a ball past exact_limit(m) members


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a well-mixed 64-bit hash of each node id."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def initial_registers(first: int, size: int, m: int) -> np.ndarray:
    """Counters of nodes ``first .. first + size - 1``, each holding only its node."""
    with np.errstate(over="ignore"):
        h = _mix64(np.arange(first, first + size, dtype=np.int64))
    b = m.bit_length() - 1
    index = (h & np.uint64(m - 1)).astype(np.int64)
    rest = h >> np.uint64(b)
    # rank = 1 + position of the lowest set bit of the remaining 64 - b bits (capped when none is set)
    cap = 64 - b + 1
    low = rest & (~rest + np.uint64(1))
    with np.errstate(divide="ignore"):
        rank = np.where(rest == 0, cap, np.log2(low.astype(np.float64)).astype(np.int64) + 1)
    regs = np.zeros((size, m), dtype=np.uint8)
    regs[np.arange(size), index] = np.minimum(rank, cap).astype(np.uint8)
    return regs


def _alpha(m: int) -> float:
    return {16: 0.673, 32: 0.697, 64: 0.709}.get(m, 0.7213 / (1 + 1.079 / m))


_INVERSE_POWERS = np.ldexp(1.0, -np.arange(256))


def estimate(regs: np.ndarray) -> np.ndarray:
    """HyperLogLog cardinality of each row of ``regs`` (linear counting while small), computed in
    slices of rows so that the float work array stays small."""
    rows, m = regs.shape
    out = np.zeros(rows)
    step = max(1, (1 << 22) // m)
    for i in range(0, rows, step):
        part = regs[i:i + step]
        raw = _alpha(m) * m * m / _INVERSE_POWERS[part].sum(axis=1)
        zeros = (part == 0).sum(axis=1)
        with np.errstate(divide="ignore"):
            linear = m * np.log(m / np.maximum(zeros, 1))
        out[i:i + step] = np.where((raw <= 2.5 * m) & (zeros > 0), linear, raw)
    return out


@dataclass
class Counters:
    """The counters of some nodes: HyperLogLog registers of each ball and, while the ball has at
    most ``exact_limit(m)`` members, the members themselves (``members[i, :counts[i]]``, ascending
    node ids; ``counts[i]`` is OVERFLOW once the ball is larger, the registers alone then)."""

    regs: np.ndarray      # uint8[rows, m]
    members: np.ndarray   # int64[rows, exact_limit(m)], -1 past counts[i]
    counts: np.ndarray    # int32[rows]

    @staticmethod
    def initial(first: int, size: int, m: int) -> Counters:
        """Counters of nodes ``first .. first + size - 1``, each ball holding only its node."""
        members = np.full((size, exact_limit(m)), -1, dtype=np.int64)
        members[:, 0] = np.arange(first, first + size, dtype=np.int64)
        return Counters(initial_registers(first, size, m), members, np.ones(size, dtype=np.int32))

    @staticmethod
    def empty(m: int) -> Counters:
        return Counters(np.zeros((0, m), dtype=np.uint8), np.zeros((0, exact_limit(m)), dtype=np.int64),
                        np.zeros(0, dtype=np.int32))

    @staticmethod
    def from_bytes(regs: bytes, members: bytes, counts: bytes, m: int, writable: bool = False) -> Counters:
        c = Counters(np.frombuffer(regs, dtype=np.uint8).reshape(-1, m),
                     np.frombuffer(members, dtype=np.int64).reshape(-1, exact_limit(m)),
                     np.frombuffer(counts, dtype=np.int32))
        return Counters(c.regs.copy(), c.members.copy(), c.counts.copy()) if writable else c

    @staticmethod
    def concat(parts: list[Counters]) -> Counters:
        return Counters(np.concatenate([p.regs for p in parts]), np.concatenate([p.members for p in parts]),
                        np.concatenate([p.counts for p in parts]))

    def to_bytes(self) -> tuple[bytes, bytes, bytes]:
        return self.regs.tobytes(), self.members.tobytes(), self.counts.tobytes()

    def sizes(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """|B(x)| of the given rows: the exact count while there is one, else the estimate."""
        counts = self.counts[rows]
        out = counts.astype(np.float64)
        over = counts == OVERFLOW
        if over.any():
            out[over] = estimate(self.regs[rows][over])
        return out


def union_members(groups: np.ndarray, counts: np.ndarray, table: np.ndarray, rows: np.ndarray, n_groups: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per group 0..n_groups-1, the union of the member lists of its items (item i belongs to
    ``groups[i]`` and has ``table[rows[i], :counts[i]]``): (members, counts) as in :class:`Counters`.
    A group with an OVERFLOW item or more than ``table.shape[1]`` distinct members overflows; only
    the lists of items that have one are gathered."""
    limit = table.shape[1]
    overflowed = np.bincount(groups[counts == OVERFLOW], minlength=n_groups) > 0
    listed = counts > 0
    groups, members, counts = groups[listed], table[rows[listed]], counts[listed]
    present = np.arange(limit)[None, :] < counts[:, None]
    pair_group = np.broadcast_to(groups[:, None], present.shape)[present]
    pair_member = members[present]
    order = np.lexsort((pair_member, pair_group))
    pair_group, pair_member = pair_group[order], pair_member[order]
    first = np.ones(len(pair_group), dtype=bool)
    first[1:] = (pair_group[1:] != pair_group[:-1]) | (pair_member[1:] != pair_member[:-1])
    pair_group, pair_member = pair_group[first], pair_member[first]
    distinct = np.bincount(pair_group, minlength=n_groups)
    overflowed |= distinct > limit
    out = np.full((n_groups, limit), -1, dtype=np.int64)
    position = np.arange(len(pair_group)) - (np.cumsum(distinct) - distinct)[pair_group]
    fits = ~overflowed[pair_group]
    out[pair_group[fits], position[fits]] = pair_member[fits]
    return out, np.where(overflowed, OVERFLOW, distinct).astype(np.int32)


# --- kernels ----------------------------------------------------------------------------------

SPREAD_CHUNK_BYTES = 1 << 23   # gathered registers per chunk of arcs (8 MiB)


def spread(indptr: np.ndarray, indices: np.ndarray, counters: Counters, changed: np.ndarray,
           sources_of_rows: np.ndarray | None = None) -> tuple[np.ndarray, Counters]:
    """(destination rows, the union of the *changed* sources' counters linking each: register-wise
    max, member lists united).  ``indptr`` has one entry per local source (CSR), or per entry of
    ``sources_of_rows``, the local sources that have links (hypersparse, DCSR).  Arcs are taken
    in chunks of whole destinations, so at most about ``SPREAD_CHUNK_BYTES`` of gathered
    registers are in memory at once."""
    m = counters.regs.shape[1]
    empty = np.zeros(0, dtype=np.int64), Counters.empty(m)
    if sources_of_rows is None:
        positions = sources = np.flatnonzero(changed)
    else:
        positions = np.flatnonzero(changed[sources_of_rows])
        sources = sources_of_rows[positions]
    if len(sources) == 0:
        return empty
    starts, counts = indptr[positions], indptr[positions + 1] - indptr[positions]
    keep = counts > 0
    sources, starts, counts = sources[keep], starts[keep], counts[keep]
    if len(sources) == 0:
        return empty
    total = int(counts.sum())
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts) + np.arange(total)
    dst = indices[offsets].astype(np.int64)
    src = np.repeat(sources, counts)
    order = np.argsort(dst, kind="stable")
    dst, src = dst[order], src[order]
    rows, first = np.unique(dst, return_index=True)
    bounds = np.append(first, total)
    out = Counters(np.empty((len(rows), m), dtype=np.uint8),
                   np.empty((len(rows), counters.members.shape[1]), dtype=np.int64),
                   np.empty(len(rows), dtype=np.int32))
    per_chunk = max(1, SPREAD_CHUNK_BYTES // m)
    r = 0
    while r < len(rows):
        # whole destinations rows[r:e], about per_chunk arcs (at least one destination)
        e = max(r + 1, int(np.searchsorted(bounds, bounds[r] + per_chunk, side="right")) - 1)
        e = min(e, len(rows))
        lo, hi = int(bounds[r]), int(bounds[e])
        chunk_src = src[lo:hi]
        out.regs[r:e] = np.maximum.reduceat(counters.regs[chunk_src], bounds[r:e] - lo, axis=0)
        groups = np.repeat(np.arange(e - r), np.diff(bounds[r:e + 1]))
        out.members[r:e], out.counts[r:e] = union_members(groups, counters.counts[chunk_src], counters.members,
                                                          chunk_src, e - r)
        r = e
    return rows, out


def merge(counters: Counters, rows: np.ndarray, incoming: Counters) -> np.ndarray:
    """Unite ``incoming`` into ``counters[rows]`` (rows may repeat); returns the changed mask: a
    counter changed when a register grew or its exact ball did (which a register may not show)."""
    changed = np.zeros(counters.regs.shape[0], dtype=bool)
    if len(rows) == 0:
        return changed
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    unique, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    best = np.maximum.reduceat(incoming.regs[order], first, axis=0)
    regs = np.maximum(counters.regs[unique], best)
    groups = np.concatenate((np.arange(len(unique)), inverse))
    members, counts = union_members(groups, np.concatenate((counters.counts[unique], incoming.counts[order])),
                                    np.concatenate((counters.members[unique], incoming.members[order])),
                                    np.arange(len(groups)), len(unique))
    diff = (regs != counters.regs[unique]).any(axis=1) | (counts != counters.counts[unique])
    grown = unique[diff]
    counters.regs[grown], counters.members[grown], counters.counts[grown] = regs[diff], members[diff], counts[diff]
    changed[grown] = True
    return changed
