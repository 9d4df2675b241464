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
    table = np.array(tokens)  # bytes, padded with NUL to the longest token
    n, width = table.shape[0], table.dtype.itemsize
    # one column per character position, each contiguous over the tokens
    chars = np.ascontiguousarray(table.view(np.uint8).reshape(n, width).T)
    if np.count_nonzero(chars) != len(b"".join(tokens)):
        return None  # a NUL inside a token: the padding would hide it
    digit_values = chars - np.uint8(_ZERO)
    is_digit = digit_values < 10
    colons, dots, minus = chars == _COLON, chars == _DOT, chars == _MINUS
    n_known = sum(np.count_nonzero(a) for a in (is_digit, colons, dots, minus))
    if n_known != np.count_nonzero(chars):
        return None  # a character other than 0-9 : . - (an exponent, nan, +, ...)
    number = np.zeros(n, np.int64)  # the digits of the token read as one integer
    value_digits = np.zeros(n, np.int64)  # digits after the colon
    fraction_digits = np.zeros(n, np.int64)  # digits after the dot
    n_colons = np.zeros(n, np.int64)
    n_dots = np.zeros(n, np.int64)
    misplaced = np.zeros(n, bool)  # a dot or minus before the colon, a minus not right after it
    after_colon = np.zeros(n, bool)
    for j in range(width):
        d = is_digit[j]
        number *= np.where(d, 10, 1)
        number += np.where(d, digit_values[j], 0)
        misplaced |= minus[j] & ~colons[j - 1] if j else minus[j]
        misplaced |= dots[j] & ~after_colon
        after_colon |= colons[j]
        n_colons += colons[j]
        n_dots += dots[j]
        value_digits += d & after_colon
        fraction_digits += d & (n_dots > 0)
    index_digits = np.count_nonzero(is_digit, axis=0) - value_digits
    if (
        misplaced.any()
        or (n_colons != 1).any()
        or (n_dots > 1).any()
        or (index_digits < 1).any()
        or (value_digits < 1).any()
        or (value_digits > MAX_VALUE_DIGITS).any()
        or (index_digits + value_digits > MAX_TOKEN_DIGITS).any()
    ):
        return None
    scale = _POW10_INT[value_digits]
    indices = number // scale
    mantissa = number - indices * scale
    values = mantissa.astype(np.float64) / _POW10[fraction_digits]
    negative = minus.any(axis=0)
    return indices, np.where(negative, -values, values)
