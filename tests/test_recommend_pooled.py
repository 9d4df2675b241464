"""The pooled recommender (SPEC 7.2): base recommenders against loop references written
from their formulas, cross-fitting without leakage, batch == per-user scoring, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from rankboost import train
from rankboost.metrics import ndcg_score
from rankboost.model_selection import EASE_PRIOR_SCALES as PRIOR_SCALES
from rankboost.model_selection import group_folds, round_curves
from rankboost.recommend import BASE_RECOMMENDERS, RankBoostRecommender
from rankboost.recommend._base import (
    EASE_LAMBDAS,
    BaseScores,
    _ease_weights,
    choose_ease_lambda,
    entry_folds,
    validation_split,
)
from rankboost.recommend._pooled import HELD_UNRATED, pooled_problem, top_k


def _ratings(seed, n_users=14, n_items=18, density=0.45):
    """Two taste groups plus noise, ratings 1..5, every user with >= 3 ratings."""
    rng = np.random.default_rng(seed)
    taste = rng.integers(1, 6, size=n_items).astype(float)
    group = rng.integers(0, 2, size=n_users)
    dense = np.where(group[:, None] == 0, taste, 6 - taste)
    dense = np.clip(dense + rng.integers(-1, 2, size=dense.shape), 1, 5)
    mask = rng.random(dense.shape) < density
    mask[:, :3] = True
    rows, cols = np.nonzero(mask)
    return sp.csr_matrix((dense[rows, cols], (rows, cols)), shape=dense.shape)


# ------------------------------------------------------------------ loop references


def _ref_scores(R, name, k=50, lam=250.0, pool=None):
    """One user and item at a time, straight from the formulas in _base's docstring."""
    D = R.toarray()
    M = R.toarray() != 0
    n_users, n_items = D.shape
    mu = D[M].mean()
    mu_u = np.array([D[u, M[u]].mean() if M[u].any() else mu for u in range(n_users)])
    n_i = M.sum(axis=0)
    item_mean = np.array([(D[M[:, i], i].sum() + 5 * mu) / (n_i[i] + 5) for i in range(n_items)])
    out = np.full((n_users, n_items), np.nan)
    if name == "popularity":
        return np.tile(np.log1p(n_i), (n_users, 1)).astype(float)
    if name == "item_mean":
        return np.tile(item_mean, (n_users, 1))
    if name == "user_knn":
        pool = range(n_users) if pool is None else pool
        for u in range(n_users):
            for i in range(n_items):
                num = den = 0.0
                for v in pool:
                    if v == u or not M[v, i]:
                        continue
                    nu, nv = np.linalg.norm(D[u]), np.linalg.norm(D[v])
                    s = D[u] @ D[v] / (nu * nv) if nu * nv > 0 else 0.0
                    num += s * (D[v, i] - mu_u[v])
                    den += abs(s)
                if den > 0:
                    out[u, i] = mu_u[u] + num / den
        return out

    def cos(A, kk):
        S = np.zeros((A.shape[1], A.shape[1]))
        for i in range(A.shape[1]):
            for j in range(A.shape[1]):
                ni, nj = np.linalg.norm(A[:, i]), np.linalg.norm(A[:, j])
                if i != j and ni * nj > 0:
                    S[i, j] = A[:, i] @ A[:, j] / (ni * nj)
        for i in range(S.shape[0]):  # keep each item's kk most similar
            order = np.argsort(-S[i], kind="stable")
            S[i, order[kk:]] = 0.0
        return S

    if name == "item_knn":
        C = np.where(M, D - mu_u[:, None], 0.0)
        S = cos(C, k)
        for u in range(n_users):
            for i in range(n_items):
                js = [j for j in range(n_items) if M[u, j] and S[i, j] != 0]
                den = sum(abs(S[i, j]) for j in js)
                if den > 0:
                    num = sum(S[i, j] * (D[u, j] - item_mean[j]) for j in js)
                    out[u, i] = item_mean[i] + num / den
        return out
    X = M.astype(float)
    if name == "cooccurrence":
        S = cos(X, k)
        raw = np.array([[sum(S[i, j] for j in range(n_items) if M[u, j]) for i in range(n_items)]
                        for u in range(n_users)])  # fmt: skip
    else:  # ease
        P = np.linalg.inv(X.T @ X + lam * np.eye(n_items))
        B = np.eye(n_items) - P / np.diag(P)[None, :]
        np.fill_diagonal(B, 0.0)
        raw = X @ B
    for u in range(n_users):
        free = ~M[u]
        m, sd = raw[u, free].mean(), raw[u, free].std()
        out[u] = (raw[u] - m) / sd if sd > 0 else 0.0
    return out


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", BASE_RECOMMENDERS)
def test_base_recommenders_match_the_loop_reference(name, seed):
    R = _ratings(seed)
    k = 4  # prunes: each item keeps 4 of its 17 neighbours
    got = BaseScores((name,), k=k, ease_lambda=3.0).fit(R).scores(np.arange(R.shape[0]))[..., 0]
    want = _ref_scores(R, name, k=k, lam=3.0)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_user_knn_pool_and_a_block_of_users_match_the_reference():
    R = _ratings(3)
    pool = np.array([1, 4, 5, 9, 12])
    base = BaseScores(("user_knn",), pool=pool).fit(R)
    users = np.array([9, 0, 4])
    got = base.scores(users)[..., 0]
    np.testing.assert_allclose(got, _ref_scores(R, "user_knn", pool=pool)[users], rtol=1e-9)


# ------------------------------------------------------------------ cross-fitting


@pytest.mark.parametrize("feedback", ["both", "ratings"])
def test_a_rating_never_informs_its_own_feature_value(feedback):
    R = _ratings(5)
    targets = np.arange(R.shape[0])
    base = {"names": BASE_RECOMMENDERS}
    kw = {"n_folds": 3, "feedback": feedback, "negatives": 1.0}
    p0 = pooled_problem(R, targets, base, rng=np.random.default_rng(7), **kw)
    u, i = 2, int(R[2].indices[1])
    R2 = R.copy()
    R2[u, i] = 1.0 if R[u, i] != 1.0 else 5.0  # same structure, another value
    p1 = pooled_problem(R2, targets, base, rng=np.random.default_rng(7), **kw)
    np.testing.assert_array_equal(p0.qid, p1.qid)
    rated = np.flatnonzero(p0.y > 0)
    rows_u = rated[p0.qid[rated] == u]
    # the row of (u, i) is the one whose label changed
    (row,) = rows_u[p0.y[rows_u] != p1.y[rows_u]]
    np.testing.assert_array_equal(p0.X[row], p1.X[row])  # its features did not
    assert not np.allclose(np.nan_to_num(p0.X), np.nan_to_num(p1.X))  # others did


def test_problem_rows_labels_and_negatives():
    R = _ratings(6)
    targets = np.array([0, 3, 7])
    prob = pooled_problem(
        R, targets, {"names": ("popularity",)}, n_folds=2, feedback="both", negatives=1.0,
        rng=np.random.default_rng(0),
    )  # fmt: skip
    for u in targets:
        mine = prob.qid == u
        n_rated = R[u].nnz
        assert (prob.y[mine] > 0).sum() == n_rated
        assert (prob.y[mine] == 0).sum() == min(n_rated, R.shape[1] - n_rated)
        np.testing.assert_array_equal(
            np.sort(prob.y[mine][prob.y[mine] > 0]), np.sort(R[u].data - R.data.min() + 1)
        )
    assert set(np.unique(prob.qid)) == set(targets.tolist())


def test_held_unrated_rows_are_extra_unrated_items_never_trained_on():
    R = _ratings(6, n_items=30)
    targets = np.arange(R.shape[0])
    names = BASE_RECOMMENDERS
    rec = _pooled(R, feedback="rated", n_estimators=6, negatives=1.0, refit=True)
    base = {"names": names, "pool": targets, "ease_lambda": rec.ease_lambda_}
    prob = pooled_problem(
        R, targets, base, n_folds=5, feedback="rated", negatives=1.0,
        rng=np.random.default_rng(0), held_unrated=HELD_UNRATED, fold=_fit_folds(R),
    )  # fmt: skip
    for u in targets:
        mine = prob.qid == u
        n_rated, n_free = R[u].nnz, R.shape[1] - R[u].nnz
        n_neg = min(n_rated, n_free)
        assert (prob.y[mine & ~prob.held] == 0).sum() == n_neg
        assert (mine & prob.held).sum() == min(HELD_UNRATED, n_free - n_neg)
        assert (prob.y[mine & prob.held] == 0).all()
    # the final model is trained on the other rows only (the inner CV chose its rounds)
    assert rec.report_["n_rows"] == int((~prob.held).sum())
    train_rows = prob.subset(~prob.held)
    f0 = 0.25 * train_rows.X[:, names.index("ease")]
    want = train(
        train_rows.X, train_rows.feedback("rated"), max(rec.report_["n_rounds"], 1),
        init_score=f0, thresholds=255,
    )  # fmt: skip
    assert rec.model_ == want


def test_refit_false_keeps_the_model_trained_beside_the_held_out_group():
    """The default (refit=False): one run on the targets outside the first inner group,
    cut at the round with the best NDCG@10 of that group (0 = the EASE prior alone)."""
    R = _ratings(6, n_items=30)
    targets = np.arange(R.shape[0])
    names = BASE_RECOMMENDERS
    rec = _pooled(R, feedback="rated", n_estimators=6, negatives=1.0)
    assert rec.refit is False
    base = {"names": names, "pool": targets, "ease_lambda": rec.ease_lambda_}
    prob = pooled_problem(
        R, targets, base, n_folds=5, feedback="rated", negatives=1.0,
        rng=np.random.default_rng(0), held_unrated=HELD_UNRATED, fold=_fit_folds(R),
    )  # fmt: skip
    group = group_folds(prob.qid, 2, np.random.default_rng([0, 1]))
    rows = (group != 0) & ~prob.held
    assert 0 < np.unique(prob.qid[rows]).shape[0] < targets.shape[0]
    train_rows = prob.subset(rows)
    f0 = 0.25 * train_rows.X[:, names.index("ease")]
    want = train(train_rows.X, train_rows.feedback("rated"), 6, init_score=f0, thresholds=255)
    assert rec.model_ == want
    curve = rec.rounds_curve_
    assert curve.shape == (7,)  # round 0: the prior alone
    assert rec.report_["n_rounds"] == int(np.nanargmax(curve))
    refit = _pooled(R, feedback="rated", n_estimators=6, negatives=1.0, refit=True)
    assert refit.model_ != rec.model_


def test_liked_feedback_layers_liked_above_rated_above_unrated():
    R = _ratings(6)
    targets = np.arange(R.shape[0])
    prob = pooled_problem(
        R, targets, {"names": ("popularity",)}, n_folds=2, feedback="rated", negatives=1.0,
        rng=np.random.default_rng(0),
    )  # fmt: skip
    lab = prob.labels("liked")
    for u in targets:
        mine = prob.qid == u
        mean = R[u].data.mean()
        rating = 0.0 * prob.y[mine]
        rated = prob.y[mine] > 0
        rating[rated] = prob.y[mine][rated] - 1 + R.data.min()
        want = np.where(~rated, 0.0, np.where(rating >= mean, 2.0, 1.0))
        np.testing.assert_array_equal(lab[mine], want)
    assert set(np.unique(lab)) == {0.0, 1.0, 2.0}
    np.testing.assert_array_equal(prob.gains("liked"), lab == 2)
    fb = prob.feedback("liked")
    assert type(fb).__name__ == "LayeredFeedback"


def _ref_choose_lambda(R, seed):
    """One user at a time: EASE on the kept ratings, NDCG@10 of the held-out liked items."""
    held = validation_split(R, seed)
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    keep = ~held
    Rk = sp.csr_matrix((R.data[keep], (rows[keep], R.indices[keep])), shape=R.shape)
    out = {}
    for lam in EASE_LAMBDAS:
        S = BaseScores(("ease",), ease_lambda=lam).fit(Rk)
        vals = []
        for u in range(R.shape[0]):
            mine = rows == u
            liked = held[mine] & (R.data[mine] >= R.data[mine].mean())
            if not liked.any():
                continue
            free = np.setdiff1d(np.arange(R.shape[1]), Rk[u].indices)
            y = np.isin(free, R.indices[mine][liked]).astype(float)
            score = np.asarray(Rk[u].astype(bool).astype(float) @ S._ease).ravel()[free]
            vals.append(ndcg_score(y, score, np.zeros(free.shape[0], dtype=np.int64), k=10))
        out[lam] = float(np.mean(vals))
    return out


def test_ease_lambda_auto_is_the_best_on_a_validation_split_of_the_ratings():
    R = _ratings(3, n_users=30, n_items=25)
    lam, value = choose_ease_lambda(R, seed=7, search="grid", float32=False)
    want = _ref_choose_lambda(R, seed=7)
    assert list(value) == list(EASE_LAMBDAS)
    np.testing.assert_allclose(list(value.values()), list(want.values()), rtol=1e-12)
    assert lam == max(want, key=want.get)
    held = validation_split(R, seed=7)
    n_u = np.diff(R.indptr)
    np.testing.assert_array_equal(np.add.reduceat(held, R.indptr[:-1]), n_u // 5)
    # the estimator uses it ("auto", seeded by random_state) or the given float
    rec = _pooled(R, n_estimators=3, random_state=7)
    assert rec.ease_lambda_ == lam
    assert rec._base.ease_lambda == lam
    fixed = _pooled(R, n_estimators=3, ease_lambda=42.0)
    assert fixed.ease_lambda_ == 42.0 == fixed._base.ease_lambda
    no_ease = _pooled(R, n_estimators=3, base_recommenders=("item_knn",), prior=None)
    assert no_ease.ease_lambda_ is None
    # nobody has 5 ratings: nothing is held out, the first candidate is kept
    few = sp.csr_matrix(np.array([[5.0, 3, 0, 0], [0, 4, 1, 0], [2, 0, 0, 5]]))
    assert choose_ease_lambda(few, seed=0) == (EASE_LAMBDAS[0], {})


def _peaks(values):
    """How many local maxima (plateaus counted once) a sequence has."""
    v = np.asarray(values)
    v = v[np.r_[True, np.diff(v) != 0]]
    up = np.r_[True, v[1:] > v[:-1]]
    down = np.r_[v[:-1] > v[1:], True]
    return int((up & down).sum())


def test_issue35_ease_lambda_local_search_is_the_grid_choice_when_one_peak():
    """The fit's local search over the grid returns the grid's lambda whenever the NDCG over
    the grid has one peak, with fewer evaluations; on two peaks it may stop at the other
    (documented). Each value it evaluates is the grid's value bit for bit."""
    from rankboost.recommend._base import EASE_START

    one_peak = fewer = 0
    for seed in range(12):
        R = _ratings(seed, n_users=40, n_items=30)
        lam_grid, grid = choose_ease_lambda(R, seed=seed, search="grid")
        lam, local = choose_ease_lambda(R, seed=seed)
        assert EASE_START in local
        assert list(local) == [x for x in EASE_LAMBDAS if x in local]
        for x, v in local.items():
            assert v == grid[x]
        if _peaks(list(grid.values())) == 1:
            one_peak += 1
            assert lam == lam_grid
        fewer += len(local) < len(grid)
    assert one_peak >= 4
    assert fewer >= 8
    # two peaks (50 and 500, 50 the higher): starting at 500, the search stays on its peak
    R = _ratings(0, n_users=40, n_items=30)
    assert choose_ease_lambda(R, seed=0, search="grid")[0] == 50.0
    lam, local = choose_ease_lambda(R, seed=0)
    assert (lam, list(local)) == (500.0, [250.0, 500.0, 1000.0])
    with pytest.raises(ValueError, match="search must be 'local' or 'grid'; got 'all'"):
        choose_ease_lambda(_ratings(0, n_users=40, n_items=30), seed=0, search="all")


def test_top_k_equals_a_stable_argsort_with_exclusions_and_padding():
    rng = np.random.default_rng(0)
    S = rng.integers(0, 4, size=(6, 9)).astype(float)  # many ties
    S[2, :] = -np.inf
    S[3, 2:] = -np.inf
    items, scores = top_k(S, 4)
    for r in range(S.shape[0]):
        order = [c for c in np.argsort(-S[r], kind="stable") if np.isfinite(S[r, c])][:4]
        assert items[r, : len(order)].tolist() == order
        assert (items[r, len(order) :] == -1).all()
        assert np.isnan(scores[r, len(order) :]).all()


@pytest.mark.parametrize("graded", [False, True])
def test_ndcg_per_round_equals_ndcg_score_of_every_round(graded):
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 25, size=30)
    qid = np.repeat(np.arange(30) * 3, sizes)  # contiguous, gaps in the ids
    n = qid.shape[0]
    y = rng.integers(0, 5 if graded else 2, size=n).astype(float)
    H = rng.integers(0, 4, size=(n, 9)).astype(float)  # heavy ties
    H[:, 6] = rng.random(n)
    H[:, 7] = 1.0  # one tie over every row
    H[:, 8] = np.where(rng.random(n) < 0.7, 2.0, rng.random(n))  # ties at the top and cut
    got = round_curves(H.T, y, qid, k=10).mean(axis=0)
    want = [ndcg_score(y, H[:, t], qid, k=10) for t in range(H.shape[1])]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------ estimator


def _fit_folds(R, seed=0, n_folds=5):
    """The cross-fitting folds of a pooled fit with ``random_state=seed`` (train_pooled's)."""
    return entry_folds(R, n_folds, np.random.default_rng([seed, 2]))


def _pooled(R, targets=None, **kw):
    kw.setdefault("n_estimators", 15)
    return RankBoostRecommender(**kw).fit(R, target_users=targets)


def test_auto_feedback_without_a_rating_pair_predicts_with_the_rated_model():
    """Every user gives one rating value: no "ratings" model, so predict uses the top-N one."""
    R = _ratings(8)
    R.data[:] = 4.0
    auto = _pooled(R, n_estimators=4)
    assert auto.rating_model_ is auto.model_
    np.testing.assert_array_equal(
        auto.predict(3), auto._fits[0].score(auto._base.scores(np.array([3]))[0])
    )


def test_auto_feedback_is_the_ratings_model_for_predict_and_the_liked_one_for_recommend():
    R = _ratings(8)
    auto = _pooled(R, n_estimators=8)
    assert auto.feedback == "auto"
    by_rating = _pooled(R, feedback="ratings", n_estimators=8)
    top_n = _pooled(R, feedback="liked", n_estimators=8)
    assert auto.rating_model_ == by_rating.model_
    assert auto.model_ == top_n.model_
    assert auto.rating_model_ != auto.model_
    np.testing.assert_array_equal(auto.predict(3), by_rating.predict(3))
    np.testing.assert_array_equal(auto.rank(3), by_rating.rank(3))
    np.testing.assert_array_equal(auto.recommend(3, k=5)[1], top_n.recommend(3, k=5)[1])
    np.testing.assert_array_equal(auto.recommend_all(k=5)[1], top_n.recommend_all(k=5)[1])


def test_top_n_model_boosts_from_the_ease_prior():
    R = _ratings(8)
    rec = _pooled(R, feedback="rated", inner_folds=None, prior_scale=0.25, n_estimators=6,
                  negatives=1.0)  # fmt: skip
    names = rec._base.names
    prob = pooled_problem(
        R, np.arange(R.shape[0]), {"names": names, "pool": np.arange(R.shape[0]),
        "ease_lambda": rec.ease_lambda_}, n_folds=5, feedback="rated", negatives=1.0,
        rng=np.random.default_rng(0), fold=_fit_folds(R),
    )  # fmt: skip
    f0 = 0.25 * prob.X[:, names.index("ease")]
    want = train(prob.X, prob.feedback("rated"), 6, init_score=f0, thresholds=255)
    assert rec.model_ == want
    assert rec.prior_scale_ == 0.25
    S = rec._base.scores(np.array([4]))[0]
    np.testing.assert_allclose(
        rec.predict(4), 0.25 * S[:, names.index("ease")] + want.decision_function(S), rtol=1e-12
    )
    # no prior: boosting from 0
    plain = _pooled(R, feedback="rated", inner_folds=None, prior=None, n_estimators=6,
                    negatives=1.0)  # fmt: skip
    assert plain.model_ == train(prob.X, prob.feedback("rated"), 6, thresholds=255)
    assert plain.prior_scale_ is None
    # prior_scale=None: the multiplier whose inner-CV curve peaks highest
    picked = _pooled(R, feedback="rated", prior_scale=None, n_estimators=6)
    peaks = {
        c: np.nanmax(_pooled(R, feedback="rated", prior_scale=c, n_estimators=6).rounds_curve_)
        for c in PRIOR_SCALES
    }
    assert picked.prior_scale_ == max(peaks, key=peaks.get)
    np.testing.assert_array_equal(
        picked.rounds_curve_,
        _pooled(R, feedback="rated", prior_scale=picked.prior_scale_, n_estimators=6).rounds_curve_,
    )


def test_default_is_pooled_and_recommend_all_equals_recommend():
    R = _ratings(8)
    rec = _pooled(R, n_jobs=1, feedback="rated")
    assert rec.mode == "pooled"
    assert rec.model_ is not None
    assert rec.report_["n_rounds"] <= 15
    assert rec.rounds_curve_.shape == (16,)  # round 0: the EASE prior alone
    users, items, scores = rec.recommend_all(k=5)
    np.testing.assert_array_equal(users, np.arange(R.shape[0]))
    for r, u in enumerate(users):
        it, sc = rec.recommend(int(u), k=5)
        n = it.shape[0]
        np.testing.assert_array_equal(items[r, :n], it)
        np.testing.assert_allclose(scores[r, :n], sc, rtol=0, atol=1e-12)
        assert not set(it.tolist()) & set(R[u].indices.tolist())
        np.testing.assert_allclose(rec.predict(int(u), it), sc, rtol=0, atol=1e-12)
    par = _pooled(R, n_jobs=2, feedback="rated").recommend_all(k=5)
    np.testing.assert_array_equal(par[1], items)


@pytest.mark.parametrize("n_jobs", [2, -1])
def test_cross_fitting_folds_in_threads_give_the_same_rows_and_models(n_jobs):
    """``n_jobs`` cross-fits the folds in threads, each writing its own rows: the problem
    and both models of ``feedback="auto"`` are bit-identical to the serial fit's."""
    R = _ratings(9, n_users=30, n_items=25)
    names = BASE_RECOMMENDERS
    base = {"names": names, "ease_lambda": 100.0}
    kw = {"n_folds": 4, "feedback": "rated", "negatives": 1.0, "held_unrated": 3}
    one = pooled_problem(R, np.arange(30), base, rng=np.random.default_rng(2), **kw)
    par = pooled_problem(R, np.arange(30), base, rng=np.random.default_rng(2), n_jobs=n_jobs, **kw)
    np.testing.assert_array_equal(par.X, one.X)
    np.testing.assert_array_equal(par.qid, one.qid)
    assert np.isfinite(one.X[:, names.index("ease")]).all()
    serial = _pooled(R, n_estimators=6, ease_lambda=100.0)
    threaded = _pooled(R, n_estimators=6, ease_lambda=100.0, n_jobs=n_jobs)
    assert threaded.model_ == serial.model_
    assert threaded.rating_model_ == serial.rating_model_


def test_pooled_learns_the_taste_groups():
    """Held-out ratings: the pooled model ranks a user's liked items above disliked ones."""
    R = _ratings(11, n_users=40, n_items=30, density=0.6)
    rng = np.random.default_rng(0)
    coo = R.tocoo()
    test = rng.random(coo.nnz) < 0.25
    test &= np.isin(coo.col, np.arange(3, 30))
    train = sp.csr_matrix((coo.data[~test], (coo.row[~test], coo.col[~test])), shape=R.shape)
    rec = RankBoostRecommender(feedback="ratings", n_estimators=30).fit(train)
    good = bad = 0
    for u in range(R.shape[0]):
        sel = test & (coo.row == u)
        y, it = coo.data[sel], coo.col[sel]
        s = rec.predict(u, it)
        hi, lo = np.nonzero(y[:, None] > y[None, :])
        good += int((s[hi] > s[lo]).sum())
        bad += int((s[hi] < s[lo]).sum())
    assert good > 3 * bad


def test_any_user_of_the_ratings_can_be_scored_and_labels_round_trip():
    pd = pytest.importorskip("pandas")
    R = _ratings(9).tocoo()
    frame = pd.DataFrame({"user": [f"u{r:02d}" for r in R.row], "item": R.col + 100,
                          "rating": R.data})  # fmt: skip
    rec = RankBoostRecommender(n_estimators=10).fit(frame, target_users=["u00", "u01", "u02"])
    mat = RankBoostRecommender(n_estimators=10).fit(R.tocsr(), target_users=[0, 1, 2])
    items, scores = rec.recommend("u05", k=4)  # not a target: the pooled model scores anyone
    np.testing.assert_array_equal(items, mat.recommend(5, k=4)[0] + 100)
    users, top, _ = rec.recommend_all(k=3)
    assert users.tolist() == ["u00", "u01", "u02"]
    assert all(isinstance(i, (int, np.integer)) and i >= 100 for i in top.ravel())


# ------------------------------------------------------------------ bad input (issue 24)


def test_user_with_one_rating():
    R = _ratings(4).tolil()
    R[0, :] = 0
    R[0, 5] = 4.0
    R = sp.csr_matrix(R)
    R.eliminate_zeros()
    rec = RankBoostRecommender(n_estimators=5).fit(R)  # rated above unrated: still a pair
    assert rec.recommend(0, k=3)[0].shape == (3,)
    with pytest.raises(ValueError, match=r"user 0 has 1 rating\(s\) with fewer than two"):
        RankBoostRecommender(mode="per_user", n_estimators=5).fit(R, target_users=[0])
    with pytest.raises(ValueError, match="no target user has a crucial pair.*feedback='auto'"):
        RankBoostRecommender(feedback="ratings", n_estimators=5).fit(R, target_users=[0])


def test_duplicates_and_out_of_range_ratings():
    pd = pytest.importorskip("pandas")
    R = _ratings(4).tocoo()
    dup = sp.coo_matrix(
        (np.r_[R.data, 3.0], (np.r_[R.row, R.row[0]], np.r_[R.col, R.col[0]])), shape=R.shape
    )
    with pytest.raises(ValueError, match="more than once; keep one rating"):
        RankBoostRecommender().fit(dup)
    frame = pd.DataFrame({"user": R.row, "item": R.col, "rating": R.data})
    with pytest.raises(ValueError, match="more than once; keep one rating"):
        RankBoostRecommender().fit(pd.concat([frame, frame.iloc[[2]]]))
    bad = frame.copy()
    bad.loc[4, "rating"] = 7.0
    with pytest.raises(ValueError, match=r"rating 7.0 for user .* within rating_range=\(1, 5\)"):
        RankBoostRecommender(rating_range=(1, 5)).fit(bad)


def test_unknown_users_and_items_at_predict_never_leak_index_error():
    R = _ratings(4)
    rec = _pooled(R)
    for user in (R.shape[0], -1, 10**9):
        with pytest.raises(ValueError, match=r"unknown user .*\(rows 0\.\."):
            rec.predict(user)
        with pytest.raises(ValueError, match=r"unknown user"):
            rec.recommend(user)
    with pytest.raises(ValueError, match="unknown item 18"):
        rec.predict(0, [1, 18])
    per = RankBoostRecommender(mode="per_user", n_estimators=3).fit(R, target_users=[0])
    with pytest.raises(ValueError, match=r"unknown user 14"):
        per.predict(14)


def test_mixed_id_types_are_refused_and_hinted():
    pd = pytest.importorskip("pandas")
    R = _ratings(4).tocoo()
    users = [str(u) if u % 2 else int(u) for u in R.row]
    frame = pd.DataFrame({"user": users, "item": R.col, "rating": R.data})
    with pytest.raises(ValueError, match=r"user ids mix types: .*Convert the column"):
        RankBoostRecommender().fit(frame)
    ok = pd.DataFrame({"user": R.row, "item": R.col, "rating": R.data})
    rec = RankBoostRecommender(n_estimators=5).fit(ok, target_users=[0, 1])
    with pytest.raises(ValueError, match=r"unknown user '1'.*The user 1 \(int\) exists"):
        rec.recommend("1")


def test_explicit_zeros_in_a_sparse_matrix():
    R = _ratings(4)
    Z = R.copy()
    Z.data[3] = 0.0  # stored, not eliminated
    with pytest.raises(ValueError, match=r"explicit 0 \(user 0, item .*eliminate_zeros\(\)"):
        RankBoostRecommender().fit(Z)
    with pytest.raises(ValueError, match=r"rating 0.0 .* within rating_range"):
        RankBoostRecommender(rating_range=(1, 5)).fit(Z)
    RankBoostRecommender(rating_range=(0, 5), n_estimators=3).fit(Z)  # 0 is a rating here


def test_bad_pooled_parameters_name_the_parameter():
    R = _ratings(4)
    bad = [
        ({"mode": "global"}, "mode must be one of"),
        ({"feedback": "clicks"}, "feedback must be one of"),
        ({"base_recommenders": ("ease", "svd")}, "base_recommenders must be distinct names"),
        ({"base_recommenders": ("ease", "ease")}, "base_recommenders must be distinct names"),
        ({"n_folds": 1}, "n_folds must be an int >= 2"),
        ({"negatives": 0}, "negatives must be a number > 0"),
        ({"inner_folds": 1}, "inner_folds must be None or an int >= 2"),
        ({"refit": "yes"}, "refit must be True or False"),
        ({"n_jobs": 0}, "n_jobs must be None, an int >= 1, or a negative int"),
        ({"n_jobs": 1.5}, r"n_jobs must be None, .* = all cores\); got 1.5"),
        ({"random_state": -1}, "random_state must be an int >= 0"),
        ({"thresholds": "many"}, "thresholds"),
        ({"prior": "svd"}, 'prior must be "ease" or None'),
        ({"prior_scale": 0.0}, "prior_scale must be None or a number > 0"),
        ({"ease_lambda": 0}, 'ease_lambda must be "auto" or a number > 0; got 0'),
        ({"ease_lambda": -5.0}, 'ease_lambda must be "auto" or a number > 0'),
        ({"ease_lambda": float("inf")}, 'ease_lambda must be "auto" or a number > 0'),
        ({"ease_lambda": True}, 'ease_lambda must be "auto" or a number > 0'),
        ({"ease_lambda": "best"}, 'ease_lambda must be "auto" or a number > 0'),
        ({"base_recommenders": ("item_knn",)}, 'prior="ease" boosts from the EASE score'),
    ]
    for kw, msg in bad:
        with pytest.raises(ValueError, match=msg):
            RankBoostRecommender(**kw).fit(R)


@pytest.mark.parametrize("serial_below", [4096, 0])
def test_ease_inverse_is_exact_and_serial_below_the_threshold(monkeypatch, serial_below):
    """EASE's Cholesky inverse runs on one BLAS thread for catalogues below the threshold
    (OpenBLAS's threaded potrf/potri spin on a shared machine) and equals a general inverse."""
    from threadpoolctl import threadpool_info

    from rankboost.recommend import _base

    rng = np.random.default_rng(3)
    X = (rng.random((40, 30)) < 0.3).astype(float)
    G = X.T @ X + 50.0 * np.eye(30)
    seen = []
    potrf = _base.lapack.dpotrf

    def spy(*a, **kw):
        seen.append(min(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
        return potrf(*a, **kw)

    monkeypatch.setattr(_base, "_SERIAL_INVERSE", serial_below)
    monkeypatch.setattr(_base.lapack, "dpotrf", spy)
    np.testing.assert_allclose(_base._spd_inverse(G), np.linalg.inv(G), rtol=1e-10, atol=1e-14)
    assert len(seen) == 1
    if serial_below:
        assert seen == [1]


def test_issue35_ease_in_float32_when_well_conditioned():
    """The cross-fitted EASE features and the penalty search may invert in float32 (half the
    time): within float32's precision of the float64 weights while the condition bound
    ``(||G||_inf + lam) / lam`` is below the threshold, float64 above it; the fit's EASE
    (prior and recommend) stays float64."""
    from rankboost.recommend import _base

    rng = np.random.default_rng(8)
    for trial in range(6):
        X = (rng.random((60, 40)) < 0.2 + 0.1 * trial).astype(float)
        G = X.T @ X
        for lam in (5.0, 50.0, 500.0):
            W64 = _base._ease_weights(G, lam)
            W32 = _base._ease_weights(G, lam, float32=True)
            assert W64.dtype == np.float64
            assert W32.dtype == np.float32
            bound = (np.abs(G).sum(axis=1).max() + lam) / lam
            np.testing.assert_allclose(W32, W64, rtol=0, atol=bound * 1e-6 * np.abs(W64).max())
            P = _base._spd_inverse((G + lam * np.eye(40)).astype(np.float32))
            inv = np.linalg.inv(G + lam * np.eye(40))
            np.testing.assert_allclose(P, inv, rtol=0, atol=bound * 1e-6 * np.abs(inv).max())
    # ill-conditioned (bound >= 1e4): float64 even when float32 is asked for
    G = np.full((5, 5), 1e3) + np.eye(5)
    assert _base._ease_weights(G, 0.5, float32=True).dtype == np.float64
    # the fit: cross-fitting folds in float32, the final EASE (prior, recommend) in float64
    R = _ratings(2, n_users=30, n_items=25)
    assert _pooled(R, n_estimators=3)._base._ease.dtype == np.float64
    # the penalty search in float32 picks what float64 picks, values within 1e-5
    for seed in range(6):
        R = _ratings(seed, n_users=40, n_items=30)
        lam64, v64 = choose_ease_lambda(R, seed=seed, search="grid", float32=False)
        lam32, v32 = choose_ease_lambda(R, seed=seed, search="grid")
        assert lam32 == lam64
        np.testing.assert_allclose(list(v32.values()), list(v64.values()), atol=1e-5)


def test_top_columns_is_the_stable_full_sort():
    """The partial top-k of EASE's penalty choice and ``top_k`` returns what the stable
    full sort did: ties to the lower column, -inf after numbers, NaN last."""
    from rankboost.recommend._penalty import top_columns

    rng = np.random.default_rng(5)
    for trial in range(120):
        n, m = int(rng.integers(1, 9)), int(rng.integers(1, 30))
        S = rng.integers(-2, 3, size=(n, m)).astype(float)  # many ties
        if trial % 3 == 0:
            S = rng.normal(size=(n, m))
        S[rng.random((n, m)) < 0.1] = -np.inf
        S[rng.random((n, m)) < 0.1] = np.nan
        for k in range(m + 2):
            want = np.argsort(-S, axis=1, kind="stable")[:, :k]
            np.testing.assert_array_equal(top_columns(S, k), want)


@pytest.mark.parametrize("cells", [25, 60, 1 << 22])
def test_ease_lambda_choice_scored_in_blocks_of_users_equals_the_reference(monkeypatch, cells):
    """Blocks of 1, 2 or all users: the same NDCG@10 of every lambda as the loop reference
    (memory O(block x items) instead of a dense users x items score matrix)."""
    from rankboost.recommend import _base

    monkeypatch.setattr(_base, "_BLOCK_CELLS", cells)
    R = _ratings(4, n_users=30, n_items=25)
    lam, value = choose_ease_lambda(R, seed=3, search="grid", float32=False)
    want = _ref_choose_lambda(R, seed=3)
    np.testing.assert_allclose(list(value.values()), list(want.values()), rtol=1e-12)
    assert lam == max(want, key=want.get)


@pytest.mark.parametrize("prior", [None, 0.25])
def test_inner_cv_curve_scored_in_blocks_of_users_is_the_same(monkeypatch, prior):
    """The held-out rows' rounds x rows scores built a few users at a time (memory O(block))
    give the same rounds and the same curve, bit for bit, as one block of every user."""
    from rankboost.params import TrainParams
    from rankboost.recommend import _rounds
    from rankboost.recommend._rounds import select_rounds

    R = _ratings(6, n_users=24, n_items=20)
    names = ("item_knn", "ease", "popularity")
    prob = pooled_problem(
        R, np.arange(R.shape[0]), {"names": names, "ease_lambda": 100.0}, n_folds=3,
        feedback="rated", negatives=1.0, rng=np.random.default_rng(0), held_unrated=4,
    )  # fmt: skip
    f0 = None if prior is None else prior * prob.X[:, 1]
    params = TrainParams(n_rounds=7, thresholds=255)

    def run():
        return select_rounds(prob, "rated", params, 2, np.random.default_rng(1), f0)

    whole = run()
    for cells in (1, 40):  # one user per block; a few users per block
        monkeypatch.setattr(_rounds, "_BLOCK_CELLS", cells)
        rounds, curve = run()
        assert rounds == whole[0]
        np.testing.assert_array_equal(curve, whole[1])
    assert np.isfinite(whole[1]).all()


def test_inner_cv_holds_one_block_of_scores_at_a_time(monkeypatch):
    """Memory O(block): the next block's rounds x rows scores are built after the last one is
    freed (two blocks at once doubled the inner CV's peak on MovieLens 100K, 33 -> 65 MiB).
    The traced peak is one block plus the staged scoring's row vectors (1.4 blocks here;
    2.4 with two blocks alive)."""
    import tracemalloc

    from rankboost.recommend import _rounds

    R = _ratings(6, n_users=40, n_items=30)
    prob = pooled_problem(
        R, np.arange(40), {"names": ("item_knn", "ease", "popularity"), "ease_lambda": 100.0},
        n_folds=3, feedback="rated", negatives=1.0, rng=np.random.default_rng(0),
        held_unrated=4,
    )  # fmt: skip
    model = train(prob.X, prob.feedback("rated"), 60, thresholds=255)
    width = model.n_rounds + 1
    cells = width * 300  # blocks of about 300 rows (whole users)
    monkeypatch.setattr(_rounds, "_BLOCK_CELLS", cells)
    assert prob.X.shape[0] > 3 * 300
    args = (model, prob.X, prob.qid, prob.gains("rated"), 1, np.nan_to_num(prob.X[:, 1]))
    _rounds.held_out_users(*args)  # what the model caches at its first scoring: not counted
    tracemalloc.start()
    try:
        entry = tracemalloc.get_traced_memory()[0]
        _rounds.held_out_users(*args)
        peak = tracemalloc.get_traced_memory()[1] - entry
    finally:
        tracemalloc.stop()
    largest_user = int(np.bincount(prob.qid).max())
    block = width * (300 + largest_user) * 8
    assert peak < 1.6 * block, (peak, block)


def test_penalty_search_gram_and_weights_serve_the_last_fold_bit_for_bit():
    """``ease_lambda="auto"``: the search holds out exactly the last cross-fitting fold's
    ratings, so its Gram matrix and EASE weights at the chosen penalty are that fold's
    (one inverse and one Gram product fewer); the rows are the same bits as a refit."""
    R = _ratings(10, n_users=30, n_items=25)
    kept: dict = {}
    lam, values = choose_ease_lambda(R, seed=0, keep=kept)
    assert set(kept) == {"gram", "weights"}
    assert lam in values
    fold = _fit_folds(R)
    np.testing.assert_array_equal(validation_split(R, 0), fold == 4)
    mask = fold != 4
    Rk = sp.csr_matrix(R.copy())
    Rk.data[~mask] = 0.0
    Rk.eliminate_zeros()
    alone = BaseScores(("ease",), ease_lambda=lam, ease_float32=True).fit(Rk)
    np.testing.assert_array_equal(kept["weights"], alone._ease)
    base = {"names": BASE_RECOMMENDERS, "ease_lambda": lam}
    kw = {"n_folds": 5, "feedback": "rated", "negatives": 1.0, "held_unrated": 3, "fold": fold}
    plain = pooled_problem(R, np.arange(30), base, rng=np.random.default_rng(1), **kw)
    given = {4: {"gram": kept["gram"], "ease_weights": kept["weights"]}}
    reused = pooled_problem(
        R, np.arange(30), base, rng=np.random.default_rng(1), prefit=given, **kw
    )
    np.testing.assert_array_equal(reused.X, plain.X)
    # other weights would show (another penalty's; a multiple would not: EASE is
    # standardised per user)
    other_lam = _ease_weights(kept["gram"], 4.0 * lam, True)
    wrong = {4: {"gram": kept["gram"], "ease_weights": other_lam}}
    other = pooled_problem(R, np.arange(30), base, rng=np.random.default_rng(1), prefit=wrong, **kw)
    assert not np.array_equal(other.X, plain.X)


def test_base_fit_refuses_a_given_gram_or_weights_of_another_shape():
    R = _ratings(3, n_users=12, n_items=9)
    base = BaseScores(("ease", "cooccurrence"), ease_lambda=50.0)
    for kw in ({"gram": np.eye(8)}, {"ease_weights": np.ones((9, 3))}):
        name = next(iter(kw))
        with pytest.raises(ValueError, match=f"{name} must be an items x items array .9 x 9"):
            base.fit(R, **kw)
