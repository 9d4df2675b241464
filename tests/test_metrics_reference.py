"""rankboost.metrics against pytrec_eval (trec_eval) and ranx on random runs without ties.

Provenance and conventions (checked by running the tools, see docs/metrics.md):

* pytrec_eval: package ``pytrec-eval-terrier`` (version in ``TOOLS`` below, read with
  ``importlib.metadata.version``), wrapping trec_eval 9. Measures ``ndcg_cut.k`` (gain =
  the qrels relevance value, i.e. our ``gain="linear"``, discount ``1/log2(1+i)``),
  ``P.k`` (denominator k), ``map``, ``recip_rank``; relevance level 1 (``rel >= 1`` is
  relevant; our ``relevance_threshold=1``). A query whose qrels hold only zero labels is
  evaluated and scores 0 (our ``empty="zero"``). trec_eval breaks score ties by docno, so
  the runs here have distinct scores.
* ranx (run by the interpreter in a child process: ``tests/ranx_reference.py`` says why, and
  how it was checked against compiled ranx): measures ``ndcg@k`` (Järvelin: linear gain, our
  ``gain="linear"``), ``ndcg_burges@k`` (``2**rel - 1``, our default ``gain="exp2"``),
  ``precision@k``, ``map``, ``mrr``. Queries without a relevant document score 0 (ranx
  warns), our ``empty="zero"``; we additionally compare per query with ``empty="skip"`` on the
  queries that have one.
"""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

import ranx_reference
from rankboost import metrics as M

pytrec_eval = pytest.importorskip("pytrec_eval")
if not ranx_reference.HAVE_RANX:
    pytest.skip("ranx is not installed", allow_module_level=True)

TOOLS = {name: importlib.metadata.version(name) for name in ("pytrec-eval-terrier", "ranx")}


def random_run(seed, n_queries=40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 60, n_queries)
    qid = np.repeat(rng.permutation(n_queries) * 7 + 3, sizes)  # non-contiguous ids
    n = qid.shape[0]
    y = rng.integers(0, 4, n) * (rng.random(n) < 0.5)  # many zeros; some queries all zero
    y[qid == qid[0]] = 0  # at least one query without a relevant document
    s = rng.permutation(n) / n + rng.normal(scale=1e-3, size=n)  # distinct scores
    assert np.unique(s).shape[0] == n
    perm = rng.permutation(n)  # rows in arbitrary order
    return y[perm].astype(float), s[perm], qid[perm]


def as_dicts(y, s, qid):
    qrels, run = {}, {}
    for i, (label, score, q) in enumerate(zip(y, s, qid, strict=True)):
        qrels.setdefault(str(q), {})[f"d{i}"] = int(label)
        run.setdefault(str(q), {})[f"d{i}"] = float(score)
    return qrels, run


def per_query_by_qid(values, qid):
    """Our per-query values are in sorted-qid order; key them by the string id."""
    return {str(q): v for q, v in zip(np.unique(qid), values, strict=True)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_pytrec_eval(seed):
    y, s, qid = random_run(seed)
    qrels, run = as_dicts(y, s, qid)
    measures = {"ndcg_cut.3,5,10", "P.1,5,10", "map", "recip_rank", "map_cut.5"}
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = {
        **{
            f"ndcg_cut_{k}": M.ndcg_score(y, s, qid, k=k, gain="linear", per_query=True)
            for k in (3, 5, 10)
        },
        **{f"P_{k}": M.precision_at_k(y, s, qid, k=k, per_query=True) for k in (1, 5, 10)},
        "map": M.average_precision(y, s, qid, per_query=True),
        "map_cut_5": M.average_precision(y, s, qid, k=5, per_query=True),
        "recip_rank": M.reciprocal_rank(y, s, qid, per_query=True),
    }
    assert set(ref) == {str(q) for q in np.unique(qid)}  # trec_eval keeps all-zero queries
    for measure, values in ours.items():
        by_qid = per_query_by_qid(values, qid)
        for q, row in ref.items():
            assert by_qid[q] == pytest.approx(row[measure], abs=1e-12), (measure, q)
        mean = np.mean([row[measure] for row in ref.values()])
        assert values.mean() == pytest.approx(mean, abs=1e-12), measure


@pytest.mark.parametrize("seed", [3, 4])
def test_against_ranx(seed):
    y, s, qid = random_run(seed)
    qrels, run = as_dicts(y, s, qid)
    names = ["ndcg@5", "ndcg@10", "ndcg_burges@10", "precision@5", "map", "mrr"]
    ref = ranx_reference.evaluate(qrels, run, names)
    ref_qids = sorted(qrels)  # ranx orders queries by sorted string id
    ours = {
        "ndcg@5": M.ndcg_score(y, s, qid, k=5, gain="linear", per_query=True),
        "ndcg@10": M.ndcg_score(y, s, qid, k=10, gain="linear", per_query=True),
        "ndcg_burges@10": M.ndcg_score(y, s, qid, k=10, gain="exp2", per_query=True),
        "precision@5": M.precision_at_k(y, s, qid, k=5, per_query=True),
        "map": M.mean_average_precision(y, s, qid, per_query=True),
        "mrr": M.reciprocal_rank(y, s, qid, per_query=True),
    }
    for name, values in ours.items():
        by_qid = per_query_by_qid(values, qid)
        want = dict(zip(ref_qids, ref[name], strict=True))
        for q in ref_qids:
            assert by_qid[q] == pytest.approx(want[q], abs=1e-12), (name, q)
    # Skipping queries without relevant documents = the mean over the others.
    has_rel = np.array([y[qid == q].max() >= 1 for q in np.unique(qid)])
    skip = M.ndcg_score(y, s, qid, k=10, gain="linear", empty="skip")
    assert skip == pytest.approx(ours["ndcg@10"][has_rel].mean(), abs=1e-12)


def test_tool_versions_recorded():
    assert all(TOOLS.values())
