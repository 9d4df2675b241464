"""The :class:`RankingDataset` container returned by the ranking-data loaders."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["RankingDataset"]


@dataclass(frozen=True, eq=False)
class RankingDataset:
    """A learning-to-rank dataset: features, relevance labels and query ids.

    Unpacks like the tuple returned by
    ``sklearn.datasets.load_svmlight_file(..., query_id=True)``, so
    ``X, y, qid = load_svmlight(path)`` works.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Dense feature matrix; column ``k - 1`` holds the file's feature ``k``.
    y : ndarray of shape (n_samples,), dtype float64
        Relevance labels (higher is more relevant).
    qid : ndarray of shape (n_samples,) or None
        Query id of each row, as written in the file (``int64``), or derived from a
        LightGBM ``.query`` file (``0 .. n_queries - 1`` in row order). ``None`` when the
        file carries no query information: then all rows form a single query.
    docids : ndarray of shape (n_samples,), dtype str, or None, default=None
        Document ids parsed from ``#docid = ...`` comments; ``None`` if there were none.
    feature_names : list of str or None, default=None
        One name per column of ``X``, when known.

    See Also
    --------
    load_svmlight : Read such a dataset from an SVMlight/LETOR file.
    load_mq2008 : The bundled LETOR 4.0 MQ2008 dataset.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.datasets import RankingDataset
    >>> data = RankingDataset(np.eye(3), np.array([2.0, 0.0, 1.0]), np.array([7, 7, 9]))
    >>> data
    RankingDataset(n_samples=3, n_features=3, n_queries=2, y in [0, 2])
    >>> X, y, qid = data
    >>> qid
    array([7, 7, 9])
    """

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    qid: NDArray[Any] | None
    docids: NDArray[np.str_] | None = None
    feature_names: list[str] | None = None

    def __post_init__(self) -> None:
        n = self.X.shape[0] if self.X.ndim == 2 else -1
        if self.X.ndim != 2:
            raise ValueError(f"RankingDataset.X must be 2-D; got shape {self.X.shape}.")
        for name in ("y", "qid", "docids"):
            value = getattr(self, name)
            if value is not None and value.shape != (n,):
                raise ValueError(
                    f"RankingDataset.{name} must have shape ({n},), one entry per row of X; "
                    f"got shape {value.shape}."
                )
        if self.feature_names is not None and len(self.feature_names) != self.X.shape[1]:
            raise ValueError(
                f"RankingDataset.feature_names has {len(self.feature_names)} names but X has "
                f"{self.X.shape[1]} columns."
            )

    def __iter__(self) -> Iterator[Any]:
        """Yield ``X``, ``y`` and ``qid``, so the dataset unpacks like a 3-tuple."""
        return iter((self.X, self.y, self.qid))

    @property
    def n_samples(self) -> int:
        """Number of rows (query-document pairs)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    @property
    def n_queries(self) -> int:
        """Number of distinct query ids (1 when ``qid`` is None and there are rows)."""
        if self.qid is None:
            return int(self.n_samples > 0)
        return int(np.unique(self.qid).shape[0])

    def __repr__(self) -> str:
        parts = [
            f"n_samples={self.n_samples}",
            f"n_features={self.n_features}",
            f"n_queries={self.n_queries}" if self.qid is not None else "qid=None",
        ]
        if self.n_samples:
            parts.append(f"y in [{self.y.min():g}, {self.y.max():g}]")
        if self.docids is not None:
            parts.append("docids")
        if self.feature_names is not None:
            parts.append("feature_names")
        return f"RankingDataset({', '.join(parts)})"
