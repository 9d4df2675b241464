"""SVMlight ``index:value`` tokens to numbers all at once, exactly as Python's int() and float().

The numeric part of an SVMlight/LETOR file is mostly tokens such as ``12:0.052893``; converting
them one by one (``float()``, or numpy's conversion of a bytes array, which does the same per
item) is most of the time of reading such a file. :func:`parse_pairs` converts the common
case with a few numpy operations over the bytes of every token at once, and returns None
for anything else, which the caller then converts as before.

The common case, and why it is exact: the index is 1 to 15 digits; the value is an optional
``-``, digits and at most one ``.``, with 1 to 15 digits in all (no exponent, no sign ``+``,
no ``nan``/``inf``, no ``_``). Such a value is ``M / 10**k`` with the integer ``M < 10**15 <
2**53`` and ``k <= 15``: both are doubles exactly, and one IEEE division rounds their quotient
correctly, so it is the double nearest to the decimal, which is what ``float()`` returns
(Clinger's fast path, as in every correctly rounding ``strtod``); a ``-`` negates it exactly
(``-0`` gives ``-0.0``, as ``float(b"-0")``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["parse_pairs"]

#: at most this many digits in a value (M < 10**15 < 2**53) ...
MAX_VALUE_DIGITS = 15
#: ... and in the index and the value together (index * 10**digits + M < 2**63, an int64)
MAX_TOKEN_DIGITS = 18
_POW10_INT = 10 ** np.arange(MAX_TOKEN_DIGITS + 1, dtype=np.int64)
_POW10 = 10.0 ** np.arange(MAX_VALUE_DIGITS + 1)
_ZERO, _COLON, _DOT, _MINUS = 48, 58, 46, 45


def parse_pairs(tokens: list[bytes]) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:
    """The indices and values of ``index:value`` tokens, or None unless every token is plain.

    Parameters
    ----------
    tokens : list of bytes
        The tokens, each ``index:value`` (module docstring: what is plain).

    Returns
    -------
    indices : ndarray of shape (n_tokens,), dtype int64
        ``int(index)`` of each token, as written (1-based).
    values : ndarray of shape (n_tokens,), dtype float64
        ``float(value)`` of each token, bit for bit.

    None when a token is not plain, or ``tokens`` is empty.
    """
    if not tokens:
        return None
    n = len(tokens)
    lengths = np.fromiter(map(len, tokens), np.int64, n)
    width = int(lengths.max())
    table = np.array(tokens, dtype=f"S{width}")  # padded with NUL to the longest token
    # one row per character position, each contiguous over the tokens
    chars = np.ascontiguousarray(table.view(np.uint8).reshape(n, width).T)
    if np.count_nonzero(chars) != lengths.sum():
        return None  # a NUL inside a token: the padding would hide it
    digit_values = chars - np.uint8(_ZERO)
    is_digit = digit_values < 10
    colons, dots, minus = chars == _COLON, chars == _DOT, chars == _MINUS
    n_known = sum(np.count_nonzero(a) for a in (is_digit, colons, dots, minus))
    if n_known != np.count_nonzero(chars):
        return None  # a character other than 0-9 : . - (an exponent, nan, +, ...)
    after_colon, after_dot = _seen(colons), _seen(dots)
    value_digits = _count(is_digit & after_colon)
    index_digits = _count(is_digit) - value_digits
    if (
        (_count(colons) != 1).any()
        or (_count(dots) > 1).any()
        or (dots & ~after_colon).any()  # a dot in the index
        or minus[0].any()  # a minus anywhere but right after the colon
        or (minus[1:] & ~colons[:-1]).any()
        or (index_digits < 1).any()
        or (value_digits < 1).any()
        or (value_digits > MAX_VALUE_DIGITS).any()
        or (index_digits + value_digits > MAX_TOKEN_DIGITS).any()
    ):
        return None
    fraction_digits = _count(is_digit & after_dot)
    number = np.full(n, 0, np.int64)  # the digits read as one integer: index * 10**v + M
    for j in range(width):
        number *= np.where(is_digit[j], 10, 1)
        number += np.where(is_digit[j], digit_values[j], 0)
    scale = _POW10_INT[value_digits]
    indices = number // scale
    mantissa = number - indices * scale
    values = mantissa.astype(np.float64) / _POW10[fraction_digits]
    negative = minus.any(axis=0)
    return indices, np.where(negative, -values, values)


def _seen(mask: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Whether each token has had a True at this character position or before (its row of chars)."""
    out = np.empty_like(mask)
    running = np.full(mask.shape[1], False)
    for j in range(mask.shape[0]):
        running |= mask[j]
        out[j] = running
    return out


def _count(mask: NDArray[np.bool_]) -> NDArray[np.int32]:
    """The number of True in each token; summed as bytes, the fast way for numpy."""
    return mask.view(np.uint8).sum(axis=0, dtype=np.int32)
