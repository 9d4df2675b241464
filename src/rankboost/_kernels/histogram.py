"""Potential histograms: ``hist[i, b] = sum of pi(x) over rows with code_i(x) = b``.

This is the O(d n) part of a round (paper section 4). One body per feature; the parallel driver
splits features across threads and each feature's sum runs serially in row order, so the
result is bit-identical whatever the thread count.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel

_BYTE = np.uint64(255)
#: uint8 codes are read eight at a time as one uint64 word, byte s = row base + s: true on
#: little-endian machines only (elsewhere the byte loop runs).
_WORDS = sys.byteorder == "little"


@njit(cache=True)
def _feature_histogram(
    codes: np.ndarray, pi: np.ndarray, scale: float, i: int, out: np.ndarray
) -> None:
    row = codes[i]
    acc = np.empty(out.shape[1])  # np.zeros: np.empty and a loop compile faster (cold start)
    for b in range(out.shape[1]):
        acc[b] = 0.0
    for j in range(row.shape[0]):
        acc[row[j]] += pi[j]
    for b in range(out.shape[1]):  # a loop, not out[i, :] = ...: see _four_histograms
        out[i, b] = acc[b] * scale


@njit(cache=True, inline="always")
def _add_words(
    codes: np.ndarray, pi: np.ndarray, i: int, a0: np.ndarray, a1: np.ndarray,
    a2: np.ndarray, a3: np.ndarray,
) -> int:  # fmt: skip
    """Add the first ``m`` rows of features ``i .. i+3`` to ``a0 .. a3``; returns ``m``.

    ``m`` is n rounded down to a multiple of 8: the uint8 codes are loaded eight at a time as
    one uint64 word. A fifth fewer instructions than byte loads (the histogram phase of
    ``benchmarks/bench_engine.py``: about 20 ms instead of 25 ms at 136 x 1,000,000), the
    same additions in the same order, so the same bits.
    """
    m = codes.shape[1] // 8 * 8
    w0 = codes[i, :m].view(np.uint64)
    w1 = codes[i + 1, :m].view(np.uint64)
    w2 = codes[i + 2, :m].view(np.uint64)
    w3 = codes[i + 3, :m].view(np.uint64)
    for w in range(w0.shape[0]):
        x0 = w0[w]
        x1 = w1[w]
        x2 = w2[w]
        x3 = w3[w]
        base = 8 * w
        for s in range(8):  # byte s of each word is the code of row base + s
            p = pi[base + s]
            shift = np.uint64(8 * s)
            a0[(x0 >> shift) & _BYTE] += p
            a1[(x1 >> shift) & _BYTE] += p
            a2[(x2 >> shift) & _BYTE] += p
            a3[(x3 >> shift) & _BYTE] += p
    return m


@njit(cache=True, inline="always")
def _finish_four(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    codes: np.ndarray, pi: np.ndarray, scale: float, i: int, out: np.ndarray, start: int,
    a0: np.ndarray, a1: np.ndarray, a2: np.ndarray, a3: np.ndarray,
) -> None:  # fmt: skip
    """Add rows ``start ..`` of features ``i .. i+3`` byte by byte, then store the sums."""
    r0 = codes[i]
    r1 = codes[i + 1]
    r2 = codes[i + 2]
    r3 = codes[i + 3]
    for j in range(start, r0.shape[0]):
        p = pi[j]
        a0[r0[j]] += p
        a1[r1[j]] += p
        a2[r2[j]] += p
        a3[r3[j]] += p
    # element by element: a slice assignment (out[i, :] = a0 * scale) compiles numba's
    # shape-mismatch error message, about 2 s of a cold first training (the same products)
    for b in range(out.shape[1]):
        out[i, b] = a0[b] * scale
        out[i + 1, b] = a1[b] * scale
        out[i + 2, b] = a2[b] * scale
        out[i + 3, b] = a3[b] * scale


@njit(cache=True)
def _four_histograms(
    codes: np.ndarray, pi: np.ndarray, scale: float, i: int, out: np.ndarray
) -> None:
    """Histograms of features ``i .. i+3`` in one sweep over the rows.

    Each ``pi[j]`` is loaded once for four independent scatter-adds (instruction-level
    parallelism); each feature still sums in row order, so results are unchanged.
    """
    n_codes = out.shape[1]
    a0 = np.empty(n_codes)  # np.zeros: np.empty and a loop compile faster (cold start)
    a1 = np.empty(n_codes)
    a2 = np.empty(n_codes)
    a3 = np.empty(n_codes)
    for b in range(n_codes):
        a0[b] = 0.0
        a1[b] = 0.0
        a2[b] = 0.0
        a3[b] = 0.0
    _finish_four(codes, pi, scale, i, out, 0, a0, a1, a2, a3)


@njit(cache=True)
def _four_histograms_words(
    codes: np.ndarray, pi: np.ndarray, scale: float, i: int, out: np.ndarray
) -> None:
    """``_four_histograms`` with uint8 codes read as words on a little-endian machine.

    ``_add_words`` takes the rows up to a multiple of 8, the byte loop the rest: the same
    additions in the same order, so the same bits.
    """
    n_codes = out.shape[1]
    a0 = np.empty(n_codes)  # np.zeros: np.empty and a loop compile faster (cold start)
    a1 = np.empty(n_codes)
    a2 = np.empty(n_codes)
    a3 = np.empty(n_codes)
    for b in range(n_codes):
        a0[b] = 0.0
        a1[b] = 0.0
        a2[b] = 0.0
        a3[b] = 0.0
    start = 0
    if _WORDS and codes.itemsize == 1:
        start = _add_words(codes, pi, i, a0, a1, a2, a3)
    _finish_four(codes, pi, scale, i, out, start, a0, a1, a2, a3)


def _histograms(codes: np.ndarray, pi: np.ndarray, scale: float, out: np.ndarray) -> None:
    """Features ``4g .. 4g+3`` per unit ``g``, then the single features past the last group.

    The bodies are called from the driver itself (no per-unit function between): each level
    of njit calls re-optimises every function under it, about 0.3 s of a cold compile.
    """
    d = codes.shape[0]
    n_quads = d // 4
    for g in prange(n_quads):
        _four_histograms(codes, pi, scale, 4 * g, out)
    for i in prange(4 * n_quads, d):
        _feature_histogram(codes, pi, scale, np.int64(i), out)


def _histograms_words(codes: np.ndarray, pi: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``_histograms`` with the groups of four read as words (``_four_histograms_words``)."""
    d = codes.shape[0]
    n_quads = d // 4
    for g in prange(n_quads):
        _four_histograms_words(codes, pi, scale, 4 * g, out)
    for i in prange(4 * n_quads, d):
        _feature_histogram(codes, pi, scale, np.int64(i), out)


_histograms_serial, _histograms_parallel = serial_and_parallel(_histograms)
_histograms_words_serial, _histograms_words_parallel = serial_and_parallel(_histograms_words)

#: Elements (features x rows) from which the histograms read uint8 codes as words: its
#: compile adds about 0.5 s to a cold first training, and it saves 0.03 ms a round at
#: 10k x 46 (0.17 ms -> 0.14 ms, warm, serial, one run on the shared 2-core VM), 0.3 ms at
#: 100k x 46 and 3 ms at 1M x 46 (21 -> 18 ms): from 2M elements it pays within ~1000 rounds.
WORDS_MIN_WORK = 2_000_000


def potential_histograms(
    codes: np.ndarray, pi: np.ndarray, out: np.ndarray, scale: float = 1.0
) -> None:
    """``out[i, b] = scale * sum_{j: codes[i, j] = b} pi[j]``; ``out`` has shape (d, n_codes).

    ``scale`` is the factor of a scaled potential (``state.scaled_potential``), applied to
    each finished sum rather than to every row.
    """
    work = codes.shape[0] * codes.shape[1]
    if work >= WORDS_MIN_WORK and _WORDS and codes.itemsize == 1:
        words = _histograms_words_parallel if use_parallel(work) else _histograms_words_serial
        words(codes, pi, float(scale), out)
    elif use_parallel(work):
        _histograms_parallel(codes, pi, float(scale), out)
    else:
        _histograms_serial(codes, pi, float(scale), out)


@njit(cache=True)
def threshold_values(codes: np.ndarray, feature: int, t: int, default: int) -> np.ndarray:
    """Values of a binary ranker on every row, as uint8 0/1.

    ``[code > t]``, and ``default`` (0 or 1) where the code is 0 (the feature abstains). One
    byte a row: the update reads them three times.
    """
    n = codes.shape[1]
    out = np.empty(n, dtype=np.uint8)
    row = codes[feature]
    d = np.uint8(default)
    for j in range(n):
        c = row[j]
        out[j] = d if c == 0 else np.uint8(c > t)
    return out


@njit(cache=True)
def table_values(codes: np.ndarray, feature: int, table: np.ndarray) -> np.ndarray:
    """Values of h on every row as ``table[code]`` (real-valued rankers; ``table[0]`` = default)."""
    n = codes.shape[1]
    out = np.empty(n)
    row = codes[feature]
    for j in range(n):
        out[j] = table[row[j]]
    return out
