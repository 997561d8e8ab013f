"""The rank engine's single-task solver: a graph whose packed links fit the budget of one task.

A graph whose packed links fit the budget of one task (12·links + 8·pages ≤ ``block_bytes``) is,
with ``single_task``, iterated to convergence inside one task (:func:`one_task_solver`): the same
arithmetic as the distributed path (``r ← d · (Mᵀ r + D · v) + (1 − d) · v``, each vector frozen
once its L1 change falls below ``tol``) without a Spark job per iteration.  The task gathers the
packed chunks into one CSR matrix of n × n, iterates, and emits one record: ("S", float64[K, n]
ranks, float64[iterations, 5] per-iteration (iteration, L1, dangling mass, seconds, active
vectors), int32[K] iterations per vector); the statistics reach the driver when the task ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix

from linkgraph.rank.codec import f64, i32
from linkgraph.rank.packing import teleport_vector


def one_task_solver(n_vectors: int, n: int, damping: float, tol: float, max_iter: int,
                    uniform_rows: np.ndarray | None, uniform: bool) -> Callable[[Iterable], Iterator]:
    """The task that solves the whole graph: its inputs are every ("E", ...) chunk, the ("D", ...)
    mask, the ("R", ...) starting ranks and, unless ``uniform``, the ("T", ...) teleport chunks;
    ``uniform_rows`` marks the vectors uniform over all pages."""

    def solve(items: Iterable) -> Iterator:
        matrix, r, dangling_mask, teleports = _gather_one_task(items, n_vectors, n)
        v = teleport_vector(None if uniform else teleports, n_vectors, n, n, uniform_rows)
        r, history, vector_iterations = _power_iterate(matrix, r, dangling_mask, v, damping, tol, max_iter)
        yield 0, ("S", r.tobytes(), np.asarray(history, dtype=np.float64).tobytes(), vector_iterations.tobytes())

    return solve


def _gather_one_task(items: Iterable, n_vectors: int, n: int) -> tuple[csr_matrix, np.ndarray, np.ndarray, list]:
    """The single task's inputs: (the whole transition matrix, ranks, dangling mask, teleport chunks)."""
    row_ids, cols, weights, teleports = [], [], [], []
    r = dangling_mask = None
    for _, value in items:
        if value[0] == "E":
            indptr = i32(value[3])
            rows = i32(value[2]) if value[2] else np.arange(len(indptr) - 1, dtype=np.int32)
            row_ids.append(np.repeat(rows, np.diff(indptr)))
            cols.append(i32(value[4]))
            weights.append(f64(value[5]))
        elif value[0] == "D":
            dangling_mask = np.frombuffer(value[1], dtype=bool)
        elif value[0] == "T":
            teleports.append(value)
        else:
            r = f64(value[1]).reshape(n_vectors, n).copy()
    assert r is not None and dangling_mask is not None, "the block's ranks and dangling mask"
    if row_ids:
        matrix = coo_matrix((np.concatenate(weights), (np.concatenate(row_ids), np.concatenate(cols))),
                            shape=(n, n)).tocsr()
    else:
        matrix = coo_matrix((n, n)).tocsr()
    return matrix, r, dangling_mask, teleports


def _power_iterate(matrix: csr_matrix, r: np.ndarray, dangling_mask: np.ndarray, v: np.ndarray | float,
                   damping: float, tol: float, max_iter: int) -> tuple[np.ndarray, list, np.ndarray]:
    """The power iteration to convergence: (ranks, per-iteration (iteration, L1, dangling mass,
    seconds, active vectors), iterations per vector)."""
    n_vectors = r.shape[0]
    active = np.ones(n_vectors, dtype=bool)
    vector_iterations = np.full(n_vectors, max_iter, dtype=np.int32)
    history = []
    mass = r[:, dangling_mask].sum(axis=1)
    iteration = 0
    while iteration < max_iter and active.any():
        started = time.monotonic()
        iteration += 1
        new = damping * (np.ascontiguousarray((matrix @ r.T).T) + mass[:, None] * v) + (1.0 - damping) * v
        new[~active] = r[~active]
        l1 = np.abs(new - r).sum(axis=1)
        r, mass = new, new[:, dangling_mask].sum(axis=1)
        finished = active & (l1 < tol)
        vector_iterations[finished] = iteration
        active &= ~finished
        history.append((iteration, l1.max(), mass.max(), time.monotonic() - started, active.sum()))
    return r, history, vector_iterations
