"""The LETOR 4.0 MQ2008 dataset, bundled with the package (see ``data/PROVENANCE.md``)."""

from __future__ import annotations

import functools
import lzma
import os
from importlib import resources

import numpy as np

from ._dataset import RankingDataset
from ._svmlight import parse_svmlight_bytes

__all__ = ["MQ2008_FEATURE_NAMES", "load_feature_names", "load_mq2008"]

_STREAMS = ("body", "anchor", "title", "url", "whole_document")

#: Names of the 46 MQ2008 features, in column order (LETOR 4.0 feature list; Qin & Liu
#: 2013, arXiv:1306.2597): five text statistics on five streams each, then six link and
#: URL features.
MQ2008_FEATURE_NAMES: tuple[str, ...] = (
    *(
        f"{stat}_{stream}"
        for stat in ("tf", "idf", "tfidf", "dl", "bm25", "lmir_abs", "lmir_dir", "lmir_jm")
        for stream in _STREAMS
    ),
    "pagerank",
    "inlink_number",
    "outlink_number",
    "url_slash_count",
    "url_length",
    "child_page_count",
)

# Fold k = (train subsets, vali subset, test subset), from the LETOR 4.0 readme.
_FOLDS: dict[int, tuple[tuple[int, int, int], int, int]] = {
    1: ((1, 2, 3), 4, 5),
    2: ((2, 3, 4), 5, 1),
    3: ((3, 4, 5), 1, 2),
    4: ((4, 5, 1), 2, 3),
    5: ((5, 1, 2), 3, 4),
}


def _subset_bytes(k: int) -> bytes:
    """The text of bundled subset ``S{k}``, as LETOR wrote it."""
    resource = resources.files("rankboost.datasets") / "data" / f"MQ2008-S{k}.txt.xz"
    with resource.open("rb") as fh:
        return lzma.decompress(fh.read())


def mq2008_fold_files(fold: int = 1) -> dict[str, bytes]:
    """The files ``train.txt``, ``vali.txt`` and ``test.txt`` of MQ2008 ``Fold{fold}``.

    Byte for byte the official LETOR 4.0 files (``PROVENANCE.md``): what ``rankboost
    datasets write mq2008 DIR`` writes, for LightGBM, XGBoost, RankLib or scikit-learn's
    ``load_svmlight_file(..., query_id=True)``.

    Examples
    --------
    >>> from rankboost.datasets._bundled import mq2008_fold_files
    >>> files = mq2008_fold_files(1)
    >>> sorted(files), files["test.txt"][:22]
    (['test.txt', 'train.txt', 'vali.txt'], b'0 qid:18219 1:0.052893')
    """
    if isinstance(fold, bool) or not isinstance(fold, int | np.integer) or fold not in _FOLDS:
        raise ValueError(f"mq2008_fold_files: fold must be one of 1, 2, 3, 4, 5; got {fold!r}.")
    train, vali, test = _FOLDS[int(fold)]
    return {
        "train.txt": b"".join(_subset_bytes(k) for k in train),
        "vali.txt": _subset_bytes(vali),
        "test.txt": _subset_bytes(test),
    }


@functools.cache
def _load_subset(k: int) -> RankingDataset:
    """Parse bundled subset ``S{k}`` once; callers must copy before handing it out."""
    name = f"MQ2008-S{k}.txt.xz"
    data = _subset_bytes(k)
    subset = parse_svmlight_bytes(data, f"bundled {name}", n_features=46)
    for array in (subset.X, subset.y, subset.qid, subset.docids):
        if array is not None:
            array.setflags(write=False)  # the cache must not be modified through a view
    return subset


def _join(parts: tuple[int, ...]) -> RankingDataset:
    subsets = [_load_subset(k) for k in parts]
    # np.concatenate always returns a new array, also for a single input: callers get
    # writable copies and the cached arrays stay untouched.
    qid = np.concatenate([s.qid for s in subsets if s.qid is not None])
    docids = np.concatenate([s.docids for s in subsets if s.docids is not None])
    return RankingDataset(
        X=np.concatenate([s.X for s in subsets]),
        y=np.concatenate([s.y for s in subsets]),
        qid=qid,
        docids=docids,
        feature_names=list(MQ2008_FEATURE_NAMES),
    )


def load_mq2008(fold: int = 1) -> tuple[RankingDataset, RankingDataset, RankingDataset]:
    """Load one fold of LETOR 4.0 MQ2008 (supervised ranking) from the bundled copy.

    MQ2008 holds 784 queries of the TREC 2008 Million Query track on the Gov2
    collection, with 15,211 judged documents (labels 0, 1, 2) described by 46 features
    normalised per query to [0, 1] ("QueryLevelNorm"). The data ships as its five
    subsets S1..S5; fold ``k`` joins them as in the LETOR readme::

        fold  train       vali  test
        1     S1 S2 S3    S4    S5
        2     S2 S3 S4    S5    S1
        3     S3 S4 S5    S1    S2
        4     S4 S5 S1    S2    S3
        5     S5 S1 S2    S3    S4

    The rows, labels, query ids and docids are exactly those of the official
    ``Fold{k}/{train,vali,test}.txt`` files, in the same order. Parsing is cached in
    memory, so repeated calls are cheap; every call returns fresh copies.

    Parameters
    ----------
    fold : {1, 2, 3, 4, 5}, default=1
        Which of the five standard cross-validation folds to return.

    Returns
    -------
    train, vali, test : RankingDataset
        Each with ``X`` of shape (n, 46), ``y``, ``qid`` (the original int64 query ids),
        ``docids`` (Gov2 ids such as ``"GX015-44-4118282"``) and ``feature_names``
        (:data:`MQ2008_FEATURE_NAMES`).

    Raises
    ------
    ValueError
        If ``fold`` is not one of 1..5.

    See Also
    --------
    load_svmlight : Read other LETOR files.

    Notes
    -----
    Redistributed for research use, as LETOR is; see ``PROVENANCE.md`` in
    ``rankboost/datasets/data`` for the source, checksums and verification.

    References
    ----------
    .. [1] T. Qin and T.-Y. Liu, "Introducing LETOR 4.0 Datasets", arXiv:1306.2597, 2013.

    Examples
    --------
    >>> from rankboost.datasets import load_mq2008
    >>> train, vali, test = load_mq2008(fold=1)
    >>> train.n_samples, train.n_queries, train.feature_names[20]
    (9630, 471, 'bm25_body')
    >>> X, y, qid = test
    >>> X.shape, test.n_queries, str(test.docids[0])
    ((2874, 46), 156, 'GX004-93-7097963')
    """
    if isinstance(fold, bool) or not isinstance(fold, int | np.integer) or fold not in _FOLDS:
        raise ValueError(f"load_mq2008: fold must be one of 1, 2, 3, 4, 5; got {fold!r}.")
    train, vali, test = _FOLDS[int(fold)]
    return _join(train), _join((vali,)), _join((test,))


def load_feature_names(path: str | os.PathLike[str], n_features: int | None = None) -> list[str]:
    r"""Feature names from a text file: one name per line, in column order.

    Blank lines and lines starting with ``#`` are skipped; surrounding white space is
    removed; the file may be compressed (gzip, bzip2, xz). This is what
    ``rankboost train --feature-names FILE`` reads.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is not UTF-8 text (or damaged compressed data), a name repeats, or
        ``n_features`` is given and the count differs.

    Examples
    --------
    >>> from pathlib import Path
    >>> _ = Path("names.txt").write_text("# MQ2008\nbm25_body\npagerank\n")
    >>> load_feature_names("names.txt", 2)
    ['bm25_body', 'pagerank']
    """
    from ._io import read_bytes

    p, data = read_bytes(path, "feature names file")  # gzip, bzip2, xz; damaged: ValueError
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"feature names file {str(p)!r} is not UTF-8 text ({exc.reason} at byte "
            f"{exc.start}); write one name per line."
        ) from None
    lines = [s.strip() for s in text.splitlines()]
    names = [s for s in lines if s and not s.startswith("#")]
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise ValueError(
                f"{str(p)!r}: feature name {name!r} appears twice (columns {seen[name] + 1} "
                f"and {i + 1}); the names must be unique."
            )
        seen[name] = i
    if n_features is not None and len(names) != n_features:
        raise ValueError(
            f"{str(p)!r} has {len(names)} feature names but the data has {n_features} "
            "features; write one name per line, one per feature, in column order."
        )
    return names
