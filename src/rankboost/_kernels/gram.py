"""The Gram matrix of a sparse matrix's rows, a block of rows at a time (numba).

For ``V`` of shape ``(n, m)`` (items x users in the recommenders), rows ``[lo, hi)`` of
``G = V V^T`` as a dense ``(hi - lo, n)`` array, without densifying ``V``. ``V`` enters
twice, as CSR arrays (the rows of the block) and as the CSR arrays of ``V^T`` (the rows of
every ``u``):

* ``indptr`` (int64, ``n + 1``), ``indices`` (int32 or int64, ``nnz``), ``data`` (float64,
  ``nnz``): ``V`` (indices in any order within a row);
* ``t_indptr`` (int64, ``m + 1``), ``t_indices``, ``t_data``: ``V^T`` the same way;
* ``out`` (float64, ``(hi - lo, n)``, zeros): row ``i - lo`` receives
  ``sum_u V[i, u] * V[j, u]`` for every ``j``.

The sum runs over ``u`` in the order of row ``i``'s indices, each term ``V[i, u] * V[j, u]``
added in turn: the order of scipy's sparse x dense product ``V[lo:hi] @ V.T.toarray()``, so
the two agree bit for bit. Work: ``sum over u of (ratings of u in the block) x (ratings of u)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel


@njit(cache=True)
def _gram_row(  # noqa: PLR0917  numba helper over one unit: its arrays, unpacked by the driver
    i: int,
    lo: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    t_indptr: np.ndarray,
    t_indices: np.ndarray,
    t_data: np.ndarray,
    out: np.ndarray,
) -> None:
    """Row ``i`` of ``V V^T`` into ``out[i - lo]``."""
    row = out[i - lo]
    for p in range(indptr[i], indptr[i + 1]):
        u = indices[p]
        a = data[p]
        for q in range(t_indptr[u], t_indptr[u + 1]):
            row[t_indices[q]] += a * t_data[q]


def _gram_rows(  # noqa: PLR0917  kernel driver: its arrays
    lo: int,
    hi: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    t_indptr: np.ndarray,
    t_indices: np.ndarray,
    t_data: np.ndarray,
    out: np.ndarray,
) -> None:
    for i in prange(hi - lo):
        _gram_row(np.int64(i + lo), lo, indptr, indices, data, t_indptr, t_indices, t_data, out)


_gram_rows_serial, _gram_rows_parallel = serial_and_parallel(_gram_rows)


def gram_rows(  # noqa: PLR0917  the kernel's arrays
    lo: int,
    hi: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    t_indptr: np.ndarray,
    t_indices: np.ndarray,
    t_data: np.ndarray,
    out: np.ndarray,
    parallel: bool,
) -> None:
    """Rows ``[lo, hi)`` of ``V V^T`` into ``out`` (arrays as the module docstring lists)."""
    driver = _gram_rows_parallel if parallel else _gram_rows_serial
    driver(lo, hi, indptr, indices, data, t_indptr, t_indices, t_data, out)
