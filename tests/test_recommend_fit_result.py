"""Fits return, the estimator assigns (issue 45): the pooled and per-user fits return what they
learned, write nothing of the estimator, and ``RankBoostRecommender.fit`` assigns every fitted
attribute from the returned object."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import rankboost.recommend as recommend_pkg
from rankboost import TrainingStoppedWarning
from rankboost.recommend import RankBoostRecommender
from rankboost.recommend._checks import design_of
from rankboost.recommend._inputs import fit_input
from rankboost.recommend._per_user import PerUserResult, fit_per_user_models
from rankboost.recommend._pooled import PooledOptions, PooledResult, fit_pooled
from test_recommend_pooled import _ratings


def _same_state(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a
    )


@pytest.mark.parametrize("kw", [{}, {"refit": True, "prior_scale": None}, {"feedback": "rated"}])
def test_the_pooled_fit_returns_what_the_estimator_assigns(kw):
    dense = _ratings(8).toarray()
    dense[2] = 0.0  # a target without a rating: skipped
    R = sp.csr_matrix(dense)
    rec = RankBoostRecommender(n_estimators=6, invalid_targets="skip", **kw)
    before = dict(vars(rec))
    data = fit_input(R, None, None, ("user", "item", "rating"), None)
    args = (data.R, data.targets, data.feats, rec._check_params(), data.user_labels)
    res = fit_pooled(*args, PooledOptions.of(rec))
    assert _same_state(vars(rec), before)  # the fit read the parameters, wrote nothing
    assert isinstance(res, PooledResult)
    assert res.skipped.keys() == {2}
    assert 2 not in res.fitted.tolist()
    rec.fit(R)
    assert rec.model_ == res.top_n.model
    assert rec.rating_model_ == res.by_rating.model
    for got, want in ((rec.rounds_curve_, res.top_n.curve),
                      (rec.rating_rounds_curve_, res.by_rating.curve)):  # fmt: skip
        np.testing.assert_array_equal(got, want)
    assert rec.prior_scale_ == res.top_n.scale
    assert rec.ease_lambda_ == res.ease_lambda
    assert rec.report_ == res.report
    assert res.report["n_rounds"] == res.top_n.rounds
    assert rec.skipped_users_ == res.skipped
    assert list(rec.models_) == res.fitted.tolist()
    assert all(m is rec.model_ for m in rec.models_.values())
    np.testing.assert_array_equal(
        rec.predict(3), res.by_rating.score(res.base.scores(np.array([3]))[0])
    )


def test_the_per_user_fit_returns_what_the_estimator_assigns():
    pd = pytest.importorskip("pandas")
    dense = _ratings(5, n_users=12).toarray()
    dense[4] = 0.0
    dense[4, :2] = 3.0  # one rating value: no crucial pair, skipped
    coo = sp.coo_matrix(dense)
    frame = pd.DataFrame({"user": [f"u{u}" for u in coo.row], "item": coo.col, "rating": coo.data})
    targets = [f"u{u}" for u in range(6)]
    rec = RankBoostRecommender(
        mode="per_user", feature_users=[f"u{u}" for u in range(6, 12)], n_estimators=5,
        extra_features=("vsim",), invalid_targets="skip",
    )  # fmt: skip
    before = dict(vars(rec))
    data = fit_input(frame, targets, rec.feature_users, ("user", "item", "rating"), None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        res = fit_per_user_models(
            data.R, data.targets, data.feats, rec._check_params(), data.user_labels,
            design_of(rec), min_overlap=1, max_feature_users=None, invalid_targets="skip",
            n_jobs=None, verbose=0,
        )  # fmt: skip
        assert _same_state(vars(rec), before)  # the fit wrote nothing of the estimator
        rec.fit(frame, target_users=targets)
    assert isinstance(res, PerUserResult)
    row = data.user_pos["u4"]
    assert res.skipped.keys() == {row}
    assert rec.skipped_users_ == {"u4": res.skipped[row]}
    assert list(rec.models_) == [data.user_labels[u] for u in res.models]
    assert all(rec.models_[data.user_labels[u]] == m for u, m in res.models.items())
    assert res.vsim_weights.keys() == res.models.keys()
    for u, f in res.feats.items():
        assert rec.feature_users_[data.user_labels[u]].tolist() == data.users[f].tolist()
    assert rec.report_ == res.report
    assert rec.model_ is rec.rating_model_ is rec.prior_scale_ is rec.ease_lambda_ is None


def _fitted_writes(path: Path) -> list[str]:
    """Assignments to an ``_``-ending attribute other than ``self``'s inside a class."""
    out = []

    def visit(node: ast.AST, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, True)
                continue
            targets: list[ast.expr] = []
            if isinstance(child, ast.Assign):
                targets = child.targets
            elif isinstance(child, (ast.AugAssign, ast.AnnAssign)):
                targets = [child.target]
            for t in targets:
                for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                    if not isinstance(e, ast.Attribute) or not e.attr.endswith("_"):
                        continue
                    if in_class and isinstance(e.value, ast.Name) and e.value.id == "self":
                        continue
                    out.append(f"{path.name}:{child.lineno}: {ast.unparse(e)}")
            visit(child, in_class)

    visit(ast.parse(path.read_text()), False)
    return out


def test_no_code_of_recommend_writes_another_objects_fitted_attributes():
    """Issue 45, item 2: only the estimator's own methods assign its fitted attributes."""
    files = sorted(Path(recommend_pkg.__file__).parent.glob("*.py"))
    assert [w for path in files for w in _fitted_writes(path)] == []
