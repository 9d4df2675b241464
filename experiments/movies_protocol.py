"""The movie experiment's protocol, baselines and metrics (experiments/movies.py's studies).

What every method of Freund et al. (2003) section 6.2 is measured by: a study point
(:class:`Config`: targets, their training and test movies, the feature users), the masking
that keeps test ratings out of every fit, the paper's baselines (VSIM, nearest neighbour,
linear regression) and scikit-surprise's KNNWithMeans, and the metrics of a run. Imported by
``experiments/movies.py`` (the studies) and ``experiments/variants.py``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LinearRegression

from rankboost.metrics import (
    disagreement,
    expected_average_precision,
    expected_coverage,
    expected_prot,
    ndcg_score,
    precision_at_k,
)

try:  # optional real-world peer
    from surprise import Dataset, KNNWithMeans, Reader

    SURPRISE = True
except ImportError:  # pragma: no cover
    SURPRISE = False

ROOT = Path(__file__).resolve().parents[1]
# the shared data folder sits beside the repository (override with RANKBOOST_DATA)
DATA = (
    Path(
        os.environ.get(
            "RANKBOOST_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"
        )
    )
    / "movielens"
    / "ml-100k"
    / "u.data.gz"
)
GOOD = 4.0  # a test movie is "good" when the target rated it >= 4
METRICS = ("disagreement", "AP", "PROT", "coverage", "NDCG@10", "P@10")
N_TARGETS = 120


# ----------------------------------------------------------------------------- protocol


@dataclass
class Config:
    """One point of a study: targets, their train/test items, the feature users."""

    label: str
    targets: np.ndarray
    train: dict[int, np.ndarray]  # target -> training item indices
    test: dict[int, np.ndarray]  # target -> test item indices
    features: np.ndarray


def masked(R: sp.csr_matrix, cfg: Config) -> sp.csr_matrix:
    """R without the targets' non-training ratings (nothing about the test can leak)."""
    R = R.tolil(copy=True)
    for u in cfg.targets:
        keep = set(cfg.train[u].tolist())
        for j in R.rows[u][:]:
            if j not in keep:
                R[u, j] = 0
    out = sp.csr_matrix(R)
    out.eliminate_zeros()  # MovieLens ratings are 1..5, so 0 only marks removed entries
    return out


def half_split(R, targets, rng):
    """Study 1 and 2: a random half of each target's ratings is feedback, the rest test."""
    train, test = {}, {}
    for u in targets:
        items = rng.permutation(R[u].indices)
        h = items.shape[0] // 2
        train[u], test[u] = np.sort(items[:h]), np.sort(items[h:])
    return train, test


# ----------------------------------------------------------------------------- baselines


def vsim(Xtr, ytr, Xte, means):
    """Vector similarity (Breese et al. 1998, eq. 1 and the cosine weight of section 2.1.2).

    Weight of feature user f: cosine of the target's and f's ratings on co-rated training
    movies. Prediction: sum_f w_f (v_fj - mean_f) / sum_f |w_f| over feature users who rated
    movie j (the target's own mean is a constant and does not change its ranking); 0 when
    nobody rated j.
    """
    M = ~np.isnan(Xtr)
    X0 = np.where(M, Xtr, 0.0)
    num = ytr @ X0
    den = np.sqrt((ytr**2) @ M * (X0**2).sum(axis=0))
    w = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    Mte = ~np.isnan(Xte)
    dev = np.where(Mte, Xte - means, 0.0)
    norm = Mte @ np.abs(w)
    return np.divide(dev @ w, norm, out=np.zeros(Xte.shape[0]), where=norm > 0)


def nearest_neighbour(Xtr, ytr, Xte, means):
    """The single feature user whose ratings best order the target's training movies.

    Score of a movie: the neighbour's rating, or the neighbour's mean rating when the
    neighbour did not rate it (the default for unrated movies); the neighbour is the feature
    user with the smallest training disagreement of that scoring rule (ties: lowest index).
    """
    d = Xtr.shape[1]
    S = np.where(np.isnan(Xtr), means, Xtr)
    n = ytr.shape[0]
    dis = disagreement(np.tile(ytr, d), S.T.ravel(), np.repeat(np.arange(d), n), per_query=True)
    f = int(np.argmin(dis))
    return np.where(np.isnan(Xte[:, f]), means[f], Xte[:, f])


def linear_regression(Xtr, ytr, Xte, means):
    """Least squares on mean-centred ratings, 0 (= the feature user's mean) where unrated.

    With more feature users than training movies, sklearn's lstsq returns the minimum-norm
    solution.
    """
    A = np.where(np.isnan(Xtr), 0.0, Xtr - means)
    B = np.where(np.isnan(Xte), 0.0, Xte - means)
    return LinearRegression().fit(A, ytr).predict(B)


BASELINES = {"VSIM": vsim, "NN": nearest_neighbour, "LinReg": linear_regression}


def surprise_scores(Rtr, cfg):
    """User-based KNNWithMeans (pearson, k=40) on feature users + targets' training ratings.

    Similarities between two targets are zeroed after fitting, so every target's
    neighbours are feature users only, as for the other methods.
    """
    users = np.concatenate([cfg.features, cfg.targets])
    sub = Rtr[users].tocoo()
    import pandas as pd

    frame = pd.DataFrame({"u": users[sub.row], "i": sub.col, "r": sub.data})
    data = Dataset.load_from_df(frame[["u", "i", "r"]], Reader(rating_scale=(1, 5)))
    trainset = data.build_full_trainset()
    algo = KNNWithMeans(k=40, sim_options={"name": "pearson", "user_based": True}, verbose=False)
    algo.fit(trainset)
    inner = np.array([trainset.to_inner_uid(int(u)) for u in cfg.targets])
    algo.sim[np.ix_(inner, inner)] = 0.0
    algo.sim[inner, inner] = 1.0
    out = {}
    for u in cfg.targets:
        out[u] = np.array([algo.predict(int(u), int(j)).est for j in cfg.test[u]])
    return out


# ----------------------------------------------------------------------------- evaluation


def metrics_of(y, s, q):
    """Mean over targets of the four metrics (targets with no good test movie skipped)."""
    kw = {"relevance_threshold": GOOD, "empty": "skip"}
    return {
        "disagreement": float(disagreement(y, s, q)),
        "AP": float(expected_average_precision(y, s, q, **kw)),
        "PROT": float(expected_prot(y, s, q, **kw)),
        "coverage": float(expected_coverage(y, s, q, **kw)),
        # standard recommender metrics on the held-out ratings (ties in expectation)
        "NDCG@10": float(ndcg_score(y, s, q, k=10, gain="exp2")),
        "P@10": float(precision_at_k(y, s, q, k=10, relevance_threshold=GOOD)),
    }
