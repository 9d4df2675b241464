"""MovieLens rating files (``u.data``, ``ratings.dat``, ``ratings.csv``)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ._io import PathLike, or_compressed, read_bytes

if TYPE_CHECKING:  # scipy is imported on use: rankboost.datasets stays light (issue 26)
    import scipy.sparse as sp

__all__ = ["RatingsDataset", "load_movielens"]

_FIELDS = [("user", np.int64), ("item", np.int64), ("rating", np.float64), ("ts", np.int64)]


@dataclass(frozen=True, eq=False)
class RatingsDataset:
    """Explicit ratings: one ``(user, item, rating, timestamp)`` record per entry.

    Parameters
    ----------
    user : ndarray of shape (n_ratings,), dtype int64
        User ids as in the file.
    item : ndarray of shape (n_ratings,), dtype int64
        Item (movie) ids as in the file.
    rating : ndarray of shape (n_ratings,), dtype float64
        The ratings (finite).
    timestamp : ndarray of shape (n_ratings,), dtype int64
        Unix time of each rating.

    See Also
    --------
    load_movielens : Read a MovieLens ratings file.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.datasets import RatingsDataset
    >>> r = RatingsDataset(
    ...     user=np.array([10, 10, 42]), item=np.array([5, 7, 5]),
    ...     rating=np.array([4.0, 2.0, 5.0]), timestamp=np.array([0, 1, 2]),
    ... )
    >>> r.n_users, r.n_items, len(r)
    (2, 2, 3)
    >>> M, users, items = r.to_matrix()
    >>> M.toarray()
    array([[4., 2.],
           [5., 0.]])
    >>> users, items
    (array([10, 42]), array([5, 7]))
    """

    user: NDArray[np.int64]
    item: NDArray[np.int64]
    rating: NDArray[np.float64]
    timestamp: NDArray[np.int64]

    def __post_init__(self) -> None:
        n = self.user.shape
        for name in ("item", "rating", "timestamp"):
            if getattr(self, name).shape != n:
                raise ValueError(
                    f"RatingsDataset.{name} has shape {getattr(self, name).shape} but user "
                    f"has shape {n}; all four fields need one entry per rating."
                )

    def __len__(self) -> int:
        return int(self.user.shape[0])

    @property
    def n_users(self) -> int:
        """Number of distinct users."""
        return int(np.unique(self.user).shape[0])

    @property
    def n_items(self) -> int:
        """Number of distinct items."""
        return int(np.unique(self.item).shape[0])

    def to_matrix(self) -> tuple[sp.csr_matrix, NDArray[np.int64], NDArray[np.int64]]:
        """Return the user-item rating matrix and the ids of its rows and columns.

        Returns
        -------
        matrix : scipy.sparse.csr_matrix of shape (n_users, n_items), dtype float64
            ``matrix[i, j]`` is the rating of user ``user_ids[i]`` for item
            ``item_ids[j]``; unrated entries are not stored.
        user_ids : ndarray of shape (n_users,), dtype int64
            Sorted distinct user ids (row labels).
        item_ids : ndarray of shape (n_items,), dtype int64
            Sorted distinct item ids (column labels).
        """
        user_ids, rows = np.unique(self.user, return_inverse=True)
        item_ids, cols = np.unique(self.item, return_inverse=True)
        import scipy.sparse as sp

        matrix = sp.csr_matrix(
            (self.rating.astype(np.float64), (rows.ravel(), cols.ravel())),
            shape=(user_ids.shape[0], item_ids.shape[0]),
        )
        return matrix, user_ids.astype(np.int64), item_ids.astype(np.int64)

    def __repr__(self) -> str:
        return (
            f"RatingsDataset(n_ratings={len(self)}, n_users={self.n_users}, n_items={self.n_items})"
        )


def _data_line_numbers(lines: list[str], skip_header: bool) -> list[int]:
    """1-based line number of each parsed row (blank lines and a header are skipped)."""
    numbers = [i for i, line in enumerate(lines, start=1) if line.strip()]
    return numbers[1:] if skip_header else numbers


def load_movielens(path: PathLike) -> RatingsDataset:
    r"""Load a MovieLens ratings file into arrays.

    The format is detected from the content:

    * ``u.data`` (MovieLens 100K): tab-separated ``user item rating timestamp``;
    * ``ratings.dat`` (MovieLens 1M / 10M): ``user::item::rating::timestamp``;
    * ``ratings.csv`` (MovieLens 20M / 25M / latest): comma-separated, with an optional
      ``userId,movieId,rating,timestamp`` header line.

    gzip, bzip2 and xz compression is undone transparently; blank lines are ignored.

    Parameters
    ----------
    path : str or path-like
        The ratings file. When it does not exist but ``path.gz`` (``.bz2``, ``.xz``) does,
        that file is read: ``load_movielens("ml-100k/u.data")`` reads a gzipped mirror too.

    Returns
    -------
    ratings : RatingsDataset
        ``user``, ``item`` (original integer ids), ``rating`` (float64) and
        ``timestamp`` (int64), in file order.

    Raises
    ------
    FileNotFoundError
        If neither ``path`` nor a compressed copy of it exists.
    ValueError
        If a line does not have four fields of the right types (the message names the
        file and the numpy error with its row), a rating is not finite, the same
        (user, item) pair is rated twice (both line numbers are given) or the file is
        empty.

    See Also
    --------
    RatingsDataset.to_matrix : The user-item matrix in sparse form.

    Examples
    --------
    >>> import tempfile, os
    >>> from rankboost.datasets import load_movielens
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "ratings.dat")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write("1::1193::5::978300760\n1::661::3::978302109\n")
    ...     ratings = load_movielens(path)
    >>> ratings
    RatingsDataset(n_ratings=2, n_users=1, n_items=2)
    >>> ratings.item, ratings.rating
    (array([1193,  661]), array([5., 3.]))
    """
    found = or_compressed(path)
    if not found.exists():
        raise FileNotFoundError(
            f"Ratings file {str(found)!r} does not exist (nor {found.name}.gz, .bz2 or .xz "
            "beside it); give the path of u.data, ratings.dat or ratings.csv."
        )
    p, raw = read_bytes(found, "Ratings file")
    source = repr(str(p))
    text = raw.decode("utf-8", "replace")
    data_lines = [line for line in text.splitlines() if line.strip()]
    if not data_lines:
        raise ValueError(f"Ratings file {source} contains no ratings.")
    first = data_lines[0]
    delimiter: str | None
    if "::" in first:
        text = text.replace("::", "\t")  # numpy needs a one-character delimiter
        delimiter, kind = "\t", "ratings.dat (user::item::rating::timestamp)"
    elif "," in first:
        delimiter, kind = ",", "ratings.csv (user,item,rating,timestamp)"
    else:
        delimiter, kind = None, "u.data (user item rating timestamp, whitespace-separated)"
    # A header (ratings.csv: "userId,movieId,...") is a first line whose user field is
    # not an integer; anything else malformed is left to numpy to report.
    skip_header = not first.replace("::", ",").replace(",", " ").split()[0].isdigit()
    if skip_header and len(data_lines) == 1:
        raise ValueError(f"Ratings file {source} contains no ratings, only a header line.")
    try:
        table = np.loadtxt(
            io.StringIO(text),
            dtype=_FIELDS,
            delimiter=delimiter,
            skiprows=1 if skip_header else 0,
            comments=None,
            ndmin=1,
        )
    except ValueError as exc:
        raise ValueError(f"Ratings file {source} is not valid {kind}: {exc}") from exc
    if table.shape[0] == 0:
        raise ValueError(f"Ratings file {source} contains no ratings.")
    user, item, rating = table["user"], table["item"], table["rating"]

    bad = ~np.isfinite(rating)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        line = _data_line_numbers(text.splitlines(), skip_header)[row]
        raise ValueError(
            f"Ratings file {source}, line {line}: rating {rating[row]} is not a finite number."
        )
    order = np.lexsort((item, user))
    same = (user[order][1:] == user[order][:-1]) & (item[order][1:] == item[order][:-1])
    if same.any():
        k = int(np.flatnonzero(same)[0])
        first_row, second_row = sorted((int(order[k]), int(order[k + 1])))
        numbers = _data_line_numbers(text.splitlines(), skip_header)
        raise ValueError(
            f"Ratings file {source}: user {int(user[first_row])} rates item "
            f"{int(item[first_row])} twice (lines {numbers[first_row]} and "
            f"{numbers[second_row]}); remove the duplicate before loading."
        )
    return RatingsDataset(
        user=np.ascontiguousarray(user),
        item=np.ascontiguousarray(item),
        rating=np.ascontiguousarray(rating),
        timestamp=np.ascontiguousarray(table["ts"]),
    )
