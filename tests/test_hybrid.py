"""A smoke slice of experiments/hybrid.py (issue 17): CISI retrievers, one small fold."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

# found, not imported: the tests import them when they run, not at collection in every worker
_MISSING = [m for m in ("bm25s", "Stemmer", "lightgbm") if importlib.util.find_spec(m) is None]

ROOT = Path(__file__).resolve().parents[1]
CISI = ROOT.parent / "shared" / "data" / "cisi"
pytestmark = [
    pytest.mark.skipif(not CISI.is_dir(), reason="CISI is not in ../shared/data"),
    pytest.mark.skipif(bool(_MISSING), reason=f"not installed: {_MISSING}"),
]


@pytest.fixture(scope="module")
def hybrid():
    spec = importlib.util.spec_from_file_location("hybrid", ROOT / "experiments" / "hybrid.py")
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hybrid"] = mod
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def test_cisi_counts_and_folds(hybrid) -> None:
    docs, queries, qrels = hybrid.load_cisi()
    assert len(docs) == 1460  # the counts of ../shared/data/README.md
    assert len(queries) == len(qrels) == 76
    assert sum(len(v) for v in qrels.values()) == 3114
    folds = hybrid.folds_of(sorted(qrels))
    assert sorted(q for f in folds for q in f) == sorted(qrels)
    assert [len(f) for f in folds] == [16, 15, 15, 15, 15]
    assert folds == hybrid.folds_of(sorted(qrels))  # fixed


def test_paired_tests(hybrid) -> None:
    a = np.array([0.1, 0.5, 0.3, 0.9])
    assert hybrid.paired_tests(a, a) == (0.0, 1.0, 1.0)
    d, p_t, p_r = hybrid.paired_tests(a + np.array([0.2, 0.25, 0.15, 0.2]), a)
    assert d == pytest.approx(0.2)
    assert p_t < 0.01
    # 4 queries, all differences positive: 2 of the 16 sign patterns are as extreme
    assert p_r == pytest.approx(0.125, abs=0.02)


def test_smoke_slice(hybrid, tmp_path: Path) -> None:
    """The six retrievers on 15 queries, and rankboost fuse + LightGBM on a 10 / 5 split."""
    from rankboost.fusion import Qrels, evaluate_run

    docs, queries, qrels = hybrid.load_cisi()
    some = sorted(qrels)[:15]
    runs = hybrid.build_runs(docs, {q: queries[q] for q in some}, depth=20)
    assert list(runs) == hybrid.RUN_ORDER
    for r in runs.values():
        assert set(r.queries) <= set(some)
        assert r.rank.max() <= 20
    hybrid.write_runs(runs, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}.run" for n in runs)
    tr, te = set(some[:10]), set(some[10:])
    runs_tr = [hybrid.subset(r, tr) for r in runs.values()]
    runs_te = [hybrid.subset(r, te) for r in runs.values()]
    qrels_tr = Qrels.from_dict({q: qrels[q] for q in sorted(tr)})
    qrels_te = Qrels.from_dict({q: qrels[q] for q in sorted(te)})
    qrels_te_all = Qrels.from_dict({q: qrels[q] for q in some})
    params = {"max_rounds": 10, "cv_folds": 3}
    rb = hybrid._rankboost(runs_tr, qrels_tr, runs_te, params)
    assert 1 <= rb["n_rounds"] <= 10
    assert len(rb["cv_mean"]) == 10
    assert set(rb["run"]) == te
    lgb = hybrid._lightgbm(runs_tr, qrels_tr, runs_te, params)
    for res in (rb, lgb):
        assert all(len(d) <= hybrid.DEPTH for d in res["run"].values())
    from rankboost.fusion import Run

    got = evaluate_run(Run.from_dict(rb["run"]), qrels_te, ["ndcg@10"])["ndcg@10"]
    assert 0 <= got <= 1
    # the committed MiniLM run, cut to the slice, and the linear family's engine exports on
    # BM25 + MiniLM: the engines' formulas rank every query as fuse apply does
    from rankboost.fusion.engines import check_export, export_linear
    from rankboost.fusion.linear import LinearFusion

    dense = hybrid.dense_run(docs, {q: queries[q] for q in some}, depth=20, rebuild=False)
    assert sorted(dense.queries) == some
    assert dense.rank.max() == 20
    pair = [runs["bm25"], dense]
    for norm, engines in (("minmax", ["elasticsearch"]), ("rrf", ["elasticsearch", "opensearch"])):
        lin = LinearFusion(normalizer=norm, n_rounds=5, prior_scale=1.0).fit(pair, qrels_te_all)
        for engine in engines:
            assert check_export(lin, pair, engine, export_linear(lin, engine)) == 15


@pytest.mark.parametrize(
    ("name", "n_docs", "n_queries", "n_rel"),
    [("med", 1033, 30, 696), ("cacm", 3204, 52, 796), ("lisa", 5999, 35, 379)],
)
def test_loco_collections_and_committed_runs(hybrid, name, n_docs, n_queries, n_rel) -> None:
    """The committed collections parse to their known sizes; the committed runs cover them."""
    from hybridlib.corpora import LOADERS, dense_path, dense_run

    docs, queries, qrels = LOADERS[name]()
    assert (len(docs), len(queries), sum(len(v) for v in qrels.values())) == (
        n_docs, n_queries, n_rel)  # fmt: skip
    assert all(d in docs for v in qrels.values() for d in v)
    assert all(queries[q].strip() for q in queries)
    dense = dense_run(docs, queries, rebuild=False, collection=name)
    assert sorted(dense.queries) == sorted(queries)
    assert dense_path(name).is_file()
    assert len(dense) == 100 * n_queries
    assert set(dense.docid.tolist()) <= set(docs)


def test_issue33_headroom_table_is_the_oracle_and_hindsight_of_the_curves(hybrid) -> None:
    """The headroom table (experiments/hybrid.py --loco): per collection the per-query oracle
    is the best weight's NDCG@10 of every query, the weight in hindsight the best row mean."""
    from hybridlib.headroom import headroom

    C = np.array([[0.2, 0.9, 0.4], [0.5, 0.1, 0.6]])  # 2 weights x 3 queries
    pq = {"x": {"convex": {"ndcg@10": np.array([0.2, 0.9, 0.4])},
                "auto": {"ndcg@10": np.array([0.3, 0.9, 0.5])}}}  # fmt: skip
    text = headroom(pq, {"x": C}, ("x",))
    row = next(line for line in text.splitlines() if line.startswith("| X |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # queries, convex, auto, hindsight (row 0: mean 0.5 > 0.4), oracle (0.5 + 0.9 + 0.6) / 3
    assert cells[1:6] == ["3", "0.5000", "0.5667", "0.5000", "0.6667"]
    assert cells[6] == "+0.1667"
    assert cells[7].startswith("+0.0667")
