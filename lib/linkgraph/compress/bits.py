"""Bit streams and instantaneous integer codes, compiled with numba.

A bit stream is a ``uint64`` array read most-significant bit first: bit ``p`` of the stream is bit
``63 - p % 64`` of word ``p // 64``.  Stored as bytes (``words_to_bytes``) this is exactly the
big-endian bit order of WebGraph's ``OutputBitStream``, so a stream written here is a valid
WebGraph bit stream.  Writers only OR bits into a zeroed buffer, so writing zeros is advancing the
position.  Every function takes and returns the bit position (an ``int64``).

The codes are WebGraph's (dsiutils): for a natural number ``x`` (``0 <= x < 2**62``)

* unary: ``x`` zeros, then a one;
* γ: ``x + 1`` in binary, preceded by as many zeros as it has bits after its leading one;
* δ: like γ but the bit count is itself γ-coded;
* ζ_k (Boldi–Vigna): ``h = msb(x + 1) // k`` in unary, then ``x + 1`` in a minimal binary code of
  the interval ``[2^(hk), 2^((h+1)k))``.

Readers are not bounds-checked (numba does not check either): buffers carry two zero words of
padding past the last written bit, which ``new_words`` provides.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

# Residual code identifiers (the only code with a choice; BV's other fields use fixed codes).
GAMMA = 0
DELTA = 1
ZETA = 2



def new_words(n_bits: int) -> np.ndarray:
    """A zeroed buffer for ``n_bits`` bits plus the readers' two words of padding."""
    return np.zeros((n_bits + 63) // 64 + 2, dtype=np.uint64)


def words_to_bytes(words: np.ndarray, n_bits: int) -> bytes:
    """The first ``n_bits`` bits as bytes, most significant bit first (WebGraph's layout)."""
    return words.astype(">u8").tobytes()[: (n_bits + 7) // 8]


def bytes_to_words(data: bytes | memoryview | np.ndarray) -> np.ndarray:
    """Inverse of ``words_to_bytes``: the stream as padded ``uint64`` words."""
    raw = np.frombuffer(data, dtype=np.uint8)
    padded = np.zeros(((len(raw) + 7) // 8 + 2) * 8, dtype=np.uint8)
    padded[: len(raw)] = raw
    return padded.view(">u8").astype(np.uint64)


@njit(cache=True)
def msb(x):
    """Index of the most significant one bit of ``x >= 1``."""
    return 63 - np.int64(leading_zeros(np.uint64(x)))


@njit(cache=True)
def int2nat(x):
    """Fold an integer onto the naturals: 0, -1, 1, -2, 2, ... -> 0, 1, 2, 3, 4, ..."""
    return (x << 1) ^ (x >> 63)


@njit(cache=True)
def nat2int(x):
    return (x >> 1) ^ -(x & 1)


# --- lengths in bits ---------------------------------------------------------------------------

@njit(cache=True)
def unary_len(x):
    return x + 1


@njit(cache=True)
def gamma_len(x):
    return 2 * msb(x + 1) + 1


@njit(cache=True)
def delta_len(x):
    m = msb(x + 1)
    return gamma_len(m) + m


@njit(cache=True)
def zeta_len(x, k):
    v = x + 1
    h = msb(v) // k
    left = np.int64(1) << (h * k)
    return h + 1 + (h * k + k - 1 if v - left < left else h * k + k)


@njit(cache=True)
def code_len(x, code, k):
    if code == ZETA:
        return zeta_len(x, k)
    if code == GAMMA:
        return gamma_len(x)
    return delta_len(x)


# --- writers -----------------------------------------------------------------------------------

@njit(cache=True)
def write_bits(words, pos, value, n_bits):
    """Write the low ``n_bits`` bits of ``value`` (any count; above 64 the excess is zeros)."""
    if n_bits > 64:
        pos += n_bits - 64
        n_bits = 64
    if n_bits == 0:
        return pos
    v = np.uint64(value)
    w = pos >> 6
    free = 64 - (pos & 63)
    if n_bits <= free:
        words[w] |= v << np.uint64(free - n_bits)
    else:
        rest = n_bits - free
        words[w] |= v >> np.uint64(rest)
        words[w + 1] |= v << np.uint64(64 - rest)
    return pos + n_bits


@njit(cache=True)
def write_unary(words, pos, x):
    return write_bits(words, pos + x, 1, 1)


@njit(cache=True)
def write_gamma(words, pos, x):
    v = x + 1
    m = msb(v)
    return write_bits(words, pos + m, v, m + 1)


@njit(cache=True)
def write_delta(words, pos, x):
    v = x + 1
    m = msb(v)
    pos = write_gamma(words, pos, m)
    return write_bits(words, pos, v & ((np.int64(1) << m) - 1), m)


@njit(cache=True)
def write_zeta(words, pos, x, k):
    v = x + 1
    h = msb(v) // k
    pos = write_unary(words, pos, h)
    left = np.int64(1) << (h * k)
    if v - left < left:
        return write_bits(words, pos, v - left, h * k + k - 1)
    return write_bits(words, pos, v, h * k + k)


@njit(cache=True)
def write_code(words, pos, x, code, k):
    if code == ZETA:
        return write_zeta(words, pos, x, k)
    if code == GAMMA:
        return write_gamma(words, pos, x)
    return write_delta(words, pos, x)


# --- readers (each returns (value, new position)) ------------------------------------------------

@njit(cache=True)
def read_bits(words, pos, n_bits):
    """Read ``n_bits`` bits (any count; above 64 the leading ones must be zeros) as an int64."""
    if n_bits > 64:
        pos += n_bits - 64
        n_bits = 64
    if n_bits == 0:
        return np.int64(0), pos
    w = pos >> 6
    off = pos & 63
    x = words[w] << np.uint64(off)
    if off + n_bits > 64:
        x |= words[w + 1] >> np.uint64(64 - off)
    return np.int64(x >> np.uint64(64 - n_bits)), pos + n_bits


@njit(cache=True)
def read_unary(words, pos):
    count = np.int64(0)
    w = pos >> 6
    x = words[w] << np.uint64(pos & 63)
    if x != 0:
        z = np.int64(leading_zeros(x))
        return z, pos + z + 1
    count = 64 - (pos & 63)
    w += 1
    while words[w] == 0:
        count += 64
        w += 1
    z = np.int64(leading_zeros(words[w]))
    count += z
    return count, pos + count + 1


@njit(cache=True)
def read_gamma(words, pos):
    m, pos = read_unary(words, pos)
    low, pos = read_bits(words, pos, m)
    return ((np.int64(1) << m) | low) - 1, pos


@njit(cache=True)
def read_delta(words, pos):
    m, pos = read_gamma(words, pos)
    low, pos = read_bits(words, pos, m)
    return ((np.int64(1) << m) | low) - 1, pos


@njit(cache=True)
def read_zeta(words, pos, k):
    h, pos = read_unary(words, pos)
    left = np.int64(1) << (h * k)
    m, pos = read_bits(words, pos, h * k + k - 1)
    if m < left:
        return m + left - 1, pos
    bit, pos = read_bits(words, pos, 1)
    return (m << 1) + bit - 1, pos


@njit(cache=True)
def read_code(words, pos, code, k):
    if code == ZETA:
        return read_zeta(words, pos, k)
    if code == GAMMA:
        return read_gamma(words, pos)
    return read_delta(words, pos)


# --- whole arrays ------------------------------------------------------------------------------

@njit(cache=True)
def gamma_encode_gaps(values):
    """γ-code the gaps of a non-decreasing int64 array (first value against 0), as WebGraph's
    ``.offsets`` file does.  Returns (words, bit length)."""
    n_bits = np.int64(0)
    prev = np.int64(0)
    for v in values:
        n_bits += gamma_len(v - prev)
        prev = v
    words = np.zeros((n_bits + 63) // 64 + 2, dtype=np.uint64)
    pos = np.int64(0)
    prev = np.int64(0)
    for v in values:
        pos = write_gamma(words, pos, v - prev)
        prev = v
    return words, n_bits


@njit(cache=True)
def gamma_decode_gaps(words, count):
    """Inverse of ``gamma_encode_gaps``: ``count`` prefix sums of γ-coded gaps."""
    out = np.empty(count, dtype=np.int64)
    pos = np.int64(0)
    total = np.int64(0)
    for i in range(count):
        gap, pos = read_gamma(words, pos)
        total += gap
        out[i] = total
    return out


@njit(cache=True)
def gamma_encode_pairs(keys, values, first_key):
    """γ-code (key, value) pairs with strictly increasing ``keys >= first_key``: per pair the gap
    from the previous key (from ``first_key`` for the first, minus one after it) and the signed
    difference from the previous value (from 0 for the first) folded by ``int2nat``.  Returns
    (words, bit length)."""
    n_bits = np.int64(0)
    prev_key, prev_value = np.int64(first_key) - 1, np.int64(0)
    for i in range(len(keys)):
        n_bits += gamma_len(keys[i] - prev_key - 1) + gamma_len(int2nat(values[i] - prev_value))
        prev_key, prev_value = keys[i], values[i]
    words = np.zeros((n_bits + 63) // 64 + 2, dtype=np.uint64)
    pos = np.int64(0)
    prev_key, prev_value = np.int64(first_key) - 1, np.int64(0)
    for i in range(len(keys)):
        pos = write_gamma(words, pos, keys[i] - prev_key - 1)
        pos = write_gamma(words, pos, int2nat(values[i] - prev_value))
        prev_key, prev_value = keys[i], values[i]
    return words, n_bits


@njit(cache=True)
def gamma_decode_pairs(words, count, first_key):
    """Inverse of ``gamma_encode_pairs``: (keys, values), ``count`` of each."""
    keys = np.empty(count, dtype=np.int64)
    values = np.empty(count, dtype=np.int64)
    pos = np.int64(0)
    key, value = np.int64(first_key) - 1, np.int64(0)
    for i in range(count):
        gap, pos = read_gamma(words, pos)
        folded, pos = read_gamma(words, pos)
        key += gap + 1
        value += nat2int(folded)
        keys[i] = key
        values[i] = value
    return keys, values
