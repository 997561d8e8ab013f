"""Boldi–Vigna successor-list compression (WebGraph's BVGraph bit stream), compiled with numba.

A *block* is the successor lists of the consecutive nodes ``first_id .. first_id + n - 1`` given
as CSR (``indptr``, ``succ``; each row strictly increasing).  Each list is written as

1. its outdegree, γ;
2. when the window is non-zero, a reference ``r`` in unary (``0 <= r <= window``; 0: none): the
   list is described against the list of node ``x - r``;
3. for ``r > 0``, the copy mask as run lengths: a block count (γ) and the blocks (γ; all but the
   first decremented), alternately copying and skipping entries of the referenced list (what
   follows the last block is copied when the count is even, skipped when odd);
4. the extra successors (those not copied): when ``min_interval > 0`` first the runs of at least
   ``min_interval`` consecutive ids as an interval count (γ) and (left, length) pairs (γ; the
   first left as ``int2nat(left - x)``, later ones as the gap after the previous interval minus
   one, lengths minus ``min_interval``), then the remaining *residuals* as gaps: the first
   ``int2nat(residual - x)``, the others ``residual - previous - 1``, in the residual code (ζ_k
   by default).

The encoder tries every list in the window whose reference chain is shorter than
``max_ref_count`` and keeps the cheapest (ties: the nearest, no reference first), exactly as
WebGraph's ``BVGraph.store`` does, so with WebGraph's parameters a whole graph encoded as one
block is bit-for-bit the ``.graph`` file WebGraph writes.  Blocks never refer outside themselves,
which is what WebGraph's parallel compression does at its split points; the concatenation of
blocks is therefore still a valid BVGraph stream.

Ids are int64 in ``[0, 2**62)``; gaps between them must stay below ``2**62``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from linkgraph.compress import bits as B

_HUGE = np.int64(1) << 62


@dataclass(frozen=True)
class BVParams:
    """Encoding parameters (WebGraph's defaults: window 7, max reference count 3, minimum
    interval length 4, ζ_3 residuals).  ``min_interval_length`` 0 disables intervals;
    ``window_size`` 0 disables references."""

    window_size: int = 7
    max_ref_count: int = 3
    min_interval_length: int = 4
    residual_code: str = "zeta3"

    def __post_init__(self) -> None:
        if not 0 <= self.window_size <= 63:
            raise ValueError(f"window_size must be in [0, 63], got {self.window_size}")
        if self.max_ref_count < 1:
            raise ValueError(f"max_ref_count must be >= 1, got {self.max_ref_count}")
        if self.min_interval_length != 0 and self.min_interval_length < 2:
            raise ValueError(f"min_interval_length must be 0 (no intervals) or >= 2, got {self.min_interval_length}")
        parse_residual_code(self.residual_code)

    @property
    def code(self) -> tuple[int, int]:
        return parse_residual_code(self.residual_code)


def parse_residual_code(name: str) -> tuple[int, int]:
    """``gamma``, ``delta`` or ``zetaK`` (K in 1..7) -> (code id, k)."""
    if name == "gamma":
        return B.GAMMA, 1
    if name == "delta":
        return B.DELTA, 1
    if name.startswith("zeta") and name[4:].isdigit() and 1 <= int(name[4:]) <= 7:
        return B.ZETA, int(name[4:])
    raise ValueError(f"residual code must be gamma, delta or zeta1..zeta7, got {name!r}")


def block_csr(nodes: np.ndarray, successors: np.ndarray, first_id: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of arcs (nodes[i] -> successors[i]) over nodes ``first_id ..`` up to the last node
    with an arc: rows sorted, repeated arcs stored once."""
    order = np.lexsort((successors, nodes))
    nodes, successors = nodes[order], successors[order]
    if len(nodes) > 1:
        distinct = np.ones(len(nodes), dtype=bool)
        distinct[1:] = (nodes[1:] != nodes[:-1]) | (successors[1:] != successors[:-1])
        nodes, successors = nodes[distinct], successors[distinct]
    local = nodes - first_id
    node_count = int(local[-1]) + 1 if len(local) else 0
    indptr = np.zeros(node_count + 1, dtype=np.int64)
    np.cumsum(np.bincount(local, minlength=node_count), out=indptr[1:])
    return indptr, successors


# --- encoding ----------------------------------------------------------------------------------

@njit(cache=True)
def _copy_blocks(ref_list, n_ref, cur_list, extras, blocks):
    """Split ``cur_list`` against the first ``n_ref`` entries of ``ref_list``: the copy-mask run
    lengths go to ``blocks``, the ids not copied to ``extras``.  Returns (n_extras, n_blocks)."""
    n_cur = cur_list.shape[0]
    n_extras = 0
    n_blocks = 0
    j = 0
    i = 0
    block_len = 0
    copying = True
    while j < n_cur and i < n_ref:
        if cur_list[j] < ref_list[i]:           # not in the reference: an extra, either state
            extras[n_extras] = cur_list[j]
            n_extras += 1
            j += 1
        elif copying and cur_list[j] > ref_list[i]:
            blocks[n_blocks] = block_len
            n_blocks += 1
            copying = False
            block_len = 0
        elif copying:                            # equal: copied
            j += 1
            i += 1
            block_len += 1
        elif cur_list[j] > ref_list[i]:          # skipping a reference entry
            i += 1
            block_len += 1
        else:                                    # equal while skipping: a copy block starts
            blocks[n_blocks] = block_len
            n_blocks += 1
            copying = True
            block_len = 0
    if copying and i < n_ref:
        blocks[n_blocks] = block_len
        n_blocks += 1
    while j < n_cur:
        extras[n_extras] = cur_list[j]
        n_extras += 1
        j += 1
    return n_extras, n_blocks


@njit(cache=True)
def _split_intervals(extras, n_extras, min_interval, lefts, lengths, residuals):
    """Runs of at least ``min_interval`` consecutive ids of ``extras`` to ``lefts``/``lengths``,
    the other ids to ``residuals``.  Returns (n_intervals, n_residuals)."""
    n_intervals = 0
    n_residuals = 0
    e = 0
    while e < n_extras:
        run = 1
        while e + run < n_extras and extras[e + run - 1] + 1 == extras[e + run]:
            run += 1
        if run >= min_interval:
            lefts[n_intervals] = extras[e]
            lengths[n_intervals] = run
            n_intervals += 1
            e += run
        else:
            residuals[n_residuals] = extras[e]
            n_residuals += 1
            e += 1
    return n_intervals, n_residuals


@njit(cache=True)
def _put_gamma(words, pos, write, value):
    """γ-code ``value`` at ``pos`` (with ``write``) or only count its bits; the new position."""
    return B.write_gamma(words, pos, value) if write else pos + B.gamma_len(value)


@njit(cache=True)
def _put_intervals(words, pos, write, node, lefts, lengths, n_intervals, min_interval):
    pos = _put_gamma(words, pos, write, n_intervals)
    prev = np.int64(0)
    for t in range(n_intervals):
        pos = _put_gamma(words, pos, write, B.int2nat(lefts[t] - node) if t == 0 else lefts[t] - prev - 1)
        prev = lefts[t] + lengths[t]
        pos = _put_gamma(words, pos, write, lengths[t] - min_interval)
    return pos


@njit(cache=True)
def _put_residuals(words, pos, write, node, residuals, n_residuals, code, k):
    prev = np.int64(0)
    for t in range(n_residuals):
        value = B.int2nat(residuals[t] - node) if t == 0 else residuals[t] - prev - 1
        pos = B.write_code(words, pos, value, code, k) if write else pos + B.code_len(value, code, k)
        prev = residuals[t]
    return pos


@njit(cache=True)
def _diff_comp(words, pos, write, node, ref, ref_list, cur_list, window, min_interval, code, k,
               extras, blocks, residuals, lefts, lengths):
    """Encode ``cur_list`` of ``node`` against ``ref_list`` (``ref`` back; 0: none), outdegree
    excluded.  With ``write`` the bits go to ``words`` at ``pos`` and the new position is
    returned; otherwise ``pos`` plus the bit count is returned and nothing is written."""
    n_ref = ref_list.shape[0] if ref > 0 else 0
    n_extras, n_blocks = _copy_blocks(ref_list, n_ref, cur_list, extras, blocks)
    if window > 0:
        pos = B.write_unary(words, pos, ref) if write else pos + B.unary_len(ref)
    if ref > 0:
        pos = _put_gamma(words, pos, write, n_blocks)
        for b in range(n_blocks):
            pos = _put_gamma(words, pos, write, blocks[b] if b == 0 else blocks[b] - 1)
    if n_extras == 0:
        return pos
    if min_interval > 0:
        n_intervals, n_residuals = _split_intervals(extras, n_extras, min_interval, lefts, lengths, residuals)
        pos = _put_intervals(words, pos, write, node, lefts, lengths, n_intervals, min_interval)
        return _put_residuals(words, pos, write, node, residuals, n_residuals, code, k)
    return _put_residuals(words, pos, write, node, extras, n_extras, code, k)


@njit(cache=True)
def _choose_references(indptr, succ, first_id, window, max_ref, min_interval, code, k):
    """Pass 1: the reference of every node and the block's total bit length."""
    n = indptr.shape[0] - 1
    refs = np.zeros(n, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    max_degree = 0
    for x in range(n):
        max_degree = max(max_degree, indptr[x + 1] - indptr[x])
    extras = np.empty(max_degree, dtype=np.int64)
    blocks = np.empty(max_degree + 1, dtype=np.int64)
    residuals = np.empty(max_degree, dtype=np.int64)
    lefts = np.empty(max_degree, dtype=np.int64)
    lengths = np.empty(max_degree, dtype=np.int64)
    dummy = np.zeros(0, dtype=np.uint64)
    total = np.int64(0)
    for x in range(n):
        cur = succ[indptr[x]:indptr[x + 1]]
        total += B.gamma_len(cur.shape[0])
        if cur.shape[0] == 0:
            continue
        best_cost = _HUGE
        best_ref = 0
        for r in range(0, min(window, x) + 1):
            y = x - r
            if r > 0 and (depth[y] >= max_ref or indptr[y + 1] == indptr[y]):
                continue
            cost = _diff_comp(dummy, np.int64(0), False, first_id + x, r, succ[indptr[y]:indptr[y + 1]], cur,
                              window, min_interval, code, k, extras, blocks, residuals, lefts, lengths)
            if cost < best_cost:
                best_cost = cost
                best_ref = r
        refs[x] = best_ref
        depth[x] = 0 if best_ref == 0 else depth[x - best_ref] + 1
        total += best_cost
    return refs, total


@njit(cache=True)
def _write_block(indptr, succ, first_id, refs, n_bits, window, min_interval, code, k):
    """Pass 2: write the lists with the chosen references; returns (words, node bit offsets)."""
    n = indptr.shape[0] - 1
    words = np.zeros((n_bits + 63) // 64 + 2, dtype=np.uint64)
    offsets = np.empty(n + 1, dtype=np.int64)
    max_degree = 0
    for x in range(n):
        max_degree = max(max_degree, indptr[x + 1] - indptr[x])
    extras = np.empty(max_degree, dtype=np.int64)
    blocks = np.empty(max_degree + 1, dtype=np.int64)
    residuals = np.empty(max_degree, dtype=np.int64)
    lefts = np.empty(max_degree, dtype=np.int64)
    lengths = np.empty(max_degree, dtype=np.int64)
    pos = np.int64(0)
    for x in range(n):
        offsets[x] = pos
        cur = succ[indptr[x]:indptr[x + 1]]
        pos = B.write_gamma(words, pos, cur.shape[0])
        if cur.shape[0] == 0:
            continue
        y = x - refs[x]
        pos = _diff_comp(words, pos, True, first_id + x, refs[x], succ[indptr[y]:indptr[y + 1]], cur,
                         window, min_interval, code, k, extras, blocks, residuals, lefts, lengths)
    offsets[n] = pos
    return words, offsets


@dataclass(frozen=True)
class EncodedBlock:
    """One encoded block: the bit stream (padded ``uint64`` words), its length in bits, the bit
    offset of every list (``node_count + 1`` entries, the last one the length) and the
    reference chosen for every node (0: none)."""

    first_id: int
    node_count: int
    arc_count: int
    words: np.ndarray
    bit_length: int
    offsets: np.ndarray
    references: np.ndarray

    def to_bytes(self) -> bytes:
        return B.words_to_bytes(self.words, self.bit_length)


def encode_block(indptr: np.ndarray, succ: np.ndarray, first_id: int, params: BVParams = BVParams()) -> EncodedBlock:
    """Encode the CSR successor lists of nodes ``first_id ..`` (rows strictly increasing)."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    succ = np.ascontiguousarray(succ, dtype=np.int64)
    code, k = params.code
    refs, n_bits = _choose_references(indptr, succ, np.int64(first_id), params.window_size, params.max_ref_count,
                                      params.min_interval_length, code, k)
    words, offsets = _write_block(indptr, succ, np.int64(first_id), refs, n_bits, params.window_size,
                                  params.min_interval_length, code, k)
    assert offsets[-1] == n_bits
    return EncodedBlock(int(first_id), len(indptr) - 1, int(indptr[-1]), words, int(n_bits), offsets, refs)


# --- decoding ----------------------------------------------------------------------------------

@njit(cache=True)
def _read_header(words, pos, window):
    """(outdegree, reference, position after them) of the list at ``pos``."""
    degree, pos = B.read_gamma(words, pos)
    ref = np.int64(0)
    if degree > 0 and window > 0:
        ref, pos = B.read_unary(words, pos)
    return degree, ref, pos


@njit(cache=True)
def _read_copied(words, pos, ref_list, out):
    """Copy the entries of ``ref_list`` the copy mask at ``pos`` selects to ``out``.
    Returns (entries copied, position after the mask)."""
    n_blocks, pos = B.read_gamma(words, pos)
    n_copied = 0
    i = 0                      # position in ref_list
    for b in range(n_blocks):
        length, pos = B.read_gamma(words, pos)
        if b > 0:
            length += 1
        if b % 2 == 0:
            for t in range(length):
                out[n_copied] = ref_list[i + t]
                n_copied += 1
        i += length
    if n_blocks % 2 == 0:
        while i < ref_list.shape[0]:
            out[n_copied] = ref_list[i]
            n_copied += 1
            i += 1
    return n_copied, pos


@njit(cache=True)
def _read_intervals(words, pos, node, min_interval, scratch):
    """The ids of the intervals at ``pos`` to ``scratch``; returns (ids written, position after)."""
    n_intervals, pos = B.read_gamma(words, pos)
    n_scratch = 0
    prev = np.int64(0)
    for t in range(n_intervals):
        value, pos = B.read_gamma(words, pos)
        left = node + B.nat2int(value) if t == 0 else prev + value + 1
        length, pos = B.read_gamma(words, pos)
        length += min_interval
        for u in range(length):
            scratch[n_scratch + u] = left + u
        n_scratch += length
        prev = left + length
    return n_scratch, pos


@njit(cache=True)
def _read_residuals(words, pos, node, count, code, k, scratch, start):
    """``count`` residuals at ``pos`` to ``scratch[start:]``; returns the position after them."""
    prev = np.int64(0)
    for t in range(count):
        value, pos = B.read_code(words, pos, code, k)
        residual = node + B.nat2int(value) if t == 0 else prev + value + 1
        scratch[start + t] = residual
        prev = residual
    return pos


@njit(cache=True)
def _merge_from_back(out, n_copied, scratch, n_scratch, degree):
    """Merge the sorted ``out[:n_copied]`` and ``scratch[:n_scratch]`` into ``out[:degree]``, in place."""
    a = n_copied - 1
    b = n_scratch - 1
    w = degree - 1
    while b >= 0:
        if a >= 0 and out[a] > scratch[b]:
            out[w] = out[a]
            a -= 1
        else:
            out[w] = scratch[b]
            b -= 1
        w -= 1


@njit(cache=True)
def _decode_list(words, pos, node, ref_list, out, window, min_interval, code, k, scratch):
    """Decode the list at ``pos`` of ``node`` into ``out`` (sized to its outdegree), with
    ``ref_list`` the list of the node it refers to (ignored when it has no reference).
    ``scratch`` holds at least ``outdegree`` int64.  Returns (outdegree, position after the list)."""
    degree, ref, pos = _read_header(words, pos, window)
    if degree == 0:
        return degree, pos
    n_copied = 0
    if ref > 0:
        n_copied, pos = _read_copied(words, pos, ref_list, out)
    n_extra = degree - n_copied
    if n_extra == 0:
        return degree, pos
    # extras (intervals, then residuals) go to scratch, then are merged with the copied part
    n_interval_ids = 0
    if min_interval > 0:
        n_interval_ids, pos = _read_intervals(words, pos, node, min_interval, scratch)
    pos = _read_residuals(words, pos, node, n_extra - n_interval_ids, code, k, scratch, n_interval_ids)
    if n_interval_ids > 0 and n_extra > n_interval_ids:
        scratch[:n_extra].sort()
    _merge_from_back(out, n_copied, scratch, n_extra, degree)
    return degree, pos


@njit(cache=True)
def _decode_block(words, first_id, node_count, arc_count, window, min_interval, code, k):
    """Sequential decoding of a whole block into CSR (indptr, succ)."""
    indptr = np.zeros(node_count + 1, dtype=np.int64)
    succ = np.empty(arc_count, dtype=np.int64)
    scratch = np.empty(max(arc_count, 1), dtype=np.int64)
    pos = np.int64(0)
    for x in range(node_count):
        start = indptr[x]
        degree, ref, _ = _read_header(words, pos, window)
        if start + degree > arc_count:
            raise ValueError("corrupt block: more arcs than its arc count")
        y = x - ref
        ref_list = succ[indptr[y]:indptr[y + 1]] if ref > 0 else succ[0:0]
        _, pos = _decode_list(words, pos, first_id + x, ref_list, succ[start:start + degree], window, min_interval,
                              code, k, scratch)
        indptr[x + 1] = start + degree
    return indptr, succ


def decode_block(words: np.ndarray, first_id: int, node_count: int, arc_count: int,
                 params: BVParams = BVParams()) -> tuple[np.ndarray, np.ndarray]:
    """All lists of an encoded block as CSR ``(indptr, succ)`` (int64, absolute ids)."""
    code, k = params.code
    return _decode_block(words, np.int64(first_id), np.int64(node_count), np.int64(arc_count), params.window_size,
                         params.min_interval_length, code, k)


@njit(cache=True)
def decode_one(words, offsets, base, first_id, x, window, min_interval, code, k):
    """Random access: the list of local node ``x`` of a block whose list ``i`` starts at bit
    ``base + offsets[i]``.  Follows the reference chain back to a list without a reference and
    decodes forward from there."""
    chain = np.empty(8, dtype=np.int64)
    degrees = np.empty(8, dtype=np.int64)
    length = 0
    node = x
    max_degree = 0
    while True:
        degree, ref, _ = _read_header(words, base + offsets[node], window)
        if length == chain.shape[0]:                 # chains are at most max_ref_count long
            chain = np.concatenate((chain, np.empty(length, dtype=np.int64)))
            degrees = np.concatenate((degrees, np.empty(length, dtype=np.int64)))
        chain[length] = node
        degrees[length] = degree
        length += 1
        max_degree = max(max_degree, degree)
        if degree == 0 or ref == 0:
            break
        node -= ref
    ping = np.empty(max_degree, dtype=np.int64)
    pong = np.empty(max_degree, dtype=np.int64)
    scratch = np.empty(max(max_degree, 1), dtype=np.int64)
    prev_len = 0
    for t in range(length - 1, -1, -1):
        node = chain[t]
        d, _ = _decode_list(words, base + offsets[node], first_id + node, ping[:prev_len], pong[:degrees[t]],
                            window, min_interval, code, k, scratch)
        ping, pong = pong, ping
        prev_len = d
    return ping[:prev_len].copy()


@njit(cache=True)
def outdegree_at(words, pos):
    degree, _ = B.read_gamma(words, pos)
    return degree
